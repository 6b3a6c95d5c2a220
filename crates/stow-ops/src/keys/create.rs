//! [`CreateKey`]: make a key; its secret is in the answer only.

use auth_core::audit::Action;
use auth_core::model::NewKey;
use auth_core::roles::{check_key, Capability, KeyGrant};
use auth_core::{
    secret, ApiKey, CredentialType, OrgId, PathScope, Permission, PermissionSet, Server,
    ServerScope,
};

use crate::fields::{check_entries, folder_prefixes, future_time};
use crate::{Ctx, OpError};

/// The longest key name.
pub const MAX_NAME_CHARS: usize = 100;

/// A key to make in `org`, as a front end received it (checked here).
#[derive(Debug, Clone)]
pub struct CreateKey {
    pub org: OrgId,
    /// `developer` (when absent) or `server`.
    pub kind: Option<String>,
    /// A label for the list; blank is none.
    pub name: Option<String>,
    /// A server key's join code (required for `server`, refused otherwise).
    pub server: Option<String>,
    /// Permission names; a server key always has its baseline as well.
    pub permissions: Vec<String>,
    /// Join codes a developer key's logs are limited to; `None` for every server.
    pub log_servers: Option<Vec<String>>,
    pub allow_paths: Vec<String>,
    pub deny_paths: Vec<String>,
    /// MIME types (`type/subtype` or `type/*`) the key may upload; empty for any.
    pub mime: Vec<String>,
    /// RFC 3339, in the future; `None` for a key that does not expire.
    pub expires_at: Option<String>,
}

/// A key made, with its secret (shown this once) and the organization's servers (join codes to
/// show it with).
pub struct Created {
    pub key: ApiKey,
    pub secret: String,
    pub servers: Vec<Server>,
}

impl CreateKey {
    pub async fn run(self, ctx: &Ctx<'_>) -> Result<Created, OpError> {
        let actor = ctx.member_with(Capability::ManageKeys)?;
        if !ctx.acts_in(&self.org) {
            return Err(OpError::Forbidden(
                "keys are made in your own organization".into(),
            ));
        }
        let kind = match self.kind.as_deref() {
            None | Some("developer") => CredentialType::Developer,
            Some("server") => CredentialType::Server,
            Some(other) => {
                return Err(OpError::invalid(
                    "type",
                    format!(" is `{other}`; use developer or server"),
                ))
            }
        };
        check_entries(&[
            ("permissions", self.permissions.len()),
            ("logServers", self.log_servers.as_ref().map_or(0, Vec::len)),
            ("allowPaths", self.allow_paths.len()),
            ("denyPaths", self.deny_paths.len()),
        ])?;
        let servers = ctx.stores.accounts.list_servers(&self.org).await?;
        let server_id = bound_server(kind, self.server.as_deref(), &servers)?;
        let permissions = permissions(kind, &self.permissions)?;
        let scope = log_scope(kind, self.log_servers.as_deref(), &servers)?;
        let name = key_name(self.name)?;
        let expires_at = self
            .expires_at
            .map(|t| future_time(&t, ctx.now, "expiresAt", "the key"))
            .transpose()?;
        let s = secret::generate(kind);
        let new = NewKey {
            credential_type: kind,
            name,
            server_id,
            servers: scope,
            expires_at,
            allowed_prefixes: folder_prefixes(&self.allow_paths, "allowPaths")?,
            denied_prefixes: folder_prefixes(&self.deny_paths, "denyPaths")?,
            allowed_mime: mime_list(&self.mime)?,
            ..NewKey::developer(self.org.clone(), &s, permissions)
        };
        if let Some(actor) = actor {
            let grant = KeyGrant::new(
                new.permissions,
                new.server_id.as_ref(),
                &new.servers,
                PathScope::new(new.allowed_prefixes.clone(), new.denied_prefixes.clone()),
            );
            if let Err(r) = check_key(&actor.grant, &grant) {
                let details = serde_json::json!({
                    "name": new.name,
                    "permissions": new.permissions.names(),
                    "logServers": new.servers.named(),
                    "allowPaths": new.allowed_prefixes,
                    "denyPaths": new.denied_prefixes,
                });
                let error = OpError::Forbidden(r.to_string());
                return Err(ctx
                    .refused(&self.org, Action::KeyCreate, "", details, error)
                    .await);
            }
        }
        let key = ctx.stores.accounts.create_key(&new, &ctx.audit).await?;
        Ok(Created {
            key,
            secret: s.secret,
            servers,
        })
    }
}

