//! `stowctl dev-setup`: the local development workspace that `just run` prints.

use auth_core::model::{new_id, NewKey};
use auth_core::{secret, AccountStore, CredentialType, Permission, PermissionSet};
use serde_json::{json, Value};

use crate::{CliError, Ctx};

pub(crate) async fn dev_setup(ctx: &Ctx) -> Result<(Value, String), CliError> {
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
                .register_server(&org.id, "devsrv", Some("Local dev server"))
                .await?
        }
    };
    accounts.set_logs_active(&server.cfx_id, true).await?;
    stow_db::logs::maintain_partitions(&ctx.db).await?;
    let mut made = Vec::new();
    for (kind, server_id, name) in [
        (CredentialType::Developer, None, "dev: all permissions"),
        (
            CredentialType::Server,
            Some(server.id.clone()),
            "dev: server key",
        ),
    ] {
        let s = secret::generate(kind);
        let permissions = match kind {
            CredentialType::Developer => PermissionSet::all(),
            CredentialType::Server => PermissionSet::server_key_baseline().union(
                [Permission::CdnRead, Permission::CdnDelete]
                    .into_iter()
                    .collect(),
            ),
        };
        let key = accounts
            .create_key(&NewKey {
                id: new_id("key"),
                org_id: org.id.clone(),
                server_id,
                credential_type: kind,
                name: Some(name.into()),
                secret_hash: s.hash,
                hint: s.hint,
                permissions,
                allowed_prefixes: vec![],
                denied_prefixes: vec![],
                allowed_mime: None,
                expires_at: None,
            })
            .await?;
        made.push((key.id, s.secret));
    }
    let human = format!(
        "workspace: {slug} (organization {org}, plan pro)\nserver join code: {cfx}\ndeveloper key: {dev}\nserver key:    {srv}",
        slug = org.slug,
        org = org.id,
        cfx = server.cfx_id,
        dev = made[0].1,
        srv = made[1].1
    );
    Ok((
        json!({ "orgId": org.id, "workspace": org.slug, "cfxId": server.cfx_id, "developerKey": made[0].1, "serverKey": made[1].1 }),
        human,
    ))
}
