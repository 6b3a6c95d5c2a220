//! The audit log's routes (`/v1/audit`, one module per operation) and [`of`], the who and where
//! of a request that the stores write beside each change.

pub mod event_out;
pub mod export;
pub mod list;

use actix_web::{web, HttpMessage, HttpRequest};
use auth_core::audit::{Action, Actor, Audit, AuditQuery, Via, MAX_PAGE};
use auth_core::key::MemberAct;
use auth_core::roles::Capability;
use auth_core::{AuthContext, MemberId};
use serde::Deserialize;
use stow_http::auth::ActingAs;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::IntoParams;

use crate::state::ApiState;

/// The caller of `req` as the audit log names them: the member or key, through the console
/// (a console session acts for them) or the API, from the client's address.
pub(crate) fn of(req: &HttpRequest, auth: &AuthContext) -> Audit {
    let via = if req.extensions().get::<ActingAs>().is_some() {
        Via::Console
    } else {
        Via::Api
    };
    Audit::of(auth, via, address(req), Some(current_request_id()))
}

/// A console page without a session (accepting an invitation, using a reset link), acting as
/// `member` (an invitation's new member gets their id from the store, which names them).
pub(crate) fn signed_out(req: &HttpRequest, member: MemberId, login: String) -> Audit {
    Audit {
        actor: Actor::Member { id: member, login },
        via: Via::Console,
        address: address(req),
        request_id: Some(current_request_id()),
    }
}

/// Records an attempt the role rules refused (docs/api.md "Audit log": refusals of member and
/// key changes are recorded) and returns the refusal to answer with. A failure to record is
/// logged, never put in place of the refusal.
pub(crate) async fn refused(
    state: &ApiState,
    req: &HttpRequest,
    auth: &AuthContext,
    action: Action,
    target: &str,
    details: serde_json::Value,
    error: stow_http::ApiError,
) -> stow_http::ApiError {
    let entry = of(req, auth).refused(&auth.org.id, action, target, details, error.to_string());
    if let Err(e) = state.stores.audit.record(&[entry]).await {
        tracing::warn!(error = %e, "recording a refused attempt in the audit log failed");
    }
    error
}

fn address(req: &HttpRequest) -> Option<String> {
    let trusted = req
        .app_data::<web::Data<ApiState>>()
        .map(|s| s.config.trusted_proxies.clone())
        .unwrap_or_default();
    stow_http::request::client_ip(req, &trusted).map(|ip| ip.to_string())
}

/// The member reading the log, when their role may (owners and admins); API keys never.
fn reader(auth: &Auth) -> Result<&MemberAct, ApiError> {
    auth.require_capability(Capability::ViewAudit)?;
    auth.member
        .as_ref()
        .ok_or_else(|| auth_core::AuthError::MembersOnly.into())
}

/// The filters of `GET /v1/audit` and `GET /v1/audit/export`.
#[derive(Deserialize, IntoParams, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AuditParams {
    /// Only this actor's entries: a key's id (`key_…`), a member's id (`mem_…`) or an operator's
    /// user name.
    pub actor: Option<String>,
    /// Only these actions, comma-separated (`object.delete,object.move`); `object.*` names every
    /// action of a family (docs/api.md lists them).
    pub action: Option<String>,
    /// Only entries whose target starts with this (an object key or folder, a key id, a
    /// sign-in name).
    pub target: Option<String>,
    /// `done` (changes made) or `refused` (attempts refused); both when absent.
    pub outcome: Option<String>,
    /// Entries at or after this time (RFC 3339).
    pub since: Option<String>,
    /// Entries before this time (RFC 3339).
    pub until: Option<String>,
    /// The `nextCursor` of the previous page.
    pub cursor: Option<String>,
    /// Entries per page, 1 to 500 (default 100). Not for the export.
    pub limit: Option<usize>,
}

/// What every audit route may answer besides its own errors (OpenAPI).
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)]
pub enum AuditRouteErrors {
    /// FORBIDDEN: an API key, or a role that does not read the audit log (moderators, viewers).
    #[response(status = 403)]
    Forbidden(stow_http::error::ApiErrorBody),
}

/// The longest filter text (`actor`, `target`, `action`).
const MAX_FILTER_CHARS: usize = 512;

fn time(
    field: &str,
    value: Option<&str>,
) -> Result<Option<chrono::DateTime<chrono::Utc>>, ApiError> {
    value
        .map(|v| {
            chrono::DateTime::parse_from_rfc3339(v)
                .map(|t| t.with_timezone(&chrono::Utc))
                .map_err(|_| {
                    ApiError::invalid_request(format!(
                        "`{field}` must be an RFC 3339 time such as 2026-11-26T00:00:00Z (got {v:?})"
                    ))
                })
        })
        .transpose()
}

