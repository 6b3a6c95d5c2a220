//! `GET /v1/logs/export`: a whole search streamed as NDJSON or CSV, page by page (constant
//! memory), one export at a time per organization.

use actix_web::http::header::{ContentDisposition, DispositionParam, DispositionType};
use actix_web::{web, HttpResponse};
use bytes::Bytes;
use chrono::{DateTime, Utc};
use logs_core::search::{validate_search, RangeLimit};
use logs_core::store::{EventQuery, LogStore};
use std::sync::Arc;
use stow_http::{ApiError, Auth, Code};

use super::slots::{watched, ExportSlot};
use super::{open, EventOut};
use crate::state::ApiState;

/// Events read per statement.
pub const PAGE: usize = 1_000;

logs_core::search_params! {
    /// `GET /v1/logs/export`.
    pub struct ExportParams {
        /// Start of the window, inclusive (RFC 3339); any time within the plan's retention.
        pub from: Option<String>,
        /// End of the window, exclusive (RFC 3339).
        pub to: Option<String>,
        /// `ndjson` (the default) or `csv`.
        pub format: Option<String>,
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Format {
    Ndjson,
    Csv,
}

/// The CSV columns, in order; the JSON ones are JSON text.
const CSV_COLUMNS: [&str; 16] = [
    "occurred_at",
    "level",
    "event_type",
    "message",
    "resource",
    "player_id",
    "target_player_id",
    "player_identifiers",
    "target_player_identifiers",
    "data",
    "trace_id",
    "environment",
    "server_id",
    "event_id",
    "batch_id",
    "ingested_at",
];

/// A cell a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, CR first) is prefixed
/// with `'`, as OWASP advises for CSV meant to be opened in one.
fn cell(s: &str) -> std::borrow::Cow<'_, str> {
    match s.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{s}").into(),
        _ => s.into(),
    }
}

fn json_cell(v: &Option<serde_json::Value>) -> String {
    v.as_ref().map(|v| v.to_string()).unwrap_or_default()
}

fn csv_record(w: &mut csv::Writer<Vec<u8>>, e: &EventOut) -> Result<(), csv::Error> {
    let opt = |v: &Option<String>| v.clone().unwrap_or_default();
    w.write_record([
        e.occurred_at.clone(),
        e.level.clone(),
        cell(&e.event_type).into_owned(),
        cell(&e.message).into_owned(),
        cell(&opt(&e.resource)).into_owned(),
        cell(&opt(&e.player_id)).into_owned(),
        cell(&opt(&e.target_player_id)).into_owned(),
        json_cell(&e.player_identifiers),
        json_cell(&e.target_player_identifiers),
        json_cell(&e.data),
        cell(&opt(&e.trace_id)).into_owned(),
        cell(&opt(&e.environment)).into_owned(),
        e.server_id.clone(),
        cell(&e.event_id).into_owned(),
        cell(&e.batch_id).into_owned(),
        e.ingested_at.clone(),
    ])
}

/// One page as bytes of the format.
fn encode(format: Format, rows: Vec<logs_core::EventRow>, header: bool) -> Result<Bytes, String> {
    match format {
        Format::Ndjson => {
            let mut out = Vec::with_capacity(rows.len() * 512);
            for r in rows {
                serde_json::to_writer(&mut out, &EventOut::from(r)).map_err(|e| e.to_string())?;
                out.push(b'\n');
            }
            Ok(out.into())
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(Vec::with_capacity(rows.len() * 512));
            if header {
                w.write_record(CSV_COLUMNS).map_err(|e| e.to_string())?;
            }
            for r in rows {
                csv_record(&mut w, &EventOut::from(r)).map_err(|e| e.to_string())?;
            }
            w.into_inner().map(Bytes::from).map_err(|e| e.to_string())
        }
    }
}

/// `20261120T000000Z`
fn compact(t: DateTime<Utc>) -> String {
    t.format("%Y%m%dT%H%M%SZ").to_string()
}

struct Export {
    logs: Arc<dyn LogStore>,
    query: EventQuery,
    format: Format,
    started: bool,
    done: bool,
    /// The request's id, for the log line of a failure after the status was sent.
    request_id: String,
}

