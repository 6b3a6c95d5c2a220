//! Alert rules evaluated in the transaction that commits a group of batches (the outbox): the
//! firings and their deliveries are written with the events that caused them, so a firing is
//! never lost nor written for events that were not stored.
//!
//! Per commit: one read of the rules' version (the rules are reloaded, in the same
//! transaction, only when it moved); with rules watching the committed servers and events that
//! match them, threshold counts (one upsert into this session's shard of the count rows, so
//! concurrent commits do not wait on each other) and the touched groups' window sums
//! (one read); only groups that read would fire or clear are then taken (one upsert, key
//! order, in turn with other commits), read again and decided; then the firings and deliveries
//! (one insert each).

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};

use auth_core::{OrgId, PermissionSet, ServerId, ServerScope};
use chrono::{DateTime, Duration, Utc};
use diesel::sql_types::{Array, BigInt, Bool, Jsonb, Nullable, Text, Timestamptz};
use diesel::{QueryResult, QueryableByName};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use logs_core::alert_messages::Firing;
use logs_core::alert_store::{new_delivery_id, AlertRule};
use logs_core::alerts::{
    decide, evaluate, ActiveRule, Decision, GroupState, MakerReach, MinuteCount, Trigger,
};
use logs_core::saved::{parse_filters, SavedServers};
use logs_core::store::EventRow;

use super::store::{RuleRow, RETRY_FOR, RULE_COLUMNS};

mod rule_cache;
pub use rule_cache::RuleCache;

/// The committed events of one server.
pub struct Committed<'a> {
    pub org: &'a OrgId,
    pub server: &'a ServerId,
    pub events: Vec<EventRow>,
}

#[derive(QueryableByName)]
struct GroupRow {
    #[diesel(sql_type = Text)]
    rule_id: String,
    #[diesel(sql_type = Text)]
    grp: String,
    #[diesel(sql_type = Bool)]
    breached: bool,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    last_fired: Option<DateTime<Utc>>,
    #[diesel(sql_type = BigInt)]
    in_window: i64,
}

/// Evaluates `rules` on the committed events and writes what fired.
pub async fn record(
    conn: &mut AsyncPgConnection,
    rules: &[ActiveRule],
    committed: &[Committed<'_>],
    now: DateTime<Utc>,
) -> QueryResult<()> {
    let servers: Vec<(&OrgId, &ServerId, &[EventRow])> = committed
        .iter()
        .map(|c| (c.org, c.server, c.events.as_slice()))
        .collect();
    let matches = evaluate(rules, &servers, now);
    let mut firings: Vec<(&ActiveRule, Firing)> = matches
        .every
        .iter()
        .map(|(i, events)| (&rules[*i], Firing::every(&rules[*i], events, now)))
        .collect();
    if !matches.counts.is_empty() {
        let by_id: BTreeMap<&str, &ActiveRule> = rules.iter().map(|r| (r.id.as_str(), r)).collect();
        add_counts(conn, &matches.counts).await?;
        let groups = touched_groups(&matches.counts, &by_id, now);
        firings.extend(threshold_firings(conn, &by_id, &groups, now).await?);
    }
    if firings.is_empty() {
        return Ok(());
    }
    write_firings(conn, &firings, now).await
}

/// Adds a commit's per-minute counts (spread over 16 shards so concurrent commits of one group
/// do not queue on one row).
async fn add_counts(conn: &mut AsyncPgConnection, c: &[MinuteCount]) -> QueryResult<()> {
    diesel::sql_query(
        "INSERT INTO alert_minute_counts (rule_id, grp, minute, shard, n) \
         SELECT u.rule_id, u.grp, u.minute, pg_backend_pid() % 16, u.n \
         FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::int8[]) \
           AS u(rule_id, grp, minute, n) JOIN alert_rules r ON r.id = u.rule_id \
         ORDER BY u.rule_id, u.grp, u.minute \
         ON CONFLICT (rule_id, grp, minute, shard) \
         DO UPDATE SET n = alert_minute_counts.n + excluded.n",
    )
    .bind::<Array<Text>, _>(c.iter().map(|m| m.rule_id.as_str()).collect::<Vec<_>>())
    .bind::<Array<Text>, _>(c.iter().map(|m| m.group.as_str()).collect::<Vec<_>>())
    .bind::<Array<Timestamptz>, _>(c.iter().map(|m| m.minute).collect::<Vec<_>>())
    .bind::<Array<BigInt>, _>(c.iter().map(|m| m.n as i64).collect::<Vec<_>>())
    .execute(conn)
    .await
    .map(|_| ())
}

/// The touched groups, each once, in key order; with the first minute of their rule's window.
fn touched_groups<'c>(
    c: &'c [MinuteCount],
    by_id: &BTreeMap<&str, &ActiveRule>,
    now: DateTime<Utc>,
) -> Vec<(&'c str, &'c str, DateTime<Utc>)> {
    let mut groups: Vec<(&str, &str, DateTime<Utc>)> = Vec::new();
    for m in c {
        if groups
            .last()
            .is_some_and(|(r, g, _)| *r == m.rule_id && *g == m.group)
        {
            continue;
        }
        let window = match by_id.get(m.rule_id.as_str()).map(|r| r.trigger) {
            Some(Trigger::Threshold { window, .. }) => window,
            _ => Duration::minutes(1),
        };
        let since = logs_core::alerts::minute_of(now) - window + Duration::minutes(1);
        groups.push((m.rule_id.as_str(), m.group.as_str(), since));
    }
    groups
}

