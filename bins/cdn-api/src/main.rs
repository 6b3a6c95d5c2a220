//! `cdn-api`. All logic lives in `cdn-http`.

/// Under ingestion load glibc malloc (free-chunk consolidation across worker threads) took ~45%
/// of `logs-api`'s CPU samples; with mimalloc the allocator is ~20%.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    cdn_http::run_main().await
}
