//! Query requests (docs/api.md, section 6 "Log query") and signed cursors.
//!
//! A cursor carries the position after the last returned event, the search it belongs to (server,
//! `from`, `to`, and a digest of the filters) and an expiry, signed with the server secret and
//! bound to the organization. Sent with a different search it is `INVALID_CURSOR`; after expiry
//! `CURSOR_EXPIRED`.

use auth_core::signing::SigningKeys;
use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use crate::event::Level;
use crate::store::{IdentifierFilter, Owner};

pub const MAX_RANGE_DAYS: i64 = 7;
pub const DEFAULT_LIMIT: usize = 100;
pub const MAX_LIMIT: usize = 100;
pub const MAX_FILTER_CHARS: usize = 256;

#[derive(Debug, Clone, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QueryRequest {
    pub server_id: Option<String>,
    pub from: Option<String>,
    pub to: Option<String>,
    pub limit: Option<i64>,
    /// One level.
    pub level: Option<String>,
    /// Any of these levels (1 to 5 names).
    pub levels: Option<Vec<String>>,
    /// This level and the more severe ones (debug < info < warn < error < fatal).
    pub min_level: Option<String>,
    pub event_type: Option<String>,
    pub resource: Option<String>,
    pub message: Option<String>,
    pub player_id: Option<String>,
    pub identifier: Option<IdentifierRequest>,
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct IdentifierRequest {
    pub owner: String,
    pub key: String,
    pub value: String,
}

/// Validated filters and window (before retention is applied).
#[derive(Debug, Clone, PartialEq)]
pub struct ValidQuery {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub limit: usize,
    /// The levels an event may have, ascending; `None` for any.
    pub levels: Option<Vec<Level>>,
    pub event_type: Option<String>,
    pub resource: Option<String>,
    pub message: Option<String>,
    pub player_id: Option<String>,
    pub identifier: Option<IdentifierFilter>,
}

/// The level names a request may use.
const LEVEL_NAMES: &str = "debug, info, warn, error, fatal";

fn level(field: &str, name: &str) -> Result<Level, String> {
    Level::parse(name)
        .ok_or_else(|| format!("`{field}` must be one of {LEVEL_NAMES} (got {name:?})"))
}

/// The level filter of `level`, `levels` or `minLevel` (one of them at most): the allowed levels
/// ascending, or `None` when every level is.
fn levels(req: &QueryRequest) -> Result<Option<Vec<Level>>, String> {
    let chosen = match (&req.level, &req.levels, &req.min_level) {
        (None, None, None) => return Ok(None),
        (Some(l), None, None) => vec![level("level", l)?],
        (None, Some(list), None) => {
            if list.is_empty() || list.len() > Level::ALL.len() {
                return Err(format!(
                    "`levels` must name 1 to {} levels (got {})",
                    Level::ALL.len(),
                    list.len()
                ));
            }
            list.iter()
                .enumerate()
                .map(|(i, l)| level(&format!("levels[{i}]"), l))
                .collect::<Result<Vec<_>, _>>()?
        }
        (None, None, Some(min)) => {
            let min = level("minLevel", min)?;
            Level::ALL.into_iter().filter(|l| *l >= min).collect()
        }
        _ => {
            return Err(
                "`level`, `levels` and `minLevel` are alternatives; send one of them".into(),
            )
        }
    };
    let mut chosen = chosen;
    chosen.sort();
    chosen.dedup();
    Ok((chosen.len() < Level::ALL.len()).then_some(chosen))
}

fn time(name: &str, v: &Option<String>) -> Result<DateTime<Utc>, String> {
    let s = v
        .as_deref()
        .ok_or_else(|| format!("`{name}` is required (RFC 3339)"))?;
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| format!("`{name}` must be an RFC 3339 timestamp, e.g. 2026-01-01T00:00:00Z"))
}

/// No stored event contains U+0000 (Postgres text cannot hold it), so a filter with one is refused.
fn nul_error(name: &str) -> String {
    format!("`{name}` must not contain NUL (U+0000) characters")
}

fn filter(name: &str, v: &Option<String>) -> Result<Option<String>, String> {
    match v {
        None => Ok(None),
        Some(s) if s.is_empty() => Err(format!("`{name}` must not be empty")),
        Some(s) if s.contains('\0') => Err(nul_error(name)),
        Some(s) if s.chars().count() > MAX_FILTER_CHARS => Err(format!(
            "`{name}` must be at most {MAX_FILTER_CHARS} characters"
        )),
        Some(s) => Ok(Some(s.clone())),
    }
}

