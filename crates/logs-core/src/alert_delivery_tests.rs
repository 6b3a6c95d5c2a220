use super::*;

const STRICT: Allow = Allow { insecure: false };
const LOOSE: Allow = Allow { insecure: true };

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

#[test]
fn only_public_unicast_addresses_are_reached() {
    for public in [
        "1.1.1.1",
        "162.159.128.233",
        "2606:4700::6810:84e5",
        "2002:a29f:80e9::1",  // 6to4 of a public address
        "64:ff9b::a29f:80e9", // NAT64 of a public address
    ] {
        assert!(ip_allowed(ip(public), STRICT), "{public}");
    }
    for internal in [
        "127.0.0.1",
        "10.0.0.1",
        "172.16.0.1",
        "172.31.255.255",
        "192.168.1.1",
        "169.254.169.254", // cloud metadata
        "100.64.0.1",
        "0.0.0.0",
        "255.255.255.255",
        "224.0.0.1",
        "192.0.0.8",
        "198.18.0.1",
        "240.0.0.1",
        "::1",
        "::",
        "fc00::1",
        "fd12:3456::1",
        "fe80::1",
        "::ffff:127.0.0.1",
        "::ffff:169.254.169.254",
        "64:ff9b::a00:1", // NAT64 of 10.0.0.1
        "2001:db8::1",
        // IPv4 inside IPv6 in every other form (issue 58: these were accepted)
        "::169.254.169.254",    // IPv4-compatible
        "::a00:1",              // IPv4-compatible 10.0.0.1
        "2002:a9fe:a9fe::1",    // 6to4 of 169.254.169.254
        "2002:c0a8:101::1",     // 6to4 of 192.168.1.1
        "64:ff9b:1::a9fe:a9fe", // local-use NAT64
        "2001:0:4136:e378::1",  // Teredo
        "100::1",               // discard-only
    ] {
        assert!(!ip_allowed(ip(internal), STRICT), "{internal}");
    }
    // one below and one above the private 172.16.0.0/12
    assert!(ip_allowed(ip("172.15.255.255"), STRICT));
    assert!(ip_allowed(ip("172.32.0.0"), STRICT));
    // the operator's allowance opens loopback only
    assert!(ip_allowed(ip("127.0.0.1"), LOOSE));
    assert!(ip_allowed(ip("::1"), LOOSE));
    assert!(!ip_allowed(ip("10.0.0.1"), LOOSE));
    assert!(!ip_allowed(ip("169.254.169.254"), LOOSE));
}

#[test]
fn addresses_are_checked_naming_the_rule_broken() {
    let d = DestinationKind::Discord;
    let w = DestinationKind::Webhook;
    assert!(check_url(d, "https://discord.com/api/webhooks/1/tok", STRICT).is_ok());
    assert!(check_url(w, "https://hooks.example.com/in?x=1", STRICT).is_ok());
    let refused = |k, u: &str, a| check_url(k, u, a).unwrap_err();
    assert!(refused(w, "http://hooks.example.com/", STRICT).contains("https"));
    assert!(check_url(w, "http://127.0.0.1:9/", LOOSE).is_ok());
    assert!(refused(w, "ftp://x.example/", LOOSE).contains("https"));
    assert!(refused(w, "https://u:p@x.example/", STRICT).contains("password"));
    assert!(refused(w, "https://x.example/#f", STRICT).contains("fragment"));
    assert!(refused(w, "https://127.0.0.1/", STRICT).contains("127.0.0.1"));
    assert!(refused(w, "https://[::1]/", STRICT).contains("::1"));
    assert!(refused(w, "https://169.254.169.254/latest", LOOSE).contains("169.254.169.254"));
    assert!(refused(d, "https://evil.example/api/webhooks/1/t", STRICT).contains("Discord"));
    assert!(refused(d, "https://discord.com/channels/1", STRICT).contains("Discord"));
    assert!(refused(w, "", STRICT).contains("1 to 2048"));
    let long = format!("https://x.example/{}", "a".repeat(MAX_URL_CHARS));
    assert!(refused(w, &long, STRICT).contains("2048"));
    assert!(refused(w, "not a url", STRICT).contains("absolute URL"));
}

#[test]
fn the_hint_never_shows_a_token_or_a_path() {
    let d = Url::parse("https://discord.com/api/webhooks/123/secret-token").unwrap();
    assert_eq!(
        url_hint(DestinationKind::Discord, &d),
        "https://discord.com/api/webhooks/123/…"
    );
    let w = Url::parse("https://hooks.example.com/in/k3y?token=s").unwrap();
    assert_eq!(
        url_hint(DestinationKind::Webhook, &w),
        "https://hooks.example.com/…"
    );
    let root = Url::parse("https://hooks.example.com").unwrap();
    assert_eq!(
        url_hint(DestinationKind::Webhook, &root),
        "https://hooks.example.com/"
    );
}

#[test]
fn retries_back_off_doubling_to_an_hour_with_jitter() {
    assert_eq!(backoff(1, 1.0), Duration::seconds(5));
    assert_eq!(backoff(1, 0.0), Duration::milliseconds(2500));
    assert_eq!(backoff(2, 1.0), Duration::seconds(10));
    assert_eq!(backoff(11, 1.0), Duration::hours(1));
    assert_eq!(backoff(1000, 1.0), Duration::hours(1));
    assert_eq!(backoff(0, 1.0), Duration::seconds(5));
    assert_eq!(backoff(-3, 1.0), Duration::seconds(5));
}

#[test]
fn discord_answers_are_read_as_waits() {
    assert_eq!(
        discord_rate_limit(204, Some("3"), Some("1.5"), None, false, None),
        RateLimit::None
    );
    assert_eq!(
        discord_rate_limit(204, Some("0"), Some("1.25"), None, false, None),
        RateLimit::Drained(Duration::milliseconds(1250))
    );
    let body = serde_json::json!({"message": "You are being rate limited.", "retry_after": 0.4, "global": false});
    assert_eq!(
        discord_rate_limit(429, Some("0"), Some("9"), Some("1"), false, Some(&body)),
        RateLimit::Limited {
            wait: Duration::milliseconds(400),
            global: false
        },
        "the body's retry_after is the most precise"
    );
    assert_eq!(
        discord_rate_limit(429, None, None, Some("2"), true, None),
        RateLimit::Limited {
            wait: Duration::seconds(2),
            global: true
        }
    );
    assert_eq!(
        discord_rate_limit(
            429,
            None,
            None,
            None,
            false,
            Some(&serde_json::json!({"retry_after": 1e9, "global": true}))
        ),
        RateLimit::Limited {
            wait: Duration::hours(1),
            global: true
        },
        "a wait is capped at an hour"
    );
}
