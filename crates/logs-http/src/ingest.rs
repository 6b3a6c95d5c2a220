//! `POST /v1/servers/{cfxServerId}/logs` and `POST /v1/logs`.
//!
//! Order of checks: key (401), `logs:write` (403), server resolution and binding (403/404),
//! plan and Logs source (403 `logs_not_enabled`), content type and encoding (415), body size
//! while reading, after decoding gzip or deflate (413), validation (400 with every offending
//! field), a slot among the instance's batches being stored, then the store: a writer commits
//! the batch, alone or with other batches queued at the same time, all or nothing per batch.
//! 202 is sent only after the commit. A concurrent duplicate of a batch still committing gets
//! 503 `batch_in_progress` (never a 4xx, which clients treat as final).

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use auth_core::{AuthContext, Permission, Server};
use chrono::Utc;
use logs_core::event::{BatchError, MAX_BODY_BYTES};
use logs_core::{parse_batch, IngestOutcome, IngestTarget};
use serde::Serialize;
use serde_json::json;
use stow_http::{current_request_id, ApiError, Auth, Code};
use tokio::sync::SemaphorePermit;
use utoipa::ToSchema;

use crate::LogsState;

/// The acceptance record (docs/api.md, section 5).
#[derive(Serialize, ToSchema)]
pub struct Acceptance {
    pub accepted: bool,
    pub batch_id: String,
    pub accepted_events: i32,
    /// RFC 3339 UTC with milliseconds.
    pub ingested_at: String,
    /// True when this batch was accepted before; nothing new was stored.
    pub replayed: bool,
    pub request_id: String,
}

/// Request body (documentation only; validated by `logs-core`).
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct IngestBody {
    /// 8 to 64 characters: letters, digits, `:`, `_`, `-`. Reuse it unchanged on retries.
    batch_id: String,
    /// 1 to 500 events (docs/api.md, section 5).
    events: Vec<EventDoc>,
}

/// A log event (documentation only).
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct EventDoc {
    /// debug, info, warn, error or fatal.
    level: String,
    /// 1 to 2048 characters.
    message: String,
    event_id: Option<String>,
    /// Lowercase; default `log`.
    event_type: Option<String>,
    /// RFC 3339; at most 7 days old and 5 minutes ahead. Default: ingestion time.
    occurred_at: Option<String>,
    player_id: Option<String>,
    target_player_id: Option<String>,
    /// At most 16 entries of kind to string value.
    #[schema(value_type = Option<Object>)]
    player_identifiers: Option<serde_json::Value>,
    #[schema(value_type = Option<Object>)]
    target_player_identifiers: Option<serde_json::Value>,
    resource: Option<String>,
    trace_id: Option<String>,
    environment: Option<String>,
    #[schema(value_type = Option<Object>)]
    data: Option<serde_json::Value>,
}

fn forbidden(msg: impl Into<String>) -> ApiError {
    ApiError::new(Code::Forbidden, msg)
}

fn server_not_found(cfx: &str) -> ApiError {
    ApiError::new(
        Code::ServerNotFound,
        format!("no registered server with join code `{cfx}` in this organization"),
    )
}

/// The server a request writes to, after access checks.
async fn resolve(
    state: &LogsState,
    ctx: &AuthContext,
    named: Option<&str>,
) -> Result<Server, ApiError> {
    use auth_core::log_access::{self, Denied};
    ctx.require(Permission::LogsWrite)?;
    log_access::resolve(state.accounts.as_ref(), ctx, named).await.map_err(|d| match d {
        Denied::NoServerNamed => forbidden(
            "POST /v1/logs needs a server-bound key; a global key must use POST /v1/servers/{cfxServerId}/logs",
        ),
        Denied::OtherServer => forbidden("this key is bound to another server"),
        Denied::OutOfScope(code) => forbidden(format!(
            "this key may write the logs of named servers only, and `{code}` is not one of them"
        )),
        Denied::UnknownServer(code) | Denied::BoundServerGone(code) => server_not_found(&code),
        Denied::PlanWithoutLogs => ApiError::new(Code::LogsNotEnabled, "the organization's plan does not include Logs"),
        Denied::SourceInactive => ApiError::new(Code::LogsNotEnabled, "the Logs source of this server is not active"),
        Denied::Store(e) => e.into(),
    })
}

