//! Ingestion batches (docs/api.md, section 5 "Log ingestion", and section 8).
//!
//! A batch is validated as a whole: one bad event rejects it, and the error lists every
//! offending event index, field and reason (capped at [`MAX_DETAILS`]). Unknown fields are
//! rejected by name so a misspelt field is never dropped silently, and so is a field sent twice
//! (a JSON parser would keep the last one without a word). Inside `data`, which is the client's
//! own JSON, the last of duplicate keys is kept, as PostgreSQL's `jsonb` does. Event size is the
//! byte length of that event's JSON as sent.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use chrono::{DateTime, Utc};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use fields::{data, event_id, event_type, identifiers, label, level, message, occurred_at};

pub const MAX_BODY_BYTES: usize = 1024 * 1024;
pub const MAX_EVENTS: usize = 500;
pub const MAX_EVENT_BYTES: usize = 16 * 1024;
pub const MAX_MESSAGE_CHARS: usize = 2048;
pub const MAX_EVENT_TYPE_CHARS: usize = 96;
pub const MIN_ID_CHARS: usize = 8;
pub const MAX_ID_CHARS: usize = 64;
pub const MAX_IDENTIFIERS: usize = 16;
pub const MAX_IDENTIFIER_KEY_CHARS: usize = 64;
pub const MAX_LABEL_CHARS: usize = 256;
pub const MAX_PAST_DAYS: i64 = 7;
pub const MAX_FUTURE_MINUTES: i64 = 5;
pub const MAX_DETAILS: usize = 100;
pub const DEFAULT_EVENT_TYPE: &str = "log";

const FIELDS: [&str; 13] = [
    "level",
    "message",
    "event_id",
    "event_type",
    "occurred_at",
    "player_id",
    "target_player_id",
    "player_identifiers",
    "target_player_identifiers",
    "resource",
    "trace_id",
    "environment",
    "data",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Debug,
    Info,
    Warn,
    Error,
    Fatal,
}

impl Level {
    pub const ALL: [Level; 5] = [
        Level::Debug,
        Level::Info,
        Level::Warn,
        Level::Error,
        Level::Fatal,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
            Level::Fatal => "fatal",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.as_str() == s)
    }
}

/// A validated event. The event type and `occurred_at` defaults are applied by the parser
/// (`occurred_at`: the receive time, which the store also records as `ingested_at`); a missing
/// `event_id` is made by the store.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub event_id: Option<String>,
    pub level: Level,
    pub event_type: String,
    pub occurred_at: DateTime<Utc>,
    pub player_id: Option<String>,
    pub target_player_id: Option<String>,
    pub player_identifiers: Option<BTreeMap<String, String>>,
    pub target_player_identifiers: Option<BTreeMap<String, String>>,
    pub resource: Option<String>,
    pub trace_id: Option<String>,
    pub environment: Option<String>,
    pub message: String,
    pub data: Option<Map<String, Value>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    pub batch_id: String,
    pub events: Vec<Event>,
    /// SHA-256 of the canonical parsed request (key order and whitespace do not matter).
    pub digest: [u8; 32],
}

/// One validation finding. `index` is the event's position, `None` for top-level fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Detail {
    /// Event index; absent for top-level fields.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    pub field: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchError {
    /// The body is not a JSON object.
    Malformed(String),
    /// Validation failed; `truncated` when more findings existed than were kept.
    Invalid {
        details: Vec<Detail>,
        truncated: bool,
    },
}

struct Findings {
    details: Vec<Detail>,
    total: usize,
}

impl Findings {
    fn add(&mut self, index: Option<usize>, field: &str, reason: impl Into<String>) {
        self.total += 1;
        if self.details.len() < MAX_DETAILS {
            self.details.push(Detail {
                index,
                field: field.to_owned(),
                reason: reason.into(),
            });
        }
    }
}

