//! Typed configuration from the pinned environment variables. `STOWAGE_CONFIG` may name a file
//! of `NAME=value` lines (dotenv syntax) that sets the same variables; real environment variables
//! win over the file.

use std::time::Duration;

use secrecy::{SecretSlice, SecretString};

mod env;
use env::{default_password_workers, parse_seal_key, parsed, positive, positive_secs, var};
pub use env::{parse_proxies, public_base_url};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogFormat {
    Human,
    Json,
}

#[derive(Debug, Clone)]
pub struct Config {
    /// `DATABASE_URL`; it may carry a password, so it is kept out of `Debug` and logs.
    pub database_url: SecretString,
    pub cdn_addr: String,
    /// The console's own listener (`CONSOLE_ADDR`, default 127.0.0.1:8082; `off` for none).
    pub console_addr: Option<String>,
    /// Console sessions end this long after their last request (`CONSOLE_SESSION_IDLE_MINUTES`).
    pub console_idle: Duration,
    /// …and this long after sign-in whatever their use (`CONSOLE_SESSION_HOURS`).
    pub console_absolute: Duration,
    /// Passwords hashed or checked at once (`PASSWORD_HASH_WORKERS`, default half the cores, at
    /// least one), on the blocking pool: a flood of sign-ins waits for these, never for the
    /// async workers that serve the API and delivery.
    pub password_workers: usize,
    pub logs_addr: String,
    /// Where object bytes live (`OBJECT_STORE_URL`); the API host refuses to start without it
    /// rather than guess a directory ([`Config::object_store_url`]).
    pub object_store_url: Option<String>,
    /// Origin (and path prefix) of `publicUrl`; default `http://{cdn_addr}/cdn`.
    pub public_base_url: String,
    /// Origin of `uploadUrl` (e.g. `https://api.example.com`); default: taken from the request.
    pub api_base_url: Option<String>,
    /// Peers whose `Forwarded` / `X-Forwarded-Host` / `X-Forwarded-Proto` headers are believed
    /// (`TRUSTED_PROXIES`, comma-separated addresses or CIDR ranges); from anyone else those
    /// headers are ignored.
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// A fixed secret for signed continuation tokens and query cursors
    /// (`STOWAGE_SIGNING_SECRET`). Unset (the default), the secrets kept in the database are used,
    /// shared by every instance and rotated with `stowctl signing-secret rotate`. `Debug` shows it
    /// as redacted; read it with `ExposeSecret::expose_secret`.
    pub signing_secret: Option<SecretSlice<u8>>,
    /// The key that seals members' TOTP secrets (`SECOND_FACTOR_KEY`, 32 bytes in Base64). Unset,
    /// members cannot turn on a second factor (the console says so) and one already on cannot be
    /// checked (sign-in answers 503 until it is set again).
    pub second_factor_key: Option<auth_core::second_factor::SealKey>,
    /// How long an instance reuses the signing secrets it read from the database: a rotation
    /// reaches every instance within this.
    pub signing_keys_ttl: Duration,
    pub rate_limit_per_second: u32,
    pub rate_limit_burst: u32,
    pub key_cache_ttl: Duration,
    pub db_max_connections: usize,
    pub db_acquire_timeout: Duration,
    pub db_statement_timeout: Duration,
    /// Batches one `logs-api` stores at once, queued for a writer or in its transaction
    /// (`LOGS_INGEST_CONCURRENCY`); further batches wait for a slot.
    pub ingest_concurrency: usize,
    /// Writer transactions one `logs-api` runs at once, each storing every batch queued for it
    /// (`LOGS_INGEST_WRITERS`); each has a database connection of its own, beside the pool.
    pub ingest_writers: usize,
    pub max_bulk_files: usize,
    pub max_bulk_delete_paths: usize,
    pub cursor_ttl: Duration,
    /// How many events matching the other filters a `data` log filter may examine per request
    /// (`LOGS_DATA_SCAN_LIMIT`).
    pub data_scan_limit: usize,
    /// Renditions (resized images) made at once on this instance; more wait
    /// (`RENDITION_CONCURRENCY`, default the number of CPUs).
    pub rendition_concurrency: usize,
    /// Megabytes the renditions being made on this instance may take together; more wait
    /// (`RENDITION_MEMORY_MB`; a rendition that needs more than all of it takes all of it).
    pub rendition_memory_mb: u32,
    /// ZIP downloads running at once on this instance; more get 429 (`ZIP_DOWNLOADS`).
    pub zip_concurrency: usize,
    /// How often a `cdn-api` enforces the lifecycle rules and folds the usage counts
    /// (`LIFECYCLE_INTERVAL_SECONDS`).
    pub lifecycle_interval: Duration,
    /// Open live tails per organization, across instances (`LOGS_TAIL_LIMIT`).
    pub tail_limit: usize,
    /// How often a live tail looks for new batches (`LOGS_TAIL_POLL_MS`).
    pub tail_poll: Duration,
    /// A live tail with nothing to send sends a comment this often (`LOGS_TAIL_HEARTBEAT_SECONDS`).
    pub tail_heartbeat: Duration,
    /// An export or live tail whose client stops reading gives its slot up after this long
    /// (`LOGS_STREAM_STALL_SECONDS`).
    pub stream_stall: Duration,
    pub shutdown_timeout: Duration,
    /// A request body that sends no byte for this long is answered 408 (`BODY_IDLE_TIMEOUT_SECONDS`).
    pub body_idle_timeout: Duration,
    /// Past `body_idle_timeout` from its start, a request body must average this many bytes per
    /// second, or it is answered 408 (`BODY_MIN_RATE_BYTES_PER_SECOND`).
    pub body_min_rate: u32,
    /// A request head (request line and headers) that has not fully arrived this long after the
    /// connection opened is answered 408 (`REQUEST_HEAD_TIMEOUT_SECONDS`).
    pub request_head_timeout: Duration,
    /// Alert destinations may be `http` and loopback addresses (`ALERTS_ALLOW_INSECURE`, default
    /// false): for tests and receivers on the same machine. Private and link-local addresses stay
    /// refused.
    pub alerts_allow_insecure: bool,
    /// How often a logs host's delivery worker looks for due alert deliveries (`ALERTS_POLL_MS`).
    pub alerts_poll: Duration,
    /// The console's address as its users reach it, for links in alert messages
    /// (`CONSOLE_PUBLIC_URL`; default `http://{CONSOLE_ADDR}`).
    pub console_public_url: String,
    pub log_format: LogFormat,
    pub workers: usize,
}

