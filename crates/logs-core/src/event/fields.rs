//! One step per field of an event: each reads its field, records what is wrong with it in the
//! batch's findings, and returns the value to keep.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use serde_json::{Map, Value};

use super::*;

/// What is wrong with a label (player ids, resource, trace id, environment), if anything.
pub(super) fn label_problem(s: &str) -> Option<String> {
    if s.chars().count() > MAX_LABEL_CHARS {
        Some(format!("must be at most {MAX_LABEL_CHARS} characters"))
    } else if s.chars().any(char::is_control) {
        Some("must not contain control characters".into())
    } else {
        None
    }
}

pub(super) fn label(f: &mut Findings, i: usize, field: &str, v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => match label_problem(s) {
            None => Some(s.clone()),
            Some(reason) => {
                f.add(Some(i), field, reason);
                None
            }
        },
        _ => {
            f.add(Some(i), field, "must be a string");
            None
        }
    }
}

/// What is wrong with one identifier (kind and string value), if anything.
pub(super) fn identifier_problem(k: &str, val: &str) -> Option<String> {
    if k.is_empty() || k.chars().count() > MAX_IDENTIFIER_KEY_CHARS {
        Some(format!(
            "identifier kinds must be 1 to {MAX_IDENTIFIER_KEY_CHARS} characters"
        ))
    } else if val.chars().count() > MAX_LABEL_CHARS {
        Some(format!(
            "value of `{k}` must be at most {MAX_LABEL_CHARS} characters"
        ))
    } else {
        None
    }
}

pub(super) fn identifiers(
    f: &mut Findings,
    i: usize,
    field: &str,
    v: &Value,
) -> Option<BTreeMap<String, String>> {
    match v {
        Value::Null => None,
        Value::Object(map) => {
            if map.len() > MAX_IDENTIFIERS {
                f.add(
                    Some(i),
                    field,
                    format!(
                        "must have at most {MAX_IDENTIFIERS} entries (got {})",
                        map.len()
                    ),
                );
                return None;
            }
            let mut out = BTreeMap::new();
            for (k, val) in map {
                // a bad kind is reported whatever its value
                match (val, identifier_problem(k, "")) {
                    (_, Some(reason)) => f.add(Some(i), field, reason),
                    (Value::String(s), None) => match identifier_problem(k, s) {
                        None => {
                            out.insert(k.clone(), s.clone());
                        }
                        Some(reason) => f.add(Some(i), field, reason),
                    },
                    _ => f.add(Some(i), field, format!("value of `{k}` must be a string")),
                }
            }
            Some(out)
        }
        _ => {
            f.add(
                Some(i),
                field,
                "must be an object of identifier kind to string value",
            );
            None
        }
    }
}

/// `level`: required, one of the five names.
pub(super) fn level(f: &mut Findings, i: usize, v: &Value) -> Option<Level> {
    match v {
        Value::Null => {
            f.add(Some(i), "level", "is required");
            None
        }
        Value::String(s) => {
            let l = Level::parse(s);
            if l.is_none() {
                f.add(
                    Some(i),
                    "level",
                    "must be one of debug, info, warn, error, fatal",
                );
            }
            l
        }
        _ => {
            f.add(Some(i), "level", "must be a string");
            None
        }
    }
}

/// What is wrong with a message, if anything: 1 to `MAX_MESSAGE_CHARS` characters.
pub(super) fn message_problem(s: &str) -> Option<String> {
    let n = s.chars().count();
    if n == 0 {
        Some("must not be empty".into())
    } else if n > MAX_MESSAGE_CHARS {
        Some(format!(
            "must be at most {MAX_MESSAGE_CHARS} characters (got {n})"
        ))
    } else {
        None
    }
}

/// `message`: required, see [`message_problem`].
pub(super) fn message(f: &mut Findings, i: usize, v: &Value) -> Option<String> {
    match v {
        Value::Null => {
            f.add(Some(i), "message", "is required");
            None
        }
        Value::String(s) => match message_problem(s) {
            None => Some(s.clone()),
            Some(reason) => {
                f.add(Some(i), "message", reason);
                None
            }
        },
        _ => {
            f.add(Some(i), "message", "must be a string");
            None
        }
    }
}

/// `event_id`: optional, a valid id.
pub(super) fn event_id(f: &mut Findings, i: usize, v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => match valid_id(s) {
            Ok(()) => Some(s.clone()),
            Err(r) => {
                f.add(Some(i), "event_id", r);
                None
            }
        },
        _ => {
            f.add(Some(i), "event_id", "must be a string");
            None
        }
    }
}

/// `event_type`: optional (default `log`), a valid type.
pub(super) fn event_type(f: &mut Findings, i: usize, v: &Value) -> String {
    match v {
        Value::Null => DEFAULT_EVENT_TYPE.to_owned(),
        Value::String(s) => {
            if let Err(r) = valid_event_type(s) {
                f.add(Some(i), "event_type", r);
            }
            s.clone()
        }
        _ => {
            f.add(Some(i), "event_type", "must be a string");
            String::new()
        }
    }
}

/// Whether `t` is outside the accepted window around `now`, and how.
pub(super) fn occurred_at_problem(t: DateTime<Utc>, now: DateTime<Utc>) -> Option<String> {
    if t < now - Duration::days(MAX_PAST_DAYS) {
        Some(format!("is more than {MAX_PAST_DAYS} days in the past"))
    } else if t > now + Duration::minutes(MAX_FUTURE_MINUTES) {
        Some(format!(
            "is more than {MAX_FUTURE_MINUTES} minutes in the future"
        ))
    } else {
        None
    }
}

/// `occurred_at`: optional RFC 3339 time within the accepted window around `now`; `now` when
/// absent or null (the receive time, which is also the batch's `ingested_at`). `None` only when
/// it is invalid (a finding was added).
pub(super) fn occurred_at(
    f: &mut Findings,
    i: usize,
    v: &Value,
    now: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    match v {
        Value::Null => Some(now),
        Value::String(s) => match DateTime::parse_from_rfc3339(s) {
            Ok(t) => {
                let t = t.with_timezone(&Utc);
                if let Some(reason) = occurred_at_problem(t, now) {
                    f.add(Some(i), "occurred_at", reason);
                }
                Some(t)
            }
            Err(_) => {
                f.add(
                    Some(i),
                    "occurred_at",
                    "must be an RFC 3339 timestamp, e.g. 2026-01-01T12:00:00Z",
                );
                None
            }
        },
        _ => {
            f.add(
                Some(i),
                "occurred_at",
                "must be an RFC 3339 timestamp string",
            );
            None
        }
    }
}

/// `data`: optional JSON object.
pub(super) fn data(f: &mut Findings, i: usize, v: &Value) -> Option<Map<String, Value>> {
    match v {
        Value::Null => None,
        Value::Object(m) => Some(m.clone()),
        _ => {
            f.add(Some(i), "data", "must be a JSON object");
            None
        }
    }
}
