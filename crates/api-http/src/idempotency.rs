//! Idempotency-Key handling for the upload and delete routes.
//!
//! `begin` claims the key before any work. A retry of a completed request gets the stored
//! response back (same status and body bytes, original `requestId`, `Idempotent-Replayed: true`)
//! once its fingerprint matches; a different request under the same key, or any request while the
//! first is still running, gets 409 `CONFLICT`. Failed requests release the key.
//!
//! A claim is held by a [`Lease`] that renews it every second while the request runs (see
//! `cdn_core::idempotency`): when the process dies, renewals stop and a retry takes the key over
//! within [`LEASE_SECS`] seconds; when the request is cancelled (the client went away), dropping
//! the lease releases the key at once.

use std::sync::Arc;
use std::time::Duration;

use actix_web::http::header::ContentType;
use actix_web::http::StatusCode;
use actix_web::{HttpMessage, HttpRequest, HttpResponse};
use cdn_core::idempotency::{
    validate_key, Claim, IdemScope, IdempotencyStore, LEASE_SECS, RENEW_EVERY_SECS,
};
use chrono::Utc;
use serde_json::Value;
use stow_http::request::ReplayedRequestId;
use stow_http::{ApiError, Code};

use crate::state::ApiState;

pub const HEADER: &str = "Idempotency-Key";

/// A claimed key (or none when the request carried no `Idempotency-Key`).
pub struct Ticket {
    lease: Option<Lease>,
    prior: Option<(Vec<u8>, u16, Vec<u8>)>,
}

/// This request's claim on a key, renewed in the background until it is settled or dropped.
struct Lease {
    repo: Arc<dyn IdempotencyStore>,
    scope: IdemScope,
    owner: String,
    renewer: tokio::task::JoinHandle<()>,
    settled: bool,
}

impl Lease {
    fn start(repo: Arc<dyn IdempotencyStore>, scope: IdemScope, owner: String) -> Self {
        let renewer = tokio::spawn({
            let (repo, scope, owner) = (Arc::clone(&repo), scope.clone(), owner.clone());
            async move {
                let mut tick = tokio::time::interval(Duration::from_secs(RENEW_EVERY_SECS));
                tick.tick().await; // the first tick is immediate; the claim is fresh
                loop {
                    tick.tick().await;
                    match repo.renew(&scope, &owner, Utc::now()).await {
                        Ok(true) => {}
                        Ok(false) => {
                            tracing::warn!(key = %scope.key, "idempotency claim was taken over while its request ran");
                            return;
                        }
                        // the next renewal may get through; the lease has a few seconds left
                        Err(e) => {
                            tracing::warn!(error = %e, "renewing an idempotency claim failed")
                        }
                    }
                }
            }
        });
        Self {
            repo,
            scope,
            owner,
            renewer,
            settled: false,
        }
    }

    async fn complete(mut self, fingerprint: &[u8], status: StatusCode, body: &[u8]) {
        self.renewer.abort();
        self.settled = true;
        if let Err(e) = self
            .repo
            .complete(&self.scope, &self.owner, fingerprint, status.as_u16(), body)
            .await
        {
            // the work is done and durable; a lost record only means a retry re-runs
            tracing::warn!(error = %e, "storing idempotent response failed");
        }
    }

    async fn release(mut self) {
        self.renewer.abort();
        self.settled = true;
        if let Err(e) = self.repo.release(&self.scope, &self.owner).await {
            tracing::warn!(error = %e, "releasing idempotency key failed; its lease runs out");
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.renewer.abort();
        if self.settled {
            return;
        }
        // cancelled mid-request: nothing was acknowledged, so the key is free again (without a
        // runtime, e.g. while one shuts down, the lease simply runs out)
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (repo, scope, owner) = (
            Arc::clone(&self.repo),
            self.scope.clone(),
            self.owner.clone(),
        );
        runtime.spawn(async move {
            if let Err(e) = repo.release(&scope, &owner).await {
                tracing::warn!(error = %e, "releasing a cancelled request's idempotency key failed; its lease runs out");
            }
        });
    }
}

impl Ticket {
    /// Whether this request is a retry of a completed one (answer with [`Ticket::replay`]).
    pub fn is_retry(&self) -> bool {
        self.prior.is_some()
    }

    /// The stored answer if `fingerprint` matches the original request, else 409.
    pub fn replay(&self, req: &HttpRequest, fingerprint: &[u8]) -> Result<HttpResponse, ApiError> {
        let Some((fp, status, body)) = &self.prior else {
            return Err(ApiError::internal("replay without a prior response"));
        };
        if fp.as_slice() != fingerprint {
            return Err(conflict_different());
        }
        let original_id = serde_json::from_slice::<Value>(body).ok().and_then(|v| {
            v.get("requestId")
                .and_then(Value::as_str)
                .map(str::to_owned)
        });
        if let Some(id) = original_id {
            req.extensions_mut().insert(ReplayedRequestId(id));
        }
        Ok(
            HttpResponse::build(StatusCode::from_u16(*status).unwrap_or(StatusCode::OK))
                .insert_header(("Idempotent-Replayed", "true"))
                .insert_header(("Cache-Control", "no-store"))
                .content_type(ContentType::json())
                .body(body.clone()),
        )
    }

    /// Records the successful answer, or releases the key after a failure.
    pub async fn finish(
        self,
        fingerprint: &[u8],
        outcome: Result<(StatusCode, Value), ApiError>,
    ) -> Result<HttpResponse, ApiError> {
        let (status, body) = match outcome {
            Ok(answer) => answer,
            Err(err) => {
                if let Some(lease) = self.lease {
                    lease.release().await;
                }
                return Err(err);
            }
        };
        let bytes = serde_json::to_vec(&body).map_err(ApiError::internal)?;
        if let Some(lease) = self.lease {
            lease.complete(fingerprint, status, &bytes).await;
        }
        Ok(HttpResponse::build(status)
            .content_type(ContentType::json())
            .body(bytes))
    }
}

fn conflict_different() -> ApiError {
    ApiError::new(
        Code::Conflict,
        "Idempotency-Key was already used with a different request; use a new key",
    )
}

/// Claims the request's `Idempotency-Key` (if any) in `credential`'s scope.
pub async fn begin(
    state: &ApiState,
    req: &HttpRequest,
    credential: &str,
    route: &str,
) -> Result<Ticket, ApiError> {
    let Some(raw) = req.headers().get(HEADER) else {
        return Ok(Ticket {
            lease: None,
            prior: None,
        });
    };
    let key = validate_key(raw.as_bytes()).map_err(ApiError::invalid_request)?;
    let scope = IdemScope {
        scope: credential.to_owned(),
        method: req.method().as_str().to_owned(),
        route: route.to_owned(),
        key,
    };
    let owner = ulid::Ulid::new().to_string();
    match state.stores.idempotency.claim(&scope, &owner, Utc::now()).await? {
        Claim::Claimed => Ok(Ticket {
            lease: Some(Lease::start(Arc::clone(&state.stores.idempotency), scope, owner)),
            prior: None,
        }),
        Claim::InFlight => Err(ApiError::new(
            Code::Conflict,
            format!("a request with this Idempotency-Key is still in progress; retry after it completes (a request whose server stopped frees its key within {LEASE_SECS} s)"),
        )),
        Claim::Done {
            fingerprint,
            status,
            response,
        } => Ok(Ticket {
            lease: None,
            prior: Some((fingerprint, status, response)),
        }),
    }
}
