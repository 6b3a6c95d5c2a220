//! The API host (`cdn-api`): CDN objects, upload URLs, key inspection, log queries and public
//! delivery, as an actix-web application that tests can start on port 0.

#![warn(unreachable_pub)]
// no production function over 100 lines of code (test code is exempt)
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod account;
pub mod alerts;
pub mod audit;
pub mod console;
pub mod delivery;
pub mod explorer;
pub mod form;
pub mod idempotency;
pub mod keys;
pub mod lifecycle;
pub mod members;
pub mod objects;
pub mod openapi;
mod ops;
pub mod overview;
pub mod part_headers;
pub mod pipeline;
pub mod placeholders;
pub mod presigned;
pub mod rendition;
pub mod saved_searches;
pub mod state;

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use actix_web::middleware::from_fn;
use actix_web::{web, App, HttpResponse, HttpServer};
use stow_db::Db;
use stow_http::health::Readiness;

use stow_http::{not_found, path_config, query_config, Authenticator, BodyLimit, Config};
use stow_objects::Objects;
use utoipa::OpenApi;

pub use state::{ApiState, Stores};

/// Default limit of JSON bodies on this host.
pub const JSON_LIMIT: usize = 1024 * 1024;

/// Whether a caller's id could name a stored record: none holds U+0000 (Postgres text cannot),
/// so such an id is answered as unknown instead of failing in the database.
pub(crate) fn storable(id: &str) -> bool {
    !id.contains('\0')
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("{0}")]
    Config(String),
    #[error("binding {addr}: {source}")]
    Bind {
        addr: String,
        source: std::io::Error,
    },
}

/// Builds the state from configuration (pool, object store, repositories).
pub fn build_state(config: Arc<Config>) -> Result<ApiState, StartError> {
    let db = Db::connect(&config.db_config()).map_err(|e| StartError::Config(e.to_string()))?;
    let url = config
        .object_store_url()
        .map_err(|e| StartError::Config(e.to_string()))?;
    let objects = Objects::from_url(url).map_err(|e| StartError::Config(e.to_string()))?;
    let stores = stow_db::stores(&db);
    Ok(ApiState::new(Arc::clone(&config), db, objects, stores))
}

pub(crate) fn cors() -> actix_cors::Cors {
    actix_cors::Cors::default()
        .allow_any_origin()
        .send_wildcard()
        .allowed_methods(["POST", "OPTIONS"])
        .allowed_headers(["content-type", "idempotency-key"])
        .expose_headers(["x-request-id", "retry-after", "idempotent-replayed"])
        .max_age(86_400)
}

async fn openapi() -> HttpResponse {
    HttpResponse::Ok().json(openapi::ApiDoc::openapi())
}

/// Registers every route of the API host.
pub fn routes(cfg: &mut web::ServiceConfig) {
    // Delivery first: the hottest path, a static prefix matched without a regex (a `{key:.*}`
    // resource pattern is a regex match per request) and before every other route is tried
    // (`/v1/presigned-url/{token}` is a regex match); `deliver` parses workspace and key itself.
    cfg.service(web::scope("/cdn").default_service(web::to(delivery::dispatch)))
        .route("/metrics", web::get().to(stow_http::metrics::render))
        .route("/v1/openapi.json", web::get().to(openapi));
    openapi::api_routes(cfg);
}

pub struct Application {
    port: u16,
    server: actix_web::dev::Server,
    console: Option<(u16, actix_web::dev::Server)>,
    state: web::Data<ApiState>,
}

impl Application {
    /// Binds `CDN_API_ADDR` and builds the server.
    pub fn build(config: Config) -> Result<Self, StartError> {
        let listener = TcpListener::bind(&config.cdn_addr).map_err(|source| StartError::Bind {
            addr: config.cdn_addr.clone(),
            source,
        })?;
        let console = match &config.console_addr {
            Some(addr) => Some(TcpListener::bind(addr).map_err(|source| StartError::Bind {
                addr: addr.clone(),
                source,
            })?),
            None => None,
        };
        let state = build_state(Arc::new(config))?;
        Self::with_listeners(state, listener, console)
    }

    /// Builds the server on an existing listener (tests bind port 0), without the console.
    pub fn with_listener(state: ApiState, listener: TcpListener) -> Result<Self, StartError> {
        Self::with_listeners(state, listener, None)
    }

    /// The API host on `listener` and, given one, the console on `console`.
    pub fn with_listeners(
        state: ApiState,
        listener: TcpListener,
        console: Option<TcpListener>,
    ) -> Result<Self, StartError> {
        stow_http::metrics::handle();
        let port = listener
            .local_addr()
            .map_err(|e| StartError::Config(e.to_string()))?
            .port();
        let config = Arc::clone(&state.config);
        let authenticator = web::Data::new(
            Authenticator::new(
                Arc::clone(&state.stores.accounts),
                Arc::clone(&state.stores.rate_buckets),
                config.key_cache_ttl,
                config.rate_limit_per_second,
                config.rate_limit_burst,
            )
            .with_members(Arc::clone(&state.stores.members)),
        );
        let readiness = web::Data::new(Readiness {
            db: state.db.clone(),
            objects: Some(state.blobs.clone()),
            gates: Vec::new(),
        });
        let state = web::Data::new(state);
        let app_state = state.clone();
        let api_authenticator = authenticator.clone();
        let body_pace = config.body_pace();
        let server = HttpServer::new(move || {
            // runs on every worker thread: the parser's own answers get our envelope there
            stow_http::framework_error::register(stow_http::Flavor::Api);
            App::new()
                .wrap(from_fn(stow_http::request::api_context))
                .app_data(BodyLimit(JSON_LIMIT))
                .app_data(body_pace)
                .app_data(query_config())
                .app_data(path_config())
                .app_data(app_state.clone())
                .app_data(api_authenticator.clone())
                .app_data(readiness.clone())
                .configure(routes)
                .default_service(web::to(not_found))
        })
        .workers(config.workers)
        .shutdown_timeout(config.shutdown_timeout.as_secs())
        .client_request_timeout(config.request_head_timeout)
        .listen(listener)
        .map_err(|e| StartError::Config(e.to_string()))?
        .run();
        let console = match console {
            Some(listener) => Some(console_server(
                port,
                &state,
                &authenticator,
                body_pace,
                listener,
            )?),
            None => None,
        };
        Ok(Self {
            port,
            server,
            console,
            state,
        })
    }

