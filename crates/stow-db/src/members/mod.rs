//! Postgres [`MemberStore`] of [`PgAccounts`]; migration 17.

use async_trait::async_trait;
use auth_core::audit::{Action, Actor, Audit};
use auth_core::member::{
    Accepter, Invitation, Member, MemberContext, MemberStore, Membership, PasswordReset,
    SecondFactor, LAST_OWNER, SECOND_FACTOR_ON,
};
use auth_core::roles::grant_details;
use auth_core::roles::{leaves_no_owner, Grant, Role};
use auth_core::{InvitationId, MemberId, OrgId, PathScope, ServerScope, StoreError};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, RunQueryDsl};

use crate::accounts::OrgRow;
use crate::schema::{
    invitations, member_second_factors as factors, members, memberships, organizations,
    password_resets, recovery_codes,
};
use crate::{db_error, PgAccounts};

#[derive(Queryable, Selectable)]
#[diesel(table_name = members)]
struct MemberRow {
    id: String,
    login: String,
    display_name: Option<String>,
    password_hash: String,
    created_at: DateTime<Utc>,
}

impl From<MemberRow> for Member {
    fn from(r: MemberRow) -> Self {
        Member {
            id: MemberId::from(r.id),
            login: r.login,
            display_name: r.display_name,
            password_hash: r.password_hash,
            created_at: r.created_at,
        }
    }
}