/// The actions `action` names (each exact, or a family as `object.*`).
fn actions(value: &str) -> Result<Vec<Action>, ApiError> {
    let mut found = Vec::new();
    for name in value.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let matched: Vec<Action> = match name.strip_suffix('*') {
            Some(family) if family.ends_with('.') => Action::ALL
                .iter()
                .copied()
                .filter(|a| a.as_str().starts_with(family))
                .collect(),
            _ => Action::parse(name).into_iter().collect(),
        };
        if matched.is_empty() {
            return Err(ApiError::invalid_request(format!(
                "`action`: unknown action {name:?}; docs/api.md \"Audit log\" lists them (a family as `object.*`)"
            )));
        }
        found.extend(matched);
    }
    found.sort_by_key(|a| a.as_str());
    found.dedup();
    Ok(found)
}

impl AuditParams {
    /// The query these filters ask for, with `limit` entries per page.
    fn query(&self, limit: usize) -> Result<AuditQuery, ApiError> {
        for (field, value) in [
            ("actor", &self.actor),
            ("action", &self.action),
            ("target", &self.target),
        ] {
            if value
                .as_ref()
                .is_some_and(|v| v.chars().count() > MAX_FILTER_CHARS)
            {
                return Err(ApiError::invalid_request(format!(
                    "`{field}` is longer than {MAX_FILTER_CHARS} characters"
                )));
            }
            // no entry holds one, and Postgres refuses it in a text parameter
            if value.as_ref().is_some_and(|v| v.contains('\0')) {
                return Err(ApiError::invalid_request(format!(
                    "`{field}` must not contain U+0000"
                )));
            }
        }
        let refused = match self.outcome.as_deref() {
            None => None,
            Some("done") => Some(false),
            Some("refused") => Some(true),
            Some(other) => {
                return Err(ApiError::invalid_request(format!(
                    "`outcome` must be done or refused (got {other:?})"
                )))
            }
        };
        let before = self
            .cursor
            .as_deref()
            .map(|c| {
                c.parse::<i64>().ok().filter(|n| *n > 0).ok_or_else(|| {
                    ApiError::invalid_request("`cursor` is not a cursor this log gave")
                })
            })
            .transpose()?;
        Ok(AuditQuery {
            actor: self.actor.clone().filter(|a| !a.is_empty()),
            actions: self
                .action
                .as_deref()
                .map(actions)
                .transpose()?
                .unwrap_or_default(),
            target_prefix: self.target.clone().filter(|t| !t.is_empty()),
            refused,
            since: time("since", self.since.as_deref())?,
            until: time("until", self.until.as_deref())?,
            before,
            limit,
        })
    }
}

/// The page size `limit` asks for.
fn page_size(limit: Option<usize>) -> Result<usize, ApiError> {
    match limit {
        None => Ok(100),
        Some(n) if (1..=MAX_PAGE).contains(&n) => Ok(n),
        Some(n) => Err(ApiError::invalid_request(format!(
            "`limit` must be 1 to {MAX_PAGE} (got {n})"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_are_named_exactly_or_by_family() {
        assert_eq!(actions("object.delete").unwrap(), [Action::ObjectDelete]);
        let keys = actions("key.*").unwrap();
        assert_eq!(keys.len(), 4);
        assert!(keys.iter().all(|a| a.as_str().starts_with("key.")));
        assert_eq!(
            actions("object.move, object.delete,object.move").unwrap(),
            [Action::ObjectDelete, Action::ObjectMove]
        );
        assert!(actions("object.nope").is_err());
        assert!(actions("*").is_err());
        assert!(actions("obj*").is_err());
        assert_eq!(actions("").unwrap(), []);
    }

    #[test]
    fn filters_are_checked_and_named() {
        let bad = |p: AuditParams| p.query(10).unwrap_err().to_string();
        let p = |f: fn(&mut AuditParams)| {
            let mut p = AuditParams::default();
            f(&mut p);
            p
        };
        assert!(bad(p(|p| p.outcome = Some("maybe".into()))).contains("`outcome`"));
        assert!(bad(p(|p| p.since = Some("yesterday".into()))).contains("`since`"));
        assert!(bad(p(|p| p.cursor = Some("-1".into()))).contains("`cursor`"));
        assert!(bad(p(|p| p.target = Some("x".repeat(513)))).contains("`target`"));
        assert!(p(|p| p.target = Some("x".repeat(512))).query(10).is_ok());
        // schemathesis found a 500 here: Postgres refuses U+0000 in text
        assert!(bad(p(|p| p.actor = Some("a\0b".into()))).contains("`actor`"));
        assert!(bad(p(|p| p.target = Some("\0".into()))).contains("`target`"));
        assert!(page_size(Some(0)).is_err());
        assert!(page_size(Some(501)).is_err());
        assert_eq!(page_size(Some(500)).unwrap(), 500);
        assert_eq!(page_size(None).unwrap(), 100);
    }
}
