#![allow(clippy::unwrap_used)]

use auth_core::audit::{Action, Outcome};
use auth_core::roles::{Grant, Role};
use futures::executor::block_on;

use super::*;
use crate::testing::World;
use crate::OpError;

fn invite(w: &World, role: &str) -> Invite {
    Invite {
        org: w.org.id.clone(),
        grant: GrantRequest {
            role: role.into(),
            ..GrantRequest::default()
        },
        note: Some("  Olga  ".into()),
        expires_in_hours: None,
    }
}

#[test]
fn an_admin_invites_within_their_reach_and_the_log_says_so() {
    block_on(async {
        let w = World::new().await;
        let admin = w.member("ada", Grant::everywhere(Role::Admin)).await;
        let made = invite(&w, "moderator")
            .run(&w.api(&admin))
            .await
            .ok()
            .unwrap();
        let i = &made.invitation;
        assert_eq!(i.note.as_deref(), Some("Olga"), "trimmed");
        assert_eq!(i.invited_by.as_ref().map(|m| m.as_str()), Some("mem_ada"));
        assert_eq!(
            (i.expires_at - i.created_at).num_hours(),
            72,
            "the default lifetime"
        );
        assert_eq!(
            i.token_hash,
            auth_core::console_session::token_hash(&made.token)
        );
        let pending = w
            .stores
            .members
            .pending_invitations(&w.org.id)
            .await
            .unwrap();
        assert_eq!(pending.len(), 1);
        let log = w.audit(&w.org).await;
        assert_eq!(log.last().unwrap().action, Action::MemberInvite);
    });
}

#[test]
fn an_invitation_beyond_the_inviters_grant_is_refused_and_recorded() {
    block_on(async {
        let w = World::new().await;
        let narrow = w.narrow_admin().await;
        let ctx = w.api(&narrow);
        // an owner, or every server: beyond an admin limited to abc and staff/
        for role in ["owner", "viewer"] {
            let e = invite(&w, role).run(&ctx).await.err().unwrap();
            assert!(matches!(e, OpError::Forbidden(_)), "{role}: {e:?}");
        }
        let within = Invite {
            grant: GrantRequest {
                role: "viewer".into(),
                servers: Some(vec!["abc".into()]),
                allow_paths: vec!["staff/shots".into()],
                deny_paths: vec![],
            },
            ..invite(&w, "viewer")
        };
        within.run(&ctx).await.ok().unwrap();
        let refused: Vec<bool> = w
            .audit(&w.org)
            .await
            .iter()
            .filter(|e| e.action == Action::MemberInvite)
            .map(|e| matches!(e.outcome, Outcome::Refused { .. }))
            .collect();
        assert_eq!(refused, [true, true, false]);
    });
}

#[test]
fn who_may_invite() {
    block_on(async {
        let w = World::new().await;
        for role in [Role::Moderator, Role::Viewer] {
            let member = w.member("m", Grant::everywhere(role)).await;
            let e = invite(&w, "viewer")
                .run(&w.api(&member))
                .await
                .err()
                .unwrap();
            assert!(matches!(e, OpError::Auth(_)), "{role:?}: {e:?}");
        }
        let owner = w.member("jay", Grant::everywhere(Role::Owner)).await;
        let other_org = Invite {
            org: w.other.id.clone(),
            ..invite(&w, "viewer")
        };
        let e = other_org.run(&w.api(&owner)).await.err().unwrap();
        assert!(matches!(e, OpError::Forbidden(_)), "{e:?}");
        let first_owner = Invite {
            org: w.other.id.clone(),
            ..invite(&w, "owner")
        };
        let made = first_owner.run(&w.operator()).await.ok().unwrap();
        assert_eq!(
            made.invitation.invited_by, None,
            "the operator invites as nobody"
        );
    });
}

/// The note rule holds whoever invites (it was once only the API's).
#[test]
fn every_field_is_checked_and_named() {
    block_on(async {
        let w = World::new().await;
        let n = |k: usize| "é".repeat(k);
        let with = |f: &dyn Fn(&mut Invite)| {
            let mut i = invite(&w, "viewer");
            f(&mut i);
            i
        };
        let cases: Vec<(Invite, &str)> = vec![
            (
                with(&|i| i.note = Some(n(201))),
                "`note` has at most 200 characters",
            ),
            (
                with(&|i| i.note = Some("ring\u{7}".into())),
                "no control characters",
            ),
            (
                with(&|i| i.expires_in_hours = Some(0)),
                "`expiresInHours` is 0; use 1 to 720",
            ),
            (
                with(&|i| i.expires_in_hours = Some(721)),
                "`expiresInHours` is 721",
            ),
            (
                with(&|i| i.grant.role = "root".into()),
                "`role`: unknown role `root`",
            ),
            (
                with(&|i| i.grant.servers = Some(vec!["xyz".into()])),
                "`servers`: no server with join code `xyz`",
            ),
            (
                with(&|i| i.grant.deny_paths = vec!["a".into(); 101]),
                "`denyPaths` has 101 entries",
            ),
        ];
        let owner = w.member("jay", Grant::everywhere(Role::Owner)).await;
        for ctx in [w.operator(), w.api(&owner)] {
            for (request, expected) in &cases {
                let e = request.clone().run(&ctx).await.err().unwrap();
                let text = e.naming(|f| format!("`{f}`"));
                assert!(text.contains(expected), "{expected}: {text}");
            }
        }
        assert!(w
            .stores
            .members
            .pending_invitations(&w.org.id)
            .await
            .unwrap()
            .is_empty());
        let edge = with(&|i| {
            i.note = Some(n(200));
            i.expires_in_hours = Some(720);
        });
        edge.run(&w.operator()).await.ok().unwrap();
    });
}

