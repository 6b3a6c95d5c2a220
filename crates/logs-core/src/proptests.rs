//! Property tests of the parsers that take client input: ingestion batches, query requests and
//! query cursors. They run a bounded number of cases in `just test` (proptest's default, 256 per
//! property; set `PROPTEST_CASES` for a longer run).

use chrono::{Duration, TimeZone, Utc};
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::event::{parse_batch, BatchError, MAX_EVENTS, MAX_MESSAGE_CHARS};
use crate::query::{make_cursor, read_cursor, validate, QueryRequest, MAX_LIMIT, MAX_RANGE_DAYS};

/// Any JSON value, a few levels deep.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        "\\PC{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,10}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Events whose fields are the real ones, with values of any JSON type, over a valid base (so
/// both accepted and refused batches come up).
fn event() -> impl Strategy<Value = Value> {
    let field = prop_oneof![
        Just("level"),
        Just("message"),
        Just("event_type"),
        Just("occurred_at"),
        Just("event_id"),
        Just("player_id"),
        Just("target_player_id"),
        Just("player_identifiers"),
        Just("resource"),
        Just("data"),
        Just("mystery"),
    ];
    prop::collection::btree_map(field, json_value(), 0..4).prop_map(|m| {
        let mut event = json!({ "level": "info", "message": "player joined" });
        for (k, v) in m {
            event[k] = v;
        }
        event
    })
}

proptest! {
    /// Any bytes: an answer, never a panic.
    #[test]
    fn any_body_is_answered(body in prop::collection::vec(any::<u8>(), 0..400)) {
        let _ = parse_batch(&body, Utc::now());
    }

    /// Batches of arbitrary events: accepted events respect the documented limits, refused
    /// ones name every offending event inside the batch.
    #[test]
    fn any_batch_is_accepted_within_limits_or_refused_with_details(
        batch_id in prop_oneof!["[a-z0-9-]{8,20}", "\\PC{0,70}"],
        events in prop::collection::vec(event(), 0..6),
    ) {
        let n = events.len();
        let body = serde_json::to_vec(&json!({ "batch_id": batch_id, "events": events })).unwrap_or_default();
        let now = Utc::now();
        match parse_batch(&body, now) {
            Ok(batch) => {
                prop_assert_eq!(batch.events.len(), n);
                prop_assert!(n <= MAX_EVENTS);
                for e in &batch.events {
                    prop_assert!(e.message.chars().count() <= MAX_MESSAGE_CHARS);
                    let t = e.occurred_at;
                    prop_assert!(t >= now - Duration::days(8) && t <= now + Duration::minutes(6));
                }
            }
            Err(BatchError::Invalid { details, .. }) => {
                prop_assert!(!details.is_empty());
                for d in details {
                    prop_assert!(d.index.is_none_or(|i| i < n), "{d:?}");
                }
            }
            Err(BatchError::Malformed(m)) => prop_assert!(!m.is_empty()),
        }
    }

    /// The ingestion fast path accepts exactly the batches the slow path accepts, and gives
    /// the same batch (fields and digest); everything else is the slow path's to explain.
    #[test]
    fn the_fast_path_agrees_with_the_slow_path(
        batch_id in prop_oneof!["[a-z0-9-]{8,20}", "\\PC{0,70}"],
        events in prop::collection::vec(event(), 0..6),
    ) {
        let body = serde_json::to_vec(&json!({ "batch_id": batch_id, "events": events })).unwrap_or_default();
        let now = Utc::now();
        let fast = crate::event::fast::parse(&body, now);
        let slow = crate::event::parse_batch_slowly(&body, now);
        prop_assert_eq!(fast.is_some(), slow.is_ok(), "fast {:?}, slow {:?}", fast, slow);
        if let Some(f) = fast {
            prop_assert_eq!(Ok(f), slow);
        }
    }

    /// Any query request: validated into a window of at most 7 days and a limit within bounds,
    /// or refused with a message; never a panic (dates at the ends of the calendar included).
    /// Containment is reflexive, and every object contains the empty object and its own parts.
    #[test]
    fn containment_is_reflexive_and_holds_for_parts(v in json_value()) {
        prop_assert!(crate::search::contains(&v, &v));
        if let serde_json::Value::Object(m) = &v {
            let empty = json!({});
            prop_assert!(crate::search::contains(&v, &empty));
            for (k, part) in m {
                let one = json!({ k: part });
                prop_assert!(crate::search::contains(&v, &one));
            }
        }
    }

    #[test]
    fn any_query_is_validated_or_refused(
        from in prop_oneof![Just(None), "\\PC{0,30}".prop_map(Some), any::<i64>().prop_map(|s| Some(rfc3339(s)))],
        to in prop_oneof![Just(None), "\\PC{0,30}".prop_map(Some), any::<i64>().prop_map(|s| Some(rfc3339(s)))],
        limit in prop::option::of(any::<i64>()),
        level in prop::option::of("\\PC{0,8}"),
        message in prop::option::of("\\PC{0,300}"),
        data in prop::option::of(json_value()),
    ) {
        let req = QueryRequest { from, to, limit, level, message, data, ..Default::default() };
        match validate(&req) {
            Ok(q) => {
                prop_assert!(q.search.from < q.search.to && q.search.to - q.search.from <= Duration::days(MAX_RANGE_DAYS));
                prop_assert!((1..=MAX_LIMIT).contains(&q.limit));
            }
            Err(m) => prop_assert!(!m.is_empty()),
        }
    }

    /// A cursor reads back for its own search; forged, truncated or altered ones, or one sent
    /// with another search, are refused (never a panic).
    #[test]
    fn cursors_are_unforgeable(
        search in "[a-f0-9]{8}",
        t in -62_000_000_000_000_000i64..250_000_000_000_000_000,
        id in any::<i64>(),
        junk in "\\PC{0,80}",
        cut in any::<prop::sample::Index>(),
        flip in any::<prop::sample::Index>(),
    ) {
        let secret = &auth_core::signing::SigningKeys::single(b"a-signing-secret-for-tests");
        let now = Utc::now();
        let Some(at) = chrono::DateTime::from_timestamp_micros(t) else { return Ok(()) };
        let cursor = make_cursor(secret, "org_1", &search, (at, id), now + Duration::minutes(5));
        prop_assert_eq!(read_cursor(secret, "org_1", &search, &cursor, now), Ok((at, id)));
        prop_assert!(read_cursor(secret, "org_1", "other", &cursor, now).is_err());
        prop_assert!(read_cursor(secret, "org_2", &search, &cursor, now).is_err());
        prop_assert!(read_cursor(secret, "org_1", &search, &junk, now).is_err());
        let short = &cursor[..cut.index(cursor.len())];
        prop_assert!(read_cursor(secret, "org_1", &search, short, now).is_err());
        let at = flip.index(cursor.len());
        let mut changed = cursor.clone().into_bytes();
        changed[at] = if changed[at] == b'A' { b'B' } else { b'A' };
        let changed = String::from_utf8(changed).unwrap_or_default();
        if changed != cursor {
            prop_assert!(read_cursor(secret, "org_1", &search, &changed, now).is_err());
        }
    }
}

