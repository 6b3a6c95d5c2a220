//! `stowctl key …`: API keys.

use auth_core::model::NewKey;
use auth_core::{
    secret, AccountStore, ApiKey, CredentialType, KeyId, Permission, PermissionSet, ServerScope,
};
use cdn_core::path::normalize_folder;
use serde_json::{json, Value};

use crate::cli::*;
use crate::table::{or_dash, table};
use crate::{CliError, Ctx};

/// `--mime` values as stored (essence, lower case), each a MIME type or `type/*`.
fn mime_list(raw: &[String]) -> Result<Option<Vec<String>>, CliError> {
    if raw.is_empty() {
        return Ok(None);
    }
    raw.iter()
        .map(|m| {
            let essence = auth_core::policy::mime_essence(m);
            match essence.parse::<mime::Mime>() {
                Ok(parsed)
                    if !parsed.subtype().as_str().is_empty()
                        && (parsed.type_() != mime::STAR || essence == "*/*") =>
                {
                    Ok(essence)
                }
                _ => Err(CliError(format!(
                    "--mime {m:?} is not a MIME type; write it as type/subtype (image/png) or type/* (image/*)"
                ))),
            }
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

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

fn prefixes(raw: &[String], flag: &str) -> Result<Vec<String>, CliError> {
    raw.iter()
        .map(|p| {
            normalize_folder(p)
                .map_err(|e| CliError(format!("{flag} {p:?}: {e}")))
                .and_then(|n| {
                    if n.is_empty() {
                        Err(CliError(format!(
                            "{flag} {p:?}: an empty prefix means everything; omit the flag instead"
                        )))
                    } else {
                        Ok(n)
                    }
                })
        })
        .collect()
}

/// `--log-server` join codes as a scope: each one a server of the organization, and only on
/// developer keys (a server key acts on its own server).
async fn log_scope(
    ctx: &Ctx,
    org: &auth_core::Org,
    kind: CredentialType,
    codes: &[String],
) -> Result<ServerScope, CliError> {
    if codes.is_empty() {
        return Ok(ServerScope::All);
    }
    if kind == CredentialType::Server {
        return Err(CliError(
            "--log-server is for developer keys; a server key acts on its own server only".into(),
        ));
    }
    let known = ctx.accounts.list_servers(&org.id).await?;
    ServerScope::of_join_codes(&known, codes)
        .map_err(|e| CliError(format!("--log-server: {e} (organization {})", org.id)))
}

/// A disabled key's console sessions end now, not at their next request.
async fn end_console_sessions(ctx: &Ctx, key_id: &KeyId) -> Result<u64, CliError> {
    use auth_core::console_session::ConsoleSessionStore;
    Ok(stow_db::PgConsoleSessions::new(ctx.db.clone())
        .end_for_key(key_id)
        .await?)
}

pub(crate) async fn run(ctx: &Ctx, cmd: KeyCmd) -> Result<(Value, String), CliError> {
    let accounts = &ctx.accounts;
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
            let kind = match kind {
                KeyType::Server => CredentialType::Server,
                KeyType::Developer => CredentialType::Developer,
            };
            let org_row = ctx.org(&org).await?;
            let server_id = match (&kind, server) {
                (CredentialType::Server, None) => {
                    return Err(CliError("a server key needs --server <join code>".into()))
                }
                (CredentialType::Developer, Some(_)) => {
                    return Err(CliError(
                        "developer keys are global; drop --server (or use --type server)".into(),
                    ))
                }
                (_, Some(code)) => {
                    let s = accounts
                        .find_server_by_cfx(&code)
                        .await?
                        .filter(|s| s.org_id == org_row.id)
                        .ok_or_else(|| {
                            CliError(format!(
                                "no server with join code \"{code}\" in organization {org}"
                            ))
                        })?;
                    Some(s.id)
                }
                (_, None) => None,
            };
            let servers = log_scope(ctx, &org_row, kind, &log_servers).await?;
            let mut permissions: PermissionSet = perms
                .iter()
                .map(|p| {
                    p.parse::<Permission>()
                        .map_err(|e| CliError(format!("--perm: {e}")))
                })
                .collect::<Result<_, _>>()?;
            if kind == CredentialType::Server {
                permissions = permissions.union(PermissionSet::server_key_baseline());
            } else if permissions.iter().next().is_none() {
                return Err(CliError("a developer key needs at least one --perm (cdn:read, cdn:write, cdn:delete, cdn:purge, logs:read, logs:write)".into()));
            }
            let expires = match expires_at {
                None => None,
                Some(t) => {
                    let at = chrono::DateTime::parse_from_rfc3339(&t)
                        .map_err(|e| {
                            CliError(format!("--expires-at {t:?}: not an RFC 3339 time ({e})"))
                        })?
                        .with_timezone(&chrono::Utc);
                    if at <= chrono::Utc::now() {
                        return Err(CliError(format!(
                            "--expires-at {t:?} is in the past; the key would never work"
                        )));
                    }
                    Some(at)
                }
            };
            let mime = mime_list(&mimes)?;
            let s = secret::generate(kind);
            let key = accounts
                .create_key(
                    &NewKey {
                        id: KeyId::generate(),
                        org_id: org_row.id.clone(),
                        server_id,
                        credential_type: kind,
                        name,
                        secret_hash: s.hash,
                        hint: s.hint,
                        permissions,
                        allowed_prefixes: prefixes(&allow_paths, "--allow-path")?,
                        denied_prefixes: prefixes(&deny_paths, "--deny-path")?,
                        allowed_mime: mime,
                        servers,
                        expires_at: expires,
                    },
                    &ctx.audit(),
                )
                .await?;
            let mut out = key_json(&key);
            out["secret"] = json!(s.secret);
            Ok((
                out,
                format!(
                    "key {} created; its secret (shown once):\n{}",
                    key.id, s.secret
                ),
            ))
        }
        KeyCmd::List { org } => {
            let keys = accounts.list_keys(&org).await?;
            let servers = accounts.list_servers(&org).await?;
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
        KeyCmd::Enable { key_id } => {
            let k = accounts.enable_key(&key_id, &ctx.audit()).await?;
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
        } => {
            let old = accounts
                .get_key(&key_id)
                .await?
                .ok_or_else(|| CliError(format!("unknown key {key_id:?}")))?;
            let s = secret::generate(old.credential_type);
            let key = accounts
                .create_key(&NewKey::replacing(&old, &s), &ctx.audit())
                .await?;
            if disable_old {
                accounts
                    .disable_key(&old.id, chrono::Utc::now(), &ctx.audit())
                    .await?;
                end_console_sessions(ctx, &old.id).await?;
            }
            let mut out = key_json(&key);
            out["secret"] = json!(s.secret);
            out["replaces"] = json!(old.id);
            out["oldDisabled"] = json!(disable_old);
            let then = if disable_old {
                format!("key {} is disabled", old.id)
            } else {
                format!(
                    "key {} keeps working until `stowctl key disable {}`",
                    old.id, old.id
                )
            };
            Ok((
                out,
                format!(
                    "key {} created with the settings of {}; {then}. Its secret (shown once):\n{}",
                    key.id, old.id, s.secret
                ),
            ))
        }
        KeyCmd::Disable { key_id } => {
            let k = accounts
                .disable_key(&key_id, chrono::Utc::now(), &ctx.audit())
                .await?;
            let ended = end_console_sessions(ctx, &k.id).await?;
            Ok((
                json!({ "keyId": k.id, "disabled": true, "consoleSessionsEnded": ended }),
                format!("key {} disabled; {ended} console session(s) ended", k.id),
            ))
        }
        KeyCmd::Delete { key_id } => {
            accounts.delete_key(&key_id, &ctx.audit()).await?;
            Ok((
                json!({ "keyId": key_id, "deleted": true }),
                format!("key {key_id} deleted"),
            ))
        }
    }
}
