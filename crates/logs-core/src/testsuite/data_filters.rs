//! `data` filters: containment within a scan limit.

use super::*;

/// `data` is `jsonb @>`; a page may examine `scan_limit` events matching the other filters
/// (from its cursor down) before it must be full, and answers `TooBroad` past that.
pub async fn data_filters_are_containment_within_a_scan_limit(f: &Fixture) {
    let Seeded { now, ta, base } = seed(f).await;
    let store = f.store.as_ref();
    // ten events, 100 to 91 minutes ago; only the oldest of them is a hit; one more, older
    let mut events: Vec<_> = (0..10)
        .map(|i| {
            json!({
                "level": "info", "event_type": "inventory", "message": format!("item {i}"),
                "occurred_at": (now - Duration::minutes(100 - i)).to_rfc3339(),
                "data": { "hit": i == 0, "item": "WEAPON_PISTOL", "count": 1,
                          "meta": { "shop": "ammunation", "tags": ["legal", "gun"] } },
            })
        })
        .collect();
    events.push(
        json!({ "level": "info", "event_type": "inventory", "message": "older",
        "occurred_at": (now - Duration::minutes(101)).to_rfc3339(), "data": { "hit": false } }),
    );
    ingest_json(
        f,
        &ta,
        json!({ "batch_id": "batch-data", "events": events }),
    )
    .await;
    let window = EventQuery {
        from: now - Duration::minutes(120),
        to: now - Duration::minutes(60),
        ..base.clone()
    };
    let search = |data: serde_json::Value, limit: usize, scan_limit: usize| EventQuery {
        scan_limit: Some(scan_limit),
        enough: limit,
        filters: Filters {
            data: Some(data),
            ..Filters::default()
        },
        limit,
        ..window.clone()
    };
    let messages = |r: Result<Vec<crate::store::EventRow>, SearchError>| {
        r.map(|rows| rows.into_iter().map(|r| r.message).collect::<Vec<_>>())
    };
    for (data, n) in [
        (json!({ "item": "WEAPON_PISTOL" }), 10),
        (json!({ "hit": false }), 10),
        (json!({ "meta": { "shop": "ammunation" } }), 10),
        (json!({ "meta": { "tags": ["gun"] } }), 10),
        (json!({ "count": 1.0 }), 10),
        (json!({ "count": "1" }), 0),
        (json!({ "item": "weapon_pistol" }), 0),
        (json!({ "meta": { "tags": "gun" } }), 0),
        (json!({ "channel": "ooc" }), 0),
    ] {
        assert_eq!(
            store
                .query(&search(data.clone(), 100, 1_000))
                .await
                .unwrap()
                .len(),
            n,
            "{data}"
        );
    }
    let chat = store
        .query(&EventQuery {
            filters: Filters {
                data: Some(json!({ "channel": "ooc" })),
                ..Filters::default()
            },
            ..base.clone()
        })
        .await
        .unwrap();
    assert_eq!(chat.len(), 1, "the seeded chat event");
    // newest first, the hit is candidate 10 of 11: limits N - 1, N (the floor is the hit), N + 1
    let hit = json!({ "hit": true });
    assert!(matches!(
        store.query(&search(hit.clone(), 1, 9)).await,
        Err(SearchError::TooBroad { limit: 9 })
    ));
    assert_eq!(
        messages(store.query(&search(hit.clone(), 1, 10)).await).unwrap(),
        ["item 0"]
    );
    assert_eq!(
        messages(store.query(&search(hit.clone(), 1, 11)).await).unwrap(),
        ["item 0"]
    );
    // a caller that fetches one more than it shows: the hit answers a page cut at the limit
    let probe = EventQuery {
        limit: 2,
        enough: 1,
        ..search(hit.clone(), 1, 10)
    };
    assert_eq!(messages(store.query(&probe).await).unwrap(), ["item 0"]);
    let short = EventQuery {
        limit: 3,
        enough: 2,
        ..search(hit.clone(), 2, 10)
    };
    assert!(matches!(
        store.query(&short).await,
        Err(SearchError::TooBroad { limit: 10 })
    ));
    // no match: fine when every candidate was examined, too broad otherwise
    let none = json!({ "hit": "never" });
    assert!(store
        .query(&search(none.clone(), 1, 11))
        .await
        .unwrap()
        .is_empty());
    assert!(matches!(
        store.query(&search(none, 1, 10)).await,
        Err(SearchError::TooBroad { .. })
    ));
    // a full page within the limit
    assert_eq!(
        messages(store.query(&search(json!({ "hit": false }), 2, 2)).await).unwrap(),
        ["item 9", "item 8"]
    );
    // the other filters narrow what is examined
    let narrowed = EventQuery {
        filters: Filters {
            message: Some("item 0".into()),
            data: Some(hit.clone()),
            ..Filters::default()
        },
        limit: 1,
        scan_limit: Some(1),
        enough: 1,
        ..window.clone()
    };
    assert_eq!(messages(store.query(&narrowed).await).unwrap(), ["item 0"]);
    // counted from the cursor down: six candidates below the fifth newest, the hit the fifth
    let fifth = store
        .query(&EventQuery {
            limit: 5,
            ..window.clone()
        })
        .await
        .unwrap()
        .pop()
        .unwrap();
    let after = Some((fifth.occurred_at, fifth.id));
    let paged = |scan_limit| EventQuery {
        after,
        ..search(hit.clone(), 1, scan_limit)
    };
    assert_eq!(messages(store.query(&paged(5)).await).unwrap(), ["item 0"]);
    assert!(matches!(
        store.query(&paged(4)).await,
        Err(SearchError::TooBroad { limit: 4 })
    ));
}
