//! Counts in whole-slot buckets (what an adapter's pre-counted slots must agree with).

use super::*;

/// Buckets of whole 15-minute slots and hours (an adapter may keep counts for them) count
/// exactly what the events say: for a window that starts and ends mid-slot, buckets of 5, 10,
/// 15, 30 and 45 minutes and of 1, 2 and 3 hours, with each filter such counts can have, with
/// one they cannot (message), and with no filter.
pub async fn counts_in_whole_slot_buckets_match_the_events_of_the_window(f: &Fixture) {
    let Seeded { now, ta, base } = seed(f).await;
    let store = f.store.as_ref();
    let hour = Duration::hours(1);
    let h = bucket_start(now - Duration::hours(7), hour);
    let us = Duration::microseconds(1);
    // (offset from h, level, event type, resource)
    let events: Vec<(Duration, Level, &str, Option<&str>)> = vec![
        (-Duration::hours(2), Level::Info, "tick", Some("a")), // before the window
        (-Duration::minutes(52), Level::Debug, "tick", None),  // at `from`
        (-Duration::minutes(45), Level::Info, "tick", Some("a")),
        (-Duration::minutes(30), Level::Warn, "tick", None),
        (Duration::zero(), Level::Error, "tick", Some("a")),
        (hour - us, Level::Info, "tick", None),
        (hour, Level::Warn, "chat", Some("b")),
        (Duration::minutes(15) - us, Level::Info, "tick", None),
        (Duration::minutes(15), Level::Info, "chat", Some("a")),
        (Duration::minutes(31), Level::Warn, "tick", Some("a")),
        (Duration::minutes(256), Level::Debug, "tick", None), // the last partial slot
        (Duration::minutes(150), Level::Info, "tick", Some("a")),
        (Duration::minutes(5), Level::Error, "tick", Some("a")), // the hour of the first batch's error
        (Duration::minutes(179), Level::Fatal, "chat", Some("a")),
        (Duration::minutes(200), Level::Info, "tick", Some("a")),
        (Duration::minutes(260), Level::Info, "tick", Some("a")), // at `to`: outside
    ];
    let body: Vec<_> = events
        .iter()
        .map(|(at, level, t, r)| {
            json!({ "level": level.as_str(), "event_type": t, "resource": r, "message": "m",
            "occurred_at": (h + *at).to_rfc3339_opts(chrono::SecondsFormat::Micros, true) })
        })
        .collect();
    // two batches: the hours they share are counted across both
    let (first, second) = body.split_at(5);
    for (id, events) in [("batch-hourly-1", first), ("batch-hourly-2", second)] {
        ingest_json(f, &ta, json!({ "batch_id": id, "events": events })).await;
    }
    let (from, to) = (h - Duration::minutes(52), h + Duration::minutes(260));
    let filters = [
        Filters::default(),
        Filters {
            event_type: Some(TypeMatch::Exact("tick".into())),
            ..Filters::default()
        },
        Filters {
            resource: Some("a".into()),
            ..Filters::default()
        },
        Filters {
            levels: Some(vec![Level::Warn, Level::Error, Level::Fatal]),
            ..Filters::default()
        },
        Filters {
            levels: Some(vec![Level::Info]),
            event_type: Some(TypeMatch::Exact("tick".into())),
            resource: Some("a".into()),
            ..Filters::default()
        },
        Filters {
            message: Some("m".into()),
            ..Filters::default()
        },
    ];
    let buckets = [5, 10, 15, 30, 45, 60, 120, 180].map(Duration::minutes);
    for bucket in buckets {
        for filter in &filters {
            let mut want = std::collections::BTreeMap::new();
            for (at, level, t, r) in &events {
                let at = h + *at;
                let keep = at >= from
                    && at < to
                    && filter.levels.as_ref().is_none_or(|ls| ls.contains(level))
                    && filter.event_type.as_ref().is_none_or(|x| x.matches(t))
                    && filter.resource.as_deref().is_none_or(|x| Some(x) == *r);
                if keep {
                    *want.entry((bucket_start(at, bucket), *level)).or_insert(0) += 1;
                }
            }
            let want: Vec<BucketCount> = want
                .into_iter()
                .map(|((start, level), count)| BucketCount {
                    start,
                    level,
                    count,
                })
                .collect();
            let got = store
                .counts(&CountQuery {
                    server_id: base.server_id.clone(),
                    from,
                    to,
                    filters: filter.clone(),
                    bucket,
                    scan_limit: 1_000,
                })
                .await
                .unwrap();
            assert_eq!(got, want, "{bucket} buckets, {filter:?}");
        }
    }
}
