//! API keys, the authenticated context of a request, and bearer-header parsing.

use crate::audit::{Actor, Via};
use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::ids::{KeyId, MemberId, OrgId, ServerId};
use crate::member::MemberContext;
use crate::model::{Org, Plan, Server};
use crate::permission::{Permission, PermissionSet};
use crate::policy::PathScope;
use crate::roles::{Capability, Grant};
use crate::server_scope::ServerScope;

pub use crate::credential::CredentialType;

/// A stored API key (never its secret).
#[derive(Debug, Clone, PartialEq)]
pub struct ApiKey {
    pub id: KeyId,
    pub org_id: OrgId,
    pub server_id: Option<ServerId>,
    pub credential_type: CredentialType,
    pub name: Option<String>,
    pub hint: String,
    pub permissions: PermissionSet,
    pub allowed_prefixes: Vec<String>,
    pub denied_prefixes: Vec<String>,
    pub allowed_mime: Option<Vec<String>>,
    /// The servers whose logs the key may read and write (a server key acts on its own server
    /// only, whatever this says).
    pub servers: ServerScope,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub disabled_at: Option<DateTime<Utc>>,
    pub last_used_at: Option<DateTime<Utc>>,
}

impl ApiKey {
    /// Whether the key may be used at `now`.
    pub fn check_usable(&self, now: DateTime<Utc>) -> Result<(), AuthError> {
        if self.disabled_at.is_some() {
            return Err(AuthError::Disabled);
        }
        if matches!(self.expires_at, Some(exp) if exp <= now) {
            return Err(AuthError::Expired);
        }
        Ok(())
    }

    /// `active`, `disabled` or `expired` at `now`.
    pub fn state(&self, now: DateTime<Utc>) -> &'static str {
        match self.check_usable(now) {
            Ok(()) => "active",
            Err(AuthError::Disabled) => "disabled",
            Err(_) => "expired",
        }
    }

    pub fn path_scope(&self) -> PathScope {
        PathScope::new(self.allowed_prefixes.clone(), self.denied_prefixes.clone())
    }
}

/// Everything a request needs to know about its caller, resolved in one lookup.
#[derive(Debug, Clone, PartialEq)]
pub struct AuthContext {
    /// The limits every route checks: a key's own, or, for a member, their grant in key form
    /// ([`AuthContext::for_member`]), so both pass through the same policy code.
    pub key: ApiKey,
    pub org: Org,
    pub plan: Plan,
    /// The bound server, for server keys.
    pub server: Option<Server>,
    /// The member acting, when the caller is a member's console session.
    pub member: Option<MemberAct>,
}

/// A member acting in one organization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberAct {
    pub id: MemberId,
    pub login: String,
    pub display_name: Option<String>,
    pub grant: Grant,
}

impl AuthContext {
    /// A member's context: their grant's permissions, servers and paths as the limits (`key`,
    /// whose id is the member's id, so rate limits and idempotency are per member), no MIME
    /// limit, no bound server.
    pub fn for_member(m: MemberContext, plan: Plan) -> Self {
        let grant = m.membership.grant;
        let key = ApiKey {
            id: KeyId::new(m.member.id.to_string()),
            org_id: m.org.id.clone(),
            server_id: None,
            credential_type: CredentialType::Developer,
            name: Some(
                m.member
                    .display_name
                    .clone()
                    .unwrap_or_else(|| m.member.login.clone()),
            ),
            hint: String::new(),
            permissions: grant.permissions(),
            allowed_prefixes: grant.paths.allowed.clone(),
            denied_prefixes: grant.paths.denied.clone(),
            allowed_mime: None,
            servers: grant.servers.clone(),
            created_at: m.membership.created_at,
            expires_at: None,
            disabled_at: None,
            last_used_at: None,
        };
        Self {
            key,
            org: m.org,
            plan,
            server: None,
            member: Some(MemberAct {
                id: m.member.id,
                login: m.member.login,
                display_name: m.member.display_name,
                grant,
            }),
        }
    }

    /// Whether the caller may do what no API permission names: a member as their role allows;
    /// a key exports logs with `logs:read` and manages nothing.
    pub fn may(&self, capability: Capability) -> bool {
        match &self.member {
            Some(m) => m.grant.may(capability),
            None => {
                capability == Capability::ExportLogs
                    && self.key.permissions.contains(Permission::LogsRead)
            }
        }
    }

