//! Message search: across days, and every substring across a batch's runs.

use super::*;

/// A message search over a week: matches on several days come newest first, pages that span days
/// are complete, and a cursor walk sees each match once (an adapter may search day by day).
pub async fn message_search_across_days(f: &Fixture) {
    let Seeded { now, ta, .. } = seed(f).await;
    let (store, target) = (f.store.as_ref(), &ta);
    let ago = |hours: i64| (now - Duration::hours(hours)).to_rfc3339();
    let hit = |n: i64, hours: i64| json!({ "level": "warn", "message": format!("SpeedHack #{n} detected"), "occurred_at": ago(hours) });
    let miss = |hours: i64| json!({ "level": "info", "message": "speed limit", "occurred_at": ago(hours) });
    let body = json!({ "batch_id": "batch-days", "events": [
        hit(5, 150), miss(3), hit(1, 2), hit(3, 54), miss(31), hit(2, 30), hit(4, 78), miss(100),
    ]});
    let batch = parse_batch(&serde_json::to_vec(&body).unwrap(), now).unwrap();
    assert!(matches!(
        store.ingest(target, batch, now).await.unwrap(),
        IngestOutcome::Accepted { .. }
    ));
    let week = EventQuery {
        server_id: target.server_id.clone(),
        from: now - Duration::days(7),
        to: now + Duration::minutes(1),
        filters: Filters {
            message: Some("speedhack".into()),
            ..Filters::default()
        },
        after: None,
        limit: 100,
        scan_limit: Some(1_000),
        enough: 100,
    };
    let numbers = |rows: &[crate::store::EventRow]| {
        rows.iter()
            .map(|r| r.message.split(' ').nth(1).unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let all = store.query(&week).await.unwrap();
    assert_eq!(
        numbers(&all),
        ["#1", "#2", "#3", "#4", "#5"],
        "newest first"
    );
    let three = store
        .query(&EventQuery {
            limit: 3,
            ..week.clone()
        })
        .await
        .unwrap();
    assert_eq!(numbers(&three), ["#1", "#2", "#3"], "a page spanning days");
    let middle = store
        .query(&EventQuery {
            from: now - Duration::hours(60),
            to: now - Duration::hours(20),
            ..week.clone()
        })
        .await
        .unwrap();
    assert_eq!(numbers(&middle), ["#2", "#3"], "window bounds inside days");
    for limit in [1, 2, 4] {
        let mut walked = Vec::new();
        let mut after = None;
        loop {
            let page = store
                .query(&EventQuery {
                    limit,
                    after,
                    ..week.clone()
                })
                .await
                .unwrap();
            assert!(page.len() <= limit);
            let Some(last) = page.last() else { break };
            after = Some((last.occurred_at, last.id));
            walked.extend(page.into_iter().map(|r| r.id));
        }
        assert_eq!(
            walked,
            all.iter().map(|r| r.id).collect::<Vec<_>>(),
            "cursor walk with limit {limit}"
        );
    }
}

/// A message term is a case-insensitive substring, whatever its shape: inside a word, at a
/// word's start or end, across separators, of non-ASCII text, of separators only, or too short
/// to index. Pages, counts and facets find exactly the events whose message contains it, in a
/// batch of several runs of events over two UTC days (an adapter may index runs of a batch's
/// events, `crate::words`, and must lose no match by it).
pub async fn message_search_matches_every_substring_across_runs(f: &Fixture) {
    let (a, _) = targets(f);
    let now = Utc::now().trunc_subsecs(6);
    let messages = [
        "bank transfer of 4242 completed",
        "bank transfer of 42420 completed",
        "transfer of 14242 done",
        "player 4242 joined the server",
        "[OOC] anyone selling a car near légion-square?",
        "SpeedHack detected on player_7",
        "100% discount_code",
        "日本語のメッセージ",
        "tab\tseparated",
    ];
    let events: Vec<_> = (0..130i64)
        .map(|i| {
            let at = now - Duration::minutes(17 * i + 1);
            json!({ "level": "info", "message": messages[i as usize % messages.len()], "occurred_at": at.to_rfc3339() })
        })
        .collect();
    ingest_json(
        f,
        &a,
        json!({ "batch_id": "batch-words", "events": events }),
    )
    .await;
    let window = (now - Duration::days(2), now + Duration::minutes(1));
    for term in [
        "transfer of 4242",
        "ransfer of 424",
        "of 4242",
        "4242 ",
        " 4242",
        "LÉGION-SQUARE",
        "gion-squ",
        "speedhack",
        "HACK DET",
        "_7",
        "0% d",
        "本語",
        "of",
        "-",
        "? ",
        "zzz",
        "r 4242 j",
        "\tsep",
        "r of 1",
    ] {
        let expected = events
            .iter()
            .filter(|e| {
                let m = e["message"].as_str().unwrap();
                m.to_lowercase().contains(&term.to_lowercase())
            })
            .count();
        let filters = Filters {
            message: Some(term.into()),
            ..Filters::default()
        };
        let page = f
            .store
            .query(&EventQuery {
                server_id: a.server_id.clone(),
                from: window.0,
                to: window.1,
                filters: filters.clone(),
                after: None,
                limit: 1_000,
                scan_limit: None,
                enough: 1_000,
            })
            .await
            .unwrap();
        assert_eq!(page.len(), expected, "page of {term:?}");
        assert!(page.windows(2).all(|w| w[0].occurred_at > w[1].occurred_at));
        let counts = f
            .store
            .counts(&CountQuery {
                server_id: a.server_id.clone(),
                from: window.0,
                to: window.1,
                filters: filters.clone(),
                bucket: Duration::hours(1),
                scan_limit: 1_000,
            })
            .await
            .unwrap();
        let counted: i64 = counts.iter().map(|c| c.count).sum();
        assert_eq!(counted, expected as i64, "counts of {term:?}");
        let facets = f
            .store
            .facets(&FacetQuery {
                server_id: a.server_id.clone(),
                from: window.0,
                to: window.1,
                filters,
                sample: 1_000,
                top: 10,
            })
            .await
            .unwrap();
        assert_eq!(facets.examined, expected as i64, "facets of {term:?}");
    }
}
