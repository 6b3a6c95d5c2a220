//! Renames and folder moves: a key changed under a write is looked at again, a batch moves only
//! what it may.

use super::*;

/// Keys under a folder (`$2` = `folder/` ≤ key < `$3`), never dot-named ones, with a condition on
/// the destination appended. A destination is `$5` (the new folder) followed by the
/// key's part after `$4` (the old folder).
const FOLDER_MOVE_KEYS: &str = r#"
SELECT s.key FROM objects s
 WHERE s.org_id = $1 AND s.key >= $2 AND s.key < $3
   AND s.key NOT LIKE '.%' AND s.key NOT LIKE '%/.%'"#;
/// The key's destination has an object (`AND NOT …` for a free one).
const DESTINATION_TAKEN: &str = r#"EXISTS (SELECT 1 FROM objects d
     WHERE d.org_id = $1 AND d.key = $5 || substr(s.key, char_length($4) + 1))"#;

pub(super) async fn rename(
    store: &PgObjectRecords,
    org_id: &OrgId,
    from: &ObjectKey,
    to: &ObjectKey,
    replace: bool,
    audit: &Audit,
) -> Result<Renamed, StoreError> {
    let mut conn = store.db.conn().await?;
    for _ in 0..RACE_ATTEMPTS {
        match rename_once(&mut conn, org_id, from, to, replace, audit).await {
            // a row came to `to` after the check (an upload, another move): nothing moved;
            // look again, and this time it is seen (replaced, or a conflict)
            Err(diesel::result::Error::DatabaseError(
                diesel::result::DatabaseErrorKind::UniqueViolation,
                _,
            )) => continue,
            other => return other.map_err(db_error),
        }
    }
    Err(StoreError::Conflict(KEY_CHANGED.to_owned()))
}

pub(super) async fn folder_move_batch(
    store: &PgObjectRecords,
    org_id: &OrgId,
    m: &FolderMove,
) -> Result<MoveBatch, StoreError> {
    let (from, to, limit) = (m.from.as_str(), m.to.as_str(), m.limit);
    let mut conn = store.db.conn().await?;
    let keys = |destination: &str, limit: usize| {
        diesel::sql_query(format!(
            "{FOLDER_MOVE_KEYS} {destination} ORDER BY s.key LIMIT $6"
        ))
        .bind::<Text, _>(org_id.as_str())
        .bind::<Text, _>(format!("{from}/"))
        .bind::<Text, _>(folder_upper_bound(from))
        .bind::<Text, _>(from)
        .bind::<Text, _>(to)
        .bind::<BigInt, _>(limit as i64)
    };
    let mut batch = MoveBatch::default();
    let (movable, blocked) = if m.replace {
        (keys("AND $4 = $4 AND $5 = $5", limit + 1), None)
    } else {
        (
            keys(&format!("AND NOT {DESTINATION_TAKEN}"), limit + 1),
            Some(keys(&format!("AND {DESTINATION_TAKEN}"), limit)),
        )
    };
    let movable: Vec<KeyRow> = movable.load(&mut conn).await.map_err(db_error)?;
    batch.movable = movable.into_iter().map(|r| r.key.into()).collect();
    batch.more_movable = batch.movable.len() > limit;
    batch.movable.truncate(limit);
    if let Some(blocked) = blocked {
        let blocked: Vec<KeyRow> = blocked.load(&mut conn).await.map_err(db_error)?;
        batch.blocked = blocked.into_iter().map(|r| r.key.into()).collect();
    }
    Ok(batch)
}

async fn rename_once(
    conn: &mut AsyncPgConnection,
    org: &OrgId,
    from_key: &ObjectKey,
    to_key: &ObjectKey,
    replace: bool,
    audit: &Audit,
) -> Result<Renamed, diesel::result::Error> {
    let (org_id, from, to) = (org.as_str(), from_key.as_str(), to_key.as_str());
    conn.transaction::<_, diesel::result::Error, _>(|conn| {
        async move {
            let source: Option<String> = objects::table
                .find((org_id, from))
                .select(objects::key)
                .for_update()
                .first(conn)
                .await
                .optional()?;
            if source.is_none() {
                return Ok(Renamed::SourceMissing);
            }
            if from == to {
                return Ok(Renamed::Moved { replaced: None });
            }
            let existing: Option<String> = objects::table
                .find((org_id, to))
                .select(objects::storage_path)
                .for_update()
                .first(conn)
                .await
                .optional()?;
            if existing.is_some() && !replace {
                return Ok(Renamed::DestinationExists);
            }
            if existing.is_some() {
                diesel::delete(objects::table.find((org_id, to)))
                    .execute(conn)
                    .await?;
            }
            // a row inserted at `to` after the check makes this a unique violation: the
            // transaction rolls back, nothing moved, and the caller looks again
            diesel::update(objects::table.find((org_id, from)))
                .set(objects::key.eq(to))
                .execute(conn)
                .await?;
            let entry = moved_entry(audit, org, from_key, to_key, existing.is_some());
            crate::audit::append(conn, &[entry]).await?;
            Ok(Renamed::Moved { replaced: existing })
        }
        .scope_boxed()
    })
    .await
}