#[derive(Debug, thiserror::Error)]
#[error("configuration: {0}")]
pub struct ConfigError(pub String);

/// The `SECOND_FACTOR_KEY` of [`Config::for_tests`] (a process a test starts is given the same,
/// so it can open what the test's own services sealed).
pub const TEST_SECOND_FACTOR_KEY: [u8; 32] = [42; 32];

impl Config {
    /// How request bodies must arrive ([`crate::idle`]).
    pub fn body_pace(&self) -> crate::idle::BodyPace {
        crate::idle::BodyPace {
            idle: self.body_idle_timeout,
            min_rate: self.body_min_rate,
        }
    }
}

pub const DEFAULT_DATABASE_URL: &str = "postgres://postgres@127.0.0.1:5432/stowage";

/// How long an instance reuses the signing secrets it read from the database.
pub const SIGNING_KEYS_TTL: Duration = Duration::from_secs(60);

/// What the API host answers when `OBJECT_STORE_URL` is not set.
pub const NO_OBJECT_STORE: &str = "OBJECT_STORE_URL is not set: say where object bytes live, \
     e.g. file:///var/lib/stowage/objects (an absolute directory), s3://bucket[/prefix] (with the \
     AWS_* settings) or memory:// (nothing kept; for tests)";

impl Config {
    /// The object store's URL, or [`NO_OBJECT_STORE`].
    pub fn object_store_url(&self) -> Result<&str, ConfigError> {
        self.object_store_url
            .as_deref()
            .ok_or_else(|| ConfigError(NO_OBJECT_STORE.into()))
    }

