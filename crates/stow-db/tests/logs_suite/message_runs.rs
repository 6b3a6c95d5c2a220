//! Message search through the words of runs (`log_runs`): which spans a search reads, and the
//! words the migration's SQL computes for events stored before it against ingestion's.

use chrono::{Duration, SubsecRound, Utc};
use diesel::sql_types::{Array, Text};
use diesel_async::RunQueryDsl;
use logs_core::parse_batch;
use logs_core::store::{EventQuery, Filters, IngestOutcome, IngestTarget};
use serde_json::json;
use stow_db::logs::{message_within, PendingBatch, PgLogs, Within, MAX_RUNS};
use stow_db::{testing, Db, DbConfig};

async fn setup() -> (Db, PgLogs, IngestTarget) {
    let url = testing::fresh_database().await.expect("fresh database");
    let db = Db::connect(&DbConfig::new(url)).expect("pool");
    let (org, (id, cfx), _) = super::org_with_two_servers(&db).await;
    let target = IngestTarget {
        org_id: org,
        server_id: id,
        cfx_id: cfx,
    };
    (db.clone(), PgLogs::new(db), target)
}

/// `n` batches of one event each (so `n` runs) with `message(i)`, event `i` at `now - (i + 1)`
/// seconds; returns `now`.
async fn one_event_batches(
    logs: &PgLogs,
    target: &IngestTarget,
    n: usize,
    message: impl Fn(usize) -> String,
) -> chrono::DateTime<Utc> {
    let now = Utc::now().trunc_subsecs(6);
    let pending: Vec<PendingBatch> = (0..n)
        .map(|i| {
            let at = now - Duration::seconds(i as i64 + 1);
            let body = json!({ "batch_id": format!("batch-{i:04}"), "events": [
                { "level": "info", "message": message(i), "occurred_at": at.to_rfc3339() }
            ]});
            PendingBatch {
                target: target.clone(),
                batch: parse_batch(&serde_json::to_vec(&body).unwrap(), now).unwrap(),
                now,
            }
        })
        .collect();
    for group in pending.chunks(16) {
        for answer in logs.ingest_together(group).await {
            assert!(
                matches!(answer, Ok(IngestOutcome::Accepted { .. })),
                "{answer:?}"
            );
        }
    }
    now
}

/// Up to `MAX_RUNS` candidate runs, a search reads their spans (and none when no run can match);
/// one more, and it reads the whole window. Either way the page holds every match.
#[tokio::test]
async fn a_term_in_more_runs_than_the_cap_reads_the_whole_window() {
    let (db, logs, target) = setup().await;
    // every run has "common" and "capped"; the oldest one "over"
    let now = one_event_batches(&logs, &target, MAX_RUNS + 1, |i| {
        if i < MAX_RUNS {
            format!("common capped {i}")
        } else {
            "common over capped".into()
        }
    })
    .await;
    let (from, to) = (now - Duration::hours(1), now + Duration::minutes(1));
    let mut conn = db.conn().await.unwrap();
    let within = |term: &str| Filters {
        message: Some(term.into()),
        ..Filters::default()
    };
    let spans = |w: Within| match w {
        Within::Spans(s) => Some(s.len()),
        Within::Window => None,
    };
    let over = message_within(&mut conn, &target.server_id, from, to, &within("over"))
        .await
        .unwrap();
    assert_eq!(spans(over), Some(1));
    let none = message_within(&mut conn, &target.server_id, from, to, &within("nowhere"))
        .await
        .unwrap();
    assert!(none.is_empty());
    // MAX_RUNS + 1 candidates: the whole window
    let capped = message_within(&mut conn, &target.server_id, from, to, &within("capped"))
        .await
        .unwrap();
    assert_eq!(spans(capped), None);
    // MAX_RUNS candidates (the window without the newest event): their spans, a second apart
    let earlier = message_within(
        &mut conn,
        &target.server_id,
        from,
        now - Duration::seconds(1),
        &within("capped"),
    )
    .await
    .unwrap();
    assert_eq!(spans(earlier), Some(MAX_RUNS));
    // a search day by day over three days: "capped" is in more runs than the cap over the
    // window (each day then looks up its own), "older" in one run of two days ago
    let older = now - Duration::days(2);
    let body = json!({ "batch_id": "batch-older", "events": [
        { "level": "info", "message": "common older capped", "occurred_at": older.to_rfc3339() }
    ]});
    let batch = parse_batch(&serde_json::to_vec(&body).unwrap(), now).unwrap();
    assert!(matches!(
        logs_core::LogStore::ingest(&logs, &target, batch, now).await,
        Ok(IngestOutcome::Accepted { .. })
    ));
    for (term, n) in [
        ("capped", MAX_RUNS + 2),
        ("over", 1),
        ("older", 1),
        ("common", MAX_RUNS + 2),
        ("nowhere", 0),
    ] {
        let page = logs_core::LogStore::query(
            &logs,
            &EventQuery {
                server_id: target.server_id.clone(),
                from: now - Duration::days(3),
                to,
                filters: within(term),
                after: None,
                limit: 1_000,
                scan_limit: None,
                enough: 1_000,
            },
        )
        .await
        .unwrap();
        assert_eq!(page.len(), n, "{term}");
    }
}

/// The migration computes the runs of events stored before it in SQL (`log_run_words`);
/// its words are the ones ingestion computes in Rust (`logs_core::words`) for the same messages.
#[tokio::test]
async fn the_migrations_words_are_ingestions_words() {
    let (db, logs, target) = setup().await;
    let messages = [
        "[OOC] anyone selling a car_near légion-square? 42%",
        "x\u{a0}y €5 日本語 👍ok tab\tnew\nline",
        "~`!@#$%^&*()-_=+[]{}|;:'\",.<>/?\\ end",
        "ÀÉÎ Ωmega İstanbul",
    ];
    one_event_batches(&logs, &target, messages.len(), |i| messages[i].into()).await;
    #[derive(diesel::QueryableByName)]
    struct Words {
        #[diesel(sql_type = Array<Text>)]
        words: Vec<String>,
    }
    let mut conn = db.conn().await.unwrap();
    let load = |sql: &'static str| diesel::sql_query(sql);
    let mut by_sql: Vec<Words> = load(
        "SELECT array_agg(DISTINCT w ORDER BY w) AS words FROM log_events, \
         regexp_split_to_table(log_run_words(ARRAY[message]), ' ') AS w WHERE w <> ''",
    )
    .load(&mut conn)
    .await
    .unwrap();
    let mut by_rust: Vec<Words> = load(
        "SELECT array_agg(DISTINCT w ORDER BY w) AS words FROM log_runs, \
         regexp_split_to_table(words, ' ') AS w WHERE w <> ''",
    )
    .load(&mut conn)
    .await
    .unwrap();
    let (sql, rust) = (by_sql.remove(0).words, by_rust.remove(0).words);
    assert_eq!(sql.len(), 20, "{sql:?}");
    assert_eq!(sql, rust);
}
