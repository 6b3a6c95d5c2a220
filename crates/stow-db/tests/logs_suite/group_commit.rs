//! Group commit of log batches: several batches in one transaction, each still all or nothing
//! and answered on its own.

use chrono::{DateTime, SubsecRound, Utc};
use diesel::sql_types::{BigInt, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use logs_core::event::Batch;
use logs_core::parse_batch;
use logs_core::store::{
    Filters, IngestOutcome, IngestTarget, LogStore, OrgId, ServerId, TailQuery,
};
use serde_json::json;
use stow_db::logs::{PendingBatch, PgLogs};
use stow_db::{testing, Db, DbConfig};

struct Fixture {
    url: String,
    db: Db,
    logs: PgLogs,
    org: OrgId,
    a: IngestTarget,
    b: IngestTarget,
}

async fn fixture() -> Fixture {
    let url = testing::fresh_database().await.expect("fresh database");
    let db = Db::connect(&DbConfig::new(url.clone())).expect("pool");
    let (org, a, b) = super::org_with_two_servers(&db).await;
    let target = |(id, cfx): (ServerId, String)| IngestTarget {
        org_id: org.clone(),
        server_id: id,
        cfx_id: cfx,
    };
    Fixture {
        url,
        logs: PgLogs::new(db.clone()),
        a: target(a),
        b: target(b),
        org: org.clone(),
        db,
    }
}

fn batch(id: &str, messages: &[&str], now: DateTime<Utc>) -> Batch {
    let events: Vec<_> = messages
        .iter()
        .map(|m| json!({ "level": "info", "message": m, "resource": "core" }))
        .collect();
    let body = json!({ "batch_id": id, "events": events });
    parse_batch(&serde_json::to_vec(&body).unwrap(), now).unwrap()
}

fn pending(target: &IngestTarget, batch: Batch, now: DateTime<Utc>) -> PendingBatch {
    PendingBatch {
        target: target.clone(),
        batch,
        now,
    }
}

#[derive(diesel::QueryableByName, Debug, PartialEq)]
struct Stored {
    #[diesel(sql_type = Text)]
    batch_id: String,
    #[diesel(sql_type = Text)]
    server_id: String,
    #[diesel(sql_type = BigInt)]
    events: i64,
    #[diesel(sql_type = BigInt)]
    commit_xid: i64,
}

/// Each stored batch with its events and the transaction that stored it.
async fn stored(f: &Fixture) -> Vec<Stored> {
    let mut conn = f.db.conn().await.unwrap();
    diesel::sql_query(
        "SELECT b.batch_id, b.server_id, b.commit_xid, \
         (SELECT count(*) FROM log_events e WHERE e.server_id = b.server_id AND e.batch_id = b.batch_id) AS events \
         FROM log_batches b ORDER BY b.batch_id, b.server_id",
    )
    .load(&mut conn)
    .await
    .unwrap()
}

#[derive(diesel::QueryableByName)]
struct Total {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

async fn total(f: &Fixture, sql: &str) -> i64 {
    let mut conn = f.db.conn().await.unwrap();
    diesel::sql_query(sql)
        .get_result::<Total>(&mut conn)
        .await
        .unwrap()
        .n
}

/// New batches, a replay and a conflict of batches stored before, and repeats of one batch id
/// inside the group (same payload, other payload, other server): one answer each, as if they
/// had come one at a time in that order; counts and usage added once per stored event.
#[tokio::test]
async fn a_group_answers_each_batch_as_if_it_came_alone() {
    let f = fixture().await;
    let before = Utc::now().trunc_subsecs(6) - chrono::Duration::seconds(30);
    let now = Utc::now().trunc_subsecs(6);
    let earlier = f
        .logs
        .ingest_together(&[
            pending(&f.a, batch("batch-old-1", &["o1", "o2"], before), before),
            pending(&f.a, batch("batch-old-2", &["o3"], before), before),
        ])
        .await;
    assert!(earlier
        .iter()
        .all(|o| matches!(o, Ok(IngestOutcome::Accepted { .. }))));
    let answers = f
        .logs
        .ingest_together(&[
            pending(&f.a, batch("batch-new-1", &["n1", "n2", "n3"], now), now),
            pending(&f.a, batch("batch-old-1", &["o1", "o2"], now), now),
            pending(&f.a, batch("batch-old-2", &["changed"], now), now),
            pending(&f.a, batch("batch-new-1", &["n1", "n2", "n3"], now), now),
            pending(&f.a, batch("batch-new-1", &["other"], now), now),
            pending(&f.b, batch("batch-new-1", &["b1"], now), now),
            pending(&f.b, batch("batch-new-2", &["b2", "b3"], now), now),
        ])
        .await;
    let answers: Vec<IngestOutcome> = answers.into_iter().map(Result::unwrap).collect();
    use IngestOutcome::*;
    assert_eq!(
        answers,
        [
            Accepted {
                accepted_events: 3,
                ingested_at: now
            },
            Replayed {
                accepted_events: 2,
                ingested_at: before
            },
            Conflict,
            Replayed {
                accepted_events: 3,
                ingested_at: now
            },
            Conflict,
            Accepted {
                accepted_events: 1,
                ingested_at: now
            },
            Accepted {
                accepted_events: 2,
                ingested_at: now
            },
        ]
    );
    let rows = stored(&f).await;
    // Server ids are random, so the stored order of one batch id's two servers is not fixed:
    // compare by the servers' names in the test.
    let mut summary: Vec<(&str, &str, i64)> = rows
        .iter()
        .map(|r| {
            let server = if r.server_id == f.a.server_id.as_str() {
                "a"
            } else {
                "b"
            };
            (r.batch_id.as_str(), server, r.events)
        })
        .collect();
    summary.sort();
    assert_eq!(
        summary,
        [
            ("batch-new-1", "a", 3),
            ("batch-new-1", "b", 1),
            ("batch-new-2", "b", 2),
            ("batch-old-1", "a", 2),
            ("batch-old-2", "a", 1),
        ]
    );
    let group_xids: std::collections::BTreeSet<i64> = rows
        .iter()
        .filter(|r| r.batch_id.starts_with("batch-new"))
        .map(|r| r.commit_xid)
        .collect();
    assert_eq!(group_xids.len(), 1, "one transaction: {rows:?}");
    assert_eq!(total(&f, "SELECT count(*) AS n FROM log_events").await, 9);
    // one run of words per stored batch (each under 50 events), none for replays or conflicts
    assert_eq!(total(&f, "SELECT count(*) AS n FROM log_runs").await, 5);
    assert_eq!(
        total(
            &f,
            &format!(
                "SELECT count(*) AS n FROM log_runs WHERE server_id = '{}' AND words IN (' b1 ', ' b2 b3 ')",
                f.b.server_id
            )
        )
        .await,
        2
    );
    for table in ["log_counts_hourly", "log_level_counts_15m"] {
        assert_eq!(
            total(&f, &format!("SELECT sum(n)::int8 AS n FROM {table}")).await,
            9,
            "{table} matches the stored events"
        );
        assert_eq!(
            total(
                &f,
                &format!(
                    "SELECT sum(n)::int8 AS n FROM {table} WHERE server_id = '{}'",
                    f.b.server_id
                )
            )
            .await,
            3
        );
    }
    // one row per server, 15-minute slot and level in the level counts
    assert_eq!(
        total(
            &f,
            "SELECT count(*) AS n FROM (SELECT DISTINCT server_id, level, \
             date_bin('15 minutes', occurred_at, timestamptz '1970-01-01Z') FROM log_events) k"
        )
        .await,
        total(&f, "SELECT count(*) AS n FROM log_level_counts_15m").await
    );
    assert_eq!(
        f.logs.monthly_usage(&f.org, now).await.unwrap(),
        9,
        "usage counts each stored event once"
    );
}

/// A batch id held by another open transaction makes the group wait (the lock timeout, 3 s),
/// then each batch is tried alone: the held one is answered in progress, the others commit.
/// Once the other transaction ends without it, the batch commits.
#[tokio::test]
async fn a_batch_held_by_another_transaction_does_not_hold_back_the_rest_of_its_group() {
    let f = fixture().await;
    let now = Utc::now().trunc_subsecs(6);
    let mut other = AsyncPgConnection::establish(&f.url).await.unwrap();
    other
        .batch_execute(&format!(
            "BEGIN; INSERT INTO log_batches (server_id, batch_id, org_id, digest, accepted_events, ingested_at) \
             VALUES ('{}', 'batch-held', '{}', '\\x00', 1, now())",
            f.a.server_id, f.org
        ))
        .await
        .unwrap();
    let answers = f
        .logs
        .ingest_together(&[
            pending(&f.a, batch("batch-free-1", &["f1"], now), now),
            pending(&f.a, batch("batch-held", &["h1", "h2"], now), now),
            pending(&f.b, batch("batch-free-2", &["f2"], now), now),
        ])
        .await;
    let answers: Vec<IngestOutcome> = answers.into_iter().map(Result::unwrap).collect();
    assert_eq!(
        answers,
        [
            IngestOutcome::Accepted {
                accepted_events: 1,
                ingested_at: now
            },
            IngestOutcome::InProgress,
            IngestOutcome::Accepted {
                accepted_events: 1,
                ingested_at: now
            },
        ]
    );
    assert_eq!(total(&f, "SELECT count(*) AS n FROM log_events").await, 2);
    other.batch_execute("ROLLBACK").await.unwrap();
    let retry = f
        .logs
        .ingest(&f.a, batch("batch-held", &["h1", "h2"], now), now)
        .await
        .unwrap();
    assert_eq!(
        retry,
        IngestOutcome::Accepted {
            accepted_events: 2,
            ingested_at: now
        }
    );
    assert_eq!(total(&f, "SELECT count(*) AS n FROM log_events").await, 4);
    assert_eq!(f.logs.monthly_usage(&f.org, now).await.unwrap(), 4);
}

/// Concurrent calls go through the writers: distinct batches are all stored, and copies of one
/// batch sent at once are stored once (one accepted, the rest replayed, never a conflict).
#[tokio::test]
async fn concurrent_batches_are_each_stored_once() {
    let f = fixture().await;
    let now = Utc::now().trunc_subsecs(6);
    let distinct = (0..24).map(|i| {
        let b = batch(&format!("batch-par-{i:02}"), &["x", "y"], now);
        f.logs.ingest(if i % 2 == 0 { &f.a } else { &f.b }, b, now)
    });
    let answers = futures::future::join_all(distinct).await;
    assert!(
        answers.iter().all(|o| matches!(
            o,
            Ok(IngestOutcome::Accepted {
                accepted_events: 2,
                ..
            })
        )),
        "{answers:?}"
    );
    let copies = (0..12).map(|_| {
        f.logs
            .ingest(&f.a, batch("batch-same", &["s1", "s2", "s3"], now), now)
    });
    let answers: Vec<IngestOutcome> = futures::future::join_all(copies)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let accepted = answers
        .iter()
        .filter(|o| matches!(o, IngestOutcome::Accepted { .. }))
        .count();
    let replayed = answers
        .iter()
        .filter(|o| {
            **o == IngestOutcome::Replayed {
                accepted_events: 3,
                ingested_at: now,
            }
        })
        .count();
    assert_eq!((accepted, replayed), (1, 11), "{answers:?}");
    assert_eq!(
        total(&f, "SELECT count(*) AS n FROM log_events").await,
        24 * 2 + 3
    );
    assert_eq!(f.logs.monthly_usage(&f.org, now).await.unwrap(), 24 * 2 + 3);
}

/// Batches of one server committed in one transaction share a tail position: a page limited
/// to one transaction reads all of them, in the order they were queued (not their ids' order),
/// and the next page goes on after them.
#[tokio::test]
async fn a_tail_page_never_ends_inside_a_group() {
    let f = fixture().await;
    let server = f.a.server_id.clone();
    let start = f.logs.tail_start(&server).await.unwrap();
    let now = Utc::now().trunc_subsecs(6);
    let answers = f
        .logs
        .ingest_together(&[
            pending(&f.a, batch("batch-g-c", &["g1", "g2"], now), now),
            pending(&f.b, batch("batch-g-x", &["elsewhere"], now), now),
            pending(&f.a, batch("batch-g-b", &["g3"], now), now),
            pending(&f.a, batch("batch-g-a", &["g4", "g5"], now), now),
        ])
        .await;
    assert!(answers.iter().all(Result::is_ok));
    f.logs
        .ingest(&f.a, batch("batch-after", &["later"], now), now)
        .await
        .unwrap();
    let q = |after, max_batches| TailQuery {
        server_id: server.clone(),
        filters: Filters::default(),
        after,
        max_batches,
    };
    // the horizon is the whole cluster's: another test's transaction may hold it a moment
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let first = loop {
        let page = f.logs.tail(&q(start, 1)).await.unwrap();
        if !page.events.is_empty() || std::time::Instant::now() > deadline {
            break page;
        }
        tokio::task::yield_now().await;
    };
    let messages = |page: &logs_core::store::TailPage| {
        page.events
            .iter()
            .map(|(_, e)| e.message.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(messages(&first), ["g1", "g2", "g3", "g4", "g5"]);
    let seq = first.events[0].0.seq;
    assert!(first.events.iter().all(|(p, _)| p.seq == seq));
    assert!(f.logs.tail_batch_time(&server, seq).await.unwrap() == Some(now));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let second = loop {
        let page = f.logs.tail(&q(first.next, 1)).await.unwrap();
        if !page.events.is_empty() || std::time::Instant::now() > deadline {
            break page;
        }
        tokio::task::yield_now().await;
    };
    assert_eq!(messages(&second), ["later"]);
    // resuming inside the group gives the rest of it
    let inside = f.logs.tail(&q(first.events[2].0, 1)).await.unwrap();
    assert_eq!(messages(&inside), ["g4", "g5"]);
}

/// A batch the database refuses (its server was deleted after the request was checked) fails
/// alone; the rest of its group commits.
#[tokio::test]
async fn a_batch_for_a_deleted_server_fails_alone() {
    let f = fixture().await;
    let now = Utc::now().trunc_subsecs(6);
    let gone = IngestTarget {
        server_id: ServerId::new("srv_deleted"),
        ..f.b.clone()
    };
    let answers = f
        .logs
        .ingest_together(&[
            pending(&f.a, batch("batch-kept-1", &["k1"], now), now),
            pending(&gone, batch("batch-lost", &["l1"], now), now),
            pending(&f.a, batch("batch-kept-2", &["k2", "k3"], now), now),
        ])
        .await;
    assert_eq!(
        answers[0],
        Ok(IngestOutcome::Accepted {
            accepted_events: 1,
            ingested_at: now
        })
    );
    assert!(
        matches!(answers[1], Err(auth_core::StoreError::NotFound(_))),
        "{:?}",
        answers[1]
    );
    assert_eq!(
        answers[2],
        Ok(IngestOutcome::Accepted {
            accepted_events: 2,
            ingested_at: now
        })
    );
    assert_eq!(total(&f, "SELECT count(*) AS n FROM log_events").await, 3);
    assert_eq!(
        total(
            &f,
            "SELECT count(*) AS n FROM log_runs WHERE server_id <> 'srv_deleted'"
        )
        .await,
        2,
        "the kept batches' runs, and nothing of the lost one"
    );
    assert_eq!(total(&f, "SELECT count(*) AS n FROM log_runs").await, 2);
    assert_eq!(f.logs.monthly_usage(&f.org, now).await.unwrap(), 3);
}
