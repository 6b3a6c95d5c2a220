//! Reading one setting: the helpers [`super::Config::from_env`] is written in, each naming the
//! variable and its limit when a value is refused.

use std::time::Duration;

use super::ConfigError;

pub(super) fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

pub(super) fn parsed<T: std::str::FromStr>(name: &str, default: T) -> Result<T, ConfigError>
where
    T::Err: std::fmt::Display,
{
    match var(name) {
        None => Ok(default),
        Some(v) => v
            .trim()
            .parse()
            .map_err(|e| ConfigError(format!("{name}={v:?} is not valid: {e}"))),
    }
}

/// `SECOND_FACTOR_KEY`: 32 random bytes in standard Base64 (`openssl rand -base64 32`).
pub(super) fn parse_seal_key(b64: &str) -> Result<auth_core::second_factor::SealKey, ConfigError> {
    auth_core::second_factor::SealKey::from_base64(b64).map_err(|_| {
        ConfigError(
            "SECOND_FACTOR_KEY must be 32 bytes in standard Base64 (make one with `openssl rand -base64 32`)".into(),
        )
    })
}

/// `TRUSTED_PROXIES`: addresses (`10.0.0.7`, `::1`) and CIDR ranges (`10.0.0.0/8`), comma-separated.
pub fn parse_proxies(list: &str) -> Result<Vec<ipnet::IpNet>, ConfigError> {
    list.split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(|entry| {
            entry
                .parse::<ipnet::IpNet>()
                .or_else(|_| entry.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                .map_err(|_| {
                    ConfigError(format!(
                        "TRUSTED_PROXIES: `{entry}` is not an IP address or CIDR range (e.g. 10.0.0.7, 10.0.0.0/8, ::1)"
                    ))
                })
        })
        .collect()
}

/// `PUBLIC_BASE_URL` without trailing slashes: an absolute `http` or `https` URL with a host and no
/// query or fragment. It becomes every `publicUrl` and the console's "Open" links, so anything
/// else (`javascript:…`, a relative path) is refused at start-up.
pub fn public_base_url(raw: &str) -> Result<String, ConfigError> {
    let trimmed = raw.trim().trim_end_matches('/');
    let refuse = |why: &str| {
        ConfigError(format!(
            "PUBLIC_BASE_URL must be an absolute http:// or https:// URL such as https://cdn.example.com/cdn ({why}; got {raw:?})"
        ))
    };
    let url = url::Url::parse(trimmed).map_err(|e| refuse(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(refuse("the scheme is not http or https"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(refuse("it has no host"));
    }
    if url.query().is_some() || url.fragment().is_some() || !url.username().is_empty() {
        return Err(refuse("it has a query, a fragment or credentials"));
    }
    Ok(trimmed.to_owned())
}

/// A whole number of `unit`s, at least 1 (0 would refuse every body or end every session).
pub(super) fn positive(name: &str, default: u64, unit: &str) -> Result<u64, ConfigError> {
    match parsed(name, default)? {
        0 => Err(ConfigError(format!("{name} must be at least 1 ({unit})"))),
        n => Ok(n),
    }
}

/// Half the machine's cores, at least one: password hashing never takes every core.
pub(super) fn default_password_workers() -> u64 {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    (cores as u64 / 2).max(1)
}

pub(super) fn positive_secs(name: &str, default: u64) -> Result<Duration, ConfigError> {
    positive(name, default, "seconds").map(Duration::from_secs)
}
