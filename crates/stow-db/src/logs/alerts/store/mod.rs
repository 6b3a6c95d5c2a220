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

#[derive(QueryableByName)]
struct DestinationRow {
    #[diesel(sql_type = Text)]
    id: String,
    #[diesel(sql_type = Text)]
    org_id: String,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    kind: String,
    #[diesel(sql_type = Text)]
    url_hint: String,
    #[diesel(sql_type = Bytea)]
    sealed: Vec<u8>,
    #[diesel(sql_type = Text)]
    created_by: String,
    #[diesel(sql_type = Timestamptz)]
    created_at: DateTime<Utc>,
    #[diesel(sql_type = Timestamptz)]
    updated_at: DateTime<Utc>,
}

impl From<DestinationRow> for Destination {
    fn from(r: DestinationRow) -> Self {
        Destination {
            id: r.id,
            org_id: OrgId::new(r.org_id),
            name: r.name,
            kind: DestinationKind::parse(&r.kind).unwrap_or(DestinationKind::Webhook),
            url_hint: r.url_hint,
            sealed: r.sealed,
            created_by: r.created_by,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

const DESTINATION_COLUMNS: &str =
    "id, org_id, name, kind, url_hint, sealed, created_by, created_at, updated_at";

#[derive(QueryableByName)]
pub(super) struct RuleRow {
    #[diesel(sql_type = Text)]
    id: String,
    #[diesel(sql_type = Text)]
    org_id: String,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    saved_search_id: String,
    #[diesel(sql_type = Text)]
    kind: String,
    #[diesel(sql_type = Nullable<BigInt>)]
    threshold: Option<i64>,
    #[diesel(sql_type = Nullable<Integer>)]
    window_minutes: Option<i32>,
    #[diesel(sql_type = Nullable<Integer>)]
    cooldown_minutes: Option<i32>,
    #[diesel(sql_type = Nullable<Text>)]
    group_by: Option<String>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    muted_until: Option<DateTime<Utc>>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    last_fired_at: Option<DateTime<Utc>>,
    #[diesel(sql_type = Array<Text>)]
    destination_ids: Vec<String>,
    #[diesel(sql_type = Text)]
    created_by: String,
    #[diesel(sql_type = Timestamptz)]
    created_at: DateTime<Utc>,
    #[diesel(sql_type = Timestamptz)]
    updated_at: DateTime<Utc>,
}

/// The trigger of stored columns (the table's check keeps them consistent).
fn trigger_of(
    kind: &str,
    threshold: Option<i64>,
    window: Option<i32>,
    cooldown: Option<i32>,
) -> Trigger {
    match (kind, threshold, window) {
        ("threshold", Some(t), Some(w)) => Trigger::Threshold {
            count: t.max(1) as u64,
            window: Duration::minutes(i64::from(w)),
            cooldown: Duration::minutes(i64::from(cooldown.unwrap_or(0))),
        },
        _ => Trigger::EveryMatch,
    }
}

impl From<RuleRow> for AlertRule {
    fn from(r: RuleRow) -> Self {
        AlertRule {
            id: r.id,
            org_id: OrgId::new(r.org_id),
            spec: RuleSpec {
                name: r.name,
                saved_search_id: r.saved_search_id,
                trigger: trigger_of(&r.kind, r.threshold, r.window_minutes, r.cooldown_minutes),
                group_by: r.group_by.as_deref().and_then(GroupBy::parse),
                destination_ids: r.destination_ids,
            },
            muted_until: r.muted_until,
            last_fired_at: r.last_fired_at,
            created_by: r.created_by,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

/// Rules with their destinations (in the order given) and when they last fired, as
/// [`RuleRow`] reads them (from `alert_rules r`).
pub(super) const RULE_COLUMNS: &str =
    "r.id, r.org_id, r.name, r.saved_search_id, r.kind, r.threshold, \
     r.window_minutes, r.cooldown_minutes, r.group_by, r.muted_until, \
     (SELECT max(f.fired_at) FROM alert_firings f WHERE f.rule_id = r.id) \
       AS last_fired_at, \
     ARRAY(SELECT d.destination_id FROM alert_rule_destinations d WHERE d.rule_id = r.id \
           ORDER BY d.position) AS destination_ids, \
     r.created_by, r.created_at, r.updated_at";

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
async fn references(conn: &mut AsyncPgConnection, r: &AlertRule) -> QueryResult<Option<AlertPut>> {
    #[derive(QueryableByName)]
    struct Id {
        #[diesel(sql_type = Text)]
        id: String,
    }
    // the saved search's row is held until the commit: a delete of it in progress is waited
    // for (and then it is gone: 404), and one that comes later sees this rule and refuses (409)
    let search: Option<Id> = diesel::sql_query(
        "SELECT id FROM saved_searches WHERE org_id = $1 AND id = $2 FOR KEY SHARE",
    )
    .bind::<Text, _>(r.org_id.as_str())
    .bind::<Text, _>(&r.spec.saved_search_id)
    .get_result(conn)
    .await
    .optional()?;
    if search.is_none() {
        return Ok(Some(AlertPut::UnknownSavedSearch(
            r.spec.saved_search_id.clone(),
        )));
    }
    let have: Vec<Id> =
        diesel::sql_query("SELECT id FROM alert_destinations WHERE org_id = $1 AND id = ANY($2)")
            .bind::<Text, _>(r.org_id.as_str())
            .bind::<Array<Text>, _>(&r.spec.destination_ids)
            .load(conn)
            .await?;
    Ok(r.spec
        .destination_ids
        .iter()
        .find(|d| !have.iter().any(|h| &h.id == *d))
        .map(|d| AlertPut::UnknownDestination(d.clone())))
}

fn trigger_columns(t: Trigger) -> (&'static str, Option<i64>, Option<i32>, Option<i32>) {
    let parts = t.threshold();
    (
        t.kind(),
        parts.map(|p| p.0 as i64),
        parts.map(|p| p.1 as i32),
        parts.map(|p| p.2 as i32),
    )
}

/// The member or key a rule acts as: whoever saved it (`audit`'s actor). Anyone else (an
/// operator, the service) is no maker: such a rule watches nothing.
fn maker(audit: &Audit) -> (Option<&'static str>, Option<&str>) {
    match &audit.actor {
        auth_core::audit::Actor::Member { id, .. } => (Some("member"), Some(id.as_str())),
        auth_core::audit::Actor::Key { id, .. } => (Some("key"), Some(id.as_str())),
        _ => (None, None),
    }
}

/// Writes the rule and its destinations; the rule acts as `audit`'s actor from now on.
async fn write_rule(
    conn: &mut AsyncPgConnection,
    r: &AlertRule,
    create: bool,
    audit: &Audit,
) -> QueryResult<()> {
    let (kind, threshold, window, cooldown) = trigger_columns(r.spec.trigger);
    let (maker_kind, maker_id) = maker(audit);
    if create {
        diesel::sql_query(
            "INSERT INTO alert_rules (id, org_id, name, saved_search_id, kind, threshold, \
             window_minutes, cooldown_minutes, group_by, muted_until, created_by, created_at, \
             updated_at, maker_kind, maker_id) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12, $13, $14)",
        )
        .bind::<Text, _>(&r.id)
        .bind::<Text, _>(r.org_id.as_str())
        .bind::<Text, _>(&r.spec.name)
        .bind::<Text, _>(&r.spec.saved_search_id)
        .bind::<Text, _>(kind)
        .bind::<Nullable<BigInt>, _>(threshold)
        .bind::<Nullable<Integer>, _>(window)
        .bind::<Nullable<Integer>, _>(cooldown)
        .bind::<Nullable<Text>, _>(r.spec.group_by.map(GroupBy::as_str))
        .bind::<Nullable<Timestamptz>, _>(r.muted_until)
        .bind::<Text, _>(&r.created_by)
        .bind::<Timestamptz, _>(r.created_at)
        .bind::<Nullable<Text>, _>(maker_kind)
        .bind::<Nullable<Text>, _>(maker_id)
        .execute(conn)
        .await?;
    } else {
        diesel::sql_query(
            "UPDATE alert_rules SET name = $3, saved_search_id = $4, kind = $5, threshold = $6, \
             window_minutes = $7, cooldown_minutes = $8, group_by = $9, muted_until = $10, \
             updated_at = $11, maker_kind = $12, maker_id = $13 WHERE id = $1 AND org_id = $2",
        )
        .bind::<Text, _>(&r.id)
        .bind::<Text, _>(r.org_id.as_str())
        .bind::<Text, _>(&r.spec.name)
        .bind::<Text, _>(&r.spec.saved_search_id)
        .bind::<Text, _>(kind)
        .bind::<Nullable<BigInt>, _>(threshold)
        .bind::<Nullable<Integer>, _>(window)
        .bind::<Nullable<Integer>, _>(cooldown)
        .bind::<Nullable<Text>, _>(r.spec.group_by.map(GroupBy::as_str))
        .bind::<Nullable<Timestamptz>, _>(r.muted_until)
        .bind::<Timestamptz, _>(r.updated_at)
        .bind::<Nullable<Text>, _>(maker_kind)
        .bind::<Nullable<Text>, _>(maker_id)
        .execute(conn)
        .await?;
    }
    diesel::sql_query("DELETE FROM alert_rule_destinations WHERE rule_id = $1")
        .bind::<Text, _>(&r.id)
        .execute(conn)
        .await?;
    diesel::sql_query(
        "INSERT INTO alert_rule_destinations (rule_id, destination_id, position) \
         SELECT $1, d, p::int FROM unnest($2::text[]) WITH ORDINALITY AS u(d, p)",
    )
    .bind::<Text, _>(&r.id)
    .bind::<Array<Text>, _>(&r.spec.destination_ids)
    .execute(conn)
    .await?;
    bump_version(conn).await
}

async fn rule_of(
    conn: &mut AsyncPgConnection,
    org: &OrgId,
    id: &str,
) -> QueryResult<Option<AlertRule>> {
    let row: Option<RuleRow> = diesel::sql_query(format!(
        "SELECT {RULE_COLUMNS} FROM alert_rules r WHERE r.org_id = $1 AND r.id = $2"
    ))
    .bind::<Text, _>(org.as_str())
    .bind::<Text, _>(id)
    .get_result(conn)
    .await
    .optional()?;
    Ok(row.map(Into::into))
}

/// Whether the change to a rule starts its threshold memory again.
fn resets_memory(before: &AlertRule, after: &AlertRule) -> bool {
    before.spec.trigger != after.spec.trigger
        || before.spec.group_by != after.spec.group_by
        || before.spec.saved_search_id != after.spec.saved_search_id
}

/// The columns of [`DeliveryRow`].
const DELIVERY_COLUMNS: &str = "id, seq, destination_id, rule_id, status, attempts, \
     next_attempt_at, last_code, last_error, created_at, delivered_at";

#[derive(QueryableByName)]
struct DeliveryRow {
    #[diesel(sql_type = Text)]
    id: String,
    #[diesel(sql_type = BigInt)]
    seq: i64,
    #[diesel(sql_type = Text)]
    destination_id: String,
    #[diesel(sql_type = Nullable<Text>)]
    rule_id: Option<String>,
    #[diesel(sql_type = Text)]
    status: String,
    #[diesel(sql_type = Integer)]
    attempts: i32,
    #[diesel(sql_type = Timestamptz)]
    next_attempt_at: DateTime<Utc>,
    #[diesel(sql_type = Nullable<Integer>)]
    last_code: Option<i32>,
    #[diesel(sql_type = Nullable<Text>)]
    last_error: Option<String>,
    #[diesel(sql_type = Timestamptz)]
    created_at: DateTime<Utc>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    delivered_at: Option<DateTime<Utc>>,
}

impl From<DeliveryRow> for Delivery {
    fn from(r: DeliveryRow) -> Self {
        let status = DeliveryStatus::parse(&r.status).unwrap_or(DeliveryStatus::Pending);
        Delivery {
            id: r.id,
            seq: r.seq,
            destination_id: r.destination_id,
            rule_id: r.rule_id,
            status,
            attempts: r.attempts,
            next_attempt_at: (status == DeliveryStatus::Pending).then_some(r.next_attempt_at),
            last_code: r.last_code,
            last_error: r.last_error,
            created_at: r.created_at,
            delivered_at: r.delivered_at,
        }
    }
}

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
        let mut conn = self.db.conn().await?;
        let row: Option<DestinationRow> = diesel::sql_query(format!(
            "SELECT {DESTINATION_COLUMNS} FROM alert_destinations WHERE org_id = $1 AND id = $2"
        ))
        .bind::<Text, _>(org.as_str())
        .bind::<Text, _>(id)
        .get_result(&mut conn)
        .await
        .optional()
        .map_err(db_error)?;
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
        rule_of(&mut conn, org, id).await.map_err(db_error)
    }

    async fn create_rule(
        &self,
        r: &AlertRule,
        max: usize,
        audit: &Audit,
    ) -> Result<AlertPut, StoreError> {
        self.db
            .audited(|conn| {
                async move {
                    lock_org(conn, &r.org_id).await?;
                    if name_taken(conn, "alert_rules", &r.org_id, &r.id, &r.spec.name).await? {
                        return Ok((AlertPut::NameTaken, vec![]));
                    }
                    if count_of(conn, "alert_rules", &r.org_id).await? as usize >= max {
                        return Ok((AlertPut::LimitReached, vec![]));
                    }
                    if let Some(refused) = references(conn, r).await? {
                        return Ok((refused, vec![]));
                    }
                    write_rule(conn, r, true, audit).await?;
                    let entry = alert_store::rule_entry(audit, Action::AlertRuleCreate, r);
                    Ok((AlertPut::Done, vec![entry]))
                }
                .scope_boxed()
            })
            .await
    }

    async fn update_rule(&self, r: &AlertRule, audit: &Audit) -> Result<AlertPut, StoreError> {
        self.db
            .audited(|conn| {
                async move {
                    lock_org(conn, &r.org_id).await?;
                    let Some(before) = rule_of(conn, &r.org_id, &r.id).await? else {
                        return Ok((AlertPut::Missing, vec![]));
                    };
                    if name_taken(conn, "alert_rules", &r.org_id, &r.id, &r.spec.name).await? {
                        return Ok((AlertPut::NameTaken, vec![]));
                    }
                    if let Some(refused) = references(conn, r).await? {
                        return Ok((refused, vec![]));
                    }
                    write_rule(conn, r, false, audit).await?;
                    if resets_memory(&before, r) {
                        for table in ["alert_minute_counts", "alert_groups"] {
                            diesel::sql_query(format!("DELETE FROM {table} WHERE rule_id = $1"))
                                .bind::<Text, _>(&r.id)
                                .execute(conn)
                                .await?;
                        }
                    }
                    let entry = alert_store::rule_entry(audit, Action::AlertRuleChange, r);
                    Ok((AlertPut::Done, vec![entry]))
                }
                .scope_boxed()
            })
            .await
    }

    async fn delete_rule(&self, org: &OrgId, id: &str, audit: &Audit) -> Result<bool, StoreError> {
        self.db
            .audited(|conn| {
                async move {
                    lock_org(conn, org).await?;
                    let Some(rule) = rule_of(conn, org, id).await? else {
                        return Ok((false, vec![]));
                    };
                    diesel::sql_query("DELETE FROM alert_rules WHERE id = $1")
                        .bind::<Text, _>(id)
                        .execute(conn)
                        .await?;
                    bump_version(conn).await?;
                    let entry = alert_store::rule_entry(audit, Action::AlertRuleDelete, &rule);
                    Ok((true, vec![entry]))
                }
                .scope_boxed()
            })
            .await
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
        let mut conn = self.db.conn().await?;
        let row: Option<DeliveryRow> = diesel::sql_query(format!(
            "SELECT {DELIVERY_COLUMNS} FROM alert_deliveries WHERE org_id = $1 AND id = $2"
        ))
        .bind::<Text, _>(org.as_str())
        .bind::<Text, _>(id)
        .get_result(&mut conn)
        .await
        .optional()
        .map_err(db_error)?;
        Ok(row.map(Into::into))
    }

    async fn send_again(
        &self,
        org: &OrgId,
        id: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<bool>, StoreError> {
        let mut conn = self.db.conn().await?;
        let n = diesel::sql_query(
            "UPDATE alert_deliveries SET status = 'pending', next_attempt_at = $3, \
             give_up_at = $4, attempts = 0, leased_until = NULL, delivered_at = NULL \
             WHERE org_id = $1 AND id = $2 AND status <> 'pending'",
        )
        .bind::<Text, _>(org.as_str())
        .bind::<Text, _>(id)
        .bind::<Timestamptz, _>(now)
        .bind::<Timestamptz, _>(now + RETRY_FOR)
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        if n > 0 {
            return Ok(Some(true));
        }
        #[derive(QueryableByName)]
        struct Found {
            #[diesel(sql_type = Bool)]
            found: bool,
        }
        let f: Found = diesel::sql_query(
            "SELECT EXISTS (SELECT 1 FROM alert_deliveries WHERE org_id = $1 AND id = $2) AS found",
        )
        .bind::<Text, _>(org.as_str())
        .bind::<Text, _>(id)
        .get_result(&mut conn)
        .await
        .map_err(db_error)?;
        Ok(f.found.then_some(false))
    }

    async fn send_test(
        &self,
        org: &OrgId,
        id: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<String>, StoreError> {
        let mut conn = self.db.conn().await?;
        let delivery = alert_store::new_delivery_id();
        let n = diesel::sql_query(
            "INSERT INTO alert_deliveries (id, org_id, destination_id, status, next_attempt_at, \
             give_up_at, created_at) SELECT $3, org_id, id, 'pending', $4, $5, $4 \
             FROM alert_destinations WHERE org_id = $1 AND id = $2",
        )
        .bind::<Text, _>(org.as_str())
        .bind::<Text, _>(id)
        .bind::<Text, _>(&delivery)
        .bind::<Timestamptz, _>(now)
        .bind::<Timestamptz, _>(now + RETRY_FOR)
        .execute(&mut conn)
        .await
        .map_err(db_error)?;
        Ok((n > 0).then_some(delivery))
    }
}
