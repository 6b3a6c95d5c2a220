//! The maintenance that enforces lifecycle rules: for each organization with rules, each rule's
//! expired objects are deleted in batches of [`cdn_core::lifecycle::BATCH`] (rows and their
//! `object.expire` audit entries in one statement, then the bytes), so no batch holds a row lock
//! longer than a `delete-folder` request. Every API host runs it; instances never delete one
//! object twice (the store skips rows another instance's batch holds).

use auth_core::audit::Audit;
use auth_core::OrgId;
use cdn_core::lifecycle::{plan, Expiry, BATCH};
use chrono::{DateTime, Utc};

use crate::state::CdnState;

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

/// One pass over every organization's rules, as of `now`.
pub async fn expire_objects(state: &CdnState, now: DateTime<Utc>) -> ExpiryPass {
    let mut pass = ExpiryPass::default();
    let orgs = match state.stores.lifecycle.organizations().await {
        Ok(orgs) => orgs,
        Err(e) => {
            tracing::warn!(error = %e, "lifecycle: listing organizations with rules failed");
            pass.failed += 1;
            return pass;
        }
    };
    for org in orgs {
        if let Err(e) = expire_org(state, &org, now, &mut pass).await {
            tracing::warn!(error = %e, org = %org, "lifecycle: expiry failed; the next pass tries again");
            metrics::counter!("cdn_lifecycle_failures_total").increment(1);
            pass.failed += 1;
        }
    }
    pass
}

async fn expire_org(
    state: &CdnState,
    org: &OrgId,
    now: DateTime<Utc>,
    pass: &mut ExpiryPass,
) -> Result<(), auth_core::StoreError> {
    let rules = state.stores.lifecycle.list(org).await?;
    let audit = Audit::service("lifecycle");
    for expiry in plan(&rules, now) {
        loop {
            let batch = expire_batch(state, org, &expiry, &audit).await?;
            pass.expired += batch.0;
            pass.bytes += batch.1;
            if batch.0 < BATCH as u64 {
                break;
            }
            // a long backlog takes turns with the requests this runtime serves
            tokio::task::yield_now().await;
        }
    }
    Ok(())
}

/// One batch: rows (with their audit entries) first, then the bytes; bytes whose removal fails
/// are left to `stowctl gc`. Returns the objects and bytes deleted.
async fn expire_batch(
    state: &CdnState,
    org: &OrgId,
    expiry: &Expiry,
    audit: &Audit,
) -> Result<(u64, u64), auth_core::StoreError> {
    let gone = state
        .stores
        .records
        .expire(org, expiry, BATCH, audit)
        .await?;
    let bytes: u64 = gone.iter().map(|r| r.size.max(0) as u64).sum();
    for record in &gone {
        state.forget_row(org, &record.key);
        let location = stow_objects::ObjectPath::from(record.storage_path.as_str());
        if let Err(e) = state.blobs.delete(&location).await {
            tracing::warn!(error = %e, location = %record.storage_path, "removing expired bytes failed; `stowctl gc` will");
        }
    }
    metrics::counter!("cdn_lifecycle_expired_objects_total").increment(gone.len() as u64);
    metrics::counter!("cdn_lifecycle_expired_bytes_total").increment(bytes);
    Ok((gone.len() as u64, bytes))
}
