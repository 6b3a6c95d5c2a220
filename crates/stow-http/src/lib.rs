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

#![warn(unreachable_pub)]
// no production function over 100 lines of code (test code is exempt)
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod api_routes;
pub mod auth;
pub mod body;
pub mod config;
pub mod error;
pub mod framework_error;
pub mod health;
pub mod idle;
pub mod metrics;
pub mod query;
pub mod rate_limit;
pub mod request;
pub mod telemetry;
pub mod whoami;

pub use auth::{Auth, Authenticator};
pub use body::{BodyLimit, Json};
pub use config::Config;
pub use error::{ApiError, Code};
pub use query::Query;
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

/// JSON 404 for unknown routes; names the fix when the path shows a client's base URL set wrong
/// ([`base_url_hint`]).
pub async fn not_found(req: actix_web::HttpRequest) -> Result<actix_web::HttpResponse, ApiError> {
    let mut message = format!("no route for {} {}", req.method(), req.path());
    if let Some(hint) = base_url_hint(req.path()) {
        message.push_str("; ");
        message.push_str(hint);
    }
    Err(ApiError::new(Code::NotFound, message))
}

/// First segments of the `/v1` routes of both hosts.
const V1_ROUTES: [&str; 8] = [
    "overview",
    "objects",
    "placeholders",
    "presigned-url",
    "whoami",
    "logs",
    "servers",
    "openapi.json",
];

/// The fix for the two base-URL mistakes a path shows: `/v1` twice (the FiveMesh SDK appends
/// `/v1/...` to `FIVEMESH_LOGS_API_URL`, so that setting is the origin without `/v1`), or a `/v1`
/// route without its `/v1` (the SDK's `FIVEMESH_API_URL` is the API base with `/v1`).
pub fn base_url_hint(path: &str) -> Option<&'static str> {
    if path.starts_with("/v1/v1/") {
        return Some(
            "the path has /v1 twice: the client adds /v1 to a base URL that already ends in /v1. \
             For the FiveMesh SDK set FIVEMESH_LOGS_API_URL to the ingestion host's origin without /v1 \
             (e.g. http://127.0.0.1:8081)",
        );
    }
    let first = path.trim_start_matches('/').split('/').next()?;
    V1_ROUTES.contains(&first).then_some(
        "routes start with /v1: the client's base URL is missing it. For the FiveMesh SDK set \
         FIVEMESH_API_URL to the API base with /v1 (e.g. http://127.0.0.1:8080/v1)",
    )
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
    fn serve(self) -> futures::future::LocalBoxFuture<'static, std::io::Result<()>>;
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
    // a database that does not exist or refuses the credentials will not start working by
    // itself: stop now and say so (one that is down starts the service not ready instead)
    if let Some(problem) =
        stow_db::startup_problem(secrecy::ExposeSecret::expose_secret(&config.database_url)).await
    {
        eprintln!("{name}: {problem}");
        return std::process::ExitCode::from(2);
    }
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

#[cfg(test)]
mod base_url_tests {
    use super::base_url_hint;

    #[test]
    fn hints_name_the_setting_to_change() {
        assert!(base_url_hint("/v1/v1/servers/abc/logs")
            .unwrap()
            .contains("FIVEMESH_LOGS_API_URL"));
        for path in [
            "/objects",
            "/presigned-url",
            "/whoami",
            "/logs/query",
            "/placeholders",
        ] {
            assert!(
                base_url_hint(path).unwrap().contains("FIVEMESH_API_URL"),
                "{path}"
            );
        }
        for path in [
            "/",
            "/nope",
            "/v1/nope",
            "/v1/objects/x",
            "/cdn/a/b",
            "/objectsx",
            "/v1v1/objects",
        ] {
            assert_eq!(base_url_hint(path), None, "{path}");
        }
    }
}
