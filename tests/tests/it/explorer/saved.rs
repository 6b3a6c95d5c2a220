#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `/v1/logs/saved-searches`: named searches of an organization, saved, listed, changed, deleted,
//! each change in the audit log, and seen only by keys that read all their servers.

use super::*;
use auth_core::audit::{Action, AuditQuery};
use auth_core::ServerScope;

const ROUTE: &str = "/v1/logs/saved-searches";

async fn status_and_body(res: reqwest::Response) -> (u16, Value) {
    let status = res.status().as_u16();
    (status, res.json().await.unwrap())
}

fn names(list: &Value) -> Vec<&str> {
    list["savedSearches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn saved_searches_are_saved_listed_renamed_and_deleted_with_an_audit_entry_each() {
    let app = spawn().await;
    let res = post(
        &app,
        ROUTE,
        &json!({ "name": "  Bans  ", "serverIds": ["ABC123"],
                 "search": { "eventType": "admin.*", "minLevel": "warn",
                             "exclude": { "resources": ["phone"] } } }),
    )
    .await;
    let (status, body) = status_and_body(res).await;
    assert_eq!(status, 201, "{body}");
    let bans = &body["savedSearch"];
    let id = bans["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("ss_"), "{id}");
    assert_eq!(bans["name"], "Bans", "trimmed");
    assert_eq!(
        bans["serverIds"],
        json!(["abc123"]),
        "the join code as registered"
    );
    assert_eq!(
        bans["search"],
        json!({ "eventType": "admin.*", "minLevel": "warn", "exclude": { "resources": ["phone"] } }),
        "the filters as sent, nothing added"
    );
    assert_eq!(bans["createdAt"], bans["updatedAt"]);

    // the same name in another case is taken; every server by default
    let res = post(&app, ROUTE, &json!({ "name": "bans" })).await;
    expect_error_mentioning(res, 409, "CONFLICT", "named `bans`").await;
    let res = post(&app, ROUTE, &json!({ "name": "Everything" })).await;
    let (status, body) = status_and_body(res).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["savedSearch"]["serverIds"], json!(["*"]));
    assert_eq!(body["savedSearch"]["search"], json!({}));
    let every = body["savedSearch"]["id"].as_str().unwrap().to_owned();

    let list = ok(app.get(ROUTE, &app.dev_key).send().await.unwrap()).await;
    assert_eq!(names(&list), ["Bans", "Everything"]);

    // rename and change the filters; fields not sent stay
    let res = app
        .patch(&format!("{ROUTE}/{id}"), &app.dev_key)
        .json(&json!({ "name": "Kicks and bans", "search": { "eventType": "admin.kick" } }))
        .send()
        .await
        .unwrap();
    let changed = ok(res).await;
    let s = &changed["savedSearch"];
    assert_eq!(s["name"], "Kicks and bans");
    assert_eq!(s["serverIds"], json!(["abc123"]));
    assert_eq!(s["search"], json!({ "eventType": "admin.kick" }));
    assert_ne!(s["updatedAt"], s["createdAt"]);
    // onto another's name: refused, nothing changed
    let res = app
        .patch(&format!("{ROUTE}/{id}"), &app.dev_key)
        .json(&json!({ "name": "EVERYTHING" }))
        .send()
        .await
        .unwrap();
    expect_error(res, 409, "CONFLICT").await;

    let res = app
        .delete(&format!("{ROUTE}/{every}"), &app.dev_key)
        .send()
        .await
        .unwrap();
    assert_eq!(ok(res).await["deleted"], every.as_str());
    let res = app
        .delete(&format!("{ROUTE}/{every}"), &app.dev_key)
        .send()
        .await
        .unwrap();
    expect_error(res, 404, "NOT_FOUND").await;
    let list = ok(app.get(ROUTE, &app.dev_key).send().await.unwrap()).await;
    assert_eq!(names(&list), ["Kicks and bans"]);

    let query = AuditQuery {
        actions: vec![
            Action::SavedSearchCreate,
            Action::SavedSearchChange,
            Action::SavedSearchDelete,
        ],
        limit: 50,
        ..Default::default()
    };
    let mut entries = app
        .cdn_state
        .stores
        .audit
        .page(&app.org.id, &query)
        .await
        .unwrap();
    entries.reverse();
    let seen: Vec<(&str, &str)> = entries
        .iter()
        .map(|e| (e.entry.action.as_str(), e.entry.target.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            ("saved_search.create", id.as_str()),
            ("saved_search.create", every.as_str()),
            ("saved_search.change", id.as_str()),
            ("saved_search.delete", every.as_str()),
        ]
    );
    assert_eq!(entries[2].entry.details["previousName"], "Bans");
}

#[tokio::test]
async fn refusals_name_the_field_and_the_limit() {
    let app = spawn().await;
    for (body, says) in [
        (json!({}), "`name` is required"),
        (
            json!({ "name": "x".repeat(101) }),
            "1 to 100 characters (got 101)",
        ),
        (json!({ "name": "a\nb" }), "control characters"),
        (json!({ "name": "a", "serverIds": [] }), "1 to 50 servers"),
        (
            json!({ "name": "a", "serverIds": ["*", "abc123"] }),
            "not both",
        ),
        (
            json!({ "name": "a", "search": { "minLevel": "loud" } }),
            "`search`: ",
        ),
        (
            json!({ "name": "a", "search": { "from": "2026-01-01T00:00:00Z" } }),
            "from",
        ),
        (
            json!({ "name": "a", "search": { "eventType": "*" } }),
            "eventType",
        ),
    ] {
        let res = post(&app, ROUTE, &body).await;
        expect_error_mentioning(res, 400, "INVALID_REQUEST", says).await;
    }
    let res = post(&app, ROUTE, &json!({ "name": "a", "serverIds": ["nope"] })).await;
    expect_error(res, 404, "NOT_FOUND").await;
    let res = app
        .patch(&format!("{ROUTE}/ss_nope"), &app.dev_key)
        .json(&json!({ "name": "b" }))
        .send()
        .await
        .unwrap();
    expect_error(res, 404, "NOT_FOUND").await;
    let made = ok_created(post(&app, ROUTE, &json!({ "name": "a" })).await).await;
    let res = app
        .patch(
            &format!("{ROUTE}/{}", made["savedSearch"]["id"].as_str().unwrap()),
            &app.dev_key,
        )
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    expect_error_mentioning(res, 400, "INVALID_REQUEST", "at least one").await;
    // a key without logs:read
    let writer = app
        .key(KeySpec::perms(&[auth_core::Permission::CdnRead]))
        .await;
    let res = app.get(ROUTE, &writer).send().await.unwrap();
    expect_error(res, 403, "FORBIDDEN").await;
}

async fn ok_created(res: reqwest::Response) -> Value {
    let (status, body) = status_and_body(res).await;
    assert_eq!(status, 201, "{body}");
    body
}

#[tokio::test]
async fn a_key_sees_only_the_saved_searches_of_servers_it_reads() {
    let app = spawn().await;
    app.second_server("other1").await;
    let other = ok_created(
        post(
            &app,
            ROUTE,
            &json!({ "name": "Other", "serverIds": ["other1"] }),
        )
        .await,
    )
    .await;
    let other_id = other["savedSearch"]["id"].as_str().unwrap().to_owned();
    ok_created(
        post(
            &app,
            ROUTE,
            &json!({ "name": "Mine", "serverIds": ["abc123"] }),
        )
        .await,
    )
    .await;
    ok_created(post(&app, ROUTE, &json!({ "name": "All" })).await).await;
    let scoped = app
        .key(KeySpec {
            servers: ServerScope::only([app.server.id.clone()]).unwrap(),
            ..KeySpec::perms(&[auth_core::Permission::LogsRead])
        })
        .await;
    let list = ok(app.get(ROUTE, &scoped).send().await.unwrap()).await;
    assert_eq!(names(&list), ["All", "Mine"]);
    // another server's saved search does not exist for it, and it may not name that server
    let res = app
        .delete(&format!("{ROUTE}/{other_id}"), &scoped)
        .send()
        .await
        .unwrap();
    expect_error(res, 404, "NOT_FOUND").await;
    let res = app
        .post(ROUTE, &scoped)
        .json(&json!({ "name": "Sneaky", "serverIds": ["other1"] }))
        .send()
        .await
        .unwrap();
    expect_error(res, 403, "FORBIDDEN").await;
    // the full key still has it
    let list = ok(app.get(ROUTE, &app.dev_key).send().await.unwrap()).await;
    assert_eq!(names(&list), ["All", "Mine", "Other"]);
}
