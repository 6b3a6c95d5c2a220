//! `/v1/placeholders`: an organization's path patterns and the fallback object public delivery
//! serves for a missing key that one matches (`cdn_core::placeholder`; delivery in
//! `crate::delivery`). One module per operation: list, set, remove.

mod list;
mod remove;
mod set;

pub use list::*;
pub use remove::*;
pub use set::*;

use cdn_core::placeholder::{Pattern, Placeholder, PlaceholderError};
use serde::Serialize;
use stow_http::{ApiError, Auth, Code};
use utoipa::ToSchema;

use crate::state::ApiState;

/// One placeholder.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlaceholderView {
    /// The key pattern (normalized).
    pub pattern: String,
    /// The key of the object served for a missing key the pattern matches.
    pub fallback: String,
    /// The fallback object's public URL.
    pub fallback_url: String,
    /// ISO 8601 UTC, milliseconds.
    pub created_at: String,
    /// When the fallback was last set.
    pub updated_at: String,
}

impl PlaceholderView {
    pub(crate) fn new(state: &ApiState, slug: &str, p: Placeholder) -> Self {
        let time = |t: chrono::DateTime<chrono::Utc>| {
            t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        };
        Self {
            fallback_url: state.public_url(slug, &p.fallback),
            created_at: time(p.created_at),
            updated_at: time(p.updated_at),
            pattern: p.pattern,
            fallback: p.fallback.into_string(),
        }
    }
}

/// The documented answer to each refusal of the placeholder rules.
pub(crate) fn refused(e: PlaceholderError) -> ApiError {
    let code = match e {
        PlaceholderError::Pattern(_)
        | PlaceholderError::Glob { .. }
        | PlaceholderError::Fallback(_) => Code::InvalidPath,
        PlaceholderError::FallbackMissing(_) => Code::InvalidRequest,
        PlaceholderError::Limit => Code::Conflict,
    };
    ApiError::new(code, e.to_string())
}

/// Refuses a pattern that can match keys outside the key's paths, naming the part outside.
pub(crate) fn pattern_in_scope(auth: &Auth, pattern: &Pattern) -> Result<(), ApiError> {
    match pattern.outside(&auth.key.path_scope()) {
        None => Ok(()),
        Some(part) => {
            let reach = if part.is_empty() {
                "every folder (its first segment has a wildcard)".to_owned()
            } else {
                format!("`{part}`")
            };
            Err(ApiError::new(
                Code::PathNotAllowed,
                format!(
                    "pattern `{}` reaches {reach}, outside the paths {} may write",
                    pattern.as_str(),
                    auth.holder()
                ),
            ))
        }
    }
}
