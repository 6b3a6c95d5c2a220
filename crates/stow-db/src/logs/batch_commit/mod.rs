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
            // what the batch ids stored before hold, by their first batch in the group
            let mut stored: HashMap<usize, Stored> = HashMap::new();
            if !earlier.is_empty() {
                let rows: Vec<Stored> = diesel::sql_query(
                    "SELECT b.server_id, b.batch_id, b.digest, b.accepted_events, b.ingested_at \
                     FROM log_batches b JOIN unnest($1::text[], $2::text[]) AS u(server_id, batch_id) \
                     ON b.server_id = u.server_id AND b.batch_id = u.batch_id",
                )
                .bind::<Array<Text>, _>(earlier.iter().map(|&i| batches[i].key().0).collect::<Vec<_>>())
                .bind::<Array<Text>, _>(earlier.iter().map(|&i| batches[i].key().1).collect::<Vec<_>>())
                .load(conn)
                .await?;
                for row in rows {
                    if let Some(&i) = first.get(&(row.server_id.as_str(), row.batch_id.as_str())) {
                        stored.insert(i, row);
                    }
                }
            }
            if !accepted.is_empty() {
                // events in the order their batches were queued (the set is ordered by index)
                let accepted: Vec<usize> = accepted.iter().copied().collect();
                let events = EventColumns::new(batches, &accepted);
                events.insert(conn).await?;
                Runs::new(batches, &accepted).insert(conn).await?;
                // before the shared count and usage rows are taken: a commit holds those until
                // it ends, and other commits wait for them
                let rules = rules.current(conn).await?;
                if !rules.is_empty() {
                    let committed = events.committed(batches, &accepted, &rules);
                    if !committed.is_empty() {
                        let now = batches[accepted[0]].now;
                        alerts::commit::record(conn, &rules, &committed, now).await?;
                    }
                }
                events.counts().upsert(conn).await?;
                Usage::new(batches, &accepted).upsert(conn).await?;
            }
            Ok(batches
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
                            // the row went between the insert and the read (its server was
                            // deleted): nothing is stored; a retry finds out what holds
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
                .collect())
        }
        .scope_boxed()
    })
    .await
}

/// The `log_batches` rows of the group's first batches, one array per column, in key order.
struct BatchRows<'a> {
    server_id: Vec<&'a str>,
    batch_id: Vec<&'a str>,
    org_id: Vec<&'a str>,
    digest: Vec<&'a [u8]>,
    accepted_events: Vec<i32>,
    ingested_at: Vec<DateTime<Utc>>,
    occurred_from: Vec<Option<DateTime<Utc>>>,
    occurred_to: Vec<Option<DateTime<Utc>>>,
}

impl<'a> BatchRows<'a> {
    fn new(batches: &'a [PendingBatch], firsts: &[usize]) -> Self {
        let mut rows = Self {
            server_id: Vec::new(),
            batch_id: Vec::new(),
            org_id: Vec::new(),
            digest: Vec::new(),
            accepted_events: Vec::new(),
            ingested_at: Vec::new(),
            occurred_from: Vec::new(),
            occurred_to: Vec::new(),
        };
        for &i in firsts {
            let j = &batches[i];
            // where the batch's events lie in time, for the live tail to find them by index
            let times = j.batch.events.iter().map(|e| e.occurred_at);
            rows.server_id.push(j.target.server_id.as_str());
            rows.batch_id.push(&j.batch.batch_id);
            rows.org_id.push(&j.target.org_id);
            rows.digest.push(&j.batch.digest);
            rows.accepted_events.push(j.batch.events.len() as i32);
            rows.ingested_at.push(j.now);
            rows.occurred_from.push(times.clone().min());
            rows.occurred_to.push(times.max());
        }
        rows
    }

    async fn insert(&self, conn: &mut AsyncPgConnection) -> QueryResult<Vec<Key>> {
        diesel::sql_query(
            "INSERT INTO log_batches (server_id, batch_id, org_id, digest, accepted_events, \
             ingested_at, occurred_from, occurred_to) \
             SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[], $5::int4[], \
             $6::timestamptz[], $7::timestamptz[], $8::timestamptz[]) \
             ON CONFLICT DO NOTHING RETURNING server_id, batch_id",
        )
        .bind::<Array<Text>, _>(&self.server_id)
        .bind::<Array<Text>, _>(&self.batch_id)
        .bind::<Array<Text>, _>(&self.org_id)
        .bind::<Array<Binary>, _>(&self.digest)
        .bind::<Array<Integer>, _>(&self.accepted_events)
        .bind::<Array<Timestamptz>, _>(&self.ingested_at)
        .bind::<Array<Nullable<Timestamptz>>, _>(&self.occurred_from)
        .bind::<Array<Nullable<Timestamptz>>, _>(&self.occurred_to)
        .load(conn)
        .await
    }
}

