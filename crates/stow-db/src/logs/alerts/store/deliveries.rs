//! A delivery queued again by hand, and test messages.

use super::*;

pub(super) async fn send_again(
    store: &PgAlerts,
    org: &OrgId,
    id: &str,
    now: DateTime<Utc>,
) -> Result<Option<bool>, StoreError> {
    let mut conn = store.db.conn().await?;
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

pub(super) async fn send_test(
    store: &PgAlerts,
    org: &OrgId,
    id: &str,
    now: DateTime<Utc>,
) -> Result<Option<String>, StoreError> {
    let mut conn = store.db.conn().await?;
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
