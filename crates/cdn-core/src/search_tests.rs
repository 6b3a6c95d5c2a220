use chrono::{Duration, TimeZone};

use super::*;
use crate::metadata::Metadata;
use crate::path::ObjectKey;

fn req() -> SearchRequest {
    SearchRequest::default()
}

fn object(key: &str, size: i64, minutes: i64, meta: &[(&str, &str)]) -> ObjectRecord {
    let t = Utc.with_ymd_and_hms(2026, 11, 20, 12, 0, 0).unwrap() + Duration::minutes(minutes);
    ObjectRecord {
        key: ObjectKey::new(key),
        size,
        content_type: None,
        etag: "e".into(),
        metadata: meta
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<Metadata>(),
        storage_path: key.into(),
        last_modified: t,
        created_at: t,
        keep: false,
    }
}

#[test]
fn defaults_sort_by_path_ascending_and_others_newest_or_largest_first() {
    let q = validate(&req()).unwrap();
    assert_eq!(
        (q.folder.as_str(), q.sort, q.limit),
        (
            "",
            Sort {
                field: SortField::Key,
                descending: false
            },
            100
        )
    );
    for (sort, order, desc) in [
        ("lastModified", None, true),
        ("size", None, true),
        ("size", Some("asc"), false),
        ("key", Some("desc"), true),
    ] {
        let q = validate(&SearchRequest {
            sort: Some(sort.into()),
            order: order.map(Into::into),
            ..req()
        })
        .unwrap();
        assert_eq!(q.sort.descending, desc, "{sort} {order:?}");
    }
}

#[test]
fn every_field_is_bounded_and_named_when_wrong() {
    let long = "é".repeat(MAX_CONTAINS_CHARS);
    let cases: Vec<(SearchRequest, Option<&str>)> = vec![
        (
            SearchRequest {
                contains: Some(long.clone()),
                ..req()
            },
            None,
        ),
        (
            SearchRequest {
                contains: Some(format!("{long}a")),
                ..req()
            },
            Some("`contains` must be 1 to 256 characters (got 257)"),
        ),
        (
            SearchRequest {
                contains: Some(String::new()),
                ..req()
            },
            Some("`contains` must be 1 to 256"),
        ),
        (
            SearchRequest {
                contains: Some("a\0".into()),
                ..req()
            },
            Some("U+0000"),
        ),
        (
            SearchRequest {
                metadata_values: Some(vec![]),
                ..req()
            },
            Some("`metadataValues` must hold 1 to 20 values (got 0)"),
        ),
        (
            SearchRequest {
                metadata_values: Some(vec!["v".into(); 20]),
                ..req()
            },
            None,
        ),
        (
            SearchRequest {
                metadata_values: Some(vec!["v".into(); 21]),
                ..req()
            },
            Some("(got 21)"),
        ),
        (
            SearchRequest {
                metadata_values: Some(vec!["ok".into(), String::new()]),
                ..req()
            },
            Some("`metadataValues[1]`"),
        ),
        (
            SearchRequest {
                sort: Some("name".into()),
                ..req()
            },
            Some("`sort` must be `key`, `lastModified` or `size`"),
        ),
        (
            SearchRequest {
                order: Some("up".into()),
                ..req()
            },
            Some("`order` must be `asc` or `desc`"),
        ),
        (
            SearchRequest {
                limit: Some(0),
                ..req()
            },
            Some("`limit` must be 1 to 1000 (got 0)"),
        ),
        (
            SearchRequest {
                limit: Some(1000),
                ..req()
            },
            None,
        ),
        (
            SearchRequest {
                limit: Some(1001),
                ..req()
            },
            Some("(got 1001)"),
        ),
        (
            SearchRequest {
                path: Some("../etc".into()),
                ..req()
            },
            Some("`path` is not a valid folder"),
        ),
    ];
    for (r, want) in cases {
        match (validate(&r), want) {
            (Ok(_), None) => {}
            (Err(e), Some(w)) => assert!(e.contains(w), "{e} / {w}"),
            (got, want) => panic!("{r:?}: {got:?}, wanted {want:?}"),
        }
    }
}

