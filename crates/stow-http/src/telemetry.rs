//! Tracing setup: human-readable lines by default, JSON with `LOG_FORMAT=json`.

use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

pub fn init(format: &LogFormat) {
    let filter = EnvFilter::try_from_env("RUST_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false);
    let result = match format {
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
        LogFormat::Human => builder.try_init(),
    };
    // a second init (tests) keeps the first subscriber
    let _ = result;
}
