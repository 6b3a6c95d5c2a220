//! Token buckets on Postgres ([`RateBucketStore`], `rate_buckets`, migration 15): one upsert per
//! take, so concurrent takes on every instance are serialized by the row.

use async_trait::async_trait;
use auth_core::rate::{Quota, RateBucketStore, Taken};
use auth_core::StoreError;
use diesel::sql_types::{Double, Integer, Text};
use diesel_async::RunQueryDsl;

use crate::{db_error, Db};

pub struct PgRateBuckets {
    db: Db,
}

impl PgRateBuckets {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[derive(diesel::QueryableByName)]
struct Row {
    #[diesel(sql_type = Integer)]
    granted: i32,
    #[diesel(sql_type = Double)]
    tokens: f64,
}

/// `auth_core::rate::refill_and_take` in SQL: `$2` wanted, `$3` burst, `$4` tokens per second. A
/// new bucket starts full; an existing one is refilled for the time since its last take, then
/// gives what it can.
///
/// The time is the database's clock read once, *after* the row lock is held (the conflict's
/// `SET` runs then; `clock_timestamp()` in one sub-select, so grant, tokens and `updated_at` use
/// the same instant), and never earlier than the last take's. `now()` would be the transaction's
/// start: a take that waited for the lock would move `updated_at` back, and the next take would
/// credit the same interval again (16 concurrent takers were granted 2.5 to 4.6 times the rate).
const TAKE: &str = r#"
INSERT INTO rate_buckets AS b (bucket, tokens, granted, updated_at)
VALUES ($1, $3 - LEAST($2, FLOOR($3)), LEAST($2, FLOOR($3))::integer, clock_timestamp())
ON CONFLICT (bucket) DO UPDATE SET (granted, tokens, updated_at) = (
    SELECT g::integer, avail - g, at FROM (
        SELECT avail, GREATEST(0, LEAST($2, FLOOR(avail))) AS g, at FROM (
            SELECT LEAST($3, b.tokens
                       + $4 * EXTRACT(EPOCH FROM c.at - b.updated_at)::double precision) AS avail,
                   c.at
            FROM (SELECT GREATEST(b.updated_at, clock_timestamp()) AS at) c
        ) r
    ) q
)
RETURNING granted, tokens"#;

#[async_trait]
impl RateBucketStore for PgRateBuckets {
    async fn take(&self, bucket: &str, want: u32, quota: Quota) -> Result<Taken, StoreError> {
        let mut conn = self.db.conn().await?;
        let row: Row = diesel::sql_query(TAKE)
            .bind::<Text, _>(bucket)
            .bind::<Double, _>(f64::from(want))
            .bind::<Double, _>(f64::from(quota.burst))
            .bind::<Double, _>(quota.per_second)
            .get_result(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(Taken {
            granted: row.granted.max(0) as u32,
            left: row.tokens,
        })
    }
}
