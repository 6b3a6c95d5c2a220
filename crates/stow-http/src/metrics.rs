//! Prometheus metrics, served at `GET /metrics` on each service's own port.
//!
//! Request counts and latency by host, route pattern, method and status come from the request
//! middleware; domain counters (upload bytes, batches by outcome, events, query latency,
//! object-store operations) are recorded where they happen; pool gauges are sampled at scrape time.

use std::sync::OnceLock;

use actix_web::{web, HttpResponse};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

use crate::health::Readiness;

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

const LATENCY_BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// The process-wide recorder (installed on first use).
pub fn handle() -> &'static PrometheusHandle {
    HANDLE.get_or_init(|| {
        let builder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), LATENCY_BUCKETS)
            .unwrap_or_else(|_| PrometheusBuilder::new());
        let recorder = builder.build_recorder();
        let handle = recorder.handle();
        // a second recorder in the same process (tests) keeps the first one
        let _ = metrics::set_global_recorder(recorder);
        handle
    })
}

/// `GET /metrics`.
pub async fn render(readiness: web::Data<Readiness>) -> HttpResponse {
    let (size, available, waiting) = readiness.db.pool_status();
    metrics::gauge!("db_pool_connections").set(size as f64);
    metrics::gauge!("db_pool_available").set(available as f64);
    metrics::gauge!("db_pool_waiting").set(waiting as f64);
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4")
        .body(handle().render())
}
