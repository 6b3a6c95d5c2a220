//! `GET /v1/audit/export`: every entry a filter matches, as NDJSON, streamed page by page.

use std::sync::Arc;

use actix_web::http::header::{ContentDisposition, DispositionParam, DispositionType};
use actix_web::{web, HttpResponse};
use auth_core::audit::{AuditQuery, AuditStore, MAX_PAGE};
use auth_core::OrgId;
use bytes::Bytes;
use stow_http::{ApiError, Auth, Code};

use super::event_out::AuditEventOut;
use super::{reader, AuditParams};
use crate::state::ApiState;

struct Export {
    audit: Arc<dyn AuditStore>,
    org: OrgId,
    query: AuditQuery,
    done: bool,
    request_id: String,
}

impl Export {
    async fn next_page(mut self) -> Option<(Result<Bytes, std::io::Error>, Self)> {
        if self.done {
            return None;
        }
        let events = match self.audit.page(&self.org, &self.query).await {
            Ok(events) => events,
            Err(e) => {
                // the status is sent: aborting shows the client an incomplete transfer
                tracing::warn!(error = %e, request_id = %self.request_id, "audit export failed mid-stream");
                self.done = true;
                return Some((Err(std::io::Error::other("audit export failed")), self));
            }
        };
        self.done = events.len() < MAX_PAGE;
        self.query.before = events.last().map(|e| e.id);
        let mut out = Vec::with_capacity(events.len() * 400);
        for e in events {
            if let Err(e) = serde_json::to_writer(&mut out, &AuditEventOut::from(e)) {
                self.done = true;
                return Some((Err(std::io::Error::other(e)), self));
            }
            out.push(b'\n');
        }
        Some((Ok(out.into()), self))
    }
}

/// Download the audit log (owners and admins).
#[utoipa::path(
    get, path = "/v1/audit/export", tag = "audit", security(("bearer" = [])),
    params(AuditParams),
    responses(
        (status = 200, description = "Every matching entry, newest first, one JSON object per line (`application/x-ndjson`, the list's items), streamed; `Content-Disposition: attachment`. A failure after the first byte aborts the transfer.", content_type = "application/x-ndjson", body = String),
        (status = 400, description = "INVALID_REQUEST: a filter that is not valid, or `limit` (the export has no pages)", body = stow_http::error::ApiErrorBody),
        super::AuditRouteErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn export_audit(
    auth: Auth,
    params: stow_http::Query<AuditParams>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    reader(&auth)?;
    if params.limit.is_some() {
        return Err(ApiError::new(
            Code::InvalidRequest,
            "`limit` is for GET /v1/audit; the export has every matching entry",
        ));
    }
    let query = params.query(MAX_PAGE)?;
    let export = Export {
        audit: Arc::clone(&state.stores.audit),
        org: auth.org.id.clone(),
        query,
        done: false,
        request_id: stow_http::current_request_id(),
    };
    let filename = format!(
        "stowage-audit_{}_{}.ndjson",
        auth.org.slug,
        chrono::Utc::now().format("%Y%m%dT%H%M%SZ")
    );
    Ok(HttpResponse::Ok()
        .content_type("application/x-ndjson; charset=utf-8")
        .insert_header(("Cache-Control", "private, no-store"))
        .insert_header(ContentDisposition {
            disposition: DispositionType::Attachment,
            parameters: vec![DispositionParam::Filename(filename)],
        })
        .streaming(futures::stream::unfold(export, Export::next_page)))
}
