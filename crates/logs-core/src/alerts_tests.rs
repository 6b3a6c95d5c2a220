use super::*;
use auth_core::ServerScope;
use chrono::TimeZone;

fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 27, h, m, s).unwrap()
}

fn threshold(count: i64, window: i64) -> AlertRuleRequest {
    AlertRuleRequest {
        name: Some("Errors".into()),
        saved_search_id: Some("ss_1".into()),
        kind: Some("threshold".into()),
        threshold: Some(count),
        window_minutes: Some(window),
        destination_ids: Some(vec!["dst_1".into()]),
        ..AlertRuleRequest::default()
    }
}

fn every() -> AlertRuleRequest {
    AlertRuleRequest {
        name: Some("Bans".into()),
        saved_search_id: Some("ss_2".into()),
        kind: Some("every".into()),
        destination_ids: Some(vec!["dst_1".into()]),
        ..AlertRuleRequest::default()
    }
}

fn field_of(r: Result<RuleSpec, RuleError>) -> (&'static str, String) {
    let e = r.unwrap_err();
    (e.field, e.reason)
}

#[test]
fn a_threshold_rule_needs_its_numbers_within_limits() {
    let spec = threshold(20, 5).resolve(None).unwrap();
    assert_eq!(
        spec.trigger,
        Trigger::Threshold {
            count: 20,
            window: Duration::minutes(5),
            cooldown: Duration::zero()
        }
    );
    for (count, window, field, says) in [
        (0, 5, "threshold", "between 1 and 100000; got 0"),
        (MAX_THRESHOLD + 1, 5, "threshold", "got 100001"),
        (20, 0, "windowMinutes", "between 1 and 1440; got 0"),
        (20, MAX_WINDOW_MINUTES + 1, "windowMinutes", "got 1441"),
    ] {
        let (f, reason) = field_of(threshold(count, window).resolve(None));
        assert_eq!(f, field);
        assert!(reason.contains(says), "{reason}");
    }
    assert!(threshold(MAX_THRESHOLD, MAX_WINDOW_MINUTES)
        .resolve(None)
        .is_ok());
    let mut cooled = threshold(1, 1);
    cooled.cooldown_minutes = Some(MAX_COOLDOWN_MINUTES + 1);
    assert_eq!(field_of(cooled.resolve(None)).0, "cooldownMinutes");
    cooled.cooldown_minutes = Some(-1);
    assert_eq!(field_of(cooled.resolve(None)).0, "cooldownMinutes");
    let mut missing = threshold(1, 1);
    missing.threshold = None;
    assert_eq!(
        field_of(missing.resolve(None)),
        ("threshold", "is required for a `threshold` rule".into())
    );
}

#[test]
fn every_match_rules_take_no_threshold_fields_or_grouping() {
    assert_eq!(every().resolve(None).unwrap().trigger, Trigger::EveryMatch);
    let mut r = every();
    r.window_minutes = Some(5);
    assert_eq!(field_of(r.resolve(None)).0, "windowMinutes");
    let mut r = every();
    r.group_by = Some("resource".into());
    assert_eq!(field_of(r.resolve(None)).0, "groupBy");
    let mut r = every();
    r.kind = Some("sometimes".into());
    assert_eq!(
        field_of(r.resolve(None)),
        (
            "kind",
            "must be `every` or `threshold`; got \"sometimes\"".into()
        )
    );
}

#[test]
fn names_and_destinations_are_checked() {
    for (name, ok) in [
        ("", false),
        ("   ", false),
        ("a", true),
        (&"é".repeat(MAX_NAME_CHARS), true),
        (&"é".repeat(MAX_NAME_CHARS + 1), false),
        ("tab\there", false),
    ] {
        let mut r = every();
        r.name = Some(name.to_owned());
        assert_eq!(r.resolve(None).is_ok(), ok, "{name:?}");
    }
    let mut r = every();
    r.destination_ids = Some(vec![]);
    assert_eq!(field_of(r.resolve(None)).0, "destinationIds");
    r.destination_ids = Some((0..=MAX_DESTINATIONS).map(|i| format!("d{i}")).collect());
    assert!(field_of(r.resolve(None))
        .1
        .contains("1 to 10 destinations; got 11"));
    r.destination_ids = Some(vec!["d".into(), "d".into()]);
    assert_eq!(field_of(r.resolve(None)).1, "names a destination twice");
    let mut r = every();
    r.saved_search_id = None;
    assert_eq!(
        field_of(r.resolve(None)),
        ("savedSearchId", "is required".into())
    );
}

