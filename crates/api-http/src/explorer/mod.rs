//! The log explorer's reads on the API host (docs/api.md, section 6): query, search, counts,
//! facets, patterns, player, players, export and tail, one file each, and what they share: the target server, the search with the plan's
//! retention applied, the event as returned, and the mapping of search errors.

pub mod counts;
pub mod export;
pub mod facets;
pub mod patterns;
pub mod player;
pub mod players;
pub mod query;
pub mod search;
pub mod slots;
pub mod tail;

use actix_web::web;
use auth_core::{Permission, Server};
use chrono::{DateTime, SecondsFormat, Utc};
use logs_core::plan::Position;
use logs_core::search::Search;
use logs_core::store::{EventRow, SearchError};
use serde::Serialize;
use serde_json::Value;
use stow_http::{ApiError, Auth, Code};
use utoipa::ToSchema;

use crate::state::ApiState;

mod opening;
pub use opening::MAX_SERVER_IDS;
pub(crate) use opening::*;

pub(crate) fn ts(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// A returned event: all 15 fields, `null` where absent, plus `batch_id`.
#[derive(Serialize, ToSchema)]
pub struct EventOut {
    pub event_id: String,
    /// The join code.
    pub server_id: String,
    pub level: String,
    pub event_type: String,
    pub occurred_at: String,
    pub ingested_at: String,
    pub player_id: Option<String>,
    pub target_player_id: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub player_identifiers: Option<Value>,
    #[schema(value_type = Option<Object>)]
    pub target_player_identifiers: Option<Value>,
    pub resource: Option<String>,
    pub trace_id: Option<String>,
    pub environment: Option<String>,
    pub message: String,
    #[schema(value_type = Option<Object>)]
    pub data: Option<Value>,
    pub batch_id: String,
}

impl From<EventRow> for EventOut {
    fn from(r: EventRow) -> Self {
        Self {
            event_id: r.event_id,
            server_id: r.cfx_id,
            level: r.level,
            event_type: r.event_type,
            occurred_at: ts(r.occurred_at),
            ingested_at: ts(r.ingested_at),
            player_id: r.player_id,
            target_player_id: r.target_player_id,
            player_identifiers: r.player_identifiers,
            target_player_identifiers: r.target_player_identifiers,
            resource: r.resource,
            trace_id: r.trace_id,
            environment: r.environment,
            message: r.message,
            data: r.data,
            batch_id: r.batch_id,
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct Range {
    pub from: String,
    pub to: String,
}

fn forbidden(msg: &str) -> ApiError {
    ApiError::new(Code::Forbidden, msg)
}

pub(crate) async fn target_server(
    state: &ApiState,
    auth: &Auth,
    named: Option<&str>,
) -> Result<Server, ApiError> {
    auth_core::log_access::resolve(state.stores.accounts.as_ref(), auth, named)
        .await
        .map_err(|d| denied(auth, d))
}

/// Every server whose logs `auth` may read (active Logs sources only).
pub(crate) async fn readable_servers(
    state: &ApiState,
    auth: &Auth,
) -> Result<Vec<Server>, ApiError> {
    auth_core::log_access::readable(state.stores.accounts.as_ref(), auth)
        .await
        .map_err(|d| denied(auth, d))
}

/// The servers of join codes `codes`, each checked as `serverId` is, once each (codes that
/// differ only in case name one server), in the order named.
pub(crate) async fn named_servers(
    state: &ApiState,
    auth: &Auth,
    codes: &[String],
) -> Result<Vec<Server>, ApiError> {
    let mut servers: Vec<Server> = Vec::with_capacity(codes.len());
    for code in codes {
        let s = target_server(state, auth, Some(code)).await?;
        if !servers.iter().any(|x| x.id == s.id) {
            servers.push(s);
        }
    }
    Ok(servers)
}

pub(crate) fn denied(auth: &Auth, d: auth_core::log_access::Denied) -> ApiError {
    use auth_core::log_access::Denied;
    match d {
        Denied::NoServerNamed => ApiError::invalid_request(
            "`serverId` (the server join code) is required for a global key",
        ),
        Denied::OtherServer => forbidden("this key is bound to another server"),
        Denied::OutOfScope(code) => forbidden(&format!(
            "{} may read the logs of named servers only, and `{code}` is not one of them",
            auth.holder()
        )),
        Denied::UnknownServer(code) => ApiError::new(
            Code::NotFound,
            format!("no registered server with join code `{code}` in this organization"),
        ),
        Denied::PlanWithoutLogs => forbidden("the organization's plan does not include Logs"),
        Denied::SourceInactive | Denied::BoundServerGone(_) => {
            forbidden("the Logs source of this server is not active")
        }
        Denied::Store(e) => e.into(),
    }
}

/// What every log read may answer besides its own errors (OpenAPI).
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)]
pub enum LogReadErrors {
    /// FORBIDDEN: `logs:read` missing, a key bound to another server, a server outside the key's
    /// server scope, a plan without Logs, or the server's Logs source inactive.
    #[response(status = 403)]
    Forbidden(stow_http::error::ApiErrorBody),
    /// NOT_FOUND: no registered server with that join code in this organization.
    #[response(status = 404)]
    NotFound(stow_http::error::ApiErrorBody),
}
