//! Tracing setup: human-readable lines by default, JSON with `LOG_FORMAT=json`; colour only when
//! stdout is a terminal (no escape codes in journald, files or pipes).
//!
//! actix-http's connection dispatcher logs every malformed request it refuses (a bad request line
//! or header, a head too large, a slow head) at ERROR, before any of our code sees the request, so
//! anyone could fill the error log by sending garbage. Those lines are let through at most once
//! per [`CONNECTION_ERROR_LOG_INTERVAL`]; everything else is logged as the filter says.

use std::time::Duration;

use tracing::{Level, Metadata};
use tracing_subscriber::filter::DynFilterFn;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::prelude::*;
use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;
use crate::error::LogThrottle;

/// How often a connection-level error from actix-http's dispatcher is logged at most.
pub const CONNECTION_ERROR_LOG_INTERVAL: Duration = Duration::from_secs(10);

/// An error actix-http's HTTP/1 dispatcher logs for a connection (mostly a client's malformed
/// request).
fn is_connection_error(meta: &Metadata<'_>) -> bool {
    *meta.level() == Level::ERROR && meta.target().starts_with("actix_http::h1")
}

/// The subscriber: `filter`, the format (coloured when `ansi`), and the connection-error
/// throttle.
fn subscriber<W>(
    format: &LogFormat,
    filter: EnvFilter,
    writer: W,
    ansi: bool,
    throttle: &'static LogThrottle,
) -> impl tracing::Subscriber + Send + Sync
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let quiet = DynFilterFn::new(move |meta, _| !is_connection_error(meta) || throttle.ready());
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(writer)
        .with_ansi(ansi)
        .with_target(false);
    let fmt = match format {
        LogFormat::Json => fmt.json().flatten_event(true).boxed(),
        LogFormat::Human => fmt.boxed(),
    };
    tracing_subscriber::registry()
        .with(filter)
        .with(fmt.with_filter(quiet))
}

static CONNECTION_ERRORS: LogThrottle = LogThrottle::new(CONNECTION_ERROR_LOG_INTERVAL);

pub fn init(format: &LogFormat) {
    let filter = EnvFilter::try_from_env("RUST_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    // also routes `log` records (actix-server, actix-multipart) into the subscriber; a second
    // init (tests) keeps the first subscriber
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stdout());
    let _ = subscriber(format, filter, std::io::stdout, ansi, &CONNECTION_ERRORS).try_init();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Lines {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Lines {
        type Writer = Lines;
        fn make_writer(&'a self) -> Lines {
            self.clone()
        }
    }

    #[test]
    fn a_flood_of_malformed_requests_logs_one_line_per_interval() {
        static THROTTLE: LogThrottle = LogThrottle::new(Duration::from_secs(3600));
        let lines = Lines::default();
        let sub = subscriber(
            &LogFormat::Human,
            EnvFilter::new("info"),
            lines.clone(),
            false,
            &THROTTLE,
        );
        tracing::subscriber::with_default(sub, || {
            for _ in 0..100 {
                tracing::error!(target: "actix_http::h1::dispatcher", "stream error: Request parse error: Invalid Header provided");
            }
            tracing::error!("our own error");
            tracing::error!("our own error");
            tracing::info!(target: "actix_http::h1::dispatcher", "not an error");
        });
        let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text.matches("stream error").count(), 1, "{text}");
        assert_eq!(text.matches("our own error").count(), 2, "{text}");
        assert_eq!(text.matches("not an error").count(), 1, "{text}");
        assert!(
            !text.contains('\x1b'),
            "no colour codes off a terminal: {text:?}"
        );
    }
}
