use super::*;
use chrono::Duration;
use serde_json::json;

fn at(mins: i64) -> DateTime<Utc> {
    "2026-11-20T12:00:00Z".parse::<DateTime<Utc>>().unwrap() + Duration::minutes(mins)
}

fn row(id: i64, server: &str, mins: i64, event_type: &str) -> EventRow {
    EventRow {
        cfx_id: server.into(),
        event_type: event_type.into(),
        occurred_at: at(mins),
        ingested_at: at(mins),
        ..EventRow::fixture(id)
    }
}

fn jay() -> PlayerMatch {
    PlayerMatch::parse("player", "license:abc").unwrap()
}

/// The player as actor with their identifiers (and a name in `data`).
fn acts(mut r: EventRow, name: Option<&str>) -> EventRow {
    r.player_id = Some("12".into());
    r.player_identifiers = Some(json!({ "license": "license:abc", "discord": "discord:1" }));
    if let Some(n) = name {
        r.data = Some(json!({ "playerName": n }));
    }
    r
}

#[test]
fn requests_need_a_player_and_bound_their_servers_and_pages() {
    let req = |f: &dyn Fn(&mut PlayerRequest)| {
        let mut r = PlayerRequest {
            player: Some("license:abc".into()),
            from: Some("2026-08-01T00:00:00Z".into()),
            to: Some("2026-11-21T00:00:00Z".into()),
            ..Default::default()
        };
        f(&mut r);
        validate(&r)
    };
    let ok = req(&|_| {}).unwrap();
    assert_eq!(ok.limit, 100);
    assert_eq!(ok.player.identifier, Some(("license".into(), "abc".into())));
    assert_eq!(ok.search.filters.player, Some(jay()), "any window length");
    assert!(req(&|r| r.player = None)
        .unwrap_err()
        .contains("`player` is required"));
    assert!(req(&|r| r.player = Some(String::new()))
        .unwrap_err()
        .contains("`player` must not be empty"));
    assert!(req(&|r| r.from = None)
        .unwrap_err()
        .contains("`from` is required"));
    for (n, good) in [(0, false), (1, true), (50, true), (51, false)] {
        let r = req(&|r| r.server_ids = Some(vec!["s".into(); n]));
        assert_eq!(r.is_ok(), good, "{n} servers");
        if !good {
            assert!(r
                .unwrap_err()
                .contains("`serverIds` must name 1 to 50 servers"));
        }
    }
    for (n, good) in [(0, false), (1, true), (100, true), (101, false)] {
        assert_eq!(req(&|r| r.limit = Some(n)).is_ok(), good, "limit {n}");
    }
}

#[test]
fn a_cursor_digest_binds_player_servers_and_window_not_server_order() {
    let v = |player: &str| {
        validate(&PlayerRequest {
            player: Some(player.into()),
            from: Some("2026-11-01T00:00:00Z".into()),
            to: Some("2026-11-21T00:00:00Z".into()),
            ..Default::default()
        })
        .unwrap()
    };
    let d = digest(&v("license:abc"), &["s1", "s2"]);
    assert_eq!(d, digest(&v("license:abc"), &["s2", "s1"]));
    assert_ne!(d, digest(&v("license:abd"), &["s1", "s2"]));
    assert_ne!(d, digest(&v("license:abc"), &["s1"]));
}

#[test]
fn pages_merge_newest_first_across_servers() {
    let a = vec![row(9, "a", 9, "x"), row(3, "a", 3, "x")];
    let b = vec![
        row(8, "b", 9, "x"),
        row(5, "b", 5, "x"),
        row(1, "b", 1, "x"),
    ];
    let merged = merge_pages(vec![a, b], 4);
    let ids: Vec<i64> = merged.iter().map(|r| r.id).collect();
    assert_eq!(ids, [9, 8, 5, 3], "ties at one instant by id, descending");
    assert!(merge_pages(vec![], 4).is_empty());
}

#[test]
fn the_summary_names_identifiers_names_servers_types_and_sessions() {
    let mut target = row(7, "b", 30, "admin.kick");
    target.player_id = Some("3".into());
    target.target_player_id = Some("12".into());
    target.target_player_identifiers = Some(json!({ "license": "abc", "steam": "steam:9" }));
    target.data = Some(json!({ "targetName": "Jay R", "playerName": "Admin" }));
    let rows = vec![
        target,
        acts(row(6, "a", 25, "player.leave"), None),
        acts(row(5, "a", 20, "chat"), Some("Jay")),
        acts(row(4, "a", 10, "player.join"), Some("Jay")),
        acts(row(3, "b", 5, "player.leave"), None),
        acts(row(2, "a", 2, "player.join"), Some("  ")),
        acts(row(1, "a", 0, "player.join"), None),
    ];
    let s = summarize(&jay(), &rows, true);
    assert_eq!(s.examined, 7);
    assert!(s.sampled);
    assert_eq!((s.first_seen, s.last_seen), (Some(at(0)), Some(at(30))));
    assert_eq!(
        s.identifiers["license"],
        [
            Seen {
                value: "license:abc".into(),
                count: 6
            },
            Seen {
                value: "abc".into(),
                count: 1
            }
        ]
    );
    assert_eq!(s.identifiers["steam"][0].value, "steam:9");
    assert_eq!(s.identifiers["discord"][0].count, 6);
    // the admin's name (`playerName` of an event where Jay is the target) is not Jay's
    assert_eq!(
        s.names,
        [
            Seen {
                value: "Jay".into(),
                count: 2
            },
            Seen {
                value: "Jay R".into(),
                count: 1
            }
        ]
    );
    assert_eq!(
        s.servers[0],
        Seen {
            value: "a".into(),
            count: 5
        }
    );
    assert_eq!(
        s.event_types[0],
        Seen {
            value: "player.join".into(),
            count: 3
        }
    );
    // a: join 0 (then another join at 2: no end known), join 10 → leave 25; b: a leave at 5
    // whose join is not in the sample; the kick (as target) is no session
    assert_eq!(
        s.sessions,
        [
            Session {
                server_id: "a".into(),
                joined_at: Some(at(10)),
                left_at: Some(at(25)),
                duration_seconds: Some(900)
            },
            Session {
                server_id: "b".into(),
                joined_at: None,
                left_at: Some(at(5)),
                duration_seconds: None
            },
            Session {
                server_id: "a".into(),
                joined_at: Some(at(2)),
                left_at: None,
                duration_seconds: None
            },
            Session {
                server_id: "a".into(),
                joined_at: Some(at(0)),
                left_at: None,
                duration_seconds: None
            },
        ]
    );
    assert_eq!(summarize(&jay(), &[], false), Summary::default());
}
