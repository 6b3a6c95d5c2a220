//! `stowctl`: the admin CLI. All logic lives in `stow-admin`.

#[tokio::main]
async fn main() -> std::process::ExitCode {
    stow_admin::main().await
}
