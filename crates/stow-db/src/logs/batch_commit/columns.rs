//! The group's rows as one array per column: its `log_batches` rows and its events.

use super::tallies::{Counts, LevelKey};
use super::*;

/// The `log_batches` rows of the group's first batches, one array per column, in key order.
pub(super) struct BatchRows<'a> {
    pub(super) server_id: Vec<&'a str>,
    pub(super) batch_id: Vec<&'a str>,
    pub(super) org_id: Vec<&'a str>,
    pub(super) digest: Vec<&'a [u8]>,
    pub(super) accepted_events: Vec<i32>,
    pub(super) ingested_at: Vec<DateTime<Utc>>,
    pub(super) occurred_from: Vec<Option<DateTime<Utc>>>,
    pub(super) occurred_to: Vec<Option<DateTime<Utc>>>,
}

impl<'a> BatchRows<'a> {
    pub(super) fn new(batches: &'a [PendingBatch], firsts: &[usize]) -> Self {
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

    pub(super) async fn insert(&self, conn: &mut AsyncPgConnection) -> QueryResult<Vec<Key>> {
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
pub(super) struct EventColumns<'a> {
    pub(super) org_id: Vec<&'a str>,
    pub(super) server_id: Vec<&'a str>,
    pub(super) cfx_id: Vec<&'a str>,
    pub(super) batch_id: Vec<&'a str>,
    pub(super) ingested_at: Vec<DateTime<Utc>>,
    pub(super) event_id: Vec<String>,
    pub(super) level: Vec<&'static str>,
    pub(super) event_type: Vec<&'a str>,
    pub(super) occurred_at: Vec<DateTime<Utc>>,
    pub(super) player_id: Vec<Option<&'a str>>,
    pub(super) target_player_id: Vec<Option<&'a str>>,
    pub(super) player_identifiers: Vec<Option<String>>,
    pub(super) target_player_identifiers: Vec<Option<String>>,
    pub(super) resource: Vec<Option<&'a str>>,
    pub(super) trace_id: Vec<Option<&'a str>>,
    pub(super) environment: Vec<Option<&'a str>>,
    pub(super) message: Vec<&'a str>,
    pub(super) data: Vec<Option<String>>,
}

impl<'a> EventColumns<'a> {
    pub(super) fn new(batches: &'a [PendingBatch], accepted: &[usize]) -> Self {
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
    pub(super) fn committed(
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

    pub(super) async fn insert(&self, conn: &mut AsyncPgConnection) -> QueryResult<usize> {
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
    pub(super) fn counts(&self) -> Counts<'a> {
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
