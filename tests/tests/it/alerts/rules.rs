//! Rules and destinations: threshold rules fire once per breach and per group, mutes, what
//! cannot be deleted while used, who may change them, and the addresses refused.

use super::*;

/// A threshold rule of `threshold` `resource.error` events in 5 minutes per resource, sending to
/// `hook`.
async fn error_storm(app: &TestApp, hook: &Receiver, threshold: u32) -> String {
    let search = saved_search(app, "Errors", json!({ "eventType": "resource.error" })).await;
    let (dst, _) = destination(app, "Ops", "webhook", &hook.url).await;
    rule(
        app,
        json!({ "name": "Error storm", "savedSearchId": search, "kind": "threshold",
                "threshold": threshold, "windowMinutes": 5, "groupBy": "resource", "destinationIds": [dst] }),
    )
    .await
}

#[tokio::test]
async fn a_threshold_rule_fires_once_per_breach_for_each_group() {
    let app = spawn().await;
    let mut hook = Receiver::start();
    let rule_id = error_storm(&app, &hook, 3).await;
    let err = |r: &str| event("resource.error", r, "ECONNRESET");
    app.ingest_logs(
        "alert-batch-t1",
        vec![err("phone"), err("phone"), err("bank"), err("bank")],
    )
    .await;
    assert!(
        deliveries(&app, Some(&rule_id)).await.is_empty(),
        "2 of 3 in each group"
    );
    app.ingest_logs("alert-batch-t2", vec![err("phone")]).await;
    assert_eq!(
        deliveries(&app, Some(&rule_id)).await.len(),
        1,
        "phone breached"
    );
    app.ingest_logs(
        "alert-batch-t3",
        vec![err("phone"), err("phone"), event("chat", "bank", "x")],
    )
    .await;
    assert_eq!(
        deliveries(&app, Some(&rule_id)).await.len(),
        1,
        "the breach lasts: no second firing (no cool-down)"
    );
    app.ingest_logs("alert-batch-t4", vec![err("bank")]).await;
    assert_eq!(
        deliveries(&app, Some(&rule_id)).await.len(),
        2,
        "bank breached on its own"
    );

    let phone = hook.next().await;
    assert_eq!(
        phone.body["breach"]["group"],
        json!({ "by": "resource", "value": "phone" })
    );
    assert_eq!(phone.body["breach"]["count"], 3);
    assert_eq!(phone.body["breach"]["threshold"], 3);
    assert_eq!(phone.body["breach"]["windowMinutes"], 5);
    let bank = hook.next().await;
    assert_eq!(bank.body["breach"]["group"]["value"], "bank");
}

/// A group that stays over its threshold with nothing to send is decided without taking its
/// row: while another transaction holds that row, a batch that keeps the breach is still
/// committed (taking it would wait for the holder, and the batch would fail on the commit's
/// lock timeout).
#[tokio::test]
async fn a_lasting_breach_does_not_make_commits_wait_on_each_other() {
    use diesel_async::SimpleAsyncConnection;
    let app = spawn().await;
    let mut hook = Receiver::start();
    let rule_id = error_storm(&app, &hook, 2).await;
    let err = |r: &str| event("resource.error", r, "ECONNRESET");
    app.ingest_logs("alert-batch-l1", vec![err("phone"), err("phone")])
        .await;
    assert_eq!(hook.next().await.body["breach"]["group"]["value"], "phone");

    let mut holder = app.db.conn().await.unwrap();
    holder
        .batch_execute("BEGIN; SELECT * FROM alert_groups FOR UPDATE")
        .await
        .unwrap();
    // phone stays breached: nothing to decide, nothing waited for
    app.ingest_logs("alert-batch-l2", vec![err("phone")]).await;
    app.ingest_logs("alert-batch-l3", vec![err("phone"), err("phone")])
        .await;
    holder.batch_execute("COMMIT").await.unwrap();
    assert_eq!(
        deliveries(&app, Some(&rule_id)).await.len(),
        1,
        "one firing for the lasting breach"
    );
    app.ingest_logs("alert-batch-l4", vec![err("bank"), err("bank")])
        .await;
    assert_eq!(hook.next().await.body["breach"]["group"]["value"], "bank");
    assert!(hook.drain().is_empty());
}