/// What a group's window decides, from a row of [`windows`].
fn decided(
    rule: &ActiveRule,
    row: &GroupRow,
    now: DateTime<Utc>,
) -> Option<(Decision, GroupState, GroupState, u64)> {
    let Trigger::Threshold {
        count, cooldown, ..
    } = rule.trigger
    else {
        return None;
    };
    let state = GroupState {
        breached: row.breached,
        last_fired: row.last_fired,
    };
    let in_window = row.in_window.max(0) as u64;
    let (decision, next) = decide(state, in_window, count, cooldown, now);
    Some((decision, state, next, in_window))
}

/// The threshold firings of the touched groups, with their state written back.
///
/// The windows are read without locks; only groups this read would change (a new breach, a
/// lasting one past its cool-down, one that is over) are taken and read again. A lasting breach
/// with nothing to send takes no lock: commits of a group that stays over its threshold do not
/// wait on each other.
async fn threshold_firings<'r>(
    conn: &mut AsyncPgConnection,
    by_id: &BTreeMap<&str, &'r ActiveRule>,
    groups: &[(&str, &str, DateTime<Utc>)],
    now: DateTime<Utc>,
) -> QueryResult<Vec<(&'r ActiveRule, Firing)>> {
    let read = windows(conn, groups, now).await?;
    let due: HashSet<(&str, &str)> = read
        .iter()
        .filter(|row| {
            by_id
                .get(row.rule_id.as_str())
                .and_then(|rule| decided(rule, row, now))
                .is_some_and(|(decision, ..)| decision != Decision::Hold)
        })
        .map(|row| (row.rule_id.as_str(), row.grp.as_str()))
        .collect();
    let deciding: Vec<(&str, &str, DateTime<Utc>)> = groups
        .iter()
        .filter(|(r, g, _)| due.contains(&(*r, *g)))
        .copied()
        .collect();
    if deciding.is_empty() {
        return Ok(Vec::new());
    }
    take_groups(conn, &deciding).await?;
    let mut firings = Vec::new();
    let mut changed: Vec<(String, String, bool, Option<DateTime<Utc>>)> = Vec::new();
    for row in windows(conn, &deciding, now).await? {
        let Some(rule) = by_id.get(row.rule_id.as_str()).copied() else {
            continue;
        };
        let Some((decision, state, next, in_window)) = decided(rule, &row, now) else {
            continue;
        };
        if decision == Decision::Fire {
            let group = rule.group_by.map(|by| (by, row.grp.as_str()));
            firings.push((rule, Firing::breach(rule, group, in_window, now)));
        }
        if next != state {
            changed.push((row.rule_id, row.grp, next.breached, next.last_fired));
        }
    }
    if !changed.is_empty() {
        diesel::sql_query(
            "UPDATE alert_groups g SET breached = u.b, last_fired = u.f \
             FROM unnest($1::text[], $2::text[], $3::bool[], $4::timestamptz[]) AS u(r, grp, b, f) \
             WHERE g.rule_id = u.r AND g.grp = u.grp",
        )
        .bind::<Array<Text>, _>(changed.iter().map(|c| c.0.as_str()).collect::<Vec<_>>())
        .bind::<Array<Text>, _>(changed.iter().map(|c| c.1.as_str()).collect::<Vec<_>>())
        .bind::<Array<Bool>, _>(changed.iter().map(|c| c.2).collect::<Vec<_>>())
        .bind::<Array<Nullable<Timestamptz>>, _>(changed.iter().map(|c| c.3).collect::<Vec<_>>())
        .execute(conn)
        .await?;
    }
    Ok(firings)
}

