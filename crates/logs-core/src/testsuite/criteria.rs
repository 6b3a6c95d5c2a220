//! Search terms past exact equality: event type prefixes, a player by any identifier, `data`
//! path conditions and exclusions, in pages and in counts.

use super::*;
use crate::criteria::{DataConditionRequest, DataOp, ExcludeRequest};
use crate::search::{validate_filters, SearchFields};

/// Eight events on server `a` (messages `e1`…`e8`, 40 to 33 minutes ago) and one on `b`.
async fn seed_people(f: &Fixture) -> (EventQuery, chrono::DateTime<Utc>) {
    let Seeded { now, ta, base } = seed(f).await;
    let (_, tb) = targets(f);
    let t = |mins: i64| (now - Duration::minutes(mins)).to_rfc3339();
    ingest_json(f, &ta, json!({ "batch_id": "batch-people", "events": [
        { "level": "info", "message": "e1", "event_type": "admin.kick", "occurred_at": t(40),
          "player_id": "3", "player_identifiers": { "license": "license:aaa", "discord": "111" },
          "target_player_id": "7", "target_player_identifiers": { "license": "bbb" },
          "resource": "txadmin", "data": { "reason": "RDM" } },
        { "level": "info", "message": "e2", "event_type": "admin.ban", "occurred_at": t(39),
          "player_id": "3", "player_identifiers": { "license": "license:aaa" }, "resource": "txadmin" },
        { "level": "info", "message": "e3", "event_type": "administrator", "occurred_at": t(38) },
        { "level": "info", "message": "e4", "event_type": "bank.transfer", "occurred_at": t(37),
          "player_id": "7", "player_identifiers": { "license": "bbb" }, "resource": "bank",
          "data": { "amount": 150000, "to": { "account": "ACC-77" }, "we\"ird\\ey": 5, "ünï": "Ärger" } },
        { "level": "info", "message": "e5", "event_type": "bank.transfer", "occurred_at": t(36),
          "resource": "bank", "data": { "amount": 99999.5, "to": { "account": "XYZ" } } },
        { "level": "info", "message": "e6", "event_type": "bank.transfer", "occurred_at": t(35),
          "resource": "bank", "data": { "amount": "200000", "to": "ACC-1" } },
        { "level": "error", "message": "e7 ECONNRESET while saving", "event_type": "chat",
          "occurred_at": t(34) },
        { "level": "info", "message": "e8", "event_type": "chat", "occurred_at": t(33),
          "player_id": "license:ccc", "resource": "chat" },
    ]}))
    .await;
    ingest_json(
        f,
        &tb,
        json!({ "batch_id": "batch-people", "events": [
            { "level": "info", "message": "e9", "event_type": "admin.kick", "occurred_at": t(40),
              "player_identifiers": { "license": "license:aaa" } },
        ]}),
    )
    .await;
    let q = EventQuery {
        from: now - Duration::minutes(41),
        to: now - Duration::minutes(32),
        ..base
    };
    (q, now)
}

fn tags(rows: Vec<crate::store::EventRow>) -> Vec<String> {
    let mut v: Vec<String> = rows
        .into_iter()
        .map(|r| r.message.split(' ').next().unwrap_or_default().to_owned())
        .collect();
    v.sort();
    v
}

fn cond(path: &str, op: DataOp, value: serde_json::Value) -> Option<Vec<DataConditionRequest>> {
    Some(vec![DataConditionRequest {
        path: path.into(),
        op,
        value,
    }])
}

