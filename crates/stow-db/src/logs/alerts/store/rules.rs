//! Rule writes: made, changed and removed, each checked against the organization's other rules
//! and destinations under its lock.

use super::*;

pub(super) async fn create(
    store: &PgAlerts,
    r: &AlertRule,
    max: usize,
    audit: &Audit,
) -> Result<AlertPut, StoreError> {
    store
        .db
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

pub(super) async fn update(
    store: &PgAlerts,
    r: &AlertRule,
    audit: &Audit,
) -> Result<AlertPut, StoreError> {
    store
        .db
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

pub(super) async fn delete(
    store: &PgAlerts,
    org: &OrgId,
    id: &str,
    audit: &Audit,
) -> Result<bool, StoreError> {
    store
        .db
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

pub(super) async fn references(
    conn: &mut AsyncPgConnection,
    r: &AlertRule,
) -> QueryResult<Option<AlertPut>> {
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

pub(super) fn trigger_columns(t: Trigger) -> (&'static str, Option<i64>, Option<i32>, Option<i32>) {
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
pub(super) fn maker(audit: &Audit) -> (Option<&'static str>, Option<&str>) {
    match &audit.actor {
        auth_core::audit::Actor::Member { id, .. } => (Some("member"), Some(id.as_str())),
        auth_core::audit::Actor::Key { id, .. } => (Some("key"), Some(id.as_str())),
        _ => (None, None),
    }
}

/// Writes the rule and its destinations; the rule acts as `audit`'s actor from now on.
pub(super) async fn write_rule(
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

pub(super) async fn rule_of(
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
pub(super) fn resets_memory(before: &AlertRule, after: &AlertRule) -> bool {
    before.spec.trigger != after.spec.trigger
        || before.spec.group_by != after.spec.group_by
        || before.spec.saved_search_id != after.spec.saved_search_id
}
