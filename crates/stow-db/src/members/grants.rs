//! A member's grant in an organization: changed or removed, never leaving it without an owner.

use super::*;

pub(super) async fn set_grant(
    store: &PgAccounts,
    org: &OrgId,
    id: &MemberId,
    g: &Grant,
    audit: &Audit,
) -> Result<Membership, StoreError> {
    let mut conn = store.db().conn().await?;
    let changed = conn
        .transaction::<_, Refused, _>(|conn| {
            async move {
                let Some((role, owners)) = current_role(conn, org, id).await? else {
                    return Ok(None);
                };
                let Some((member, before)) = member_and_grant(conn, org, id).await? else {
                    return Ok(None);
                };
                if leaves_no_owner(role, Some(g.role), owners as usize) {
                    return Err(Refused::Conflict(LAST_OWNER.into()));
                }
                let row = diesel::update(memberships::table.find((org.as_str(), id.as_str())))
                    .set((
                        memberships::role.eq(g.role.as_str()),
                        memberships::servers.eq(g.servers.to_stored()),
                        memberships::allowed_prefixes.eq(&g.paths.allowed),
                        memberships::denied_prefixes.eq(&g.paths.denied),
                        memberships::updated_at.eq(Utc::now()),
                    ))
                    .returning(MembershipRow::as_returning())
                    .get_result(conn)
                    .await?;
                if before != *g {
                    let details = serde_json::json!({
                        "from": grant_details(&before),
                        "to": grant_details(g),
                    });
                    let entry = audit.member(org, Action::MemberChange, &member, details);
                    crate::audit::append(conn, &[entry]).await?;
                }
                Ok(Some(row))
            }
            .scope_boxed()
        })
        .await?;
    changed.ok_or_else(|| unknown("member", id))?.try_into()
}

pub(super) async fn remove(
    store: &PgAccounts,
    org: &OrgId,
    id: &MemberId,
    audit: &Audit,
) -> Result<(), StoreError> {
    let mut conn = store.db().conn().await?;
    let removed = conn
        .transaction::<_, Refused, _>(|conn| {
            async move {
                let Some((role, owners)) = current_role(conn, org, id).await? else {
                    return Ok(false);
                };
                let Some((member, grant)) = member_and_grant(conn, org, id).await? else {
                    return Ok(false);
                };
                if leaves_no_owner(role, None, owners as usize) {
                    return Err(Refused::Conflict(LAST_OWNER.into()));
                }
                diesel::delete(memberships::table.find((org.as_str(), id.as_str())))
                    .execute(conn)
                    .await?;
                let details = serde_json::json!({ "grant": grant_details(&grant) });
                let entry = audit.member(org, Action::MemberRemove, &member, details);
                crate::audit::append(conn, &[entry]).await?;
                Ok(true)
            }
            .scope_boxed()
        })
        .await?;
    if removed {
        Ok(())
    } else {
        Err(unknown("member", id))
    }
}