pub fn validate(req: &QueryRequest) -> Result<ValidQuery, String> {
    let from = time("from", &req.from)?;
    let to = time("to", &req.to)?;
    if to <= from {
        return Err("`to` must be after `from`".into());
    }
    if to - from > Duration::days(MAX_RANGE_DAYS) {
        return Err(format!(
            "the range from `from` to `to` must be at most {MAX_RANGE_DAYS} days"
        ));
    }
    let limit = match req.limit {
        None => DEFAULT_LIMIT,
        Some(n) if (1..=MAX_LIMIT as i64).contains(&n) => n as usize,
        Some(n) => return Err(format!("`limit` must be 1 to {MAX_LIMIT} (got {n})")),
    };
    let levels = levels(req)?;
    let identifier = match &req.identifier {
        None => None,
        Some(i) => {
            let owner = match i.owner.as_str() {
                "player" => Owner::Player,
                "target" => Owner::Target,
                _ => return Err("`identifier.owner` must be `player` or `target`".into()),
            };
            if i.key.is_empty() || i.value.is_empty() {
                return Err("`identifier.key` and `identifier.value` must not be empty".into());
            }
            if i.key.contains('\0') {
                return Err(nul_error("identifier.key"));
            }
            if i.value.contains('\0') {
                return Err(nul_error("identifier.value"));
            }
            Some(IdentifierFilter {
                owner,
                key: i.key.clone(),
                value: i.value.clone(),
            })
        }
    };
    Ok(ValidQuery {
        from,
        to,
        limit,
        levels,
        event_type: filter("eventType", &req.event_type)?,
        resource: filter("resource", &req.resource)?,
        message: filter("message", &req.message)?,
        player_id: filter("playerId", &req.player_id)?,
        identifier,
    })
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
        "from": q.from.timestamp_micros(),
        "to": q.to.timestamp_micros(),
        "levels": q.levels.as_ref().map(|ls| ls.iter().map(|l| l.as_str()).collect::<Vec<_>>()),
        "eventType": q.event_type,
        "resource": q.resource,
        "message": q.message,
        "playerId": q.player_id,
        "identifier": q.identifier.as_ref().map(|i| serde_json::json!([i.owner, i.key, i.value])),
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

    fn req() -> QueryRequest {
        QueryRequest {
            server_id: None,
            from: Some("2026-11-20T00:00:00Z".into()),
            to: Some("2026-11-21T00:00:00Z".into()),
            limit: None,
            level: None,
            levels: None,
            min_level: None,
            event_type: None,
            resource: None,
            message: None,
            player_id: None,
            identifier: None,
            cursor: None,
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
        assert_eq!(validate(&r).unwrap().levels, Some(vec![Level::Warn]));
        r.level = Some("WARN".into());
        assert!(validate(&r).is_err());
        let mut r = req();
        r.identifier = Some(IdentifierRequest {
            owner: "target".into(),
            key: "license".into(),
            value: "x".into(),
        });
        assert_eq!(
            validate(&r).unwrap().identifier.unwrap().owner,
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
            validate(&r).unwrap().levels,
            Some(vec![Level::Warn, Level::Error, Level::Fatal])
        );
        r.min_level = Some("debug".into());
        assert_eq!(validate(&r).unwrap().levels, None, "every level: no filter");
        r.min_level = Some("fatal".into());
        assert_eq!(validate(&r).unwrap().levels, Some(vec![Level::Fatal]));
        r.min_level = Some("severe".into());
        assert!(validate(&r)
            .unwrap_err()
            .contains("`minLevel` must be one of"));
        let mut r = req();
        r.levels = names(&["fatal", "info", "info"]);
        assert_eq!(
            validate(&r).unwrap().levels,
            Some(vec![Level::Info, Level::Fatal])
        );
        // N - 1, N, N + 1 names
        r.levels = names(&["debug", "info", "warn", "error"]);
        assert_eq!(validate(&r).unwrap().levels.unwrap().len(), 4);
        r.levels = names(&["debug", "info", "warn", "error", "fatal"]);
        assert_eq!(validate(&r).unwrap().levels, None);
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
        other.levels = Some(vec![Level::Error]);
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
