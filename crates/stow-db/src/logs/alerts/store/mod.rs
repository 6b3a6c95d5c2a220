//! Alert rules, destinations and the delivery log ([`AlertStore`], migration 29). Changes of one
//! organization take turns on its row (`lock_org`), so limits and name checks hold under
//! concurrent requests; every change bumps the rules' version the commit path reads.

use async_trait::async_trait;
use auth_core::audit::{Action, Audit};
use auth_core::{OrgId, StoreError};
use chrono::{DateTime, Duration, Utc};
use diesel::sql_types::{Array, BigInt, Bool, Bytea, Integer, Nullable, Text, Timestamptz};
use diesel::{OptionalExtension, QueryResult, QueryableByName};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use logs_core::alert_store::{
    self, AlertPut, AlertRule, AlertStore, Delivery, DeliveryQuery, DeliveryStatus, Destination,
    DestinationDelete, DestinationKind,
};
use logs_core::alerts::{GroupBy, RuleSpec, Trigger};

use crate::{db_error, lock_org, Db};

mod deliveries;
mod rows;
mod rules;
use rows::*;
pub(in crate::logs::alerts) use rows::{RuleRow, RULE_COLUMNS};

/// How long a delivery is retried after it is queued (or sent again).
pub const RETRY_FOR: Duration = Duration::hours(24);

pub struct PgAlerts {
    pub(crate) db: Db,
}

impl PgAlerts {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

/// Tells the commit path that rules changed (it reloads them on its next commit).
pub(crate) async fn bump_version(conn: &mut AsyncPgConnection) -> QueryResult<()> {
    diesel::sql_query("UPDATE alert_rules_version SET v = v + 1")
        .execute(conn)
        .await
        .map(drop)
}

/// The row `id` of `org` in `table` (a destination, a delivery), read as `R` through `columns`.
async fn one_of_org<R>(
    db: &Db,
    columns: &str,
    table: &str,
    org: &OrgId,
    id: &str,
) -> Result<Option<R>, StoreError>
where
    R: QueryableByName<diesel::pg::Pg> + Send + 'static,
{
    let mut conn = db.conn().await?;
    diesel::sql_query(format!(
        "SELECT {columns} FROM {table} WHERE org_id = $1 AND id = $2"
    ))
    .bind::<Text, _>(org.as_str())
    .bind::<Text, _>(id)
    .get_result(&mut conn)
    .await
    .optional()
    .map_err(db_error)
}

fn by_name<T>(list: &mut [T], name: impl Fn(&T) -> (String, String)) {
    list.sort_by_key(|x| name(x));
}

async fn name_taken(
    conn: &mut AsyncPgConnection,
    table: &str,
    org: &OrgId,
    id: &str,
    name: &str,
) -> QueryResult<bool> {
    #[derive(QueryableByName)]
    struct Taken {
        #[diesel(sql_type = Bool)]
        taken: bool,
    }
    let q = format!(
        "SELECT EXISTS (SELECT 1 FROM {table} WHERE org_id = $1 AND id <> $2 \
         AND lower(name) = lower($3)) AS taken"
    );
    let t: Taken = diesel::sql_query(q)
        .bind::<Text, _>(org.as_str())
        .bind::<Text, _>(id)
        .bind::<Text, _>(name)
        .get_result(conn)
        .await?;
    Ok(t.taken)
}

async fn count_of(conn: &mut AsyncPgConnection, table: &str, org: &OrgId) -> QueryResult<i64> {
    #[derive(QueryableByName)]
    struct N {
        #[diesel(sql_type = BigInt)]
        n: i64,
    }
    let n: N = diesel::sql_query(format!(
        "SELECT count(*) AS n FROM {table} WHERE org_id = $1"
    ))
    .bind::<Text, _>(org.as_str())
    .get_result(conn)
    .await?;
    Ok(n.n)
}

/// Checks that the rule's saved search and destinations are the organization's.
#[async_trait]
impl AlertStore for PgAlerts {
    async fn destinations(&self, org: &OrgId) -> Result<Vec<Destination>, StoreError> {
        let mut conn = self.db.conn().await?;
        let rows: Vec<DestinationRow> = diesel::sql_query(format!(
            "SELECT {DESTINATION_COLUMNS} FROM alert_destinations WHERE org_id = $1"
        ))
        .bind::<Text, _>(org.as_str())
        .load(&mut conn)
        .await
        .map_err(db_error)?;
        let mut list: Vec<Destination> = rows.into_iter().map(Into::into).collect();
        by_name(&mut list, |d| (d.name.to_lowercase(), d.id.clone()));
        Ok(list)
    }