/// Every search of the table, on the store and through [`Filters::matches`] (the tail's and the
/// memory store's rule) alike.
pub async fn prefixes_players_data_conditions_and_exclusions_select_their_events(f: &Fixture) {
    let (q, _) = seed_people(f).await;
    let ex = |e: ExcludeRequest| SearchFields {
        exclude: Some(e),
        ..Default::default()
    };
    let all = ["e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8"];
    let but = |gone: &[&str]| -> Vec<&str> {
        all.iter().copied().filter(|t| !gone.contains(t)).collect()
    };
    let cases: Vec<(SearchFields, Vec<&str>)> = vec![
        (
            SearchFields {
                event_type: Some("admin.*".into()),
                ..Default::default()
            },
            vec!["e1", "e2"],
        ),
        (
            SearchFields {
                event_type: Some("admin.".into()),
                ..Default::default()
            },
            vec!["e1", "e2"],
        ),
        (
            SearchFields {
                event_type: Some("admin".into()),
                ..Default::default()
            },
            vec![],
        ),
        (
            SearchFields {
                event_type: Some("admin*".into()),
                ..Default::default()
            },
            vec!["e1", "e2", "e3"],
        ),
        (
            SearchFields {
                event_type: Some("bank.transfer".into()),
                ..Default::default()
            },
            vec!["e4", "e5", "e6"],
        ),
        (
            SearchFields {
                player: Some("license:aaa".into()),
                ..Default::default()
            },
            vec!["e1", "e2"],
        ),
        (
            SearchFields {
                player: Some("license:bbb".into()),
                ..Default::default()
            },
            vec!["e1", "e4"],
        ),
        (
            SearchFields {
                player: Some("7".into()),
                ..Default::default()
            },
            vec!["e1", "e4"],
        ),
        (
            SearchFields {
                player: Some("discord:111".into()),
                ..Default::default()
            },
            vec!["e1"],
        ),
        (
            SearchFields {
                player: Some("license:ccc".into()),
                ..Default::default()
            },
            vec!["e8"],
        ),
        (
            SearchFields {
                player: Some("aaa".into()),
                ..Default::default()
            },
            vec![],
        ),
        (
            SearchFields {
                data_where: cond("amount", DataOp::Gt, json!(100000)),
                ..Default::default()
            },
            vec!["e4"],
        ),
        (
            SearchFields {
                data_where: cond("amount", DataOp::Ge, json!(99999.5)),
                ..Default::default()
            },
            vec!["e4", "e5"],
        ),
        (
            SearchFields {
                data_where: cond("amount", DataOp::Lt, json!(100000)),
                ..Default::default()
            },
            vec!["e5"],
        ),
        (
            SearchFields {
                data_where: cond("amount", DataOp::Le, json!(1e9)),
                ..Default::default()
            },
            vec!["e4", "e5"],
        ),
        (
            SearchFields {
                data_where: cond("to.account", DataOp::Prefix, json!("ACC")),
                ..Default::default()
            },
            vec!["e4"],
        ),
        (
            SearchFields {
                data_where: cond("to", DataOp::Prefix, json!("ACC")),
                ..Default::default()
            },
            vec!["e6"],
        ),
        (
            SearchFields {
                data_where: cond("we\"ird\\ey", DataOp::Ge, json!(5)),
                ..Default::default()
            },
            vec!["e4"],
        ),
        (
            SearchFields {
                data_where: cond("ünï", DataOp::Prefix, json!("Är")),
                ..Default::default()
            },
            vec!["e4"],
        ),
        (
            SearchFields {
                data_where: cond("reason.x", DataOp::Prefix, json!("R")),
                ..Default::default()
            },
            vec![],
        ),
        (
            SearchFields {
                data_where: Some(vec![
                    DataConditionRequest {
                        path: "amount".into(),
                        op: DataOp::Gt,
                        value: json!(1),
                    },
                    DataConditionRequest {
                        path: "to.account".into(),
                        op: DataOp::Prefix,
                        value: json!("X"),
                    },
                ]),
                ..Default::default()
            },
            vec!["e5"],
        ),
        (
            ex(ExcludeRequest {
                event_types: Some(vec!["admin.*".into(), "chat".into()]),
                ..Default::default()
            }),
            vec!["e3", "e4", "e5", "e6"],
        ),
        (
            ex(ExcludeRequest {
                resources: Some(vec!["bank".into(), "chat".into()]),
                ..Default::default()
            }),
            vec!["e1", "e2", "e3", "e7"],
        ),
        (
            ex(ExcludeRequest {
                players: Some(vec!["license:aaa".into()]),
                ..Default::default()
            }),
            but(&["e1", "e2"]),
        ),
        (
            ex(ExcludeRequest {
                players: Some(vec!["7".into(), "license:ccc".into()]),
                ..Default::default()
            }),
            but(&["e1", "e4", "e8"]),
        ),
        (
            ex(ExcludeRequest {
                message: Some("econnreset".into()),
                ..Default::default()
            }),
            but(&["e7"]),
        ),
        (
            ex(ExcludeRequest {
                data: Some(json!({ "to": { "account": "XYZ" } })),
                ..Default::default()
            }),
            but(&["e5"]),
        ),
        (
            ex(ExcludeRequest {
                levels: Some(vec!["info".into()]),
                ..Default::default()
            }),
            vec!["e7"],
        ),
        (
            SearchFields {
                event_type: Some("bank.*".into()),
                exclude: Some(ExcludeRequest {
                    data: Some(json!({ "amount": 150000 })),
                    ..Default::default()
                }),
                ..Default::default()
            },
            vec!["e5", "e6"],
        ),
    ];
    for (fields, want) in cases {
        let filters = validate_filters(&fields).unwrap();
        let got = f
            .store
            .query(&EventQuery {
                filters: filters.clone(),
                ..q.clone()
            })
            .await
            .unwrap();
        assert!(
            got.iter().all(|r| filters.matches(r)),
            "{fields:?}: the store and the rule agree"
        );
        assert_eq!(tags(got), want, "{fields:?}");
    }
    // a prefix of several types, one event a page: newest first, each once
    let typed = |t: &str| {
        validate_filters(&SearchFields {
            event_type: Some(t.into()),
            ..Default::default()
        })
        .unwrap()
    };
    let mut after = None;
    let mut walked = Vec::new();
    while walked.len() <= 3 {
        let page = EventQuery {
            filters: typed("admin*"),
            after,
            limit: 1,
            ..q.clone()
        };
        let Some(last) = f.store.query(&page).await.unwrap().pop() else {
            break;
        };
        after = Some((last.occurred_at, last.id));
        walked.push(last.message);
    }
    assert_eq!(walked, ["e3", "e2", "e1"]);
    let none = EventQuery {
        filters: typed("zzz.*"),
        ..q.clone()
    };
    assert!(f.store.query(&none).await.unwrap().is_empty());
}

