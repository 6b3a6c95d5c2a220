//! The fast path of [`super::parse_batch`] for batches that are valid as sent: each event is
//! deserialized straight into its fields (no `serde_json::Value` per event, no copies of the
//! members, no second map), checked with the same rules, and the batch digest is written from
//! those fields in the canonical form the slow path hashes.
//!
//! It answers only "valid, and here is the batch": at the first thing it does not accept (an
//! unknown or repeated field, a value of the wrong type, a value that breaks a rule) it gives
//! up, and the slow path parses the body again to name every problem. So the error answers are
//! the slow path's alone, and the two must agree on every batch the fast path accepts, digest
//! included (stored digests decide replays): `tests::fast_path_agrees_with_the_slow_path` and
//! the property test in `crate::proptests` hold them to it.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;

use auth_core::canonical::{self, DigestWriter};
use chrono::{DateTime, Utc};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::fields::{identifier_problem, label_problem, message_problem, occurred_at_problem};
use super::{
    valid_event_type, valid_id, Batch, Event, Level, DEFAULT_EVENT_TYPE, MAX_EVENTS,
    MAX_EVENT_BYTES, MAX_IDENTIFIERS,
};

/// The batch, or `None` when the slow path must decide.
pub(crate) fn parse(body: &[u8], now: DateTime<Utc>) -> Option<Batch> {
    let top: Top = serde_json::from_slice(body).ok()?;
    let (batch_id, raw_events) = (top.batch_id?, top.events?);
    valid_id(&batch_id).ok()?;
    if raw_events.is_empty() || raw_events.len() > MAX_EVENTS {
        return None;
    }
    let mut hash = DigestWriter::default();
    // `{"batch_id":…,"events":[…]}`: the canonical form of the whole request
    write(&mut hash, b"{\"batch_id\":");
    serde_json::to_writer(&mut hash, &batch_id).ok()?;
    write(&mut hash, b",\"events\":[");
    let mut events = Vec::with_capacity(raw_events.len());
    for (i, raw) in raw_events.iter().enumerate() {
        if raw.get().len() > MAX_EVENT_BYTES {
            return None;
        }
        let sent: Sent = serde_json::from_str(raw.get()).ok()?;
        if i > 0 {
            write(&mut hash, b",");
        }
        sent.write_canonical(&mut hash).ok()?;
        events.push(sent.into_event(now)?);
    }
    write(&mut hash, b"]}");
    Some(Batch {
        batch_id,
        events,
        digest: hash.finish(),
    })
}

fn write(hash: &mut DigestWriter, bytes: &[u8]) {
    let _ = hash.write_all(bytes); // infallible: the writer never fails
}

/// The request's top level: `batch_id` and `events`, each at most once, nothing else.
struct Top<'a> {
    batch_id: Option<String>,
    events: Option<Vec<&'a RawValue>>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Top<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Top<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an ingestion batch")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Top<'a>, A::Error> {
                let mut top = Top {
                    batch_id: None,
                    events: None,
                };
                while let Some(k) = m.next_key::<Name<TopField>>()? {
                    match k.0 {
                        TopField::BatchId => once(&mut top.batch_id, m.next_value()?)?,
                        TopField::Events => once(&mut top.events, m.next_value()?)?,
                    }
                }
                Ok(top)
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// Sets a field the first time; a repeated field sends the batch to the slow path.
fn once<T, E: de::Error>(slot: &mut Option<T>, v: T) -> Result<(), E> {
    if slot.is_some() {
        return Err(E::custom("repeated field"));
    }
    *slot = Some(v);
    Ok(())
}

/// A member name that must be one of a fixed set (matched without allocating, escapes included).
struct Name<F>(F);

trait FieldSet: Sized {
    fn find(name: &str) -> Option<Self>;
}

impl<'de, F: FieldSet> Deserialize<'de> for Name<F> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<F>(std::marker::PhantomData<F>);
        impl<F: FieldSet> Visitor<'_> for V<F> {
            type Value = Name<F>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a known field name")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Name<F>, E> {
                F::find(s)
                    .map(Name)
                    .ok_or_else(|| E::custom("unknown field"))
            }
        }
        d.deserialize_identifier(V(std::marker::PhantomData))
    }
}

