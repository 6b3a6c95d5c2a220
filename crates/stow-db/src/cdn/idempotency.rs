//! `Idempotency-Key` records and their leases ([`IdempotencyStore`]).

use async_trait::async_trait;
use auth_core::StoreError;
use cdn_core::idempotency::{Claim, IdemScope, IdempotencyStore, LEASE_SECS};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde_json::Value;

use crate::schema::idempotency_records;
use crate::{db_error, Db};

pub struct PgIdempotency {
    db: Db,
}

impl PgIdempotency {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

fn idem_filter(s: &IdemScope) -> IdemRecord<'_> {
    idempotency_records::table.find((
        s.scope.as_str(),
        s.method.as_str(),
        s.route.as_str(),
        s.key.as_str(),
    ))
}

type IdemRecord<'a> =
    diesel::dsl::Find<idempotency_records::table, (&'a str, &'a str, &'a str, &'a str)>;
type InFlightUnder<'a> = diesel::dsl::And<
    diesel::dsl::Eq<idempotency_records::state, &'static str>,
    diesel::dsl::Eq<idempotency_records::owner, &'a str>,
>;

/// The record while it is in flight under `owner`.
fn owned_in_flight<'a>(
    s: &'a IdemScope,
    owner: &'a str,
) -> diesel::dsl::Filter<IdemRecord<'a>, InFlightUnder<'a>> {
    idem_filter(s).filter(
        idempotency_records::state
            .eq("in_flight")
            .and(idempotency_records::owner.eq(owner)),
    )
}

fn lease_until(now: DateTime<Utc>) -> DateTime<Utc> {
    now + chrono::Duration::seconds(LEASE_SECS)
}

#[async_trait]
impl IdempotencyStore for PgIdempotency {
    async fn claim(
        &self,
        s: &IdemScope,
        owner: &str,
        now: DateTime<Utc>,
    ) -> Result<Claim, StoreError> {
        let mut conn = self.db.conn().await?;
        // Insert, or take over an in-flight record whose lease ran out; either way we own it.
        use diesel::sql_types::{Text, Timestamptz};
        let claimed = diesel::sql_query(
            "INSERT INTO idempotency_records \
                 (scope, method, route, idem_key, state, owner, lease_expires_at, created_at) \
             VALUES ($1, $2, $3, $4, 'in_flight', $5, $7, $6) \
             ON CONFLICT (scope, method, route, idem_key) DO UPDATE \
                 SET owner = EXCLUDED.owner, lease_expires_at = EXCLUDED.lease_expires_at, \
                     created_at = EXCLUDED.created_at \
             WHERE idempotency_records.state = 'in_flight' \
               AND COALESCE(idempotency_records.lease_expires_at, \
                            idempotency_records.created_at + interval '300 seconds') < $6",
        )
        .bind::<Text, _>(&s.scope)
        .bind::<Text, _>(&s.method)
        .bind::<Text, _>(&s.route)
        .bind::<Text, _>(&s.key)
        .bind::<Text, _>(owner)
        .bind::<Timestamptz, _>(now)
        .bind::<Timestamptz, _>(lease_until(now))
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        if claimed == 1 {
            return Ok(Claim::Claimed);
        }
        type Row = (
            String,
            Option<Vec<u8>>,
            Option<i32>,
            Option<Vec<u8>>,
            Option<Value>,
        );
        let row: Option<Row> = idem_filter(s)
            .select((
                idempotency_records::state,
                idempotency_records::fingerprint,
                idempotency_records::status,
                idempotency_records::response_body,
                idempotency_records::response,
            ))
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        Ok(match row {
            Some((state, fp, status, body, legacy)) if state == "done" => Claim::Done {
                fingerprint: fp.unwrap_or_default(),
                status: status.and_then(|s| u16::try_from(s).ok()).unwrap_or(200),
                // records completed before migration 6 hold the response as jsonb
                response: body
                    .or_else(|| legacy.and_then(|v| serde_json::to_vec(&v).ok()))
                    .unwrap_or_default(),
            },
            Some(_) => Claim::InFlight,
            // released between our insert attempt and the read: the caller may retry
            None => Claim::InFlight,
        })
    }

    async fn renew(
        &self,
        s: &IdemScope,
        owner: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let mut conn = self.db.conn().await?;
        diesel::update(owned_in_flight(s, owner))
            .set(idempotency_records::lease_expires_at.eq(lease_until(now)))
            .execute(&mut conn)
            .await
            .map(|n| n == 1)
            .map_err(db_error)
    }

    async fn complete(
        &self,
        s: &IdemScope,
        owner: &str,
        fingerprint: &[u8],
        status: u16,
        response: &[u8],
    ) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        diesel::update(owned_in_flight(s, owner))
            .set((
                idempotency_records::state.eq("done"),
                idempotency_records::fingerprint.eq(fingerprint),
                idempotency_records::status.eq(i32::from(status)),
                idempotency_records::response_body.eq(response),
                idempotency_records::owner.eq(None::<String>),
                idempotency_records::lease_expires_at.eq(None::<DateTime<Utc>>),
            ))
            .execute(&mut conn)
            .await
            .map(|_| ())
            .map_err(db_error)
    }

    async fn release(&self, s: &IdemScope, owner: &str) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        diesel::delete(owned_in_flight(s, owner))
            .execute(&mut conn)
            .await
            .map(|_| ())
            .map_err(db_error)
    }

    async fn sweep(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        let mut conn = self.db.conn().await?;
        diesel::delete(
            idempotency_records::table.filter(idempotency_records::created_at.lt(before)),
        )
        .execute(&mut conn)
        .await
        .map(|n| n as u64)
        .map_err(db_error)
    }
}
