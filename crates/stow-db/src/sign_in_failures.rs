//! Postgres [`SignInFailureStore`]; migration 20.

use async_trait::async_trait;
use auth_core::backoff::{after_failure, Failures, SignInFailureStore};
use auth_core::StoreError;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};

use crate::schema::sign_in_failures as t;
use crate::{db_error, Db};

pub struct PgSignInFailures {
    db: Db,
}

impl PgSignInFailures {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

#[async_trait]
impl SignInFailureStore for PgSignInFailures {
    async fn blocked_until(
        &self,
        subject: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<DateTime<Utc>>, StoreError> {
        let mut conn = self.db.conn().await?;
        t::table
            .find(subject)
            .filter(t::blocked_until.gt(now))
            .select(t::blocked_until)
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)
    }

    async fn fail(
        &self,
        subject: &str,
        now: DateTime<Utc>,
        free: u32,
    ) -> Result<Failures, StoreError> {
        let mut conn = self.db.conn().await?;
        conn.transaction::<_, DieselError, _>(|conn| {
            async move {
                // a row to lock, so concurrent failures of one name count one after another
                diesel::insert_into(t::table)
                    .values((
                        t::subject.eq(subject),
                        t::count.eq(0),
                        t::last_at.eq(now),
                        t::blocked_until.eq(now),
                    ))
                    .on_conflict_do_nothing()
                    .execute(conn)
                    .await?;
                let (count, last_at, blocked_until): (i32, DateTime<Utc>, DateTime<Utc>) = t::table
                    .find(subject)
                    .select((t::count, t::last_at, t::blocked_until))
                    .for_update()
                    .first(conn)
                    .await?;
                let stored = (count > 0).then_some(Failures {
                    count: count.unsigned_abs(),
                    last_at,
                    blocked_until,
                });
                let next = after_failure(stored, now, free);
                diesel::update(t::table.find(subject))
                    .set((
                        t::count.eq(i32::try_from(next.count).unwrap_or(i32::MAX)),
                        t::last_at.eq(next.last_at),
                        t::blocked_until.eq(next.blocked_until),
                    ))
                    .execute(conn)
                    .await?;
                Ok(next)
            }
            .scope_boxed()
        })
        .await
        .map_err(db_error)
    }

    async fn clear(&self, subject: &str) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        diesel::delete(t::table.find(subject))
            .execute(&mut conn)
            .await
            .map_err(db_error)?;
        Ok(())
    }
}
