use chrono::{DateTime, Duration, Utc};
use serde_json::json;

use super::*;
use crate::criteria::{DataConditionRequest, DataOp, Exclusions, TypeMatch};
use crate::event::Level;
use crate::store::IdentifierFilter;

fn at(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

fn server() -> &'static ServerId {
    static S: std::sync::OnceLock<ServerId> = std::sync::OnceLock::new();
    S.get_or_init(|| ServerId::new("s"))
}

fn query(from: &str, to: &str, after: Option<&str>) -> EventQuery {
    EventQuery {
        server_id: server().clone(),
        from: at(from),
        to: at(to),
        filters: Filters {
            message: Some("x".into()),
            ..Default::default()
        },
        after: after.map(|t| (at(t), 7)),
        limit: 100,
        scan_limit: None,
        enough: 100,
    }
}

fn pairs(v: &[(&str, &str)]) -> Vec<Span> {
    v.iter().map(|(f, t)| (at(f), at(t))).collect()
}

fn count(from: &str, to: &str, bucket: Duration, filters: Filters) -> CountQuery {
    CountQuery {
        server_id: server().clone(),
        from: at(from),
        to: at(to),
        filters,
        bucket,
        scan_limit: 100_000,
    }
}

#[test]
fn a_window_inside_one_day_is_one_statement() {
    let q = query("2026-11-20T01:00:00Z", "2026-11-20T23:00:00Z", None);
    assert_eq!(
        day_windows(&q),
        pairs(&[("2026-11-20T01:00:00Z", "2026-11-20T23:00:00Z")])
    );
}

#[test]
fn days_are_cut_at_utc_midnight_newest_first_and_cover_the_window_once() {
    let q = query("2026-11-17T12:00:00Z", "2026-11-20T06:30:00Z", None);
    assert_eq!(
        day_windows(&q),
        pairs(&[
            ("2026-11-20T00:00:00Z", "2026-11-20T06:30:00Z"),
            ("2026-11-19T00:00:00Z", "2026-11-20T00:00:00Z"),
            ("2026-11-18T00:00:00Z", "2026-11-19T00:00:00Z"),
            ("2026-11-17T12:00:00Z", "2026-11-18T00:00:00Z"),
        ])
    );
}

#[test]
fn an_end_at_midnight_adds_no_empty_day() {
    let q = query("2026-11-19T00:00:00Z", "2026-11-21T00:00:00Z", None);
    assert_eq!(
        day_windows(&q),
        pairs(&[
            ("2026-11-20T00:00:00Z", "2026-11-21T00:00:00Z"),
            ("2026-11-19T00:00:00Z", "2026-11-20T00:00:00Z"),
        ])
    );
}

#[test]
fn the_cursor_caps_the_window_and_keeps_its_own_instant() {
    let q = query(
        "2026-11-17T12:00:00Z",
        "2026-11-20T06:30:00Z",
        Some("2026-11-19T00:00:00Z"),
    );
    let w = day_windows(&q);
    assert_eq!(
        w[0],
        (
            at("2026-11-19T00:00:00Z"),
            at("2026-11-19T00:00:00Z") + Duration::microseconds(1)
        )
    );
    assert_eq!(
        w[1],
        (at("2026-11-18T00:00:00Z"), at("2026-11-19T00:00:00Z"))
    );
    assert_eq!(w.len(), 3);
    // a cursor after the window's end changes nothing
    let late = query(
        "2026-11-20T01:00:00Z",
        "2026-11-20T02:00:00Z",
        Some("2026-11-21T00:00:00Z"),
    );
    assert_eq!(
        day_windows(&late),
        pairs(&[("2026-11-20T01:00:00Z", "2026-11-20T02:00:00Z")])
    );
}

#[test]
fn an_empty_window_or_a_cursor_below_it_is_no_statement() {
    let q = query("2026-11-20T01:00:00Z", "2026-11-20T01:00:00Z", None);
    assert!(day_windows(&q).is_empty());
    let q = query(
        "2026-11-20T01:00:00Z",
        "2026-11-20T05:00:00Z",
        Some("2026-11-19T23:00:00Z"),
    );
    assert!(day_windows(&q).is_empty());
}