#[test]
fn a_change_keeps_what_it_does_not_name() {
    let mut base_req = threshold(20, 5);
    base_req.group_by = Some("resource".into());
    base_req.cooldown_minutes = Some(30);
    let base = base_req.resolve(None).unwrap();
    let renamed = AlertRuleRequest {
        name: Some("Renamed".into()),
        ..AlertRuleRequest::default()
    }
    .resolve(Some(&base))
    .unwrap();
    assert_eq!(renamed.name, "Renamed");
    assert_eq!(
        (renamed.trigger, renamed.group_by),
        (base.trigger, base.group_by)
    );
    let raised = AlertRuleRequest {
        threshold: Some(50),
        ..AlertRuleRequest::default()
    }
    .resolve(Some(&base))
    .unwrap();
    assert_eq!(
        raised.trigger,
        Trigger::Threshold {
            count: 50,
            window: Duration::minutes(5),
            cooldown: Duration::minutes(30)
        }
    );
    // grouping is dropped with "" (null means "unchanged")
    let ungrouped = AlertRuleRequest {
        group_by: Some(String::new()),
        ..AlertRuleRequest::default()
    }
    .resolve(Some(&base))
    .unwrap();
    assert_eq!(ungrouped.group_by, None);
    // a threshold rule made every-match must drop its grouping
    let to_every = AlertRuleRequest {
        kind: Some("every".into()),
        ..AlertRuleRequest::default()
    };
    assert_eq!(field_of(to_every.resolve(Some(&base))).0, "groupBy");
}

#[test]
fn the_window_counts_whole_minutes_ending_at_now() {
    let counts = [
        (at(12, 2, 0), 100),
        (at(12, 3, 0), 1),
        (at(12, 5, 0), 2),
        (at(12, 7, 0), 4),
        (at(12, 8, 0), 1000),
    ];
    // 5 minutes at 12:07:30: 12:03 … 12:07
    assert_eq!(window_sum(&counts, at(12, 7, 30), Duration::minutes(5)), 7);
    assert_eq!(window_sum(&counts, at(12, 7, 0), Duration::minutes(1)), 4);
    assert_eq!(
        window_sum(&counts, at(12, 8, 59), Duration::minutes(5)),
        1006
    );
    assert_eq!(window_sum(&[], at(12, 0, 0), Duration::minutes(5)), 0);
    assert_eq!(minute_of(at(12, 7, 59)), at(12, 7, 0));
}

#[test]
fn a_breach_fires_once_then_after_it_clears() {
    let cd = Duration::zero();
    let s0 = GroupState::default();
    let (d, s1) = decide(s0, 19, 20, cd, at(12, 0, 0));
    assert_eq!((d, s1), (Decision::Hold, s0), "N-1 does not fire");
    let (d, s2) = decide(s1, 20, 20, cd, at(12, 1, 0));
    assert_eq!(d, Decision::Fire, "N fires");
    assert_eq!(s2.last_fired, Some(at(12, 1, 0)));
    let (d, s3) = decide(s2, 21, 20, cd, at(12, 9, 0));
    assert_eq!(
        d,
        Decision::Hold,
        "N+1 while the breach lasts does not fire again"
    );
    let (d, s4) = decide(s3, 19, 20, cd, at(12, 10, 0));
    assert_eq!(d, Decision::Clear);
    assert!(!s4.breached);
    let (d, _) = decide(s4, 20, 20, cd, at(12, 11, 0));
    assert_eq!(d, Decision::Fire, "a new breach fires");
}

#[test]
fn a_lasting_breach_fires_again_after_the_cool_down() {
    let cd = Duration::minutes(30);
    let (_, s) = decide(GroupState::default(), 5, 5, cd, at(12, 0, 0));
    assert_eq!(decide(s, 9, 5, cd, at(12, 29, 59)).0, Decision::Hold);
    let (d, s) = decide(s, 9, 5, cd, at(12, 30, 0));
    assert_eq!(d, Decision::Fire);
    assert_eq!(s.last_fired, Some(at(12, 30, 0)));
}

