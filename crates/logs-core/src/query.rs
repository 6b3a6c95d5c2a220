//! Query requests (docs/api.md, section 6 "Log query") and signed cursors.
//!
//! A cursor carries the position after the last returned event, the search it belongs to (server,
//! `from`, `to`, and a digest of the filters) and an expiry, signed with the server secret and
//! bound to the organization. Sent with a different search it is `INVALID_CURSOR`; after expiry
//! `CURSOR_EXPIRED`.

use auth_core::signing::SigningKeys;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::search::{validate_search, RangeLimit, Search};

pub const MAX_RANGE_DAYS: i64 = 7;
pub const DEFAULT_LIMIT: usize = 100;
pub const MAX_LIMIT: usize = 100;

crate::search_request! {
    /// `POST /v1/logs/query`.
    pub struct QueryRequest {
        /// Events per page, 1 to 100 (default 100).
        pub limit: Option<i64>,
        /// `pagination.nextCursor` of the previous page of the same search.
        pub cursor: Option<String>,
    }
}

/// Validated filters and window (before retention is applied).
#[derive(Debug, Clone, PartialEq)]
pub struct ValidQuery {
    pub search: Search,
    pub limit: usize,
}

/// A query of `POST /v1/logs/query`: a window of at most [`MAX_RANGE_DAYS`] (pinned).
pub fn validate(req: &QueryRequest) -> Result<ValidQuery, String> {
    validate_within(req, RangeLimit::Days(MAX_RANGE_DAYS))
}

