//! `GET /v1/members`: the organization's members and pending invitations.

use actix_web::{web, HttpResponse};
use auth_core::member::{check_credential_reach, Invitation, Member, Membership};
use auth_core::Server;
use futures::{StreamExt, TryStreamExt};
use serde::Serialize;
use stow_http::{current_request_id, ApiError, Auth};
use utoipa::ToSchema;

use super::grant_out::GrantOut;
use super::manager;
use crate::state::ApiState;

fn ts(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// A member of the organization.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemberOut {
    /// `mem_…`
    pub id: String,
    pub login: String,
    pub display_name: Option<String>,
    #[serde(flatten)]
    pub grant: GrantOut,
    pub joined_at: String,
    pub updated_at: String,
}

impl MemberOut {
    pub fn new(servers: &[Server], member: &Member, membership: &Membership) -> Self {
        Self {
            id: member.id.to_string(),
            login: member.login.clone(),
            display_name: member.display_name.clone(),
            grant: GrantOut::with(servers, &membership.grant),
            joined_at: ts(membership.created_at),
            updated_at: ts(membership.updated_at),
        }
    }
}

/// An invitation not yet accepted (its token is never shown again).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvitationOut {
    /// `inv_…`
    pub id: String,
    #[serde(flatten)]
    pub grant: GrantOut,
    pub note: Option<String>,
    /// Who made it (`mem_…`); null when made with `stowctl`.
    pub invited_by: Option<String>,
    pub created_at: String,
    pub expires_at: String,
    /// Whether the link has expired (it is listed until withdrawn).
    pub expired: bool,
}

impl InvitationOut {
    pub fn new(servers: &[Server], i: &Invitation) -> Self {
        Self {
            id: i.id.to_string(),
            grant: GrantOut::with(servers, &i.grant),
            note: i.note.clone(),
            invited_by: i.invited_by.as_ref().map(ToString::to_string),
            created_at: ts(i.created_at),
            expires_at: ts(i.expires_at),
            expired: !i.open_at(chrono::Utc::now()),
        }
    }
}

/// A member as listed, with what the caller may do to their credentials.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListedMember {
    #[serde(flatten)]
    pub member: MemberOut,
    /// Whether the caller may make a password reset link for this member or remove their second
    /// factor: only someone who manages them in every organization they belong to (a password
    /// and a second factor are the person's, not this membership's). One's own second factor is
    /// turned off on the Account page, never here.
    pub credentials_in_reach: bool,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListMembersResponse {
    pub success: bool,
    /// By sign-in name.
    pub members: Vec<ListedMember>,
    /// Newest first.
    pub invitations: Vec<InvitationOut>,
    pub request_id: String,
}

/// List members and pending invitations.
#[utoipa::path(
    get, path = "/v1/members", tag = "members", security(("bearer" = [])),
    responses(
        (status = 200, description = "Members and pending invitations", body = ListMembersResponse),
        super::MemberRouteErrors,
        stow_http::error::KeyedRouteErrors,
    )
)]
pub async fn list_members(
    auth: Auth,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let actor = manager(&auth)?;
    let org = &auth.org.id;
    let store = &state.stores.members;
    let servers = state.stores.accounts.list_servers(org).await?;
    let members = store.list_members(org).await?;
    let invitations = store.pending_invitations(org).await?;
    let mine = store.memberships(&actor.id).await?;
    let in_reach: Vec<bool> = futures::stream::iter(&members)
        .map(|(m, _)| async {
            let theirs = store.memberships(&m.id).await?;
            Ok::<_, ApiError>(check_credential_reach(&mine, &theirs).is_ok())
        })
        .buffered(8)
        .try_collect()
        .await?;
    Ok(HttpResponse::Ok().json(ListMembersResponse {
        success: true,
        members: members
            .iter()
            .zip(in_reach)
            .map(|((m, ms), credentials_in_reach)| ListedMember {
                member: MemberOut::new(&servers, m, ms),
                credentials_in_reach,
            })
            .collect(),
        invitations: invitations
            .iter()
            .map(|i| InvitationOut::new(&servers, i))
            .collect(),
        request_id: current_request_id(),
    }))
}
