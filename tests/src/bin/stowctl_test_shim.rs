//! The `stowctl` entry point, built inside the test package so tests can run it as a process
//! (`CARGO_BIN_EXE_*` only names binaries of the same package).

#[tokio::main]
async fn main() -> std::process::ExitCode {
    stow_admin::main().await
}
