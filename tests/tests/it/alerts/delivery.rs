//! Deliveries: written with the batch that fired them, signed, retried with the same id, in
//! order, following Discord's rate limits; sent again on request; test messages.

use super::*;

#[tokio::test]
async fn an_every_match_rule_sends_the_matching_events_signed_once_per_webhook_id() {
    let app = spawn().await;
    let mut hook = Receiver::start();
    let search = saved_search(&app, "Admin actions", json!({ "eventType": "admin." })).await;
    let (dst, secret) = destination(&app, "SIEM", "webhook", &hook.url).await;
    let secret = secret.expect("a generic webhook's secret, shown once");
    assert!(secret.starts_with("whsec_"));
    let rule_id = rule(
        &app,
        json!({ "name": "Admin log", "savedSearchId": search, "kind": "every", "destinationIds": [dst] }),
    )
    .await;
    app.ingest_logs(
        "alert-batch-b1",
        vec![
            event("admin.kick", "txadmin", "kicked 7"),
            event("chat", "chat", "hello"),
            event("admin.ban", "txadmin", "banned 7"),
        ],
    )
    .await;
    // written with the batch: pending (or sent already) as soon as the 202 came
    let log = deliveries(&app, Some(&rule_id)).await;
    assert_eq!(log.len(), 1, "{log:?}");

    let got = hook.next().await;
    let wh = standardwebhooks::Webhook::new(&secret).unwrap();
    wh.verify(&got.raw, &got.http_headers())
        .expect("signed the Standard Webhooks way");
    assert_eq!(
        got.header("webhook-id"),
        got.body["deliveryId"].as_str().unwrap()
    );
    assert_eq!(got.body["type"], "alert.fired");
    assert_eq!(got.body["rule"]["name"], "Admin log");
    let types: Vec<&str> = got.body["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        ["admin.kick", "admin.ban"],
        "the matching events, in order"
    );
    assert_eq!(got.body["matched"], 2);

    // the log says delivered, once; the list never shows the address's path or the secret
    let log = loop {
        let log = deliveries(&app, Some(&rule_id)).await;
        if log[0]["status"] != "pending" {
            break log;
        }
        tokio::task::yield_now().await;
    };
    assert_eq!(log[0]["status"], "delivered");
    assert_eq!(log[0]["attempts"], 1);
    assert_eq!(log[0]["lastCode"], 204);
    let listed = app.get_json("/v1/logs/destinations", &app.dev_key).await;
    let text = listed.to_string();
    assert!(
        !text.contains("/hook") && !text.contains("whsec_"),
        "{text}"
    );
    let rules = app.get_json("/v1/logs/alert-rules", &app.dev_key).await;
    assert!(rules["alertRules"][0]["lastFiredAt"].is_string(), "{rules}");
    assert!(hook.drain().is_empty(), "sent once");
}

#[tokio::test]
async fn a_failed_delivery_is_retried_with_the_same_id_and_the_next_waits_its_turn() {
    let app = spawn().await;
    let mut hook = Receiver::start();
    hook.script([Reply::Status(500)]);
    let search = saved_search(&app, "Errors", json!({ "eventType": "resource.error" })).await;
    let (dst, _) = destination(&app, "Ops", "webhook", &hook.url).await;
    rule(
        &app,
        json!({ "name": "Errors", "savedSearchId": search, "kind": "every", "destinationIds": [dst] }),
    )
    .await;
    app.ingest_logs(
        "alert-batch-first",
        vec![event("resource.error", "phone", "one")],
    )
    .await;
    app.ingest_logs(
        "alert-batch-second",
        vec![event("resource.error", "phone", "two")],
    )
    .await;
    let a = hook.next().await;
    assert!(matches!(a.reply, Reply::Status(500)));
    assert_eq!(a.body["events"][0]["message"], "one");
    let again = hook.next().await;
    assert_eq!(
        again.header("webhook-id"),
        a.header("webhook-id"),
        "the same id on a retry"
    );
    assert_eq!(
        again.body["events"][0]["message"], "one",
        "in order: the first again before the second"
    );
    let b = hook.next().await;
    assert_eq!(b.body["events"][0]["message"], "two");
    assert_ne!(b.header("webhook-id"), a.header("webhook-id"));
    let log = deliveries(&app, None).await;
    let first = log
        .iter()
        .find(|d| d["id"] == a.header("webhook-id"))
        .unwrap();
    assert_eq!(first["attempts"], 2);
}