    /// The servers whose logs this caller may act on: a server key's own server, else the key's
    /// scope.
    pub fn log_scope(&self) -> ServerScope {
        match &self.key.server_id {
            Some(bound) => ServerScope::Only(vec![bound.clone()]),
            None => self.key.servers.clone(),
        }
    }

    pub fn require(&self, p: Permission) -> Result<(), AuthError> {
        match &self.member {
            _ if self.key.permissions.contains(p) => Ok(()),
            Some(m) => Err(AuthError::RoleLacks(m.grant.role, p)),
            None => Err(AuthError::MissingPermission(p)),
        }
    }

    /// [`AuthContext::may`], or why not.
    /// Who a refusal speaks of: `this key`, or, for a member, `your role (moderator)` (their
    /// limits are their role's, not a key's).
    pub fn holder(&self) -> String {
        match &self.member {
            Some(m) => format!("your role ({})", m.grant.role),
            None => "this key".to_owned(),
        }
    }

    pub fn require_capability(&self, capability: Capability) -> Result<(), AuthError> {
        match &self.member {
            _ if self.may(capability) => Ok(()),
            Some(m) => Err(AuthError::RoleMayNot(m.grant.role)),
            None => Err(AuthError::MembersOnly),
        }
    }
}

/// Why a request is not authenticated or not authorized. Messages are lowercase and safe to show.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error("missing Authorization header; send `Authorization: Bearer <API_KEY>`")]
    Missing,
    #[error("malformed Authorization header; expected `Bearer <API_KEY>`")]
    Malformed,
    #[error("more than one Authorization header; send exactly one")]
    Repeated,
    #[error("invalid API key")]
    Unknown,
    #[error("API key is disabled")]
    Disabled,
    #[error("API key has expired")]
    Expired,
    #[error("API key lacks the `{0}` permission")]
    MissingPermission(Permission),
    #[error("you are no longer a member of this organization; sign in again")]
    MemberGone,
    #[error("your role ({0}) does not allow `{1}`; ask an owner or admin")]
    RoleLacks(crate::roles::Role, Permission),
    #[error("your role ({0}) does not allow this; ask an owner or admin")]
    RoleMayNot(crate::roles::Role),
    #[error("API keys may not do this; sign in to the console as a member whose role allows it")]
    MembersOnly,
}

impl AuthError {
    /// 401-class errors (the caller is not authenticated) versus 403 (authenticated, not allowed).
    pub fn is_unauthenticated(&self) -> bool {
        !matches!(
            self,
            AuthError::MissingPermission(_)
                | AuthError::RoleLacks(..)
                | AuthError::RoleMayNot(_)
                | AuthError::MembersOnly
        )
    }
}

/// Longest Authorization header value we look at; anything longer is malformed, not an error.
pub const MAX_AUTHORIZATION_LEN: usize = 512;

/// Extracts the token from every `Authorization` field of a request: one is required, and two are
/// refused rather than one silently chosen (which key acts would depend on proxies' ordering).
pub fn parse_bearer_fields<'a>(fields: &[&'a [u8]]) -> Result<&'a str, AuthError> {
    match fields {
        [] => Err(AuthError::Missing),
        [one] => parse_bearer(one),
        _ => Err(AuthError::Repeated),
    }
}

/// Extracts the token of one `Bearer` authorization header value (scheme matched
/// case-insensitively).
pub fn parse_bearer(raw: &[u8]) -> Result<&str, AuthError> {
    if raw.len() > MAX_AUTHORIZATION_LEN {
        return Err(AuthError::Malformed);
    }
    let text = std::str::from_utf8(raw)
        .map_err(|_| AuthError::Malformed)?
        .trim();
    let (scheme, token) = text.split_once(' ').ok_or(AuthError::Malformed)?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(AuthError::Malformed);
    }
    let token = token.trim();
    if token.is_empty() || token.contains(char::is_whitespace) {
        return Err(AuthError::Malformed);
    }
    Ok(token)
}

