//! Shared state of the API host.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use auth_core::signing::SigningKeys;
use auth_core::{AuthContext, Org, OrgId};
use cdn_core::metadata::Metadata;
use cdn_core::placeholder::PlaceholderSet;
use cdn_core::store::ObjectRecord;
use cdn_core::upload_url::RefusedAttempts;
use cdn_core::ObjectKey;
use chrono::{SubsecRound, Utc};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use stow_db::Db;
use stow_http::{ApiError, Code, Config};
use stow_objects::Objects;

use crate::form::{StageGuard, StagedFile};
use crate::pipeline::{Existing, ListedObject, Placement, UploadedObject};

mod objects;

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

/// Returns once every instance's delivery-row cache has turned over since `started`: no instance
/// then serves a row it read before that moment (purge and move answer after this).
pub async fn outlast_row_caches(started: Instant) {
    tokio::time::sleep_until((started + DELIVERY_ROW_TTL).into()).await;
}

/// How long delivery keeps serving a cached row or workspace while the database is unreachable
/// (stale-if-error): a short outage does not take every cached image off every in-game screen.
pub const STALE_IF_ERROR: Duration = Duration::from_secs(600);
/// How long a lookup that has a cached value to fall back on waits for the database before it
/// serves that value (stale-if-error), when the database accepts requests but does not answer.
pub const STALE_LOOKUP_DEADLINE: Duration = Duration::from_millis(500);
/// After a failed lookup, delivery answers from the caches without asking the database for this
/// long, so a cached image is not held up by a connection attempt per request during an outage.
const OUTAGE_BACKOFF: Duration = Duration::from_secs(2);

/// Weighs cached byte buffers by their length.
#[derive(Clone)]
pub struct ByteWeighter;

impl quick_cache::Weighter<String, bytes::Bytes> for ByteWeighter {
    fn weight(&self, _key: &String, val: &bytes::Bytes) -> u64 {
        val.len().max(1) as u64
    }
}

type SlugCache = quick_cache::sync::Cache<String, (Instant, Option<Org>)>;
type RefusedCache = quick_cache::sync::Cache<[u8; 32], RefusedAttempts>;
type RowCache = quick_cache::sync::Cache<(OrgId, ObjectKey), (Instant, Option<ObjectRecord>)>;
type PlaceholderCache = quick_cache::sync::Cache<OrgId, (Instant, Arc<PlaceholderSet>)>;
type BytesCache = quick_cache::sync::Cache<String, bytes::Bytes, ByteWeighter>;

pub struct ApiState {
    pub config: Arc<Config>,
    pub db: Db,
    /// Object bytes by immutable location (a directory or S3).
    pub blobs: Objects,
    /// The stores, one trait object each.
    pub stores: Stores,
    rows: RowCache,
    /// Bytes of small objects by storage location (locations are never rewritten).
    pub small_objects: BytesCache,
    /// Renditions being made at once (`RENDITION_CONCURRENCY` permits).
    pub renditions: tokio::sync::Semaphore,
    /// Megabytes the renditions being made may take together (`RENDITION_MEMORY_MB` permits).
    pub rendition_memory: tokio::sync::Semaphore,
    /// ZIP downloads running at once (`ZIP_DOWNLOADS` permits), held until the archive's end.
    pub zips: Arc<tokio::sync::Semaphore>,
    slugs: SlugCache,
    /// Each organization's placeholders, compiled, for delivery of missing keys.
    placeholder_sets: PlaceholderCache,
    /// Refused uploads per upload-URL token hash, on this instance.
    refused: RefusedCache,
    /// The signing keys last read from the database.
    signing: Mutex<Option<(Instant, SigningKeys)>>,
    /// When delivery last found the database unreachable.
    outage_at: Mutex<Option<Instant>>,
}

/// Where a looked-up value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Freshness {
    /// The cache, within its time to live.
    Cached,
    /// The database, at this moment (cache it).
    Loaded(Instant),
    /// The cache, past its time to live, because the database did not answer (stale-if-error).
    Stale,
}

