//! Counts per bucket and facets.

use super::*;

/// Buckets start at multiples of their length since the epoch; an event at a bucket's start is
/// in it, one a microsecond earlier is in the one before; a window not aligned to buckets counts
/// only its own events in its first and last buckets.
pub async fn counts_fall_in_epoch_aligned_buckets_inside_the_window(f: &Fixture) {
    let Seeded { now, ta, base } = seed(f).await;
    let store = f.store.as_ref();
    let ten = Duration::minutes(10);
    let b = bucket_start(now - Duration::hours(3), ten);
    let at = |t: chrono::DateTime<Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    let us = Duration::microseconds(1);
    let event = |t, level: &str| json!({ "level": level, "message": "m", "event_type": "tick", "occurred_at": at(t) });
    ingest_json(
        f,
        &ta,
        json!({ "batch_id": "batch-buckets", "events": [
            event(b - ten - us, "info"),        // before the window
            event(b - Duration::minutes(4), "info"),
            event(b - us, "warn"),
            event(b, "info"),
            event(b, "error"),
            event(b + ten - us, "info"),
            event(b + ten, "info"),
            event(b + ten + Duration::minutes(5), "info"), // at `to`: outside
        ]}),
    )
    .await;
    let q = CountQuery {
        server_id: base.server_id.clone(),
        from: b - Duration::minutes(5),
        to: b + ten + Duration::minutes(5),
        filters: Filters {
            event_type: Some(TypeMatch::Exact("tick".into())),
            ..Filters::default()
        },
        bucket: ten,
        scan_limit: 1_000,
    };
    let count = |start, level, count| BucketCount {
        start,
        level,
        count,
    };
    assert_eq!(
        store.counts(&q).await.unwrap(),
        [
            count(b - ten, Level::Info, 1),
            count(b - ten, Level::Warn, 1),
            count(b, Level::Info, 2),
            count(b, Level::Error, 1),
            count(b + ten, Level::Info, 1),
        ]
    );
    let warn_up = CountQuery {
        filters: Filters {
            event_type: Some(TypeMatch::Exact("tick".into())),
            levels: Some(vec![Level::Warn, Level::Error, Level::Fatal]),
            ..Filters::default()
        },
        ..q.clone()
    };
    assert_eq!(
        store.counts(&warn_up).await.unwrap(),
        [count(b - ten, Level::Warn, 1), count(b, Level::Error, 1)]
    );
    // a data filter counts within its scan limit: 6 candidates in the window
    let data = |scan_limit| CountQuery {
        filters: Filters {
            event_type: Some(TypeMatch::Exact("tick".into())),
            data: Some(json!({ "none": 1 })),
            ..Filters::default()
        },
        scan_limit,
        ..q.clone()
    };
    assert_eq!(store.counts(&data(6)).await.unwrap(), []);
    assert!(matches!(
        store.counts(&data(5)).await,
        Err(SearchError::TooBroad { limit: 5 })
    ));
    // the seeded events are elsewhere in time; a one-day bucket holds them all
    let day = CountQuery {
        filters: Filters::default(),
        from: base.from,
        to: base.to,
        bucket: Duration::days(1),
        ..q.clone()
    };
    let total: i64 = store
        .counts(&day)
        .await
        .unwrap()
        .iter()
        .map(|c| c.count)
        .sum();
    assert_eq!(total, 4);
}

/// Facets are the most frequent values of the search's newest `sample` events.
pub async fn facets_count_the_newest_events_of_the_search(f: &Fixture) {
    let Seeded { base, ta, .. } = seed(f).await;
    let store = f.store.as_ref();
    let q = FacetQuery {
        server_id: base.server_id.clone(),
        from: base.from,
        to: base.to,
        filters: Filters::default(),
        sample: 100,
        top: 10,
    };
    let all = store.facets(&q).await.unwrap();
    assert_eq!(all.examined, 4);
    assert!(!all.sampled);
    let pairs = |v: &[(&str, i64)]| {
        v.iter()
            .map(|(s, n)| (s.to_string(), *n))
            .collect::<Vec<_>>()
    };
    assert_eq!(all.levels, pairs(&[("info", 2), ("error", 1), ("warn", 1)]));
    assert_eq!(
        all.event_types,
        pairs(&[("log", 2), ("chat", 1), ("player.join", 1)])
    );
    assert_eq!(all.resources, pairs(&[("core", 1), ("es_extended", 1)]));
    // p1 joined and was the chat's target; p2 sent it
    assert_eq!(all.players, pairs(&[("p1", 2), ("p2", 1)]));
    // the newest three: chat and warn (8 minutes ago), the script error (9)
    let newest = store
        .facets(&FacetQuery {
            sample: 3,
            top: 1,
            ..q.clone()
        })
        .await
        .unwrap();
    assert_eq!(newest.examined, 3);
    assert!(newest.sampled);
    let exactly = store
        .facets(&FacetQuery {
            sample: 4,
            ..q.clone()
        })
        .await
        .unwrap();
    assert!(!exactly.sampled, "four events, a sample of four");
    assert_eq!(newest.levels, pairs(&[("error", 1)]), "ties by value");
    assert_eq!(newest.event_types, pairs(&[("log", 2)]));
    let filtered = store
        .facets(&FacetQuery {
            filters: Filters {
                levels: Some(vec![Level::Info]),
                ..Filters::default()
            },
            ..q.clone()
        })
        .await
        .unwrap();
    assert_eq!(filtered.levels, pairs(&[("info", 2)]));
    // with `data`, the sample is of the events matching the other filters
    let data = store
        .facets(&FacetQuery {
            filters: Filters {
                data: Some(json!({ "channel": "ooc" })),
                ..Filters::default()
            },
            sample: 2,
            ..q.clone()
        })
        .await
        .unwrap();
    assert_eq!(
        (data.examined, data.sampled),
        (1, true),
        "the two newest are the warning and the chat"
    );
    // a player who is both the actor and the target of an event is counted once for it: the
    // count is the events a `playerId` search finds
    ingest_json(
        f,
        &ta,
        json!({ "batch_id": "batch-self", "events": [
            { "level": "info", "event_type": "heal", "message": "p3 healed themself", "player_id": "p3", "target_player_id": "p3" },
            { "level": "info", "event_type": "heal", "message": "p3 healed p1", "player_id": "p3", "target_player_id": "p1" } ] }),
    )
    .await;
    let players = store.facets(&q).await.unwrap().players;
    assert_eq!(players, pairs(&[("p1", 3), ("p3", 2), ("p2", 1)]));
}
