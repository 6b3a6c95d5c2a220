//! Shared state of the API host.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use auth_core::{AccountStore, AuthContext, Org};
use cdn_core::idempotency::IdempotencyRepo;
use cdn_core::store::{ObjectRecord, ObjectRepo};
use cdn_core::upload_url::{RefusedAttempts, UploadUrlRepo};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use stow_db::Db;
use stow_http::Config;
use stow_objects::Objects;

/// Characters left as they are in `publicUrl` path segments (RFC 3986 unreserved).
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Objects up to this size are kept in memory for delivery (keyed by their immutable location).
pub const SMALL_OBJECT_BYTES: u64 = 256 * 1024;
/// How long a key → row lookup is reused for delivery. A replaced or deleted object may be served
/// by another instance for up to this long (this instance forgets it at once).
pub const DELIVERY_ROW_TTL: Duration = Duration::from_secs(1);

/// Weighs cached byte buffers by their length.
#[derive(Clone)]
pub struct ByteWeighter;

impl quick_cache::Weighter<String, bytes::Bytes> for ByteWeighter {
    fn weight(&self, _key: &String, val: &bytes::Bytes) -> u64 {
        val.len().max(1) as u64
    }
}

type RefusedCache = quick_cache::sync::Cache<[u8; 32], RefusedAttempts>;
type RowCache = quick_cache::sync::Cache<(String, String), (Instant, Option<ObjectRecord>)>;
type BytesCache = quick_cache::sync::Cache<String, bytes::Bytes, ByteWeighter>;

pub struct CdnState {
    pub config: Arc<Config>,
    pub db: Db,
    pub objects: Objects,
    pub accounts: Arc<dyn AccountStore>,
    pub repo: Arc<dyn ObjectRepo>,
    pub idempotency: Arc<dyn IdempotencyRepo>,
    pub upload_urls: Arc<dyn UploadUrlRepo>,
    pub logs: Arc<dyn logs_core::LogStore>,
    searches: Mutex<HashMap<String, Arc<tokio::sync::Semaphore>>>,
    rows: RowCache,
    /// Bytes of small objects by storage location (locations are never rewritten).
    pub small_objects: BytesCache,
    slugs: Mutex<HashMap<String, (Instant, Option<Org>)>>,
    /// Refused uploads per upload-URL token hash, on this instance.
    refused: RefusedCache,
}

const SLUG_CACHE_TTL: Duration = Duration::from_secs(30);

impl CdnState {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        config: Arc<Config>,
        db: Db,
        objects: Objects,
        accounts: Arc<dyn AccountStore>,
        repo: Arc<dyn ObjectRepo>,
        idempotency: Arc<dyn IdempotencyRepo>,
        upload_urls: Arc<dyn UploadUrlRepo>,
        logs: Arc<dyn logs_core::LogStore>,
    ) -> Self {
        Self {
            config,
            db,
            objects,
            accounts,
            repo,
            idempotency,
            upload_urls,
            logs,
            searches: Mutex::new(HashMap::new()),
            rows: RowCache::new(100_000),
            small_objects: BytesCache::with_weighter(4096, 64 * 1024 * 1024, ByteWeighter),
            slugs: Mutex::new(HashMap::new()),
            refused: RefusedCache::new(100_000),
        }
    }

    /// `PUBLIC_BASE_URL/<workspace>/<key>`, each key segment percent-encoded.
    pub fn public_url(&self, slug: &str, key: &str) -> String {
        let mut url = format!(
            "{}/{}",
            self.config.public_base_url,
            utf8_percent_encode(slug, SEGMENT)
        );
        for seg in key.split('/') {
            url.push('/');
            url.extend(utf8_percent_encode(seg, SEGMENT));
        }
        url
    }

    /// The organization behind a workspace slug (cached briefly; slugs never change).
    pub async fn org_by_slug(&self, slug: &str) -> Result<Option<Org>, auth_core::StoreError> {
        let now = Instant::now();
        if let Some((at, org)) = self
            .slugs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(slug)
        {
            if now.duration_since(*at) < SLUG_CACHE_TTL {
                return Ok(org.clone());
            }
        }
        let org = self.accounts.find_org_by_slug(slug).await?;
        let mut cache = self.slugs.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() > 10_000 {
            cache.clear();
        }
        cache.insert(slug.to_owned(), (now, org.clone()));
        Ok(org)
    }

    /// A slot of the organization's concurrent-search limit (per instance), or `None` when all
    /// are taken.
    pub fn try_search_slot(
        &self,
        org_id: &str,
        limit: i32,
    ) -> Option<tokio::sync::OwnedSemaphorePermit> {
        let sem =
            {
                let mut map = self.searches.lock().unwrap_or_else(|e| e.into_inner());
                Arc::clone(map.entry(org_id.to_owned()).or_insert_with(|| {
                    Arc::new(tokio::sync::Semaphore::new(limit.max(1) as usize))
                }))
            };
        sem.try_acquire_owned().ok()
    }

    /// The row behind a public key, reused for [`DELIVERY_ROW_TTL`].
    pub async fn delivery_row(
        &self,
        org_id: &str,
        key: &str,
    ) -> Result<Option<ObjectRecord>, auth_core::StoreError> {
        let cache_key = (org_id.to_owned(), key.to_owned());
        if let Some((at, row)) = self.rows.get(&cache_key) {
            if at.elapsed() < DELIVERY_ROW_TTL {
                return Ok(row);
            }
        }
        let row = self.repo.get(org_id, key).await?;
        self.rows.insert(cache_key, (Instant::now(), row.clone()));
        Ok(row)
    }

    /// Forgets a key's cached row after this instance changed it.
    pub fn forget_row(&self, org_id: &str, key: &str) {
        self.rows.remove(&(org_id.to_owned(), key.to_owned()));
    }

    /// Seconds until the upload URL behind `token_hash` takes attempts again, when too many were
    /// refused lately (see [`RefusedAttempts`]).
    pub fn upload_url_blocked_for(&self, token_hash: &[u8; 32]) -> Option<u64> {
        self.refused.get(token_hash)?.blocked_for(Instant::now())
    }

    /// Counts a refused upload through the URL behind `token_hash`.
    pub fn upload_url_refused(&self, token_hash: &[u8; 32]) {
        let previous = self.refused.get(token_hash);
        self.refused.insert(
            *token_hash,
            RefusedAttempts::record(previous, Instant::now()),
        );
    }

    /// The largest file this caller may upload.
    pub fn max_file_size(&self, ctx: &AuthContext) -> u64 {
        ctx.plan.max_file_size.max(1) as u64
    }
}
