//! [`GrantRequest`]: a grant as a front end received it (a role's name, join codes, folder
//! prefixes), resolved among the organization's servers.

use auth_core::roles::{Grant, Role};
use auth_core::{PathScope, Server, ServerScope};

use crate::fields::{check_entries, folder_prefixes};
use crate::OpError;

#[derive(Debug, Clone, Default)]
pub struct GrantRequest {
    /// `owner`, `admin`, `moderator` or `viewer`.
    pub role: String,
    /// Join codes of the servers whose logs it reaches; `None` for every server.
    pub servers: Option<Vec<String>>,
    pub allow_paths: Vec<String>,
    pub deny_paths: Vec<String>,
}

impl GrantRequest {
    /// The grant, with join codes resolved among the organization's `known` servers.
    pub fn resolve(&self, known: &[Server]) -> Result<Grant, OpError> {
        let role: Role = self
            .role
            .parse()
            .map_err(|e: auth_core::roles::UnknownRole| {
                OpError::invalid("role", format!(": {e}"))
            })?;
        check_entries(&[
            ("servers", self.servers.as_ref().map_or(0, Vec::len)),
            ("allowPaths", self.allow_paths.len()),
            ("denyPaths", self.deny_paths.len()),
        ])?;
        let servers = match &self.servers {
            None => ServerScope::All,
            Some(codes) => ServerScope::of_join_codes(known, codes)
                .map_err(|e| OpError::invalid("servers", format!(": {e}")))?,
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
