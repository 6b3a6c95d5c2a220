//! [`Stores`]: the storage an operation works on, one trait object per store. The hosts and
//! `stowctl` fill it with the Postgres adapters (`stow_db::stores`), tests with
//! [`Stores::memory`].

use std::sync::Arc;

use auth_core::audit::AuditStore;
use auth_core::backoff::SignInFailureStore;
use auth_core::console_session::ConsoleSessionStore;
use auth_core::member::MemberStore;
use auth_core::rate::RateBucketStore;
use auth_core::signing_secrets::SigningSecretStore;
use auth_core::AccountStore;
use cdn_core::idempotency::IdempotencyStore;
use cdn_core::lifecycle::LifecycleStore;
use cdn_core::placeholder::PlaceholderStore;
use cdn_core::store::ObjectRecordStore;
use cdn_core::upload_url::UploadUrlStore;
use logs_core::alert_store::AlertStore;
use logs_core::saved::SavedSearchStore;
use logs_core::{LogStore, ReadSlotStore};

pub struct Stores {
    pub accounts: Arc<dyn AccountStore>,
    pub records: Arc<dyn ObjectRecordStore>,
    pub idempotency: Arc<dyn IdempotencyStore>,
    pub upload_urls: Arc<dyn UploadUrlStore>,
    pub placeholders: Arc<dyn PlaceholderStore>,
    pub lifecycle: Arc<dyn LifecycleStore>,
    pub signing_secrets: Arc<dyn SigningSecretStore>,
    pub logs: Arc<dyn LogStore>,
    pub read_slots: Arc<dyn ReadSlotStore>,
    pub console_sessions: Arc<dyn ConsoleSessionStore>,
    pub rate_buckets: Arc<dyn RateBucketStore>,
    pub members: Arc<dyn MemberStore>,
    pub sign_in_failures: Arc<dyn SignInFailureStore>,
    pub audit: Arc<dyn AuditStore>,
    pub saved_searches: Arc<dyn SavedSearchStore>,
    pub alerts: Arc<dyn AlertStore>,
}

impl Stores {
    /// Every store in memory, writing one audit log (unit tests, tooling); the built-in plans
    /// are there, like in a freshly migrated database.
    pub fn memory() -> Self {
        Self::memory_with_alerts().0
    }

    /// [`Stores::memory`], with its alerts adapter as itself: tests queue firings on it as a
    /// batch commit would ([`logs_core::memory::MemoryAlerts::queue_firing`]).
    pub fn memory_with_alerts() -> (Self, Arc<logs_core::memory::MemoryAlerts>) {
        use auth_core::memory as auth;
        use cdn_core::memory as cdn;
        use logs_core::memory as logs;
        let audit = Arc::new(auth::MemoryAudit::default());
        let accounts = Arc::new(auth::MemoryAccounts::with_audit(audit.clone()));
        let saved = Arc::new(logs::MemorySavedSearches::with_audit(audit.clone()));
        let alerts = Arc::new(logs::MemoryAlerts::new(saved.clone(), audit.clone()));
        let stores = Self {
            accounts: accounts.clone(),
            members: accounts,
            records: Arc::new(cdn::MemoryObjectRecords::with_audit(audit.clone())),
            idempotency: Arc::new(cdn::MemoryIdempotency::default()),
            upload_urls: Arc::new(cdn::MemoryUploadUrls::default()),
            placeholders: Arc::new(cdn::MemoryPlaceholders::with_audit(audit.clone())),
            lifecycle: Arc::new(cdn::MemoryLifecycle::with_audit(audit.clone())),
            signing_secrets: Arc::new(auth::MemorySigningSecrets::default()),
            logs: Arc::new(logs::MemoryLogs::default()),
            read_slots: Arc::new(logs::MemoryReadSlots::default()),
            console_sessions: Arc::new(auth::MemoryConsoleSessions::default()),
            rate_buckets: Arc::new(auth::MemoryRateBuckets::default()),
            sign_in_failures: Arc::new(auth::MemorySignInFailures::default()),
            alerts: alerts.clone(),
            saved_searches: saved,
            audit,
        };
        (stores, alerts)
    }
}