#[test]
fn mutes_end_at_their_time() {
    assert!(!is_muted(None, at(12, 0, 0)));
    assert!(is_muted(Some(at(13, 0, 0)), at(12, 59, 59)));
    assert!(!is_muted(Some(at(13, 0, 0)), at(13, 0, 0)));
}

#[test]
fn events_are_tallied_per_group_and_minute_with_a_bounded_number_of_groups() {
    let event = |id: i64, resource: Option<&str>, at: DateTime<Utc>| {
        let mut e = EventRow::fixture(id);
        e.resource = resource.map(str::to_owned);
        e.occurred_at = at;
        e
    };
    let events = [
        event(1, Some("phone"), at(12, 0, 1)),
        event(2, Some("phone"), at(12, 0, 59)),
        event(3, Some("bank"), at(12, 1, 0)),
        event(4, None, at(12, 1, 0)),
        event(5, Some(""), at(12, 1, 0)),
    ];
    assert_eq!(
        tally(Some(GroupBy::Resource), &events, &[]),
        [
            (NO_VALUE_GROUP.to_owned(), at(12, 1, 0), 2),
            ("bank".to_owned(), at(12, 1, 0), 1),
            ("phone".to_owned(), at(12, 0, 0), 2),
        ]
    );
    assert_eq!(
        tally(None, &events, &[]),
        [
            (String::new(), at(12, 0, 0), 2),
            (String::new(), at(12, 1, 0), 3)
        ]
    );
    // at the limit, a new group counts in "(other)"; known groups keep their own
    let known: Vec<String> = (0..MAX_GROUPS).map(|i| format!("r{i}")).collect();
    let late = [
        event(6, Some("r7"), at(12, 2, 0)),
        event(7, Some("new"), at(12, 2, 0)),
        event(8, Some("newer"), at(12, 2, 0)),
    ];
    assert_eq!(
        tally(Some(GroupBy::Resource), &late, &known),
        [
            (OTHER_GROUP.to_owned(), at(12, 2, 0), 2),
            ("r7".to_owned(), at(12, 2, 0), 1),
        ]
    );
    let mut typed = EventRow::fixture(9);
    typed.event_type = "admin.ban".into();
    typed.player_id = Some("license:abc".into());
    assert_eq!(GroupBy::EventType.group_of(&typed), "admin.ban");
    assert_eq!(GroupBy::Player.group_of(&typed), "license:abc");
    assert_eq!(GroupBy::parse("eventType"), Some(GroupBy::EventType));
    assert_eq!(GroupBy::parse("EventType"), None);
}

fn active(id: &str, trigger: Trigger, servers: SavedServers, filters: Filters) -> ActiveRule {
    ActiveRule {
        id: id.into(),
        org_id: OrgId::new("org_a"),
        name: id.into(),
        saved_search_id: "ss_1".into(),
        servers,
        reach: Some(MakerReach {
            servers: ServerScope::All,
            until: None,
        }),
        filters,
        trigger,
        group_by: Some(GroupBy::Resource),
        muted_until: None,
    }
}

