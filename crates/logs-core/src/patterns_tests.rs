use super::*;
use chrono::Duration;

#[test]
fn templates_mask_what_varies_and_keep_the_words() {
    for (message, want) in [
        ("read ECONNRESET", "read ECONNRESET"),
        ("Player 12 joined", "Player <*> joined"),
        (
            "license:abc123 connected from 10.0.0.1:30120",
            "<*> connected from <*>",
        ),
        (
            "Transfer of $150,000 to ACC-77.",
            "Transfer of $<*> to <*>.",
        ),
        (
            "Item \"WEAPON_PISTOL\" given to 4",
            "Item \"<*>\" given to <*>",
        ),
        ("Kicked 'Jay' for `spam`", "Kicked '<*>' for `<*>`"),
        ("player's inventory is full", "player's inventory is full"),
        ("Unclosed \"quote 5", "Unclosed \"quote <*>"),
        (
            "SCRIPT ERROR: @es_extended/server.lua:42: attempt to index nil\n  at stack 1\n  at 2",
            "SCRIPT ERROR: <*>: attempt to index nil",
        ),
        ("a   b\t\tc ", "a b c"),
        (
            "Spieler Jürgen 12 beigetreten",
            "Spieler Jürgen <*> beigetreten",
        ),
        (
            "request 0f8fad5b-d9cb-469f-a165-70867728950e failed",
            "request <*> failed",
        ),
        ("took 12ms (limit 10ms)", "took <*> (limit <*>)"),
        ("done at 5, 6 and 7.", "done at <*>, <*> and <*>."),
        ("", ""),
        ("\nsecond line only", ""),
    ] {
        assert_eq!(template(message), want, "{message:?}");
    }
    // the same message with other values gives the same template
    assert_eq!(
        template("Player 7 paid $20 to 'Ann'"),
        template("Player 1234 paid $999,999.99 to 'Bob Smith'")
    );
}

#[test]
fn templates_are_cut_at_their_limit() {
    // N - 1, N, N + 1 characters (no digits: kept as written)
    for (n, cut) in [(199, false), (200, false), (201, true)] {
        let t = template(&"ä".repeat(n));
        assert_eq!(t.chars().count(), n.min(MAX_TEMPLATE_CHARS), "{n}");
        assert_eq!(t.ends_with('…'), cut, "{n}");
    }
}

fn row(id: i64, at: DateTime<Utc>, message: &str, resource: Option<&str>) -> EventRow {
    EventRow {
        level: "error".into(),
        occurred_at: at,
        ingested_at: at,
        resource: resource.map(str::to_owned),
        message: message.into(),
        ..EventRow::fixture(id)
    }
}

#[test]
fn events_group_by_resource_and_template_with_counts_times_and_a_trend() {
    let from: DateTime<Utc> = "2026-11-20T00:00:00Z".parse().unwrap();
    let to = from + Duration::hours(12);
    let at = |mins: i64| from + Duration::minutes(mins);
    // newest first, as a search reads them
    let rows = vec![
        row(
            6,
            to - Duration::microseconds(1),
            "read ECONNRESET 3",
            Some("phone"),
        ),
        row(5, at(300), "Player 9 joined", Some("core")),
        row(4, at(200), "read ECONNRESET 2", Some("phone")),
        row(3, at(60), "read ECONNRESET 1", Some("phone")),
        row(2, at(59), "read ECONNRESET 1", Some("bank")),
        row(1, from, "read ECONNRESET 0", Some("phone")),
    ];
    let p = tally(&rows, from, to, 10);
    assert_eq!(p.len(), 3);
    assert_eq!(p[0].template, "read ECONNRESET <*>");
    assert_eq!(p[0].resource.as_deref(), Some("phone"));
    assert_eq!(p[0].count, 4);
    assert_eq!(p[0].first_seen, from);
    assert_eq!(p[0].last_seen, to - Duration::microseconds(1));
    assert_eq!(p[0].example, "read ECONNRESET 3");
    // hours 0, 1, 3 and 11 of twelve
    let mut trend = vec![0; TREND_BUCKETS];
    trend[0] = 1;
    trend[1] = 1;
    trend[3] = 1;
    trend[11] = 1;
    assert_eq!(p[0].trend, trend);
    assert_eq!(p[0].trend.iter().sum::<i64>(), p[0].count);
    // equal counts: the most recently seen first
    assert_eq!(p[1].template, "Player <*> joined");
    assert_eq!(p[2].resource.as_deref(), Some("bank"));
    assert_eq!(tally(&rows, from, to, 1).len(), 1);
    assert!(tally(&[], from, to, 10).is_empty());
}

#[test]
fn top_is_bounded() {
    let req = |top| PatternsRequest {
        from: Some("2026-11-20T00:00:00Z".into()),
        to: Some("2026-11-21T00:00:00Z".into()),
        top,
        ..Default::default()
    };
    assert_eq!(validate(&req(None)).unwrap().top, DEFAULT_TOP);
    for (n, ok) in [
        (0, false),
        (1, true),
        (199, true),
        (200, true),
        (201, false),
    ] {
        assert_eq!(validate(&req(Some(n))).is_ok(), ok, "{n}");
    }
    assert!(validate(&req(Some(201)))
        .unwrap_err()
        .contains("`top` must be 1 to 200"));
}
