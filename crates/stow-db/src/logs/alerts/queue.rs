//! The delivery worker's side of the outbox on Postgres ([`AlertQueue`]): workers lease due
//! deliveries with `FOR UPDATE SKIP LOCKED`, send them outside any transaction, and record the
//! answer. A lease that is not recorded (the worker died) runs out and the delivery is taken
//! again, with the same id.
//!
//! Order: a delivery is due only when no earlier delivery of its rule to its destination is
//! pending, so one rule's firings arrive in order; a destination Discord holds back (its rate
//! limit) is skipped until its hold ends.

use async_trait::async_trait;
use auth_core::StoreError;
use chrono::{DateTime, Utc};
use diesel::sql_types::{Array, BigInt, Bytea, Integer, Jsonb, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use logs_core::alert_queue::{AlertQueue, Attempt, Leased};

use super::store::PgAlerts;
use crate::db_error;

/// A leased delivery's row ([`Leased`]).
#[derive(QueryableByName)]
struct LeasedRow {
    #[diesel(sql_type = BigInt)]
    seq: i64,
    #[diesel(sql_type = Text)]
    id: String,
    #[diesel(sql_type = Text)]
    destination_id: String,
    #[diesel(sql_type = Text)]
    kind: String,
    #[diesel(sql_type = Bytea)]
    sealed: Vec<u8>,
    #[diesel(sql_type = Nullable<Text>)]
    rule_id: Option<String>,
    #[diesel(sql_type = Nullable<Jsonb>)]
    body: Option<serde_json::Value>,
    #[diesel(sql_type = Integer)]
    attempts: i32,
    #[diesel(sql_type = Timestamptz)]
    give_up_at: DateTime<Utc>,
}

impl From<LeasedRow> for Leased {
    fn from(r: LeasedRow) -> Self {
        Self {
            seq: r.seq,
            id: r.id,
            destination_id: r.destination_id,
            kind: r.kind,
            sealed: r.sealed,
            rule_id: r.rule_id,
            body: r.body,
            attempts: r.attempts,
            give_up_at: r.give_up_at,
        }
    }
}

fn leased(rows: Vec<LeasedRow>) -> Vec<Leased> {
    rows.into_iter().map(Into::into).collect()
}

const LEASED_COLUMNS: &str = "d.seq, d.id, d.destination_id, t.kind, t.sealed, d.rule_id, \
     f.body, d.attempts, d.give_up_at";

/// The statement that leases due deliveries (`$1` now) matching `filter`, in `order`, at most
/// `limit`, until `until`: pending, due, not leased, the destination not held back, and first in
/// its queue (no earlier delivery of its rule to its destination pending).
fn lease_due_sql(filter: &str, order: &str, limit: &str, until: &str) -> String {
    format!(
        "WITH due AS ( \
           SELECT d.seq FROM alert_deliveries d \
           JOIN alert_destinations t ON t.id = d.destination_id \
           WHERE d.status = 'pending' AND d.next_attempt_at <= $1 \
           AND (d.leased_until IS NULL OR d.leased_until <= $1) \
           AND (t.hold_until IS NULL OR t.hold_until <= $1) \
           AND NOT EXISTS (SELECT 1 FROM alert_deliveries e \
             WHERE e.destination_id = d.destination_id AND e.status = 'pending' \
             AND e.rule_id IS NOT DISTINCT FROM d.rule_id AND e.seq < d.seq) \
           AND {filter} \
           ORDER BY {order} LIMIT {limit} \
           FOR UPDATE OF d SKIP LOCKED), \
         taken AS ( \
           UPDATE alert_deliveries d SET leased_until = {until}, attempts = d.attempts + 1 \
           FROM due WHERE d.seq = due.seq RETURNING d.*) \
         SELECT {LEASED_COLUMNS} FROM taken d \
         JOIN alert_destinations t ON t.id = d.destination_id \
         LEFT JOIN alert_firings f ON f.id = d.firing_id ORDER BY d.seq"
    )
}

#[async_trait]
impl AlertQueue for PgAlerts {
    async fn lease_due(
        &self,
        limit: usize,
        now: DateTime<Utc>,
        lease: chrono::Duration,
    ) -> Result<Vec<Leased>, StoreError> {
        let mut conn = self.db.conn().await?;
        diesel::sql_query(lease_due_sql(
            "TRUE",
            "d.next_attempt_at, d.seq",
            "$2",
            "$3",
        ))
        .bind::<Timestamptz, _>(now)
        .bind::<BigInt, _>(limit as i64)
        .bind::<Timestamptz, _>(now + lease)
        .load(&mut conn)
        .await
        .map(leased)
        .map_err(db_error)
    }

    /// Takes the pending deliveries queued behind `head` for the same rule and destination (at
    /// most `limit`), to be sent in one Discord message with it.
    async fn lease_behind(
        &self,
        head: &Leased,
        limit: usize,
        now: DateTime<Utc>,
        lease: chrono::Duration,
    ) -> Result<Vec<Leased>, StoreError> {
        let mut conn = self.db.conn().await?;
        diesel::sql_query(format!(
            "WITH behind AS ( \
               SELECT d.seq FROM alert_deliveries d WHERE d.destination_id = $1 \
               AND d.rule_id = $2 AND d.status = 'pending' AND d.seq > $3 \
               AND (d.leased_until IS NULL OR d.leased_until <= $5) \
               ORDER BY d.seq LIMIT $4 FOR UPDATE SKIP LOCKED), \
             taken AS ( \
               UPDATE alert_deliveries d SET leased_until = $6, attempts = d.attempts + 1 \
               FROM behind WHERE d.seq = behind.seq RETURNING d.*) \
             SELECT {LEASED_COLUMNS} FROM taken d \
             JOIN alert_destinations t ON t.id = d.destination_id \
             LEFT JOIN alert_firings f ON f.id = d.firing_id ORDER BY d.seq"
        ))
        .bind::<Text, _>(&head.destination_id)
        .bind::<Nullable<Text>, _>(head.rule_id.as_deref())
        .bind::<BigInt, _>(head.seq)
        .bind::<BigInt, _>(limit as i64)
        .bind::<Timestamptz, _>(now)
        .bind::<Timestamptz, _>(now + lease)
        .load(&mut conn)
        .await
        .map(leased)
        .map_err(db_error)
    }

    /// Takes the next delivery of `after`'s queue (its rule and destination) once `after` is
    /// finished: pending, due, not leased, its destination not held back, and first in its queue.
    /// The worker that delivered `after` sends it at once, so a queue drains as fast as its
    /// receiver answers instead of one delivery per look at the outbox.
    async fn lease_next(
        &self,
        after: &Leased,
        now: DateTime<Utc>,
        lease: chrono::Duration,
    ) -> Result<Option<Leased>, StoreError> {
        let mut conn = self.db.conn().await?;
        let mut next: Vec<LeasedRow> = diesel::sql_query(lease_due_sql(
            "d.destination_id = $3 AND d.rule_id IS NOT DISTINCT FROM $4 AND d.seq > $5",
            "d.seq",
            "1",
            "$2",
        ))
        .bind::<Timestamptz, _>(now)
        .bind::<Timestamptz, _>(now + lease)
        .bind::<Text, _>(&after.destination_id)
        .bind::<Nullable<Text>, _>(after.rule_id.as_deref())
        .bind::<BigInt, _>(after.seq)
        .load(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(next.pop().map(Into::into))
    }

    /// Extends the lease of deliveries `seqs` (being sent) to `until`.
    async fn renew(&self, seqs: &[i64], until: DateTime<Utc>) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        diesel::sql_query(
            "UPDATE alert_deliveries SET leased_until = $2 WHERE seq = ANY($1) \
             AND status = 'pending' AND leased_until IS NOT NULL",
        )
        .bind::<Array<BigInt>, _>(seqs)
        .bind::<Timestamptz, _>(until)
        .execute(&mut conn)
        .await
        .map(drop)
        .map_err(db_error)
    }

    /// Records what became of an attempt at deliveries `seqs` (sent together).
    async fn finish(
        &self,
        seqs: &[i64],
        destination_id: &str,
        attempt: &Attempt,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        if let Attempt::Held { until } = attempt {
            // first, on a connection of its own: one finish never holds two
            self.hold(destination_id, *until).await?;
        }
        let mut conn = self.db.conn().await?;
        let q = match attempt {
            Attempt::Delivered { code } => diesel::sql_query(
                "UPDATE alert_deliveries SET status = 'delivered', delivered_at = $2, \
                 last_code = $3, last_error = NULL, leased_until = NULL WHERE seq = ANY($1)",
            )
            .bind::<Array<BigInt>, _>(seqs)
            .bind::<Timestamptz, _>(now)
            .bind::<Integer, _>(*code)
            .execute(&mut conn)
            .await,
            Attempt::Failed {
                code,
                error,
                retry_at,
            } => diesel::sql_query(
                "UPDATE alert_deliveries SET last_code = $2, last_error = $3, leased_until = NULL, \
                 next_attempt_at = $4, \
                 status = CASE WHEN $4 > give_up_at THEN 'failed' ELSE 'pending' END \
                 WHERE seq = ANY($1)",
            )
            .bind::<Array<BigInt>, _>(seqs)
            .bind::<Nullable<Integer>, _>(*code)
            .bind::<Text, _>(error)
            .bind::<Timestamptz, _>(*retry_at)
            .execute(&mut conn)
            .await,
            Attempt::Held { until } => {
                diesel::sql_query(
                    "UPDATE alert_deliveries SET last_code = 429, last_error = 'rate limited', \
                     leased_until = NULL, next_attempt_at = $2, attempts = attempts - 1 \
                     WHERE seq = ANY($1)",
                )
                .bind::<Array<BigInt>, _>(seqs)
                .bind::<Timestamptz, _>(*until)
                .execute(&mut conn)
                .await
            }
        };
        q.map(drop).map_err(db_error)
    }

    /// Holds a destination back until `until` (Discord said its bucket is empty), without an
    /// attempt to record.
    async fn hold(&self, destination_id: &str, until: DateTime<Utc>) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        diesel::sql_query(
            "UPDATE alert_destinations SET hold_until = greatest(hold_until, $2) WHERE id = $1",
        )
        .bind::<Text, _>(destination_id)
        .bind::<Timestamptz, _>(until)
        .execute(&mut conn)
        .await
        .map(drop)
        .map_err(db_error)
    }

    /// Removes what alerts no longer need: threshold counts older than their rule's window,
    /// and deliveries (with their firings) finished more than `keep` ago.
    async fn prune(&self, now: DateTime<Utc>, keep: chrono::Duration) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        diesel::sql_query(
            "DELETE FROM alert_minute_counts c USING alert_rules r WHERE r.id = c.rule_id \
             AND c.minute < $1 - make_interval(mins => r.window_minutes)",
        )
        .bind::<Timestamptz, _>(now)
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        diesel::sql_query(
            "DELETE FROM alert_firings f WHERE f.fired_at < $1 AND NOT EXISTS \
             (SELECT 1 FROM alert_deliveries d WHERE d.firing_id = f.id AND d.status = 'pending')",
        )
        .bind::<Timestamptz, _>(now - keep)
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        diesel::sql_query(
            "DELETE FROM alert_deliveries WHERE firing_id IS NULL AND status <> 'pending' \
             AND created_at < $1",
        )
        .bind::<Timestamptz, _>(now - keep)
        .execute(&mut conn)
        .await
        .map(drop)
        .map_err(db_error)
    }
}
