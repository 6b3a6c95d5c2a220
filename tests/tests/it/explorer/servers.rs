#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `serverIds`: one search over several servers, or every server the key may read (`["*"]`), in
//! the query (merged newest first, one cursor), counts (added up), facets and patterns.

use super::*;
use auth_core::ServerScope;

fn messages(body: &Value) -> Vec<&str> {
    body["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["message"].as_str().unwrap())
        .collect()
}

async fn two_servers() -> (TestApp, Value) {
    let app = spawn().await;
    app.second_server("other1").await;
    ingest_on(&app, "abc123", "servers-batch-1", vec![
        json!({ "level": "error", "event_type": "resource.error", "message": "a1 ECONNRESET 1", "occurred_at": ago(50) }),
        json!({ "level": "info", "event_type": "chat", "message": "a2", "occurred_at": ago(30) }),
    ]).await;
    ingest_on(&app, "other1", "servers-batch-2", vec![
        json!({ "level": "error", "event_type": "resource.error", "message": "b1 ECONNRESET 2", "occurred_at": ago(40) }),
        json!({ "level": "info", "event_type": "chat", "message": "b2", "occurred_at": ago(20) }),
    ]).await;
    let w = json!({ "from": ago(120), "to": at(Utc::now() + Duration::minutes(10)) });
    (app, w)
}

#[tokio::test]
async fn one_search_reads_several_servers_newest_first_with_one_cursor() {
    let (app, w) = two_servers().await;
    for servers in [
        json!(["abc123", "other1"]),
        json!(["*"]),
        json!(["OTHER1", "abc123", "other1"]),
    ] {
        let body = ok(post(
            &app,
            "/v1/logs/query",
            &with(w.clone(), json!({ "serverIds": servers })),
        )
        .await)
        .await;
        assert_eq!(
            messages(&body),
            ["b2", "a2", "b1 ECONNRESET 2", "a1 ECONNRESET 1"],
            "{servers}"
        );
    }
    // pages of two: one cursor continues both servers; it is bound to the list
    let first = ok(post(
        &app,
        "/v1/logs/query",
        &with(w.clone(), json!({ "serverIds": ["*"], "limit": 2 })),
    )
    .await)
    .await;
    assert_eq!(messages(&first), ["b2", "a2"]);
    let cursor = first["pagination"]["nextCursor"].as_str().unwrap();
    let next = ok(post(
        &app,
        "/v1/logs/query",
        &with(
            w.clone(),
            json!({ "serverIds": ["*"], "limit": 2, "cursor": cursor }),
        ),
    )
    .await)
    .await;
    assert_eq!(messages(&next), ["b1 ECONNRESET 2", "a1 ECONNRESET 1"]);
    assert_eq!(next["pagination"]["hasMore"], false);
    for other in [
        json!({ "serverIds": ["abc123"] }),
        json!({ "serverId": "abc123" }),
    ] {
        let res = post(
            &app,
            "/v1/logs/query",
            &with(
                w.clone(),
                with(other, json!({ "limit": 2, "cursor": cursor })),
            ),
        )
        .await;
        expect_error(res, 400, "INVALID_CURSOR").await;
    }
    // filters apply on every server
    let errors = ok(post(
        &app,
        "/v1/logs/query",
        &with(w.clone(), json!({ "serverIds": ["*"], "level": "error" })),
    )
    .await)
    .await;
    assert_eq!(messages(&errors), ["b1 ECONNRESET 2", "a1 ECONNRESET 1"]);
}

#[tokio::test]
async fn counts_facets_and_patterns_add_up_across_servers() {
    let (app, w) = two_servers().await;
    let all = with(w.clone(), json!({ "serverIds": ["*"] }));
    let counts = ok(post(&app, "/v1/logs/counts", &all).await).await;
    assert_eq!(counts["total"], 4);
    let facets = ok(post(&app, "/v1/logs/facets", &all).await).await;
    assert_eq!(facets["examined"], 4);
    assert_eq!(
        facets["eventTypes"],
        json!([{ "value": "chat", "count": 2 }, { "value": "resource.error", "count": 2 }])
    );
    let patterns = ok(post(&app, "/v1/logs/patterns", &all).await).await;
    assert_eq!(patterns["examined"], 4);
    let errors = patterns["patterns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["template"] == "<*> ECONNRESET <*>")
        .unwrap();
    assert_eq!(errors["count"], 2, "one pattern over both servers");
}

#[tokio::test]
async fn server_lists_are_checked_like_one_server() {
    let (app, w) = two_servers().await;
    for (extra, says) in [
        (
            json!({ "serverIds": [] }),
            "`serverIds` must name 1 to 50 servers",
        ),
        (
            json!({ "serverIds": vec!["abc123"; 51] }),
            "`serverIds` must name 1 to 50 servers",
        ),
        (
            json!({ "serverIds": ["abc123"], "serverId": "abc123" }),
            "`serverId` and `serverIds` are alternatives",
        ),
    ] {
        let res = post(&app, "/v1/logs/query", &with(w.clone(), extra)).await;
        expect_error_mentioning(res, 400, "INVALID_REQUEST", says).await;
    }
    let res = post(
        &app,
        "/v1/logs/query",
        &with(w.clone(), json!({ "serverIds": ["abc123", "nope"] })),
    )
    .await;
    expect_error(res, 404, "NOT_FOUND").await;
    // a key limited to abc123: `*` is abc123; naming other1 is refused
    let scoped = app
        .key(KeySpec {
            servers: ServerScope::only([app.server.id.clone()]).unwrap(),
            ..KeySpec::perms(&[auth_core::Permission::LogsRead])
        })
        .await;
    let res = app
        .post("/v1/logs/query", &scoped)
        .json(&with(w.clone(), json!({ "serverIds": ["*"] })))
        .send()
        .await
        .unwrap();
    let body = ok(res).await;
    assert_eq!(messages(&body), ["a2", "a1 ECONNRESET 1"]);
    let res = app
        .post("/v1/logs/counts", &scoped)
        .json(&with(
            w.clone(),
            json!({ "serverIds": ["abc123", "other1"] }),
        ))
        .send()
        .await
        .unwrap();
    expect_error(res, 403, "FORBIDDEN").await;
}
