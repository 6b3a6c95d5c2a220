//! API keys: made, removed, and resolved to the context a request acts in.

use super::*;

pub(super) async fn create(
    store: &PgAccounts,
    key: &NewKey,
    audit: &Audit,
) -> Result<ApiKey, StoreError> {
    let mut conn = store.db.conn().await?;
    // the bound server and every scoped one must be the organization's own
    let named: Vec<&str> = key
        .server_id
        .iter()
        .chain(key.servers.named().unwrap_or_default())
        .map(|id| id.as_str())
        .collect();
    if !named.is_empty() {
        let owned: Vec<String> = servers::table
            .filter(servers::id.eq_any(&named))
            .filter(servers::org_id.eq(key.org_id.as_str()))
            .select(servers::id)
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        if let Some(missing) = named.iter().find(|id| !owned.iter().any(|o| o == *id)) {
            return Err(not_found("server", missing));
        }
    }
    let row = conn
        .transaction::<_, DieselError, _>(|conn| {
            async move {
                let row = insert_key(conn, key).await?;
                let stored: ApiKey = row
                    .clone()
                    .try_into()
                    .map_err(|e: StoreError| DieselError::DeserializationError(Box::new(e)))?;
                let entry = audit.entry(
                    &stored.org_id,
                    Action::KeyCreate,
                    stored.id.as_str(),
                    auth_core::key::key_details(&stored),
                );
                crate::audit::append(conn, &[entry]).await?;
                Ok(row)
            }
            .scope_boxed()
        })
        .await
        .map_err(|e| match db_error(e) {
            StoreError::NotFound(_) => not_found("organization", &key.org_id),
            other => other,
        })?;
    row.try_into()
}

pub(super) async fn delete(
    store: &PgAccounts,
    id: &KeyId,
    audit: &Audit,
) -> Result<(), StoreError> {
    let mut conn = store.db.conn().await?;
    let deleted = conn
        .transaction::<_, DieselError, _>(|conn| {
            async move {
                let gone: Option<(String, Option<String>)> =
                    diesel::delete(api_keys::table.find(id.as_str()))
                        .returning((api_keys::org_id, api_keys::name))
                        .get_result(conn)
                        .await
                        .optional()?;
                if let Some((org_id, name)) = &gone {
                    let entry = audit.entry(
                        &OrgId::new(org_id.as_str()),
                        Action::KeyDelete,
                        id.as_str(),
                        serde_json::json!({ "name": name }),
                    );
                    crate::audit::append(conn, &[entry]).await?;
                }
                Ok(gone.is_some())
            }
            .scope_boxed()
        })
        .await
        .map_err(db_error)?;
    if !deleted {
        return Err(not_found("key", id));
    }
    Ok(())
}

pub(super) async fn find_auth_context(
    store: &PgAccounts,
    hash: &[u8; 32],
) -> Result<Option<AuthContext>, StoreError> {
    let mut conn = store.db.conn().await?;
    let row: Option<(KeyRow, OrgRow, PlanRow)> = api_keys::table
        .inner_join(
            organizations::table.inner_join(plans::table.on(plans::name.eq(organizations::plan))),
        )
        .filter(api_keys::secret_hash.eq(hash.as_slice()))
        .select((
            KeyRow::as_select(),
            OrgRow::as_select(),
            PlanRow::as_select(),
        ))
        .first(&mut conn)
        .await
        .optional()
        .map_err(db_error)?;
    let Some((key, org, plan)) = row else {
        return Ok(None);
    };
    let server = match &key.server_id {
        Some(id) => servers::table
            .find(id.as_str())
            .select(ServerRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?
            .map(Into::into),
        None => None,
    };
    Ok(Some(AuthContext {
        key: key.try_into()?,
        org: org.into(),
        plan: plan.into(),
        server,
        member: None,
    }))
}

/// Inserts a key's row (in the caller's transaction).
pub(super) async fn insert_key(
    conn: &mut AsyncPgConnection,
    key: &NewKey,
) -> diesel::QueryResult<KeyRow> {
    diesel::insert_into(api_keys::table)
        .values((
            api_keys::id.eq(key.id.as_str()),
            api_keys::org_id.eq(key.org_id.as_str()),
            api_keys::server_id.eq(key.server_id.as_deref()),
            api_keys::credential_type.eq(key.credential_type.as_str()),
            api_keys::name.eq(&key.name),
            api_keys::secret_hash.eq(key.secret_hash.as_slice()),
            api_keys::secret_hint.eq(&key.hint),
            api_keys::permissions.eq(key.permissions.names()),
            api_keys::allowed_prefixes.eq(&key.allowed_prefixes),
            api_keys::denied_prefixes.eq(&key.denied_prefixes),
            api_keys::allowed_mime.eq(&key.allowed_mime),
            api_keys::servers.eq(key.servers.to_stored()),
            api_keys::expires_at.eq(key.expires_at),
        ))
        .returning(KeyRow::as_returning())
        .get_result(conn)
        .await
}
