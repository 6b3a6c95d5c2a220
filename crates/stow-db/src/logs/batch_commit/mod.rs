//! One transaction that stores a group of batches (group commit): each batch is all or nothing,
//! answered on its own (accepted, replayed, conflicting or in progress), and the group's hourly
//! counts and usage are added once, in key order.
//!
//! Statements per group, whatever its size: the batch rows (one insert, keys in order), the
//! stored figures of batch ids that were there before (only when some were), the events of the
//! accepted batches and their runs' words for message search (one insert each), the alert rules'
//! version (one read; with rules, their evaluation: `alerts::commit`), the hourly counts by
//! level, type and resource, the 15-minute counts by level and the usage (one upsert each, keys
//! in order). Two groups committing at once take the rows they share in one order,
//! so they wait on each other but never deadlock.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use auth_core::StoreError;
use chrono::{DateTime, Datelike, NaiveDate, Utc};
use diesel::sql_types::{Array, BigInt, Binary, Date, Integer, Nullable, Text, Timestamptz};
use diesel::QueryResult;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use logs_core::event::Batch;
use logs_core::store::{bucket_start, new_event_id, IngestOutcome, IngestTarget};

use super::alerts::{self, commit::Committed, RuleCache};
use super::LEVEL_SLOT;
use crate::{db_error, Conn, Db};

mod columns;
mod tallies;
use columns::{BatchRows, EventColumns};
use tallies::{Runs, Usage};

/// How long a batch waits for another transaction committing the same batch id; past it, the
/// batch is answered `InProgress`.
const SAME_BATCH_WAIT: &str = "SET LOCAL lock_timeout = '3s'";

/// A batch to store, and when it arrived (its `ingested_at`).
pub struct PendingBatch {
    pub target: IngestTarget,
    pub batch: Batch,
    pub now: DateTime<Utc>,
}

impl PendingBatch {
    fn key(&self) -> (&str, &str) {
        (self.target.server_id.as_str(), &self.batch.batch_id)
    }
}

enum GroupError {
    /// Inserting the batch rows waited past [`SAME_BATCH_WAIT`]: some batch id of the group is
    /// being committed by another transaction (which one, Postgres does not say).
    BatchLocked,
    Db(diesel::result::Error),
}

impl From<diesel::result::Error> for GroupError {
    fn from(e: diesel::result::Error) -> Self {
        GroupError::Db(e)
    }
}

fn is_lock_timeout(e: &diesel::result::Error) -> bool {
    matches!(e, diesel::result::Error::DatabaseError(_, info) if info.message().contains("lock timeout"))
}

/// Stores the batches in one transaction on a connection of `db`; one answer per batch, in
/// order (no connection to be had: that error is every batch's answer). When the group fails
/// because of one batch (its id locked by another transaction, or a row the database refused,
/// such as a server deleted meanwhile), each batch is tried again in a transaction of its own,
/// so that batch's trouble is answered to it alone. Other failures (connection, timeouts) are
/// every batch's answer: trying them one by one would only wait longer.
pub async fn store_group(
    db: &Db,
    rules: &RuleCache,
    batches: &[PendingBatch],
) -> Vec<Result<IngestOutcome, StoreError>> {
    let mut conn = match db.conn().await {
        Ok(conn) => conn,
        Err(e) => return vec![Err(e); batches.len()],
    };
    let conn = &mut conn;
    let e = match store_together(conn, rules, batches).await {
        Ok(outcomes) => return outcomes.into_iter().map(Ok).collect(),
        Err(e) => e,
    };
    if batches.len() == 1 || !one_batch_at_fault(&e) {
        let answer = alone_failed(e);
        return vec![answer; batches.len()];
    }
    let mut answers = Vec::with_capacity(batches.len());
    for batch in batches {
        answers.push(
            match store_together(conn, rules, std::slice::from_ref(batch)).await {
                Ok(mut o) => Ok(o.remove(0)),
                Err(e) => alone_failed(e),
            },
        );
    }
    answers
}

fn one_batch_at_fault(e: &GroupError) -> bool {
    use diesel::result::DatabaseErrorKind::*;
    match e {
        GroupError::BatchLocked => true,
        GroupError::Db(diesel::result::Error::DatabaseError(kind, _)) => matches!(
            kind,
            ForeignKeyViolation | UniqueViolation | NotNullViolation | CheckViolation
        ),
        GroupError::Db(_) => false,
    }
}

fn alone_failed(e: GroupError) -> Result<IngestOutcome, StoreError> {
    match e {
        GroupError::BatchLocked => Ok(IngestOutcome::InProgress),
        GroupError::Db(e) => Err(db_error(e)),
    }
}

#[derive(diesel::QueryableByName)]
struct Key {
    #[diesel(sql_type = Text)]
    server_id: String,
    #[diesel(sql_type = Text)]
    batch_id: String,
}

#[derive(diesel::QueryableByName)]
struct Stored {
    #[diesel(sql_type = Text)]
    server_id: String,
    #[diesel(sql_type = Text)]
    batch_id: String,
    #[diesel(sql_type = Binary)]
    digest: Vec<u8>,
    #[diesel(sql_type = Integer)]
    accepted_events: i32,
    #[diesel(sql_type = Timestamptz)]
    ingested_at: DateTime<Utc>,
}