/// Marks one delivery that served anything stale-if-error, and counts it once
/// (`delivery_stale_if_error_total`) when the delivery is over, however many of its lookups
/// (workspace, row, placeholders, fallback row) were stale.
#[derive(Debug, Default)]
pub struct StaleMark(std::sync::atomic::AtomicBool);

impl StaleMark {
    /// Notes a lookup's freshness; the time to cache a loaded value at.
    fn note(&self, freshness: Freshness) -> Option<Instant> {
        match freshness {
            Freshness::Loaded(at) => Some(at),
            Freshness::Stale => {
                self.0.store(true, std::sync::atomic::Ordering::Relaxed);
                None
            }
            Freshness::Cached => None,
        }
    }

    pub fn is_stale(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Drop for StaleMark {
    fn drop(&mut self) {
        if self.is_stale() {
            metrics::counter!("delivery_stale_if_error_total").increment(1);
        }
    }
}

const SLUG_CACHE_TTL: Duration = Duration::from_secs(30);
/// How long delivery reuses an organization's placeholders: a change made through another
/// instance is served within this (the instance that made it forgets them at once).
pub const PLACEHOLDER_TTL: Duration = Duration::from_secs(10);

/// The storage behind the API host, one trait object per store (the operations' bundle).
pub use stow_ops::Stores;

impl ApiState {
    pub fn new(config: Arc<Config>, db: Db, blobs: Objects, stores: Stores) -> Self {
        let renditions = tokio::sync::Semaphore::new(config.rendition_concurrency);
        let zips = Arc::new(tokio::sync::Semaphore::new(config.zip_concurrency));
        let rendition_memory = tokio::sync::Semaphore::new(config.rendition_memory_mb as usize);
        Self {
            config,
            db,
            blobs,
            stores,
            rows: RowCache::new(100_000),
            small_objects: BytesCache::with_weighter(4096, 64 * 1024 * 1024, ByteWeighter),
            renditions,
            rendition_memory,
            zips,
            slugs: SlugCache::new(10_000),
            placeholder_sets: PlaceholderCache::new(10_000),
            refused: RefusedCache::new(100_000),
            outage_at: Mutex::new(None),
            signing: Mutex::new(None),
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

    /// The organization behind a workspace slug (cached briefly; slugs never change; served
    /// stale while the database is unreachable, see [`STALE_IF_ERROR`]).
    pub async fn org_by_slug(
        &self,
        slug: &str,
        stale: &StaleMark,
    ) -> Result<Option<Org>, auth_core::StoreError> {
        let cached = self.slugs.get(slug);
        let lookup = self.lookup(cached, SLUG_CACHE_TTL, || {
            self.stores.accounts.find_org_by_slug(slug)
        });
        let (org, freshness) = lookup.await?;
        if let Some(at) = stale.note(freshness) {
            self.slugs.insert(slug.to_owned(), (at, org.clone()));
        }
        Ok(org)
    }

    /// Whether a lookup found the database unreachable within [`OUTAGE_BACKOFF`].
    fn in_outage(&self, now: Instant) -> bool {
        self.outage_at
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some_and(|at| now.duration_since(at) < OUTAGE_BACKOFF)
    }

    fn mark_outage(&self, now: Instant) {
        *self.outage_at.lock().unwrap_or_else(|e| e.into_inner()) = Some(now);
    }

    /// A cached value while it is younger than `ttl`; else `load`'s answer (with the time to
    /// cache it at); else, when the database is unreachable or does not answer within
    /// [`STALE_LOOKUP_DEADLINE`], the cached value while it is younger than [`STALE_IF_ERROR`].
    async fn lookup<T, F>(
        &self,
        cached: Option<(Instant, T)>,
        ttl: Duration,
        load: impl FnOnce() -> F,
    ) -> Result<(T, Freshness), auth_core::StoreError>
    where
        F: std::future::Future<Output = Result<T, auth_core::StoreError>>,
    {
        let now = Instant::now();
        if let Some((at, value)) = cached {
            let age = now.duration_since(at);
            if age < ttl {
                return Ok((value, Freshness::Cached));
            }
            if age < STALE_IF_ERROR && self.in_outage(now) {
                return Ok((value, Freshness::Stale));
            }
            // A database that accepts connections but does not answer (frozen, swapping, a
            // lock storm) would hold the request as long as it stays that way: with a value to
            // fall back on, wait only a short while.
            let loaded = match tokio::time::timeout(STALE_LOOKUP_DEADLINE, load()).await {
                Ok(loaded) => loaded,
                Err(_) => Err(auth_core::StoreError::Unavailable(
                    format!("no answer within {STALE_LOOKUP_DEADLINE:?}").into(),
                )),
            };
            return match loaded {
                Ok(fresh) => Ok((fresh, Freshness::Loaded(now))),
                Err(auth_core::StoreError::Unavailable(e)) if age < STALE_IF_ERROR => {
                    tracing::warn!(error = %e, "database unreachable; delivery serves its cached state");
                    self.mark_outage(now);
                    Ok((value, Freshness::Stale))
                }
                Err(e) => Err(e),
            };
        }
        let fresh = load().await;
        if matches!(fresh, Err(auth_core::StoreError::Unavailable(_))) {
            self.mark_outage(now);
        }
        Ok((fresh?, Freshness::Loaded(now)))
    }

    /// The row behind a public key, reused for [`DELIVERY_ROW_TTL`] (and served stale while the
    /// database is unreachable, see [`STALE_IF_ERROR`]).
    pub async fn delivery_row(
        &self,
        org_id: &OrgId,
        key: &ObjectKey,
        stale: &StaleMark,
    ) -> Result<Option<ObjectRecord>, auth_core::StoreError> {
        let cache_key = (org_id.clone(), key.clone());
        let cached = self.rows.get(&cache_key);
        let (row, freshness) = self
            .lookup(cached, DELIVERY_ROW_TTL, || {
                self.stores.records.get(org_id, key)
            })
            .await?;
        if let Some(at) = stale.note(freshness) {
            self.rows.insert(cache_key, (at, row.clone()));
        }
        Ok(row)
    }

    /// The organization's placeholders, compiled, reused for [`PLACEHOLDER_TTL`] (and served
    /// stale while the database is unreachable, see [`STALE_IF_ERROR`]).
    pub async fn placeholder_set(
        &self,
        org_id: &OrgId,
        stale: &StaleMark,
    ) -> Result<Arc<PlaceholderSet>, auth_core::StoreError> {
        let cached = self.placeholder_sets.get(org_id);
        let (set, freshness) = self
            .lookup(cached, PLACEHOLDER_TTL, || async {
                let list = self.stores.placeholders.list(org_id).await?;
                Ok(Arc::new(PlaceholderSet::new(&list)))
            })
            .await?;
        if let Some(at) = stale.note(freshness) {
            self.placeholder_sets
                .insert(org_id.clone(), (at, Arc::clone(&set)));
        }
        Ok(set)
    }

    /// The keys continuation tokens and query cursors are signed and checked with:
    /// `STOWAGE_SIGNING_SECRET` when set, else the database's secrets, reused for
    /// `signing_keys_ttl` (and kept while the database is unreachable, see [`STALE_IF_ERROR`]).
    pub async fn signing_keys(&self) -> Result<SigningKeys, auth_core::StoreError> {
        use secrecy::ExposeSecret;
        if let Some(fixed) = &self.config.signing_secret {
            return Ok(SigningKeys::single(fixed.expose_secret()));
        }
        let cached = self
            .signing
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let (keys, freshness) = self
            .lookup(cached, self.config.signing_keys_ttl, || {
                self.stores.signing_secrets.keys(Utc::now())
            })
            .await?;
        if let Freshness::Loaded(at) = freshness {
            *self.signing.lock().unwrap_or_else(|e| e.into_inner()) = Some((at, keys.clone()));
        }
        Ok(keys)
    }

    /// Forgets the organization's compiled placeholders after this instance changed them.
    pub fn forget_placeholders(&self, org_id: &OrgId) {
        self.placeholder_sets.remove(org_id);
    }

    /// Forgets a key's cached row after this instance changed it.
    pub fn forget_row(&self, org_id: &OrgId, key: &ObjectKey) {
        self.rows.remove(&(org_id.clone(), key.clone()));
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