/// `8..=64` characters of letters, digits, `:`, `_`, `-` (event_id and batch_id).
pub fn valid_id(s: &str) -> Result<(), String> {
    let n = s.chars().count();
    if !(MIN_ID_CHARS..=MAX_ID_CHARS).contains(&n) {
        return Err(format!(
            "must be {MIN_ID_CHARS} to {MAX_ID_CHARS} characters (got {n})"
        ));
    }
    if !s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == ':' || c == '_' || c == '-')
    {
        return Err("may contain only letters, digits, `:`, `_` and `-`".into());
    }
    Ok(())
}

/// Lowercase, at most 96 characters of letters, digits, `.`, `:`, `_`, `-`.
pub fn valid_event_type(s: &str) -> Result<(), String> {
    let n = s.chars().count();
    if n == 0 || n > MAX_EVENT_TYPE_CHARS {
        return Err(format!(
            "must be 1 to {MAX_EVENT_TYPE_CHARS} characters (got {n})"
        ));
    }
    if !s
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || ".:_-".contains(c))
    {
        return Err("may contain only lowercase letters, digits, `.`, `:`, `_` and `-`".into());
    }
    Ok(())
}

/// A JSON object's members in the order sent, duplicates included, so a field sent twice can be
/// named instead of silently keeping the last.
struct Members<V>(Vec<(String, V)>);

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Members<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<V>(PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for Visit<V> {
            type Value = Members<V>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Members<V>, A::Error> {
                let mut out = Vec::with_capacity(m.size_hint().unwrap_or(0));
                while let Some(entry) = m.next_entry::<String, V>()? {
                    out.push(entry);
                }
                Ok(Members(out))
            }
        }
        d.deserialize_map(Visit(PhantomData))
    }
}

impl<V> Members<V> {
    /// Reports every name sent more than once (once per name) and yields all members in order;
    /// collecting them into a map keeps the last of each.
    fn dedup(self, f: &mut Findings, i: Option<usize>) -> impl Iterator<Item = (String, V)> {
        let mut seen = BTreeMap::new();
        for (k, _) in &self.0 {
            let n = seen.entry(k.as_str()).or_insert(0u32);
            *n += 1;
            if *n == 2 {
                f.add(i, k, "appears more than once");
            }
        }
        self.0.into_iter()
    }
}

fn parse_event(
    f: &mut Findings,
    i: usize,
    raw: &RawValue,
    now: DateTime<Utc>,
) -> Option<(Event, Value)> {
    let size = raw.get().len();
    if size > MAX_EVENT_BYTES {
        f.add(
            Some(i),
            "event",
            format!("event is {size} bytes; the limit is {MAX_EVENT_BYTES}"),
        );
        return None;
    }
    let before = f.total;
    let map: Map<String, Value> = match serde_json::from_str::<Members<Value>>(raw.get()) {
        Ok(members) => members.dedup(f, Some(i)).collect(),
        Err(e) if e.classify() == serde_json::error::Category::Data => {
            f.add(Some(i), "event", "must be a JSON object");
            return None;
        }
        Err(e) => {
            f.add(Some(i), "event", format!("invalid JSON: {e}"));
            return None;
        }
    };
    for k in map.keys() {
        if !FIELDS.contains(&k.as_str()) {
            f.add(Some(i), k, "unknown field");
        }
    }
    let null = Value::Null;
    let get = |k: &str| map.get(k).unwrap_or(&null);
    let level = level(f, i, get("level"));
    let message = message(f, i, get("message"));
    let event_id = event_id(f, i, get("event_id"));
    let event_type = event_type(f, i, get("event_type"));
    let occurred_at = occurred_at(f, i, get("occurred_at"), now);
    let player_id = label(f, i, "player_id", get("player_id"));
    let target_player_id = label(f, i, "target_player_id", get("target_player_id"));
    let resource = label(f, i, "resource", get("resource"));
    let trace_id = label(f, i, "trace_id", get("trace_id"));
    let environment = label(f, i, "environment", get("environment"));
    let player_identifiers = identifiers(f, i, "player_identifiers", get("player_identifiers"));
    let target_player_identifiers = identifiers(
        f,
        i,
        "target_player_identifiers",
        get("target_player_identifiers"),
    );
    let data = data(f, i, get("data"));
    if f.total > before {
        return None;
    }
    Some((
        Event {
            event_id,
            level: level?,
            event_type,
            occurred_at: occurred_at?,
            player_id,
            target_player_id,
            player_identifiers,
            target_player_identifiers,
            resource,
            trace_id,
            environment,
            message: message?,
            data,
        },
        Value::Object(map),
    ))
}