fn check_content_type(req: &HttpRequest) -> Result<(), ApiError> {
    let ok = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"));
    if ok {
        Ok(())
    } else {
        Err(ApiError::new(
            Code::UnsupportedMediaType,
            "Content-Type must be application/json",
        ))
    }
}

fn count_batch(outcome: &'static str) {
    metrics::counter!("logs_batches_total", "outcome" => outcome).increment(1);
}

/// Waits (bounded) for this instance's first partition maintenance: a batch stored before the
/// day's partition exists would land in the default partition.
async fn partitions_ready(state: &LogsState) -> Result<(), ApiError> {
    let mut ready = state.partitions_ready.clone();
    if *ready.borrow() {
        return Ok(());
    }
    let waited = tokio::time::timeout(crate::PARTITIONS_WAIT, ready.wait_for(|r| *r))
        .await
        .is_ok_and(|r| r.is_ok());
    if waited {
        Ok(())
    } else {
        Err(ApiError::unavailable())
    }
}

/// Waits for one of this instance's ingestion slots (`LOGS_INGEST_CONCURRENCY`), at most the
/// pool's acquire timeout (then 503 `unavailable`, like a pool that has no connection).
///
/// A slot covers a batch from the moment it is queued for the store's writers until its
/// transaction has committed: it bounds the parsed batches held in memory. The writers
/// (`LOGS_INGEST_WRITERS`) bound the transactions: every batch writes the same newest index
/// pages and hourly-count rows, so on a database with few cores many concurrent transactions
/// cost Postgres more CPU per event without adding throughput, and a writer stores every batch
/// waiting for it in one transaction (docs/benchmarks.md, analysis of ingestion). Batches
/// waiting for a slot are counted in the `logs_ingest_waiting` gauge.
pub(crate) async fn ingest_slot(state: &LogsState) -> Result<SemaphorePermit<'_>, ApiError> {
    struct Waiting(metrics::Gauge);
    impl Drop for Waiting {
        fn drop(&mut self) {
            self.0.decrement(1.0);
        }
    }
    let waiting = Waiting(metrics::gauge!("logs_ingest_waiting"));
    waiting.0.increment(1.0);
    let slot = tokio::time::timeout(
        state.config.db_acquire_timeout,
        state.ingest_slots.acquire(),
    )
    .await;
    drop(waiting);
    match slot {
        Ok(Ok(permit)) => Ok(permit),
        // a timeout, or a closed semaphore (never closed)
        _ => Err(ApiError::unavailable()),
    }
}

async fn ingest(
    state: &LogsState,
    ctx: &AuthContext,
    named: Option<&str>,
    req: &HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let server = resolve(state, ctx, named).await?;
    check_content_type(req)?;
    let body = stow_http::body::read_limited(req, payload, MAX_BODY_BYTES).await?;
    partitions_ready(state).await?;
    let now = Utc::now();
    let batch = parse_batch(&body, now).inspect_err(|_| count_batch("rejected"));
    let batch = batch.map_err(|e| match e {
        BatchError::Malformed(m) => ApiError::invalid_request(m),
        BatchError::Invalid { details, truncated } => {
            let mut msg = format!(
                "batch rejected: {} problem(s) found; no event was accepted",
                details.len()
            );
            if truncated {
                msg.push_str(&format!(" (only the first {} are listed)", details.len()));
            }
            ApiError::invalid_request(msg).with_details(json!(details))
        }
    })?;
    let target = IngestTarget {
        org_id: ctx.org.id.clone(),
        server_id: server.id.clone(),
        cfx_id: server.cfx_id.clone(),
    };
    let batch_id = batch.batch_id.clone();
    let slot = ingest_slot(state).await?;
    let outcome = state.store.ingest(&target, batch, now).await;
    drop(slot);
    let (accepted_events, ingested_at, replayed) = match outcome? {
        IngestOutcome::Accepted {
            accepted_events,
            ingested_at,
        } => {
            count_batch("accepted");
            metrics::counter!("logs_events_accepted_total").increment(accepted_events as u64);
            (accepted_events, ingested_at, false)
        }
        IngestOutcome::Replayed {
            accepted_events,
            ingested_at,
        } => {
            count_batch("replayed");
            (accepted_events, ingested_at, true)
        }
        IngestOutcome::Conflict => {
            count_batch("conflict");
            return Err(ApiError::new(
                Code::BatchIdConflict,
                format!("batch_id `{}` was already used with a different payload; use a new batch_id for new events", batch_id),
            ));
        }
        IngestOutcome::InProgress => {
            count_batch("in_progress");
            return Err(ApiError::new(
                Code::BatchInProgress,
                "this batch_id is still being processed by another request; retry with the same batch",
            )
            .with_retry_after(1));
        }
    };
    tracing::debug!(batch_id = %batch_id, events = accepted_events, replayed, "batch ingested");
    Ok(HttpResponse::Accepted().json(Acceptance {
        accepted: true,
        batch_id,
        accepted_events,
        ingested_at: ingested_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        replayed,
        request_id: current_request_id(),
    }))
}