/// What an entry says of a key (never its secret or hash).
pub fn key_details(k: &ApiKey) -> Value {
    serde_json::json!({
        "name": k.name,
        "type": k.credential_type.as_str(),
        "permissions": k.permissions.names(),
        "logServers": k.servers.named(),
        "allowPaths": k.allowed_prefixes,
        "denyPaths": k.denied_prefixes,
        "expiresAt": k.expires_at,
    })
}

impl crate::audit::Audit {
    /// The caller of an authenticated request: the member when a member acts, else the key.
    pub fn of(
        ctx: &AuthContext,
        via: Via,
        address: Option<String>,
        request_id: Option<String>,
    ) -> Self {
        let actor = match &ctx.member {
            Some(m) => Actor::Member {
                id: m.id.clone(),
                login: m.login.clone(),
            },
            None => Actor::Key {
                id: ctx.key.id.clone(),
                name: ctx.key.name.clone().unwrap_or_else(|| ctx.key.hint.clone()),
            },
        };
        Self {
            actor,
            via,
            address,
            request_id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_authorization_field() {
        assert_eq!(parse_bearer_fields(&[b"Bearer abc"]), Ok("abc"));
        assert_eq!(parse_bearer_fields(&[]), Err(AuthError::Missing));
        assert_eq!(
            parse_bearer_fields(&[b"Bearer abc", b"Bearer abc"]),
            Err(AuthError::Repeated)
        );
        assert_eq!(
            parse_bearer_fields(&[b"Bearer abc", b"Bearer other"]),
            Err(AuthError::Repeated)
        );
        assert_eq!(
            parse_bearer_fields(&[b"Basic x"]),
            Err(AuthError::Malformed)
        );
    }

    #[test]
    fn bearer_parsing() {
        assert_eq!(parse_bearer(b"Bearer abc"), Ok("abc"));
        assert_eq!(parse_bearer(b"bearer abc"), Ok("abc"));
        assert_eq!(parse_bearer(b"BEARER   abc  "), Ok("abc"));
        assert_eq!(parse_bearer_fields(&[]), Err(AuthError::Missing));
        assert_eq!(parse_bearer(b""), Err(AuthError::Malformed));
        assert_eq!(parse_bearer(b"Bearer"), Err(AuthError::Malformed));
        assert_eq!(parse_bearer(b"Bearer "), Err(AuthError::Malformed));
        assert_eq!(parse_bearer(b"Basic abc"), Err(AuthError::Malformed));
        assert_eq!(parse_bearer(b"Bearer a b"), Err(AuthError::Malformed));
        assert_eq!(parse_bearer(b"Bearer \xff\xfe"), Err(AuthError::Malformed));
        let long = format!("Bearer {}", "a".repeat(10_000));
        assert_eq!(parse_bearer(long.as_bytes()), Err(AuthError::Malformed));
        let at_limit = format!("Bearer {}", "a".repeat(MAX_AUTHORIZATION_LEN - 7));
        assert!(parse_bearer(at_limit.as_bytes()).is_ok());
        let over = format!("Bearer {}", "a".repeat(MAX_AUTHORIZATION_LEN - 6));
        assert_eq!(parse_bearer(over.as_bytes()), Err(AuthError::Malformed));
    }

    #[test]
    fn usability() {
        let now = Utc::now();
        let mut key = ApiKey {
            id: "key_1".into(),
            org_id: "org_1".into(),
            server_id: None,
            credential_type: CredentialType::Developer,
            name: None,
            hint: String::new(),
            permissions: PermissionSet::all(),
            allowed_prefixes: vec![],
            denied_prefixes: vec![],
            allowed_mime: None,
            servers: ServerScope::All,
            created_at: now,
            expires_at: None,
            disabled_at: None,
            last_used_at: None,
        };
        assert_eq!(key.check_usable(now), Ok(()));
        key.expires_at = Some(now + chrono::Duration::seconds(1));
        assert_eq!(key.check_usable(now), Ok(()));
        key.expires_at = Some(now);
        assert_eq!(key.check_usable(now), Err(AuthError::Expired));
        key.expires_at = None;
        key.disabled_at = Some(now);
        assert_eq!(key.check_usable(now), Err(AuthError::Disabled));
        assert!(AuthError::Disabled.is_unauthenticated());
        assert!(!AuthError::MissingPermission(Permission::CdnRead).is_unauthenticated());
    }
}
