use serde_json::json;

use super::*;

fn req(v: Value) -> SavedSearchRequest {
    serde_json::from_value(v).unwrap()
}

#[test]
fn a_name_is_trimmed_and_one_to_a_hundred_characters_without_control_characters() {
    assert_eq!(validate_name("  Bans  ").unwrap(), "Bans");
    assert_eq!(
        validate_name(&"é".repeat(100)).unwrap().chars().count(),
        100
    );
    let long = validate_name(&"é".repeat(101)).unwrap_err();
    assert!(long.contains("1 to 100") && long.contains("101"), "{long}");
    assert!(validate_name("   ").unwrap_err().contains("got 0"));
    assert!(validate_name("a\nb").unwrap_err().contains("control"));
    assert!(validate_name("a\u{7}").is_err());
    assert_eq!(validate_name("Bans 🔨 ../..").unwrap(), "Bans 🔨 ../..");
}

#[test]
fn creating_needs_a_name_and_defaults_to_every_server_and_no_filter() {
    assert!(validate(&req(json!({})), true)
        .unwrap_err()
        .contains("`name` is required"));
    let v = validate(&req(json!({ "name": "All" })), true).unwrap();
    assert_eq!(v.servers, Some(ServerCodes::All));
    assert_eq!(v.search, Some(json!({})));
}

#[test]
fn servers_are_every_server_or_one_to_fifty_join_codes() {
    let servers = |codes: Vec<String>| {
        validate(
            &SavedSearchRequest {
                server_ids: Some(codes),
                ..Default::default()
            },
            false,
        )
        .map(|v| v.servers.unwrap())
    };
    assert_eq!(servers(vec!["*".into()]).unwrap(), ServerCodes::All);
    assert_eq!(
        servers(vec!["b".into(), "a".into(), "b".into()]).unwrap(),
        ServerCodes::Named(vec!["a".into(), "b".into()])
    );
    assert!(servers(vec!["*".into(), "a".into()])
        .unwrap_err()
        .contains("not both"));
    assert!(servers(vec![]).unwrap_err().contains("got 0"));
    let fifty: Vec<String> = (0..50).map(|i| format!("s{i}")).collect();
    assert!(servers(fifty.clone()).is_ok());
    let mut fifty_one = fifty;
    fifty_one.push("s50".into());
    assert!(servers(fifty_one).unwrap_err().contains("1 to 50"));
}

#[test]
fn filters_are_the_querys_and_are_checked_and_kept_without_nulls() {
    let v = validate(
        &req(
            json!({ "search": { "eventType": "admin.*", "minLevel": "warn",
            "data": { "vip": null }, "exclude": { "resources": ["phone"] } } }),
        ),
        false,
    )
    .unwrap();
    assert_eq!(
        v.search.unwrap(),
        json!({ "eventType": "admin.*", "minLevel": "warn",
            "data": { "vip": null }, "exclude": { "resources": ["phone"] } }),
        "a null in data is a value"
    );
    let bad = validate(&req(json!({ "search": { "minLevel": "loud" } })), false).unwrap_err();
    assert!(
        bad.starts_with("`search`: ") && bad.contains("minLevel"),
        "{bad}"
    );
    // no window and no server inside the filters
    for field in ["from", "to", "serverId", "serverIds", "limit", "cursor"] {
        let sent = json!({ "search": { field: "x" } });
        assert!(
            serde_json::from_value::<SavedSearchRequest>(sent).is_err(),
            "{field} is not a filter"
        );
    }
}

#[test]
fn a_change_changes_something() {
    assert!(validate(&req(json!({})), false)
        .unwrap_err()
        .contains("at least one"));
    let rename = validate(&req(json!({ "name": "New" })), false).unwrap();
    assert_eq!(
        rename,
        ValidSaved {
            name: Some("New".into()),
            servers: None,
            search: None
        }
    );
}

#[test]
fn a_saved_search_reads_back_as_its_filters() {
    let s = SavedSearch {
        id: "ss_1".into(),
        org_id: OrgId::new("org_a"),
        name: "Bans".into(),
        servers: SavedServers::All,
        search: json!({ "eventType": "admin.ban" }),
        created_at: Utc::now(),
        updated_at: Utc::now(),
        created_by: "jay".into(),
    };
    let f = s.filters().unwrap();
    assert_eq!(
        f.event_type,
        Some(crate::criteria::TypeMatch::Exact("admin.ban".into()))
    );
}
