//! A grant on the wire: a role with servers (join codes) and path prefixes, read and written.

use auth_core::roles::{Grant, Role};
use auth_core::{OrgId, PathScope, Server, ServerScope};
use cdn_core::path::normalize_folder;
use serde::{Deserialize, Serialize};
use stow_http::ApiError;
use utoipa::ToSchema;

use crate::state::CdnState;

/// What a member holds (or an invitation gives).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrantOut {
    /// `owner`, `admin`, `moderator` or `viewer`.
    pub role: String,
    /// The join codes of the servers whose logs it covers; null for every server.
    pub servers: Option<Vec<String>>,
    /// The CDN path prefixes it covers; empty for every path.
    pub allow_paths: Vec<String>,
    /// Path prefixes excluded (they win over `allowPaths`).
    pub deny_paths: Vec<String>,
}

impl GrantOut {
    /// `grant` with its servers named by join code (`servers`: the organization's).
    pub fn with(servers: &[Server], grant: &Grant) -> Self {
        Self {
            role: grant.role.as_str().to_owned(),
            servers: grant.servers.named().map(|ids| {
                ids.iter()
                    .map(|id| {
                        servers
                            .iter()
                            .find(|s| s.id == *id)
                            .map_or_else(|| id.to_string(), |s| s.cfx_id.clone())
                    })
                    .collect()
            }),
            allow_paths: grant.paths.allowed.clone(),
            deny_paths: grant.paths.denied.clone(),
        }
    }

    /// [`GrantOut::with`] the organization's servers, read now.
    pub async fn of(state: &CdnState, org: &OrgId, grant: &Grant) -> Result<Self, ApiError> {
        let servers = state.stores.accounts.list_servers(org).await?;
        Ok(Self::with(&servers, grant))
    }
}

/// A grant to give: `role`, and optionally `servers` (join codes), `allowPaths`, `denyPaths`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GrantIn {
    /// `owner`, `admin`, `moderator` or `viewer`.
    pub role: String,
    /// Join codes of the servers whose logs it covers (at least one); absent or null for every
    /// server.
    pub servers: Option<Vec<String>>,
    /// CDN path prefixes it covers (whole segments); absent or empty for every path.
    #[serde(default)]
    pub allow_paths: Vec<String>,
    /// Path prefixes excluded.
    #[serde(default)]
    pub deny_paths: Vec<String>,
}

/// Folder prefixes as stored (normalized, whole segments); `field` names them in refusals.
pub(crate) fn folder_prefixes(raw: &[String], field: &str) -> Result<Vec<String>, ApiError> {
    raw.iter()
        .map(|p| match normalize_folder(p) {
            Ok(n) if !n.is_empty() => Ok(n),
            Ok(_) => Err(ApiError::invalid_request(format!(
                "`{field}`: an empty prefix means every path; leave it out instead"
            ))),
            Err(e) => Err(ApiError::invalid_request(format!("`{field}` {p:?}: {e}"))),
        })
        .collect()
}

/// Most servers or path prefixes one grant (or key) names.
pub const MAX_ENTRIES: usize = 100;

/// Refuses a list field with more than [`MAX_ENTRIES`] entries, naming it.
pub fn check_entries(fields: &[(&str, usize)]) -> Result<(), ApiError> {
    match fields.iter().find(|(_, n)| *n > MAX_ENTRIES) {
        Some((field, n)) => Err(ApiError::invalid_request(format!(
            "`{field}` has {n} entries; at most {MAX_ENTRIES}"
        ))),
        None => Ok(()),
    }
}

impl GrantIn {
    /// The grant, with join codes resolved among the organization's `known` servers.
    pub fn resolve(&self, known: &[Server]) -> Result<Grant, ApiError> {
        let role: Role = self
            .role
            .parse()
            .map_err(|e: auth_core::roles::UnknownRole| {
                ApiError::invalid_request(format!("`role`: {e}"))
            })?;
        check_entries(&[
            ("servers", self.servers.as_ref().map_or(0, Vec::len)),
            ("allowPaths", self.allow_paths.len()),
            ("denyPaths", self.deny_paths.len()),
        ])?;
        let servers = match &self.servers {
            None => ServerScope::All,
            Some(codes) => ServerScope::of_join_codes(known, codes)
                .map_err(|e| ApiError::invalid_request(format!("`servers`: {e}")))?,
        };
        Ok(Grant {
            role,
            servers,
            paths: PathScope::new(
                folder_prefixes(&self.allow_paths, "allowPaths")?,
                folder_prefixes(&self.deny_paths, "denyPaths")?,
            ),
        })
    }
}
