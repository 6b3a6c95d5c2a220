//! Lifecycle expiry batches and the keep flag.

use super::*;

/// The keys of one lifecycle rule's next batch (`cdn_core::lifecycle::Expiry::expires`): under
/// `$3` (every key for the root), last modified before `$2`, not kept, not hidden, not under a
/// deeper rule's folder (`$4`), in key order: the planner then walks the folder's primary-key range
/// when many are old, or the last-modified index when few are (ordered by age, a rule on a small
/// folder walked every old object of the organization; decision 014). Rows another instance's
/// batch holds are skipped; a row changed since the snapshot is
/// judged again as it now is (a replaced or kept one stays).
const EXPIRED_KEYS: &str = r#"
SELECT key FROM objects
 WHERE org_id = $1 AND updated_at < $2 AND NOT keep
   AND key NOT LIKE '.%' AND key NOT LIKE '%/.%'
   AND ($3 = '' OR (key >= ($3 || '/') AND key < ($3 || '0')))
   AND NOT EXISTS (SELECT 1 FROM unnest($4::text[]) AS inner_rule(folder)
                    WHERE key >= (inner_rule.folder || '/') AND key < (inner_rule.folder || '0'))
 ORDER BY key
 LIMIT $5
 FOR UPDATE SKIP LOCKED"#;

pub(super) async fn expire(
    store: &PgObjectRecords,
    org_id: &OrgId,
    e: &Expiry,
    limit: usize,
    audit: &Audit,
) -> Result<Vec<ObjectRecord>, StoreError> {
    store
        .db
        .audited(|conn| {
            async move {
                let keys: Vec<String> = diesel::sql_query(EXPIRED_KEYS)
                    .bind::<Text, _>(org_id.as_str())
                    .bind::<Timestamptz, _>(e.before)
                    .bind::<Text, _>(&e.folder)
                    .bind::<Array<Text>, _>(&e.except)
                    .bind::<BigInt, _>(limit as i64)
                    .load::<KeyRow>(conn)
                    .await?
                    .into_iter()
                    .map(|r| r.key)
                    .collect();
                if keys.is_empty() {
                    return Ok((Vec::new(), vec![]));
                }
                let rows: Vec<ObjectRow> = diesel::delete(
                    objects::table
                        .filter(objects::org_id.eq(org_id.as_str()))
                        .filter(objects::key.eq_any(&keys)),
                )
                .returning(ObjectRow::as_returning())
                .get_results(conn)
                .await?;
                let mut gone: Vec<ObjectRecord> = rows.into_iter().map(Into::into).collect();
                gone.sort_by(|a, b| a.key.cmp(&b.key));
                let entries: Vec<_> = gone
                    .iter()
                    .map(|r| expired_entry(audit, org_id, e, r))
                    .collect();
                Ok((gone, entries))
            }
            .scope_boxed()
        })
        .await
}

pub(super) async fn set_keep(
    store: &PgObjectRecords,
    org_id: &OrgId,
    keys: &[ObjectKey],
    keep: bool,
    audit: &Audit,
) -> Result<Vec<ObjectKey>, StoreError> {
    let wanted: Vec<&str> = keys.iter().map(ObjectKey::as_str).collect();
    store
        .db
        .audited(|conn| {
            async move {
                let changed: Vec<String> = diesel::update(
                    objects::table
                        .filter(objects::org_id.eq(org_id.as_str()))
                        .filter(objects::key.eq_any(&wanted))
                        .filter(objects::keep.ne(keep)),
                )
                .set(objects::keep.eq(keep))
                .returning(objects::key)
                .get_results(conn)
                .await?;
                let entries: Vec<_> = changed
                    .iter()
                    .map(|k| keep_entry(audit, org_id, &ObjectKey::from(k.clone()), keep))
                    .collect();
                let found: Vec<String> = objects::table
                    .filter(objects::org_id.eq(org_id.as_str()))
                    .filter(objects::key.eq_any(&wanted))
                    .select(objects::key)
                    .load(conn)
                    .await?;
                // in the order asked
                let kept = keys
                    .iter()
                    .filter(|k| found.iter().any(|f| f == k.as_str()))
                    .cloned()
                    .collect();
                Ok((kept, entries))
            }
            .scope_boxed()
        })
        .await
}