/// Counts read from kept hourly counts (type prefixes and type or resource exclusions) and
/// from the events (players, data conditions) give the events' numbers.
pub async fn counts_of_prefixes_and_exclusions_are_the_events_numbers(f: &Fixture) {
    let (q, now) = seed_people(f).await;
    let hour = bucket_start(now, Duration::hours(1));
    let count = |filters: Filters, bucket: Duration| CountQuery {
        server_id: q.server_id.clone(),
        from: hour - Duration::hours(3),
        to: hour + Duration::hours(1),
        filters,
        bucket,
        scan_limit: 1_000,
    };
    let cases: Vec<(SearchFields, i64)> = vec![
        (
            SearchFields {
                event_type: Some("admin.*".into()),
                ..Default::default()
            },
            2,
        ),
        (
            SearchFields {
                event_type: Some("bank.".into()),
                ..Default::default()
            },
            3,
        ),
        (
            SearchFields {
                exclude: Some(ExcludeRequest {
                    event_types: Some(vec!["admin.*".into(), "administrator".into()]),
                    resources: Some(vec!["bank".into()]),
                    ..Default::default()
                }),
                ..Default::default()
            },
            // the seed's own four events (player.join, log, chat, log) are in the window too
            2 + 4,
        ),
        (
            SearchFields {
                player: Some("license:bbb".into()),
                ..Default::default()
            },
            2,
        ),
        (
            SearchFields {
                data_where: cond("amount", DataOp::Gt, json!(0)),
                ..Default::default()
            },
            2,
        ),
    ];
    for (fields, want) in cases {
        let filters = validate_filters(&fields).unwrap();
        for bucket in [Duration::hours(1), Duration::minutes(5)] {
            let got: i64 = f
                .store
                .counts(&count(filters.clone(), bucket))
                .await
                .unwrap()
                .iter()
                .map(|c| c.count)
                .sum();
            assert_eq!(got, want, "{fields:?} in {bucket} buckets");
        }
    }
}

/// Events found by their player's name: the first name key present, whole, either case, within
/// the window, newest first, one server at a time.
pub async fn events_are_found_by_their_players_name(f: &Fixture) {
    let Seeded { now, ta, base } = seed(f).await;
    let (_, tb) = targets(f);
    let t = |mins: i64| (now - Duration::minutes(mins)).to_rfc3339();
    ingest_json(
        f,
        &ta,
        json!({ "batch_id": "batch-names", "events": [
            { "level": "info", "message": "n1", "event_type": "player.join", "occurred_at": t(30),
              "player_id": "12", "data": { "playerName": "Jay" } },
            { "level": "info", "message": "n2", "event_type": "chat", "occurred_at": t(20),
              "player_id": "12", "data": { "player_name": "JAY" } },
            // the first key present is the name: `playerName` here, not `name`
            { "level": "info", "message": "n3", "event_type": "item", "occurred_at": t(19),
              "data": { "playerName": "Mia", "name": "Jay" } },
            // a target's name, a longer name, a name inside a string: none is Jay
            { "level": "info", "message": "n4", "event_type": "admin.kick", "occurred_at": t(18),
              "data": { "targetName": "Jay" } },
            { "level": "info", "message": "n5", "event_type": "chat", "occurred_at": t(17),
              "data": { "playerName": "Jaylen" } },
            { "level": "info", "message": "n6", "event_type": "chat", "occurred_at": t(16),
              "data": { "name": "jay" } },
            { "level": "info", "message": "n7", "event_type": "chat", "occurred_at": t(15),
              "data": { "playerName": null, "name": "Jay" } },
        ]}),
    )
    .await;
    ingest_json(
        f,
        &tb,
        json!({ "batch_id": "batch-names", "events": [
            { "level": "info", "message": "n8", "event_type": "player.join", "occurred_at": t(25),
              "data": { "playerName": "Jay" } },
        ]}),
    )
    .await;
    let q = NameQuery {
        server_id: base.server_id.clone(),
        from: now - Duration::hours(1),
        to: now + Duration::minutes(1),
        name: "jay".into(),
        limit: 100,
    };
    let messages = |rows: Vec<crate::store::EventRow>| -> Vec<String> {
        rows.into_iter().map(|r| r.message).collect()
    };
    assert_eq!(
        messages(f.store.named(&q).await.unwrap()),
        ["n6", "n2", "n1"],
        "newest first, either case; a null first key names nobody"
    );
    let limited = NameQuery {
        limit: 2,
        ..q.clone()
    };
    assert_eq!(
        messages(f.store.named(&limited).await.unwrap()),
        ["n6", "n2"]
    );
    let earlier = NameQuery {
        to: now - Duration::minutes(25),
        ..q.clone()
    };
    assert_eq!(messages(f.store.named(&earlier).await.unwrap()), ["n1"]);
    let other = NameQuery {
        server_id: tb.server_id.clone(),
        ..q.clone()
    };
    assert_eq!(messages(f.store.named(&other).await.unwrap()), ["n8"]);
    let mia = NameQuery {
        name: "mia".into(),
        ..q
    };
    assert_eq!(messages(f.store.named(&mia).await.unwrap()), ["n3"]);
}

