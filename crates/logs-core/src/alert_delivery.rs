//! The pure rules of sending alerts (issue 41): which destination addresses are accepted, which
//! network addresses may be connected to (no SSRF), what is shown of an address, how long to
//! wait before trying again, and what Discord's rate-limit answers ask.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use chrono::Duration;
use url::Url;

use crate::alert_store::DestinationKind;

/// The first retry waits about this long; each next one twice as long…
pub const FIRST_RETRY: Duration = Duration::seconds(5);
/// …up to this.
pub const LONGEST_RETRY: Duration = Duration::hours(1);
/// Characters of a destination's address.
pub const MAX_URL_CHARS: usize = 2048;

/// What the operator allows besides public HTTPS addresses (`ALERTS_ALLOW_INSECURE`): `http`,
/// loopback addresses and any host for Discord destinations — for tests and local receivers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Allow {
    pub insecure: bool,
}

/// Hosts a Discord webhook address may have.
const DISCORD_HOSTS: [&str; 5] = [
    "discord.com",
    "discordapp.com",
    "ptb.discord.com",
    "canary.discord.com",
    "ptb.discordapp.com",
];

/// A destination address, checked: https (http only when allowed), a host, no user name or
/// password, no fragment; a Discord destination on Discord's hosts under `/api/webhooks/`.
/// Addresses the host resolves to are checked when connecting ([`ip_allowed`]).
pub fn check_url(kind: DestinationKind, raw: &str, allow: Allow) -> Result<Url, String> {
    let raw = raw.trim();
    let chars = raw.chars().count();
    if chars == 0 || chars > MAX_URL_CHARS {
        return Err(format!(
            "`url` must be 1 to {MAX_URL_CHARS} characters (got {chars})"
        ));
    }
    let url = Url::parse(raw).map_err(|e| format!("`url` is not an absolute URL: {e}"))?;
    match url.scheme() {
        "https" => {}
        "http" if allow.insecure => {}
        "http" => {
            return Err(
                "`url` must use https (http is allowed only when the operator sets ALERTS_ALLOW_INSECURE)"
                    .into(),
            )
        }
        other => return Err(format!("`url` must use https; got `{other}:`")),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("`url` may not carry a user name or password".into());
    }
    if url.fragment().is_some() {
        return Err("`url` may not have a fragment (`#…`)".into());
    }
    let Some(host) = url.host_str() else {
        return Err("`url` needs a host".into());
    };
    if let Ok(ip) = host.trim_matches(['[', ']']).parse::<IpAddr>() {
        if !ip_allowed(ip, allow) {
            return Err(format!(
                "`url` names {ip}, a private, loopback, link-local or otherwise internal address"
            ));
        }
    }
    if kind == DestinationKind::Discord && !allow.insecure {
        let host = host.to_ascii_lowercase();
        if !DISCORD_HOSTS.contains(&host.as_str()) || !url.path().starts_with("/api/webhooks/") {
            return Err(
                "`url` of a Discord destination is a webhook address: https://discord.com/api/webhooks/<id>/<token>"
                    .into(),
            );
        }
    }
    Ok(url)
}

/// What the API shows of an address: its origin and, for Discord, the webhook's id (never the
/// token, nor a generic webhook's path or query, which may hold credentials).
pub fn url_hint(kind: DestinationKind, url: &Url) -> String {
    let origin = url.origin().ascii_serialization();
    match kind {
        DestinationKind::Discord => {
            let id = url
                .path_segments()
                .and_then(|mut s| s.nth(2))
                .unwrap_or_default();
            format!("{origin}/api/webhooks/{id}/…")
        }
        DestinationKind::Webhook if url.path() == "/" && url.query().is_none() => {
            format!("{origin}/")
        }
        DestinationKind::Webhook => format!("{origin}/…"),
    }
}

