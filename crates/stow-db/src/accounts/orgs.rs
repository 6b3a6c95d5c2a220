//! An organization's plan and its servers: registered, and their log ingestion switched.

use super::*;

pub(super) async fn set_plan(
    store: &PgAccounts,
    id: &OrgId,
    plan: &str,
    audit: &Audit,
) -> Result<Org, StoreError> {
    let mut conn = store.db.conn().await?;
    if !store.plan_exists(&mut conn, plan).await? {
        return Err(not_found("plan", plan));
    }
    conn.transaction::<_, DieselError, _>(|conn| {
        async move {
            let from: Option<String> = organizations::table
                .find(id.as_str())
                .select(organizations::plan)
                .for_no_key_update()
                .first(conn)
                .await
                .optional()?;
            let Some(from) = from else { return Ok(None) };
            let org: OrgRow = diesel::update(organizations::table.find(id.as_str()))
                .set(organizations::plan.eq(plan))
                .returning(OrgRow::as_returning())
                .get_result(conn)
                .await?;
            if from != plan {
                let entry = audit.entry(
                    id,
                    Action::PlanChange,
                    plan,
                    serde_json::json!({ "from": from }),
                );
                crate::audit::append(conn, &[entry]).await?;
            }
            Ok(Some(org))
        }
        .scope_boxed()
    })
    .await
    .map_err(db_error)?
    .map(Into::into)
    .ok_or_else(|| not_found("organization", id))
}

pub(super) async fn register_server(
    store: &PgAccounts,
    org_id: &OrgId,
    cfx_id: &str,
    name: Option<&str>,
    audit: &Audit,
) -> Result<Server, StoreError> {
    let mut conn = store.db.conn().await?;
    conn.transaction::<_, DieselError, _>(|conn| {
        async move {
            let server: Server = diesel::insert_into(servers::table)
                .values((
                    servers::id.eq(ServerId::generate().into_string()),
                    servers::org_id.eq(org_id.as_str()),
                    servers::cfx_id.eq(cfx_id),
                    servers::name.eq(name),
                ))
                .returning(ServerRow::as_returning())
                .get_result::<ServerRow>(conn)
                .await?
                .into();
            let entry = audit.server_registered(&server);
            crate::audit::append(conn, &[entry]).await?;
            Ok(server)
        }
        .scope_boxed()
    })
    .await
    .map_err(|e| match db_error(e) {
        StoreError::Conflict(_) => {
            StoreError::Conflict(format!("join code \"{cfx_id}\" is already registered"))
        }
        StoreError::NotFound(_) => not_found("organization", org_id),
        other => other,
    })
}

pub(super) async fn set_logs_active(
    store: &PgAccounts,
    cfx_id: &str,
    active: bool,
    audit: &Audit,
) -> Result<Server, StoreError> {
    let mut conn = store.db.conn().await?;
    let code = cfx_id.to_lowercase();
    conn.transaction::<_, DieselError, _>(|conn| {
        async move {
            let was: Option<bool> = servers::table
                .filter(lower(servers::cfx_id).eq(&code))
                .select(servers::logs_active)
                .for_no_key_update()
                .first(conn)
                .await
                .optional()?;
            let Some(was) = was else { return Ok(None) };
            let server: Server =
                diesel::update(servers::table.filter(lower(servers::cfx_id).eq(&code)))
                    .set(servers::logs_active.eq(active))
                    .returning(ServerRow::as_returning())
                    .get_result::<ServerRow>(conn)
                    .await?
                    .into();
            if was != active {
                crate::audit::append(conn, &[audit.server_logs(&server)]).await?;
            }
            Ok(Some(server))
        }
        .scope_boxed()
    })
    .await
    .map_err(db_error)?
    .ok_or_else(|| not_found("server join code", cfx_id))
}
