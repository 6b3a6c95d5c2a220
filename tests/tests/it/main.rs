//! The integration tests, one binary (one link step) with a module per area. Each test gets its
//! own database, object-store directory and applications (see `stowage_tests::spawn`). The
//! headless-browser tests are their own binaries (`e2e_browser`, `console_browser`): `scripts/e2e.sh`
//! runs them.

mod alerts;
mod binaries;
mod console;
mod deployment;
mod explorer;
mod faults;
mod foundation;
mod hardening;
mod ingest;
mod ingest_concurrency;
mod instances;
mod members;
mod objects;
mod query;
mod resilience;
mod stowctl;
mod upload_urls;
