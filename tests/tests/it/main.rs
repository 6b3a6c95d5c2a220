//! The integration tests, one binary (one link step) with a module per area. Each test gets its
//! own database, object-store directory and applications (see `stowage_tests::spawn`). The
//! headless-browser test stays its own binary (`e2e_browser`): `scripts/e2e.sh` runs it alone.

mod binaries;
mod console;
mod deployment;
mod explorer;
mod faults;
mod foundation;
mod hardening;
mod ingest;
mod objects;
mod query;
mod resilience;
mod stowctl;
mod upload_urls;
