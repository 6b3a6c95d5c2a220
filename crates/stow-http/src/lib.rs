//! HTTP glue shared by `cdn-api` and `logs-api`.
//!
//! # Error layering
//! Core crates return their own transport-neutral errors (`AuthError`, `StoreError`, path and
//! validation errors). Route code converts them into [`ApiError`], which carries a [`Code`]; the
//! code alone decides the HTTP status and the wire name. The envelope depends on the host
//! ([`Flavor`]): the API host answers `{success:false, error:{code,message}, requestId}` with
//! UPPER_SNAKE codes, the ingestion host `{error, message, request_id}` with lower_snake codes.
//! Internal errors are logged with their detail and answered with a generic message: a 500 never
//! carries text from a database, a store or a panic.

pub mod api_routes;
pub mod auth;
pub mod body;
pub mod config;
pub mod error;
pub mod framework_error;
pub mod health;
pub mod idle;
pub mod metrics;
pub mod request;
pub mod telemetry;
pub mod whoami;

pub use auth::{Auth, Authenticator};
pub use body::{BodyLimit, Json};
pub use config::Config;
pub use error::{ApiError, Code};
pub use request::{current_request_id, Flavor, RequestId};

use actix_web::web;

/// Framework-level error handlers so every error is JSON in the host's envelope.
pub fn query_config() -> web::QueryConfig {
    web::QueryConfig::default().error_handler(|err, _req| {
        ApiError::invalid_request(format!("invalid query string: {err}")).into()
    })
}

pub fn path_config() -> web::PathConfig {
    web::PathConfig::default().error_handler(|err, _req| {
        ApiError::invalid_request(format!("invalid path parameter: {err}")).into()
    })
}

/// JSON 404 for unknown routes.
pub async fn not_found(req: actix_web::HttpRequest) -> Result<actix_web::HttpResponse, ApiError> {
    Err(ApiError::new(
        Code::NotFound,
        format!("no route for {} {}", req.method(), req.path()),
    ))
}

/// JSON 405 for a known route with another method.
pub async fn method_not_allowed(
    req: actix_web::HttpRequest,
) -> Result<actix_web::HttpResponse, ApiError> {
    use actix_web::HttpMessage;
    // the route pattern, not the path: a path can hold a secret (an upload-URL token)
    let route = req
        .extensions()
        .get::<request::RouteLabel>()
        .map(|l| l.0.to_owned())
        .or_else(|| req.match_pattern())
        .unwrap_or_else(|| req.path().to_owned());
    Err(ApiError::new(
        Code::MethodNotAllowed,
        format!("method {} is not allowed on {route}", req.method()),
    ))
}

/// A built service: its bound port, and a future that serves until SIGTERM/SIGINT.
pub trait Service {
    fn port(&self) -> u16;
    fn serve(self) -> futures_util::future::LocalBoxFuture<'static, std::io::Result<()>>;
}

/// The whole program of a service binary: configuration from the environment, tracing, build,
/// serve until stopped. Configuration and start-up errors exit with code 2.
pub async fn run_main<S, E>(
    name: &'static str,
    about: &'static str,
    addr: impl Fn(&Config) -> String,
    build: impl FnOnce(Config) -> Result<S, E>,
) -> std::process::ExitCode
where
    S: Service,
    E: std::fmt::Display,
{
    // `--help` and `--version` print and exit before anything is configured, bound or created;
    // any other argument is refused (the services are configured by environment variables)
    clap::Command::new(name)
        .version(env!("CARGO_PKG_VERSION"))
        .about(about)
        .after_help(
            "Configured by environment variables (DATABASE_URL, CDN_API_ADDR, LOGS_API_ADDR, \
             OBJECT_STORE_URL, …): see docs/operations.md, \"Configuration\".",
        )
        .get_matches();
    let config = match Config::from_env() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{name}: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    telemetry::init(&config.log_format);
    let listen = addr(&config);
    let service = match build(config) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{name}: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    tracing::info!(addr = %listen, port = service.port(), "{name} listening");
    match service.serve().await {
        Ok(()) => {
            tracing::info!("{name} stopped");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{name}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