fn grant(
    role: &str,
    servers: Option<Vec<String>>,
    allowed: Vec<String>,
    denied: Vec<String>,
) -> Result<Grant, StoreError> {
    Ok(Grant {
        role: role
            .parse::<Role>()
            .map_err(|e| StoreError::Internal(auth_core::Cause::from_error(e)))?,
        servers: ServerScope::from_stored(servers),
        paths: PathScope::new(allowed, denied),
    })
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = memberships)]
struct MembershipRow {
    org_id: String,
    member_id: String,
    role: String,
    servers: Option<Vec<String>>,
    allowed_prefixes: Vec<String>,
    denied_prefixes: Vec<String>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl TryFrom<MembershipRow> for Membership {
    type Error = StoreError;
    fn try_from(r: MembershipRow) -> Result<Self, StoreError> {
        Ok(Membership {
            grant: grant(&r.role, r.servers, r.allowed_prefixes, r.denied_prefixes)?,
            org_id: OrgId::from(r.org_id),
            member_id: MemberId::from(r.member_id),
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = invitations)]
struct InvitationRow {
    id: String,
    org_id: String,
    role: String,
    servers: Option<Vec<String>>,
    allowed_prefixes: Vec<String>,
    denied_prefixes: Vec<String>,
    invited_by: Option<String>,
    token_hash: Vec<u8>,
    note: Option<String>,
    created_at: DateTime<Utc>,
    expires_at: DateTime<Utc>,
    accepted_at: Option<DateTime<Utc>>,
}

impl TryFrom<InvitationRow> for Invitation {
    type Error = StoreError;
    fn try_from(r: InvitationRow) -> Result<Self, StoreError> {
        Ok(Invitation {
            grant: grant(&r.role, r.servers, r.allowed_prefixes, r.denied_prefixes)?,
            token_hash: r.token_hash.try_into().map_err(|_| {
                StoreError::Internal("invitation token hash is not 32 bytes".into())
            })?,
            id: InvitationId::from(r.id),
            org_id: OrgId::from(r.org_id),
            invited_by: r.invited_by.map(MemberId::from),
            note: r.note,
            created_at: r.created_at,
            expires_at: r.expires_at,
            accepted_at: r.accepted_at,
        })
    }
}

/// Why an acceptance rolls back: the store's answer, not a database failure.
enum Refused {
    Db(DieselError),
    Conflict(String),
    /// A stored row this build cannot read.
    Store(StoreError),
}

impl From<DieselError> for Refused {
    fn from(e: DieselError) -> Self {
        Refused::Db(e)
    }
}

impl From<Refused> for StoreError {
    fn from(r: Refused) -> Self {
        match r {
            Refused::Db(e) => db_error(e),
            Refused::Conflict(message) => StoreError::Conflict(message),
            Refused::Store(e) => e,
        }
    }
}

/// A member's row and grant in `org` (in the caller's transaction).
async fn member_and_grant(
    conn: &mut diesel_async::AsyncPgConnection,
    org: &OrgId,
    id: &MemberId,
) -> Result<Option<(Member, Grant)>, Refused> {
    let row: Option<(MemberRow, MembershipRow)> = memberships::table
        .inner_join(members::table)
        .filter(memberships::org_id.eq(org.as_str()))
        .filter(memberships::member_id.eq(id.as_str()))
        .select((MemberRow::as_select(), MembershipRow::as_select()))
        .first(conn)
        .await
        .optional()?;
    let Some((member, membership)) = row else {
        return Ok(None);
    };
    let membership = Membership::try_from(membership).map_err(Refused::Store)?;
    Ok(Some((member.into(), membership.grant)))
}

/// A member's row (in the caller's transaction).
async fn member_row(
    conn: &mut diesel_async::AsyncPgConnection,
    id: &MemberId,
) -> Result<Member, DieselError> {
    let row: MemberRow = members::table
        .find(id.as_str())
        .select(MemberRow::as_select())
        .first(conn)
        .await?;
    Ok(row.into())
}

/// One entry per organization the member belongs to (a password is theirs in all of them).
async fn in_every_org(
    conn: &mut diesel_async::AsyncPgConnection,
    audit: &Audit,
    action: Action,
    member: &Member,
) -> Result<(), DieselError> {
    let orgs: Vec<String> = memberships::table
        .filter(memberships::member_id.eq(member.id.as_str()))
        .select(memberships::org_id)
        .load(conn)
        .await?;
    let entries: Vec<_> = orgs
        .iter()
        .map(|org| {
            audit.member(
                &OrgId::new(org.as_str()),
                action,
                member,
                serde_json::json!({}),
            )
        })
        .collect();
    crate::audit::append(conn, &entries).await
}

fn unknown(what: &str, id: &str) -> StoreError {
    StoreError::NotFound(format!("unknown {what} \"{id}\""))
}

/// `Ok` when a statement touched a row, else "unknown {what}".
fn touched(rows: usize, what: &str, id: &str) -> Result<(), StoreError> {
    if rows == 0 {
        Err(unknown(what, id))
    } else {
        Ok(())
    }
}

/// Locks the organization's membership changes (one at a time per organization, so the owner
/// count read next holds until commit) and tells whether taking `member`'s owner role away leaves
/// none. `NotFound` (as a conflict-free `Ok(None)`) when not a member.
async fn current_role(
    conn: &mut diesel_async::AsyncPgConnection,
    org: &OrgId,
    member: &MemberId,
) -> Result<Option<(Role, i64)>, DieselError> {
    organizations::table
        .find(org.as_str())
        .select(organizations::id)
        .for_no_key_update()
        .first::<String>(conn)
        .await
        .optional()?;
    let role: Option<String> = memberships::table
        .find((org.as_str(), member.as_str()))
        .select(memberships::role)
        .first(conn)
        .await
        .optional()?;
    let Some(role) = role else { return Ok(None) };
    let owners: i64 = memberships::table
        .filter(memberships::org_id.eq(org.as_str()))
        .filter(memberships::role.eq(Role::Owner.as_str()))
        .count()
        .get_result(conn)
        .await?;
    Ok(Some((role.parse().unwrap_or(Role::Viewer), owners)))
}

#[async_trait]
impl MemberStore for PgAccounts {
    async fn create_invitation(&self, i: &Invitation, audit: &Audit) -> Result<(), StoreError> {
        let mut conn = self.db().conn().await?;
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

    async fn pending_invitations(&self, org: &OrgId) -> Result<Vec<Invitation>, StoreError> {
        let mut conn = self.db().conn().await?;
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

    async fn find_invitation(
        &self,
        token_hash: &[u8; 32],
    ) -> Result<Option<Invitation>, StoreError> {
        let mut conn = self.db().conn().await?;
        let row: Option<InvitationRow> = invitations::table
            .filter(invitations::token_hash.eq(&token_hash[..]))
            .select(InvitationRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        row.map(Invitation::try_from).transpose()
    }

    async fn revoke_invitation(
        &self,
        org: &OrgId,
        id: &InvitationId,
        audit: &Audit,
    ) -> Result<(), StoreError> {
        let mut conn = self.db().conn().await?;
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

    async fn accept_invitation(
        &self,
        token_hash: &[u8; 32],
        accepter: &Accepter,
        now: DateTime<Utc>,
        audit: &Audit,
    ) -> Result<Option<(Member, Membership)>, StoreError> {
        let mut conn = self.db().conn().await?;
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

    async fn create_reset(
        &self,
        reset: &PasswordReset,
        org: &OrgId,
        audit: &Audit,
    ) -> Result<(), StoreError> {
        let mut conn = self.db().conn().await?;
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
                    let entry =
                        audit.member(org, Action::PasswordResetIssue, &member.into(), expires);
                    crate::audit::append(conn, &[entry]).await?;
                    Ok(true)
                }
                .scope_boxed()
            })
            .await
            .map_err(db_error)?;
        touched(usize::from(made), "member", &reset.member_id)
    }

    async fn use_reset(
        &self,
        token_hash: &[u8; 32],
        password_hash: &str,
        now: DateTime<Utc>,
        audit: &Audit,
    ) -> Result<Option<MemberId>, StoreError> {
        let mut conn = self.db().conn().await?;
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

    async fn reset_member(
        &self,
        token_hash: &[u8; 32],
        now: DateTime<Utc>,
    ) -> Result<Option<(Member, Option<MemberId>)>, StoreError> {
        let mut conn = self.db().conn().await?;
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

    async fn get_member(&self, id: &MemberId) -> Result<Option<Member>, StoreError> {
        let mut conn = self.db().conn().await?;
        let row: Option<MemberRow> = members::table
            .find(id.as_str())
            .select(MemberRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        Ok(row.map(Into::into))
    }

    async fn find_member(&self, login: &str) -> Result<Option<Member>, StoreError> {
        let mut conn = self.db().conn().await?;
        let row: Option<MemberRow> = members::table
            .filter(members::login.eq(login))
            .select(MemberRow::as_select())
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        Ok(row.map(Into::into))
    }

    async fn set_password(
        &self,
        id: &MemberId,
        password_hash: &str,
        action: Action,
        audit: &Audit,
    ) -> Result<(), StoreError> {
        let mut conn = self.db().conn().await?;
        let set = conn
            .transaction::<_, DieselError, _>(|conn| {
                async move {
                    let row: Option<MemberRow> = diesel::update(members::table.find(id.as_str()))
                        .set(members::password_hash.eq(password_hash))
                        .returning(MemberRow::as_returning())
                        .get_result(conn)
                        .await
                        .optional()?;
                    let Some(row) = row else { return Ok(false) };
                    in_every_org(conn, audit, action, &row.into()).await?;
                    Ok(true)
                }
                .scope_boxed()
            })
            .await
            .map_err(db_error)?;
        touched(usize::from(set), "member", id)
    }

    async fn memberships(&self, id: &MemberId) -> Result<Vec<Membership>, StoreError> {
        let mut conn = self.db().conn().await?;
        let rows: Vec<MembershipRow> = memberships::table
            .inner_join(organizations::table)
            .filter(memberships::member_id.eq(id.as_str()))
            .order((organizations::name, organizations::id))
            .select(MembershipRow::as_select())
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        rows.into_iter().map(Membership::try_from).collect()
    }

    async fn member_context(
        &self,
        id: &MemberId,
        org: &OrgId,
    ) -> Result<Option<MemberContext>, StoreError> {
        let mut conn = self.db().conn().await?;
        let row: Option<(MemberRow, MembershipRow, OrgRow)> = memberships::table
            .inner_join(members::table)
            .inner_join(organizations::table)
            .filter(memberships::member_id.eq(id.as_str()))
            .filter(memberships::org_id.eq(org.as_str()))
            .select((
                MemberRow::as_select(),
                MembershipRow::as_select(),
                OrgRow::as_select(),
            ))
            .first(&mut conn)
            .await
            .optional()
            .map_err(db_error)?;
        row.map(|(member, membership, org)| {
            Ok(MemberContext {
                member: member.into(),
                membership: membership.try_into()?,
                org: org.into(),
            })
        })
        .transpose()
    }

    async fn list_members(&self, org: &OrgId) -> Result<Vec<(Member, Membership)>, StoreError> {
        let mut conn = self.db().conn().await?;
        let rows: Vec<(MemberRow, MembershipRow)> = memberships::table
            .inner_join(members::table)
            .filter(memberships::org_id.eq(org.as_str()))
            .order(members::login)
            .select((MemberRow::as_select(), MembershipRow::as_select()))
            .load(&mut conn)
            .await
            .map_err(db_error)?;
        rows.into_iter()
            .map(|(m, ms)| Ok((m.into(), ms.try_into()?)))
            .collect()
    }

    async fn set_grant(
        &self,
        org: &OrgId,
        id: &MemberId,
        g: &Grant,
        audit: &Audit,
    ) -> Result<Membership, StoreError> {
        let mut conn = self.db().conn().await?;
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

    async fn remove_member(
        &self,
        org: &OrgId,
        id: &MemberId,
        audit: &Audit,
    ) -> Result<(), StoreError> {
        let mut conn = self.db().conn().await?;
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

    async fn second_factor(&self, id: &MemberId) -> Result<Option<SecondFactor>, StoreError> {
        let mut conn = self.db().conn().await?;
        let row: Option<(Vec<u8>, Option<DateTime<Utc>>, Option<i64>)> = factors::table
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

    async fn begin_second_factor(&self, id: &MemberId, sealed: &[u8]) -> Result<(), StoreError> {
        let mut conn = self.db().conn().await?;
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

    async fn confirm_second_factor(
        &self,
        id: &MemberId,
        step: u64,
        recovery: &[[u8; 32]],
        audit: &Audit,
    ) -> Result<bool, StoreError> {
        let mut conn = self.db().conn().await?;
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
                diesel::delete(
                    recovery_codes::table.filter(recovery_codes::member_id.eq(id.as_str())),
                )
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

    async fn use_step(&self, id: &MemberId, step: u64) -> Result<bool, StoreError> {
        let mut conn = self.db().conn().await?;
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

    async fn use_recovery_code(
        &self,
        id: &MemberId,
        hash: &[u8; 32],
        audit: &Audit,
    ) -> Result<bool, StoreError> {
        let mut conn = self.db().conn().await?;
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

    async fn remove_second_factor(
        &self,
        id: &MemberId,
        action: Action,
        audit: &Audit,
    ) -> Result<bool, StoreError> {
        let mut conn = self.db().conn().await?;
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
                diesel::delete(
                    recovery_codes::table.filter(recovery_codes::member_id.eq(id.as_str())),
                )
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
}

/// Inserts an invitation's row (in the caller's transaction).
async fn insert_invitation(
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
