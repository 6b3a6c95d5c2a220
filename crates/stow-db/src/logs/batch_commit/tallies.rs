//! What a commit adds to the shared rows: message-search runs, hourly and per-slot counts, usage.

use super::*;

/// The `log_runs` rows of the accepted batches (runs of up to 50 events in time order, with
/// the distinct words of their messages: [`logs_core::words`]), one array per column.
#[derive(Default)]
pub(super) struct Runs<'a> {
    pub(super) server_id: Vec<&'a str>,
    pub(super) occurred_from: Vec<DateTime<Utc>>,
    pub(super) occurred_to: Vec<DateTime<Utc>>,
    pub(super) words: Vec<String>,
}

impl<'a> Runs<'a> {
    pub(super) fn new(batches: &'a [PendingBatch], accepted: &[usize]) -> Self {
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

    pub(super) async fn insert(&self, conn: &mut AsyncPgConnection) -> QueryResult<usize> {
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
pub(super) struct Counts<'a> {
    pub(super) server_id: Vec<&'a str>,
    pub(super) hour: Vec<DateTime<Utc>>,
    pub(super) level: Vec<&'a str>,
    pub(super) event_type: Vec<&'a str>,
    pub(super) resource: Vec<&'a str>,
    pub(super) n: Vec<i64>,
    pub(super) levels: Vec<(LevelKey<'a>, i64)>,
}

/// The key of a `log_level_counts_15m` row: server, slot and level.
pub(super) type LevelKey<'a> = (&'a str, DateTime<Utc>, &'a str);

impl Counts<'_> {
    /// Adds the rows to `log_counts_hourly`, then to `log_level_counts_15m`.
    pub(super) async fn upsert(&self, conn: &mut AsyncPgConnection) -> QueryResult<()> {
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
pub(super) struct Usage<'a> {
    pub(super) org_id: Vec<&'a str>,
    pub(super) month: Vec<NaiveDate>,
    pub(super) n: Vec<i64>,
}

impl<'a> Usage<'a> {
    pub(super) fn new(batches: &'a [PendingBatch], accepted: &[usize]) -> Self {
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

    pub(super) async fn upsert(&self, conn: &mut AsyncPgConnection) -> QueryResult<usize> {
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
