//! `logs-api`. All logic lives in `logs-http`.

// no production function over 100 lines of code (test code is exempt)
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

/// glibc malloc's free-chunk consolidation across worker threads was a large share of the CPU
/// under load; mimalloc avoids it (the measurements are in docs/benchmarks.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    logs_http::run_main().await
}
