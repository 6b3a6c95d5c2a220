//! Accounts: plans, organizations, registered servers and new-key requests.

use crate::audit::{Action, AuditEntry};
use chrono::{DateTime, Utc};

use crate::credential::CredentialType;
use crate::ids::{KeyId, OrgId, ServerId};
use crate::permission::PermissionSet;
use crate::secret::NewSecret;
use crate::server_scope::{BadJoinCodes, ServerScope};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub name: String,
    pub logs_enabled: bool,
    pub retention_days: i32,
    pub max_file_size: i64,
    pub max_url_lifetime_secs: i32,
    pub concurrent_searches: i32,
}

impl Plan {
    pub const DEFAULT_MAX_FILE_SIZE: i64 = 100 * 1024 * 1024;
    pub const DEFAULT_MAX_URL_LIFETIME: i32 = 3600;
    pub const DEFAULT_CONCURRENT_SEARCHES: i32 = 4;

    pub fn new(name: &str, logs_enabled: bool, retention_days: i32) -> Self {
        Self {
            name: name.to_owned(),
            logs_enabled,
            retention_days,
            max_file_size: Self::DEFAULT_MAX_FILE_SIZE,
            max_url_lifetime_secs: Self::DEFAULT_MAX_URL_LIFETIME,
            concurrent_searches: Self::DEFAULT_CONCURRENT_SEARCHES,
        }
    }

    /// The plans every installation starts with (also created by the migrations).
    pub fn builtin() -> Vec<Plan> {
        vec![
            Plan::new("free", false, 0),
            Plan::new("growth", true, 30),
            Plan::new("pro", true, 90),
        ]
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Org {
    pub id: OrgId,
    pub name: String,
    /// Public workspace name used in `publicUrl`.
    pub slug: String,
    pub plan: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    pub id: ServerId,
    pub org_id: OrgId,
    /// The join code, as registered (compared case-insensitively).
    pub cfx_id: String,
    pub name: Option<String>,
    pub logs_active: bool,
}

/// A key to store; the secret itself is never part of it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewKey {
    pub id: KeyId,
    pub org_id: OrgId,
    pub server_id: Option<ServerId>,
    pub credential_type: CredentialType,
    pub name: Option<String>,
    pub secret_hash: [u8; 32],
    pub hint: String,
    pub permissions: PermissionSet,
    pub allowed_prefixes: Vec<String>,
    pub denied_prefixes: Vec<String>,
    pub allowed_mime: Option<Vec<String>>,
    /// The servers whose logs a developer key may act on; `All` for server keys.
    pub servers: ServerScope,
    pub expires_at: Option<DateTime<Utc>>,
}

impl NewKey {
    /// A developer key of `org_id` with `secret` and `permissions` and nothing else: no name, no
    /// path, MIME or server limits, no expiry (struct update syntax narrows it).
    pub fn developer(org_id: OrgId, secret: &NewSecret, permissions: PermissionSet) -> Self {
        Self {
            id: KeyId::generate(),
            org_id,
            server_id: None,
            credential_type: CredentialType::Developer,
            name: None,
            secret_hash: secret.hash,
            hint: secret.hint.clone(),
            permissions,
            allowed_prefixes: vec![],
            denied_prefixes: vec![],
            allowed_mime: None,
            servers: ServerScope::All,
            expires_at: None,
        }
    }
}

impl NewKey {
    /// A rotation of `old`: the same organization, server, type, name, permissions, paths, MIME
    /// types, servers and expiry, with a new id and `secret`.
    pub fn replacing(old: &crate::ApiKey, secret: &NewSecret) -> Self {
        Self {
            id: KeyId::generate(),
            org_id: old.org_id.clone(),
            server_id: old.server_id.clone(),
            credential_type: old.credential_type,
            name: old.name.clone(),
            secret_hash: secret.hash,
            hint: secret.hint.clone(),
            permissions: old.permissions,
            allowed_prefixes: old.allowed_prefixes.clone(),
            denied_prefixes: old.denied_prefixes.clone(),
            allowed_mime: old.allowed_mime.clone(),
            servers: old.servers.clone(),
            expires_at: old.expires_at,
        }
    }
}

pub use crate::ids::new_id;

/// A workspace slug from an organization name: lowercase ASCII letters, digits and hyphens.
pub fn slugify(name: &str) -> String {
    let mut slug = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    let slug = slug.trim_end_matches('-');
    let slug: String = slug.chars().take(40).collect();
    if slug.is_empty() {
        "workspace".to_owned()
    } else {
        slug
    }
}

impl crate::audit::Audit {
    /// The entry of a registered server.
    pub fn server_registered(&self, s: &Server) -> AuditEntry {
        self.entry(
            &s.org_id,
            Action::ServerRegister,
            s.cfx_id.as_str(),
            serde_json::json!({ "serverId": s.id, "name": s.name }),
        )
    }

    /// The entry of a server whose log ingestion was turned on or off.
    pub fn server_logs(&self, s: &Server) -> AuditEntry {
        self.entry(
            &s.org_id,
            Action::ServerLogs,
            s.cfx_id.as_str(),
            serde_json::json!({ "serverId": s.id, "active": s.logs_active }),
        )
    }
}

/// A scope named by join codes: resolved among the organization's servers (here, beside
/// [`Server`], so the scope itself knows only ids).
impl ServerScope {
    /// The servers of `known` (an organization's) with these join codes, compared ignoring case;
    /// no codes at all means every server.
    pub fn of_join_codes(known: &[Server], codes: &[String]) -> Result<Self, BadJoinCodes> {
        if codes.is_empty() {
            return Ok(Self::All);
        }
        let ids = codes
            .iter()
            .map(|code| {
                known
                    .iter()
                    .find(|s| s.cfx_id.eq_ignore_ascii_case(code))
                    .map(|s| s.id.clone())
                    .ok_or_else(|| BadJoinCodes::Unknown(code.clone()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self::only(ids)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        assert_eq!(slugify("My FiveM Server!"), "my-fivem-server");
        assert_eq!(slugify("  --  "), "workspace");
        assert_eq!(slugify("Ünïcode 服务器"), "n-code");
        assert_eq!(slugify(&"a".repeat(100)).len(), 40);
    }

    #[test]
    fn ids_are_prefixed_and_unique() {
        let a = new_id("org");
        assert!(a.starts_with("org_"));
        assert_ne!(a, new_id("org"));
    }
}
