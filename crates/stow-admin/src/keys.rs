//! `stowctl key …`: API keys, made and changed by the operations the API runs
//! (`stow_ops::keys`), as the operator.

use auth_core::{AccountStore, ApiKey, KeyId, OrgId};
use serde_json::{json, Value};
use stow_ops::keys::{CreateKey, Delete, Disable, Enable, Rotate};

use crate::cli::*;
use crate::table::{or_dash, table};
use crate::{CliError, Ctx};

fn key_json(k: &ApiKey) -> Value {
    json!({
        "keyId": k.id,
        "orgId": k.org_id,
        "serverId": k.server_id,
        "type": k.credential_type.as_str(),
        "name": k.name,
        "hint": k.hint,
        "permissions": k.permissions.names(),
        "allowPaths": k.allowed_prefixes,
        "denyPaths": k.denied_prefixes,
        "mime": k.allowed_mime,
        "logServers": k.servers.to_stored(),
        "createdAt": k.created_at.to_rfc3339(),
        "expiresAt": k.expires_at.map(|t| t.to_rfc3339()),
        "disabledAt": k.disabled_at.map(|t| t.to_rfc3339()),
        "lastUsedAt": k.last_used_at.map(|t| t.to_rfc3339()),
    })
}

pub(crate) async fn run(ctx: &Ctx, cmd: KeyCmd) -> Result<(Value, String), CliError> {
    match cmd {
        KeyCmd::Create {
            org,
            server,
            kind,
            log_servers,
            perms,
            allow_paths,
            deny_paths,
            mimes,
            expires_at,
            name,
        } => {
            let org = ctx.org(&org).await?;
            let made = CreateKey {
                org: org.id,
                kind: Some(kind.as_str().into()),
                name,
                server,
                permissions: perms,
                log_servers: (!log_servers.is_empty()).then_some(log_servers),
                allow_paths,
                deny_paths,
                mime: mimes,
                expires_at,
            }
            .run(&ctx.ops())
            .await?;
            let mut out = key_json(&made.key);
            out["secret"] = json!(made.secret);
            Ok((
                out,
                format!(
                    "key {} created; its secret (shown once):\n{}",
                    made.key.id, made.secret
                ),
            ))
        }
        KeyCmd::List { org } => list(ctx, &org).await,
        KeyCmd::Enable { key_id } => {
            let (k, _) = Enable { key: key_id }.run(&ctx.ops()).await?;
            let note = if k.state(chrono::Utc::now()) == "expired" {
                " (it has expired, so it still does not work)"
            } else {
                ""
            };
            Ok((
                json!({ "keyId": k.id, "disabled": false, "state": k.state(chrono::Utc::now()) }),
                format!("key {} enabled{note}", k.id),
            ))
        }
        KeyCmd::Rotate {
            key_id,
            disable_old,
        } => rotate(ctx, key_id, disable_old).await,
        KeyCmd::Disable { key_id } => {
            let done = Disable { key: key_id }.run(&ctx.ops()).await?;
            let (k, ended) = (done.key, done.sessions_ended);
            Ok((
                json!({ "keyId": k.id, "disabled": true, "consoleSessionsEnded": ended }),
                format!("key {} disabled; {ended} console session(s) ended", k.id),
            ))
        }
        KeyCmd::Delete { key_id } => {
            Delete {
                key: key_id.clone(),
            }
            .run(&ctx.ops())
            .await?;
            Ok((
                json!({ "keyId": key_id, "deleted": true }),
                format!("key {key_id} deleted"),
            ))
        }
    }
}

/// `key list`: the organization's keys as a table (or JSON), never their secrets.
async fn list(ctx: &Ctx, org: &OrgId) -> Result<(Value, String), CliError> {
    let accounts = &ctx.accounts;
    let keys = accounts.list_keys(org).await?;
    let servers = accounts.list_servers(org).await?;
    let now = chrono::Utc::now();
    let day = |t: Option<chrono::DateTime<chrono::Utc>>| {
        or_dash(t.map(|t| t.format("%Y-%m-%d %H:%M").to_string()))
    };
    let rows: Vec<Vec<String>> = keys
        .iter()
        .map(|k| {
            let code = |id: &auth_core::ServerId| {
                servers
                    .iter()
                    .find(|s| &s.id == id)
                    .map_or_else(|| id.to_string(), |s| s.cfx_id.clone())
            };
            // a bound server, or the servers a developer key's logs are limited to
            let server = k.server_id.as_ref().map(code).or_else(|| {
                k.servers.named().map(|ids| {
                    format!(
                        "logs: {}",
                        ids.iter().map(code).collect::<Vec<_>>().join(",")
                    )
                })
            });
            let mut paths: Vec<String> = k.allowed_prefixes.clone();
            paths.extend(k.denied_prefixes.iter().map(|d| format!("!{d}")));
            vec![
                k.id.to_string(),
                or_dash(k.name.clone()),
                k.credential_type.as_str().to_owned(),
                or_dash(server),
                k.permissions.names().join(","),
                if paths.is_empty() {
                    "all".into()
                } else {
                    paths.join(",")
                },
                day(k.expires_at),
                day(k.last_used_at),
                k.state(now).to_owned(),
            ]
        })
        .collect();
    let human = if rows.is_empty() {
        format!("organization {org} has no keys")
    } else {
        table(
            &[
                "ID",
                "NAME",
                "TYPE",
                "SERVER",
                "PERMISSIONS",
                "PATHS",
                "EXPIRES",
                "LAST USED",
                "STATE",
            ],
            &rows,
        )
    };
    let json_keys: Vec<Value> = keys
        .iter()
        .map(|k| {
            let mut v = key_json(k);
            v["state"] = json!(k.state(now));
            v
        })
        .collect();
    Ok((json!({ "keys": json_keys }), human))
}

/// `key rotate`: a new key with the settings of `key_id` (its secret printed once).
async fn rotate(ctx: &Ctx, key_id: KeyId, disable_old: bool) -> Result<(Value, String), CliError> {
    let rotated = Rotate {
        key: key_id,
        disable_old,
    }
    .run(&ctx.ops())
    .await?;
    let (key, old) = (&rotated.key, &rotated.old.id);
    let mut out = key_json(key);
    out["secret"] = json!(rotated.secret);
    out["replaces"] = json!(old);
    out["oldDisabled"] = json!(disable_old);
    let then = if disable_old {
        format!("key {old} is disabled")
    } else {
        format!("key {old} keeps working until `stowctl key disable {old}`")
    };
    Ok((
        out,
        format!(
            "key {} created with the settings of {old}; {then}. Its secret (shown once):\n{}",
            key.id, rotated.secret
        ),
    ))
}
