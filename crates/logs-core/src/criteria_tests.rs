use super::*;
use crate::search::{validate_filters, SearchFields};
use serde_json::json;

fn row() -> EventRow {
    EventRow {
        event_type: "admin.kick".into(),
        player_id: Some("12".into()),
        message: "Kicked".into(),
        ..EventRow::fixture(1)
    }
}

#[test]
fn event_types_are_exact_or_prefixes() {
    let p = |s: &str| TypeMatch::parse("eventType", s);
    assert_eq!(p("admin.kick"), Ok(TypeMatch::Exact("admin.kick".into())));
    assert_eq!(p("admin."), Ok(TypeMatch::Prefix("admin.".into())));
    assert_eq!(p("admin.*"), Ok(TypeMatch::Prefix("admin.".into())));
    assert_eq!(p("adm*"), Ok(TypeMatch::Prefix("adm".into())));
    for bad in ["*", "**", "a*b", "*admin", "ad**"] {
        let e = p(bad).unwrap_err();
        assert!(
            e.contains("`eventType`") && e.contains("prefix"),
            "{bad}: {e}"
        );
    }
    assert!(p("").unwrap_err().contains("must not be empty"));
    assert!(p("a\0").unwrap_err().contains("NUL"));
    assert!(p(&"a".repeat(256)).is_ok());
    assert!(p(&"a".repeat(257)).unwrap_err().contains("at most 256"));
    let prefix = p("admin.*").unwrap();
    for (t, yes) in [
        ("admin.kick", true),
        ("admin.", true),
        ("admin", false),
        ("administrator", false),
        ("chat", false),
    ] {
        assert_eq!(prefix.matches(t), yes, "{t}");
    }
    assert!(!p("admin").unwrap().matches("admin.kick"));
    assert_eq!(prefix.as_written(), "admin.");
    assert_eq!(p("adm*").unwrap().as_written(), "adm*");
}

#[test]
fn a_player_is_an_id_or_any_identifier_as_actor_or_target() {
    let p = |s| PlayerMatch::parse("player", s).unwrap();
    assert_eq!(p("12").identifier, None);
    assert_eq!(
        p("license:abc:1").identifier,
        Some(("license".into(), "abc:1".into()))
    );
    // not a kind: a colon first, a kind with other characters, nothing after
    for id in [":abc", "lic-ense:abc", "license:", "ä:1"] {
        assert_eq!(p(id).identifier, None, "{id}");
    }
    assert!(PlayerMatch::parse("player", "")
        .unwrap_err()
        .contains("`player`"));

    let mut r = row();
    assert!(p("12").matches(&r));
    assert!(!p("1").matches(&r));
    r.player_id = None;
    r.target_player_id = Some("12".into());
    assert!(p("12").matches(&r), "the target matches as well");
    r.target_player_id = None;
    r.player_identifiers = Some(json!({ "license": "license:abc", "discord": "987" }));
    assert!(p("license:abc").matches(&r), "written whole");
    assert!(p("discord:987").matches(&r), "written without its kind");
    assert!(!p("license:ab").matches(&r));
    assert!(!p("steam:abc").matches(&r), "another kind");
    assert!(!p("abc").matches(&r), "an id is not an identifier value");
    r.player_identifiers = None;
    r.target_player_identifiers = Some(json!({ "license": "license:abc" }));
    assert!(p("license:abc").matches(&r), "the target's identifiers");
    r.player_id = Some("license:xyz".into());
    assert!(
        p("license:xyz").matches(&r),
        "an identifier used as the player id"
    );
}

fn cond(path: &str, op: DataOp, value: Value) -> Result<Vec<DataCondition>, String> {
    data_conditions(&Some(vec![DataConditionRequest {
        path: path.into(),
        op,
        value,
    }]))
}