    /// Loads `STOWAGE_CONFIG` (if set) then reads the environment.
    pub fn from_env() -> Result<Self, ConfigError> {
        if let Some(file) = var("STOWAGE_CONFIG") {
            dotenvy::from_path(&file)
                .map_err(|e| ConfigError(format!("STOWAGE_CONFIG={file}: {e}")))?;
        }
        let cdn_addr = var("CDN_API_ADDR").unwrap_or_else(|| "127.0.0.1:8080".into());
        let object_store_url = var("OBJECT_STORE_URL");
        let public_base_url = public_base_url(
            &var("PUBLIC_BASE_URL").unwrap_or_else(|| format!("http://{cdn_addr}/cdn")),
        )?;
        Ok(Self {
            database_url: SecretString::from(
                var("DATABASE_URL").unwrap_or_else(|| DEFAULT_DATABASE_URL.into()),
            ),
            logs_addr: var("LOGS_API_ADDR").unwrap_or_else(|| "127.0.0.1:8081".into()),
            cdn_addr,
            console_addr: match var("CONSOLE_ADDR") {
                Some(off) if off.trim().eq_ignore_ascii_case("off") => None,
                Some(addr) => Some(addr.trim().to_owned()),
                None => Some("127.0.0.1:8082".into()),
            },
            console_idle: Duration::from_secs(
                60 * positive("CONSOLE_SESSION_IDLE_MINUTES", 30, "minutes")?,
            ),
            console_absolute: Duration::from_secs(
                3600 * positive("CONSOLE_SESSION_HOURS", 12, "hours")?,
            ),
            password_workers: positive(
                "PASSWORD_HASH_WORKERS",
                default_password_workers(),
                "workers",
            )? as usize,
            object_store_url,
            public_base_url,
            api_base_url: var("API_BASE_URL").map(|u| u.trim_end_matches('/').to_owned()),
            trusted_proxies: match var("TRUSTED_PROXIES") {
                Some(list) => parse_proxies(&list)?,
                None => Vec::new(),
            },
            signing_secret: signing_secret()?,
            second_factor_key: var("SECOND_FACTOR_KEY")
                .map(|b64| parse_seal_key(&b64))
                .transpose()?,
            alerts_allow_insecure: parsed("ALERTS_ALLOW_INSECURE", false)?,
            alerts_poll: Duration::from_millis(positive("ALERTS_POLL_MS", 250, "milliseconds")?),
            console_public_url: var("CONSOLE_PUBLIC_URL")
                .map(|u| u.trim().trim_end_matches('/').to_owned())
                .unwrap_or_else(|| {
                    format!(
                        "http://{}",
                        var("CONSOLE_ADDR").unwrap_or_else(|| "127.0.0.1:8082".into())
                    )
                }),
            signing_keys_ttl: SIGNING_KEYS_TTL,
            rate_limit_per_second: parsed("RATE_LIMIT_PER_SECOND", 500)?,
            rate_limit_burst: parsed("RATE_LIMIT_BURST", 1000)?,
            key_cache_ttl: Duration::from_secs(parsed("KEY_CACHE_SECONDS", 5)?),
            db_max_connections: parsed("DATABASE_MAX_CONNECTIONS", 16)?,
            db_acquire_timeout: Duration::from_millis(parsed("DATABASE_ACQUIRE_TIMEOUT_MS", 5000)?),
            db_statement_timeout: Duration::from_millis(parsed(
                "DATABASE_STATEMENT_TIMEOUT_MS",
                10_000,
            )?),
            ingest_concurrency: positive("LOGS_INGEST_CONCURRENCY", 16, "batches")? as usize,
            ingest_writers: positive(
                "LOGS_INGEST_WRITERS",
                stow_db::logs::WRITERS as u64,
                "transactions",
            )? as usize,
            max_bulk_files: parsed("MAX_BULK_FILES", 20)?,
            max_bulk_delete_paths: parsed("MAX_BULK_DELETE_PATHS", 1000)?,
            cursor_ttl: Duration::from_secs(parsed("QUERY_CURSOR_TTL_SECONDS", 900)?),
            data_scan_limit: parsed::<usize>("LOGS_DATA_SCAN_LIMIT", 100_000)?.max(1),
            rendition_concurrency: parsed::<usize>(
                "RENDITION_CONCURRENCY",
                std::thread::available_parallelism().map_or(2, |n| n.get()),
            )?
            .max(1),
            zip_concurrency: parsed::<usize>("ZIP_DOWNLOADS", 16)?.max(1),
            rendition_memory_mb: parsed::<u32>("RENDITION_MEMORY_MB", 768)?.max(1),
            lifecycle_interval: positive_secs("LIFECYCLE_INTERVAL_SECONDS", 300)?,
            tail_limit: parsed("LOGS_TAIL_LIMIT", 10)?,
            tail_poll: Duration::from_millis(parsed::<u64>("LOGS_TAIL_POLL_MS", 100)?.max(10)),
            tail_heartbeat: positive_secs("LOGS_TAIL_HEARTBEAT_SECONDS", 15)?,
            stream_stall: positive_secs("LOGS_STREAM_STALL_SECONDS", 30)?,
            shutdown_timeout: Duration::from_secs(parsed("SHUTDOWN_TIMEOUT_SECONDS", 30)?),
            body_idle_timeout: positive_secs("BODY_IDLE_TIMEOUT_SECONDS", 30)?,
            body_min_rate: positive("BODY_MIN_RATE_BYTES_PER_SECOND", 500, "bytes per second")?
                .try_into()
                .map_err(|_| ConfigError("BODY_MIN_RATE_BYTES_PER_SECOND is too large".into()))?,
            request_head_timeout: positive_secs("REQUEST_HEAD_TIMEOUT_SECONDS", 30)?,
            log_format: log_format()?,
            workers: parsed(
                "WORKERS",
                std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(2),
            )?,
        })
    }