/// Each group's matching events in its window (`groups`: rule, group, the window's first
/// minute) with every count committed before this statement, and its state.
async fn windows(
    conn: &mut AsyncPgConnection,
    groups: &[(&str, &str, DateTime<Utc>)],
    now: DateTime<Utc>,
) -> QueryResult<Vec<GroupRow>> {
    diesel::sql_query(
        "SELECT u.r AS rule_id, u.g AS grp, coalesce(s.breached, false) AS breached, \
           s.last_fired, \
           (SELECT coalesce(sum(c.n), 0)::int8 FROM alert_minute_counts c \
            WHERE c.rule_id = u.r AND c.grp = u.g AND c.minute >= u.since \
            AND c.minute <= $4) AS in_window \
         FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS u(r, g, since) \
         LEFT JOIN alert_groups s ON s.rule_id = u.r AND s.grp = u.g",
    )
    .bind::<Array<Text>, _>(groups.iter().map(|g| g.0).collect::<Vec<_>>())
    .bind::<Array<Text>, _>(groups.iter().map(|g| g.1).collect::<Vec<_>>())
    .bind::<Array<Timestamptz>, _>(groups.iter().map(|g| g.2).collect::<Vec<_>>())
    .bind::<Timestamptz, _>(logs_core::alerts::minute_of(now))
    .load(conn)
    .await
}

/// Takes the groups' rows (made when missing) in key order, until the commit: two commits
/// deciding one group take turns, and key order means no deadlock. A read after this sees every
/// count of the commits that had the rows before.
async fn take_groups(
    conn: &mut AsyncPgConnection,
    groups: &[(&str, &str, DateTime<Utc>)],
) -> QueryResult<()> {
    diesel::sql_query(
        "INSERT INTO alert_groups (rule_id, grp, breached) \
         SELECT u.r, u.g, false FROM unnest($1::text[], $2::text[]) AS u(r, g) \
         JOIN alert_rules ar ON ar.id = u.r ORDER BY u.r, u.g \
         ON CONFLICT (rule_id, grp) DO UPDATE SET breached = alert_groups.breached",
    )
    .bind::<Array<Text>, _>(groups.iter().map(|g| g.0).collect::<Vec<_>>())
    .bind::<Array<Text>, _>(groups.iter().map(|g| g.1).collect::<Vec<_>>())
    .execute(conn)
    .await
    .map(drop)
}

/// The firings and one delivery per destination of their rule, in firing order. Every insert
/// here joins `alert_rules`: a rule deleted since the rules were loaded gets nothing (rather
/// than failing the batches' commit on its foreign key).
async fn write_firings(
    conn: &mut AsyncPgConnection,
    firings: &[(&ActiveRule, Firing)],
    now: DateTime<Utc>,
) -> QueryResult<()> {
    let ids: Vec<String> = firings
        .iter()
        .map(|_| format!("fir_{}", ulid::Ulid::new()))
        .collect();
    let bodies: Vec<serde_json::Value> = firings
        .iter()
        .map(|(_, f)| serde_json::to_value(f).unwrap_or_default())
        .collect();
    diesel::sql_query(
        "INSERT INTO alert_firings (id, rule_id, fired_at, body) \
         SELECT u.i, u.r, $3, u.b FROM unnest($1::text[], $2::text[], $4::jsonb[]) AS u(i, r, b) \
         JOIN alert_rules r ON r.id = u.r",
    )
    .bind::<Array<Text>, _>(&ids)
    .bind::<Array<Text>, _>(
        firings
            .iter()
            .map(|(r, _)| r.id.as_str())
            .collect::<Vec<_>>(),
    )
    .bind::<Timestamptz, _>(now)
    .bind::<Array<Jsonb>, _>(&bodies)
    .execute(conn)
    .await?;
    // a delivery per destination of each firing's rule, numbered in firing order
    let delivery_ids: Vec<String> = (0..firings.len() * logs_core::alerts::MAX_DESTINATIONS)
        .map(|_| new_delivery_id())
        .collect();
    diesel::sql_query(
        "INSERT INTO alert_deliveries (id, org_id, destination_id, firing_id, rule_id, status, \
         next_attempt_at, give_up_at, created_at) \
         SELECT ($4::text[])[(f.o - 1) * $5 + d.position], r.org_id, d.destination_id, f.i, \
           f.r, 'pending', $2, $3, $2 \
         FROM unnest($1::text[], $6::text[]) WITH ORDINALITY AS f(i, r, o) \
         JOIN alert_rules r ON r.id = f.r \
         JOIN alert_rule_destinations d ON d.rule_id = f.r \
         ORDER BY f.o, d.position",
    )
    .bind::<Array<Text>, _>(&ids)
    .bind::<Timestamptz, _>(now)
    .bind::<Timestamptz, _>(now + RETRY_FOR)
    .bind::<Array<Text>, _>(&delivery_ids)
    .bind::<BigInt, _>(logs_core::alerts::MAX_DESTINATIONS as i64)
    .bind::<Array<Text>, _>(
        firings
            .iter()
            .map(|(r, _)| r.id.as_str())
            .collect::<Vec<_>>(),
    )
    .execute(conn)
    .await?;
    Ok(())
}