    /// The console's port, when it has a listener.
    pub fn console_port(&self) -> Option<u16> {
        self.console.as_ref().map(|(port, _)| *port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn state(&self) -> web::Data<ApiState> {
        self.state.clone()
    }

    /// Serves until SIGINT/SIGTERM (actix stops accepting, finishes in-flight requests within
    /// the shutdown timeout), with background maintenance running alongside.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let state = self.state.clone();
        let sweeper = tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(3600));
            loop {
                tick.tick().await;
                let before = chrono::Utc::now()
                    - chrono::Duration::hours(cdn_core::idempotency::RETENTION_HOURS);
                match state.stores.idempotency.sweep(before).await {
                    Ok(n) => tracing::info!(swept = n, "idempotency records swept"),
                    Err(e) => tracing::warn!(error = %e, "idempotency sweep failed"),
                }
                sweep_console_sessions(&state).await;
            }
        });
        let maintainer = tokio::spawn(maintain_objects(self.state.clone()));
        let result = match self.console {
            Some((_, console)) => match futures::future::join(self.server, console).await {
                (Err(e), _) | (Ok(()), Err(e)) => Err(e),
                (Ok(()), Ok(())) => Ok(()),
            },
            None => self.server.await,
        };
        sweeper.abort();
        maintainer.abort();
        result
    }
}

/// Every `LIFECYCLE_INTERVAL_SECONDS`: the lifecycle rules enforced, then the usage counts folded
/// (`stow_db::roll_up_usage`).
async fn maintain_objects(state: web::Data<ApiState>) {
    let mut tick = tokio::time::interval(state.config.lifecycle_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let pass = lifecycle::expire_objects(&state, chrono::Utc::now()).await;
        if pass.expired > 0 || pass.failed > 0 {
            tracing::info!(
                expired = pass.expired,
                bytes = pass.bytes,
                failed = pass.failed,
                "lifecycle rules enforced"
            );
        }
        if let Err(e) = stow_db::roll_up_usage(&state.db).await {
            tracing::warn!(error = %e, "folding the usage counts failed");
        }
    }
}

/// Deletes console sessions past their idle or absolute limit (abandoned ones are never
/// presented again, so nothing else would).
async fn sweep_console_sessions(state: &ApiState) {
    let now = chrono::Utc::now();
    let ago = |d: Duration| now - chrono::Duration::from_std(d).unwrap_or(chrono::Duration::zero());
    match state
        .stores
        .console_sessions
        .sweep(
            ago(state.config.console_idle),
            ago(state.config.console_absolute),
        )
        .await
    {
        Ok(n) => tracing::info!(swept = n, "expired console sessions swept"),
        Err(e) => tracing::warn!(error = %e, "console session sweep failed"),
    }
}

/// The console's server (docs/console.md): its own listener and origin, the same state,
/// authenticator (key cache and rate limits) and routes as the API host under `/api`.
fn console_server(
    api_port: u16,
    state: &web::Data<ApiState>,
    authenticator: &web::Data<Authenticator>,
    body_pace: stow_http::idle::BodyPace,
    listener: TcpListener,
) -> Result<(u16, actix_web::dev::Server), StartError> {
    let port = listener
        .local_addr()
        .map_err(|e| StartError::Config(e.to_string()))?
        .port();
    let config = Arc::clone(&state.config);
    let console = web::Data::new(console::Console::new(
        &state.stores,
        auth_core::console_session::Lifetimes {
            idle: config.console_idle,
            absolute: config.console_absolute,
        },
        &config,
        api_port,
    ));
    let (state, authenticator) = (state.clone(), authenticator.clone());
    let server = HttpServer::new(move || {
        stow_http::framework_error::register(stow_http::Flavor::Api);
        App::new()
            .wrap(from_fn(console::security_headers))
            .wrap(from_fn(stow_http::request::api_context))
            .app_data(BodyLimit(JSON_LIMIT))
            .app_data(body_pace)
            .app_data(query_config())
            .app_data(path_config())
            .app_data(state.clone())
            .app_data(authenticator.clone())
            .app_data(console.clone())
            .configure(console::routes)
    })
    .workers(config.workers.min(2))
    .shutdown_timeout(config.shutdown_timeout.as_secs())
    .client_request_timeout(config.request_head_timeout)
    .listen(listener)
    .map_err(|e| StartError::Config(e.to_string()))?
    .run();
    Ok((port, server))
}

impl stow_http::Service for Application {
    fn port(&self) -> u16 {
        self.port
    }

    fn serve(self) -> futures::future::LocalBoxFuture<'static, std::io::Result<()>> {
        Box::pin(self.run_until_stopped())
    }
}

/// The whole `cdn-api` program (see [`stow_http::run_main`]).
pub async fn run_main() -> std::process::ExitCode {
    stow_http::run_main(
        "cdn-api",
        "Stowage's API host: CDN objects, upload URLs, public delivery and log queries.",
        |c| c.cdn_addr.clone(),
        Application::build,
    )
    .await
}