/// The name as stored: trimmed, blank as none, at most [`MAX_NAME_CHARS`] characters and no
/// control characters.
fn key_name(name: Option<String>) -> Result<Option<String>, OpError> {
    let name = name.map(|n| n.trim().to_owned()).filter(|n| !n.is_empty());
    if name
        .as_ref()
        .is_some_and(|n| n.chars().count() > MAX_NAME_CHARS || n.chars().any(char::is_control))
    {
        return Err(OpError::invalid(
            "name",
            format!(" has at most {MAX_NAME_CHARS} characters and no control characters"),
        ));
    }
    Ok(name)
}

/// A server key's server, by join code among the organization's; none for a developer key.
fn bound_server(
    kind: CredentialType,
    code: Option<&str>,
    servers: &[Server],
) -> Result<Option<auth_core::ServerId>, OpError> {
    match (kind, code) {
        (CredentialType::Server, Some(code)) => servers
            .iter()
            .find(|s| s.cfx_id.eq_ignore_ascii_case(code))
            .map(|s| Some(s.id.clone()))
            .ok_or_else(|| {
                OpError::invalid(
                    "server",
                    format!(": no server with join code `{code}` in this organization"),
                )
            }),
        (CredentialType::Server, None) => Err(OpError::invalid(
            "server",
            " (a join code) is required for a server key",
        )),
        (CredentialType::Developer, Some(_)) => Err(OpError::invalid(
            "server",
            " is for server keys; a developer key is global",
        )),
        (CredentialType::Developer, None) => Ok(None),
    }
}

/// The permissions: a server key's baseline added, at least one for a developer key.
fn permissions(kind: CredentialType, names: &[String]) -> Result<PermissionSet, OpError> {
    let set: PermissionSet = names
        .iter()
        .map(|p| {
            p.parse::<Permission>()
                .map_err(|e| OpError::invalid("permissions", format!(": {e}")))
        })
        .collect::<Result<_, _>>()?;
    match kind {
        CredentialType::Server => Ok(set.union(PermissionSet::server_key_baseline())),
        CredentialType::Developer if set.iter().next().is_none() => Err(OpError::invalid(
            "permissions",
            " names at least one permission (cdn:read, cdn:write, cdn:delete, cdn:purge, \
             logs:read, logs:write)",
        )),
        CredentialType::Developer => Ok(set),
    }
}

/// The servers a developer key's logs are limited to; a server key acts on its own.
fn log_scope(
    kind: CredentialType,
    codes: Option<&[String]>,
    servers: &[Server],
) -> Result<ServerScope, OpError> {
    match (codes, kind) {
        (None, _) => Ok(ServerScope::All),
        (Some(_), CredentialType::Server) => Err(OpError::invalid(
            "logServers",
            " is for developer keys; a server key acts on its own server",
        )),
        (Some(codes), CredentialType::Developer) => ServerScope::of_join_codes(servers, codes)
            .map_err(|e| OpError::invalid("logServers", format!(": {e}"))),
    }
}

/// MIME types as stored (essence, lower case), each `type/subtype` or `type/*`; `None` for any.
fn mime_list(raw: &[String]) -> Result<Option<Vec<String>>, OpError> {
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
                _ => Err(OpError::invalid(
                    "mime",
                    format!(
                        " {m:?} is not a MIME type; write it as type/subtype (image/png) or \
                         type/* (image/*)"
                    ),
                )),
            }
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}