#[tokio::test]
async fn discord_gets_embeds_and_its_rate_limits_are_followed() {
    let app = spawn().await;
    let mut discord = Receiver::start();
    // a 429 for the first message, then an emptied bucket after the second
    discord.script([
        Reply::Limited {
            retry_after: 0.4,
            global: false,
        },
        Reply::Drained(1.0),
    ]);
    let search = saved_search(&app, "Bans", json!({ "eventType": "admin.ban" })).await;
    let (dst, secret) = destination(&app, "Staff channel", "discord", &discord.url).await;
    assert_eq!(secret, None, "Discord destinations have no signing secret");
    rule(
        &app,
        json!({ "name": "Bans", "savedSearchId": search, "kind": "every", "destinationIds": [dst] }),
    )
    .await;
    app.ingest_logs(
        "alert-batch-ban-1",
        vec![event("admin.ban", "txadmin", "<@&123> banned @everyone")],
    )
    .await;
    let limited = discord.next().await;
    let retried = discord.next().await;
    assert!(
        retried.at - limited.at >= std::time::Duration::from_millis(400),
        "waited retry_after: {:?}",
        retried.at - limited.at
    );
    assert_eq!(retried.body, limited.body, "the same message again");
    let m = &retried.body;
    assert_eq!(
        m["allowed_mentions"],
        json!({ "parse": [] }),
        "an event cannot ping"
    );
    assert_eq!(m["embeds"][0]["title"], "[warn] admin.ban");
    assert_eq!(m["embeds"][0]["description"], "<@&123> banned @everyone");
    assert!(m["embeds"][0]["url"]
        .as_str()
        .unwrap()
        .starts_with("http://console.test/logs?"));
    // the bucket is empty after it: the next message waits for its reset
    app.ingest_logs(
        "alert-batch-ban-2",
        vec![event("admin.ban", "txadmin", "again")],
    )
    .await;
    let next = discord.next().await;
    assert!(
        next.at - retried.at >= std::time::Duration::from_millis(1000),
        "waited the bucket's reset: {:?}",
        next.at - retried.at
    );
    assert_eq!(next.body["embeds"][0]["description"], "again");
}

#[tokio::test]
async fn a_test_message_and_send_again_reach_the_receiver() {
    let app = spawn().await;
    let mut hook = Receiver::start();
    let (dst, secret) = destination(&app, "Hook", "webhook", &hook.url).await;
    let res = app
        .post(&format!("/v1/logs/destinations/{dst}/test"), &app.dev_key)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 202);
    let id = res.json::<Value>().await.unwrap()["deliveryId"]
        .as_str()
        .unwrap()
        .to_owned();
    let got = hook.next().await;
    assert_eq!(got.body["type"], "alert.test");
    assert_eq!(got.header("webhook-id"), id);
    standardwebhooks::Webhook::new(secret.as_deref().unwrap())
        .unwrap()
        .verify(&got.raw, &got.http_headers())
        .unwrap();
    // delivered: sent again on request, with the same id
    let again = loop {
        let res = app
            .post(
                &format!("/v1/logs/alert-deliveries/{id}/send-again"),
                &app.dev_key,
            )
            .send()
            .await
            .unwrap();
        if res.status() != 409 {
            break res;
        }
        tokio::task::yield_now().await;
    };
    assert_eq!(again.status(), 202);
    assert_eq!(hook.next().await.header("webhook-id"), id);
    let res = app
        .post(
            "/v1/logs/alert-deliveries/msg_nope/send-again",
            &app.dev_key,
        )
        .send()
        .await
        .unwrap();
    expect_error(res, 404, "NOT_FOUND").await;
}

#[tokio::test]
async fn a_redirect_is_not_followed_and_the_delivery_retries() {
    let app = spawn().await;
    let mut hook = Receiver::start();
    let mut elsewhere = Receiver::start();
    hook.script([Reply::Redirect(elsewhere.url.clone())]);
    let (dst, _) = destination(&app, "Hook", "webhook", &hook.url).await;
    app.post(&format!("/v1/logs/destinations/{dst}/test"), &app.dev_key)
        .send()
        .await
        .unwrap();
    let first = hook.next().await;
    assert!(matches!(first.reply, Reply::Redirect(_)));
    let entry = loop {
        let log = deliveries(&app, None).await;
        if log[0]["lastCode"] == 302 {
            break log[0].clone();
        }
        tokio::task::yield_now().await;
    };
    assert_eq!(entry["status"], "pending", "tried again later: {entry}");
    assert!(
        entry["lastError"]
            .as_str()
            .unwrap()
            .contains("redirects are not followed"),
        "{entry}"
    );
    assert!(
        elsewhere.drain().is_empty(),
        "the redirect's target was never asked"
    );
}