async fn store_together(
    conn: &mut Conn,
    rules: &RuleCache,
    batches: &[PendingBatch],
) -> Result<Vec<IngestOutcome>, GroupError> {
    // the first batch of each batch id, in key order; a later one with the same id is answered
    // against it (replayed or conflict) once the group commits
    let mut first: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for (i, pending) in batches.iter().enumerate() {
        first.entry(pending.key()).or_insert(i);
    }
    let firsts: Vec<usize> = first.values().copied().collect();
    let batch_rows = BatchRows::new(batches, &firsts);
    conn.transaction::<_, GroupError, _>(|conn| {
        async move {
            conn.batch_execute(SAME_BATCH_WAIT).await?;
            let inserted: Vec<Key> = batch_rows
                .insert(conn)
                .await
                // only here does a lock wait mean a batch id still committing elsewhere; one
                // later (hourly counts, usage) is plain contention, answered as unavailable
                .map_err(|e| {
                    if is_lock_timeout(&e) {
                        GroupError::BatchLocked
                    } else {
                        GroupError::Db(e)
                    }
                })?;
            // each row is the key of one first batch: the ones this group stores
            let accepted: BTreeSet<usize> = inserted
                .iter()
                .filter_map(|k| first.get(&(k.server_id.as_str(), k.batch_id.as_str())))
                .copied()
                .collect();
            let earlier: Vec<usize> = firsts
                .iter()
                .copied()
                .filter(|i| !accepted.contains(i))
                .collect();
            let stored = stored_before(conn, batches, &first, &earlier).await?;
            if !accepted.is_empty() {
                // events in the order their batches were queued (the set is ordered by index)
                let accepted: Vec<usize> = accepted.iter().copied().collect();
                store_accepted(conn, rules, batches, &accepted).await?;
            }
            Ok(outcomes(batches, &first, &accepted, &stored))
        }
        .scope_boxed()
    })
    .await
}

/// What the batch ids stored before hold, by their first batch in the group.
async fn stored_before(
    conn: &mut AsyncPgConnection,
    batches: &[PendingBatch],
    first: &BTreeMap<(&str, &str), usize>,
    earlier: &[usize],
) -> Result<HashMap<usize, Stored>, GroupError> {
    let mut stored: HashMap<usize, Stored> = HashMap::new();
    if earlier.is_empty() {
        return Ok(stored);
    }
    let rows: Vec<Stored> = diesel::sql_query(
        "SELECT b.server_id, b.batch_id, b.digest, b.accepted_events, b.ingested_at \
         FROM log_batches b JOIN unnest($1::text[], $2::text[]) AS u(server_id, batch_id) \
         ON b.server_id = u.server_id AND b.batch_id = u.batch_id",
    )
    .bind::<Array<Text>, _>(
        earlier
            .iter()
            .map(|&i| batches[i].key().0)
            .collect::<Vec<_>>(),
    )
    .bind::<Array<Text>, _>(
        earlier
            .iter()
            .map(|&i| batches[i].key().1)
            .collect::<Vec<_>>(),
    )
    .load(conn)
    .await?;
    for row in rows {
        if let Some(&i) = first.get(&(row.server_id.as_str(), row.batch_id.as_str())) {
            stored.insert(i, row);
        }
    }
    Ok(stored)
}

/// Writes the accepted batches' events, runs, alert firings, counts and usage.
async fn store_accepted(
    conn: &mut AsyncPgConnection,
    rules: &RuleCache,
    batches: &[PendingBatch],
    accepted: &[usize],
) -> Result<(), GroupError> {
    let events = EventColumns::new(batches, accepted);
    events.insert(conn).await?;
    Runs::new(batches, accepted).insert(conn).await?;
    // before the shared count and usage rows are taken: a commit holds those until it ends, and
    // other commits wait for them
    let rules = rules.current(conn).await?;
    if !rules.is_empty() {
        let committed = events.committed(batches, accepted, &rules);
        if !committed.is_empty() {
            let now = batches[accepted[0]].now;
            alerts::commit::record(conn, &rules, &committed, now).await?;
        }
    }
    events.counts().upsert(conn).await?;
    Usage::new(batches, accepted).upsert(conn).await?;
    Ok(())
}

/// Each batch's answer once the group committed: its own first batch accepted, or replayed /
/// in conflict against the first batch of its id (this group's or one stored before).
fn outcomes(
    batches: &[PendingBatch],
    first: &BTreeMap<(&str, &str), usize>,
    accepted: &BTreeSet<usize>,
    stored: &HashMap<usize, Stored>,
) -> Vec<IngestOutcome> {
    batches
        .iter()
        .enumerate()
        .map(|(i, pending)| {
            let f = first[&pending.key()];
            let (digest, accepted_events, ingested_at) = if accepted.contains(&f) {
                let new = &batches[f];
                let n = new.batch.events.len() as i32;
                if f == i {
                    return IngestOutcome::Accepted {
                        accepted_events: n,
                        ingested_at: new.now,
                    };
                }
                (&new.batch.digest[..], n, new.now)
            } else {
                match stored.get(&f) {
                    Some(s) => (&s.digest[..], s.accepted_events, s.ingested_at),
                    // the row went between the insert and the read (its server was deleted):
                    // nothing is stored; a retry finds out what holds
                    None => return IngestOutcome::InProgress,
                }
            };
            if digest == pending.batch.digest {
                IngestOutcome::Replayed {
                    accepted_events,
                    ingested_at,
                }
            } else {
                IngestOutcome::Conflict
            }
        })
        .collect()
}
