//! `cdn-api`, built inside the test package so tests can run it as a process.

#[tokio::main]
async fn main() -> std::process::ExitCode {
    api_http::run_main().await
}