#[tokio::test]
async fn a_hanging_or_rate_limited_receiver_slows_only_its_own_deliveries() {
    let app = spawn().await;
    let mut stuck = Receiver::start();
    let mut limited = Receiver::start();
    let mut healthy = Receiver::start();
    stuck.script([Reply::Hang]);
    limited.script([Reply::Limited {
        retry_after: 30.0,
        global: false,
    }]);
    let search = saved_search(&app, "Errors", json!({ "eventType": "resource.error" })).await;
    let mut dsts = Vec::new();
    for (name, r) in [
        ("Stuck", &stuck),
        ("Limited", &limited),
        ("Healthy", &healthy),
    ] {
        dsts.push(destination(&app, name, "webhook", &r.url).await.0);
    }
    rule(
        &app,
        json!({ "name": "Errors", "savedSearchId": search, "kind": "every", "destinationIds": dsts }),
    )
    .await;
    app.ingest_logs(
        "alert-batch-slow-1",
        vec![event("resource.error", "phone", "one")],
    )
    .await;
    stuck.next().await;
    limited.next().await;
    let started = std::time::Instant::now();
    assert_eq!(healthy.next().await.body["events"][0]["message"], "one");
    app.ingest_logs(
        "alert-batch-slow-2",
        vec![event("resource.error", "phone", "two")],
    )
    .await;
    assert_eq!(healthy.next().await.body["events"][0]["message"], "two");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "the healthy receiver waited {:?} behind the others",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_discord_backlog_goes_out_as_one_message_with_a_summary() {
    let app = spawn().await;
    let mut discord = Receiver::start();
    // a 429, then one of Discord's occasional 500s for the merged message
    discord.script([
        Reply::Limited {
            retry_after: 1.0,
            global: false,
        },
        Reply::Status(500),
    ]);
    let search = saved_search(&app, "Kicks", json!({ "eventType": "admin.kick" })).await;
    let (dst, _) = destination(&app, "Staff channel", "discord", &discord.url).await;
    rule(
        &app,
        json!({ "name": "Kicks", "savedSearchId": search, "kind": "every", "destinationIds": [dst] }),
    )
    .await;
    let kicks = |n: usize, from: usize| -> Vec<Value> {
        (from..from + n)
            .map(|i| event("admin.kick", "txadmin", &format!("kick {i}")))
            .collect()
    };
    app.ingest_logs("alert-batch-backlog-1", kicks(4, 0)).await;
    let held = discord.next().await;
    assert_eq!(held.body["embeds"].as_array().unwrap().len(), 4);
    // while the webhook is held back, two more firings queue behind the first
    app.ingest_logs("alert-batch-backlog-2", kicks(5, 4)).await;
    app.ingest_logs("alert-batch-backlog-3", kicks(6, 9)).await;
    let failed = discord.next().await;
    assert!(matches!(failed.reply, Reply::Status(500)));
    let merged = discord.next().await;
    assert_eq!(
        merged.body, failed.body,
        "the same message after its backoff"
    );
    let embeds = merged.body["embeds"].as_array().unwrap();
    assert_eq!(
        embeds.len(),
        10,
        "one message, as many embeds as Discord takes"
    );
    assert_eq!(embeds[0]["description"], "kick 0", "oldest first");
    let content = merged.body["content"].as_str().unwrap();
    assert!(
        content.starts_with(
            "5 more matching events — open in console: http://console.test/logs?saved="
        ),
        "{content}"
    );
    let log = deliveries(&app, None).await;
    assert_eq!(log.len(), 3);
    assert!(discord.drain().is_empty(), "nothing sent twice");
}

/// A worker that took a delivery and died before recording the answer (kill -9 mid-send): once
/// its lease runs out, another instance sends it, with the same `webhook-id`.
#[tokio::test]
async fn a_delivery_taken_by_a_worker_that_died_is_sent_by_another_instance() {
    let app = spawn_with_idle_worker().await;
    let mut hook = Receiver::start();
    bans_to_webhook(&app, &hook.url).await;
    app.ingest_logs(
        "alert-batch-died",
        vec![event("admin.ban", "txadmin", "banned")],
    )
    .await;
    // the worker that dies: takes it for a second and never answers
    use logs_core::alert_queue::AlertQueue;
    let alerts = stow_db::logs::alerts::PgAlerts::new(app.db.clone());
    let taken = alerts
        .lease_due(10, Utc::now(), Duration::seconds(1))
        .await
        .unwrap();
    assert_eq!(taken.len(), 1);
    // another instance, whose worker looks often
    let mut other = app.config.clone();
    other.alerts_poll = std::time::Duration::from_millis(50);
    spawn_logs(other);
    let got = hook.next().await;
    assert_eq!(
        got.header("webhook-id"),
        taken[0].id,
        "the same id as the lost attempt"
    );
    let log = loop {
        let log = deliveries(&app, None).await;
        if log[0]["status"] == "delivered" {
            break log;
        }
        tokio::task::yield_now().await;
    };
    assert_eq!(log[0]["attempts"], 2, "the lost attempt counts");
    assert!(hook.drain().is_empty());
}

#[tokio::test]
async fn a_rotated_secret_signs_from_then_on_and_a_delivery_gives_up_after_its_time() {
    let app = spawn().await;
    let mut hook = Receiver::start();
    let (dst, old) = destination(&app, "Hook", "webhook", &hook.url).await;
    let res = app
        .patch(&format!("/v1/logs/destinations/{dst}"), &app.dev_key)
        .json(&json!({ "rotateSecret": true }))
        .send()
        .await
        .unwrap();
    let body = created(res).await;
    let new = body["signingSecret"].as_str().unwrap().to_owned();
    assert_ne!(Some(new.clone()), old);
    // the receiver fails every attempt
    hook.script([Reply::Status(500), Reply::Status(503)]);
    app.post(&format!("/v1/logs/destinations/{dst}/test"), &app.dev_key)
        .send()
        .await
        .unwrap();
    let first = hook.next().await;
    let verify = |secret: &str| {
        standardwebhooks::Webhook::new(secret)
            .unwrap()
            .verify(&first.raw, &first.http_headers())
    };
    verify(&new).expect("signed with the new secret");
    assert!(
        verify(old.as_deref().unwrap()).is_err(),
        "not with the old one"
    );
    let entry = loop {
        let log = deliveries(&app, None).await;
        if log[0]["lastCode"] == 500 {
            break log[0].clone();
        }
        tokio::task::yield_now().await;
    };
    assert_eq!(entry["status"], "pending", "{entry}");
    // its 24 hours are over (moved, not waited for): the next failure is the last
    app.count(&format!(
        "WITH u AS (UPDATE alert_deliveries SET give_up_at = now(), next_attempt_at = now() \
         WHERE id = '{}' RETURNING 1) SELECT count(*) AS n FROM u",
        entry["id"].as_str().unwrap()
    ))
    .await;
    assert!(matches!(hook.next().await.reply, Reply::Status(503)));
    let entry = loop {
        let log = deliveries(&app, None).await;
        if log[0]["status"] != "pending" {
            break log[0].clone();
        }
        tokio::task::yield_now().await;
    };
    assert_eq!(entry["status"], "failed", "{entry}");
    assert_eq!(entry["attempts"], 2);
    assert_eq!(entry["lastCode"], 503);
}

/// A queue (one rule to one destination) drains as fast as its receiver answers, in order: a
/// worker that looks at the outbox once sends all 20 firings queued up, not one per look (it
/// sent about four a second at the default poll, so a busy rule's backlog grew without bound).
#[tokio::test]
async fn a_queue_drains_in_order_without_waiting_for_the_next_look() {
    let app = spawn_with_idle_worker().await;
    let mut hook = Receiver::start();
    bans_to_webhook(&app, &hook.url).await;
    for i in 0..20 {
        app.ingest_logs(
            &format!("alert-batch-drain-{i:02}"),
            vec![event("admin.ban", "txadmin", &format!("ban {i:02}"))],
        )
        .await;
    }
    // another instance whose worker looks once, at its start
    let mut other = app.config.clone();
    other.alerts_poll = std::time::Duration::from_secs(3600);
    spawn_logs(other);
    for i in 0..20 {
        let got = hook.next().await;
        assert_eq!(got.body["events"][0]["message"], format!("ban {i:02}"));
    }
    assert!(hook.drain().is_empty());
}

/// A lease is short (a killed worker's deliveries are taken again soon) and renewed while its
/// request is in flight: a receiver that hangs until the 10-second request timeout gets the
/// delivery once in that time, even from two instances that look every 50 ms (with a lease that
/// ran out mid-request, the other instance sent it again after 6 s).
#[tokio::test]
async fn a_request_in_flight_keeps_its_lease() {
    let app = spawn_with_idle_worker().await;
    let mut hook = Receiver::start();
    hook.script([Reply::Hang]);
    bans_to_webhook(&app, &hook.url).await;
    app.ingest_logs(
        "alert-batch-lease",
        vec![event("admin.ban", "txadmin", "slow")],
    )
    .await;
    for _ in 0..2 {
        let mut other = app.config.clone();
        other.alerts_poll = std::time::Duration::from_millis(50);
        spawn_logs(other);
    }
    let first = hook.next().await;
    let again = hook.next().await;
    assert_eq!(again.header("webhook-id"), first.header("webhook-id"));
    let gap = again.at - first.at;
    assert!(
        gap >= std::time::Duration::from_secs(10),
        "sent again after {gap:?}, while the first request was still waiting for its answer"
    );
}
