//! `stowctl`: the admin CLI. All logic lives in `stow-admin`.

// no production function over 100 lines of code (test code is exempt)
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

#[tokio::main]
async fn main() -> std::process::ExitCode {
    stow_admin::main().await
}
