#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Search terms past exact equality on the API host: `eventType` prefixes, `player` by any
//! identifier, `dataWhere` and `exclude`, in the query's body and the export's parameters, with
//! refusals that name the field.

use super::*;

async fn seed(app: &TestApp) {
    app.ingest_logs(
        "criteria-1",
        vec![
            json!({ "level": "info", "message": "kick", "event_type": "admin.kick", "occurred_at": ago(50),
                "player_id": "3", "player_identifiers": { "license": "license:aaa", "discord": "111" },
                "target_player_identifiers": { "license": "bbb" }, "resource": "txadmin" }),
            json!({ "level": "info", "message": "ban", "event_type": "admin.ban", "occurred_at": ago(40),
                "player_identifiers": { "license": "license:aaa" }, "resource": "txadmin" }),
            json!({ "level": "info", "message": "big transfer", "event_type": "bank.transfer",
                "occurred_at": ago(30), "resource": "bank", "data": { "amount": 150000, "to": { "account": "ACC-7" } } }),
            json!({ "level": "info", "message": "small transfer", "event_type": "bank.transfer",
                "occurred_at": ago(20), "resource": "bank", "data": { "amount": 500, "to": { "account": "XYZ" } } }),
            json!({ "level": "error", "message": "read ECONNRESET", "event_type": "resource.error",
                "occurred_at": ago(10), "resource": "phone" }),
        ],
    )
    .await;
}

