//! Invitations and password-reset links: made, listed, revoked and used once.

use super::*;

pub(super) async fn create(
    store: &PgAccounts,
    i: &Invitation,
    audit: &Audit,
) -> Result<(), StoreError> {
    let mut conn = store.db().conn().await?;
    conn.transaction::<_, DieselError, _>(|conn| {
        async move {
            insert_invitation(conn, i).await?;
            crate::audit::append(conn, &[audit.invitation(Action::MemberInvite, i)]).await
        }
        .scope_boxed()
    })
    .await
    .map_err(db_error)
}

pub(super) async fn pending(
    store: &PgAccounts,
    org: &OrgId,
) -> Result<Vec<Invitation>, StoreError> {
    let mut conn = store.db().conn().await?;
    let rows: Vec<InvitationRow> = invitations::table
        .filter(invitations::org_id.eq(org.as_str()))
        .filter(invitations::accepted_at.is_null())
        .order((invitations::created_at.desc(), invitations::id.desc()))
        .select(InvitationRow::as_select())
        .load(&mut conn)
        .await
        .map_err(db_error)?;
    rows.into_iter().map(Invitation::try_from).collect()
}

pub(super) async fn find(
    store: &PgAccounts,
    token_hash: &[u8; 32],
) -> Result<Option<Invitation>, StoreError> {
    let mut conn = store.db().conn().await?;
    let row: Option<InvitationRow> = invitations::table
        .filter(invitations::token_hash.eq(&token_hash[..]))
        .select(InvitationRow::as_select())
        .first(&mut conn)
        .await
        .optional()
        .map_err(db_error)?;
    row.map(Invitation::try_from).transpose()
}

pub(super) async fn revoke(
    store: &PgAccounts,
    org: &OrgId,
    id: &InvitationId,
    audit: &Audit,
) -> Result<(), StoreError> {
    let mut conn = store.db().conn().await?;
    let withdrawn = conn
        .transaction::<_, Refused, _>(|conn| {
            async move {
                let row: Option<InvitationRow> = diesel::delete(
                    invitations::table
                        .filter(invitations::id.eq(id.as_str()))
                        .filter(invitations::org_id.eq(org.as_str()))
                        .filter(invitations::accepted_at.is_null()),
                )
                .returning(InvitationRow::as_returning())
                .get_result(conn)
                .await
                .optional()?;
                let Some(row) = row else { return Ok(false) };
                let invitation = Invitation::try_from(row).map_err(Refused::Store)?;
                let entry = audit.invitation(Action::InvitationWithdraw, &invitation);
                crate::audit::append(conn, &[entry]).await?;
                Ok(true)
            }
            .scope_boxed()
        })
        .await?;
    touched(usize::from(withdrawn), "invitation", id)
}

pub(super) async fn accept(
    store: &PgAccounts,
    token_hash: &[u8; 32],
    accepter: &Accepter,
    now: DateTime<Utc>,
    audit: &Audit,
) -> Result<Option<(Member, Membership)>, StoreError> {
    let mut conn = store.db().conn().await?;
    let accepted = conn
        .transaction::<_, Refused, _>(|conn| {
            async move {
                // taking the invitation first: of two acceptances at once, one finds it used
                let taken: Option<InvitationRow> = diesel::update(
                    invitations::table
                        .filter(invitations::token_hash.eq(&token_hash[..]))
                        .filter(invitations::accepted_at.is_null())
                        .filter(invitations::expires_at.gt(now)),
                )
                .set(invitations::accepted_at.eq(now))
                .returning(InvitationRow::as_returning())
                .get_result(conn)
                .await
                .optional()?;
                let Some(invitation) = taken else {
                    return Ok(None);
                };
                let member: MemberRow = match accepter {
                    Accepter::New {
                        login,
                        display_name,
                        password_hash,
                    } => {
                        let inserted = diesel::insert_into(members::table)
                            .values((
                                members::id.eq(MemberId::generate().as_str()),
                                members::login.eq(login),
                                members::display_name.eq(display_name),
                                members::password_hash.eq(password_hash),
                                members::created_at.eq(now),
                            ))
                            .on_conflict(members::login)
                            .do_nothing()
                            .returning(MemberRow::as_returning())
                            .get_result(conn)
                            .await
                            .optional()?;
                        inserted.ok_or_else(|| {
                            Refused::Conflict(format!("the login \"{login}\" is taken"))
                        })?
                    }
                    Accepter::Existing(id) => {
                        members::table
                            .find(id.as_str())
                            .select(MemberRow::as_select())
                            .first(conn)
                            .await?
                    }
                };
                let membership: Option<MembershipRow> = diesel::insert_into(memberships::table)
                    .values((
                        memberships::org_id.eq(&invitation.org_id),
                        memberships::member_id.eq(&member.id),
                        memberships::role.eq(&invitation.role),
                        memberships::servers.eq(&invitation.servers),
                        memberships::allowed_prefixes.eq(&invitation.allowed_prefixes),
                        memberships::denied_prefixes.eq(&invitation.denied_prefixes),
                        memberships::created_at.eq(now),
                        memberships::updated_at.eq(now),
                    ))
                    .on_conflict_do_nothing()
                    .returning(MembershipRow::as_returning())
                    .get_result(conn)
                    .await
                    .optional()?;
                let membership = membership.ok_or_else(|| {
                    Refused::Conflict("you are a member of this organization already".into())
                })?;
                let member = Member::from(member);
                let membership = Membership::try_from(membership).map_err(Refused::Store)?;
                let invitation_id = InvitationId::new(invitation.id.as_str());
                let entry = audit.joined(&member, &membership, &invitation_id);
                crate::audit::append(conn, &[entry]).await?;
                Ok(Some((member, membership)))
            }
            .scope_boxed()
        })
        .await?;
    Ok(accepted)
}