enum TopField {
    BatchId,
    Events,
}

impl FieldSet for TopField {
    fn find(name: &str) -> Option<Self> {
        match name {
            "batch_id" => Some(TopField::BatchId),
            "events" => Some(TopField::Events),
            _ => None,
        }
    }
}

/// An event's fields as sent: `None` absent, `Some(None)` an explicit `null` (part of the
/// canonical form, so it must be told apart from absent), `Some(Some(v))` a value.
#[derive(Default)]
struct Sent {
    data: Option<Option<Value>>,
    environment: Option<Option<String>>,
    event_id: Option<Option<String>>,
    event_type: Option<Option<String>>,
    level: Option<Option<String>>,
    message: Option<Option<String>>,
    occurred_at: Option<Option<String>>,
    player_id: Option<Option<String>>,
    player_identifiers: Option<Option<BTreeMap<String, String>>>,
    resource: Option<Option<String>>,
    target_player_id: Option<Option<String>>,
    target_player_identifiers: Option<Option<BTreeMap<String, String>>>,
    trace_id: Option<Option<String>>,
}

enum EventField {
    Data,
    Environment,
    EventId,
    EventType,
    Level,
    Message,
    OccurredAt,
    PlayerId,
    PlayerIdentifiers,
    Resource,
    TargetPlayerId,
    TargetPlayerIdentifiers,
    TraceId,
}

impl FieldSet for EventField {
    fn find(name: &str) -> Option<Self> {
        Some(match name {
            "data" => EventField::Data,
            "environment" => EventField::Environment,
            "event_id" => EventField::EventId,
            "event_type" => EventField::EventType,
            "level" => EventField::Level,
            "message" => EventField::Message,
            "occurred_at" => EventField::OccurredAt,
            "player_id" => EventField::PlayerId,
            "player_identifiers" => EventField::PlayerIdentifiers,
            "resource" => EventField::Resource,
            "target_player_id" => EventField::TargetPlayerId,
            "target_player_identifiers" => EventField::TargetPlayerIdentifiers,
            "trace_id" => EventField::TraceId,
            _ => return None,
        })
    }
}

impl<'de> Deserialize<'de> for Sent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Sent;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an event object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Sent, A::Error> {
                let mut s = Sent::default();
                while let Some(k) = m.next_key::<Name<EventField>>()? {
                    match k.0 {
                        EventField::Data => once(&mut s.data, m.next_value()?)?,
                        EventField::Environment => once(&mut s.environment, m.next_value()?)?,
                        EventField::EventId => once(&mut s.event_id, m.next_value()?)?,
                        EventField::EventType => once(&mut s.event_type, m.next_value()?)?,
                        EventField::Level => once(&mut s.level, m.next_value()?)?,
                        EventField::Message => once(&mut s.message, m.next_value()?)?,
                        EventField::OccurredAt => once(&mut s.occurred_at, m.next_value()?)?,
                        EventField::PlayerId => once(&mut s.player_id, m.next_value()?)?,
                        EventField::PlayerIdentifiers => {
                            once(&mut s.player_identifiers, m.next_value()?)?
                        }
                        EventField::Resource => once(&mut s.resource, m.next_value()?)?,
                        EventField::TargetPlayerId => {
                            once(&mut s.target_player_id, m.next_value()?)?
                        }
                        EventField::TargetPlayerIdentifiers => {
                            once(&mut s.target_player_identifiers, m.next_value()?)?
                        }
                        EventField::TraceId => once(&mut s.trace_id, m.next_value()?)?,
                    }
                }
                Ok(s)
            }
        }
        d.deserialize_map(V)
    }
}

/// Writes `"name":value` to the digest for a field that was sent, in canonical form.
fn member<T: serde::Serialize + ?Sized>(
    out: &mut DigestWriter,
    first: &mut bool,
    name: &str,
    value: Option<&T>,
) -> std::io::Result<()> {
    if !*first {
        out.write_all(b",")?;
    }
    *first = false;
    serde_json::to_writer(&mut *out, name)?;
    out.write_all(b":")?;
    match value {
        None => out.write_all(b"null"),
        Some(v) => Ok(serde_json::to_writer(&mut *out, v)?),
    }
}

