//! The ingestion host (`logs-api`): atomic, idempotent batch ingestion plus key inspection and
//! health, as an actix-web application that tests can start on port 0.

#![warn(unreachable_pub)]
// no production function over 100 lines of code (test code is exempt)
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod ingest;

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{watch, Semaphore};

use actix_web::middleware::from_fn;
use actix_web::{web, App, HttpResponse, HttpServer};
use auth_core::AccountStore;
use stow_db::logs::PgLogs;
use stow_db::{Db, PgAccounts};
use stow_http::api_routes::BearerAuth;
use stow_http::health::Readiness;

use stow_http::{not_found, path_config, query_config, Authenticator, BodyLimit, Config};
use utoipa::OpenApi;

stow_http::api_routes! {
    /// The ingestion host's document.
    pub struct ApiDoc(
        info(title = "Stowage log ingestion", description = "Atomic, idempotent batches of game-server log events."),
        modifiers(&BearerAuth),
        components(schemas(stow_http::error::IngestErrorBody, logs_core::Detail))
    );
    also_documented();
    fn api_routes;
    "/healthz" => { get: stow_http::health::healthz }
    "/readyz" => { get: stow_http::health::readyz }
    "/v1/whoami" => { get: stow_http::whoami::whoami }
    "/v1/servers/{cfx_server_id}/logs" => { post: ingest::ingest_explicit }
    "/v1/logs" => { post: ingest::ingest_bound }
}

async fn openapi() -> HttpResponse {
    HttpResponse::Ok().json(ApiDoc::openapi())
}

pub struct LogsState {
    pub config: Arc<Config>,
    pub db: Db,
    pub accounts: Arc<dyn AccountStore>,
    pub store: Arc<dyn logs_core::LogStore>,
    /// True once this instance has made sure the daily partitions around today exist; batches
    /// wait for it (see [`ingest`]), so no event lands in the default partition of a fresh
    /// database.
    pub partitions_ready: watch::Receiver<bool>,
    /// One permit per batch transaction this instance may run at once (see
    /// [`ingest::ingest_slot`]).
    pub ingest_slots: Semaphore,
}

/// How long a batch waits for the first partition maintenance before it is answered 503.
pub const PARTITIONS_WAIT: Duration = Duration::from_secs(5);
/// How soon partition maintenance is tried again after it failed.
const MAINTENANCE_RETRY: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct StartError(pub String);

/// Registers every route of the ingestion host.
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/metrics", web::get().to(stow_http::metrics::render))
        .route("/v1/openapi.json", web::get().to(openapi));
    api_routes(cfg);
}

pub struct Application {
    port: u16,
    server: actix_web::dev::Server,
    db: Db,
    alerts: Arc<stow_alerts::Worker>,
    partitions_ready: watch::Sender<bool>,
}

impl Application {
    pub fn build(config: Config) -> Result<Self, StartError> {
        let listener = TcpListener::bind(&config.logs_addr)
            .map_err(|e| StartError(format!("binding {}: {e}", config.logs_addr)))?;
        Self::with_listener(Arc::new(config), listener)
    }

