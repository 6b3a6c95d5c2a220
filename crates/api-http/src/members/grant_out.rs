//! A grant on the wire: a role with servers (join codes) and path prefixes, read and written.

use auth_core::roles::Grant;
use auth_core::{OrgId, Server};
use serde::{Deserialize, Serialize};
use stow_http::ApiError;
use utoipa::ToSchema;

use crate::state::ApiState;

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
    pub async fn of(state: &ApiState, org: &OrgId, grant: &Grant) -> Result<Self, ApiError> {
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

impl GrantIn {
    /// The grant to resolve (`stow_ops::members::GrantRequest`: the one rule for every front
    /// end).
    pub fn request(self) -> stow_ops::members::GrantRequest {
        stow_ops::members::GrantRequest {
            role: self.role,
            servers: self.servers,
            allow_paths: self.allow_paths,
            deny_paths: self.deny_paths,
        }
    }
}