impl Sent {
    /// The event's canonical text (members in byte order of their names, no whitespace), as
    /// `canonical::write_to` writes the `Value` the slow path builds from the same event.
    fn write_canonical(&self, out: &mut DigestWriter) -> std::io::Result<()> {
        out.write_all(b"{")?;
        let first = &mut true;
        // members in byte order of their names; the order is checked by a unit test
        if let Some(v) = &self.data {
            *first = false;
            out.write_all(b"\"data\":")?;
            canonical::write_to(v.as_ref().unwrap_or(&Value::Null), out)?;
        }
        let strings = [
            ("environment", &self.environment),
            ("event_id", &self.event_id),
            ("event_type", &self.event_type),
            ("level", &self.level),
            ("message", &self.message),
            ("occurred_at", &self.occurred_at),
            ("player_id", &self.player_id),
        ];
        for (name, v) in strings {
            if let Some(v) = v {
                member(out, first, name, v.as_deref())?;
            }
        }
        if let Some(v) = &self.player_identifiers {
            member(out, first, "player_identifiers", v.as_ref())?;
        }
        if let Some(v) = &self.resource {
            member(out, first, "resource", v.as_deref())?;
        }
        if let Some(v) = &self.target_player_id {
            member(out, first, "target_player_id", v.as_deref())?;
        }
        if let Some(v) = &self.target_player_identifiers {
            member(out, first, "target_player_identifiers", v.as_ref())?;
        }
        if let Some(v) = &self.trace_id {
            member(out, first, "trace_id", v.as_deref())?;
        }
        out.write_all(b"}")
    }

    /// The validated event, or `None` if any rule is broken.
    fn into_event(self, now: DateTime<Utc>) -> Option<Event> {
        let label = |v: Option<Option<String>>| -> Option<Option<String>> {
            match v.flatten() {
                None => Some(None),
                Some(s) => label_problem(&s).is_none().then_some(Some(s)),
            }
        };
        let idents = |v: Option<Option<BTreeMap<String, String>>>| match v.flatten() {
            None => Some(None),
            Some(m) => (m.len() <= MAX_IDENTIFIERS
                && m.iter().all(|(k, v)| identifier_problem(k, v).is_none()))
            .then_some(Some(m)),
        };
        let level = Level::parse(self.level.flatten()?.as_str())?;
        let message = self.message.flatten()?;
        if message_problem(&message).is_some() {
            return None;
        }
        let event_id = match self.event_id.flatten() {
            Some(id) => Some(valid_id(&id).is_ok().then_some(id)?),
            None => None,
        };
        let event_type = match self.event_type.flatten() {
            Some(t) => valid_event_type(&t).is_ok().then_some(t)?,
            None => DEFAULT_EVENT_TYPE.to_owned(),
        };
        let occurred_at = match self.occurred_at.flatten() {
            Some(s) => {
                let t = DateTime::parse_from_rfc3339(&s).ok()?.with_timezone(&Utc);
                occurred_at_problem(t, now).is_none().then_some(t)?
            }
            None => now,
        };
        let data = match self.data.flatten() {
            Some(Value::Object(m)) => Some(m),
            Some(_) => return None,
            None => None,
        };
        Some(Event {
            event_id,
            level,
            event_type,
            occurred_at,
            player_id: label(self.player_id)?,
            target_player_id: label(self.target_player_id)?,
            player_identifiers: idents(self.player_identifiers)?,
            target_player_identifiers: idents(self.target_player_identifiers)?,
            resource: label(self.resource)?,
            trace_id: label(self.trace_id)?,
            environment: label(self.environment)?,
            message,
            data,
        })
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use serde_json::json;

    use super::super::{parse_batch, parse_batch_slowly, FIELDS};
    use super::*;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap()
    }