    /// Settings for tests: everything explicit, nothing read from the environment.
    pub fn for_tests(database_url: String, object_store_url: String) -> Self {
        Self {
            database_url: SecretString::from(database_url),
            cdn_addr: "127.0.0.1:0".into(),
            console_addr: None,
            console_idle: Duration::from_secs(30 * 60),
            console_absolute: Duration::from_secs(12 * 3600),
            password_workers: 2,
            logs_addr: "127.0.0.1:0".into(),
            object_store_url: Some(object_store_url),
            public_base_url: "http://cdn.test/cdn".into(),
            api_base_url: None,
            trusted_proxies: Vec::new(),
            // the database's secrets, read afresh for every request (a rotation shows at once)
            signing_secret: None,
            second_factor_key: Some(auth_core::second_factor::SealKey::new(
                TEST_SECOND_FACTOR_KEY,
            )),
            // the tests' receivers listen on loopback
            alerts_allow_insecure: true,
            alerts_poll: Duration::from_millis(50),
            console_public_url: "http://console.test".into(),
            signing_keys_ttl: Duration::ZERO,
            rate_limit_per_second: 10_000,
            rate_limit_burst: 10_000,
            key_cache_ttl: Duration::from_secs(0),
            db_max_connections: 8,
            db_acquire_timeout: Duration::from_secs(5),
            db_statement_timeout: Duration::from_secs(10),
            ingest_concurrency: 16,
            ingest_writers: stow_db::logs::WRITERS,
            max_bulk_files: 20,
            max_bulk_delete_paths: 1000,
            cursor_ttl: Duration::from_secs(900),
            data_scan_limit: 100_000,
            rendition_concurrency: 2,
            zip_concurrency: 16,
            rendition_memory_mb: 768,
            lifecycle_interval: Duration::from_secs(300),
            tail_limit: 10,
            tail_poll: Duration::from_millis(50),
            tail_heartbeat: Duration::from_secs(15),
            stream_stall: Duration::from_secs(30),
            shutdown_timeout: Duration::from_secs(5),
            body_idle_timeout: Duration::from_secs(30),
            body_min_rate: 500,
            request_head_timeout: Duration::from_secs(30),
            log_format: LogFormat::Human,
            workers: 2,
        }
    }

