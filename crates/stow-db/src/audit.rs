//! Postgres [`AuditStore`] (migration 21), and [`append`], which the other adapters call inside
//! the transaction of the change an entry records.

use async_trait::async_trait;
use auth_core::audit::{
    Action, Actor, AuditEntry, AuditEvent, AuditQuery, AuditStore, Outcome, Via, MAX_PAGE,
};
use auth_core::{OrgId, StoreError};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::Value;

use crate::schema::audit_events as t;
use crate::{db_error, Db};

#[derive(Insertable)]
#[diesel(table_name = t)]
struct NewRow<'a> {
    org_id: &'a str,
    actor_kind: &'a str,
    actor_id: &'a str,
    actor_label: &'a str,
    via: &'a str,
    address: Option<&'a str>,
    request_id: Option<&'a str>,
    action: &'a str,
    target: &'a str,
    details: &'a Value,
    refused: Option<&'a str>,
}

impl<'a> From<&'a AuditEntry> for NewRow<'a> {
    fn from(e: &'a AuditEntry) -> Self {
        NewRow {
            org_id: &e.org_id,
            actor_kind: e.actor.kind(),
            actor_id: e.actor.id(),
            actor_label: e.actor.label(),
            via: e.via.as_str(),
            address: e.address.as_deref(),
            request_id: e.request_id.as_deref(),
            action: e.action.as_str(),
            target: &e.target,
            details: &e.details,
            refused: match &e.outcome {
                Outcome::Done => None,
                Outcome::Refused { reason } => Some(reason),
            },
        }
    }
}

/// Writes entries on `conn` (in the caller's transaction). Nothing for an empty list.
pub(crate) async fn append(
    conn: &mut AsyncPgConnection,
    entries: &[AuditEntry],
) -> diesel::QueryResult<()> {
    // one statement per thousand rows keeps binds under Postgres' limit (13 per row)
    for chunk in entries.chunks(1000) {
        let rows: Vec<NewRow<'_>> = chunk.iter().map(NewRow::from).collect();
        diesel::insert_into(t::table)
            .values(&rows)
            .execute(conn)
            .await?;
    }
    Ok(())
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = t)]
struct Row {
    id: i64,
    org_id: String,
    at: DateTime<Utc>,
    actor_kind: String,
    actor_id: String,
    actor_label: String,
    via: String,
    address: Option<String>,
    request_id: Option<String>,
    action: String,
    target: String,
    details: Value,
    refused: Option<String>,
}

impl Row {
    /// The event, or `None` for a row this build cannot read (a newer action or actor kind).
    fn into_event(self) -> Option<AuditEvent> {
        Some(AuditEvent {
            id: self.id,
            at: self.at,
            entry: AuditEntry {
                org_id: OrgId::new(self.org_id),
                actor: Actor::from_stored(&self.actor_kind, self.actor_id, self.actor_label)?,
                via: Via::parse(&self.via)?,
                address: self.address,
                request_id: self.request_id,
                action: Action::parse(&self.action)?,
                target: self.target,
                details: self.details,
                outcome: match self.refused {
                    None => Outcome::Done,
                    Some(reason) => Outcome::Refused { reason },
                },
            },
        })
    }
}

pub struct PgAudit {
    db: Db,
}

impl PgAudit {
    pub fn new(db: Db) -> Self {
        Self { db }
    }
}

/// `LIKE` pattern matching strings that start with `prefix`.
fn starts_with(prefix: &str) -> String {
    let mut p = String::with_capacity(prefix.len() + 1);
    for c in prefix.chars() {
        if matches!(c, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}

#[async_trait]
impl AuditStore for PgAudit {
    async fn record(&self, entries: &[AuditEntry]) -> Result<(), StoreError> {
        let mut conn = self.db.conn().await?;
        append(&mut conn, entries).await.map_err(db_error)
    }

    async fn page(&self, org: &OrgId, q: &AuditQuery) -> Result<Vec<AuditEvent>, StoreError> {
        let mut conn = self.db.conn().await?;
        let mut query = t::table
            .filter(t::org_id.eq(org.as_str()))
            .select(Row::as_select())
            .order(t::id.desc())
            .limit(q.limit.min(MAX_PAGE) as i64)
            .into_boxed();
        if let Some(actor) = &q.actor {
            query = query.filter(t::actor_id.eq(actor.clone()));
        }
        if !q.actions.is_empty() {
            let names: Vec<&str> = q.actions.iter().map(|a| a.as_str()).collect();
            query = query.filter(t::action.eq_any(names));
        }
        if let Some(prefix) = &q.target_prefix {
            query = query.filter(t::target.like(starts_with(prefix)).escape('\\'));
        }
        match q.refused {
            Some(true) => query = query.filter(t::refused.is_not_null()),
            Some(false) => query = query.filter(t::refused.is_null()),
            None => {}
        }
        if let Some(since) = q.since {
            query = query.filter(t::at.ge(since));
        }
        if let Some(until) = q.until {
            query = query.filter(t::at.lt(until));
        }
        if let Some(before) = q.before {
            query = query.filter(t::id.lt(before));
        }
        let rows: Vec<Row> = query.load(&mut conn).await.map_err(db_error)?;
        Ok(rows.into_iter().filter_map(Row::into_event).collect())
    }

    async fn prune(&self, org: &OrgId, before: DateTime<Utc>) -> Result<u64, StoreError> {
        let mut conn = self.db.conn().await?;
        diesel::delete(
            t::table
                .filter(t::org_id.eq(org.as_str()))
                .filter(t::at.lt(before)),
        )
        .execute(&mut conn)
        .await
        .map(|n| n as u64)
        .map_err(db_error)
    }
}

/// The log of the accounts' database (so one store holds accounts, members and their log).
#[async_trait]
impl AuditStore for crate::PgAccounts {
    async fn record(&self, entries: &[AuditEntry]) -> Result<(), StoreError> {
        PgAudit::new(self.db().clone()).record(entries).await
    }

    async fn page(&self, org: &OrgId, q: &AuditQuery) -> Result<Vec<AuditEvent>, StoreError> {
        PgAudit::new(self.db().clone()).page(org, q).await
    }

    async fn prune(&self, org: &OrgId, before: DateTime<Utc>) -> Result<u64, StoreError> {
        PgAudit::new(self.db().clone()).prune(org, before).await
    }
}

/// Deletes every organization's entries older than its retention
/// ([`auth_core::audit::retention_days`]), in chunks; how many. A failure is logged and left to
/// the next run.
pub async fn prune_expired(db: &Db) -> u64 {
    const CHUNK: i64 = 5000;
    let mut conn = match db.conn().await {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!(error = %e, "pruning the audit log: no connection");
            return 0;
        }
    };
    let mut pruned = 0;
    loop {
        let deleted = diesel::sql_query(
            "DELETE FROM audit_events WHERE id = ANY (ARRAY( \
               SELECT a.id FROM audit_events a \
               JOIN organizations o ON o.id = a.org_id JOIN plans p ON p.name = o.plan \
               WHERE a.at < now() - make_interval(days => GREATEST(p.retention_days, $1)) \
               LIMIT $2))",
        )
        .bind::<diesel::sql_types::Integer, _>(auth_core::audit::MIN_RETENTION_DAYS as i32)
        .bind::<diesel::sql_types::BigInt, _>(CHUNK)
        .execute(&mut conn)
        .await;
        match deleted {
            Ok(n) => {
                pruned += n as u64;
                if (n as i64) < CHUNK {
                    return pruned;
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "pruning the audit log failed");
                return pruned;
            }
        }
    }
}