/// JSON text for a jsonb column, serialized straight from the parsed map (Postgres parses
/// it into jsonb; building a `serde_json::Value` first would copy every key and value).
fn json_text<T: serde::Serialize>(v: Option<&T>) -> Option<String> {
    v.and_then(|v| serde_json::to_string(v).ok())
}

/// The accepted batches' events as one array per column, borrowing from the parsed events (no
/// copies but the generated event ids and the JSON text of the jsonb columns).
#[derive(Default)]
struct EventColumns<'a> {
    org_id: Vec<&'a str>,
    server_id: Vec<&'a str>,
    cfx_id: Vec<&'a str>,
    batch_id: Vec<&'a str>,
    ingested_at: Vec<DateTime<Utc>>,
    event_id: Vec<String>,
    level: Vec<&'static str>,
    event_type: Vec<&'a str>,
    occurred_at: Vec<DateTime<Utc>>,
    player_id: Vec<Option<&'a str>>,
    target_player_id: Vec<Option<&'a str>>,
    player_identifiers: Vec<Option<String>>,
    target_player_identifiers: Vec<Option<String>>,
    resource: Vec<Option<&'a str>>,
    trace_id: Vec<Option<&'a str>>,
    environment: Vec<Option<&'a str>>,
    message: Vec<&'a str>,
    data: Vec<Option<String>>,
}

impl<'a> EventColumns<'a> {
    fn new(batches: &'a [PendingBatch], accepted: &[usize]) -> Self {
        let mut c = Self::default();
        for &i in accepted {
            let j = &batches[i];
            for e in &j.batch.events {
                c.org_id.push(&j.target.org_id);
                c.server_id.push(j.target.server_id.as_str());
                c.cfx_id.push(&j.target.cfx_id);
                c.batch_id.push(&j.batch.batch_id);
                c.ingested_at.push(j.now);
                c.event_id
                    .push(e.event_id.clone().unwrap_or_else(new_event_id));
                c.level.push(e.level.as_str());
                c.event_type.push(&e.event_type);
                c.occurred_at.push(e.occurred_at);
                c.player_id.push(e.player_id.as_deref());
                c.target_player_id.push(e.target_player_id.as_deref());
                c.player_identifiers
                    .push(json_text(e.player_identifiers.as_ref()));
                c.target_player_identifiers
                    .push(json_text(e.target_player_identifiers.as_ref()));
                c.resource.push(e.resource.as_deref());
                c.trace_id.push(e.trace_id.as_deref());
                c.environment.push(e.environment.as_deref());
                c.message.push(&e.message);
                c.data.push(json_text(e.data.as_ref()));
            }
        }
        c
    }

