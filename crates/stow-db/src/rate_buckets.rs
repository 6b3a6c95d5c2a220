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
/// new bucket starts full; an existing one is refilled for the time since its last take
/// (database time, the same clock for every instance), then gives what it can.
const TAKE: &str = r#"
INSERT INTO rate_buckets AS b (bucket, tokens, granted, updated_at)
VALUES ($1, $3 - LEAST($2, FLOOR($3)), LEAST($2, FLOOR($3))::integer, now())
ON CONFLICT (bucket) DO UPDATE SET
    granted = GREATEST(0, LEAST($2, FLOOR(LEAST($3, b.tokens
        + $4 * GREATEST(0, EXTRACT(EPOCH FROM now() - b.updated_at)::double precision)))))::integer,
    tokens = LEAST($3, b.tokens
        + $4 * GREATEST(0, EXTRACT(EPOCH FROM now() - b.updated_at)::double precision))
        - GREATEST(0, LEAST($2, FLOOR(LEAST($3, b.tokens
        + $4 * GREATEST(0, EXTRACT(EPOCH FROM now() - b.updated_at)::double precision))))),
    updated_at = now()
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
