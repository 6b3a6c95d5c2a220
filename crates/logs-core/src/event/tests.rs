//! Tests of batch parsing, one per rule of docs/api.md's ingestion section; kept as one file
//! (over 400 lines) beside the parser they test.

use super::*;
use chrono::Duration;
use serde_json::json;

fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-22T12:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

fn body(events: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({ "batch_id": "batch-0001", "events": events })).unwrap()
}

fn one(event: Value) -> Result<Batch, BatchError> {
    parse_batch(&body(json!([event])), now())
}

fn details(r: Result<Batch, BatchError>) -> Vec<Detail> {
    match r {
        Err(BatchError::Invalid { details, .. }) => details,
        other => panic!("expected invalid, got {other:?}"),
    }
}

fn field_error(r: Result<Batch, BatchError>, field: &str) {
    let d = details(r);
    assert!(
        d.iter().any(|d| d.field == field),
        "expected an error on {field}: {d:?}"
    );
}

fn ok_event() -> Value {
    json!({ "level": "info", "message": "player joined" })
}

fn with(field: &str, v: Value) -> Value {
    let mut e = ok_event();
    e[field] = v;
    e
}

#[test]
fn minimal_event_gets_defaults() {
    let b = one(ok_event()).unwrap();
    assert_eq!(b.batch_id, "batch-0001");
    assert_eq!(b.events[0].event_type, "log");
    // absent: the receive time (the batch's ingested_at), on both parse paths
    assert_eq!(b.events[0].occurred_at, now());
    let null = one(with("occurred_at", Value::Null)).unwrap();
    assert_eq!(null.events[0].occurred_at, now());
    assert_eq!(b.events[0].level, Level::Info);
}

#[test]
fn full_event() {
    let e = json!({
        "level": "warn", "message": "money changed", "event_id": "evt:0001-abc", "event_type": "economy.transfer",
        "occurred_at": "2026-11-22T11:59:00+01:00", "player_id": "12", "target_player_id": "13",
        "player_identifiers": {"license": "license:abc", "discord": "discord:1"},
        "target_player_identifiers": {"steam": "steam:110000"}, "resource": "es_extended",
        "trace_id": "t-1", "environment": "production", "data": {"amount": 500, "nested": {"a": [1, 2]}}
    });
    let b = one(e).unwrap();
    let ev = &b.events[0];
    assert_eq!(ev.event_id.as_deref(), Some("evt:0001-abc"));
    assert_eq!(
        ev.player_identifiers.as_ref().unwrap()["license"],
        "license:abc"
    );
    assert_eq!(ev.data.as_ref().unwrap()["amount"], 500);
    assert_eq!(
        ev.occurred_at,
        DateTime::parse_from_rfc3339("2026-11-22T10:59:00Z").unwrap()
    );
}

#[test]
fn levels() {
    for l in ["debug", "info", "warn", "error", "fatal"] {
        assert!(one(with("level", json!(l))).is_ok(), "{l}");
    }
    for bad in [
        json!("INFO"),
        json!("warning"),
        json!(""),
        json!(3),
        json!(null),
    ] {
        field_error(one(with("level", bad)), "level");
    }
    let mut e = ok_event();
    e.as_object_mut().unwrap().remove("level");
    field_error(one(e), "level");
}

#[test]
fn message_limits_count_characters() {
    assert!(one(with("message", json!("a".repeat(2047)))).is_ok());
    assert!(one(with("message", json!("a".repeat(2048)))).is_ok());
    field_error(one(with("message", json!("a".repeat(2049)))), "message");
    assert!(
        one(with("message", json!("é".repeat(2048)))).is_ok(),
        "2048 chars, 4096 bytes"
    );
    assert!(one(with("message", json!("😀".repeat(2048)))).is_ok());
    field_error(one(with("message", json!("😀".repeat(2049)))), "message");
    field_error(one(with("message", json!(""))), "message");
    field_error(one(with("message", json!(12))), "message");
}

#[test]
fn id_limits() {
    for (n, ok) in [
        (7, false),
        (8, true),
        (9, true),
        (63, true),
        (64, true),
        (65, false),
    ] {
        let id = "a".repeat(n);
        assert_eq!(
            one(with("event_id", json!(id))).is_ok(),
            ok,
            "event_id len {n}"
        );
        let b = serde_json::to_vec(&json!({ "batch_id": "b".repeat(n), "events": [ok_event()] }))
            .unwrap();
        assert_eq!(parse_batch(&b, now()).is_ok(), ok, "batch_id len {n}");
    }
    for bad in [
        "abc def12",
        "abcdefg/h",
        "abcdefgh!",
        "ünïcödé12",
        "abc.defgh",
    ] {
        field_error(one(with("event_id", json!(bad))), "event_id");
    }
    assert!(one(with("event_id", json!("AZaz09:_-"))).is_ok());
}

