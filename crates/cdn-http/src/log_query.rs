//! `POST /v1/logs/query`: filtered, cursor-paginated search over a bounded window.

use actix_web::{web, HttpResponse};
use auth_core::{Permission, Server};
use chrono::{DateTime, Duration, SecondsFormat, Utc};
use logs_core::query::{
    make_cursor, read_cursor, search_digest, validate, CursorError, QueryRequest,
};
use logs_core::store::{EventQuery, EventRow};
use serde::Serialize;
use serde_json::Value;
use stow_http::{current_request_id, ApiError, Auth, Code};
use utoipa::ToSchema;

use crate::state::CdnState;

fn ts(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// A returned event: all 15 fields, `null` where absent, plus `batch_id`.
#[derive(Serialize, ToSchema)]
pub struct EventOut {
    pub event_id: String,
    /// The join code.
    pub server_id: String,
    pub level: String,
    pub event_type: String,
    pub occurred_at: String,
    pub ingested_at: String,
    pub player_id: Option<String>,
    pub target_player_id: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub player_identifiers: Option<Value>,
    #[schema(value_type = Option<Object>)]
    pub target_player_identifiers: Option<Value>,
    pub resource: Option<String>,
    pub trace_id: Option<String>,
    pub environment: Option<String>,
    pub message: String,
    #[schema(value_type = Option<Object>)]
    pub data: Option<Value>,
    pub batch_id: String,
}

impl From<EventRow> for EventOut {
    fn from(r: EventRow) -> Self {
        Self {
            event_id: r.event_id,
            server_id: r.cfx_id,
            level: r.level,
            event_type: r.event_type,
            occurred_at: ts(r.occurred_at),
            ingested_at: ts(r.ingested_at),
            player_id: r.player_id,
            target_player_id: r.target_player_id,
            player_identifiers: r.player_identifiers,
            target_player_identifiers: r.target_player_identifiers,
            resource: r.resource,
            trace_id: r.trace_id,
            environment: r.environment,
            message: r.message,
            data: r.data,
            batch_id: r.batch_id,
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Pagination {
    pub has_more: bool,
    pub next_cursor: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct Range {
    pub from: String,
    pub to: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QueryResponse {
    pub success: bool,
    pub events: Vec<EventOut>,
    pub pagination: Pagination,
    /// The effective window: `from` raised to now minus the plan's retention when older.
    pub range: Range,
    pub request_id: String,
}

fn forbidden(msg: &str) -> ApiError {
    ApiError::new(Code::Forbidden, msg)
}

async fn target_server(
    state: &CdnState,
    auth: &Auth,
    named: Option<&str>,
) -> Result<Server, ApiError> {
    use auth_core::log_access::{self, Denied};
    log_access::resolve(state.accounts.as_ref(), auth, named)
        .await
        .map_err(|d| match d {
            Denied::NoServerNamed => ApiError::invalid_request(
                "`serverId` (the server join code) is required for a global key",
            ),
            Denied::OtherServer => forbidden("this key is bound to another server"),
            Denied::UnknownServer(code) => ApiError::new(
                Code::NotFound,
                format!("no registered server with join code `{code}` in this organization"),
            ),
            Denied::PlanWithoutLogs => forbidden("the organization's plan does not include Logs"),
            Denied::SourceInactive | Denied::BoundServerGone(_) => {
                forbidden("the Logs source of this server is not active")
            }
            Denied::Store(e) => e.into(),
        })
}

/// Search stored events, newest first.
#[utoipa::path(
    post, path = "/v1/logs/query", tag = "logs", security(("bearer" = [])),
    request_body = QueryRequest,
    responses(
        (status = 200, description = "One page of events (Cache-Control: private, no-store)", body = QueryResponse),
        (status = 400, description = "INVALID_REQUEST, INVALID_CURSOR or CURSOR_EXPIRED", body = stow_http::error::CdnErrorBody),
        (status = 403, description = "FORBIDDEN (permission, other server, plan or Logs source)", body = stow_http::error::CdnErrorBody),
        (status = 404, description = "NOT_FOUND (unknown server)", body = stow_http::error::CdnErrorBody),
        (status = 413, description = "PAYLOAD_TOO_LARGE", body = stow_http::error::CdnErrorBody),
        (status = 415, description = "UNSUPPORTED_MEDIA_TYPE (not JSON, or a Content-Encoding other than identity, gzip, deflate)", body = stow_http::error::CdnErrorBody),
        stow_http::error::KeyedRouteErrors,
        stow_http::error::BodyRouteErrors,
    )
)]
pub async fn query(
    auth: Auth,
    body: stow_http::Json<QueryRequest>,
    state: web::Data<CdnState>,
) -> Result<HttpResponse, ApiError> {
    auth.require(Permission::LogsRead)?;
    let req = body.into_inner();
    let server = target_server(&state, &auth, req.server_id.as_deref()).await?;
    let valid = validate(&req).map_err(ApiError::invalid_request)?;
    let now = Utc::now();
    let search = search_digest(&server.cfx_id, &valid);
    let keys = state.signing_keys().await?;
    let after = match &req.cursor {
        None => None,
        Some(c) => Some(read_cursor(&keys, &auth.org.id, &search, c, now).map_err(
            |e| match e {
                CursorError::Invalid => ApiError::new(Code::InvalidCursor, e.to_string()),
                CursorError::Expired => ApiError::new(Code::CursorExpired, e.to_string()),
            },
        )?),
    };
    let retention_start = now - Duration::days(i64::from(auth.plan.retention_days));
    let from = valid.from.max(retention_start);
    let range = Range {
        from: ts(from),
        to: ts(valid.to),
    };
    let _slot = state
        .try_search_slot(&auth.org.id, auth.plan.concurrent_searches)
        .ok_or_else(|| {
            ApiError::new(
                Code::RateLimited,
                "too many concurrent searches for this organization; retry shortly",
            )
            .with_retry_after(1)
        })?;
    let search_started = std::time::Instant::now();
    let mut rows = if from >= valid.to {
        Vec::new()
    } else {
        state
            .logs
            .query(&EventQuery {
                server_id: logs_core::ServerId(server.id.clone()),
                from,
                to: valid.to,
                levels: valid.levels.clone(),
                event_type: valid.event_type.clone(),
                resource: valid.resource.clone(),
                message: valid.message.clone(),
                player_id: valid.player_id.clone(),
                identifier: valid.identifier.clone(),
                after,
                limit: valid.limit + 1,
            })
            .await?
    };
    metrics::histogram!("logs_query_duration_seconds")
        .record(search_started.elapsed().as_secs_f64());
    let has_more = rows.len() > valid.limit;
    rows.truncate(valid.limit);
    let next_cursor = match (has_more, rows.last()) {
        (true, Some(last)) => Some(make_cursor(
            &keys,
            &auth.org.id,
            &search,
            (last.occurred_at, last.id),
            now + Duration::from_std(state.config.cursor_ttl).unwrap_or(Duration::minutes(15)),
        )),
        _ => None,
    };
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "private, no-store"))
        .json(QueryResponse {
            success: true,
            events: rows.into_iter().map(EventOut::from).collect(),
            pagination: Pagination {
                has_more,
                next_cursor,
            },
            range,
            request_id: current_request_id(),
        }))
}
