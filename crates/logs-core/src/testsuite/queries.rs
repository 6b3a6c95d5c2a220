//! Ingestion, pages of a search, each filter, keyset pages, servers kept apart.

use super::*;

pub async fn ingest_is_atomic_idempotent_and_counted(f: &Fixture) {
    seed(f).await;
}

pub async fn queries_are_newest_first_with_every_field(f: &Fixture) {
    let Seeded { base, .. } = seed(f).await;
    let (store, a) = (f.store.as_ref(), (f.a.0.as_str(), f.a.1.as_str()));
    let all = store.query(&base).await.unwrap();
    assert_eq!(all.len(), 4);
    assert!(
        all.windows(2)
            .all(|w| (w[0].occurred_at, w[0].id) > (w[1].occurred_at, w[1].id)),
        "newest first, stable ties"
    );
    assert!(all
        .iter()
        .all(|r| r.cfx_id == a.1 && r.batch_id == "batch-0001"));
    assert!(all.iter().any(|r| r.event_id == "evt-00000002"));
    assert!(
        all.iter().all(|r| r.event_id.len() >= 8),
        "server-made ids for the rest"
    );
    assert_eq!(
        all.iter().find(|r| r.message == "chat: gg").unwrap().data,
        Some(json!({ "channel": "ooc" }))
    );
}

pub async fn each_filter_narrows_the_search(f: &Fixture) {
    let Seeded { base, .. } = seed(f).await;
    let store = f.store.as_ref();
    let q = |f: fn(&mut EventQuery)| {
        let mut q = base.clone();
        f(&mut q);
        q
    };
    let msgs =
        |rows: Vec<crate::store::EventRow>| rows.into_iter().map(|r| r.message).collect::<Vec<_>>();
    assert_eq!(
        msgs(
            store
                .query(&q(|q| q.filters.levels = Some(vec![Level::Error])))
                .await
                .unwrap()
        ),
        vec!["script error"]
    );
    // several levels: any of them (warn and error, not the two infos)
    assert_eq!(
        msgs(
            store
                .query(&q(
                    |q| q.filters.levels = Some(vec![Level::Warn, Level::Error])
                ))
                .await
                .unwrap()
        ),
        vec!["100% discount_code", "script error"]
    );
    assert_eq!(
        msgs(
            store
                .query(&q(
                    |q| q.filters.event_type = Some(TypeMatch::Exact("chat".into()))
                ))
                .await
                .unwrap()
        ),
        vec!["chat: gg"]
    );
    assert_eq!(
        msgs(
            store
                .query(&q(
                    |q| q.filters.event_type = Some(TypeMatch::Exact("log".into()))
                ))
                .await
                .unwrap()
        )
        .len(),
        2,
        "default event type"
    );
    assert_eq!(
        msgs(
            store
                .query(&q(|q| q.filters.resource = Some("core".into())))
                .await
                .unwrap()
        ),
        vec!["Player Joined the server"]
    );
    assert_eq!(
        msgs(
            store
                .query(&q(|q| q.filters.message = Some("JOINED".into())))
                .await
                .unwrap()
        ),
        vec!["Player Joined the server"]
    );
    assert_eq!(
        msgs(
            store
                .query(&q(|q| q.filters.message = Some("100%".into())))
                .await
                .unwrap()
        ),
        vec!["100% discount_code"]
    );
    assert!(
        store
            .query(&q(|q| q.filters.message = Some("1_0%".into())))
            .await
            .unwrap()
            .is_empty(),
        "`_` and `%` are literal"
    );
    assert_eq!(
        msgs(
            store
                .query(&q(|q| q.filters.message = Some("t_c".into())))
                .await
                .unwrap()
        ),
        vec!["100% discount_code"]
    );
    assert_eq!(
        store
            .query(&q(|q| q.filters.player_id = Some("p1".into())))
            .await
            .unwrap()
            .len(),
        2,
        "player or target"
    );
    let ident = |owner| IdentifierFilter {
        owner,
        key: "license".into(),
        value: "license:aaa".into(),
    };
    assert_eq!(
        msgs(
            store
                .query(&EventQuery {
                    filters: Filters {
                        identifier: Some(ident(Owner::Player)),
                        ..Filters::default()
                    },
                    ..base.clone()
                })
                .await
                .unwrap()
        ),
        vec!["Player Joined the server"]
    );
    assert_eq!(
        msgs(
            store
                .query(&EventQuery {
                    filters: Filters {
                        identifier: Some(ident(Owner::Target)),
                        ..Filters::default()
                    },
                    ..base.clone()
                })
                .await
                .unwrap()
        ),
        vec!["chat: gg"]
    );
    assert!(
        store
            .query(&q(|q| q.to = q.from + Duration::minutes(30)))
            .await
            .unwrap()
            .is_empty(),
        "window"
    );
}

pub async fn keyset_pages_walk_every_event_once(f: &Fixture) {
    let Seeded { base, .. } = seed(f).await;
    let store = f.store.as_ref();
    let all = store.query(&base).await.unwrap();
    // keyset pagination walks every event exactly once
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page = store
            .query(&EventQuery {
                limit: 1,
                after,
                ..base.clone()
            })
            .await
            .unwrap();
        let Some(last) = page.last() else { break };
        after = Some((last.occurred_at, last.id));
        seen.extend(page.into_iter().map(|r| r.id));
    }
    assert_eq!(seen, all.iter().map(|r| r.id).collect::<Vec<_>>());
}

pub async fn servers_are_kept_apart(f: &Fixture) {
    let Seeded { base, .. } = seed(f).await;
    let (store, b) = (f.store.as_ref(), (f.b.0.as_str(), f.b.1.as_str()));
    let other = store
        .query(&EventQuery {
            server_id: f.b.0.clone(),
            ..base.clone()
        })
        .await
        .unwrap();
    assert_eq!(other.len(), 4);
    assert!(other.iter().all(|r| r.cfx_id == b.1));
}
