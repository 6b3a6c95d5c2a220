//! `/v1/logs/saved-searches`: an organization's saved log searches (`logs_core::saved`), for
//! anyone whose key or role reads logs. One module per operation: list, create, update, delete.
//!
//! A saved search names servers by join code (or `["*"]`, every server the reader may read);
//! only those whose servers the caller may all read are listed, opened, changed or deleted, so a
//! moderator limited to one server never sees another server's searches.

mod create;
mod delete;
mod list;
mod update;

pub use create::*;
pub use delete::*;
pub use list::*;
pub use update::*;

use std::collections::HashMap;

use auth_core::{Permission, ServerId};
use logs_core::saved::{SavedPut, SavedSearch, SavedServers, ServerCodes};
use serde::Serialize;
use stow_http::{ApiError, Auth, Code};
use utoipa::ToSchema;

use auth_core::log_access::Denied;

use crate::explorer::{denied, named_servers};
use crate::state::ApiState;

/// One saved search.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SavedSearchOut {
    /// `ss_…`.
    pub id: String,
    pub name: String,
    /// Join codes, or `["*"]` (every server the reader may read). A server removed since is
    /// left out.
    pub server_ids: Vec<String>,
    /// The filters, as saved: the query's filter fields.
    #[schema(value_type = Object)]
    pub search: serde_json::Value,
    /// Who saved it (a member's sign-in name or a key's name, at the time).
    pub created_by: String,
    /// ISO 8601 UTC, milliseconds.
    pub created_at: String,
    pub updated_at: String,
}

/// Join codes by registered id, of the organization's servers.
pub(crate) struct Codes(HashMap<ServerId, String>);

impl Codes {
    pub(crate) async fn of(state: &ApiState, auth: &Auth) -> Result<Self, ApiError> {
        let servers = state.stores.accounts.list_servers(&auth.org.id).await?;
        Ok(Self(
            servers.into_iter().map(|s| (s.id, s.cfx_id)).collect(),
        ))
    }

    pub(crate) fn out(&self, s: SavedSearch) -> SavedSearchOut {
        let time = |t: chrono::DateTime<chrono::Utc>| {
            t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        };
        SavedSearchOut {
            server_ids: match &s.servers {
                SavedServers::All => vec!["*".to_owned()],
                SavedServers::Named(ids) => {
                    ids.iter().filter_map(|i| self.0.get(i).cloned()).collect()
                }
            },
            created_at: time(s.created_at),
            updated_at: time(s.updated_at),
            id: s.id,
            name: s.name,
            search: s.search,
            created_by: s.created_by,
        }
    }
}

/// Whether `auth` may read every server of `s` (a bound key: its own server only).
pub(crate) fn visible(auth: &Auth, s: &SavedSearch) -> bool {
    stow_ops::alerts::search_visible(&auth.log_scope(), s)
}

/// The caller's permission, and Logs in the plan.
pub(crate) fn reader(auth: &Auth) -> Result<(), ApiError> {
    auth.require(Permission::LogsRead)?;
    if !auth.plan.logs_enabled {
        return Err(denied(auth, Denied::PlanWithoutLogs));
    }
    Ok(())
}

/// The servers of a request, each join code checked as `serverId` is (404 unknown, 403 outside
/// the key's servers or with its Logs source inactive).
pub(crate) async fn resolve(
    state: &ApiState,
    auth: &Auth,
    codes: ServerCodes,
) -> Result<SavedServers, ApiError> {
    Ok(match codes {
        ServerCodes::All => SavedServers::All,
        ServerCodes::Named(codes) => SavedServers::Named(
            named_servers(state, auth, &codes)
                .await?
                .into_iter()
                .map(|s| s.id)
                .collect(),
        ),
    })
}

/// The saved search `id` of the organization, when the caller may read all its servers (404
/// otherwise: one it may not see does not exist for it).
pub(crate) async fn find(state: &ApiState, auth: &Auth, id: &str) -> Result<SavedSearch, ApiError> {
    let found = match crate::storable(id) {
        true => state.stores.saved_searches.get(&auth.org.id, id).await?,
        false => None,
    };
    found.filter(|s| visible(auth, s)).ok_or_else(|| {
        ApiError::new(
            Code::NotFound,
            format!("no saved search `{id}` in this organization"),
        )
    })
}

/// The answer to a refused change.
pub(crate) fn refused(put: SavedPut, name: &str) -> Result<(), ApiError> {
    match put {
        SavedPut::Done => Ok(()),
        SavedPut::NameTaken => Err(ApiError::new(
            Code::Conflict,
            format!("a saved search named `{name}` exists (names compare in either case); pick another name"),
        )),
        SavedPut::LimitReached => Err(ApiError::new(
            Code::Conflict,
            format!(
                "this organization has {} saved searches, the limit; delete one first",
                logs_core::saved::MAX_SAVED_SEARCHES
            ),
        )),
        SavedPut::Missing => Err(ApiError::new(
            Code::NotFound,
            "the saved search was deleted meanwhile",
        )),
    }
}

/// What every saved-search route may answer besides its own (OpenAPI).
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)]
pub enum SavedSearchErrors {
    /// FORBIDDEN: `logs:read` missing, or a plan without Logs.
    #[response(status = 403)]
    Forbidden(stow_http::error::ApiErrorBody),
}