impl Export {
    async fn next_page(mut self) -> Option<(Result<Bytes, std::io::Error>, Self)> {
        if self.done {
            return None;
        }
        let header = !self.started;
        self.started = true;
        let rows = match self.logs.query(&self.query).await {
            Ok(rows) => rows,
            Err(e) => {
                // the status is sent; ending the stream with an error aborts the response, so
                // the client sees an incomplete transfer rather than a short file
                tracing::warn!(error = %e, request_id = %self.request_id, "log export failed mid-stream");
                self.done = true;
                return Some((Err(std::io::Error::other("log export failed")), self));
            }
        };
        self.done = rows.len() < PAGE;
        self.query.after = rows.last().map(|r| (r.occurred_at, r.id));
        metrics::counter!("logs_export_events_total").increment(rows.len() as u64);
        let bytes = encode(self.format, rows, header).map_err(std::io::Error::other);
        Some((bytes, self))
    }
}

/// Download every event of a search, newest first.
#[utoipa::path(
    get, path = "/v1/logs/export", tag = "logs", security(("bearer" = [])),
    params(ExportParams),
    responses(
        (status = 200, description = "The events, newest first, streamed: `application/x-ndjson` (one event per line, as the query returns them) or `text/csv` (a header row, then one row per event). `Content-Disposition: attachment` names the server and window. A failure after the first byte aborts the transfer.", content(
            (String = "application/x-ndjson"),
            (String = "text/csv"),
        )),
        (status = 400, description = "INVALID_REQUEST", body = stow_http::error::ApiErrorBody),
        super::LogReadErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn export(
    auth: Auth,
    params: stow_http::Query<ExportParams>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let p = params.into_inner();
    // keys export with logs:read; of members, those whose role exports (not viewers)
    auth.require(auth_core::Permission::LogsRead)?;
    auth.require_capability(auth_core::roles::Capability::ExportLogs)?;
    let opened = open(&state, &auth, p.server_id.as_deref(), || {
        validate_search(&p.search(p.from.clone(), p.to.clone())?, RangeLimit::None)
    })
    .await?;
    let format = match p.format.as_deref() {
        None | Some("ndjson") => Format::Ndjson,
        Some("csv") => Format::Csv,
        Some(other) => {
            return Err(ApiError::invalid_request(format!(
                "`format` must be ndjson or csv (got {other:?})"
            )))
        }
    };
    let lock = state
        .stores
        .read_slots
        .try_export_lock(&auth.org.id)
        .await?
        .map(ExportSlot)
        .ok_or_else(|| {
            ApiError::new(
                Code::RateLimited,
                "an export is already running for this organization; one runs at a time",
            )
            .with_retry_after(5)
        })?;
    let (ext, content_type) = match format {
        Format::Ndjson => ("ndjson", "application/x-ndjson; charset=utf-8"),
        Format::Csv => ("csv", "text/csv; charset=utf-8"),
    };
    let filename = format!(
        "stowage-logs_{}_{}_{}.{ext}",
        opened.server.cfx_id,
        compact(opened.search.from),
        compact(opened.search.to)
    );
    let export = Export {
        logs: Arc::clone(&state.stores.logs),
        query: EventQuery {
            server_id: opened.server.id.clone(),
            from: opened.search.from,
            to: opened.search.to,
            filters: opened.search.filters.clone(),
            after: None,
            limit: PAGE,
            scan_limit: None,
            enough: PAGE,
        },
        format,
        started: false,
        done: opened.empty(),
        request_id: stow_http::current_request_id(),
    };
    // the lock is held while the client takes the answer (slots::watched)
    let body = watched(
        Box::pin(futures::stream::unfold(export, Export::next_page)),
        lock,
        state.config.stream_stall,
    );
    Ok(HttpResponse::Ok()
        .content_type(content_type)
        .insert_header(("Cache-Control", "private, no-store"))
        .insert_header(ContentDisposition {
            disposition: DispositionType::Attachment,
            parameters: vec![DispositionParam::Filename(filename)],
        })
        .streaming(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_cells_are_defused_and_others_kept() {
        for (s, want) in [
            ("=HYPERLINK(\"x\")", "'=HYPERLINK(\"x\")"),
            ("+1", "'+1"),
            ("-2", "'-2"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tx", "'\tx"),
            ("plain", "plain"),
            ("", ""),
            ("a=b", "a=b"),
        ] {
            assert_eq!(cell(s), want);
        }
    }
}