#[tokio::test]
async fn a_muted_rule_sends_nothing_until_unmuted() {
    let app = spawn().await;
    let mut hook = Receiver::start();
    let search = saved_search(&app, "Kicks", json!({ "eventType": "admin.kick" })).await;
    let (dst, _) = destination(&app, "Ops", "webhook", &hook.url).await;
    let until = (Utc::now() + Duration::hours(1)).to_rfc3339();
    let rule_id = rule(
        &app,
        json!({ "name": "Kicks", "savedSearchId": search, "kind": "every",
                "destinationIds": [dst], "mutedUntil": until }),
    )
    .await;
    app.ingest_logs(
        "alert-batch-m1",
        vec![event("admin.kick", "txadmin", "muted")],
    )
    .await;
    assert!(deliveries(&app, Some(&rule_id)).await.is_empty());
    let res = app
        .patch(&format!("/v1/logs/alert-rules/{rule_id}"), &app.dev_key)
        .json(&json!({ "mutedUntil": null }))
        .send()
        .await
        .unwrap();
    let body = created(res).await;
    assert_eq!(body["alertRule"]["mutedUntil"], Value::Null);
    app.ingest_logs(
        "alert-batch-m2",
        vec![event("admin.kick", "txadmin", "heard")],
    )
    .await;
    assert_eq!(deliveries(&app, Some(&rule_id)).await.len(), 1);
    assert_eq!(hook.next().await.body["events"][0]["message"], "heard");
}