#[test]
fn a_commit_is_matched_against_the_rules_watching_its_servers() {
    let errors = Filters {
        event_type: Some(crate::criteria::TypeMatch::parse("eventType", "resource.error").unwrap()),
        ..Filters::default()
    };
    let threshold = Trigger::Threshold {
        count: 2,
        window: Duration::minutes(5),
        cooldown: Duration::zero(),
    };
    let mut muted = active(
        "r_muted",
        Trigger::EveryMatch,
        SavedServers::All,
        Filters::default(),
    );
    muted.muted_until = Some(at(13, 0, 0));
    let rules = vec![
        active(
            "r_every",
            Trigger::EveryMatch,
            SavedServers::All,
            errors.clone(),
        ),
        active(
            "r_other_server",
            Trigger::EveryMatch,
            SavedServers::Named(vec![ServerId::new("srv_b")]),
            Filters::default(),
        ),
        active("r_count", threshold, SavedServers::All, errors),
        muted,
    ];
    let mut rows: Vec<EventRow> = (1..=4).map(EventRow::fixture).collect();
    for (row, (kind, res)) in rows.iter_mut().zip([
        ("resource.error", "phone"),
        ("chat", "chat"),
        ("resource.error", "bank"),
        ("resource.error", "phone"),
    ]) {
        row.event_type = kind.into();
        row.resource = Some(res.into());
        row.occurred_at = at(12, 0, 30);
    }
    let org = OrgId::new("org_a");
    let server = ServerId::new("srv_a");
    let other_org = OrgId::new("org_b");
    let m = evaluate(
        &rules,
        &[(&org, &server, &rows), (&other_org, &server, &rows)],
        at(12, 1, 0),
    );
    assert_eq!(
        m.every.len(),
        1,
        "not the other server's rule, not the muted one"
    );
    assert_eq!(m.every[0].0, 0);
    let ids: Vec<&str> = m.every[0].1.iter().map(|e| e.event_id.as_str()).collect();
    assert_eq!(
        ids,
        ["e1", "e3", "e4"],
        "the matching events in order, one organization's"
    );
    let counts: Vec<(&str, &str, u64)> = m
        .counts
        .iter()
        .map(|c| (c.rule_id.as_str(), c.group.as_str(), c.n))
        .collect();
    assert_eq!(
        counts,
        [("r_count", "bank", 1), ("r_count", "phone", 2)],
        "key order"
    );
    assert!(m.counts.iter().all(|c| c.minute == at(12, 0, 0)));
}

/// A rule sends only what its maker may read now: a saved search of every server means every
/// server the maker reads, a maker limited to one server is limited here too, an expired key and
/// a maker who is gone (or reads no logs) watch nothing.
#[test]
fn a_rule_watches_only_the_servers_its_maker_reads() {
    let org = OrgId::new("org_a");
    let (a, b) = (ServerId::new("srv_a"), ServerId::new("srv_b"));
    let now = at(12, 0, 0);
    let reach = |servers: ServerScope, until| Some(MakerReach { servers, until });
    let mut rule = active(
        "r",
        Trigger::EveryMatch,
        SavedServers::All,
        Filters::default(),
    );
    assert!(rule.watches(&org, &a, now) && rule.watches(&org, &b, now));
    // the reported leak: a maker of one server, a search of every server
    rule.reach = reach(ServerScope::Only(vec![a.clone()]), None);
    assert!(rule.watches(&org, &a, now));
    assert!(!rule.watches(&org, &b, now), "outside the maker's servers");
    // a search naming both: still only the maker's
    rule.servers = SavedServers::Named(vec![a.clone(), b.clone()]);
    assert!(rule.watches(&org, &a, now) && !rule.watches(&org, &b, now));
    // a maker of every server, a search of one: the search's
    rule.servers = SavedServers::Named(vec![b.clone()]);
    rule.reach = reach(ServerScope::All, None);
    assert!(!rule.watches(&org, &a, now) && rule.watches(&org, &b, now));
    // a key that expires: watched before its expiry, not at it
    rule.reach = reach(ServerScope::All, Some(now));
    assert!(rule.watches(&org, &b, now - Duration::milliseconds(1)));
    assert!(!rule.watches(&org, &b, now), "expired at its exact expiry");
    // a maker gone
    rule.reach = None;
    assert!(!rule.watches(&org, &b, now));
    // reach is made only for a reader of logs
    let cdn_only: auth_core::PermissionSet = [auth_core::Permission::CdnRead].into_iter().collect();
    assert_eq!(MakerReach::of(&cdn_only, ServerScope::All, None), None);
    let reader: auth_core::PermissionSet = [auth_core::Permission::LogsRead].into_iter().collect();
    assert!(MakerReach::of(&reader, ServerScope::All, None).is_some());
}

#[test]
fn ids_with_control_characters_are_refused() {
    let mut r = every();
    r.destination_ids = Some(vec!["dst_1".into(), "d\u{0}".into()]);
    assert_eq!(field_of(r.resolve(None)).0, "destinationIds");
    let mut r = every();
    r.saved_search_id = Some("ss\u{0}".into());
    assert_eq!(field_of(r.resolve(None)).0, "savedSearchId");
    let mut r = every();
    r.destination_ids = Some(vec![String::new()]);
    assert_eq!(field_of(r.resolve(None)).0, "destinationIds");
}