    pub fn with_listener(config: Arc<Config>, listener: TcpListener) -> Result<Self, StartError> {
        stow_http::metrics::handle();
        let port = listener
            .local_addr()
            .map_err(|e| StartError(e.to_string()))?
            .port();
        let db = Db::connect(&config.db_config()).map_err(|e| StartError(e.to_string()))?;
        let accounts = Arc::new(PgAccounts::new(db.clone()));
        let (partitions_ready, partitions) = watch::channel(false);
        let state = web::Data::new(LogsState {
            config: Arc::clone(&config),
            db: db.clone(),
            accounts: Arc::clone(&accounts) as Arc<dyn AccountStore>,
            store: Arc::new(PgLogs::with_writers(db.clone(), config.ingest_writers)),
            partitions_ready: partitions.clone(),
            ingest_slots: Semaphore::new(config.ingest_concurrency),
        });
        let authenticator = web::Data::new(Authenticator::new(
            accounts,
            Arc::new(stow_db::PgRateBuckets::new(db.clone())),
            config.key_cache_ttl,
            config.rate_limit_per_second,
            config.rate_limit_burst,
        ));
        let readiness = web::Data::new(Readiness {
            db: db.clone(),
            objects: None,
            gates: vec![("logPartitions", partitions)],
        });
        let body_pace = config.body_pace();
        let server = HttpServer::new(move || {
            // runs on every worker thread: the parser's own answers get our envelope there
            stow_http::framework_error::register(stow_http::Flavor::Ingest);
            App::new()
                .wrap(from_fn(stow_http::request::ingest_context))
                .app_data(BodyLimit(logs_core::event::MAX_BODY_BYTES))
                .app_data(body_pace)
                .app_data(query_config())
                .app_data(path_config())
                .app_data(state.clone())
                .app_data(authenticator.clone())
                .app_data(readiness.clone())
                .configure(routes)
                .default_service(web::to(not_found))
        })
        .workers(config.workers)
        .shutdown_timeout(config.shutdown_timeout.as_secs())
        .client_request_timeout(config.request_head_timeout)
        .listen(listener)
        .map_err(|e| StartError(e.to_string()))?
        .run();
        let alerts = stow_alerts::Worker::new(
            Arc::new(stow_db::logs::alerts::PgAlerts::new(db.clone())),
            stow_alerts::WorkerConfig {
                allow: logs_core::alert_delivery::Allow {
                    insecure: config.alerts_allow_insecure,
                },
                console_url: config.console_public_url.clone(),
                poll: config.alerts_poll,
                key: config.second_factor_key.clone(),
            },
        )
        .map_err(StartError)?;
        Ok(Self {
            port,
            server,
            db,
            alerts: Arc::new(alerts),
            partitions_ready,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Serves until SIGINT/SIGTERM, maintaining log partitions in the background: at once (batches
    /// and readiness wait for that first run, retried every few seconds until it succeeds), then
    /// hourly; and sending alert deliveries.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let alerts = self.alerts.spawn();
        let db = self.db.clone();
        let ready = self.partitions_ready;
        let maintenance = tokio::spawn(async move {
            loop {
                let next = match stow_db::logs::maintain_partitions(&db).await {
                    Ok(r) => {
                        log_maintained(&r);
                        ready.send_replace(true);
                        Duration::from_secs(3600)
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "log partition maintenance failed");
                        if *ready.borrow() {
                            Duration::from_secs(3600)
                        } else {
                            MAINTENANCE_RETRY
                        }
                    }
                };
                tokio::time::sleep(next).await;
            }
        });
        let result = self.server.await;
        maintenance.abort();
        alerts.abort();
        result
    }
}

impl stow_http::Service for Application {
    fn port(&self) -> u16 {
        self.port
    }

    fn serve(self) -> futures::future::LocalBoxFuture<'static, std::io::Result<()>> {
        Box::pin(self.run_until_stopped())
    }
}

/// The whole `logs-api` program (see [`stow_http::run_main`]).
/// The maintenance's line: the partitions made, dropped and vacuumed, the events moved out of
/// the default partition, and the batch rows and audit entries pruned.
fn log_maintained(r: &stow_db::logs::MaintenanceReport) {
    tracing::info!(
        created = r.created.len(),
        dropped = r.dropped.len(),
        vacuumed = r.vacuumed.len(),
        moved = r.moved_from_default,
        batches_pruned = r.batches_pruned,
        audit_pruned = r.audit_pruned,
        failed = r.failed.len(),
        "log partitions maintained"
    );
}

pub async fn run_main() -> std::process::ExitCode {
    stow_http::run_main(
        "logs-api",
        "Stowage's ingestion host: atomic, idempotent batches of game-server log events.",
        |c| c.logs_addr.clone(),
        Application::build,
    )
    .await
}

#[cfg(test)]
mod tests {
    /// The hourly line says how many batch rows and audit entries it pruned (it said neither).
    #[test]
    fn the_maintenance_line_says_what_was_pruned() {
        use std::sync::{Arc, Mutex};
        #[derive(Clone, Default)]
        struct Lines(Arc<Mutex<Vec<u8>>>);
        impl std::io::Write for Lines {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let lines = Lines::default();
        let writer = lines.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        let report = stow_db::logs::MaintenanceReport {
            batches_pruned: 5000,
            audit_pruned: 12,
            ..Default::default()
        };
        tracing::subscriber::with_default(subscriber, || super::log_maintained(&report));
        let line = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
        assert!(line.contains("log partitions maintained"), "{line}");
        assert!(line.contains("batches_pruned=5000"), "{line}");
        assert!(line.contains("audit_pruned=12"), "{line}");
    }

    use utoipa::OpenApi;

    #[test]
    fn the_document_lists_every_route_of_the_table() {
        let doc = super::ApiDoc::openapi();
        let mut paths: Vec<&str> = doc.paths.paths.keys().map(String::as_str).collect();
        paths.sort_unstable();
        assert_eq!(
            paths,
            [
                "/healthz",
                "/readyz",
                "/v1/logs",
                "/v1/servers/{cfxServerId}/logs",
                "/v1/whoami",
            ]
        );
    }
}