/// One read of several servers answers what a `player` search of each server, merged newest
/// first, does: by id, by identifier written whole or without its kind, as actor or target,
/// paged by `after`, and only on the servers named.
pub async fn one_players_events_on_many_servers_are_one_read(f: &Fixture) {
    let (q, now) = seed_people(f).await;
    let (_, tb) = targets(f);
    let t = |mins: i64| (now - Duration::minutes(mins)).to_rfc3339();
    ingest_json(f, &tb, json!({ "batch_id": "batch-people-2", "events": [
        // a target id that is an identifier's whole text; an identifier under another kind
        { "level": "info", "message": "e10", "event_type": "chat", "occurred_at": t(35),
          "player_identifiers": { "license2": "license:aaa" }, "target_player_id": "license:ddd" },
    ]}))
    .await;
    let both = vec![f.a.0.clone(), f.b.0.clone()];
    let read = |player: &str, servers: Vec<ServerId>, after, limit| {
        let q = crate::store::PlayerEventsQuery {
            org: f.org.clone(),
            servers,
            from: q.from,
            to: q.to,
            player: crate::criteria::PlayerMatch::parse("player", player).unwrap(),
            after,
            limit,
        };
        async move { f.store.player_events(&q).await.unwrap() }
    };
    let messages = |rows: &[crate::store::EventRow]| -> Vec<String> {
        rows.iter().map(|r| r.message.clone()).collect()
    };
    let cases: [(&str, Vec<ServerId>, &[&str]); 9] = [
        // e9 on b carries the license as an actor identifier only; e1 and e2 name it on a
        ("license:aaa", both.clone(), &["e2", "e9", "e1"]),
        ("license:aaa", vec![f.b.0.clone()], &["e9"]),
        // stored without its kind, found as the target of e1 and the actor of e4
        ("license:bbb", both.clone(), &["e4", "e1"]),
        ("7", both.clone(), &["e4", "e1"]),
        ("discord:111", both.clone(), &["e1"]),
        // a player id that looks like an identifier
        ("license:ccc", both.clone(), &["e8"]),
        ("license:ddd", both.clone(), &["e10"]),
        // e10's license2 is no license (not in the first case), found under its own kind
        ("license2:license:aaa", both.clone(), &["e10"]),
        ("license:aa", both.clone(), &[]),
    ];
    for (player, servers, expected) in cases {
        let rows = read(player, servers.clone(), None, 100).await;
        assert_eq!(messages(&rows), expected, "{player} on {servers:?}");
        // the same as a search of each server, merged
        let mut merged = Vec::new();
        for s in &servers {
            let one = EventQuery {
                server_id: s.clone(),
                filters: Filters {
                    player: Some(crate::criteria::PlayerMatch::parse("player", player).unwrap()),
                    ..Filters::default()
                },
                ..q.clone()
            };
            merged.extend(f.store.query(&one).await.unwrap());
        }
        let merged = crate::player::merge_pages(vec![merged], 100);
        assert_eq!(messages(&rows), messages(&merged), "{player}");
    }
    // pages of one walk every event once, newest first
    let first = read("license:aaa", both.clone(), None, 2).await;
    assert_eq!(messages(&first), ["e2", "e9"]);
    let last = first.last().map(|r| (r.occurred_at, r.id));
    let rest = read("license:aaa", both.clone(), last, 2).await;
    assert_eq!(messages(&rest), ["e1"]);
    assert!(read("license:aaa", Vec::new(), None, 100).await.is_empty());
}
