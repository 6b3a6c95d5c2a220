//! `stowctl dev-setup`: the local development workspace that `just run` prints.

use auth_core::{secret, AccountStore, OrgId, Permission, PermissionSet};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::{CliError, Ctx};

/// Names of the keys `dev-setup` makes: the developer key, then the server key.
const DEV_KEY_NAMES: [&str; 2] = ["dev: all permissions", "dev: server key"];

/// The saved keys, when both still authenticate as the dev workspace's dev keys.
async fn reusable_keys(
    ctx: &Ctx,
    path: &Path,
    org_id: &OrgId,
) -> Result<Option<(String, String)>, CliError> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(None);
    };
    let Ok(saved) = serde_json::from_str::<Value>(&text) else {
        return Ok(None);
    };
    let mut keys = Vec::new();
    for (field, name) in [
        ("developerKey", DEV_KEY_NAMES[0]),
        ("serverKey", DEV_KEY_NAMES[1]),
    ] {
        let Some(secret) = saved[field].as_str() else {
            return Ok(None);
        };
        let usable = ctx
            .accounts
            .find_auth_context(&secret::hash(secret))
            .await?
            .is_some_and(|c| {
                c.org.id == *org_id
                    && c.key.name.as_deref() == Some(name)
                    && c.key.check_usable(chrono::Utc::now()).is_ok()
            });
        if !usable {
            return Ok(None);
        }
        keys.push(secret.to_owned());
    }
    let srv = keys.pop().unwrap_or_default();
    let dev = keys.pop().unwrap_or_default();
    Ok(Some((dev, srv)))
}

/// Writes the keys where the next run finds them, readable by the owner only.
fn save_keys(path: &Path, (dev, srv): &(String, String)) -> Result<(), CliError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let fail =
        |e: std::io::Error| CliError(format!("saving the dev keys to {}: {e}", path.display()));
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(fail)?;
    writeln!(file, "{}", json!({ "developerKey": dev, "serverKey": srv })).map_err(fail)
}

pub(crate) async fn dev_setup(
    ctx: &Ctx,
    keys_file: Option<PathBuf>,
) -> Result<(Value, String), CliError> {
    stow_db::migrate::run(&ctx.database_url).await?;
    let accounts = &ctx.accounts;
    let org = match accounts.find_org_by_slug("dev").await? {
        Some(o) => o,
        None => accounts.create_org("Local Dev", "dev", "pro").await?,
    };
    let server = match accounts.find_server_by_cfx("devsrv").await? {
        Some(s) => s,
        None => {
            accounts
                .register_server(&org.id, "devsrv", Some("Local dev server"), &ctx.audit())
                .await?
        }
    };
    accounts
        .set_logs_active(&server.cfx_id, true, &ctx.audit())
        .await?;
    stow_db::logs::maintain_partitions(&ctx.db).await?;
    let saved = match &keys_file {
        Some(path) => reusable_keys(ctx, path, &org.id).await?,
        None => None,
    };
    let (dev, srv) = match saved {
        Some(keys) => keys,
        None => {
            // the previous dev keys stop working: a run never piles up keys
            for key in accounts.list_keys(&org.id).await? {
                if key
                    .name
                    .as_deref()
                    .is_some_and(|n| DEV_KEY_NAMES.contains(&n))
                {
                    accounts.delete_key(&key.id, &ctx.audit()).await?;
                }
            }
            let keys = (
                create_dev_key(ctx, &org.id, None).await?,
                create_dev_key(ctx, &org.id, Some(&server.cfx_id)).await?,
            );
            if let Some(path) = &keys_file {
                save_keys(path, &keys)?;
            }
            keys
        }
    };
    let made = [dev, srv];
    let human = format!(
        "workspace: {slug} (organization {org}, plan pro)\nserver join code: {cfx}\ndeveloper key: {dev}\nserver key:    {srv}",
        slug = org.slug,
        org = org.id,
        cfx = server.cfx_id,
        dev = made[0],
        srv = made[1]
    );
    Ok((
        json!({ "orgId": org.id, "workspace": org.slug, "cfxId": server.cfx_id, "developerKey": made[0], "serverKey": made[1] }),
        human,
    ))
}

/// A new dev key: the developer key (every permission) without `server_id`, else the server
/// key of that server (its baseline plus `cdn:read` and `cdn:delete`). Returns its secret.
async fn create_dev_key(
    ctx: &Ctx,
    org_id: &OrgId,
    server: Option<&str>,
) -> Result<String, CliError> {
    let (kind, name, permissions) = match server {
        None => ("developer", DEV_KEY_NAMES[0], PermissionSet::all()),
        // a server key's baseline is added by the operation
        Some(_) => (
            "server",
            DEV_KEY_NAMES[1],
            [Permission::CdnRead, Permission::CdnDelete]
                .into_iter()
                .collect(),
        ),
    };
    let made = stow_ops::keys::CreateKey {
        org: org_id.clone(),
        kind: Some(kind.into()),
        name: Some(name.into()),
        server: server.map(Into::into),
        permissions: permissions.names(),
        log_servers: None,
        allow_paths: vec![],
        deny_paths: vec![],
        mime: vec![],
        expires_at: None,
    }
    .run(&ctx.ops())
    .await?;
    Ok(made.secret)
}
