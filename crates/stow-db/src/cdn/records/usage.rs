//! What an organization stores: per top-level folder and in total.

use super::*;

pub(super) async fn folder_usage(
    store: &PgObjectRecords,
    org_id: &OrgId,
) -> Result<Vec<FolderUsage>, StoreError> {
    let mut conn = store.db.conn().await?;
    #[derive(QueryableByName)]
    struct Row {
        #[diesel(sql_type = Text)]
        folder: String,
        #[diesel(sql_type = BigInt)]
        objects: i64,
        #[diesel(sql_type = BigInt)]
        bytes: i64,
    }
    // the rolled-up counts plus the changes not rolled up yet (migration 27)
    let rows: Vec<Row> = diesel::sql_query(
        "SELECT folder, sum(objects)::bigint AS objects, sum(bytes)::bigint AS bytes \
           FROM (SELECT folder, objects, bytes FROM object_usage WHERE org_id = $1 \
                 UNION ALL \
                 SELECT folder, objects, bytes FROM object_usage_deltas WHERE org_id = $1) u \
          GROUP BY folder HAVING sum(objects) > 0 ORDER BY folder",
    )
    .bind::<Text, _>(org_id.as_str())
    .load(&mut conn)
    .await
    .map_err(db_error)?;
    Ok(rows
        .into_iter()
        .map(|r| FolderUsage {
            folder: r.folder,
            totals: ObjectTotals {
                objects: r.objects,
                bytes: r.bytes,
            },
        })
        .collect())
}

pub(super) async fn totals(
    store: &PgObjectRecords,
    org_id: &OrgId,
) -> Result<ObjectTotals, StoreError> {
    let mut conn = store.db.conn().await?;
    #[derive(QueryableByName)]
    struct Totals {
        #[diesel(sql_type = BigInt)]
        objects: i64,
        #[diesel(sql_type = BigInt)]
        bytes: i64,
    }
    let t: Totals = diesel::sql_query(
        "SELECT count(*)::bigint AS objects, COALESCE(sum(size), 0)::bigint AS bytes \
         FROM objects WHERE org_id = $1",
    )
    .bind::<Text, _>(org_id.as_str())
    .get_result(&mut conn)
    .await
    .map_err(db_error)?;
    Ok(ObjectTotals {
        objects: t.objects,
        bytes: t.bytes,
    })
}