    /// What the fast path answers, after checking it against the slow path.
    fn both(body: &[u8]) -> Option<Batch> {
        let fast = parse(body, now());
        let slow = parse_batch_slowly(body, now());
        assert_eq!(
            fast.is_some(),
            slow.is_ok(),
            "{}: fast {fast:?}, slow {slow:?}",
            String::from_utf8_lossy(body)
        );
        if let Some(f) = &fast {
            assert_eq!(Ok(f), slow.as_ref(), "{}", String::from_utf8_lossy(body));
        }
        fast
    }

    fn batch(events: &str) -> Vec<u8> {
        format!(r#"{{"batch_id":"batch-0001","events":[{events}]}}"#).into_bytes()
    }

    #[test]
    fn canonical_member_order_is_byte_order() {
        let order = [
            "data",
            "environment",
            "event_id",
            "event_type",
            "level",
            "message",
            "occurred_at",
            "player_id",
            "player_identifiers",
            "resource",
            "target_player_id",
            "target_player_identifiers",
            "trace_id",
        ];
        assert!(order.windows(2).all(|w| w[0].as_bytes() < w[1].as_bytes()));
        let mut fields = FIELDS.to_vec();
        fields.sort_unstable();
        assert_eq!(order.to_vec(), fields);
    }

    /// Valid batches of every shape take the fast path and get exactly the slow path's batch.
    #[test]
    fn fast_path_agrees_with_the_slow_path() {
        let valid = [
            // the five kinds of scripts/bench/ingest.lua
            r#"{"level":"info","event_type":"player.join","message":"player 1 joined","player_id":"1","player_identifiers":{"license":"license:0001","discord":"discord:1","fivem":"fivem:2","steam":"steam:1100001"},"resource":"core","environment":"production","data":{"ip_hash":"a1b2","ping":21,"queue_position":0,"session":"s-1"}}"#,
            r#"{"level":"warn","event_type":"economy.transfer","message":"bank transfer","player_id":"2","target_player_id":"14","player_identifiers":{"license":"license:2"},"resource":"es_extended","data":{"amount":1002,"account":"bank","balance_after":49998,"reason":"transfer"}}"#,
            r#"{"level":"info","event_type":"player.death","message":"killed","player_id":"3","target_player_id":"9","resource":"baseevents","data":{"weapon":"WEAPON_PISTOL","distance":3.5,"headshot":false,"coords":{"x":215.1,"y":-810.2,"z":30.7}}}"#,
            r#"{"level":"error","event_type":"admin.action","message":"admin kicked player 4","player_id":"admin-4","target_player_id":"4","resource":"txAdmin","trace_id":"tr-4","data":{"action":"kick","reason":"combat logging","duration":0}}"#,
            // the smallest event, and every field set
            r#"{"level":"debug","message":"m"}"#,
            r#"{"message":"m","level":"fatal","event_id":"evt-0001","occurred_at":"2026-11-22T11:59:00.123+01:00","target_player_identifiers":{"steam":"s"},"environment":"dev","trace_id":"t"}"#,
            // explicit nulls are part of the digest, not the same as absent
            r#"{"level":"info","message":"m","resource":null,"data":null,"player_identifiers":null,"event_type":null,"occurred_at":null,"event_id":null}"#,
            // escapes in names and values, non-ASCII, characters JSON may escape or not
            r#"{"lev\u0065l":"info","message":"caf\u00e9 \ud83d\ude00 \"quoted\" \/ tab\t","resource":"é"}"#,
            // data: nesting, arrays, numbers written differently, repeated keys (the last wins)
            r#"{"level":"info","message":"m","data":{"b":[1,2.50,-0,1e2,{"z":null,"a":true}],"a":{"y":"x","y":"w"},"n":12345678901234567890,"f":1.0E-7}}"#,
            // identifiers: repeated kinds keep the last, as the slow path's map does
            r#"{"level":"info","message":"m","player_identifiers":{"license":"a","license":"b"}}"#,
        ];
        for e in valid {
            assert!(both(&batch(e)).is_some(), "fast path refused {e}");
        }
        let all = valid.join(",");
        let b = both(&batch(&all)).unwrap();
        assert_eq!(b.events.len(), valid.len());
        // whitespace and member order of the request do not change the digest
        let spaced = format!(
            " {{ \"events\" : [ {} ] , \"batch_id\" : \"batch-0001\" }} ",
            valid.join(" , ")
        );
        assert_eq!(both(spaced.as_bytes()).unwrap().digest, b.digest);
    }

    /// The digest of this batch is stored in `log_batches` by every release so far; a retry
    /// after an upgrade must still be recognised as a replay.
    #[test]
    fn the_digest_of_a_known_batch_has_not_changed() {
        let b = both(&batch(
            r#"{"level":"info","message":"player 1 joined","player_id":"1","player_identifiers":{"license":"l:1"},"data":{"ping":21,"c":{"x":1.5}}}"#,
        ))
        .unwrap();
        assert_eq!(
            hex::encode(b.digest),
            "8d0dd91a222e84006b9fb3224bdaf4c1c7b035af8e41ead2b34042b185e882d4"
        );
    }

    /// Everything the fast path does not take goes to the slow path, which names the problem.
    #[test]
    fn anything_else_is_left_to_the_slow_path() {
        let long = "x".repeat(MAX_EVENT_BYTES);
        let refused = [
            r#"{"level":"info","message":"m","mystery":1}"#.to_owned(),
            r#"{"level":"info","message":"m","level":"warn"}"#.to_owned(),
            r#"{"level":"info","message":"m","resource":1}"#.to_owned(),
            r#"{"level":"INFO","message":"m"}"#.to_owned(),
            r#"{"level":"info","message":""}"#.to_owned(),
            r#"{"level":"info"}"#.to_owned(),
            r#"{"level":"info","message":"m","resource":"a\u0007"}"#.to_owned(),
            r#"{"level":"info","message":"m","event_type":"Upper"}"#.to_owned(),
            r#"{"level":"info","message":"m","event_id":"short"}"#.to_owned(),
            r#"{"level":"info","message":"m","occurred_at":"yesterday"}"#.to_owned(),
            r#"{"level":"info","message":"m","occurred_at":"2026-11-01T00:00:00Z"}"#.to_owned(),
            r#"{"level":"info","message":"m","data":[1]}"#.to_owned(),
            r#"{"level":"info","message":"m","player_identifiers":{"":"x"}}"#.to_owned(),
            r#"{"level":"info","message":"m","player_identifiers":{"k":1}}"#.to_owned(),
            format!(r#"{{"level":"info","message":"{long}"}}"#),
            "[]".to_owned(),
        ];
        for e in &refused {
            assert!(both(&batch(e)).is_none(), "fast path took {e}");
        }
        let too_many: Vec<String> = (0..=MAX_IDENTIFIERS)
            .map(|i| format!(r#""k{i}":"v""#))
            .collect();
        let e = format!(
            r#"{{"level":"info","message":"m","player_identifiers":{{{}}}}}"#,
            too_many.join(",")
        );
        assert!(both(&batch(&e)).is_none());
        let ok = r#"{"level":"info","message":"m"}"#;
        for body in [
            r#"{"batch_id":"batch-0001","events":[]}"#.to_owned(),
            r#"{"batch_id":"b","events":[{"level":"info","message":"m"}]}"#.to_owned(),
            r#"{"batch_id":"batch-0001","events":[{"level":"info","message":"m"}],"extra":1}"#.to_owned(),
            r#"{"batch_id":"batch-0001","batch_id":"batch-0002","events":[{"level":"info","message":"m"}]}"#.to_owned(),
            r#"{"events":[{"level":"info","message":"m"}]}"#.to_owned(),
            format!(r#"{{"batch_id":"batch-0001","events":[{}]}}"#, vec![ok; MAX_EVENTS + 1].join(",")),
            r#"{"batch_id":"batch-0001","events":[{"level":"info","message":"m"}]} trailing"#.to_owned(),
        ] {
            assert!(both(body.as_bytes()).is_none(), "fast path took {body}");
        }
        let full = format!(
            r#"{{"batch_id":"batch-0001","events":[{}]}}"#,
            vec![ok; MAX_EVENTS].join(",")
        );
        assert_eq!(
            parse_batch(full.as_bytes(), now()).unwrap().events.len(),
            MAX_EVENTS
        );
        assert!(both(full.as_bytes()).is_some());
        let _ = json!(null);
    }
}
