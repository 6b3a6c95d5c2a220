//! [`ObjectRecordStore::search`]: text anywhere in the path, metadata values, the three sorts
//! both ways with pages that neither repeat nor skip, and what a search never shows.

use chrono::Duration;

use super::*;
use crate::search::{validate, Position, SearchQuery, SearchRequest};

/// Objects of organization A: sizes and times that tie in places, so pages must break ties by
/// path; one of organization B with the same text.
async fn seed(f: &Fixture) {
    let base = Utc::now().trunc_subsecs(6) - Duration::hours(1);
    let put = |k: &str, size: i64, minutes: i64, meta: &[(&str, &str)]| {
        let mut r = record(k, &format!("p-{k}"));
        r.size = size;
        r.last_modified = base + Duration::minutes(minutes);
        r.metadata = meta
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        r
    };
    for r in [
        put("shots/Jay_01.png", 300, 1, &[("license", "license:abc")]),
        put(
            "shots/2026/jay_02.png",
            100,
            2,
            &[("discord", "discord:42")],
        ),
        put("shots/mia.png", 300, 2, &[("license", "license:def")]),
        put("shots/.jay-hidden.png", 5, 3, &[]),
        put("shots-old/jay.png", 50, 4, &[]),
        put("clips/jay 100%.ogg", 200, 5, &[("who", "license:abc")]),
        put("private/jay.png", 1, 6, &[("license", "license:abc")]),
        put("photos/été.jpg", 10, 7, &[]),
    ] {
        f.records.upsert(&f.org_a, &r).await.unwrap();
    }
    f.records
        .upsert(
            &f.org_b,
            &put("shots/jay.png", 1, 1, &[("license", "license:abc")]),
        )
        .await
        .unwrap();
}

fn search(r: SearchRequest) -> SearchQuery {
    validate(&r).unwrap()
}

/// Every page of `q`, `size` at a time, as the API walks them.
async fn walk(f: &Fixture, mut q: SearchQuery, size: usize) -> Vec<String> {
    q.limit = size;
    let mut seen = Vec::new();
    loop {
        let page = f.records.search(&f.org_a, &q).await.unwrap();
        seen.extend(page.iter().map(|r| r.key.as_str().to_owned()));
        match page.last() {
            Some(last) if page.len() == size => q.after = Some(Position::of(q.sort, last)),
            _ => return seen,
        }
    }
}

pub async fn records_search_finds_paths_by_text_and_objects_by_metadata(f: &Fixture) {
    seed(f).await;
    let jay = search(SearchRequest {
        contains: Some("JAY".into()),
        ..Default::default()
    });
    assert_eq!(
        walk(f, jay.clone(), 100).await,
        [
            "clips/jay 100%.ogg",
            "private/jay.png",
            "shots-old/jay.png",
            "shots/2026/jay_02.png",
            "shots/Jay_01.png"
        ],
        "case-insensitive, anywhere, hidden never, one organization"
    );
    // under a folder: its sub-folders too, not a sibling that shares its prefix
    let under = SearchQuery {
        folder: "shots".into(),
        ..jay.clone()
    };
    assert_eq!(
        walk(f, under, 100).await,
        ["shots/2026/jay_02.png", "shots/Jay_01.png"]
    );
    // wildcards are literal; denied prefixes are left out
    let percent = search(SearchRequest {
        contains: Some("100%".into()),
        ..Default::default()
    });
    assert_eq!(walk(f, percent, 100).await, ["clips/jay 100%.ogg"]);
    let underscore = search(SearchRequest {
        contains: Some("y_0".into()),
        ..Default::default()
    });
    assert_eq!(
        walk(f, underscore, 100).await,
        ["shots/2026/jay_02.png", "shots/Jay_01.png"]
    );
    let denied = SearchQuery {
        denied: vec!["private".into()],
        ..jay
    };
    assert!(!walk(f, denied, 100)
        .await
        .contains(&"private/jay.png".to_owned()));
    // a player's objects: any metadata value equal to one of theirs
    let player = search(SearchRequest {
        metadata_values: Some(vec!["license:abc".into(), "discord:42".into()]),
        sort: Some("lastModified".into()),
        ..Default::default()
    });
    assert_eq!(
        walk(f, player, 100).await,
        [
            "private/jay.png",
            "clips/jay 100%.ogg",
            "shots/2026/jay_02.png",
            "shots/Jay_01.png"
        ],
        "newest first"
    );
    let both = search(SearchRequest {
        metadata_values: Some(vec!["license:abc".into()]),
        contains: Some(".png".into()),
        path: Some("shots".into()),
        ..Default::default()
    });
    assert_eq!(walk(f, both, 100).await, ["shots/Jay_01.png"]);
    // non-ASCII text, either case
    let summer = search(SearchRequest {
        contains: Some("ÉTÉ".into()),
        ..Default::default()
    });
    assert_eq!(walk(f, summer, 100).await, ["photos/été.jpg"]);
}

pub async fn records_search_sorts_both_ways_with_pages_that_never_repeat(f: &Fixture) {
    seed(f).await;
    for (sort, order) in [
        ("key", "asc"),
        ("key", "desc"),
        ("lastModified", "asc"),
        ("lastModified", "desc"),
        ("size", "asc"),
        ("size", "desc"),
    ] {
        let q = search(SearchRequest {
            sort: Some(sort.into()),
            order: Some(order.into()),
            ..Default::default()
        });
        let whole = walk(f, q.clone(), 100).await;
        assert_eq!(whole.len(), 7, "{sort} {order}: every visible object of A");
        // the order is the core's (ties by path), and pages of 1, 2 and 3 walk it exactly
        let rows = f.records.search(&f.org_a, &q).await.unwrap();
        let mut sorted = rows.clone();
        sorted.sort_by(|a, b| q.compare(a, b));
        assert_eq!(keys(&rows), keys(&sorted), "{sort} {order}");
        for size in [1, 2, 3] {
            assert_eq!(
                walk(f, q.clone(), size).await,
                whole,
                "{sort} {order} by {size}"
            );
        }
    }
    let largest = search(SearchRequest {
        sort: Some("size".into()),
        limit: Some(2),
        ..Default::default()
    });
    let page = f.records.search(&f.org_a, &largest).await.unwrap();
    assert_eq!(
        keys(&page),
        ["shots/mia.png", "shots/Jay_01.png"],
        "300 bytes twice, ties by path descending"
    );
}