/// Parses and validates a whole ingestion body at `now` (the receive time). A batch valid as
/// sent takes the fast path ([`fast`]); anything else is parsed again by the slow path, which
/// names every problem.
///
/// Escapes of text PostgreSQL cannot hold are repaired first ([`repair`]): such an event is stored
/// with U+FFFD in their place, never refused.
pub fn parse_batch(body: &[u8], now: DateTime<Utc>) -> Result<Batch, BatchError> {
    let body = repair::repair_unstorable_escapes(body);
    match fast::parse(&body, now) {
        Some(batch) => Ok(batch),
        None => parse_batch_slowly(&body, now),
    }
}

/// The slow path: builds each event's JSON value, collects every finding.
pub(crate) fn parse_batch_slowly(body: &[u8], now: DateTime<Utc>) -> Result<Batch, BatchError> {
    let top: Members<&RawValue> = serde_json::from_slice(body).map_err(|e| {
        BatchError::Malformed(format!(
            "body must be a JSON object with `batch_id` and `events`: {e}"
        ))
    })?;
    let mut f = Findings {
        details: Vec::new(),
        total: 0,
    };
    let top: BTreeMap<String, &RawValue> = top.dedup(&mut f, None).collect();
    for k in top.keys() {
        if k != "batch_id" && k != "events" {
            f.add(None, k, "unknown field");
        }
    }
    let batch_id = match top
        .get("batch_id")
        .map(|r| serde_json::from_str::<Value>(r.get()))
    {
        None | Some(Ok(Value::Null)) => {
            f.add(None, "batch_id", "is required");
            None
        }
        Some(Ok(Value::String(s))) => match valid_id(&s) {
            Ok(()) => Some(s),
            Err(r) => {
                f.add(None, "batch_id", r);
                None
            }
        },
        Some(_) => {
            f.add(None, "batch_id", "must be a string");
            None
        }
    };
    let raw_events: Vec<&RawValue> = match top.get("events") {
        None => {
            f.add(None, "events", "is required");
            vec![]
        }
        Some(r) => match serde_json::from_str::<Vec<&RawValue>>(r.get()) {
            Ok(v) => v,
            Err(_) => {
                f.add(None, "events", "must be an array of events");
                vec![]
            }
        },
    };
    if top.contains_key("events") && raw_events.is_empty() && f.total == 0 {
        f.add(
            None,
            "events",
            format!("must contain 1 to {MAX_EVENTS} events"),
        );
    }
    if raw_events.len() > MAX_EVENTS {
        f.add(
            None,
            "events",
            format!(
                "must contain 1 to {MAX_EVENTS} events (got {})",
                raw_events.len()
            ),
        );
    }
    let mut events = Vec::with_capacity(raw_events.len().min(MAX_EVENTS));
    let mut values = Vec::with_capacity(raw_events.len().min(MAX_EVENTS));
    if raw_events.len() <= MAX_EVENTS {
        for (i, raw) in raw_events.iter().enumerate() {
            if let Some((e, v)) = parse_event(&mut f, i, raw, now) {
                events.push(e);
                values.push(v);
            }
        }
    }
    match batch_id {
        Some(batch_id) if f.total == 0 => {
            let canonical = serde_json::json!({ "batch_id": batch_id, "events": values });
            Ok(Batch {
                digest: auth_core::canonical::digest(&canonical),
                batch_id,
                events,
            })
        }
        _ => Err(BatchError::Invalid {
            truncated: f.total > f.details.len(),
            details: f.details,
        }),
    }
}

pub(crate) mod fast;
mod fields;
pub mod repair;

#[cfg(test)]
mod tests;
