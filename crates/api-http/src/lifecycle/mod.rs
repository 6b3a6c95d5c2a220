//! `/v1/lifecycle`: an organization's lifecycle rules, "delete what is under this folder once it
//! is older than N days" (`cdn_core::lifecycle`), and the maintenance that enforces them
//! ([`expire`]). One module per operation: list, set, remove.

mod expire;
mod list;
mod remove;
mod set;

pub use expire::*;
pub use list::*;
pub use remove::*;
pub use set::*;

use cdn_core::lifecycle::{LifecycleError, LifecycleRule};
use serde::Serialize;
use stow_http::{ApiError, Code};
use utoipa::ToSchema;

/// One rule.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleRuleView {
    /// The folder (normalized); `""` is every object of the workspace.
    pub path: String,
    /// Objects under the folder last modified more than this many days ago are deleted.
    pub days: i64,
    /// ISO 8601 UTC, milliseconds.
    pub created_at: String,
    /// When the days were last set.
    pub updated_at: String,
}

impl From<LifecycleRule> for LifecycleRuleView {
    fn from(r: LifecycleRule) -> Self {
        let time = |t: chrono::DateTime<chrono::Utc>| {
            t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        };
        Self {
            created_at: time(r.created_at),
            updated_at: time(r.updated_at),
            path: r.folder,
            days: r.days,
        }
    }
}

/// The documented answer to each refusal of the lifecycle rules.
pub(crate) fn refused(e: LifecycleError) -> ApiError {
    let code = match e {
        LifecycleError::Folder(_) => Code::InvalidPath,
        LifecycleError::Days(_) => Code::InvalidRequest,
        LifecycleError::Limit => Code::Conflict,
    };
    ApiError::new(code, e.to_string())
}