    /// The accepted batches' events as rows, one entry per batch, for the batches of
    /// organizations that have alert rules (the rest are not looked at).
    fn committed(
        &self,
        batches: &'a [PendingBatch],
        accepted: &[usize],
        rules: &[logs_core::alerts::ActiveRule],
    ) -> Vec<Committed<'a>> {
        let mut out = Vec::new();
        let mut at = 0;
        for &i in accepted {
            let j = &batches[i];
            let n = j.batch.events.len();
            if rules.iter().any(|r| r.org_id == j.target.org_id) {
                let events = j
                    .batch
                    .events
                    .iter()
                    .zip(&self.event_id[at..at + n])
                    .map(|(e, id)| {
                        logs_core::store::EventRow::stored(
                            0,
                            id.clone(),
                            &j.target,
                            &j.batch.batch_id,
                            e,
                            j.now,
                        )
                    })
                    .collect();
                out.push(Committed {
                    org: &j.target.org_id,
                    server: &j.target.server_id,
                    events,
                });
            }
            at += n;
        }
        out
    }

    async fn insert(&self, conn: &mut AsyncPgConnection) -> QueryResult<usize> {
        diesel::sql_query(
            "INSERT INTO log_events (org_id, server_id, cfx_id, batch_id, ingested_at, event_id, level, \
             event_type, occurred_at, player_id, target_player_id, player_identifiers, \
             target_player_identifiers, resource, trace_id, environment, message, data) \
             SELECT u.org_id, u.server_id, u.cfx_id, u.batch_id, u.ingested_at, u.event_id, u.level, \
             u.event_type, u.occurred_at, u.player_id, u.target_player_id, u.pi::jsonb, u.tpi::jsonb, \
             u.resource, u.trace_id, u.environment, u.message, u.data::jsonb \
             FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], \
             $6::text[], $7::text[], $8::text[], $9::timestamptz[], $10::text[], $11::text[], \
             $12::text[], $13::text[], $14::text[], $15::text[], $16::text[], $17::text[], $18::text[]) \
             AS u(org_id, server_id, cfx_id, batch_id, ingested_at, event_id, level, event_type, \
             occurred_at, player_id, target_player_id, pi, tpi, resource, trace_id, environment, \
             message, data)",
        )
        .bind::<Array<Text>, _>(&self.org_id)
        .bind::<Array<Text>, _>(&self.server_id)
        .bind::<Array<Text>, _>(&self.cfx_id)
        .bind::<Array<Text>, _>(&self.batch_id)
        .bind::<Array<Timestamptz>, _>(&self.ingested_at)
        .bind::<Array<Text>, _>(&self.event_id)
        .bind::<Array<Text>, _>(&self.level)
        .bind::<Array<Text>, _>(&self.event_type)
        .bind::<Array<Timestamptz>, _>(&self.occurred_at)
        .bind::<Array<Nullable<Text>>, _>(&self.player_id)
        .bind::<Array<Nullable<Text>>, _>(&self.target_player_id)
        .bind::<Array<Nullable<Text>>, _>(&self.player_identifiers)
        .bind::<Array<Nullable<Text>>, _>(&self.target_player_identifiers)
        .bind::<Array<Nullable<Text>>, _>(&self.resource)
        .bind::<Array<Nullable<Text>>, _>(&self.trace_id)
        .bind::<Array<Nullable<Text>>, _>(&self.environment)
        .bind::<Array<Text>, _>(&self.message)
        .bind::<Array<Nullable<Text>>, _>(&self.data)
        .execute(conn)
        .await
    }

    /// The events per server, hour, level, type and resource (`log_counts_hourly`) and per
    /// server, 15-minute slot and level (`log_level_counts_15m`), in key order so that
    /// concurrent groups lock the rows they share in one order.
    fn counts(&self) -> Counts<'a> {
        let mut hourly: BTreeMap<(&str, DateTime<Utc>, &str, &str, &str), i64> = BTreeMap::new();
        let mut levels: BTreeMap<LevelKey, i64> = BTreeMap::new();
        for i in 0..self.occurred_at.len() {
            let hour = bucket_start(self.occurred_at[i], chrono::Duration::hours(1));
            *hourly
                .entry((
                    self.server_id[i],
                    hour,
                    self.level[i],
                    self.event_type[i],
                    self.resource[i].unwrap_or(""),
                ))
                .or_default() += 1;
            let slot = bucket_start(self.occurred_at[i], LEVEL_SLOT);
            *levels
                .entry((self.server_id[i], slot, self.level[i]))
                .or_default() += 1;
        }
        let mut counts = Counts {
            levels: levels.into_iter().collect(),
            ..Counts::default()
        };
        for ((server_id, hour, level, event_type, resource), n) in hourly {
            counts.server_id.push(server_id);
            counts.hour.push(hour);
            counts.level.push(level);
            counts.event_type.push(event_type);
            counts.resource.push(resource);
            counts.n.push(n);
        }
        counts
    }
}

/// The `log_runs` rows of the accepted batches (runs of up to 50 events in time order, with
/// the distinct words of their messages: [`logs_core::words`]), one array per column.
#[derive(Default)]
struct Runs<'a> {
    server_id: Vec<&'a str>,
    occurred_from: Vec<DateTime<Utc>>,
    occurred_to: Vec<DateTime<Utc>>,
    words: Vec<String>,
}

impl<'a> Runs<'a> {
    fn new(batches: &'a [PendingBatch], accepted: &[usize]) -> Self {
        let mut rows = Self::default();
        for &i in accepted {
            let j = &batches[i];
            let events = j
                .batch
                .events
                .iter()
                .map(|e| (e.occurred_at, e.message.as_str()));
            for run in logs_core::words::runs(events) {
                rows.server_id.push(j.target.server_id.as_str());
                rows.occurred_from.push(run.from);
                rows.occurred_to.push(run.to);
                rows.words.push(run.words);
            }
        }
        rows
    }

    async fn insert(&self, conn: &mut AsyncPgConnection) -> QueryResult<usize> {
        diesel::sql_query(
            "INSERT INTO log_runs (server_id, occurred_from, occurred_to, words) \
             SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[], $4::text[])",
        )
        .bind::<Array<Text>, _>(&self.server_id)
        .bind::<Array<Timestamptz>, _>(&self.occurred_from)
        .bind::<Array<Timestamptz>, _>(&self.occurred_to)
        .bind::<Array<Text>, _>(&self.words)
        .execute(conn)
        .await
    }
}

