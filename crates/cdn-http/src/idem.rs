//! Idempotency-Key handling for the upload and delete routes.
//!
//! `begin` claims the key before any work. A retry of a completed request gets the stored
//! response back (same status and body, original `requestId`, `Idempotent-Replayed: true`) once
//! its fingerprint matches; a different request under the same key, or any request while the
//! first is still running, gets 409 `CONFLICT`. Failed requests release the key.

use actix_web::http::StatusCode;
use actix_web::{HttpMessage, HttpRequest, HttpResponse};
use cdn_core::idempotency::{validate_key, Claim, IdemScope};
use chrono::Utc;
use serde_json::Value;
use stow_http::request::ReplayedRequestId;
use stow_http::{ApiError, Code};

use crate::state::CdnState;

pub const HEADER: &str = "Idempotency-Key";

/// A claimed key (or none when the request carried no `Idempotency-Key`).
pub struct Ticket {
    scope: Option<IdemScope>,
    prior: Option<(Vec<u8>, u16, Value)>,
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
        if let Some(id) = body.get("requestId").and_then(Value::as_str) {
            req.extensions_mut()
                .insert(ReplayedRequestId(id.to_owned()));
        }
        Ok(
            HttpResponse::build(StatusCode::from_u16(*status).unwrap_or(StatusCode::OK))
                .insert_header(("Idempotent-Replayed", "true"))
                .insert_header(("Cache-Control", "no-store"))
                .json(body),
        )
    }

    /// Records the successful answer, or releases the key after a failure.
    pub async fn finish(
        self,
        state: &CdnState,
        fingerprint: &[u8],
        outcome: Result<(StatusCode, Value), ApiError>,
    ) -> Result<HttpResponse, ApiError> {
        match (self.scope, outcome) {
            (None, Ok((status, body))) => Ok(HttpResponse::build(status).json(body)),
            (None, Err(e)) => Err(e),
            (Some(scope), Ok((status, body))) => {
                if let Err(e) = state
                    .idempotency
                    .complete(&scope, fingerprint, status.as_u16(), &body)
                    .await
                {
                    // the work is done and durable; a lost record only means a retry re-runs
                    tracing::warn!(error = %e, "storing idempotent response failed");
                }
                Ok(HttpResponse::build(status).json(body))
            }
            (Some(scope), Err(err)) => {
                if let Err(e) = state.idempotency.release(&scope).await {
                    tracing::warn!(error = %e, "releasing idempotency key failed");
                }
                Err(err)
            }
        }
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
    state: &CdnState,
    req: &HttpRequest,
    credential: &str,
    route: &str,
) -> Result<Ticket, ApiError> {
    let Some(raw) = req.headers().get(HEADER) else {
        return Ok(Ticket {
            scope: None,
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
    match state.idempotency.claim(&scope, Utc::now()).await? {
        Claim::Claimed => Ok(Ticket {
            scope: Some(scope),
            prior: None,
        }),
        Claim::InFlight => Err(ApiError::new(
            Code::Conflict,
            "a request with this Idempotency-Key is still in progress; retry after it completes",
        )),
        Claim::Done {
            fingerprint,
            status,
            response,
        } => Ok(Ticket {
            scope: None,
            prior: Some((fingerprint, status, response)),
        }),
    }
}
