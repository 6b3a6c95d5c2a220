//! The API host's side of enforcing lifecycle rules: it runs `stow_ops::lifecycle::ExpireObjects`
//! (which rules, which objects, in batches, audited) as the service, and does what only the host
//! can once a batch's rows are gone — forget its cached rows, remove the bytes, count them.

use async_trait::async_trait;
use auth_core::audit::Audit;
use auth_core::OrgId;
use cdn_core::store::ObjectRecord;
use chrono::{DateTime, Utc};
use stow_ops::lifecycle::{ExpireObjects, Removal};
use stow_ops::{Caller, Ctx};

pub use stow_ops::lifecycle::ExpiryPass;

use crate::state::ApiState;

/// The host's removal of expired objects' bytes; bytes whose removal fails are left to
/// `stowctl gc`.
struct Bytes<'a>(&'a ApiState);

#[async_trait]
impl Removal for Bytes<'_> {
    async fn removed(&self, org: &OrgId, gone: &[ObjectRecord]) {
        let state = self.0;
        for record in gone {
            state.forget_row(org, &record.key);
            let location = stow_objects::ObjectPath::from(record.storage_path.as_str());
            if let Err(e) = state.blobs.delete(&location).await {
                tracing::warn!(error = %e, location = %record.storage_path, "removing expired bytes failed; `stowctl gc` will");
            }
        }
        let bytes: u64 = gone.iter().map(|r| r.size.max(0) as u64).sum();
        metrics::counter!("cdn_lifecycle_expired_objects_total").increment(gone.len() as u64);
        metrics::counter!("cdn_lifecycle_expired_bytes_total").increment(bytes);
        // a long backlog takes turns with the requests this runtime serves
        tokio::task::yield_now().await;
    }
}

/// One pass over every organization's rules, as of `now`.
pub async fn expire_objects(state: &ApiState, now: DateTime<Utc>) -> ExpiryPass {
    let ctx = Ctx::new(&state.stores, Caller::Operator, Audit::service("lifecycle"));
    let pass = ExpireObjects { now }
        .run(&ctx, &Bytes(state))
        .await
        .unwrap_or_else(|e| {
            tracing::warn!(error = %e, "lifecycle: the pass was refused");
            ExpiryPass {
                failed: 1,
                ..ExpiryPass::default()
            }
        });
    metrics::counter!("cdn_lifecycle_failures_total").increment(pass.failed);
    pass
}