/// Whether a resolved address may be connected to: public unicast only — never private,
/// shared (CGNAT), link-local (the cloud metadata address among them), unspecified, multicast,
/// broadcast, documentation or benchmarking ranges; loopback only when the operator allows
/// insecure destinations. IPv4 inside IPv6 is judged as IPv4 — mapped (`::ffff:a.b.c.d`),
/// compatible (`::a.b.c.d`), NAT64 (`64:ff9b::/96`) and 6to4 (`2002:aabb:ccdd::/48`) — and the
/// forms whose IPv4 cannot be judged are refused: local NAT64 (`64:ff9b:1::/48`), Teredo
/// (`2001::/32`) and discard-only (`100::/64`).
pub fn ip_allowed(ip: IpAddr, allow: Allow) -> bool {
    match ip {
        IpAddr::V4(v4) => v4_allowed(v4, allow),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return v4_allowed(v4, allow);
            }
            let s = v6.segments();
            let o = v6.octets();
            let last_v4 = Ipv4Addr::new(o[12], o[13], o[14], o[15]);
            if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
                return v4_allowed(last_v4, allow);
            }
            if v6.is_loopback() {
                return allow.insecure;
            }
            // IPv4-compatible (deprecated), not `::` itself
            if s[..6] == [0; 6] && !v6.is_unspecified() {
                return v4_allowed(last_v4, allow);
            }
            // 6to4: the IPv4 in the second and third segments
            if s[0] == 0x2002 {
                return v4_allowed(Ipv4Addr::new(o[2], o[3], o[4], o[5]), allow);
            }
            if (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1) // local-use NAT64
                || (s[0] == 0x2001 && s[1] == 0) // Teredo
                || (s[0] == 0x100 && s[1..4] == [0, 0, 0])
            // discard-only
            {
                return false;
            }
            !(v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00 // unique local
                || (s[0] & 0xffc0) == 0xfe80 // link-local
                || (s[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
                || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
                || v6 == Ipv6Addr::from([0u8; 16]))
        }
    }
}

fn v4_allowed(v4: Ipv4Addr, allow: Allow) -> bool {
    if v4.is_loopback() {
        return allow.insecure;
    }
    let o = v4.octets();
    !(v4.is_private()
        || v4.is_link_local()
        || v4.is_unspecified()
        || v4.is_broadcast()
        || v4.is_multicast()
        || v4.is_documentation()
        || o[0] == 0 // "this network"
        || (o[0] == 100 && (o[1] & 0xc0) == 64) // shared address space (CGNAT)
        || (o[0] == 192 && o[1] == 0 && o[2] == 0) // IETF protocol assignments
        || (o[0] == 198 && (o[1] & 0xfe) == 18) // benchmarking
        || o[0] >= 240) // reserved
}

/// How long to wait after failed attempt number `attempt` (1 for the first): 5 s doubling up
/// to an hour, times `0.5 + jitter / 2` (`jitter` in `[0, 1)`), so many deliveries that failed
/// together do not come back together.
pub fn backoff(attempt: i32, jitter: f64) -> Duration {
    let doublings = attempt.clamp(1, 20) - 1;
    let base = FIRST_RETRY
        .num_milliseconds()
        .saturating_mul(1i64 << doublings)
        .min(LONGEST_RETRY.num_milliseconds());
    let factor = 0.5 + jitter.clamp(0.0, 1.0) / 2.0;
    Duration::milliseconds((base as f64 * factor) as i64)
}

/// What Discord's answer asks of the next request to the same webhook.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RateLimit {
    /// Nothing: send on.
    None,
    /// The webhook's bucket is empty (`X-RateLimit-Remaining: 0`): wait this long before the
    /// next message to it (this one went through).
    Drained(Duration),
    /// 429: this message was not taken; again after this long. `global`: every webhook waits.
    Limited { wait: Duration, global: bool },
}

/// Reads Discord's rate-limit answer: the status, `X-RateLimit-Remaining`,
/// `X-RateLimit-Reset-After` (seconds), `Retry-After` (seconds), `X-RateLimit-Global` or
/// `X-RateLimit-Scope: global`, and the 429 body's `retry_after` (seconds, fractional) and
/// `global`.
pub fn discord_rate_limit(
    status: u16,
    remaining: Option<&str>,
    reset_after: Option<&str>,
    retry_after_header: Option<&str>,
    global_header: bool,
    body: Option<&serde_json::Value>,
) -> RateLimit {
    let seconds = |s: Option<&str>| s.and_then(|s| s.trim().parse::<f64>().ok());
    let span = |s: f64| Duration::milliseconds((s.clamp(0.0, 3600.0) * 1000.0).ceil() as i64);
    if status == 429 {
        let wait = body
            .and_then(|b| b.get("retry_after"))
            .and_then(serde_json::Value::as_f64)
            .or_else(|| seconds(retry_after_header))
            .or_else(|| seconds(reset_after))
            .unwrap_or(1.0);
        let global = global_header
            || body
                .and_then(|b| b.get("global"))
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false);
        return RateLimit::Limited {
            wait: span(wait),
            global,
        };
    }
    if remaining.map(str::trim) == Some("0") {
        if let Some(after) = seconds(reset_after) {
            return RateLimit::Drained(span(after));
        }
    }
    RateLimit::None
}

#[cfg(test)]
#[path = "alert_delivery_tests.rs"]
mod tests;
