//! `cdn-api`. All logic lives in `api-http`.

/// glibc malloc's free-chunk consolidation across worker threads was a large share of the CPU
/// under load; mimalloc avoids it (the measurements are in docs/benchmarks.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    api_http::run_main().await
}
