//! `logs-api`. All logic lives in `logs-http`.

#[tokio::main]
async fn main() -> std::process::ExitCode {
    logs_http::run_main().await
}
