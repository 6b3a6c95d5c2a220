//! [`ExpireObjects`]: for each organization with rules, each rule's expired objects are deleted
//! in batches of [`BATCH`] (rows and their `object.expire` audit entries in one store call), then
//! the host removes their bytes ([`Removal`]), so no batch holds a row lock longer than a
//! `delete-folder` request. Instances never delete one object twice (the store skips rows another
//! instance's batch holds). Run by the operator's jobs only.

use async_trait::async_trait;
use auth_core::OrgId;
use cdn_core::lifecycle::{plan, Expiry, BATCH};
use cdn_core::store::ObjectRecord;
use chrono::{DateTime, Utc};

use crate::{Caller, Ctx, OpError};

/// What the host does once rows are gone: forget what it caches of them and remove their bytes
/// (a failure there is the host's to log; `stowctl gc` removes bytes left behind).
#[async_trait]
pub trait Removal: Send + Sync {
    async fn removed(&self, org: &OrgId, gone: &[ObjectRecord]);
}

/// One pass over every organization's rules, as of `now`.
pub struct ExpireObjects {
    pub now: DateTime<Utc>,
}

/// What one pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExpiryPass {
    /// Objects deleted.
    pub expired: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Organizations whose pass failed (a store error; the next pass tries again).
    pub failed: u64,
}

impl ExpireObjects {
    pub async fn run(self, ctx: &Ctx<'_>, removal: &dyn Removal) -> Result<ExpiryPass, OpError> {
        if !matches!(ctx.caller, Caller::Operator) {
            return Err(OpError::Forbidden(
                "lifecycle rules are enforced by the service".into(),
            ));
        }
        let mut pass = ExpiryPass::default();
        let orgs = match ctx.stores.lifecycle.organizations().await {
            Ok(orgs) => orgs,
            Err(e) => {
                tracing::warn!(error = %e, "lifecycle: listing organizations with rules failed");
                pass.failed += 1;
                return Ok(pass);
            }
        };
        for org in orgs {
            if let Err(e) = self.org(ctx, &org, removal, &mut pass).await {
                tracing::warn!(error = %e, org = %org, "lifecycle: expiry failed; the next pass tries again");
                pass.failed += 1;
            }
        }
        Ok(pass)
    }

    async fn org(
        &self,
        ctx: &Ctx<'_>,
        org: &OrgId,
        removal: &dyn Removal,
        pass: &mut ExpiryPass,
    ) -> Result<(), auth_core::StoreError> {
        let rules = ctx.stores.lifecycle.list(org).await?;
        for expiry in plan(&rules, self.now) {
            loop {
                let (objects, bytes) = batch(ctx, org, &expiry, removal).await?;
                pass.expired += objects;
                pass.bytes += bytes;
                if objects < BATCH as u64 {
                    break;
                }
            }
        }
        Ok(())
    }
}

/// One batch: rows (with their audit entries) first, then the bytes. The objects and bytes.
async fn batch(
    ctx: &Ctx<'_>,
    org: &OrgId,
    expiry: &Expiry,
    removal: &dyn Removal,
) -> Result<(u64, u64), auth_core::StoreError> {
    let gone = ctx
        .stores
        .records
        .expire(org, expiry, BATCH, &ctx.audit)
        .await?;
    removal.removed(org, &gone).await;
    let bytes = gone.iter().map(|r| r.size.max(0) as u64).sum();
    Ok((gone.len() as u64, bytes))
}
