//! The live tail: commit order, positions, resumption.

use super::*;

/// A tail starts at "now", reads later batches in the order they became visible (events by id
/// within a batch), skips other servers' batches and non-matching events without losing its
/// place, and resumes from any position it handed out: every later event once.
pub async fn a_tail_reads_batches_in_commit_order_and_resumes_from_any_position(f: &Fixture) {
    let store = f.store.as_ref();
    let (ta, tb) = targets(f);
    let q = |after, filters: Filters| TailQuery {
        server_id: ta.server_id.clone(),
        filters,
        after,
        max_batches: 100,
    };
    // a start taken while an older transaction (Postgres: anywhere in the cluster, where other
    // tests run) holds the horizon below the seed would rightly deliver the seed: start once a
    // tail from before the seed has all of it (bounded wait)
    let before_seed = store.tail_start(&ta.server_id).await.unwrap();
    seed(f).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while store
        .tail(&q(before_seed, Filters::default()))
        .await
        .unwrap()
        .events
        .len()
        < 4
        && std::time::Instant::now() < deadline
    {}
    let start = store.tail_start(&ta.server_id).await.unwrap();
    let empty = store.tail(&q(start, Filters::default())).await.unwrap();
    assert!(empty.events.is_empty(), "the seed is before the start");
    assert!(empty.next >= start);
    let ev = |m: &str, level: &str| json!({ "level": level, "message": m });
    ingest_json(f, &ta, json!({ "batch_id": "batch-tail-1", "events": [ev("a1", "info"), ev("a2", "warn"), ev("a3", "info")] })).await;
    ingest_json(
        f,
        &tb,
        json!({ "batch_id": "batch-tail-x", "events": [ev("other server", "warn")] }),
    )
    .await;
    ingest_json(
        f,
        &ta,
        json!({ "batch_id": "batch-tail-2", "events": [ev("b1", "error")] }),
    )
    .await;
    // an adapter may show a committed batch only once older transactions ended (Postgres: of
    // the whole cluster, where other tests run): wait for it, bounded, once; later reads are
    // below that point
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let page = loop {
        let page = store.tail(&q(start, Filters::default())).await.unwrap();
        if page.events.len() >= 4 || std::time::Instant::now() > deadline {
            break page;
        }
    };
    let messages = |events: &[(TailPosition, crate::store::EventRow)]| {
        events
            .iter()
            .map(|(_, r)| r.message.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(messages(&page.events), ["a1", "a2", "a3", "b1"]);
    let positions: Vec<TailPosition> = page.events.iter().map(|(p, _)| *p).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
    assert!(page.next >= positions[3]);
    // resuming from each position gives exactly the rest
    for (i, p) in positions.iter().enumerate() {
        let rest = store.tail(&q(*p, Filters::default())).await.unwrap();
        assert_eq!(
            messages(&rest.events),
            messages(&page.events)[i + 1..],
            "after {p:?}"
        );
    }
    // nothing new: an empty page that keeps its place
    let again = store.tail(&q(page.next, Filters::default())).await.unwrap();
    assert!(again.events.is_empty());
    assert!(again.next >= page.next);
    // filters apply; the place still moves past the batches read
    let warn_up = Filters {
        levels: Some(vec![Level::Warn, Level::Error, Level::Fatal]),
        ..Filters::default()
    };
    let severe = store.tail(&q(start, warn_up)).await.unwrap();
    assert_eq!(messages(&severe.events), ["a2", "b1"]);
    // (an adapter may move further: past other servers' batches, or everything settled)
    assert!(severe.next > positions[3], "past the batches read");
    // a batch at a time
    let one = store
        .tail(&TailQuery {
            max_batches: 1,
            ..q(start, Filters::default())
        })
        .await
        .unwrap();
    assert_eq!(messages(&one.events), ["a1", "a2", "a3"]);
    let two = store.tail(&q(one.next, Filters::default())).await.unwrap();
    assert_eq!(messages(&two.events), ["b1"]);
    // batch times: known for the server's own batches only
    let seq = positions[0].seq;
    assert!(store
        .tail_batch_time(&ta.server_id, seq)
        .await
        .unwrap()
        .is_some());
    assert!(store
        .tail_batch_time(&tb.server_id, seq)
        .await
        .unwrap()
        .is_none());
    assert!(store
        .tail_batch_time(&ta.server_id, -5)
        .await
        .unwrap()
        .is_none());
}