#[test]
fn a_page_plan_puts_a_scanned_data_filter_before_the_message_term() {
    let mut q = query("2026-11-19T00:00:00Z", "2026-11-21T00:00:00Z", None);
    assert_eq!(plan_page(&q), PagePlan::Days(day_windows(&q)));
    q.filters.data = Some(json!({ "a": 1 }));
    assert_eq!(
        plan_page(&q),
        PagePlan::Days(day_windows(&q)),
        "no scan limit (exports)"
    );
    q.scan_limit = Some(500);
    assert_eq!(plan_page(&q), PagePlan::Scanned { limit: 500 });
    q.filters.message = None;
    assert_eq!(plan_page(&q), PagePlan::Scanned { limit: 500 });
    q.scan_limit = None;
    assert_eq!(plan_page(&q), PagePlan::Window);
    q.filters.data = None;
    assert_eq!(plan_page(&q), PagePlan::Window);
    // every filter on `data` is scanned within the limit; other exclusions are not
    q.scan_limit = Some(500);
    let condition = crate::criteria::data_conditions(&Some(vec![DataConditionRequest {
        path: "amount".into(),
        op: DataOp::Gt,
        value: json!(1),
    }]))
    .unwrap();
    for filters in [
        Filters {
            data_where: condition,
            ..Default::default()
        },
        Filters {
            exclude: Exclusions {
                data: Some(json!({ "a": 1 })),
                ..Default::default()
            },
            ..Default::default()
        },
    ] {
        q.filters = filters;
        assert_eq!(plan_page(&q), PagePlan::Scanned { limit: 500 });
        assert!(!q.filters.without_data().scans_data());
    }
    q.filters = Filters {
        exclude: Exclusions {
            resources: vec!["chat".into()],
            message: Some("x".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    assert_eq!(plan_page(&q), PagePlan::Window);
}

#[test]
fn counts_with_players_messages_or_data_exclusions_read_the_events() {
    for exclude in [
        Exclusions {
            players: vec![crate::criteria::PlayerMatch::parse("p", "12").unwrap()],
            ..Default::default()
        },
        Exclusions {
            message: Some("x".into()),
            ..Default::default()
        },
        Exclusions {
            data: Some(json!({ "a": 1 })),
            ..Default::default()
        },
    ] {
        let q = count(
            "2026-11-20T01:00:00Z",
            "2026-11-20T05:00:00Z",
            Duration::hours(2),
            Filters {
                exclude,
                ..Default::default()
            },
        );
        assert_eq!(plan_counts(&q).reads, CountReads::Window);
    }
    let q = count(
        "2026-11-20T01:00:00Z",
        "2026-11-20T05:00:00Z",
        Duration::hours(2),
        Filters {
            player: Some(crate::criteria::PlayerMatch::parse("p", "license:a").unwrap()),
            ..Default::default()
        },
    );
    assert_eq!(plan_counts(&q).reads, CountReads::Window);
}

#[test]
fn counts_use_level_slots_without_filters_but_levels() {
    let levels = Filters {
        levels: Some(vec![Level::Warn]),
        ..Default::default()
    };
    for filters in [Filters::default(), levels] {
        let q = count(
            "2026-11-20T00:07:00Z",
            "2026-11-20T03:52:00Z",
            Duration::minutes(30),
            filters,
        );
        let plan = plan_counts(&q);
        assert_eq!(plan.scan_check, None);
        assert_eq!(
            plan.reads,
            CountReads::Kept {
                table: KeptCounts::LevelSlots,
                whole: (at("2026-11-20T00:15:00Z"), at("2026-11-20T03:45:00Z")),
                ends: pairs(&[
                    ("2026-11-20T00:07:00Z", "2026-11-20T00:15:00Z"),
                    ("2026-11-20T03:45:00Z", "2026-11-20T03:52:00Z"),
                ]),
            }
        );
    }
}

#[test]
fn counts_use_hours_with_an_event_type_or_resource_and_aligned_ends_read_no_events() {
    for filters in [
        Filters {
            event_type: Some(TypeMatch::Exact("chat".into())),
            ..Default::default()
        },
        Filters {
            resource: Some("core".into()),
            levels: Some(vec![Level::Info, Level::Error]),
            ..Default::default()
        },
        Filters {
            event_type: Some(TypeMatch::Prefix("admin.".into())),
            ..Default::default()
        },
        Filters {
            exclude: Exclusions {
                event_types: vec![TypeMatch::Prefix("admin.".into())],
                resources: vec!["chat".into()],
                ..Default::default()
            },
            ..Default::default()
        },
    ] {
        let q = count(
            "2026-11-20T01:00:00Z",
            "2026-11-20T05:00:00Z",
            Duration::hours(2),
            filters,
        );
        assert_eq!(
            plan_counts(&q).reads,
            CountReads::Kept {
                table: KeptCounts::Hours,
                whole: (q.from, q.to),
                ends: vec![],
            }
        );
    }
}

#[test]
fn kept_counts_need_whole_unit_buckets_and_two_units_of_window() {
    let plain = |from: &str, to: &str, bucket: Duration| {
        plan_counts(&count(from, to, bucket, Filters::default())).reads
    };
    // buckets that are not whole 15-minute slots read the events
    for bucket in [
        Duration::minutes(5),
        Duration::minutes(10),
        Duration::minutes(20),
    ] {
        let r = plain("2026-11-20T00:00:00Z", "2026-11-21T00:00:00Z", bucket);
        assert_eq!(r, CountReads::Window, "{bucket}");
    }
    for bucket in [
        Duration::minutes(15),
        Duration::minutes(45),
        Duration::hours(3),
    ] {
        let r = plain("2026-11-20T00:00:00Z", "2026-11-21T00:00:00Z", bucket);
        assert!(matches!(r, CountReads::Kept { .. }), "{bucket}");
    }
    // two units of window: N-1 reads the events, N and N+1 the kept counts
    let b = Duration::minutes(15);
    let short = plain("2026-11-20T00:00:00Z", "2026-11-20T00:29:59.999999Z", b);
    assert_eq!(short, CountReads::Window);
    let exact = plain("2026-11-20T00:00:00Z", "2026-11-20T00:30:00Z", b);
    assert!(matches!(exact, CountReads::Kept { .. }));
    let longer = plain("2026-11-20T00:00:00Z", "2026-11-20T00:30:00.000001Z", b);
    assert!(matches!(longer, CountReads::Kept { ref ends, .. } if ends.len() == 1));
    // an unaligned two-unit window has no whole unit inside but is still exact
    let unaligned = plain("2026-11-20T00:07:00Z", "2026-11-20T00:37:00Z", b);
    assert_eq!(
        unaligned,
        CountReads::Kept {
            table: KeptCounts::LevelSlots,
            whole: (at("2026-11-20T00:15:00Z"), at("2026-11-20T00:30:00Z")),
            ends: pairs(&[
                ("2026-11-20T00:07:00Z", "2026-11-20T00:15:00Z"),
                ("2026-11-20T00:30:00Z", "2026-11-20T00:37:00Z"),
            ]),
        }
    );
}

#[test]
fn counts_with_a_filter_no_table_keeps_read_events() {
    let identifier = IdentifierFilter {
        owner: crate::store::Owner::Player,
        key: "license".into(),
        value: "x".into(),
    };
    let cases = [
        Filters {
            player_id: Some("p".into()),
            ..Default::default()
        },
        Filters {
            identifier: Some(identifier),
            ..Default::default()
        },
    ];
    for filters in cases {
        let q = count(
            "2026-11-20T00:00:00Z",
            "2026-11-21T00:00:00Z",
            Duration::hours(1),
            filters,
        );
        assert_eq!(plan_counts(&q).reads, CountReads::Window);
    }
}

#[test]
fn counts_with_a_message_go_day_by_day_and_data_is_checked_first() {
    let message = Filters {
        message: Some("x".into()),
        ..Default::default()
    };
    let q = count(
        "2026-11-19T12:00:00Z",
        "2026-11-21T00:00:00Z",
        Duration::hours(1),
        message.clone(),
    );
    let plan = plan_counts(&q);
    assert_eq!(plan.scan_check, None);
    assert_eq!(
        plan.reads,
        CountReads::Days(pairs(&[
            ("2026-11-20T00:00:00Z", "2026-11-21T00:00:00Z"),
            ("2026-11-19T12:00:00Z", "2026-11-20T00:00:00Z"),
        ]))
    );
    let data = Filters {
        data: Some(json!({ "a": 1 })),
        ..message
    };
    let q = CountQuery {
        filters: data,
        scan_limit: 42,
        ..q
    };
    assert_eq!(plan_counts(&q).scan_check, Some(42));
    let q = CountQuery {
        filters: Filters {
            message: None,
            ..q.filters.clone()
        },
        ..q
    };
    let plan = plan_counts(&q);
    assert_eq!(
        (plan.scan_check, plan.reads),
        (Some(42), CountReads::Window)
    );
}

#[test]
fn bounds_are_built_from_a_window() {
    let b = Bounds::window(
        server(),
        (at("2026-11-20T00:00:00Z"), at("2026-11-21T00:00:00Z")),
    );
    assert_eq!((b.after, b.floor), (None, None));
    let pos = (at("2026-11-20T12:00:00Z"), 3);
    let b = b.after(Some(pos)).floor(Some(pos));
    assert_eq!((b.after, b.floor), (Some(pos), Some(pos)));
    assert_eq!(b.server, server());
}

#[test]
fn a_prefix_reads_the_types_of_its_window_or_the_window_in_time_order() {
    let listed = |v: &[&str]| Some(v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    assert_eq!(
        prefix_types(
            "admin.",
            listed(&["administrator.login", "chat", "admin.kick"])
        ),
        TypePlan::Types(vec!["admin.kick".into()]),
        "a prefix is not a word: administrator.login is not under admin."
    );
    assert_eq!(
        prefix_types("admin.", listed(&["admin.kick", "admin.ban", "admin.ban"])),
        TypePlan::Types(vec!["admin.ban".into(), "admin.kick".into()])
    );
    assert_eq!(
        prefix_types("admin.", listed(&["chat", "Admin.kick"])),
        TypePlan::Empty
    );
    assert_eq!(prefix_types("admin.", listed(&[])), TypePlan::Empty);
    assert_eq!(
        prefix_types("admin.", None),
        TypePlan::Scan,
        "too many types listed"
    );
    let mut many: Vec<String> = (0..=MAX_MERGED_TYPES).map(|i| format!("a.{i}")).collect();
    many.sort();
    assert_eq!(
        prefix_types("a.", Some(many[..MAX_MERGED_TYPES].to_vec())),
        TypePlan::Types(many[..MAX_MERGED_TYPES].to_vec()),
        "N types"
    );
    assert_eq!(prefix_types("a.", Some(many)), TypePlan::Scan, "N+1 types");
    assert_eq!(
        prefix_types("é.", listed(&["é.ü", "e.u"])),
        TypePlan::Types(vec!["é.ü".into()])
    );
}
