//! Second factors: the sealed secret, its confirmation, one-time steps and recovery codes.

use super::*;

/// A stored factor: its sealed secret, when it was confirmed, the last step used.
type FactorRow = (Vec<u8>, Option<DateTime<Utc>>, Option<i64>);

pub(super) async fn get(
    store: &PgAccounts,
    id: &MemberId,
) -> Result<Option<SecondFactor>, StoreError> {
    let mut conn = store.db().conn().await?;
    let row: Option<FactorRow> = factors::table
        .find(id.as_str())
        .select((
            factors::sealed_secret,
            factors::confirmed_at,
            factors::last_step,
        ))
        .first(&mut conn)
        .await
        .optional()
        .map_err(db_error)?;
    let Some((sealed_secret, confirmed_at, last_step)) = row else {
        return Ok(None);
    };
    let left: i64 = recovery_codes::table
        .filter(recovery_codes::member_id.eq(id.as_str()))
        .filter(recovery_codes::used_at.is_null())
        .count()
        .get_result(&mut conn)
        .await
        .map_err(db_error)?;
    Ok(Some(SecondFactor {
        sealed_secret,
        confirmed_at,
        last_step: last_step.map(|s| s as u64),
        recovery_left: left as usize,
    }))
}

pub(super) async fn begin(
    store: &PgAccounts,
    id: &MemberId,
    sealed: &[u8],
) -> Result<(), StoreError> {
    let mut conn = store.db().conn().await?;
    // an unconfirmed one is replaced; a confirmed one stays (no row changes)
    let stored = diesel::sql_query(
        "INSERT INTO member_second_factors (member_id, sealed_secret) VALUES ($1, $2) \
         ON CONFLICT (member_id) DO UPDATE SET sealed_secret = EXCLUDED.sealed_secret, \
         last_step = NULL WHERE member_second_factors.confirmed_at IS NULL",
    )
    .bind::<diesel::sql_types::Text, _>(id.as_str())
    .bind::<diesel::sql_types::Bytea, _>(sealed)
    .execute(&mut conn)
    .await
    .map_err(|e| match db_error(e) {
        StoreError::NotFound(_) => unknown("member", id),
        other => other,
    })?;
    if stored == 0 {
        return Err(StoreError::Conflict(SECOND_FACTOR_ON.into()));
    }
    Ok(())
}

pub(super) async fn confirm(
    store: &PgAccounts,
    id: &MemberId,
    step: u64,
    recovery: &[[u8; 32]],
    audit: &Audit,
) -> Result<bool, StoreError> {
    let mut conn = store.db().conn().await?;
    conn.transaction::<_, DieselError, _>(|conn| {
        async move {
            let confirmed = diesel::update(
                factors::table
                    .find(id.as_str())
                    .filter(factors::confirmed_at.is_null()),
            )
            .set((
                factors::confirmed_at.eq(Utc::now()),
                factors::last_step.eq(step as i64),
            ))
            .execute(conn)
            .await?;
            if confirmed == 0 {
                return Ok(false);
            }
            diesel::delete(recovery_codes::table.filter(recovery_codes::member_id.eq(id.as_str())))
                .execute(conn)
                .await?;
            let rows: Vec<_> = recovery
                .iter()
                .map(|h| {
                    (
                        recovery_codes::member_id.eq(id.as_str()),
                        recovery_codes::code_hash.eq(&h[..]),
                    )
                })
                .collect();
            diesel::insert_into(recovery_codes::table)
                .values(&rows)
                .execute(conn)
                .await?;
            let member = member_row(conn, id).await?;
            in_every_org(conn, audit, Action::SecondFactorEnable, &member).await?;
            Ok(true)
        }
        .scope_boxed()
    })
    .await
    .map_err(db_error)
}

pub(super) async fn use_step(
    store: &PgAccounts,
    id: &MemberId,
    step: u64,
) -> Result<bool, StoreError> {
    let mut conn = store.db().conn().await?;
    let step = step as i64;
    let n = diesel::update(
        factors::table
            .find(id.as_str())
            .filter(factors::confirmed_at.is_not_null())
            .filter(factors::last_step.is_null().or(factors::last_step.lt(step))),
    )
    .set(factors::last_step.eq(step))
    .execute(&mut conn)
    .await
    .map_err(db_error)?;
    Ok(n == 1)
}

pub(super) async fn use_recovery_code(
    store: &PgAccounts,
    id: &MemberId,
    hash: &[u8; 32],
    audit: &Audit,
) -> Result<bool, StoreError> {
    let mut conn = store.db().conn().await?;
    conn.transaction::<_, DieselError, _>(|conn| {
        async move {
            let on: i64 = factors::table
                .find(id.as_str())
                .filter(factors::confirmed_at.is_not_null())
                .count()
                .get_result(conn)
                .await?;
            if on == 0 {
                return Ok(false);
            }
            let used = diesel::update(
                recovery_codes::table
                    .find((id.as_str(), &hash[..]))
                    .filter(recovery_codes::used_at.is_null()),
            )
            .set(recovery_codes::used_at.eq(Utc::now()))
            .execute(conn)
            .await?;
            if used == 0 {
                return Ok(false);
            }
            let member = member_row(conn, id).await?;
            in_every_org(conn, audit, Action::RecoveryCodeUse, &member).await?;
            Ok(true)
        }
        .scope_boxed()
    })
    .await
    .map_err(db_error)
}

pub(super) async fn remove(
    store: &PgAccounts,
    id: &MemberId,
    action: Action,
    audit: &Audit,
) -> Result<bool, StoreError> {
    let mut conn = store.db().conn().await?;
    conn.transaction::<_, DieselError, _>(|conn| {
        async move {
            let removed: Option<Option<DateTime<Utc>>> =
                diesel::delete(factors::table.find(id.as_str()))
                    .returning(factors::confirmed_at)
                    .get_result(conn)
                    .await
                    .optional()?;
            let Some(confirmed_at) = removed else {
                return Ok(false);
            };
            diesel::delete(recovery_codes::table.filter(recovery_codes::member_id.eq(id.as_str())))
                .execute(conn)
                .await?;
            // an unconfirmed one was never on: nothing to record
            if confirmed_at.is_some() {
                let member = member_row(conn, id).await?;
                in_every_org(conn, audit, action, &member).await?;
            }
            Ok(true)
        }
        .scope_boxed()
    })
    .await
    .map_err(db_error)
}
