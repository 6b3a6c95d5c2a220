//! `stowctl key …`: API keys.

use auth_core::model::{new_id, NewKey};
use auth_core::{secret, AccountStore, ApiKey, CredentialType, Permission, PermissionSet};
use cdn_core::path::normalize_folder;
use serde_json::{json, Value};

use crate::cli::*;
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

pub(crate) async fn run(ctx: &Ctx, cmd: KeyCmd) -> Result<(Value, String), CliError> {
    let accounts = &ctx.accounts;
    match cmd {
        KeyCmd::Create {
            org,
            server,
            kind,
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
            let org_row = accounts
                .get_org(&org)
                .await?
                .ok_or_else(|| CliError(format!("unknown organization \"{org}\"")))?;
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
                Some(t) => Some(
                    chrono::DateTime::parse_from_rfc3339(&t)
                        .map_err(|e| {
                            CliError(format!("--expires-at {t:?}: not an RFC 3339 time ({e})"))
                        })?
                        .with_timezone(&chrono::Utc),
                ),
            };
            let mime = if mimes.is_empty() {
                None
            } else {
                Some(
                    mimes
                        .iter()
                        .map(|m| auth_core::policy::mime_essence(m))
                        .collect(),
                )
            };
            let s = secret::generate(kind);
            let key = accounts
                .create_key(&NewKey {
                    id: new_id("key"),
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
                    expires_at: expires,
                })
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
            let human = keys
                .iter()
                .map(|k| {
                    format!(
                        "{}  {:9}  {}  {}",
                        k.id,
                        k.credential_type.as_str(),
                        k.hint,
                        if k.disabled_at.is_some() {
                            "disabled"
                        } else {
                            "active"
                        }
                    )
                })
                .collect::<Vec<_>>()
                .join("\n");
            Ok((
                json!({ "keys": keys.iter().map(key_json).collect::<Vec<_>>() }),
                human,
            ))
        }
        KeyCmd::Disable { key_id } => {
            let k = accounts.disable_key(&key_id, chrono::Utc::now()).await?;
            Ok((
                json!({ "keyId": k.id, "disabled": true }),
                format!("key {} disabled", k.id),
            ))
        }
        KeyCmd::Delete { key_id } => {
            accounts.delete_key(&key_id).await?;
            Ok((
                json!({ "keyId": key_id, "deleted": true }),
                format!("key {key_id} deleted"),
            ))
        }
    }
}