#[test]
fn a_search_matches_paths_by_text_and_objects_by_metadata_values() {
    let q = SearchQuery {
        contains: Some("jay".into()),
        ..validate(&SearchRequest {
            path: Some("shots".into()),
            ..req()
        })
        .unwrap()
    };
    assert!(
        q.matches(&object("shots/JAY_1.png", 1, 0, &[])),
        "case-insensitive"
    );
    assert!(
        q.matches(&object("shots/2026/jay.png", 1, 0, &[])),
        "anywhere under the folder"
    );
    assert!(
        !q.matches(&object("other/jay.png", 1, 0, &[])),
        "outside the folder"
    );
    assert!(
        !q.matches(&object("shots-old/jay.png", 1, 0, &[])),
        "a sibling that shares the prefix"
    );
    assert!(!q.matches(&object("shots/.jay.png", 1, 0, &[])), "hidden");
    assert!(!q.matches(&object("shots/mia.png", 1, 0, &[])));
    let upper = validate(&SearchRequest {
        contains: Some("ÉTÉ".into()),
        ..req()
    })
    .unwrap();
    assert!(
        upper.matches(&object("photos/été.jpg", 1, 0, &[])),
        "Unicode case"
    );
    let by_value = validate(&SearchRequest {
        metadata_values: Some(vec![
            "license:abc".into(),
            "discord:1".into(),
            "license:abc".into(),
        ]),
        ..req()
    })
    .unwrap();
    assert_eq!(
        by_value.metadata_values,
        ["license:abc", "discord:1"],
        "duplicates once"
    );
    assert!(by_value.matches(&object("a.png", 1, 0, &[("license", "license:abc")])));
    assert!(
        by_value.matches(&object("b.png", 1, 0, &[("who", "discord:1")])),
        "any key"
    );
    assert!(
        !by_value.matches(&object("c.png", 1, 0, &[("license:abc", "x")])),
        "keys are not values"
    );
    assert!(
        !by_value.matches(&object("d.png", 1, 0, &[("license", "license:abcd")])),
        "whole values"
    );
    let denied = SearchQuery {
        denied: vec!["private".into()],
        ..validate(&req()).unwrap()
    };
    assert!(!denied.matches(&object("private/a.png", 1, 0, &[])));
    assert!(denied.matches(&object("privateer/a.png", 1, 0, &[])));
}

#[test]
fn pages_continue_after_their_last_object_in_every_order_with_ties_by_path() {
    let objects = [
        object("a.png", 30, 2, &[]),
        object("b.png", 10, 1, &[]),
        object("c.png", 30, 2, &[]),
        object("d.png", 20, 3, &[]),
    ];
    for (sort, order, want) in [
        ("key", "asc", ["a.png", "b.png", "c.png", "d.png"]),
        ("key", "desc", ["d.png", "c.png", "b.png", "a.png"]),
        ("size", "desc", ["c.png", "a.png", "d.png", "b.png"]),
        ("size", "asc", ["b.png", "d.png", "a.png", "c.png"]),
        ("lastModified", "desc", ["d.png", "c.png", "a.png", "b.png"]),
        ("lastModified", "asc", ["b.png", "a.png", "c.png", "d.png"]),
    ] {
        let mut q = validate(&SearchRequest {
            sort: Some(sort.into()),
            order: Some(order.into()),
            ..req()
        })
        .unwrap();
        let mut sorted: Vec<&ObjectRecord> = objects.iter().collect();
        sorted.sort_by(|a, b| q.compare(a, b));
        let keys: Vec<&str> = sorted.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, want, "{sort} {order}");
        // page by page, one at a time: each page starts after the last, nothing twice
        let mut walked = Vec::new();
        loop {
            let next = sorted.iter().find(|r| q.is_after(r));
            let Some(next) = next else { break };
            walked.push(next.key.as_str());
            q.after = Some(Position::of(q.sort, next));
        }
        assert_eq!(walked, want, "{sort} {order} by pages");
    }
}

#[test]
fn tokens_are_bound_to_everything_but_the_position() {
    let a = validate(&SearchRequest {
        contains: Some("Jay".into()),
        sort: Some("size".into()),
        ..req()
    })
    .unwrap();
    let same = SearchQuery {
        after: Some(Position::Key { key: "x".into() }),
        limit: 5,
        ..a.clone()
    };
    assert_eq!(a.binding(), same.binding());
    for other in [
        SearchQuery {
            contains: Some("mia".into()),
            ..a.clone()
        },
        SearchQuery {
            folder: "shots".into(),
            ..a.clone()
        },
        SearchQuery {
            metadata_values: vec!["v".into()],
            ..a.clone()
        },
        SearchQuery {
            sort: Sort {
                field: SortField::Size,
                descending: false,
            },
            ..a.clone()
        },
    ] {
        assert_ne!(a.binding(), other.binding());
    }
    let p = Position::of(
        Sort {
            field: SortField::LastModified,
            descending: true,
        },
        &object("a.png", 1, 5, &[]),
    );
    let text = serde_json::to_string(&p).unwrap();
    assert_eq!(serde_json::from_str::<Position>(&text).unwrap(), p);
    assert_eq!(p.key(), "a.png");
}
