//! Bearer-key authentication, console sessions acting as a key or a member, and per-caller rate
//! limiting.
//!
//! The [`Auth`] extractor runs before any body extractor of a route, so an unauthenticated
//! request is refused without reading its body. Validated keys and members' contexts are cached
//! for `KEY_CACHE_SECONDS` (default 5 s): disabling or deleting a key, or changing a member's
//! grant, takes effect within that window (and a member's sessions end at once).

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::dev::Payload;
use actix_web::{web, FromRequest, HttpMessage, HttpRequest};
use auth_core::console_session::Subject;
use auth_core::member::MemberStore;
use auth_core::rate::{Quota, RateBucketStore};
use auth_core::{secret, AccountStore, AuthContext, AuthError, MemberId, OrgId};
use futures::future::LocalBoxFuture;

use crate::error::{ApiError, Code};
use crate::rate_limit::{retry_after_secs, SharedLimiter};
use crate::request::KeyId;

type CacheEntry = (Instant, Arc<AuthContext>);

/// Validated keys by secret hash; entries older than the TTL are not used (and are evicted by
/// size like any other).
const KEY_CACHE_ENTRIES: usize = 10_000;

pub struct Authenticator {
    store: Arc<dyn AccountStore>,
    /// Members, where this host has console sessions of members (the API host).
    members: Option<Arc<dyn MemberStore>>,
    cache: quick_cache::sync::Cache<[u8; 32], CacheEntry>,
    member_cache: quick_cache::sync::Cache<(MemberId, OrgId), CacheEntry>,
    ttl: Duration,
    /// The per-key token buckets, shared by every instance (`key:<key id>`).
    limiter: SharedLimiter,
}

impl Authenticator {
    pub fn new(
        store: Arc<dyn AccountStore>,
        buckets: Arc<dyn RateBucketStore>,
        ttl: Duration,
        per_second: u32,
        burst: u32,
    ) -> Self {
        let quota = Quota {
            per_second: f64::from(per_second.max(1)),
            burst: burst.max(1),
        };
        Self {
            store,
            members: None,
            cache: quick_cache::sync::Cache::new(KEY_CACHE_ENTRIES),
            member_cache: quick_cache::sync::Cache::new(KEY_CACHE_ENTRIES),
            ttl,
            limiter: SharedLimiter::new(buckets, quota),
        }
    }

    /// Lets console sessions act as members of `members`.
    pub fn with_members(mut self, members: Arc<dyn MemberStore>) -> Self {
        self.members = Some(members);
        self
    }

    pub fn store(&self) -> &Arc<dyn AccountStore> {
        &self.store
    }

    /// The member's context in `org`, cached like a key's: `MemberGone` once they are no longer
    /// in it.
    pub async fn authenticate_member(
        &self,
        member: &MemberId,
        org: &OrgId,
    ) -> Result<Arc<AuthContext>, ApiError> {
        let now = Instant::now();
        let cache_key = (member.clone(), org.clone());
        if let Some((_, ctx)) = self
            .member_cache
            .get(&cache_key)
            .filter(|(at, _)| now.duration_since(*at) < self.ttl)
        {
            return Ok(ctx);
        }
        let members = self.members.as_ref().ok_or(AuthError::MemberGone)?;
        let found = members
            .member_context(member, org)
            .await?
            .ok_or(AuthError::MemberGone)?;
        let plan = self
            .store
            .get_plan(&found.org.plan)
            .await?
            .ok_or_else(|| ApiError::internal("organization without plan"))?;
        let ctx = Arc::new(AuthContext::for_member(found, plan));
        if !self.ttl.is_zero() {
            self.member_cache.insert(cache_key, (now, Arc::clone(&ctx)));
        }
        Ok(ctx)
    }

    /// Forgets a member's cached contexts at once (their grant changed or they left), on this
    /// instance; others forget within the cache's lifetime, and their sessions end at once.
    pub fn forget_member(&self, member: &MemberId, org: &OrgId) {
        self.member_cache.remove(&(member.clone(), org.clone()));
    }

