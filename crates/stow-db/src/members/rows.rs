//! The rows of migration 17's member tables, and their conversions to the domain types.

use super::*;

#[derive(Queryable, Selectable)]
#[diesel(table_name = members)]
pub(super) struct MemberRow {
    pub(super) id: String,
    pub(super) login: String,
    pub(super) display_name: Option<String>,
    pub(super) password_hash: String,
    pub(super) created_at: DateTime<Utc>,
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

pub(super) fn grant(
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
pub(super) struct MembershipRow {
    pub(super) org_id: String,
    pub(super) member_id: String,
    pub(super) role: String,
    pub(super) servers: Option<Vec<String>>,
    pub(super) allowed_prefixes: Vec<String>,
    pub(super) denied_prefixes: Vec<String>,
    pub(super) created_at: DateTime<Utc>,
    pub(super) updated_at: DateTime<Utc>,
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
pub(super) struct InvitationRow {
    pub(super) id: String,
    pub(super) org_id: String,
    pub(super) role: String,
    pub(super) servers: Option<Vec<String>>,
    pub(super) allowed_prefixes: Vec<String>,
    pub(super) denied_prefixes: Vec<String>,
    pub(super) invited_by: Option<String>,
    pub(super) token_hash: Vec<u8>,
    pub(super) note: Option<String>,
    pub(super) created_at: DateTime<Utc>,
    pub(super) expires_at: DateTime<Utc>,
    pub(super) accepted_at: Option<DateTime<Utc>>,
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
