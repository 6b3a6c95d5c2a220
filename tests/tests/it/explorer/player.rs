#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `POST /v1/logs/player`: one player across the servers a key may read — identifiers, names,
//! sessions and counts, and one timeline paged by cursor.

use super::*;
use auth_core::ServerScope;

fn day() -> Value {
    json!({ "from": ago(24 * 60), "to": at(Utc::now() + Duration::minutes(5)) })
}

#[tokio::test]
async fn a_player_is_one_timeline_across_servers_with_a_summary() {
    let app = spawn().await;
    app.second_server("other1").await;
    let jay = json!({ "license": "license:abc", "discord": "discord:1" });
    ingest_on(&app, "abc123", "player-batch-1", vec![
        json!({ "level": "info", "event_type": "player.join", "message": "Jay joined", "occurred_at": ago(60),
                "player_id": "12", "player_identifiers": jay, "data": { "playerName": "Jay" } }),
        json!({ "level": "warn", "event_type": "admin.kick", "message": "Jay kicked", "occurred_at": ago(40),
                "player_id": "3", "target_player_id": "12", "target_player_identifiers": { "license": "abc" },
                "data": { "targetName": "Jay R", "playerName": "Admin" } }),
        json!({ "level": "info", "event_type": "player.leave", "message": "Jay left", "occurred_at": ago(39),
                "player_id": "12", "player_identifiers": jay }),
        json!({ "level": "info", "event_type": "chat", "message": "someone else", "occurred_at": ago(30),
                "player_id": "5", "player_identifiers": { "license": "license:zzz" } }),
    ]).await;
    ingest_on(&app, "other1", "player-batch-2", vec![
        json!({ "level": "info", "event_type": "player.join", "message": "Jay on other1", "occurred_at": ago(20),
                "player_id": "44", "player_identifiers": jay }),
    ]).await;

    let body = ok(post(
        &app,
        "/v1/logs/player",
        &with(day(), json!({ "player": "license:abc" })),
    )
    .await)
    .await;
    assert_eq!(body["player"], "license:abc");
    let mut servers: Vec<&str> = body["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    servers.sort_unstable();
    assert_eq!(servers, ["abc123", "other1"]);
    let messages: Vec<&str> = body["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        messages,
        ["Jay on other1", "Jay left", "Jay kicked", "Jay joined"]
    );
    assert_eq!(body["events"][0]["server_id"], "other1");
    let s = &body["summary"];
    assert_eq!(s["examined"], 4);
    assert_eq!(s["sampled"], false);
    assert_eq!(
        s["identifiers"]["license"],
        json!([{ "value": "license:abc", "count": 3 }, { "value": "abc", "count": 1 }])
    );
    assert_eq!(s["identifiers"]["discord"][0]["value"], "discord:1");
    assert_eq!(
        s["names"],
        json!([{ "value": "Jay", "count": 1 }, { "value": "Jay R", "count": 1 }])
    );
    assert_eq!(
        s["eventTypes"][0],
        json!({ "value": "player.join", "count": 2 })
    );
    let sessions = s["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2, "{s}");
    assert_eq!(sessions[0]["serverId"], "other1");
    assert_eq!(sessions[0]["leftAt"], Value::Null);
    assert_eq!(sessions[1]["serverId"], "abc123");
    assert_eq!(sessions[1]["durationSeconds"], 21 * 60);
    assert!(s["firstSeen"].as_str().unwrap() < s["lastSeen"].as_str().unwrap());

    // paged by cursor (the same window): the summary comes with the first page only; a cursor
    // is bound to the player and the servers
    let w = day();
    let first = ok(post(
        &app,
        "/v1/logs/player",
        &with(w.clone(), json!({ "player": "license:abc", "limit": 3 })),
    )
    .await)
    .await;
    assert_eq!(first["events"].as_array().unwrap().len(), 3);
    let cursor = first["pagination"]["nextCursor"]
        .as_str()
        .unwrap()
        .to_owned();
    let next = ok(post(
        &app,
        "/v1/logs/player",
        &with(
            w.clone(),
            json!({ "player": "license:abc", "limit": 3, "cursor": cursor }),
        ),
    )
    .await)
    .await;
    assert_eq!(next["events"][0]["message"], "Jay joined");
    assert_eq!(next["summary"], Value::Null);
    assert_eq!(next["pagination"]["hasMore"], false);
    for changed in [
        json!({ "player": "license:abd" }),
        json!({ "player": "license:abc", "serverIds": ["abc123"] }),
    ] {
        let res = post(
            &app,
            "/v1/logs/player",
            &with(
                w.clone(),
                with(changed, json!({ "limit": 3, "cursor": cursor })),
            ),
        )
        .await;
        expect_error(res, 400, "INVALID_CURSOR").await;
    }

    // one server named; the in-game id finds the same player on that server only
    let one = ok(post(
        &app,
        "/v1/logs/player",
        &with(day(), json!({ "player": "44", "serverIds": ["other1"] })),
    )
    .await)
    .await;
    assert_eq!(one["servers"], json!(["other1"]));
    assert_eq!(one["events"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_player_is_looked_up_only_where_the_key_may_read() {
    let app = spawn().await;
    app.second_server("other1").await;
    ingest_on(&app, "other1", "player-batch-3", vec![json!({ "level": "info", "message": "elsewhere", "occurred_at": ago(5), "player_id": "12" })]).await;
    // a key limited to abc123 looks there only; naming other1 is refused
    let scoped = app
        .key(KeySpec {
            servers: ServerScope::only([app.server.id.clone()]).unwrap(),
            ..KeySpec::perms(&[auth_core::Permission::LogsRead])
        })
        .await;
    let res = app
        .post("/v1/logs/player", &scoped)
        .json(&with(day(), json!({ "player": "12" })))
        .send()
        .await
        .unwrap();
    let body = ok(res).await;
    assert_eq!(body["servers"], json!(["abc123"]));
    assert!(body["events"].as_array().unwrap().is_empty());
    let res = app
        .post("/v1/logs/player", &scoped)
        .json(&with(
            day(),
            json!({ "player": "12", "serverIds": ["other1"] }),
        ))
        .send()
        .await
        .unwrap();
    expect_error(res, 403, "FORBIDDEN").await;
    let res = post(
        &app,
        "/v1/logs/player",
        &with(day(), json!({ "player": "12", "serverIds": ["nope"] })),
    )
    .await;
    expect_error(res, 404, "NOT_FOUND").await;
    for (body, says) in [
        (day(), "`player` is required"),
        (
            with(day(), json!({ "player": "12", "serverIds": [] })),
            "`serverIds` must name 1 to 50 servers",
        ),
        (
            with(day(), json!({ "player": "12", "limit": 101 })),
            "`limit` must be 1 to 100",
        ),
        (
            json!({ "player": "12", "to": ago(0) }),
            "`from` is required",
        ),
    ] {
        expect_error_mentioning(
            post(&app, "/v1/logs/player", &body).await,
            400,
            "INVALID_REQUEST",
            says,
        )
        .await;
    }
    let no_read = app
        .key(KeySpec::perms(&[auth_core::Permission::LogsWrite]))
        .await;
    let res = app
        .post("/v1/logs/player", &no_read)
        .json(&with(day(), json!({ "player": "12" })))
        .send()
        .await
        .unwrap();
    expect_error(res, 403, "FORBIDDEN").await;
}

/// `POST /v1/logs/players`: a name finds every player seen under it, across the servers the key
/// may read, each with the identifier to open them by; another player's name or a target's name
/// does not.
#[tokio::test]
async fn players_are_found_by_name_across_servers() {
    let app = spawn().await;
    app.second_server("other1").await;
    let jay = json!({ "license": "license:abc", "discord": "discord:77" });
    app.ingest_logs(
        "names-batch-1",
        vec![
            json!({ "level": "info", "event_type": "player.join", "message": "Jay joined", "occurred_at": ago(50),
                    "player_id": "12", "player_identifiers": jay, "data": { "playerName": "Jay" } }),
            json!({ "level": "info", "event_type": "player.join", "message": "another Jay joined", "occurred_at": ago(40),
                    "player_id": "30", "player_identifiers": { "license": "license:zzz" }, "data": { "playerName": "jay" } }),
            json!({ "level": "warn", "event_type": "admin.kick", "message": "Jay was kicked", "occurred_at": ago(30),
                    "player_id": "3", "data": { "targetName": "Jay", "playerName": "Admin" } }),
        ],
    )
    .await;
    ingest_on(&app, "other1", "names-batch-2", vec![json!({ "level": "info", "event_type": "player.join", "message": "Jay on other1",
        "occurred_at": ago(10), "player_id": "40", "player_identifiers": { "license": "abc" }, "data": { "player_name": "Jay" } })]).await;
    let page = ok(post(
        &app,
        "/v1/logs/players",
        &with(day(), json!({ "name": "JAY" })),
    )
    .await)
    .await;
    assert_eq!(page["servers"], json!(["abc123", "other1"]));
    assert_eq!(page["sampled"], false);
    let matches = page["matches"].as_array().unwrap();
    assert_eq!(matches.len(), 2, "{page}");
    // both license forms are one player: seen twice, on both servers
    assert_eq!(matches[0]["player"], "license:abc");
    assert_eq!(matches[0]["count"], 2);
    assert_eq!(matches[0]["servers"], json!(["other1", "abc123"]));
    assert_eq!(matches[0]["names"], json!(["Jay"]));
    assert_eq!(matches[1]["player"], "license:zzz");
    assert_eq!(matches[1]["names"], json!(["jay"]));
    // whole names only
    let none = ok(post(
        &app,
        "/v1/logs/players",
        &with(day(), json!({ "name": "Ja" })),
    )
    .await)
    .await;
    assert!(none["matches"].as_array().unwrap().is_empty());
    for (body, says) in [
        (day(), "`name` is required"),
        (
            with(day(), json!({ "name": "x".repeat(65) })),
            "`name` must be 1 to 64 characters",
        ),
        (
            with(day(), json!({ "name": "Jay", "serverIds": [] })),
            "`serverIds` must name 1 to 50 servers",
        ),
    ] {
        expect_error_mentioning(
            post(&app, "/v1/logs/players", &body).await,
            400,
            "INVALID_REQUEST",
            says,
        )
        .await;
    }
}