    pub fn db_config(&self) -> stow_db::DbConfig {
        stow_db::DbConfig {
            url: self.database_url.clone(),
            max_connections: self.db_max_connections,
            acquire_timeout: self.db_acquire_timeout,
            statement_timeout: self.db_statement_timeout,
        }
    }
}

/// `STOWAGE_SIGNING_SECRET`, at least 16 characters when set.
fn signing_secret() -> Result<Option<SecretSlice<u8>>, ConfigError> {
    match var("STOWAGE_SIGNING_SECRET") {
        Some(s) if s.len() >= 16 => Ok(Some(SecretSlice::from(s.into_bytes()))),
        Some(_) => Err(ConfigError(
            "STOWAGE_SIGNING_SECRET must be at least 16 characters".into(),
        )),
        None => Ok(None),
    }
}

/// `LOG_FORMAT`: `human` (the default) or `json`.
fn log_format() -> Result<LogFormat, ConfigError> {
    match var("LOG_FORMAT").as_deref() {
        None | Some("human") => Ok(LogFormat::Human),
        Some("json") => Ok(LogFormat::Json),
        Some(other) => Err(ConfigError(format!(
            "LOG_FORMAT={other:?}: use human or json"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_base_url_must_be_an_absolute_http_url() {
        for (raw, want) in [
            (
                "https://cdn.example.com/cdn/",
                "https://cdn.example.com/cdn",
            ),
            ("http://127.0.0.1:8080/cdn", "http://127.0.0.1:8080/cdn"),
            (" https://media.example.com ", "https://media.example.com"),
            ("https://[::1]:8080/cdn//", "https://[::1]:8080/cdn"),
        ] {
            assert_eq!(public_base_url(raw).unwrap(), want, "{raw}");
        }
        for raw in [
            "javascript:alert(1)",
            "JavaScript://%0Aalert(1)",
            "data:text/html,x",
            "ftp://cdn.example.com/cdn",
            "/cdn",
            "cdn.example.com/cdn",
            "https://",
            "https://cdn.example.com/cdn?x=1",
            "https://cdn.example.com/cdn#top",
            "https://user:pw@cdn.example.com/cdn",
            "",
        ] {
            let e = public_base_url(raw).unwrap_err().to_string();
            assert!(e.contains("PUBLIC_BASE_URL"), "{raw}: {e}");
        }
    }

    #[test]
    fn debug_never_prints_the_signing_secret_or_the_database_password() {
        let mut config = Config::for_tests(
            "postgres://stowage_app:hunter2-db-password@db:5432/stowage".into(),
            "memory://".into(),
        );
        config.signing_secret = Some(SecretSlice::from(
            b"test-signing-secret-0123456789".to_vec(),
        ));
        let shown = format!("{config:?} {:?}", config.db_config());
        assert!(!shown.contains("test-signing-secret"), "{shown}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(
            shown.contains("signing_secret") && shown.contains("database_url"),
            "{shown}"
        );
    }

    #[test]
    fn trusted_proxies_are_addresses_or_ranges() {
        let list = parse_proxies(" 10.0.0.7, 192.168.0.0/16 ,::1,").unwrap();
        assert_eq!(list.len(), 3);
        let ip = |s: &str| s.parse::<std::net::IpAddr>().unwrap();
        assert!(list.iter().any(|n| n.contains(&ip("10.0.0.7"))));
        assert!(!list.iter().any(|n| n.contains(&ip("10.0.0.8"))));
        assert!(list.iter().any(|n| n.contains(&ip("192.168.4.1"))));
        assert!(list.iter().any(|n| n.contains(&ip("::1"))));
        assert!(parse_proxies("").unwrap().is_empty());
        let err = parse_proxies("10.0.0.7,proxy.local").unwrap_err();
        assert!(err.0.contains("`proxy.local`"), "{err}");
        assert!(parse_proxies("10.0.0.0/33").is_err());
    }
}
