//! [`Purge`]: after it, no instance serves a cached older state of the listed keys.
//!
//! What an instance caches per key is the row behind it, for a short time from the moment it
//! started reading it (bytes are cached by immutable location, so a fresh row never meets old
//! bytes). This operation has the host forget the keys at once ([`ObjectsHost::forget_row`]) and
//! records one `object.purge` entry per distinct key; the API host then waits out the rest of its
//! row caches' lifetime before it answers, so the other instances have forgotten them too.

use std::collections::BTreeSet;

use auth_core::audit::Action;
use auth_core::{OrgId, Permission};
use cdn_core::path::{normalize_key, ObjectKey};

use super::ObjectsHost;
use crate::{Ctx, OpError};

/// A purge as asked: object keys, at most `max` of them (the host's `MAX_BULK_DELETE_PATHS`).
#[derive(Debug, Clone)]
pub struct Purge {
    pub paths: Vec<String>,
    pub max: usize,
}

/// A purge the caller may make: the keys normalized, in request order, all within its paths.
#[derive(Debug, Clone)]
pub struct CheckedPurge {
    keys: Vec<ObjectKey>,
}

/// What a purge did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Purged {
    /// The normalized keys, in request order.
    pub paths: Vec<String>,
    /// How many distinct keys name an existing object.
    pub purged: usize,
}

impl Purge {
    /// Who may and what is asked, before anything is done: `cdn:purge`, 1 to `max` valid keys,
    /// every one within the caller's paths (else nothing is purged).
    pub fn check(self, ctx: &Ctx<'_>) -> Result<CheckedPurge, OpError> {
        ctx.require(Permission::CdnPurge)?;
        let max = self.max;
        if self.paths.len() > max {
            return Err(OpError::TooManyFiles(format!(
                "paths has {} entries; the limit is {max}",
                self.paths.len()
            )));
        }
        if self.paths.is_empty() {
            return Err(OpError::BadRequest(
                "paths must contain at least one object key".into(),
            ));
        }
        let keys = self
            .paths
            .iter()
            .enumerate()
            .map(|(i, raw)| {
                normalize_key(raw)
                    .map_err(|e| OpError::InvalidPath(format!("invalid path paths[{i}]: {e}")))
            })
            .collect::<Result<Vec<ObjectKey>, OpError>>()?;
        let scope = ctx.path_scope();
        if let Some(outside) = keys.iter().find(|k| !scope.allows(k)) {
            return Err(ctx.outside_paths(outside, "purge"));
        }
        Ok(CheckedPurge { keys })
    }
}

impl CheckedPurge {
    pub fn keys(&self) -> &[ObjectKey] {
        &self.keys
    }

    /// Purges in `org` (the caller's own; the operator's any).
    pub async fn run(
        self,
        ctx: &Ctx<'_>,
        org: &OrgId,
        host: &dyn ObjectsHost,
    ) -> Result<Purged, OpError> {
        ctx.within(org)?;
        let distinct: BTreeSet<&ObjectKey> = self.keys.iter().collect();
        let mut purged = 0;
        for key in &distinct {
            host.forget_row(org, key);
            if ctx.stores.records.get(org, key).await?.is_some() {
                purged += 1;
            }
        }
        let entries: Vec<_> = distinct
            .iter()
            .map(|k| {
                ctx.audit
                    .entry(org, Action::ObjectPurge, k.as_str(), serde_json::json!({}))
            })
            .collect();
        ctx.stores.audit.record(&entries).await?;
        Ok(Purged {
            paths: self.keys.into_iter().map(String::from).collect(),
            purged,
        })
    }
}