    async fn destination(&self, org: &OrgId, id: &str) -> Result<Option<Destination>, StoreError> {
        let row: Option<DestinationRow> =
            one_of_org(&self.db, DESTINATION_COLUMNS, "alert_destinations", org, id).await?;
        Ok(row.map(Into::into))
    }

    async fn create_destination(
        &self,
        d: &Destination,
        max: usize,
        audit: &Audit,
    ) -> Result<AlertPut, StoreError> {
        self.db.audited(|conn| {
            async move {
                lock_org(conn, &d.org_id).await?;
                if name_taken(conn, "alert_destinations", &d.org_id, &d.id, &d.name).await? {
                    return Ok((AlertPut::NameTaken, vec![]));
                }
                if count_of(conn, "alert_destinations", &d.org_id).await? as usize >= max {
                    return Ok((AlertPut::LimitReached, vec![]));
                }
                diesel::sql_query(
                    "INSERT INTO alert_destinations (id, org_id, name, kind, url_hint, sealed, \
                     created_by, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                )
                .bind::<Text, _>(&d.id)
                .bind::<Text, _>(d.org_id.as_str())
                .bind::<Text, _>(&d.name)
                .bind::<Text, _>(d.kind.as_str())
                .bind::<Text, _>(&d.url_hint)
                .bind::<Bytea, _>(&d.sealed)
                .bind::<Text, _>(&d.created_by)
                .bind::<Timestamptz, _>(d.created_at)
                .bind::<Timestamptz, _>(d.updated_at)
                .execute(conn)
                .await?;
                let entry = alert_store::destination_entry(audit, Action::DestinationCreate, d, "");
                Ok((AlertPut::Done, vec![entry]))
            }
            .scope_boxed()
        })
        .await
    }

    async fn update_destination(
        &self,
        d: &Destination,
        what: &str,
        audit: &Audit,
    ) -> Result<AlertPut, StoreError> {
        self.db
            .audited(|conn| {
                async move {
                    lock_org(conn, &d.org_id).await?;
                    if name_taken(conn, "alert_destinations", &d.org_id, &d.id, &d.name).await? {
                        return Ok((AlertPut::NameTaken, vec![]));
                    }
                    let n = diesel::sql_query(
                        "UPDATE alert_destinations SET name = $3, url_hint = $4, sealed = $5, \
                     updated_at = $6, hold_until = NULL WHERE org_id = $1 AND id = $2",
                    )
                    .bind::<Text, _>(d.org_id.as_str())
                    .bind::<Text, _>(&d.id)
                    .bind::<Text, _>(&d.name)
                    .bind::<Text, _>(&d.url_hint)
                    .bind::<Bytea, _>(&d.sealed)
                    .bind::<Timestamptz, _>(d.updated_at)
                    .execute(conn)
                    .await?;
                    if n == 0 {
                        return Ok((AlertPut::Missing, vec![]));
                    }
                    let entry =
                        alert_store::destination_entry(audit, Action::DestinationChange, d, what);
                    Ok((AlertPut::Done, vec![entry]))
                }
                .scope_boxed()
            })
            .await
    }

    async fn delete_destination(
        &self,
        org: &OrgId,
        id: &str,
        audit: &Audit,
    ) -> Result<DestinationDelete, StoreError> {
        self.db
            .audited(|conn| {
                async move {
                    lock_org(conn, org).await?;
                    #[derive(QueryableByName)]
                    struct Name {
                        #[diesel(sql_type = Text)]
                        name: String,
                    }
                    let users: Vec<Name> = diesel::sql_query(
                        "SELECT r.name FROM alert_rules r JOIN alert_rule_destinations d \
                     ON d.rule_id = r.id WHERE r.org_id = $1 AND d.destination_id = $2 \
                     ORDER BY lower(r.name)",
                    )
                    .bind::<Text, _>(org.as_str())
                    .bind::<Text, _>(id)
                    .load(conn)
                    .await?;
                    if !users.is_empty() {
                        let names = users.into_iter().map(|n| n.name).collect();
                        return Ok((DestinationDelete::InUse(names), vec![]));
                    }
                    let gone: Option<DestinationRow> = diesel::sql_query(format!(
                        "DELETE FROM alert_destinations WHERE org_id = $1 AND id = $2 \
                     RETURNING {DESTINATION_COLUMNS}"
                    ))
                    .bind::<Text, _>(org.as_str())
                    .bind::<Text, _>(id)
                    .get_result(conn)
                    .await
                    .optional()?;
                    let Some(gone) = gone else {
                        return Ok((DestinationDelete::Missing, vec![]));
                    };
                    let entry = alert_store::destination_entry(
                        audit,
                        Action::DestinationDelete,
                        &gone.into(),
                        "",
                    );
                    Ok((DestinationDelete::Done, vec![entry]))
                }
                .scope_boxed()
            })
            .await
    }

    async fn rules(&self, org: &OrgId) -> Result<Vec<AlertRule>, StoreError> {
        let mut conn = self.db.conn().await?;
        let rows: Vec<RuleRow> = diesel::sql_query(format!(
            "SELECT {RULE_COLUMNS} FROM alert_rules r WHERE r.org_id = $1"
        ))
        .bind::<Text, _>(org.as_str())
        .load(&mut conn)
        .await
        .map_err(db_error)?;
        let mut list: Vec<AlertRule> = rows.into_iter().map(Into::into).collect();
        by_name(&mut list, |r| (r.spec.name.to_lowercase(), r.id.clone()));
        Ok(list)
    }

    async fn rule(&self, org: &OrgId, id: &str) -> Result<Option<AlertRule>, StoreError> {
        let mut conn = self.db.conn().await?;
        rules::rule_of(&mut conn, org, id).await.map_err(db_error)
    }

    async fn create_rule(
        &self,
        r: &AlertRule,
        max: usize,
        audit: &Audit,
    ) -> Result<AlertPut, StoreError> {
        rules::create(self, r, max, audit).await
    }

    async fn update_rule(&self, r: &AlertRule, audit: &Audit) -> Result<AlertPut, StoreError> {
        rules::update(self, r, audit).await
    }

    async fn delete_rule(&self, org: &OrgId, id: &str, audit: &Audit) -> Result<bool, StoreError> {
        rules::delete(self, org, id, audit).await
    }

    async fn deliveries(&self, q: &DeliveryQuery) -> Result<Vec<Delivery>, StoreError> {
        let mut conn = self.db.conn().await?;
        let rows: Vec<DeliveryRow> = diesel::sql_query(format!(
            "SELECT {DELIVERY_COLUMNS} FROM alert_deliveries \
             WHERE org_id = $1 AND ($2::text IS NULL OR rule_id = $2) \
             AND ($3::bigint IS NULL OR seq < $3) \
             AND ($5::text[] IS NULL OR rule_id IS NULL OR rule_id = ANY($5)) \
             ORDER BY seq DESC LIMIT $4"
        ))
        .bind::<Text, _>(q.org_id.as_str())
        .bind::<Nullable<Text>, _>(q.rule_id.as_deref())
        .bind::<Nullable<BigInt>, _>(q.before)
        .bind::<BigInt, _>(q.limit.min(alert_store::MAX_DELIVERY_PAGE) as i64)
        .bind::<Nullable<Array<Text>>, _>(q.only_rules.as_deref())
        .load(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(rows.into_iter().map(Into::into).collect())
    }

    async fn delivery(&self, org: &OrgId, id: &str) -> Result<Option<Delivery>, StoreError> {
        let row: Option<DeliveryRow> =
            one_of_org(&self.db, DELIVERY_COLUMNS, "alert_deliveries", org, id).await?;
        Ok(row.map(Into::into))
    }

    async fn send_again(
        &self,
        org: &OrgId,
        id: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<bool>, StoreError> {
        deliveries::send_again(self, org, id, now).await
    }

    async fn send_test(
        &self,
        org: &OrgId,
        id: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<String>, StoreError> {
        deliveries::send_test(self, org, id, now).await
    }
}
