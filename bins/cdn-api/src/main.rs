//! `cdn-api`. All logic lives in `cdn-http`.

#[tokio::main]
async fn main() -> std::process::ExitCode {
    cdn_http::run_main().await
}
