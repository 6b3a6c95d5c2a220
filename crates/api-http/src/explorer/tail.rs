//! `GET /v1/logs/tail`: new events of a server as Server-Sent Events, from any ingestion
//! instance, resumable with `Last-Event-ID`.
//!
//! The stream polls the store (`LOGS_TAIL_POLL_MS`) for batches that became visible after its
//! position, so every API instance sees what every ingestion instance committed; nothing lives
//! in one process's memory. Each event's SSE id is its position: a reconnect with
//! `Last-Event-ID` resumes after it, without loss or duplicates, for
//! [`RESUME_MINUTES`](logs_core::tail::RESUME_MINUTES). Open tails are leased per organization
//! (`LOGS_TAIL_LIMIT`, across instances); the stream checks its key and renews its lease as it
//! goes, and ends with an `end` event when either is gone.

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::{web, HttpRequest, HttpResponse};
use bytes::Bytes;
use chrono::Utc;
use logs_core::search::validate_filters;
use logs_core::store::{Filters, LogStore, TailPosition, TailQuery};
use logs_core::tail::{TailParams, RESUME_MINUTES};
use logs_core::LeaseKind;
use std::sync::atomic::{AtomicBool, Ordering};
use stow_http::{ApiError, Auth, Code};

use super::slots::{watched, SlotLease};
use super::{target_server, EventOut};
use crate::state::ApiState;

/// Batches read per poll.
const BATCHES_PER_POLL: usize = 100;

/// One SSE frame.
fn frame(event: &str, id: Option<&str>, data: &str) -> String {
    let mut f = String::with_capacity(data.len() + 32);
    if let Some(id) = id {
        f.push_str("id: ");
        f.push_str(id);
        f.push('\n');
    }
    f.push_str("event: ");
    f.push_str(event);
    f.push_str("\ndata: ");
    // JSON text holds no raw newline, so one data line is the whole payload
    f.push_str(data);
    f.push_str("\n\n");
    f
}

fn end_frame(reason: &str) -> Bytes {
    Bytes::from(frame(
        "end",
        None,
        &serde_json::json!({ "reason": reason }).to_string(),
    ))
}

/// Who opened the tail, checked again every few polls.
enum Reader {
    Key {
        accounts: Arc<dyn auth_core::AccountStore>,
        id: auth_core::KeyId,
    },
    Member {
        members: Arc<dyn auth_core::member::MemberStore>,
        id: auth_core::MemberId,
        org: auth_core::OrgId,
        server: auth_core::ServerId,
    },
}

impl Reader {
    fn of(state: &ApiState, auth: &stow_http::Auth, server: &auth_core::ServerId) -> Self {
        match &auth.member {
            Some(m) => Reader::Member {
                members: Arc::clone(&state.stores.members),
                id: m.id.clone(),
                org: auth.org.id.clone(),
                server: server.clone(),
            },
            None => Reader::Key {
                accounts: Arc::clone(&state.stores.accounts),
                id: auth.key.id.clone(),
            },
        }
    }

    /// Why the reader may no longer read, if so (`None` too when the database is away: the
    /// stream stays and is checked again later).
    async fn revoked(&self) -> Option<&'static str> {
        match self {
            Reader::Key { accounts, id } => match accounts.get_key(id).await {
                Ok(Some(k)) if k.check_usable(Utc::now()).is_ok() => None,
                Ok(_) => Some("key_disabled"),
                Err(_) => None,
            },
            Reader::Member {
                members,
                id,
                org,
                server,
            } => match members.member_context(id, org).await {
                Ok(Some(m))
                    if m.membership
                        .grant
                        .permissions()
                        .contains(auth_core::Permission::LogsRead)
                        && m.membership.grant.servers.includes(server) =>
                {
                    None
                }
                Ok(_) => Some("access_revoked"),
                Err(_) => None,
            },
        }
    }
}

struct Tail {
    logs: Arc<dyn LogStore>,
    reader: Reader,
    query: TailQuery,
    poll: Duration,
    heartbeat: Duration,
    /// Frames to send before polling again.
    pending: Option<Bytes>,
    last_sent: Instant,
    last_key_check: Instant,
    polls: u64,
    ended: bool,
    /// Set when the tail's lease is gone (expired and taken back, or given up by the watchdog).
    lease_lost: Arc<AtomicBool>,
}

impl Tail {
    /// Why the stream must end now, if it must.
    async fn gone(&mut self) -> Option<&'static str> {
        if self.last_key_check.elapsed() >= self.poll * 8 {
            self.last_key_check = Instant::now();
            if let Some(reason) = self.reader.revoked().await {
                return Some(reason);
            }
        }
        if self.lease_lost.load(Ordering::Relaxed) {
            return Some("lease_expired");
        }
        None
    }

    async fn next(mut self) -> Option<(Result<Bytes, std::io::Error>, Self)> {
        if let Some(b) = self.pending.take() {
            self.last_sent = Instant::now();
            return Some((Ok(b), self));
        }
        if self.ended {
            return None;
        }
        loop {
            if self.polls > 0 {
                tokio::time::sleep(self.poll).await;
            }
            self.polls += 1;
            if let Some(reason) = self.gone().await {
                self.ended = true;
                return Some((Ok(end_frame(reason)), self));
            }
            match self.logs.tail(&self.query).await {
                Ok(page) => {
                    self.query.after = page.next;
                    if !page.events.is_empty() {
                        let mut out = String::new();
                        for (pos, row) in page.events {
                            let data =
                                serde_json::to_string(&EventOut::from(row)).unwrap_or_default();
                            out.push_str(&frame("log", Some(&pos.event_id()), &data));
                        }
                        metrics::counter!("logs_tail_frames_total").increment(1);
                        self.last_sent = Instant::now();
                        return Some((Ok(Bytes::from(out)), self));
                    }
                }
                Err(e) => tracing::warn!(error = %e, "a live tail's poll failed; retrying"),
            }
            if self.last_sent.elapsed() >= self.heartbeat {
                self.last_sent = Instant::now();
                return Some((Ok(Bytes::from_static(b": heartbeat\n\n")), self));
            }
        }
    }
}