/// Ingest a batch for the named server (global and server-bound keys).
#[utoipa::path(
    post, path = "/v1/servers/{cfxServerId}/logs", tag = "ingestion", security(("bearer" = [])),
    params(("cfxServerId" = String, Path, description = "Server join code (case-insensitive)")),
    request_body(content = IngestBody, content_type = "application/json", description = "The batch as JSON, at most 1 MiB; may be sent with `Content-Encoding: gzip` or `deflate` (the limit then counts the decompressed JSON)"),
    responses(
        (status = 202, description = "Committed (or replayed)", body = Acceptance),
        (status = 400, description = "invalid_request, with details", body = stow_http::error::IngestErrorBody),
        (status = 401, description = "unauthorized", body = stow_http::error::IngestErrorBody),
        (status = 403, description = "forbidden or logs_not_enabled", body = stow_http::error::IngestErrorBody),
        (status = 404, description = "server_not_found", body = stow_http::error::IngestErrorBody),
        (status = 409, description = "batch_id_conflict", body = stow_http::error::IngestErrorBody),
        (status = 413, description = "payload_too_large", body = stow_http::error::IngestErrorBody),
        (status = 408, description = "request_timeout (the body stopped arriving; retry the same batch)", body = stow_http::error::IngestErrorBody),
        (status = 415, description = "unsupported_media_type: not application/json, or a Content-Encoding other than identity, gzip or deflate", body = stow_http::error::IngestErrorBody),
        (status = 429, description = "rate_limited (Retry-After)", body = stow_http::error::IngestErrorBody),
        (status = 503, description = "unavailable or batch_in_progress (Retry-After)", body = stow_http::error::IngestErrorBody),
    )
)]
pub async fn ingest_explicit(
    auth: Auth,
    cfx_server_id: web::Path<String>,
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<LogsState>,
) -> Result<HttpResponse, ApiError> {
    ingest(&state, &auth, Some(cfx_server_id.as_str()), &req, payload).await
}

/// Ingest a batch for the key's own server (server-bound keys only).
#[utoipa::path(
    post, path = "/v1/logs", tag = "ingestion", security(("bearer" = [])),
    request_body(content = IngestBody, content_type = "application/json", description = "The batch as JSON, at most 1 MiB; may be sent with `Content-Encoding: gzip` or `deflate` (the limit then counts the decompressed JSON)"),
    responses(
        (status = 202, description = "Committed (or replayed)", body = Acceptance),
        (status = 400, description = "invalid_request, with details", body = stow_http::error::IngestErrorBody),
        (status = 401, description = "unauthorized", body = stow_http::error::IngestErrorBody),
        (status = 403, description = "forbidden (global key) or logs_not_enabled", body = stow_http::error::IngestErrorBody),
        (status = 409, description = "batch_id_conflict", body = stow_http::error::IngestErrorBody),
        (status = 413, description = "payload_too_large", body = stow_http::error::IngestErrorBody),
        (status = 408, description = "request_timeout (the body stopped arriving; retry the same batch)", body = stow_http::error::IngestErrorBody),
        (status = 415, description = "unsupported_media_type: not application/json, or a Content-Encoding other than identity, gzip or deflate", body = stow_http::error::IngestErrorBody),
        (status = 503, description = "unavailable or batch_in_progress (Retry-After)", body = stow_http::error::IngestErrorBody),
    )
)]
pub async fn ingest_bound(
    auth: Auth,
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<LogsState>,
) -> Result<HttpResponse, ApiError> {
    ingest(&state, &auth, None, &req, payload).await
}