/// Rows of `log_counts_hourly` to add, one array per column, and of `log_level_counts_15m`.
#[derive(Default)]
struct Counts<'a> {
    server_id: Vec<&'a str>,
    hour: Vec<DateTime<Utc>>,
    level: Vec<&'a str>,
    event_type: Vec<&'a str>,
    resource: Vec<&'a str>,
    n: Vec<i64>,
    levels: Vec<(LevelKey<'a>, i64)>,
}

/// The key of a `log_level_counts_15m` row: server, slot and level.
type LevelKey<'a> = (&'a str, DateTime<Utc>, &'a str);

impl Counts<'_> {
    /// Adds the rows to `log_counts_hourly`, then to `log_level_counts_15m`.
    async fn upsert(&self, conn: &mut AsyncPgConnection) -> QueryResult<()> {
        self.upsert_hourly(conn).await?;
        let levels = &self.levels;
        diesel::sql_query(
            "INSERT INTO log_level_counts_15m (server_id, slot, level, n) \
             SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::int8[]) \
             ON CONFLICT (server_id, slot, level) DO UPDATE SET n = log_level_counts_15m.n + EXCLUDED.n",
        )
        .bind::<Array<Text>, _>(levels.iter().map(|((s, _, _), _)| *s).collect::<Vec<_>>())
        .bind::<Array<Timestamptz>, _>(levels.iter().map(|((_, t, _), _)| *t).collect::<Vec<_>>())
        .bind::<Array<Text>, _>(levels.iter().map(|((_, _, l), _)| *l).collect::<Vec<_>>())
        .bind::<Array<BigInt>, _>(levels.iter().map(|(_, n)| *n).collect::<Vec<_>>())
        .execute(conn)
        .await?;
        Ok(())
    }

    /// Adds the rows to `log_counts_hourly`.
    async fn upsert_hourly(&self, conn: &mut AsyncPgConnection) -> QueryResult<usize> {
        diesel::sql_query(
            "INSERT INTO log_counts_hourly (server_id, hour, level, event_type, resource, n) \
             SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], \
             $6::int8[]) \
             ON CONFLICT (server_id, hour, level, event_type, resource) \
             DO UPDATE SET n = log_counts_hourly.n + EXCLUDED.n",
        )
        .bind::<Array<Text>, _>(&self.server_id)
        .bind::<Array<Timestamptz>, _>(&self.hour)
        .bind::<Array<Text>, _>(&self.level)
        .bind::<Array<Text>, _>(&self.event_type)
        .bind::<Array<Text>, _>(&self.resource)
        .bind::<Array<BigInt>, _>(&self.n)
        .execute(conn)
        .await
    }
}

/// The accepted events per organization and month of ingestion (`usage_counters`), in key
/// order.
struct Usage<'a> {
    org_id: Vec<&'a str>,
    month: Vec<NaiveDate>,
    n: Vec<i64>,
}

impl<'a> Usage<'a> {
    fn new(batches: &'a [PendingBatch], accepted: &[usize]) -> Self {
        let mut per: BTreeMap<(&str, NaiveDate), i64> = BTreeMap::new();
        for &i in accepted {
            let j = &batches[i];
            let month = NaiveDate::from_ymd_opt(j.now.year(), j.now.month(), 1)
                .expect("the first of a month exists");
            *per.entry((&j.target.org_id, month)).or_default() += j.batch.events.len() as i64;
        }
        let mut u = Self {
            org_id: Vec::new(),
            month: Vec::new(),
            n: Vec::new(),
        };
        for ((org, month), n) in per {
            u.org_id.push(org);
            u.month.push(month);
            u.n.push(n);
        }
        u
    }

    async fn upsert(&self, conn: &mut AsyncPgConnection) -> QueryResult<usize> {
        diesel::sql_query(
            "INSERT INTO usage_counters (org_id, month, log_events) \
             SELECT * FROM unnest($1::text[], $2::date[], $3::int8[]) \
             ON CONFLICT (org_id, month) \
             DO UPDATE SET log_events = usage_counters.log_events + EXCLUDED.log_events",
        )
        .bind::<Array<Text>, _>(&self.org_id)
        .bind::<Array<Date>, _>(&self.month)
        .bind::<Array<BigInt>, _>(&self.n)
        .execute(conn)
        .await
    }
}