/// The same request with the window bounded by `range` (`POST /v1/logs/search`: any window,
/// the plan's retention bounds it).
pub fn validate_within(req: &QueryRequest, range: RangeLimit) -> Result<ValidQuery, String> {
    let search = validate_search(&req.search(), range)?;
    let limit = match req.limit {
        None => DEFAULT_LIMIT,
        Some(n) if (1..=MAX_LIMIT as i64).contains(&n) => n as usize,
        Some(n) => return Err(format!("`limit` must be 1 to {MAX_LIMIT} (got {n})")),
    };
    Ok(ValidQuery { search, limit })
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CursorError {
    #[error("cursor is malformed, or belongs to a different search (server, from, to and filters must be unchanged)")]
    Invalid,
    #[error("cursor has expired; start a new search")]
    Expired,
}

#[derive(Serialize, Deserialize)]
struct CursorPayload {
    v: u8,
    /// digest of the search (server, from, to, filters)
    s: String,
    /// occurred_at of the last event, microseconds since the epoch
    t: i64,
    /// id of the last event
    i: i64,
    /// expiry, seconds since the epoch
    e: i64,
}

/// A digest of everything a cursor is bound to.
pub fn search_digest(server_id: &str, q: &ValidQuery) -> String {
    let v = serde_json::json!({
        "server": server_id.to_lowercase(),
        "from": q.search.from.timestamp_micros(),
        "to": q.search.to.timestamp_micros(),
        "filters": q.search.filters.digest_value(),
    });
    hex::encode(&auth_core::canonical::digest(&v)[..16])
}

fn context(org_id: &str) -> String {
    format!("logs-query:{org_id}")
}

pub fn make_cursor(
    keys: &SigningKeys,
    org_id: &str,
    search: &str,
    after: (DateTime<Utc>, i64),
    expires_at: DateTime<Utc>,
) -> String {
    let p = CursorPayload {
        v: 1,
        s: search.to_owned(),
        t: after.0.timestamp_micros(),
        i: after.1,
        e: expires_at.timestamp(),
    };
    keys.sign(
        &context(org_id),
        &serde_json::to_vec(&p).unwrap_or_default(),
    )
}

/// The position to continue after.
pub fn read_cursor(
    keys: &SigningKeys,
    org_id: &str,
    search: &str,
    cursor: &str,
    now: DateTime<Utc>,
) -> Result<(DateTime<Utc>, i64), CursorError> {
    let bytes = keys
        .verify(&context(org_id), cursor)
        .map_err(|_| CursorError::Invalid)?;
    let p: CursorPayload = serde_json::from_slice(&bytes).map_err(|_| CursorError::Invalid)?;
    if p.v != 1 || p.s != search {
        return Err(CursorError::Invalid);
    }
    if p.e <= now.timestamp() {
        return Err(CursorError::Expired);
    }
    let t = DateTime::from_timestamp_micros(p.t).ok_or(CursorError::Invalid)?;
    Ok((t, p.i))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Level;
    use crate::search::IdentifierRequest;
    use crate::store::Owner;
    use chrono::Duration;

    fn req() -> QueryRequest {
        QueryRequest {
            from: Some("2026-11-20T00:00:00Z".into()),
            to: Some("2026-11-21T00:00:00Z".into()),
            ..Default::default()
        }
    }

    #[test]
    fn ranges_and_limits() {
        assert_eq!(validate(&req()).unwrap().limit, 100);
        let mut r = req();
        r.to = Some("2026-11-27T00:00:00Z".into());
        assert!(validate(&r).is_ok(), "exactly 7 days");
        r.to = Some("2026-11-27T00:00:01Z".into());
        assert!(validate(&r).unwrap_err().contains("7 days"));
        r.to = Some("2026-11-20T00:00:00Z".into());
        assert!(validate(&r).unwrap_err().contains("after"));
        r.to = Some("2026-11-19T00:00:00Z".into());
        assert!(validate(&r).is_err());
        let mut r = req();
        r.from = None;
        assert!(validate(&r).unwrap_err().contains("from"));
        let mut r = req();
        r.to = Some("tomorrow".into());
        assert!(validate(&r).unwrap_err().contains("to"));
        for (n, ok) in [
            (0, false),
            (1, true),
            (99, true),
            (100, true),
            (101, false),
            (-1, false),
        ] {
            let mut r = req();
            r.limit = Some(n);
            assert_eq!(validate(&r).is_ok(), ok, "limit {n}");
        }
    }

    #[test]
    fn filters() {
        let mut r = req();
        r.level = Some("warn".into());
        assert_eq!(
            validate(&r).unwrap().search.filters.levels,
            Some(vec![Level::Warn])
        );
        r.level = Some("WARN".into());
        assert!(validate(&r).is_err());
        let mut r = req();
        r.identifier = Some(IdentifierRequest {
            owner: "target".into(),
            key: "license".into(),
            value: "x".into(),
        });
        assert_eq!(
            validate(&r)
                .unwrap()
                .search
                .filters
                .identifier
                .unwrap()
                .owner,
            Owner::Target
        );
        r.identifier = Some(IdentifierRequest {
            owner: "someone".into(),
            key: "license".into(),
            value: "x".into(),
        });
        assert!(validate(&r).unwrap_err().contains("owner"));
        let mut r = req();
        r.message = Some(String::new());
        assert!(validate(&r).is_err());
        let mut r = req();
        r.message = Some("m".repeat(257));
        assert!(validate(&r).is_err());
        for field in ["eventType", "resource", "message", "playerId"] {
            let mut r = req();
            let v = Some("a\0b".to_owned());
            match field {
                "eventType" => r.event_type = v,
                "resource" => r.resource = v,
                "message" => r.message = v,
                _ => r.player_id = v,
            }
            let e = validate(&r).unwrap_err();
            assert!(e.contains(field) && e.contains("NUL"), "{e}");
        }
        for (key, value, named) in [
            ("li\0c", "x", "identifier.key"),
            ("license", "\0", "identifier.value"),
        ] {
            let mut r = req();
            r.identifier = Some(IdentifierRequest {
                owner: "player".into(),
                key: key.into(),
                value: value.into(),
            });
            assert!(validate(&r).unwrap_err().contains(named));
        }
    }

    #[test]
    fn level_filters_are_one_level_a_list_or_a_minimum() {
        let names = |v: &[&str]| Some(v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
        let mut r = req();
        r.min_level = Some("warn".into());
        assert_eq!(
            validate(&r).unwrap().search.filters.levels,
            Some(vec![Level::Warn, Level::Error, Level::Fatal])
        );
        r.min_level = Some("debug".into());
        assert_eq!(
            validate(&r).unwrap().search.filters.levels,
            None,
            "every level: no filter"
        );
        r.min_level = Some("fatal".into());
        assert_eq!(
            validate(&r).unwrap().search.filters.levels,
            Some(vec![Level::Fatal])
        );
        r.min_level = Some("severe".into());
        assert!(validate(&r)
            .unwrap_err()
            .contains("`minLevel` must be one of"));
        let mut r = req();
        r.levels = names(&["fatal", "info", "info"]);
        assert_eq!(
            validate(&r).unwrap().search.filters.levels,
            Some(vec![Level::Info, Level::Fatal])
        );
        // N - 1, N, N + 1 names
        r.levels = names(&["debug", "info", "warn", "error"]);
        assert_eq!(
            validate(&r).unwrap().search.filters.levels.unwrap().len(),
            4
        );
        r.levels = names(&["debug", "info", "warn", "error", "fatal"]);
        assert_eq!(validate(&r).unwrap().search.filters.levels, None);
        r.levels = names(&["debug", "info", "warn", "error", "fatal", "info"]);
        assert!(validate(&r).unwrap_err().contains("1 to 5 levels (got 6)"));
        r.levels = names(&[]);
        assert!(validate(&r).unwrap_err().contains("(got 0)"));
        r.levels = names(&["info", "loud"]);
        assert!(validate(&r)
            .unwrap_err()
            .contains("`levels[1]` must be one of"));
        r.levels = names(&["info"]);
        r.min_level = Some("warn".into());
        assert!(validate(&r).unwrap_err().contains("are alternatives"));
        // the same filter said two ways is the same search
        let mut a = req();
        a.min_level = Some("error".into());
        let mut b = req();
        b.levels = names(&["fatal", "error"]);
        let (a, b) = (validate(&a).unwrap(), validate(&b).unwrap());
        assert_eq!(search_digest("abc", &a), search_digest("abc", &b));
        let mut c = req();
        c.min_level = Some("warn".into());
        assert_ne!(
            search_digest("abc", &a),
            search_digest("abc", &validate(&c).unwrap())
        );
    }

    #[test]
    fn unknown_fields_are_refused_by_name() {
        let e = serde_json::from_str::<QueryRequest>(r#"{"from":"x","to":"y","lvl":"info"}"#)
            .unwrap_err();
        assert!(e.to_string().contains("lvl"), "{e}");
    }

    #[test]
    fn cursors_bind_the_search() {
        let now = Utc::now();
        let q = validate(&req()).unwrap();
        let s = search_digest("ABC", &q);
        assert_eq!(
            s,
            search_digest("abc", &q),
            "join codes compare case-insensitively"
        );
        let pos = (
            DateTime::parse_from_rfc3339("2026-11-20T10:00:00.123456Z")
                .unwrap()
                .with_timezone(&Utc),
            42,
        );
        let c = make_cursor(
            &SigningKeys::single(b"k"),
            "org_a",
            &s,
            pos,
            now + Duration::minutes(15),
        );
        assert_eq!(
            read_cursor(&SigningKeys::single(b"k"), "org_a", &s, &c, now),
            Ok(pos)
        );
        let mut other = q.clone();
        other.search.filters.levels = Some(vec![Level::Error]);
        assert_eq!(
            read_cursor(
                &SigningKeys::single(b"k"),
                "org_a",
                &search_digest("abc", &other),
                &c,
                now
            ),
            Err(CursorError::Invalid)
        );
        assert_eq!(
            read_cursor(
                &SigningKeys::single(b"k"),
                "org_a",
                &search_digest("other", &q),
                &c,
                now
            ),
            Err(CursorError::Invalid)
        );
        assert_eq!(
            read_cursor(&SigningKeys::single(b"k"), "org_b", &s, &c, now),
            Err(CursorError::Invalid)
        );
        assert_eq!(
            read_cursor(&SigningKeys::single(b"k"), "org_a", &s, "garbage", now),
            Err(CursorError::Invalid)
        );
        assert_eq!(
            read_cursor(
                &SigningKeys::single(b"k"),
                "org_a",
                &s,
                &c,
                now + Duration::minutes(16)
            ),
            Err(CursorError::Expired)
        );
    }
}
