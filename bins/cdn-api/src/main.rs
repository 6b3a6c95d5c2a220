//! `cdn-api`: the API host. All logic lives in `cdn-http`.

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let config = match stow_http::Config::from_env() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cdn-api: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    stow_http::telemetry::init(&config.log_format);
    let addr = config.cdn_addr.clone();
    let app = match cdn_http::Application::build(config) {
        Ok(app) => app,
        Err(e) => {
            eprintln!("cdn-api: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    tracing::info!(addr = %addr, port = app.port(), "cdn-api listening");
    match app.run_until_stopped().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cdn-api: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
