//! `stowctl member …`: invitations (the first owner's way in), the team's list, and a new
//! password for a member who cannot sign in.

use std::io::Read;

use auth_core::member::{normalize_login, MemberStore};
use serde_json::{json, Value};
use stow_ops::members::{GrantRequest, Invite};

use crate::cli::MemberCmd;
use crate::table::{or_dash, table};
use crate::{CliError, Ctx};

pub(crate) async fn run(ctx: &Ctx, cmd: MemberCmd) -> Result<(Value, String), CliError> {
    match cmd {
        MemberCmd::Invite {
            org,
            role,
            servers,
            allow_paths,
            note,
            hours,
            console_url,
        } => {
            let org = ctx.org(&org).await?;
            let invited = Invite {
                org: org.id.clone(),
                grant: GrantRequest {
                    role,
                    servers: (!servers.is_empty()).then_some(servers),
                    allow_paths,
                    deny_paths: vec![],
                },
                note,
                expires_in_hours: Some(hours),
            }
            .run(&ctx.ops())
            .await?;
            let (invitation, token) = (invited.invitation, invited.token);
            let path = format!("/invite#{token}");
            let link = console_url
                .map(|base| format!("{}{path}", base.trim_end_matches('/')))
                .unwrap_or_else(|| format!("<console address>{path}"));
            let expires = invitation.expires_at.to_rfc3339();
            let human = format!(
                "invitation {} to {} as {} (works once, until {expires}); open:\n{link}",
                invitation.id, org.name, invitation.grant.role
            );
            let out = json!({
                "invitationId": invitation.id,
                "orgId": org.id,
                "role": invitation.grant.role.as_str(),
                "token": token,
                "acceptPath": path,
                "link": link,
                "expiresAt": expires,
            });
            Ok((out, human))
        }
        MemberCmd::List { org } => list(ctx, &org).await,
        MemberCmd::ResetSecondFactor { login } => reset_second_factor(ctx, &login).await,
        MemberCmd::SetPassword { login } => set_password(ctx, &login).await,
    }
}

/// `member list`: the team and its pending invitations.
async fn list(ctx: &Ctx, org: &auth_core::OrgId) -> Result<(Value, String), CliError> {
    let members: &dyn MemberStore = ctx.accounts.as_ref();
    let list = members.list_members(org).await?;
    let pending = members.pending_invitations(org).await?;
    let rows: Vec<Vec<String>> = list
        .iter()
        .map(|(m, ms)| {
            vec![
                m.login.clone(),
                or_dash(m.display_name.clone()),
                ms.grant.role.as_str().to_owned(),
                ms.created_at.format("%Y-%m-%d").to_string(),
            ]
        })
        .chain(pending.iter().map(|i| {
            vec![
                format!("(invited) {}", i.note.clone().unwrap_or_default()),
                "-".into(),
                i.grant.role.as_str().to_owned(),
                format!("until {}", i.expires_at.format("%Y-%m-%d %H:%M")),
            ]
        }))
        .collect();
    let human = if rows.is_empty() {
        format!("organization {org} has no members or invitations")
    } else {
        table(&["LOGIN", "NAME", "ROLE", "SINCE"], &rows)
    };
    let json_members: Vec<Value> = list
        .iter()
        .map(|(m, ms)| {
            json!({
                "memberId": m.id,
                "login": m.login,
                "displayName": m.display_name,
                "role": ms.grant.role.as_str(),
                "servers": ms.grant.servers.to_stored(),
                "allowPaths": ms.grant.paths.allowed,
                "joinedAt": ms.created_at.to_rfc3339(),
            })
        })
        .collect();
    let json_invitations: Vec<Value> = pending
        .iter()
        .map(|i| {
            json!({
                "invitationId": i.id,
                "role": i.grant.role.as_str(),
                "note": i.note,
                "expiresAt": i.expires_at.to_rfc3339(),
            })
        })
        .collect();
    Ok((
        json!({ "members": json_members, "invitations": json_invitations }),
        human,
    ))
}

/// The member who signs in as `login` (normalized), or the refusal naming it.
async fn signing_in_as(
    members: &dyn MemberStore,
    login: &str,
) -> Result<(String, auth_core::member::Member), CliError> {
    let login = normalize_login(login).map_err(|e| CliError(format!("--login: {e}")))?;
    let member = members
        .find_member(&login)
        .await?
        .ok_or_else(|| CliError(format!("no member signs in as {login:?}")))?;
    Ok((login, member))
}

/// `member reset-second-factor`: a locked-out member's second factor off, their sessions ended.
async fn reset_second_factor(ctx: &Ctx, login: &str) -> Result<(Value, String), CliError> {
    let members: &dyn MemberStore = ctx.accounts.as_ref();
    let (login, member) = signing_in_as(members, login).await?;
    let removed = members
        .remove_second_factor(
            &member.id,
            auth_core::audit::Action::SecondFactorReset,
            &ctx.audit(),
        )
        .await?;
    if !removed {
        return Err(CliError(format!("{login} has no second factor")));
    }
    let ended = ctx
        .stores
        .console_sessions
        .end_for_member(&member.id, None)
        .await?;
    Ok((
        json!({ "memberId": member.id, "sessionsEnded": ended }),
        format!(
            "{login}'s second factor is off; they sign in with their password and may set up a new one; {ended} console session(s) ended"
        ),
    ))
}

/// `member set-password`: a new password read from standard input, their sessions ended.
async fn set_password(ctx: &Ctx, login: &str) -> Result<(Value, String), CliError> {
    let members: &dyn MemberStore = ctx.accounts.as_ref();
    let (login, member) = signing_in_as(members, login).await?;
    let mut password = String::new();
    std::io::stdin()
        .read_to_string(&mut password)
        .map_err(|e| CliError(format!("reading the password from standard input: {e}")))?;
    let password = password.trim_end_matches(['\r', '\n']).to_owned();
    auth_core::password::check_new(&password, &login).map_err(|weak| CliError(weak.to_string()))?;
    // a command line, not a server: nothing else waits for this thread
    let hash = auth_core::password::hash(&password);
    members
        .set_password(
            &member.id,
            &hash,
            auth_core::audit::Action::PasswordSet,
            &ctx.audit(),
        )
        .await?;
    let ended = ctx
        .stores
        .console_sessions
        .end_for_member(&member.id, None)
        .await?;
    Ok((
        json!({ "memberId": member.id, "sessionsEnded": ended }),
        format!("{login} has a new password; {ended} console session(s) ended"),
    ))
}