async fn messages(app: &TestApp, extra: Value) -> Vec<String> {
    let body = ok(post(app, "/v1/logs/query", &with(window(), extra)).await).await;
    body["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["message"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn the_query_takes_prefixes_players_data_conditions_and_exclusions() {
    let app = spawn().await;
    seed(&app).await;
    for (extra, want) in [
        (json!({ "eventType": "admin.*" }), vec!["ban", "kick"]),
        (json!({ "eventType": "admin." }), vec!["ban", "kick"]),
        (json!({ "eventType": "admin" }), vec![]),
        (json!({ "player": "license:aaa" }), vec!["ban", "kick"]),
        (json!({ "player": "discord:111" }), vec!["kick"]),
        (json!({ "player": "license:bbb" }), vec!["kick"]),
        (json!({ "player": "3" }), vec!["kick"]),
        (
            json!({ "dataWhere": [{ "path": "amount", "op": ">", "value": 100000 }] }),
            vec!["big transfer"],
        ),
        (
            json!({ "dataWhere": [{ "path": "to.account", "op": "prefix", "value": "XY" }] }),
            vec!["small transfer"],
        ),
        (
            json!({ "exclude": { "eventTypes": ["admin.*"], "resources": ["phone"] } }),
            vec!["small transfer", "big transfer"],
        ),
        (
            json!({ "exclude": { "levels": ["info"] } }),
            vec!["read ECONNRESET"],
        ),
        (
            json!({ "eventType": "bank.*", "exclude": { "data": { "to": { "account": "XYZ" } } } }),
            vec!["big transfer"],
        ),
        (
            json!({ "exclude": { "players": ["license:aaa"], "message": "econnreset" } }),
            vec!["small transfer", "big transfer"],
        ),
    ] {
        assert_eq!(messages(&app, extra.clone()).await, want, "{extra}");
    }
}

#[tokio::test]
async fn a_cursor_is_bound_to_its_exclusions_and_conditions() {
    let app = spawn().await;
    seed(&app).await;
    let first = with(
        window(),
        json!({ "limit": 1, "exclude": { "resources": ["phone"] } }),
    );
    let body = ok(post(&app, "/v1/logs/query", &first).await).await;
    assert_eq!(body["events"][0]["message"], "small transfer");
    let cursor = body["pagination"]["nextCursor"]
        .as_str()
        .unwrap()
        .to_owned();
    let next = ok(post(
        &app,
        "/v1/logs/query",
        &with(first.clone(), json!({ "cursor": cursor })),
    )
    .await)
    .await;
    assert_eq!(next["events"][0]["message"], "big transfer");
    for changed in [
        json!({ "exclude": { "resources": ["bank"] } }),
        json!({ "exclude": { "resources": ["phone"] }, "player": "3" }),
        json!({ "exclude": { "resources": ["phone"] }, "dataWhere": [{ "path": "a", "op": ">", "value": 1 }] }),
    ] {
        let body = with(first.clone(), with(changed, json!({ "cursor": cursor })));
        expect_error(
            post(&app, "/v1/logs/query", &body).await,
            400,
            "INVALID_CURSOR",
        )
        .await;
    }
}

#[tokio::test]
async fn refusals_name_the_field_and_the_limit() {
    let app = spawn().await;
    let long = "x".repeat(257);
    for (extra, says) in [
        (json!({ "eventType": "*" }), "`eventType` takes a type"),
        (json!({ "eventType": "a*b" }), "`eventType` takes a type"),
        (json!({ "player": "" }), "`player` must not be empty"),
        (
            json!({ "player": long }),
            "`player` must be at most 256 characters",
        ),
        (
            json!({ "dataWhere": [] }),
            "`dataWhere` must hold 1 to 8 conditions (got 0)",
        ),
        (
            json!({ "dataWhere": [{ "path": "a", "op": ">", "value": "1" }] }),
            "`dataWhere[0].value` must be a number for `>`",
        ),
        (
            json!({ "dataWhere": [{ "path": "a..b", "op": "<", "value": 1 }] }),
            "`dataWhere[0].path` must be keys separated by single dots",
        ),
        (
            json!({ "dataWhere": [{ "path": "a", "op": "=", "value": 1 }] }),
            "unknown variant `=`",
        ),
        (
            json!({ "exclude": { "levels": ["loud"] } }),
            "`exclude.levels[0]` must be one of",
        ),
        (
            json!({ "level": "warn", "exclude": { "levels": ["warn"] } }),
            "`exclude.levels` leaves out every level",
        ),
        (
            json!({ "exclude": { "resources": vec!["r"; 21] } }),
            "`exclude.resources` may hold at most 20 entries (got 21)",
        ),
        (
            json!({ "exclude": { "colour": "red" } }),
            "unknown field `colour`",
        ),
        (json!({ "exclude": "chat" }), "expected a JSON object"),
    ] {
        let res = post(&app, "/v1/logs/query", &with(window(), extra.clone())).await;
        let body = expect_error_mentioning(res, 400, "INVALID_REQUEST", says).await;
        let message = body["error"]["message"].to_string();
        assert!(
            !message.contains("struct") && !message.contains("DataOp"),
            "{extra}: {body}"
        );
    }
}

#[tokio::test]
async fn the_export_takes_them_as_parameters() {
    let app = spawn().await;
    seed(&app).await;
    let mut url = url::Url::parse(&format!("{}/v1/logs/export", app.cdn)).unwrap();
    url.query_pairs_mut().extend_pairs([
        ("serverId", "abc123".to_owned()),
        ("from", ago(120)),
        ("to", ago(0)),
        ("eventType", "bank.*".to_owned()),
        (
            "dataWhere",
            r#"[{"path":"amount","op":">=","value":500}]"#.to_owned(),
        ),
        (
            "exclude",
            r#"{"resources":["phone"],"message":"small"}"#.to_owned(),
        ),
    ]);
    let res = app
        .client
        .get(url.as_str())
        .bearer_auth(&app.dev_key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let text = res.text().await.unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert_eq!(lines[0]["message"], "big transfer");
    let mut bad_json = url::Url::parse(&format!("{}/v1/logs/export", app.cdn)).unwrap();
    bad_json.query_pairs_mut().extend_pairs([
        ("serverId", "abc123".to_owned()),
        ("from", ago(120)),
        ("to", ago(0)),
        ("exclude", "{resources".to_owned()),
    ]);
    let res = app
        .client
        .get(bad_json.as_str())
        .bearer_auth(&app.dev_key)
        .send()
        .await
        .unwrap();
    expect_error_mentioning(res, 400, "INVALID_REQUEST", "`exclude` must be JSON").await;
}