#[test]
fn event_type_limits() {
    assert!(one(with("event_type", json!("a".repeat(95)))).is_ok());
    assert!(one(with("event_type", json!("a".repeat(96)))).is_ok());
    field_error(one(with("event_type", json!("a".repeat(97)))), "event_type");
    assert!(one(with("event_type", json!("player.join:v2_x-y"))).is_ok());
    for bad in ["Player.Join", "a b", "a/b", "", "é"] {
        field_error(one(with("event_type", json!(bad))), "event_type");
    }
}

#[test]
fn occurred_at_window() {
    let t = |d: Duration| json!((now() + d).to_rfc3339());
    assert!(one(with(
        "occurred_at",
        t(Duration::days(-7) + Duration::seconds(1))
    ))
    .is_ok());
    assert!(one(with("occurred_at", t(Duration::days(-7)))).is_ok());
    field_error(
        one(with(
            "occurred_at",
            t(Duration::days(-7) - Duration::seconds(1)),
        )),
        "occurred_at",
    );
    assert!(one(with(
        "occurred_at",
        t(Duration::minutes(5) - Duration::seconds(1))
    ))
    .is_ok());
    assert!(one(with("occurred_at", t(Duration::minutes(5)))).is_ok());
    field_error(
        one(with(
            "occurred_at",
            t(Duration::minutes(5) + Duration::seconds(1)),
        )),
        "occurred_at",
    );
    for bad in [
        json!("yesterday"),
        json!("2026-11-22"),
        json!("2026-11-22 12:00:00"),
        json!(1700000000),
    ] {
        field_error(one(with("occurred_at", bad)), "occurred_at");
    }
}

#[test]
fn identifier_maps() {
    let map = |n: usize| Value::Object((0..n).map(|i| (format!("k{i}"), json!("v"))).collect());
    for field in ["player_identifiers", "target_player_identifiers"] {
        assert!(one(with(field, map(15))).is_ok());
        assert!(one(with(field, map(16))).is_ok());
        field_error(one(with(field, map(17))), field);
        field_error(one(with(field, json!({"license": 5}))), field);
        field_error(one(with(field, json!(["license"]))), field);
        field_error(one(with(field, json!("license:x"))), field);
    }
}

#[test]
fn data_must_be_an_object() {
    assert!(one(with("data", json!({}))).is_ok());
    for bad in [json!([1]), json!("x"), json!(1), json!(true)] {
        field_error(one(with("data", bad)), "data");
    }
}

/// `data` nested `depth` objects deep, `data` itself included.
fn nested(depth: usize) -> Value {
    (1..depth).fold(json!({}), |inner, _| json!({ "a": inner }))
}

#[test]
fn data_nesting_is_limited_by_the_parser_and_reported_per_event() {
    // serde_json stops at 128 levels of the whole body: batch object, `events`, the event and
    // `data` itself leave 126 for `data` (the limit docs/api.md states)
    assert!(one(with("data", nested(126))).is_ok());
    let d = details(one(with("data", nested(127))));
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!((d[0].index, d[0].field.as_str()), (Some(0), "event"));
    assert!(d[0].reason.contains("recursion limit"), "{d:?}");
}

#[test]
fn fields_sent_twice_are_named_but_data_keeps_the_last_duplicate() {
    let raw = br#"{"batch_id":"batch-0001","batch_id":"batch-0002","events":[
        {"level":"info","message":"first","message":"second","message":"third"},
        {"level":"info","message":"ok","level":"warn"}]}"#;
    let d = details(parse_batch(raw, now()));
    let got: Vec<_> = d
        .iter()
        .map(|d| (d.index, d.field.as_str(), d.reason.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (None, "batch_id", "appears more than once"),
            (Some(0), "message", "appears more than once"),
            (Some(1), "level", "appears more than once"),
        ]
    );
    // inside `data` (the client's own JSON) the last wins, as in PostgreSQL's jsonb
    let raw = br#"{"batch_id":"batch-0001","events":[
        {"level":"info","message":"m","data":{"k":1,"k":2,"o":{"x":1,"x":3}}}]}"#;
    let b = parse_batch(raw, now()).unwrap();
    assert_eq!(
        b.events[0].data.as_ref().map(|m| Value::Object(m.clone())),
        Some(json!({"k": 2, "o": {"x": 3}}))
    );
}

