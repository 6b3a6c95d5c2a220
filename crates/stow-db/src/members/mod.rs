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

mod grants;
mod invites;
mod rows;
mod second_factor;
use rows::*;

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
        invites::create(self, i, audit).await
    }

    async fn pending_invitations(&self, org: &OrgId) -> Result<Vec<Invitation>, StoreError> {
        invites::pending(self, org).await
    }

    async fn find_invitation(
        &self,
        token_hash: &[u8; 32],
    ) -> Result<Option<Invitation>, StoreError> {
        invites::find(self, token_hash).await
    }

    async fn revoke_invitation(
        &self,
        org: &OrgId,
        id: &InvitationId,
        audit: &Audit,
    ) -> Result<(), StoreError> {
        invites::revoke(self, org, id, audit).await
    }

    async fn accept_invitation(
        &self,
        token_hash: &[u8; 32],
        accepter: &Accepter,
        now: DateTime<Utc>,
        audit: &Audit,
    ) -> Result<Option<(Member, Membership)>, StoreError> {
        invites::accept(self, token_hash, accepter, now, audit).await
    }

    async fn create_reset(
        &self,
        reset: &PasswordReset,
        org: &OrgId,
        audit: &Audit,
    ) -> Result<(), StoreError> {
        invites::create_reset(self, reset, org, audit).await
    }

    async fn use_reset(
        &self,
        token_hash: &[u8; 32],
        password_hash: &str,
        now: DateTime<Utc>,
        audit: &Audit,
    ) -> Result<Option<MemberId>, StoreError> {
        invites::use_reset(self, token_hash, password_hash, now, audit).await
    }

    async fn reset_member(
        &self,
        token_hash: &[u8; 32],
        now: DateTime<Utc>,
    ) -> Result<Option<(Member, Option<MemberId>)>, StoreError> {
        invites::reset_member(self, token_hash, now).await
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
        grants::set_grant(self, org, id, g, audit).await
    }

    async fn remove_member(
        &self,
        org: &OrgId,
        id: &MemberId,
        audit: &Audit,
    ) -> Result<(), StoreError> {
        grants::remove(self, org, id, audit).await
    }

    async fn second_factor(&self, id: &MemberId) -> Result<Option<SecondFactor>, StoreError> {
        second_factor::get(self, id).await
    }

    async fn begin_second_factor(&self, id: &MemberId, sealed: &[u8]) -> Result<(), StoreError> {
        second_factor::begin(self, id, sealed).await
    }

    async fn confirm_second_factor(
        &self,
        id: &MemberId,
        step: u64,
        recovery: &[[u8; 32]],
        audit: &Audit,
    ) -> Result<bool, StoreError> {
        second_factor::confirm(self, id, step, recovery, audit).await
    }

    async fn use_step(&self, id: &MemberId, step: u64) -> Result<bool, StoreError> {
        second_factor::use_step(self, id, step).await
    }

    async fn use_recovery_code(
        &self,
        id: &MemberId,
        hash: &[u8; 32],
        audit: &Audit,
    ) -> Result<bool, StoreError> {
        second_factor::use_recovery_code(self, id, hash, audit).await
    }

    async fn remove_second_factor(
        &self,
        id: &MemberId,
        action: Action,
        audit: &Audit,
    ) -> Result<bool, StoreError> {
        second_factor::remove(self, id, action, audit).await
    }
}