#[test]
fn data_conditions_are_validated_with_the_field_named() {
    assert!(cond("amount", DataOp::Gt, json!(100000)).is_ok());
    assert!(cond("to.account", DataOp::Prefix, json!("ACC")).is_ok());
    for (path, op, value, says) in [
        (
            "",
            DataOp::Gt,
            json!(1),
            "`dataWhere[0].path` must not be empty",
        ),
        ("a..b", DataOp::Gt, json!(1), "single dots"),
        (".a", DataOp::Gt, json!(1), "single dots"),
        ("a.", DataOp::Gt, json!(1), "single dots"),
        (
            "a",
            DataOp::Gt,
            json!("1"),
            "`dataWhere[0].value` must be a number for `>`",
        ),
        ("a", DataOp::Le, json!(null), "must be a number for `<=`"),
        (
            "a",
            DataOp::Prefix,
            json!(1),
            "must be a string for `prefix`",
        ),
        (
            "a",
            DataOp::Prefix,
            json!(""),
            "`dataWhere[0].value` must not be empty",
        ),
        ("a\0", DataOp::Gt, json!(1), "NUL"),
    ] {
        let e = cond(path, op, value).unwrap_err();
        assert!(e.contains(says), "{path:?}: {e}");
    }
    // keys: N - 1, N, N + 1
    let keys = |n: usize| vec!["k"; n].join(".");
    assert!(cond(&keys(7), DataOp::Gt, json!(1)).is_ok());
    assert!(cond(&keys(8), DataOp::Gt, json!(1)).is_ok());
    assert!(cond(&keys(9), DataOp::Gt, json!(1))
        .unwrap_err()
        .contains("at most 8 keys (got 9)"));
    // conditions: 0, N, N + 1
    let many = |n: usize| {
        data_conditions(&Some(vec![
            DataConditionRequest {
                path: "a".into(),
                op: DataOp::Gt,
                value: json!(1)
            };
            n
        ]))
    };
    assert!(many(0).unwrap_err().contains("1 to 8 conditions (got 0)"));
    assert!(many(8).is_ok());
    assert!(many(9).unwrap_err().contains("1 to 8 conditions (got 9)"));
    // the operators as sent
    let req: DataConditionRequest =
        serde_json::from_value(json!({"path": "a", "op": ">=", "value": 1})).unwrap();
    assert_eq!(req.op, DataOp::Ge);
    assert!(serde_json::from_value::<DataConditionRequest>(
        json!({"path": "a", "op": "=", "value": 1})
    )
    .is_err());
}

#[test]
fn data_conditions_compare_numbers_and_prefixes_at_a_path() {
    let data = json!({
        "amount": 150000, "fee": 2.5, "big": 18446744073709551615u64, "neg": -3,
        "to": { "account": "ACC-77", "n": 5 }, "list": [1, 200000], "text": "250000",
        "unicode": "Ärger im Paradies", "dotted.key": 1,
    });
    let yes = |path: &str, op, v: Value| cond(path, op, v).unwrap()[0].matches(Some(&data));
    assert!(yes("amount", DataOp::Gt, json!(100000)));
    assert!(!yes("amount", DataOp::Gt, json!(150000)));
    assert!(yes("amount", DataOp::Ge, json!(150000)));
    assert!(yes("amount", DataOp::Ge, json!(149999.5)));
    assert!(yes("amount", DataOp::Lt, json!(150000.5)));
    assert!(!yes("amount", DataOp::Lt, json!(150000)));
    assert!(yes("amount", DataOp::Le, json!(150000.0)));
    assert!(yes("fee", DataOp::Gt, json!(2)));
    assert!(yes("big", DataOp::Gt, json!(18446744073709551614u64)));
    assert!(yes("big", DataOp::Gt, json!(-1)));
    assert!(yes("neg", DataOp::Lt, json!(0)));
    assert!(yes("to.n", DataOp::Le, json!(5)));
    assert!(yes("to.account", DataOp::Prefix, json!("ACC-")));
    assert!(
        !yes("to.account", DataOp::Prefix, json!("acc-")),
        "case-sensitive"
    );
    assert!(yes("unicode", DataOp::Prefix, json!("Ärger")));
    // another type, a missing key, a path through a non-object: no match
    assert!(
        !yes("text", DataOp::Gt, json!(1)),
        "a numeric string is a string"
    );
    assert!(!yes("amount", DataOp::Prefix, json!("15")));
    assert!(!yes("missing", DataOp::Gt, json!(0)));
    assert!(!yes("to.account.x", DataOp::Prefix, json!("A")));
    assert!(
        !yes("list", DataOp::Gt, json!(0)),
        "arrays are not unwrapped"
    );
    assert!(!yes("amount.x", DataOp::Gt, json!(0)));
    assert!(
        !yes("dotted.key", DataOp::Ge, json!(1)),
        "a dot separates keys"
    );
    assert!(!cond("a", DataOp::Gt, json!(0)).unwrap()[0].matches(None));
}

fn search(f: SearchFields) -> Result<crate::search::Filters, String> {
    validate_filters(&f)
}