/// Follow new events live (Server-Sent Events).
#[utoipa::path(
    get, path = "/v1/logs/tail", tag = "logs", security(("bearer" = [])),
    params(
        TailParams,
        ("Last-Event-ID" = Option<String>, Header, description = "Resume after this event id (browsers send it when they reconnect)"),
    ),
    responses(
        (status = 200, description = "`text/event-stream`: `log` events (id = position, data = the event as the query returns it), `gap` when a resume point was too old, `end` when the key is disabled, heartbeat comments when idle.", content_type = "text/event-stream"),
        (status = 400, description = "INVALID_REQUEST (a filter, or a Last-Event-ID this API did not send)", body = stow_http::error::ApiErrorBody),
        super::LogReadErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn tail(
    auth: Auth,
    params: stow_http::Query<TailParams>,
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    auth.require(auth_core::Permission::LogsRead)?;
    let p = params.into_inner();
    let fields = p.search(None, None).map_err(ApiError::invalid_request)?;
    let server = target_server(&state, &auth, fields.server_id.as_deref()).await?;
    let filters: Filters = validate_filters(&fields).map_err(ApiError::invalid_request)?;
    let server_id = server.id.clone();
    let resume = resume_point(&req, p.last_event_id.as_deref())?;
    let (start, gap) = start_point(&state, &server_id, resume).await?;
    let lease = SlotLease::acquire(
        &state.stores.read_slots,
        LeaseKind::Tail,
        &auth.org.id,
        state.config.tail_limit,
    )
    .await?
    .ok_or_else(|| {
        ApiError::new(
            Code::RateLimited,
            format!(
                "at most {} live tails may be open per organization; close one or retry later",
                state.config.tail_limit
            ),
        )
        .with_retry_after(5)
    })?;
    let mut first = String::from("retry: 2000\n\n");
    if gap {
        first.push_str(&frame(
            "gap",
            None,
            &serde_json::json!({
                "reason": format!("the Last-Event-ID is unknown or older than {RESUME_MINUTES} minutes; events since it may be missing, the tail continues from now")
            })
            .to_string(),
        ));
    }
    let now = Instant::now();
    let tail = Tail {
        logs: Arc::clone(&state.stores.logs),
        reader: Reader::of(&state, &auth, &server_id),
        query: TailQuery {
            server_id,
            filters,
            after: start,
            max_batches: BATCHES_PER_POLL,
        },
        poll: state.config.tail_poll,
        heartbeat: state.config.tail_heartbeat,
        pending: Some(Bytes::from(first)),
        last_sent: now,
        last_key_check: now,
        polls: 0,
        ended: false,
        lease_lost: lease.lost(),
    };
    // the lease is held while the client takes the stream (slots::watched)
    let body = watched(
        Box::pin(futures::stream::unfold(tail, Tail::next)),
        lease,
        state.config.stream_stall,
    );
    Ok(HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("Cache-Control", "no-store"))
        // nginx: pass events through as they come instead of buffering the response
        .insert_header(("X-Accel-Buffering", "no"))
        .streaming(body))
}

/// The position a client asks to resume after (`Last-Event-ID`, or the query parameter for
/// clients that cannot set headers).
fn resume_point(req: &HttpRequest, given: Option<&str>) -> Result<Option<TailPosition>, ApiError> {
    let last_event_id = match req.headers().get("last-event-id") {
        Some(v) => Some(
            v.to_str()
                .map_err(|_| ApiError::invalid_request("`Last-Event-ID` must be text"))?
                .to_owned(),
        ),
        None => given.map(str::to_owned),
    };
    match last_event_id.as_deref().filter(|s| !s.trim().is_empty()) {
        None => Ok(None),
        Some(s) => TailPosition::parse(s).map(Some).ok_or_else(|| {
            ApiError::invalid_request(
                "`Last-Event-ID` must be the id of an event this tail sent, like 7361.42",
            )
        }),
    }
}

/// Where the tail starts, and whether events may be missing: a resume point that is known and
/// recent continues; anything else starts now, with a gap.
async fn start_point(
    state: &ApiState,
    server_id: &auth_core::ServerId,
    resume: Option<TailPosition>,
) -> Result<(TailPosition, bool), ApiError> {
    let logs = &state.stores.logs;
    Ok(match resume {
        None => (logs.tail_start(server_id).await?, false),
        Some(pos) => match logs.tail_batch_time(server_id, pos.seq).await? {
            Some(at) if at > Utc::now() - chrono::Duration::minutes(RESUME_MINUTES) => (pos, false),
            _ => (logs.tail_start(server_id).await?, true),
        },
    })
}
