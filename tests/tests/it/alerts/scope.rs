//! What an alert may send and to whom (issue 58): a rule sends only what its maker may read —
//! now, and after their scope shrinks — and a destination that other people's rules use cannot
//! be re-pointed by someone who cannot read what those rules watch.

use super::*;
use auth_core::{AccountStore, PermissionSet, ServerScope};

/// A developer key reading logs and making alerts on `servers` only; its secret and id.
async fn alerts_key(app: &TestApp, servers: ServerScope) -> (String, auth_core::KeyId) {
    let perms: PermissionSet = [Permission::LogsRead, Permission::LogsAlerts]
        .into_iter()
        .collect();
    let secret = app
        .key(KeySpec {
            servers,
            ..KeySpec::developer(perms)
        })
        .await;
    let me = app.get_json("/v1/whoami", &secret).await;
    let id = auth_core::KeyId::new(me["keyId"].as_str().unwrap());
    (secret, id)
}

#[tokio::test]
async fn a_rule_sends_only_what_its_maker_reads_now() {
    let app = spawn().await;
    let other = app.second_server("srvb").await;
    let mut hook = Receiver::start();
    let (scoped, scoped_id) =
        alerts_key(&app, ServerScope::Only(vec![app.server.id.clone()])).await;
    // a saved search of every server (the default) and a rule on it, both by the scoped key
    let search = made_by(
        &app,
        &scoped,
        "/v1/logs/saved-searches",
        json!({ "name": "Bans", "search": { "eventType": "admin.ban" } }),
        "/savedSearch/id",
    )
    .await;
    let dst = made_by(
        &app,
        &scoped,
        "/v1/logs/destinations",
        json!({ "name": "Mine", "kind": "webhook", "url": hook.url }),
        "/destination/id",
    )
    .await;
    let rule_id = made_by(
        &app,
        &scoped,
        "/v1/logs/alert-rules",
        json!({ "name": "Bans", "savedSearchId": search, "kind": "every", "destinationIds": [dst] }),
        "/alertRule/id",
    )
    .await;
    // the scoped key may not read the other server directly…
    let direct = app
        .post("/v1/logs/query", &scoped)
        .json(&json!({ "serverId": "srvb", "from": ago(600), "to": ago(-60) }))
        .send()
        .await
        .unwrap();
    assert_eq!(direct.status(), 403);
    // …nor through its rule
    app.ingest_logs_on(
        &other.cfx_id,
        "scope-batch-b1",
        vec![event("admin.ban", "txadmin", "on b")],
    )
    .await;
    app.ingest_logs(
        "scope-batch-a1",
        vec![event("admin.ban", "txadmin", "on a")],
    )
    .await;
    let got = hook.next().await;
    assert_eq!(got.body["events"][0]["message"], "on a", "{}", got.body);
    assert_eq!(got.body["events"].as_array().unwrap().len(), 1);
    assert_eq!(
        deliveries(&app, Some(&rule_id)).await.len(),
        1,
        "the other server's ban made no firing"
    );

    // its maker's key disabled: the rule sends nothing from the next commit on
    app.accounts
        .disable_key(
            &scoped_id,
            Utc::now(),
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    app.ingest_logs(
        "scope-batch-a2",
        vec![event("admin.ban", "txadmin", "after")],
    )
    .await;
    assert_eq!(deliveries(&app, Some(&rule_id)).await.len(), 1);
    // saved again by a key that reads every server, it watches both
    let res = app
        .patch(&format!("/v1/logs/alert-rules/{rule_id}"), &app.dev_key)
        .json(&json!({ "name": "Bans" }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200, "{:?}", res.text().await);
    app.ingest_logs_on(
        &other.cfx_id,
        "scope-batch-b2",
        vec![event("admin.ban", "txadmin", "b again")],
    )
    .await;
    assert_eq!(hook.next().await.body["events"][0]["message"], "b again");
    assert!(hook.drain().is_empty());
}

#[tokio::test]
async fn a_shared_destination_is_re_pointed_only_by_who_reads_what_it_receives() {
    let app = spawn().await;
    app.second_server("srvb").await;
    let hook = Receiver::start();
    let attacker = Receiver::start();
    // the owner's organization-wide rule sends every ban to "Ops"
    let search = saved_search(&app, "All bans", json!({ "eventType": "admin.ban" })).await;
    let (ops, _) = destination(&app, "Ops", "webhook", &hook.url).await;
    let owners_rule = rule(
        &app,
        json!({ "name": "Bans", "savedSearchId": search, "kind": "every", "destinationIds": [ops] }),
    )
    .await;
    app.ingest_logs("share-batch-1", vec![event("admin.ban", "txadmin", "x")])
        .await;
    assert_eq!(deliveries(&app, None).await.len(), 1);

    let (scoped, _) = alerts_key(&app, ServerScope::Only(vec![app.server.id.clone()])).await;
    let patch = |key: &str, body: Value| {
        app.patch(&format!("/v1/logs/destinations/{ops}"), key)
            .json(&body)
            .send()
    };
    let refused = patch(&scoped, json!({ "url": attacker.url }))
        .await
        .unwrap();
    let body = expect_error(refused, 403, "FORBIDDEN").await;
    assert!(
        body["error"]["message"].as_str().unwrap().contains("`url`"),
        "{body}"
    );
    let renamed = patch(&scoped, json!({ "name": "Ops room" })).await.unwrap();
    assert_eq!(renamed.status(), 200, "renaming is fine");
    // a rule on a search of the other server: its deliveries are not in the scoped key's log
    let on_b = made_by(
        &app,
        &app.dev_key,
        "/v1/logs/saved-searches",
        json!({ "name": "B bans", "serverIds": ["srvb"], "search": { "eventType": "admin.ban" } }),
        "/savedSearch/id",
    )
    .await;
    let b_rule = rule(
        &app,
        json!({ "name": "B bans", "savedSearchId": on_b, "kind": "every", "destinationIds": [ops] }),
    )
    .await;
    app.ingest_logs_on(
        "srvb",
        "share-batch-2",
        vec![event("admin.ban", "txadmin", "b")],
    )
    .await;
    let all = deliveries(&app, None).await;
    assert_eq!(all.len(), 3, "the owner sees both rules' deliveries");
    let seen = app.get_json("/v1/logs/alert-deliveries", &scoped).await;
    let seen = seen["deliveries"].as_array().unwrap();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(
        seen.iter().all(|d| d["ruleId"] == owners_rule.as_str()),
        "{seen:?}"
    );
    let hidden = app
        .get(
            &format!("/v1/logs/alert-deliveries?ruleId={b_rule}"),
            &scoped,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(hidden.status(), 404);
    // nor may it send one of them again: as unknown, not "pending"
    let b_delivery = all
        .iter()
        .find(|d| d["ruleId"] == b_rule.as_str())
        .and_then(|d| d["id"].as_str())
        .unwrap();
    let again = app
        .post(
            &format!("/v1/logs/alert-deliveries/{b_delivery}/send-again"),
            &scoped,
        )
        .send()
        .await
        .unwrap();
    expect_error(again, 404, "NOT_FOUND").await;
    // a key of every server may re-point it
    let moved = patch(&app.dev_key, json!({ "url": attacker.url }))
        .await
        .unwrap();
    assert_eq!(moved.status(), 200);
}

/// Another organization's destination id is unknown here: deleting it says 404, never 409 with
/// the other organization's rule names.
#[tokio::test]
async fn another_organizations_destination_is_not_found() {
    let app = spawn().await;
    let hook = Receiver::start();
    let search = saved_search(&app, "Bans", json!({ "eventType": "admin.ban" })).await;
    let (ops, _) = destination(&app, "Ops", "webhook", &hook.url).await;
    rule(
        &app,
        json!({ "name": "Secret rule name", "savedSearchId": search, "kind": "every",
                "destinationIds": [ops] }),
    )
    .await;
    let org2 = app
        .accounts
        .create_org("Other", "other", "pro")
        .await
        .unwrap();
    let theirs = app
        .key(KeySpec {
            org: Some(org2.id.clone()),
            ..KeySpec::developer(PermissionSet::all())
        })
        .await;
    let res = app
        .delete(&format!("/v1/logs/destinations/{ops}"), &theirs)
        .send()
        .await
        .unwrap();
    let body = expect_error(res, 404, "NOT_FOUND").await;
    assert!(!body.to_string().contains("Secret rule name"), "{body}");
}