fn to(w: &World, member: &auth_core::MemberId, role: &str) -> ChangeGrant {
    ChangeGrant {
        org: w.org.id.clone(),
        member: member.clone(),
        grant: GrantRequest {
            role: role.into(),
            ..GrantRequest::default()
        },
    }
}

async fn session_of(w: &World, member: &auth_core::MemberId) {
    let now = chrono::Utc::now();
    let session = auth_core::console_session::Session {
        id_hash: auth_core::console_session::token_hash(member.as_str()),
        subject: auth_core::console_session::Subject::Member {
            member_id: member.clone(),
            org_id: w.org.id.clone(),
        },
        csrf_token: "csrf".into(),
        created_at: now,
        last_seen_at: now,
    };
    w.stores.console_sessions.create(&session).await.unwrap();
}

#[test]
fn a_grant_changes_within_reach_and_the_members_sessions_end() {
    block_on(async {
        let w = World::new().await;
        let vera = w.join("vera", "viewer").await;
        session_of(&w, &vera).await;
        let owner = w.member("jay", Grant::everywhere(Role::Owner)).await;
        let done = to(&w, &vera, "moderator")
            .run(&w.api(&owner))
            .await
            .ok()
            .unwrap();
        assert_eq!(done.membership.grant.role, Role::Moderator);
        assert_eq!((done.changed, done.sessions_ended), (true, 1));
        let same = to(&w, &vera, "moderator")
            .run(&w.api(&owner))
            .await
            .ok()
            .unwrap();
        assert_eq!(
            (same.changed, same.sessions_ended),
            (false, 0),
            "nothing changed"
        );
        let log = w.audit(&w.org).await;
        assert!(log
            .iter()
            .any(|e| e.action == Action::MemberChange && e.target == "vera"));
    });
}

#[test]
fn changes_and_removals_beyond_reach_are_refused_and_recorded() {
    block_on(async {
        let w = World::new().await;
        let vera = w.join("vera", "viewer").await;
        let narrow = w.narrow_admin().await;
        let ctx = w.api(&narrow);
        let e = to(&w, &vera, "admin").run(&ctx).await.err().unwrap();
        assert!(matches!(e, OpError::Forbidden(_)), "{e:?}");
        // vera sees every server: beyond an admin limited to abc
        let e = Remove {
            org: w.org.id.clone(),
            member: vera.clone(),
        }
        .run(&ctx)
        .await
        .unwrap_err();
        assert!(matches!(e, OpError::Forbidden(_)), "{e:?}");
        let refused: Vec<(Action, String)> = w
            .audit(&w.org)
            .await
            .into_iter()
            .filter(|e| matches!(e.outcome, Outcome::Refused { .. }))
            .map(|e| (e.action, e.target))
            .collect();
        assert_eq!(
            refused,
            [
                (Action::MemberChange, "vera".into()),
                (Action::MemberRemove, "vera".into())
            ]
        );
        let moderator = w.member("mo", Grant::everywhere(Role::Moderator)).await;
        let e = to(&w, &vera, "viewer")
            .run(&w.api(&moderator))
            .await
            .err()
            .unwrap();
        assert!(matches!(e, OpError::Auth(_)), "{e:?}");
    });
}

#[test]
fn the_last_owner_stays_and_other_organizations_members_are_unknown() {
    block_on(async {
        let w = World::new().await;
        let olga = w.join("olga", "owner").await;
        let e = Remove {
            org: w.org.id.clone(),
            member: olga.clone(),
        }
        .run(&w.operator())
        .await
        .unwrap_err();
        assert!(matches!(e, OpError::Conflict(_)), "{e:?}");
        let e = to(&w, &olga, "admin")
            .run(&w.operator())
            .await
            .err()
            .unwrap();
        assert!(
            matches!(
                e,
                OpError::Conflict(_) | OpError::Store(auth_core::StoreError::Conflict(_))
            ),
            "{e:?}"
        );
        let vera = w.join("vera", "viewer").await;
        let elsewhere = Remove {
            org: w.other.id.clone(),
            member: vera.clone(),
        };
        let e = elsewhere.run(&w.operator()).await.unwrap_err();
        assert!(matches!(e, OpError::NotFound(_)), "{e:?}");
        let owner = w.member("jay", Grant::everywhere(Role::Owner)).await;
        let theirs = Remove {
            org: w.other.id.clone(),
            member: vera.clone(),
        };
        let e = theirs.run(&w.api(&owner)).await.unwrap_err();
        assert!(
            matches!(e, OpError::NotFound(_)),
            "another organization: {e:?}"
        );
        let ended = Remove {
            org: w.org.id.clone(),
            member: vera,
        }
        .run(&w.api(&owner))
        .await
        .unwrap();
        assert_eq!(ended, 0);
    });
}