/// An RFC 3339 time for any second count chrono can represent (else a far-future string).
fn rfc3339(secs: i64) -> String {
    Utc.timestamp_opt(secs, 0)
        .single()
        .map_or_else(|| "+262143-12-31T23:59:59Z".to_owned(), |t| t.to_rfc3339())
}

/// The words index rules out only runs without a match: for any message and any substring of it
/// (cut at character boundaries) as the search term, every piece of the term sits in the words
/// of the message's run where the piece says (after a space when it starts a word, before one
/// when it ends a word), which is what the store's index search asks of the run.
#[test]
fn a_run_always_holds_the_pieces_of_a_substring_of_its_messages() {
    use crate::words::{pieces, runs};
    let text = "[ a-zA-Z0-9_%\\\\.:/\\-éİΣς日👍\u{a0}]{0,40}";
    proptest!(|(message in text, others in prop::collection::vec(text, 0..4), cut in any::<(prop::sample::Index, prop::sample::Index)>())| {
        let bounds: Vec<usize> = message.char_indices().map(|(i, _)| i).chain([message.len()]).collect();
        let (a, b) = (cut.0.index(bounds.len()), cut.1.index(bounds.len()));
        let term = &message[bounds[a.min(b)]..bounds[a.max(b)]];
        let t = Utc.with_ymd_and_hms(2026, 11, 20, 12, 0, 0).unwrap();
        let events = std::iter::once(message.as_str()).chain(others.iter().map(String::as_str)).map(|m| (t, m));
        let run = &runs(events)[0];
        for p in pieces(term) {
            let needle = format!(
                "{}{}{}",
                if p.word_start { " " } else { "" },
                p.text,
                if p.word_end { " " } else { "" }
            );
            prop_assert!(run.words.contains(&needle), "{:?} in {:?} (term {:?})", needle, run.words, term);
        }
    });
}