#[test]
fn integers_beyond_64_bits_become_doubles() {
    // the common behaviour of JSON parsers (and JavaScript), as docs/api.md states; pinned so a
    // parser change cannot alter stored events silently
    let raw = br#"{"batch_id":"batch-0001","events":[{"level":"info","message":"m",
        "data":{"big":123456789012345678901234567890,"u":18446744073709551615,"i":-9223372036854775808}}]}"#;
    let b = parse_batch(raw, now()).unwrap();
    let data = b.events[0].data.as_ref().unwrap();
    assert_eq!(data["big"].as_f64(), Some(1.2345678901234568e29));
    assert_eq!(data["big"].as_u64(), None);
    assert_eq!(data["u"].as_u64(), Some(u64::MAX));
    assert_eq!(data["i"].as_i64(), Some(i64::MIN));
    // beyond a double's range: refused, naming the event
    let raw = br#"{"batch_id":"batch-0001","events":[{"level":"info","message":"m","data":{"n":1e400}}]}"#;
    let d = details(parse_batch(raw, now()));
    assert_eq!((d[0].index, d[0].field.as_str()), (Some(0), "event"));
    assert!(d[0].reason.contains("number out of range"), "{d:?}");
}

#[test]
fn nul_and_unpaired_surrogates_are_stored_as_the_replacement_character() {
    // Postgres text and jsonb cannot hold U+0000, and a truncated emoji leaves a lone surrogate
    // escape: both become U+FFFD and the batch is accepted (decisions.md, pinned)
    let event = |msg: &str, rest: &str| {
        format!(
            r#"{{"batch_id":"batch-0001","events":[{{"level":"info","message":"{msg}"{rest}}}]}}"#
        )
    };
    let parsed = |body: String| {
        parse_batch(body.as_bytes(), now())
            .unwrap()
            .events
            .remove(0)
    };
    assert_eq!(parsed(event(r"a\u0000b", "")).message, "a\u{fffd}b");
    assert_eq!(parsed(event(r"\u0000", "")).message, "\u{fffd}");
    assert_eq!(parsed(event(r"money \ud83d", "")).message, "money \u{fffd}");
    assert_eq!(parsed(event(r"ok \ud83d\ude00", "")).message, "ok 😀");
    for field in ["player_identifiers", "target_player_identifiers"] {
        let e = parsed(event(
            "m",
            &format!(r#","{field}":{{"lic\u0000":"a\ud83d"}}"#),
        ));
        let ids = if field == "player_identifiers" {
            e.player_identifiers
        } else {
            e.target_player_identifiers
        };
        assert_eq!(
            ids.unwrap().get("lic\u{fffd}").map(String::as_str),
            Some("a\u{fffd}")
        );
    }
    let e = parsed(event(
        "m",
        r#","player_id":"p\u0000","resource":"r\udc00","data":{"k\u0000":"a\u0000b","deep":{"list":[1,{"x":["\ud83d"]}]}}"#,
    ));
    assert_eq!(e.player_id.as_deref(), Some("p\u{fffd}"));
    assert_eq!(e.resource.as_deref(), Some("r\u{fffd}"));
    assert_eq!(
        Value::Object(e.data.unwrap()),
        json!({"k\u{fffd}": "a\u{fffd}b", "deep": {"list": [1, {"x": ["\u{fffd}"]}]}})
    );
    // the same as the fast path's answer when the body comes from a serializer
    assert_eq!(
        one(with("message", json!("a\u{0}b"))).unwrap().events[0].message,
        "a\u{fffd}b"
    );
    // U+0001 and other control characters are data, kept as sent
    assert!(one(with("message", json!("a\u{1}b"))).is_ok());
    assert!(one(with("data", json!({"k": "a\u{1}b", "n": null}))).is_ok());
}

#[test]
fn labels_must_be_strings() {
    for field in [
        "player_id",
        "target_player_id",
        "resource",
        "trace_id",
        "environment",
    ] {
        assert!(one(with(field, json!("x"))).is_ok());
        assert!(one(with(field, json!(null))).is_ok());
        field_error(one(with(field, json!(12))), field);
        assert!(one(with(field, json!("a".repeat(256)))).is_ok());
        field_error(one(with(field, json!("a".repeat(257)))), field);
    }
}

#[test]
fn unknown_fields_are_named() {
    let d = details(one(with("mesage", json!("typo"))));
    assert_eq!(
        d,
        vec![Detail {
            index: Some(0),
            field: "mesage".into(),
            reason: "unknown field".into()
        }]
    );
    let b = serde_json::to_vec(
        &json!({ "batch_id": "batch-0001", "events": [ok_event()], "extra": 1 }),
    )
    .unwrap();
    let d = details(parse_batch(&b, now()));
    assert_eq!(d[0].field, "extra");
    assert_eq!(d[0].index, None);
}

#[test]
fn event_size_is_bytes_as_sent() {
    // The message limit is 2048 characters, so pad `data` to reach the byte limit.
    let sized = |target: usize| -> String {
        let base = r#"{"level":"info","message":"m","data":{"p":""}}"#;
        let pad = "x".repeat(target - base.len());
        format!(r#"{{"level":"info","message":"m","data":{{"p":"{pad}"}}}}"#)
    };
    for (n, ok) in [
        (MAX_EVENT_BYTES - 1, true),
        (MAX_EVENT_BYTES, true),
        (MAX_EVENT_BYTES + 1, false),
    ] {
        let ev = sized(n);
        assert_eq!(ev.len(), n);
        let b = format!(r#"{{"batch_id":"batch-0001","events":[{ev}]}}"#);
        let r = parse_batch(b.as_bytes(), now());
        assert_eq!(r.is_ok(), ok, "event of {n} bytes");
        if !ok {
            let d = details(r);
            assert_eq!(d[0].index, Some(0));
            assert_eq!(d[0].field, "event");
        }
    }
    // whitespace counts: the same event padded with spaces grows past the limit
    let spaced = format!(
        r#"{{"batch_id":"batch-0001","events":[ {}{} ]}}"#,
        sized(MAX_EVENT_BYTES - 10),
        ""
    );
    assert!(parse_batch(spaced.as_bytes(), now()).is_ok());
}

#[test]
fn batch_sizes() {
    for (n, ok) in [
        (0, false),
        (1, true),
        (499, true),
        (500, true),
        (501, false),
    ] {
        let events: Vec<Value> = (0..n).map(|_| ok_event()).collect();
        assert_eq!(
            parse_batch(&body(json!(events)), now()).is_ok(),
            ok,
            "{n} events"
        );
    }
    assert!(matches!(
        parse_batch(b"[]", now()),
        Err(BatchError::Malformed(_))
    ));
    assert!(matches!(
        parse_batch(b"not json", now()),
        Err(BatchError::Malformed(_))
    ));
    field_error(
        parse_batch(br#"{"batch_id":"batch-0001"}"#, now()),
        "events",
    );
    field_error(parse_batch(br#"{"events":[]}"#, now()), "batch_id");
    field_error(
        parse_batch(br#"{"batch_id":"batch-0001","events":{}}"#, now()),
        "events",
    );
}

#[test]
fn every_offending_event_is_reported_and_capped() {
    let events = json!([
        ok_event(),
        with("level", json!("nope")),
        ok_event(),
        with("message", json!(""))
    ]);
    let d = details(parse_batch(&body(events), now()));
    assert_eq!(
        d.iter().map(|d| d.index).collect::<Vec<_>>(),
        vec![Some(1), Some(3)]
    );
    let bad: Vec<Value> = (0..300).map(|_| with("level", json!("x"))).collect();
    match parse_batch(&body(json!(bad)), now()) {
        Err(BatchError::Invalid { details, truncated }) => {
            assert_eq!(details.len(), MAX_DETAILS);
            assert!(truncated);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn digest_ignores_formatting_and_key_order_but_not_content() {
    let a = br#"{"batch_id":"batch-0001","events":[{"level":"info","message":"m","data":{"a":1,"b":2}}]}"#;
    let b = b"{ \"events\" : [ { \"data\": {\"b\":2, \"a\":1}, \"message\":\"m\", \"level\":\"info\" } ], \"batch_id\":\"batch-0001\" }";
    let c = br#"{"batch_id":"batch-0001","events":[{"level":"info","message":"m2","data":{"a":1,"b":2}}]}"#;
    let da = parse_batch(a, now()).unwrap().digest;
    assert_eq!(da, parse_batch(b, now()).unwrap().digest);
    assert_ne!(da, parse_batch(c, now()).unwrap().digest);
    // defaults filled by the server are not part of the digest: same body later, same digest
    assert_eq!(
        da,
        parse_batch(a, now() + Duration::seconds(30))
            .unwrap()
            .digest
    );
}
