//! `GET /v1/overview`: the organization, its plan, this month's usage and its servers, as far as
//! the calling key may see them (docs/api.md §2a). What the console's first page shows.

use actix_web::http::header;
use actix_web::{web, HttpResponse};
use auth_core::Permission;
use logs_core::store::{CountQuery, Filters};
use logs_core::{Level, ServerId};
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use crate::ApiState;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanInfo {
    pub name: String,
    pub logs_enabled: bool,
    /// Days log events are kept.
    pub retention_days: i32,
    /// Largest file one upload may hold, in bytes.
    pub max_file_size: i64,
    /// Longest lifetime of an upload URL, in seconds.
    pub max_url_lifetime_seconds: i32,
    pub concurrent_searches: i32,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageInfo {
    /// `YYYY-MM`, in UTC.
    pub month: String,
    /// Log events accepted this month.
    pub log_events: i64,
    /// Objects stored now, and their bytes.
    pub objects: i64,
    pub storage_bytes: i64,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OverviewServer {
    pub id: String,
    /// The join code.
    pub cfx_id: String,
    pub name: Option<String>,
    /// Whether the Logs source is active (ingestion accepted).
    pub logs_active: bool,
    /// When the server's newest batch of events was accepted; null before the first.
    pub last_event_at: Option<String>,
    /// Events of level `error` or `fatal` that occurred in the 24 hours before the request;
    /// null for a key without `logs:read` or a plan without Logs.
    pub errors_last_24h: Option<i64>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OverviewResponse {
    pub success: bool,
    pub organization: OverviewOrganization,
    pub plan: PlanInfo,
    pub usage: UsageInfo,
    /// Every server of the organization for a developer key (those its server scope names, when it
    /// has one); a server key's own server.
    pub servers: Vec<OverviewServer>,
    pub request_id: String,
}

#[derive(Serialize, ToSchema)]
pub struct OverviewOrganization {
    pub id: String,
    pub name: String,
}

/// The organization, plan, this month's usage and servers.
#[utoipa::path(
    get,
    path = "/v1/overview",
    tag = "keys",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Organization, plan, usage and servers", body = OverviewResponse),
        (status = 401, description = "Missing, invalid, disabled or expired key"),
        (status = 429, description = "Rate limited"),
        (status = 503, description = "Database unavailable; retry after Retry-After"),
    )
)]
pub async fn overview(auth: Auth, state: web::Data<ApiState>) -> Result<HttpResponse, ApiError> {
    let ctx = &auth.0;
    let now = chrono::Utc::now();
    let log_events = state.stores.logs.monthly_usage(&ctx.org.id, now).await?;
    let stored = state.stores.records.totals(&ctx.org.id).await?;
    let servers = match &ctx.server {
        Some(server) => vec![server.clone()],
        None => {
            let scope = ctx.log_scope();
            let mut all = state.stores.accounts.list_servers(&ctx.org.id).await?;
            all.retain(|s| scope.includes(&s.id));
            all
        }
    };
    let ids: Vec<ServerId> = servers.iter().map(|s| s.id.clone()).collect();
    // when events arrived is log data: only for keys that may read logs
    let last = if ctx.key.permissions.contains(Permission::LogsRead) {
        state.stores.logs.last_batches(&ids).await?
    } else {
        Default::default()
    };
    let mut errors = std::collections::HashMap::new();
    if ctx.key.permissions.contains(Permission::LogsRead) && ctx.plan.logs_enabled {
        for id in &ids {
            // answered from the counts ingestion keeps per 15 minutes and level
            let q = CountQuery {
                server_id: id.clone(),
                from: now - chrono::Duration::hours(24),
                to: now,
                filters: Filters {
                    levels: Some(vec![Level::Error, Level::Fatal]),
                    ..Filters::default()
                },
                bucket: chrono::Duration::hours(24),
                scan_limit: 0,
            };
            let counts = state
                .stores
                .logs
                .counts(&q)
                .await
                .map_err(crate::explorer::search_error)?;
            errors.insert(id.clone(), counts.iter().map(|c| c.count).sum::<i64>());
        }
    }
    let plan = &ctx.plan;
    let body = OverviewResponse {
        success: true,
        organization: OverviewOrganization {
            id: ctx.org.id.to_string(),
            name: ctx.org.name.clone(),
        },
        plan: PlanInfo {
            name: plan.name.clone(),
            logs_enabled: plan.logs_enabled,
            retention_days: plan.retention_days,
            max_file_size: plan.max_file_size,
            max_url_lifetime_seconds: plan.max_url_lifetime_secs,
            concurrent_searches: plan.concurrent_searches,
        },
        usage: UsageInfo {
            month: now.format("%Y-%m").to_string(),
            log_events,
            objects: stored.objects,
            storage_bytes: stored.bytes,
        },
        servers: servers
            .into_iter()
            .map(|s| OverviewServer {
                last_event_at: last
                    .get(&s.id.clone())
                    .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
                errors_last_24h: errors.get(&s.id).copied(),
                id: s.id.into_string(),
                cfx_id: s.cfx_id,
                name: s.name,
                logs_active: s.logs_active,
            })
            .collect(),
        request_id: current_request_id(),
    };
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "private, no-store"))
        .json(body))
}