    /// Resolves a presented secret to its context, or the reason it is refused.
    pub async fn authenticate_secret(&self, presented: &str) -> Result<Arc<AuthContext>, ApiError> {
        if secret::recognize(presented).is_none() {
            return Err(AuthError::Unknown.into());
        }
        self.authenticate_hash(&secret::hash(presented)).await
    }

    /// Resolves a key by its stored hash (a console session holds only that), with the same
    /// cache and the same usability check as a presented secret.
    pub async fn authenticate_hash(&self, hash: &[u8; 32]) -> Result<Arc<AuthContext>, ApiError> {
        let hash = *hash;
        let now = Instant::now();
        let cached = self
            .cache
            .get(&hash)
            .filter(|(at, _)| now.duration_since(*at) < self.ttl)
            .map(|(_, ctx)| ctx);
        let ctx = match cached {
            Some(ctx) => ctx,
            None => {
                let ctx = self
                    .store
                    .find_auth_context(&hash)
                    .await?
                    .ok_or(AuthError::Unknown)?;
                let ctx = Arc::new(ctx);
                if !self.ttl.is_zero() {
                    self.cache.insert(hash, (now, Arc::clone(&ctx)));
                }
                self.touch_later(&ctx.key.id);
                ctx
            }
        };
        ctx.key.check_usable(chrono::Utc::now())?;
        Ok(ctx)
    }

    /// Records last use without delaying the request.
    fn touch_later(&self, key_id: &auth_core::KeyId) {
        let store = Arc::clone(&self.store);
        let id = key_id.clone();
        tokio::spawn(async move {
            if let Err(e) = store.touch_key(&id, chrono::Utc::now()).await {
                tracing::debug!(error = %e, key_id = %id, "recording key use failed");
            }
        });
    }

    /// Token-bucket check for one key, across instances; `Err` carries `Retry-After`.
    pub async fn rate_limit(&self, key_id: &str) -> Result<(), ApiError> {
        self.limiter
            .check(&format!("key:{key_id}"))
            .await
            .map_err(|wait| {
                ApiError::new(
                    Code::RateLimited,
                    "rate limit exceeded for this API key; retry after the Retry-After delay",
                )
                .with_retry_after(retry_after_secs(wait))
            })
    }

    /// Full check for a request: bearer header, key, usability, rate limit.
    pub async fn authenticate_request(
        &self,
        req: &HttpRequest,
    ) -> Result<Arc<AuthContext>, ApiError> {
        let session = req.extensions().get::<ActingAs>().cloned();
        let ctx = match session {
            Some(ActingAs(Subject::Key { key_hash, .. })) => {
                self.authenticate_hash(&key_hash).await?
            }
            Some(ActingAs(Subject::Member { member_id, org_id })) => {
                self.authenticate_member(&member_id, &org_id).await?
            }
            None => {
                let fields: Vec<&[u8]> = req
                    .headers()
                    .get_all(actix_web::http::header::AUTHORIZATION)
                    .map(|v| v.as_bytes())
                    .collect();
                let presented = auth_core::key::parse_bearer_fields(&fields)?;
                self.authenticate_secret(presented).await?
            }
        };
        req.extensions_mut().insert(KeyId(ctx.key.id.to_string()));
        self.rate_limit(&ctx.key.id).await?;
        Ok(ctx)
    }
}

/// Set by the console's session middleware (never from anything a client sends): the request
/// acts as the session's key or member instead of reading `Authorization`.
#[derive(Debug, Clone)]
pub struct ActingAs(pub Subject);

/// Extractor: the authenticated caller. List it before any body extractor.
pub struct Auth(pub Arc<AuthContext>);

impl std::ops::Deref for Auth {
    type Target = AuthContext;
    fn deref(&self) -> &AuthContext {
        &self.0
    }
}

impl FromRequest for Auth {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            let auth = req
                .app_data::<web::Data<Authenticator>>()
                .cloned()
                .ok_or_else(|| ApiError::internal("authenticator not configured"))?;
            auth.authenticate_request(&req).await.map(Auth)
        })
    }
}
