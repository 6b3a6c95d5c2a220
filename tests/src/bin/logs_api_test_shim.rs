//! `logs-api`, built inside the test package so tests can run it as a process.

#[tokio::main]
async fn main() -> std::process::ExitCode {
    logs_http::run_main().await
}