pub(super) async fn create_reset(
    store: &PgAccounts,
    reset: &PasswordReset,
    org: &OrgId,
    audit: &Audit,
) -> Result<(), StoreError> {
    let mut conn = store.db().conn().await?;
    let made = conn
        .transaction::<_, DieselError, _>(|conn| {
            async move {
                let member: Option<MemberRow> = members::table
                    .find(reset.member_id.as_str())
                    .select(MemberRow::as_select())
                    .first(conn)
                    .await
                    .optional()?;
                let Some(member) = member else {
                    return Ok(false);
                };
                diesel::update(
                    password_resets::table
                        .filter(password_resets::member_id.eq(reset.member_id.as_str()))
                        .filter(password_resets::used_at.is_null()),
                )
                .set(password_resets::used_at.eq(reset.created_at))
                .execute(conn)
                .await?;
                diesel::insert_into(password_resets::table)
                    .values((
                        password_resets::token_hash.eq(&reset.token_hash[..]),
                        password_resets::member_id.eq(reset.member_id.as_str()),
                        password_resets::made_by.eq(reset.made_by.as_deref()),
                        password_resets::created_at.eq(reset.created_at),
                        password_resets::expires_at.eq(reset.expires_at),
                    ))
                    .execute(conn)
                    .await?;
                let expires = serde_json::json!({ "expiresAt": reset.expires_at });
                let entry = audit.member(org, Action::PasswordResetIssue, &member.into(), expires);
                crate::audit::append(conn, &[entry]).await?;
                Ok(true)
            }
            .scope_boxed()
        })
        .await
        .map_err(db_error)?;
    touched(usize::from(made), "member", &reset.member_id)
}

pub(super) async fn use_reset(
    store: &PgAccounts,
    token_hash: &[u8; 32],
    password_hash: &str,
    now: DateTime<Utc>,
    audit: &Audit,
) -> Result<Option<MemberId>, StoreError> {
    let mut conn = store.db().conn().await?;
    let used = conn
        .transaction::<_, DieselError, _>(|conn| {
            async move {
                let member: Option<String> = diesel::update(
                    password_resets::table
                        .filter(password_resets::token_hash.eq(&token_hash[..]))
                        .filter(password_resets::used_at.is_null())
                        .filter(password_resets::expires_at.gt(now)),
                )
                .set(password_resets::used_at.eq(now))
                .returning(password_resets::member_id)
                .get_result(conn)
                .await
                .optional()?;
                if let Some(id) = &member {
                    let row: MemberRow = diesel::update(members::table.find(id))
                        .set(members::password_hash.eq(password_hash))
                        .returning(MemberRow::as_returning())
                        .get_result(conn)
                        .await?;
                    let member = Member::from(row);
                    let actor = Actor::Member {
                        id: member.id.clone(),
                        login: member.login.clone(),
                    };
                    in_every_org(conn, &audit.as_actor(actor), Action::PasswordReset, &member)
                        .await?;
                }
                Ok(member)
            }
            .scope_boxed()
        })
        .await
        .map_err(db_error)?;
    Ok(used.map(MemberId::from))
}

pub(super) async fn reset_member(
    store: &PgAccounts,
    token_hash: &[u8; 32],
    now: DateTime<Utc>,
) -> Result<Option<(Member, Option<MemberId>)>, StoreError> {
    let mut conn = store.db().conn().await?;
    let row: Option<(MemberRow, Option<String>)> = password_resets::table
        .inner_join(members::table.on(members::id.eq(password_resets::member_id)))
        .filter(password_resets::token_hash.eq(&token_hash[..]))
        .filter(password_resets::used_at.is_null())
        .filter(password_resets::expires_at.gt(now))
        .select((MemberRow::as_select(), password_resets::made_by))
        .first(&mut conn)
        .await
        .optional()
        .map_err(db_error)?;
    Ok(row.map(|(member, made_by)| (member.into(), made_by.map(MemberId::from))))
}

/// Inserts an invitation's row (in the caller's transaction).
pub(super) async fn insert_invitation(
    conn: &mut diesel_async::AsyncPgConnection,
    i: &Invitation,
) -> Result<(), DieselError> {
    diesel::insert_into(invitations::table)
        .values((
            invitations::id.eq(i.id.as_str()),
            invitations::org_id.eq(i.org_id.as_str()),
            invitations::role.eq(i.grant.role.as_str()),
            invitations::servers.eq(i.grant.servers.to_stored()),
            invitations::allowed_prefixes.eq(&i.grant.paths.allowed),
            invitations::denied_prefixes.eq(&i.grant.paths.denied),
            invitations::invited_by.eq(i.invited_by.as_deref()),
            invitations::token_hash.eq(&i.token_hash[..]),
            invitations::note.eq(&i.note),
            invitations::created_at.eq(i.created_at),
            invitations::expires_at.eq(i.expires_at),
        ))
        .execute(conn)
        .await?;
    Ok(())
}
