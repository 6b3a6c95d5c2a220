#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The log explorer's reads on the API host: `data` filters, counts over time, facets, export
//! (and the access rules they share with the query).

mod access;
mod counts;
mod criteria;
mod data;
mod export;
mod facets;
mod long_ranges;
mod patterns;
mod player;
mod saved;
mod servers;
mod tail;

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use stowage_tests::*;

fn at(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, true)
}

fn ago(mins: i64) -> String {
    at(Utc::now() - Duration::minutes(mins))
}

/// The last two hours and the next ten minutes on `abc123`.
fn window() -> Value {
    json!({ "serverId": "abc123", "from": ago(120), "to": at(Utc::now() + Duration::minutes(10)) })
}

fn with(mut base: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().unwrap() {
        base[k] = v.clone();
    }
    base
}

async fn post(app: &TestApp, path: &str, body: &Value) -> reqwest::Response {
    app.post(path, &app.dev_key)
        .json(body)
        .send()
        .await
        .unwrap()
}

/// Ingests `events` as batch `batch` on the server with join code `server` (202 asserted).
async fn ingest_on(app: &TestApp, server: &str, batch: &str, events: Vec<Value>) {
    app.ingest_logs_on(server, batch, events).await;
}

/// 200 and the body.
async fn ok(res: reqwest::Response) -> Value {
    let status = res.status();
    let body: Value = res.json().await.unwrap();
    assert_eq!(status, 200, "{body}");
    body
}

/// `n` events on `abc123` straight into the table (a fixture, not a product path): one a
/// millisecond from `newest` back, levels in turn, `data.n` their number (0 the newest).
async fn insert_events(app: &TestApp, n: i64, newest: DateTime<Utc>) {
    insert_generated(
        app,
        "INSERT INTO log_events (org_id, server_id, cfx_id, batch_id, ingested_at, event_id, level, \
         event_type, occurred_at, message, data) \
         SELECT $1, $2, 'abc123', 'fixture', now(), 'fixture-' || i, \
         (ARRAY['debug','info','warn','error','fatal'])[1 + i % 5], 'tick', \
         $3 - i * interval '1 millisecond', 'event ' || i, jsonb_build_object('n', i) \
         FROM generate_series(0, $4 - 1) AS i",
        n,
        newest,
    )
    .await;
}

/// Runs a fixture's `INSERT … SELECT … generate_series(0, $4 - 1) AS i` with `$1` the
/// organization, `$2` the server of `abc123`, `$3` `newest` and `$4` `n`.
async fn insert_generated(app: &TestApp, sql: &str, n: i64, newest: DateTime<Utc>) {
    use diesel::sql_types::{BigInt, Text, Timestamptz};
    use diesel_async::RunQueryDsl;
    let mut conn = app.db.conn().await.unwrap();
    diesel::sql_query(sql)
        .bind::<Text, _>(app.org.id.as_str())
        .bind::<Text, _>(app.server.id.as_str())
        .bind::<Timestamptz, _>(newest)
        .bind::<BigInt, _>(n)
        .execute(&mut conn)
        .await
        .unwrap();
}