#[tokio::test]
async fn what_a_rule_uses_cannot_be_deleted_and_changes_take_logs_alerts() {
    let app = spawn().await;
    let hook = Receiver::start();
    let search = saved_search(&app, "Bans", json!({ "eventType": "admin.ban" })).await;
    let (dst, _) = destination(&app, "Staff", "webhook", &hook.url).await;
    let rule_id = rule(
        &app,
        json!({ "name": "Bans to staff", "savedSearchId": search, "kind": "every", "destinationIds": [dst] }),
    )
    .await;
    let res = app
        .delete(&format!("/v1/logs/saved-searches/{search}"), &app.dev_key)
        .send()
        .await
        .unwrap();
    expect_error_mentioning(res, 409, "CONFLICT", "`Bans to staff`").await;
    let res = app
        .delete(&format!("/v1/logs/destinations/{dst}"), &app.dev_key)
        .send()
        .await
        .unwrap();
    expect_error_mentioning(res, 409, "CONFLICT", "`Bans to staff`").await;

    // a key that reads logs lists, but changes nothing without logs:alerts
    let reader = app.key(KeySpec::perms(&[Permission::LogsRead])).await;
    let listed = app.get_json("/v1/logs/alert-rules", &reader).await;
    assert_eq!(listed["alertRules"][0]["id"], rule_id.as_str());
    let res = app
        .post("/v1/logs/destinations", &reader)
        .json(&json!({ "name": "x", "kind": "webhook", "url": hook.url }))
        .send()
        .await
        .unwrap();
    expect_error_mentioning(res, 403, "FORBIDDEN", "logs:alerts").await;
    let res = app
        .delete(&format!("/v1/logs/alert-rules/{rule_id}"), &reader)
        .send()
        .await
        .unwrap();
    expect_error(res, 403, "FORBIDDEN").await;

    // refusals name the field
    let res = app
        .post("/v1/logs/alert-rules", &app.dev_key)
        .json(
            &json!({ "name": "T", "savedSearchId": search, "kind": "threshold",
                       "threshold": 0, "windowMinutes": 5, "destinationIds": [dst] }),
        )
        .send()
        .await
        .unwrap();
    expect_error_mentioning(res, 400, "INVALID_REQUEST", "`threshold`").await;
    let res = app
        .post("/v1/logs/alert-rules", &app.dev_key)
        .json(
            &json!({ "name": "T", "savedSearchId": search, "kind": "every",
                       "destinationIds": ["dst_nope"] }),
        )
        .send()
        .await
        .unwrap();
    expect_error_mentioning(res, 404, "NOT_FOUND", "dst_nope").await;

    // once the rule is gone, both can go
    let res = app
        .delete(&format!("/v1/logs/alert-rules/{rule_id}"), &app.dev_key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    for path in [
        format!("/v1/logs/destinations/{dst}"),
        format!("/v1/logs/saved-searches/{search}"),
    ] {
        let res = app.delete(&path, &app.dev_key).send().await.unwrap();
        assert_eq!(res.status(), 200, "{path}");
    }
}

/// A saved search deleted while a rule on it is being made: the rule waits for the delete and
/// is refused in the API's words (404 naming `savedSearchId`), never with the database's
/// foreign-key message.
#[tokio::test]
async fn a_rule_made_while_its_saved_search_is_deleted_is_refused_in_api_words() {
    use diesel_async::SimpleAsyncConnection;
    let app = spawn().await;
    let hook = Receiver::start();
    let search = saved_search(&app, "Bans", json!({ "eventType": "admin.ban" })).await;
    let (dst, _) = destination(&app, "Hook", "webhook", &hook.url).await;
    // a delete in progress holds the saved search's row, as `DELETE …/saved-searches/{id}` does
    let mut deleting = app.db.conn().await.unwrap();
    deleting
        .batch_execute(&format!(
            "BEGIN; SELECT id FROM saved_searches WHERE id = '{search}' FOR UPDATE"
        ))
        .await
        .unwrap();
    let create = tokio::spawn(
        app.post("/v1/logs/alert-rules", &app.dev_key)
            .json(&json!({ "name": "Bans", "savedSearchId": search, "kind": "every", "destinationIds": [dst] }))
            .send(),
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while app
        .count(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() \
             AND wait_event_type = 'Lock'",
        )
        .await
        == 0
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the create never waited"
        );
        tokio::task::yield_now().await;
    }
    deleting
        .batch_execute(&format!(
            "DELETE FROM saved_searches WHERE id = '{search}'; COMMIT"
        ))
        .await
        .unwrap();
    let res = create.await.unwrap().unwrap();
    let body = expect_error_mentioning(res, 404, "NOT_FOUND", "`savedSearchId`").await;
    assert!(!body.to_string().contains("foreign key"), "{body}");
    assert!(
        app.get_json("/v1/logs/alert-rules", &app.dev_key).await["alertRules"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn addresses_that_reach_inside_are_refused() {
    // the operator's default: https and public addresses only
    let app = spawn_with(Options {
        tweak: |c| c.alerts_allow_insecure = false,
        ..Options::default()
    })
    .await;
    let refused = |kind: &'static str, url: &'static str, says: &'static str| {
        let app = &app;
        async move {
            let res = app
                .post("/v1/logs/destinations", &app.dev_key)
                .json(&json!({ "name": "x", "kind": kind, "url": url }))
                .send()
                .await
                .unwrap();
            expect_error_mentioning(res, 400, "INVALID_REQUEST", says).await;
        }
    };
    refused("webhook", "http://hooks.example.com/in", "https").await;
    refused("webhook", "https://127.0.0.1/in", "127.0.0.1").await;
    refused("webhook", "https://10.1.2.3/in", "10.1.2.3").await;
    refused(
        "webhook",
        "https://169.254.169.254/latest/meta-data",
        "169.254.169.254",
    )
    .await;
    refused("webhook", "https://[::1]/in", "::1").await;
    // a name that resolves to loopback
    refused("webhook", "https://localhost/in", "resolves to").await;
    refused(
        "discord",
        "https://hooks.example.com/api/webhooks/1/t",
        "discord.com",
    )
    .await;
    refused("chat", "https://hooks.example.com/", "`kind`").await;
}

#[tokio::test]
async fn batches_committed_at_once_fire_a_breach_once() {
    let app = spawn().await;
    let hook = Receiver::start();
    let search = saved_search(&app, "Deaths", json!({ "eventType": "player.death" })).await;
    let (dst, _) = destination(&app, "Ops", "webhook", &hook.url).await;
    let rule_id = rule(
        &app,
        json!({ "name": "Death storm", "savedSearchId": search, "kind": "threshold",
                "threshold": 5, "windowMinutes": 10, "destinationIds": [dst] }),
    )
    .await;
    // 24 batches of one event each, 8 at a time: the writers commit several at once
    for round in 0..3 {
        let ids: Vec<String> = (0..8)
            .map(|i| format!("alert-batch-race-{round}-{i}"))
            .collect();
        futures::future::join_all(ids.iter().map(|id| {
            app.ingest_logs_at(
                &app.logs,
                id,
                vec![event("player.death", "baseevents", "died")],
            )
        }))
        .await;
    }
    assert_eq!(
        deliveries(&app, Some(&rule_id)).await.len(),
        1,
        "one breach, one firing"
    );
}

#[tokio::test]
async fn ids_holding_nul_are_refused_not_failed() {
    let app = spawn().await;
    let k = &app.dev_key;
    for (method, path) in [
        ("PATCH", "/v1/logs/alert-rules/a%00b"),
        ("DELETE", "/v1/logs/alert-rules/a%00b"),
        ("PATCH", "/v1/logs/destinations/a%00b"),
        ("DELETE", "/v1/logs/destinations/a%00b"),
        ("POST", "/v1/logs/destinations/a%00b/test"),
        ("POST", "/v1/logs/alert-deliveries/a%00b/send-again"),
        ("GET", "/v1/logs/alert-deliveries?ruleId=a%00b"),
        ("DELETE", "/v1/logs/saved-searches/a%00b"),
    ] {
        let req = match method {
            "PATCH" => app.patch(path, k).json(&json!({ "name": "x" })),
            "DELETE" => app.delete(path, k),
            "POST" => app.post(path, k),
            _ => app.get(path, k),
        };
        let res = req.send().await.unwrap();
        let status = res.status().as_u16();
        assert!(
            status == 400 || status == 404,
            "{method} {path}: {status} {:?}",
            res.text().await
        );
    }
    let res = app
        .post("/v1/logs/alert-rules", k)
        .json(&json!({ "name": "T", "savedSearchId": "ss\u{0}", "kind": "every", "destinationIds": ["d\u{0}"] }))
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    assert!(
        status == 400 || status == 404,
        "{status} {:?}",
        res.text().await
    );
}