#[test]
fn exclusions_are_validated_and_levels_fold_into_the_search() {
    let ex = |e: ExcludeRequest| {
        search(SearchFields {
            exclude: Some(e),
            ..Default::default()
        })
    };
    let f = ex(ExcludeRequest {
        levels: Some(vec!["debug".into()]),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(
        f.levels,
        Some(vec![Level::Info, Level::Warn, Level::Error, Level::Fatal])
    );
    let f = search(SearchFields {
        min_level: Some("warn".into()),
        exclude: Some(ExcludeRequest {
            levels: Some(vec!["error".into(), "debug".into()]),
            ..Default::default()
        }),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(f.levels, Some(vec![Level::Warn, Level::Fatal]));
    let e = search(SearchFields {
        level: Some("warn".into()),
        exclude: Some(ExcludeRequest {
            levels: Some(vec!["warn".into()]),
            ..Default::default()
        }),
        ..Default::default()
    })
    .unwrap_err();
    assert!(e.contains("`exclude.levels` leaves out every level"), "{e}");
    let e = ex(ExcludeRequest {
        levels: Some(vec!["loud".into()]),
        ..Default::default()
    })
    .unwrap_err();
    assert!(e.contains("`exclude.levels[0]` must be one of"), "{e}");
    // lists: N, N + 1
    let types = |n: usize| {
        ex(ExcludeRequest {
            event_types: Some(vec!["chat".into(); n]),
            ..Default::default()
        })
    };
    assert!(types(20).is_ok());
    assert!(types(21)
        .unwrap_err()
        .contains("`exclude.eventTypes` may hold at most 20 entries (got 21)"));
    let e = ex(ExcludeRequest {
        resources: Some(vec!["ok".into(), "".into()]),
        ..Default::default()
    })
    .unwrap_err();
    assert!(
        e.contains("`exclude.resources[1]` must not be empty"),
        "{e}"
    );
    let e = ex(ExcludeRequest {
        data: Some(json!([1])),
        ..Default::default()
    })
    .unwrap_err();
    assert!(e.contains("`exclude.data` must be a JSON object"), "{e}");
    assert!(ex(ExcludeRequest::default()).unwrap().exclude.is_empty());
}

#[test]
fn exclusions_leave_out_what_any_entry_matches() {
    let f = search(SearchFields {
        exclude: Some(ExcludeRequest {
            event_types: Some(vec!["chat".into(), "admin.*".into()]),
            resources: Some(vec!["phone".into()]),
            players: Some(vec!["license:abc".into()]),
            message: Some("ECONNRESET".into()),
            data: Some(json!({ "bot": true })),
            ..Default::default()
        }),
        ..Default::default()
    })
    .unwrap();
    let keep = |edit: &dyn Fn(&mut EventRow)| {
        let mut r = row();
        r.event_type = "player.join".into();
        edit(&mut r);
        f.matches(&r)
    };
    assert!(keep(&|_| {}));
    assert!(!keep(&|r| r.event_type = "chat".into()));
    assert!(keep(&|r| r.event_type = "chat.private".into()));
    assert!(!keep(&|r| r.event_type = "admin.ban".into()));
    assert!(!keep(&|r| r.resource = Some("phone".into())));
    assert!(keep(&|r| r.resource = Some("phone2".into())));
    assert!(!keep(
        &|r| r.target_player_identifiers = Some(json!({"license": "abc"}))
    ));
    assert!(!keep(&|r| r.message = "read econnreset at x".into()));
    assert!(!keep(&|r| r.data = Some(json!({"bot": true, "n": 1}))));
    assert!(keep(&|r| r.data = Some(json!({"bot": false}))));
    let d = f.digest_value();
    assert_eq!(d["exclude"]["eventTypes"], json!(["chat", "admin."]));
}

#[test]
fn searches_without_the_new_filters_digest_as_before() {
    let f = search(SearchFields {
        event_type: Some("chat".into()),
        ..Default::default()
    })
    .unwrap();
    let d = f.digest_value();
    let keys: Vec<&String> = d.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "data",
            "eventType",
            "identifier",
            "levels",
            "message",
            "playerId",
            "resource"
        ]
    );
    assert_eq!(d["eventType"], "chat");
    let g = search(SearchFields {
        event_type: Some("chat.*".into()),
        player: Some("license:a".into()),
        ..Default::default()
    })
    .unwrap();
    assert_ne!(g.digest_value(), d);
    assert_eq!(g.digest_value()["player"], "license:a");
}
