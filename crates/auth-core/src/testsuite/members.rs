//! The shared suite of [`MemberStore`]: every adapter runs each case through
//! [`member_store_suite!`], on a store that also holds the organizations members belong to.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::{Duration, Utc};

use crate::audit::{Action, Actor, Audit, AuditQuery, AuditStore};
use crate::console_session::{new_token, token_hash};
use crate::ids::{InvitationId, MemberId, OrgId};
use crate::member::{Accepter, Invitation, MemberStore, LAST_OWNER};
use crate::model::{new_id, Org};
use crate::roles::{Grant, Role};
use crate::store::{AccountStore, StoreError};
use crate::{PathScope, ServerScope};

/// Accounts and members of one store, and the audit log they write.
pub trait MemberFixture: AccountStore + MemberStore + AuditStore {}
impl<T: AccountStore + MemberStore + AuditStore> MemberFixture for T {}

/// One `#[test]` per case, each on a fresh store. `$store` is an
/// `async fn() -> Box<dyn MemberFixture>`.
#[macro_export]
macro_rules! member_store_suite {
    ($run:path, $store:path) => {
        $crate::member_store_suite!(@cases $run, $store;
            invitations_work_once_and_only_before_they_expire,
            a_taken_login_leaves_the_invitation_open,
            a_member_joins_a_second_organization_with_the_same_sign_in,
            grants_change_and_the_last_owner_stays,
            passwords_are_replaced,
            a_reset_works_once_before_it_expires_and_replaces_older_ones,
            key_member_and_plan_changes_are_audited_once_with_their_actor,
            second_factors_are_confirmed_once_and_their_codes_used_once,
            servers_registered_and_switched_are_audited_once);
    };
    (@cases $run:path, $store:path; $($case:ident),*) => {
        $(
            #[test]
            fn $case() {
                $run(async {
                    let store = $store().await;
                    $crate::testsuite::members::$case(store.as_ref()).await;
                })
            }
        )*
    };
}

async fn org(store: &dyn MemberFixture, name: &str) -> Org {
    store.create_org(name, &new_id("ws"), "pro").await.unwrap()
}

/// An invitation to `org` for `grant`, open for an hour from now; its token.
async fn invite(store: &dyn MemberFixture, org: &OrgId, grant: Grant) -> (Invitation, String) {
    let token = new_token();
    let now = Utc::now();
    let invitation = Invitation {
        id: InvitationId::generate(),
        org_id: org.clone(),
        grant,
        invited_by: None,
        token_hash: token_hash(&token),
        note: Some("for ana".into()),
        created_at: now,
        expires_at: now + Duration::hours(1),
        accepted_at: None,
    };
    store
        .create_invitation(&invitation, &crate::audit::Audit::operator("test"))
        .await
        .unwrap();
    (invitation, token)
}

fn new_member(login: &str) -> Accepter {
    Accepter::New {
        login: login.into(),
        display_name: Some(login.to_uppercase()),
        password_hash: "$argon2id$stand-in".into(),
    }
}

/// A member of `org` holding `grant`, signed up through an invitation.
async fn member(store: &dyn MemberFixture, org: &OrgId, login: &str, grant: Grant) -> MemberId {
    let (_, token) = invite(store, org, grant).await;
    let (m, _) = store
        .accept_invitation(
            &token_hash(&token),
            &new_member(login),
            Utc::now(),
            &crate::audit::Audit::operator("test"),
        )
        .await
        .unwrap()
        .unwrap();
    m.id
}

pub async fn invitations_work_once_and_only_before_they_expire(store: &dyn MemberFixture) {
    let acme = org(store, "Acme").await;
    let scoped = Grant {
        role: Role::Moderator,
        servers: ServerScope::All,
        paths: PathScope::new(vec!["shots".into()], vec!["shots/staff".into()]),
    };
    let (invitation, token) = invite(store, &acme.id, scoped.clone()).await;
    let pending = store.pending_invitations(&acme.id).await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].grant, scoped);
    assert_eq!(pending[0].note.as_deref(), Some("for ana"));

    let hash = token_hash(&token);
    let found = store.find_invitation(&hash).await.unwrap().unwrap();
    assert_eq!(found.id, invitation.id);
    assert_eq!(
        store.find_invitation(&token_hash("other")).await.unwrap(),
        None
    );
    let late = invitation.expires_at;
    assert_eq!(
        store
            .accept_invitation(
                &hash,
                &new_member("ana"),
                late,
                &crate::audit::Audit::operator("test")
            )
            .await
            .unwrap(),
        None,
        "expired at its exact expiry"
    );
    let wrong = token_hash("not the token");
    let now = Utc::now();
    assert_eq!(
        store
            .accept_invitation(
                &wrong,
                &new_member("ana"),
                now,
                &crate::audit::Audit::operator("test")
            )
            .await
            .unwrap(),
        None
    );
    let (m, membership) = store
        .accept_invitation(
            &hash,
            &new_member("ana"),
            now,
            &crate::audit::Audit::operator("test"),
        )
        .await
        .unwrap()
        .expect("accepted before expiry");
    assert_eq!(
        (m.login.as_str(), m.display_name.as_deref()),
        ("ana", Some("ANA"))
    );
    assert_eq!(membership.grant, scoped);
    assert_eq!(membership.org_id, acme.id);
    assert_eq!(
        store
            .accept_invitation(
                &hash,
                &new_member("bob"),
                now,
                &crate::audit::Audit::operator("test")
            )
            .await
            .unwrap(),
        None,
        "a second use"
    );
    assert!(store
        .pending_invitations(&acme.id)
        .await
        .unwrap()
        .is_empty());
    assert!(store.find_member("bob").await.unwrap().is_none());

    let (withdrawn, token) = invite(store, &acme.id, Grant::everywhere(Role::Viewer)).await;
    let other = org(store, "Other").await;
    assert!(matches!(
        store
            .revoke_invitation(
                &other.id,
                &withdrawn.id,
                &crate::audit::Audit::operator("test")
            )
            .await,
        Err(StoreError::NotFound(_))
    ));
    store
        .revoke_invitation(
            &acme.id,
            &withdrawn.id,
            &crate::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    assert_eq!(
        store
            .accept_invitation(
                &token_hash(&token),
                &new_member("cy"),
                now,
                &crate::audit::Audit::operator("test")
            )
            .await
            .unwrap(),
        None
    );
    assert!(matches!(
        store
            .revoke_invitation(
                &acme.id,
                &withdrawn.id,
                &crate::audit::Audit::operator("test")
            )
            .await,
        Err(StoreError::NotFound(_))
    ));
}

pub async fn a_taken_login_leaves_the_invitation_open(store: &dyn MemberFixture) {
    let acme = org(store, "Acme").await;
    member(
        store,
        &acme.id,
        "ana@example.com",
        Grant::everywhere(Role::Owner),
    )
    .await;
    let (_, token) = invite(store, &acme.id, Grant::everywhere(Role::Viewer)).await;
    let hash = token_hash(&token);
    let now = Utc::now();
    assert!(matches!(
        store
            .accept_invitation(
                &hash,
                &new_member("ana@example.com"),
                now,
                &crate::audit::Audit::operator("test")
            )
            .await,
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(store.pending_invitations(&acme.id).await.unwrap().len(), 1);
    let (bob, _) = store
        .accept_invitation(
            &hash,
            &new_member("bob"),
            now,
            &crate::audit::Audit::operator("test"),
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        store.get_member(&bob.id).await.unwrap().unwrap().login,
        "bob"
    );
}

pub async fn a_member_joins_a_second_organization_with_the_same_sign_in(store: &dyn MemberFixture) {
    let (zeta, acme) = (org(store, "Zeta RP").await, org(store, "Acme").await);
    let ana = member(store, &zeta.id, "ana", Grant::everywhere(Role::Owner)).await;
    let (_, token) = invite(store, &acme.id, Grant::everywhere(Role::Moderator)).await;
    let hash = token_hash(&token);
    let now = Utc::now();
    let (joined, _) = store
        .accept_invitation(
            &hash,
            &Accepter::Existing(ana.clone()),
            now,
            &crate::audit::Audit::operator("test"),
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(joined.id, ana);
    let orgs: Vec<OrgId> = store
        .memberships(&ana)
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.org_id)
        .collect();
    assert_eq!(
        orgs,
        [acme.id.clone(), zeta.id.clone()],
        "by organization name"
    );
    let ctx = store.member_context(&ana, &acme.id).await.unwrap().unwrap();
    assert_eq!(ctx.membership.grant.role, Role::Moderator);
    assert_eq!(ctx.org.name, "Acme");
    assert_eq!(ctx.member.login, "ana");

    let (_, again) = invite(store, &acme.id, Grant::everywhere(Role::Admin)).await;
    assert!(
        matches!(
            store
                .accept_invitation(
                    &token_hash(&again),
                    &Accepter::Existing(ana.clone()),
                    now,
                    &crate::audit::Audit::operator("test")
                )
                .await,
            Err(StoreError::Conflict(_))
        ),
        "a second membership in one organization"
    );
    let other = org(store, "Nobody's").await;
    assert_eq!(store.member_context(&ana, &other.id).await.unwrap(), None);
}

pub async fn grants_change_and_the_last_owner_stays(store: &dyn MemberFixture) {
    let acme = org(store, "Acme").await;
    let owner = member(store, &acme.id, "olga", Grant::everywhere(Role::Owner)).await;
    let admin = member(store, &acme.id, "adam", Grant::everywhere(Role::Admin)).await;
    let listed: Vec<String> = store
        .list_members(&acme.id)
        .await
        .unwrap()
        .into_iter()
        .map(|(m, _)| m.login)
        .collect();
    assert_eq!(listed, ["adam", "olga"]);

    let viewer = Grant::everywhere(Role::Viewer);
    let conflict =
        |r: Result<_, StoreError>| matches!(r, Err(StoreError::Conflict(m)) if m == LAST_OWNER);
    assert!(conflict(
        store
            .set_grant(
                &acme.id,
                &owner,
                &viewer,
                &crate::audit::Audit::operator("test")
            )
            .await
            .map(|_| ())
    ));
    assert!(conflict(
        store
            .remove_member(&acme.id, &owner, &crate::audit::Audit::operator("test"))
            .await
    ));
    let promoted = store
        .set_grant(
            &acme.id,
            &admin,
            &Grant::everywhere(Role::Owner),
            &crate::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    assert_eq!(promoted.grant.role, Role::Owner);
    let narrowed = Grant {
        role: Role::Viewer,
        servers: ServerScope::only([crate::ServerId::from("srv_a")]).unwrap(),
        paths: PathScope::unrestricted(),
    };
    let changed = store
        .set_grant(
            &acme.id,
            &owner,
            &narrowed,
            &crate::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    assert_eq!(changed.grant, narrowed);
    assert_eq!(
        store
            .member_context(&owner, &acme.id)
            .await
            .unwrap()
            .unwrap()
            .membership
            .grant,
        narrowed
    );
    store
        .remove_member(&acme.id, &owner, &crate::audit::Audit::operator("test"))
        .await
        .unwrap();
    assert_eq!(store.member_context(&owner, &acme.id).await.unwrap(), None);
    assert!(
        store.get_member(&owner).await.unwrap().is_some(),
        "the account stays"
    );
    assert!(conflict(
        store
            .remove_member(&acme.id, &admin, &crate::audit::Audit::operator("test"))
            .await
    ));
    assert!(matches!(
        store
            .remove_member(&acme.id, &owner, &crate::audit::Audit::operator("test"))
            .await,
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        store
            .set_grant(
                &acme.id,
                &MemberId::new("mem_nope"),
                &viewer,
                &crate::audit::Audit::operator("test")
            )
            .await,
        Err(StoreError::NotFound(_))
    ));
}

pub async fn passwords_are_replaced(store: &dyn MemberFixture) {
    let acme = org(store, "Acme").await;
    let ana = member(store, &acme.id, "ana", Grant::everywhere(Role::Owner)).await;
    store
        .set_password(
            &ana,
            "$argon2id$new",
            Action::PasswordSet,
            &crate::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    assert_eq!(
        store
            .find_member("ana")
            .await
            .unwrap()
            .unwrap()
            .password_hash,
        "$argon2id$new"
    );
    assert!(matches!(
        store
            .set_password(
                &MemberId::new("mem_nope"),
                "x",
                Action::PasswordSet,
                &crate::audit::Audit::operator("test")
            )
            .await,
        Err(StoreError::NotFound(_))
    ));
}

pub async fn a_reset_works_once_before_it_expires_and_replaces_older_ones(
    store: &dyn MemberFixture,
) {
    use crate::member::PasswordReset;
    let acme = org(store, "Acme").await;
    let ana = member(store, &acme.id, "ana", Grant::everywhere(Role::Viewer)).await;
    let bo = member(store, &acme.id, "bo", Grant::everywhere(Role::Admin)).await;
    let now = Utc::now();
    let reset = |token: &str, at: chrono::DateTime<Utc>| PasswordReset {
        member_id: ana.clone(),
        made_by: None,
        token_hash: token_hash(token),
        created_at: at,
        expires_at: at + Duration::hours(1),
    };
    store
        .create_reset(
            &reset("first", now),
            &acme.id,
            &crate::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    store
        .create_reset(
            &PasswordReset {
                made_by: Some(bo.clone()),
                ..reset("second", now + Duration::seconds(1))
            },
            &acme.id,
            &crate::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    let later = now + Duration::seconds(2);
    assert_eq!(
        store
            .use_reset(
                &token_hash("first"),
                "$argon2id$x",
                later,
                &crate::audit::Audit::operator("test")
            )
            .await
            .unwrap(),
        None,
        "a newer reset closes the older one"
    );
    assert_eq!(
        store
            .reset_member(&token_hash("second"), later)
            .await
            .unwrap()
            .map(|(m, made_by)| (m.id, made_by)),
        Some((ana.clone(), Some(bo.clone()))),
        "the member it is for, and its maker"
    );
    let expiry = now + Duration::seconds(1) + Duration::hours(1);
    assert_eq!(
        store
            .use_reset(
                &token_hash("second"),
                "$argon2id$x",
                expiry,
                &crate::audit::Audit::operator("test")
            )
            .await
            .unwrap(),
        None,
        "expired at its exact expiry"
    );
    assert_eq!(
        store
            .use_reset(
                &token_hash("second"),
                "$argon2id$new",
                later,
                &crate::audit::Audit::operator("test")
            )
            .await
            .unwrap(),
        Some(ana.clone())
    );
    assert_eq!(
        store.get_member(&ana).await.unwrap().unwrap().password_hash,
        "$argon2id$new"
    );
    assert_eq!(
        store
            .use_reset(
                &token_hash("second"),
                "$argon2id$again",
                later,
                &crate::audit::Audit::operator("test")
            )
            .await
            .unwrap(),
        None,
        "once"
    );
    assert_eq!(
        store
            .reset_member(&token_hash("second"), later)
            .await
            .unwrap(),
        None
    );
    let mut stranger = reset("third", now);
    stranger.member_id = MemberId::new("mem_nope");
    assert!(store
        .create_reset(&stranger, &acme.id, &crate::audit::Audit::operator("test"))
        .await
        .is_err());
}

/// `(action, target, actor label)` of the organization's entries, oldest first.
async fn audit_of(store: &dyn MemberFixture, org: &OrgId) -> Vec<(Action, String, String)> {
    let all = AuditQuery {
        limit: 200,
        ..AuditQuery::default()
    };
    let mut found: Vec<_> = store
        .page(org, &all)
        .await
        .unwrap()
        .into_iter()
        .map(|e| {
            (
                e.entry.action,
                e.entry.target,
                e.entry.actor.label().to_owned(),
            )
        })
        .collect();
    found.reverse();
    found
}

pub async fn key_member_and_plan_changes_are_audited_once_with_their_actor(
    store: &dyn MemberFixture,
) {
    use crate::member::PasswordReset;
    use crate::model::NewKey;
    use crate::secret;
    let acme = org(store, "Acme").await;
    let other = org(store, "Other").await;
    let root = Audit::operator("root");
    let ann = Audit {
        actor: Actor::Member {
            id: MemberId::new("mem_ann"),
            login: "ann".into(),
        },
        via: crate::audit::Via::Console,
        address: Some("192.0.2.7".into()),
        request_id: Some("req-1".into()),
    };
    // set-up writes entries too; count from here
    let before = audit_of(store, &acme.id).await.len();

    let s = secret::generate(crate::CredentialType::Developer);
    let mut new = NewKey::developer(acme.id.clone(), &s, crate::PermissionSet::all());
    new.name = Some("ci".into());
    let key = store.create_key(&new, &ann).await.unwrap();
    store.disable_key(&key.id, Utc::now(), &ann).await.unwrap();
    store.disable_key(&key.id, Utc::now(), &ann).await.unwrap();
    store.enable_key(&key.id, &ann).await.unwrap();
    store.enable_key(&key.id, &ann).await.unwrap();
    store.delete_key(&key.id, &ann).await.unwrap();
    assert!(store.delete_key(&key.id, &ann).await.is_err());
    store.set_org_plan(&acme.id, "pro", &root).await.unwrap();
    store.set_org_plan(&acme.id, "free", &root).await.unwrap();

    let bob = member(store, &acme.id, "bob", Grant::everywhere(Role::Viewer)).await;
    store
        .create_org("Bob's", &new_id("ws"), "pro")
        .await
        .unwrap();
    // bob also in `other`: his password entries go to both
    let (_, token) = invite(store, &other.id, Grant::everywhere(Role::Viewer)).await;
    store
        .accept_invitation(
            &token_hash(&token),
            &Accepter::Existing(bob.clone()),
            Utc::now(),
            &root,
        )
        .await
        .unwrap()
        .unwrap();
    let moderator = Grant::everywhere(Role::Moderator);
    store
        .set_grant(&acme.id, &bob, &moderator, &ann)
        .await
        .unwrap();
    store
        .set_grant(&acme.id, &bob, &moderator, &ann)
        .await
        .unwrap();
    let now = Utc::now();
    let reset = PasswordReset {
        member_id: bob.clone(),
        made_by: None,
        token_hash: token_hash("reset"),
        created_at: now,
        expires_at: now + Duration::hours(1),
    };
    store.create_reset(&reset, &acme.id, &ann).await.unwrap();
    store
        .use_reset(&token_hash("reset"), "$argon2id$new", now, &ann)
        .await
        .unwrap()
        .unwrap();
    store
        .set_password(&bob, "$argon2id$newer", Action::PasswordChange, &root)
        .await
        .unwrap();
    let (pending, _) = invite(store, &acme.id, Grant::everywhere(Role::Viewer)).await;
    store
        .revoke_invitation(&acme.id, &pending.id, &ann)
        .await
        .unwrap();
    store.remove_member(&acme.id, &bob, &ann).await.unwrap();

    let s = |v: &str| v.to_owned();
    let got = audit_of(store, &acme.id).await.split_off(before);
    let invite_target = |i: usize| got[i].1.clone();
    assert_eq!(
        got,
        [
            (Action::KeyCreate, key.id.to_string(), s("ann")),
            (Action::KeyDisable, key.id.to_string(), s("ann")),
            (Action::KeyEnable, key.id.to_string(), s("ann")),
            (Action::KeyDelete, key.id.to_string(), s("ann")),
            (Action::PlanChange, s("free"), s("root")),
            (Action::MemberInvite, invite_target(5), s("test")),
            // the new member acts when they accept
            (Action::MemberJoin, s("bob"), s("bob")),
            (Action::MemberChange, s("bob"), s("ann")),
            (Action::PasswordResetIssue, s("bob"), s("ann")),
            (Action::PasswordReset, s("bob"), s("bob")),
            (Action::PasswordChange, s("bob"), s("root")),
            (Action::MemberInvite, pending.id.to_string(), s("test")),
            (Action::InvitationWithdraw, pending.id.to_string(), s("ann")),
            (Action::MemberRemove, s("bob"), s("ann")),
        ]
    );
    let last = store
        .page(
            &acme.id,
            &AuditQuery {
                limit: 1,
                ..AuditQuery::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(last[0].entry.address.as_deref(), Some("192.0.2.7"));
    assert_eq!(last[0].entry.request_id.as_deref(), Some("req-1"));
    assert_eq!(last[0].entry.details["memberId"], bob.as_str());
    // bob's password changes are in his other organization's log as well
    let theirs: Vec<Action> = audit_of(store, &other.id)
        .await
        .into_iter()
        .map(|e| e.0)
        .collect();
    assert!(theirs.ends_with(&[
        Action::MemberJoin,
        Action::PasswordReset,
        Action::PasswordChange
    ]));
    // retention: pruning before now + 1 s leaves nothing of this organization, and the other's
    let pruned = store
        .prune(&acme.id, Utc::now() + Duration::seconds(1))
        .await
        .unwrap();
    assert_eq!(pruned as usize, before + got.len());
    assert_eq!(audit_of(store, &acme.id).await, []);
    assert!(!audit_of(store, &other.id).await.is_empty());
}

pub async fn second_factors_are_confirmed_once_and_their_codes_used_once(
    store: &dyn MemberFixture,
) {
    use crate::member::SECOND_FACTOR_ON;
    let acme = org(store, "Acme").await;
    let ann = member(store, &acme.id, "ann", Grant::everywhere(Role::Viewer)).await;
    let who = Audit::operator("ann");
    assert_eq!(store.second_factor(&ann).await.unwrap(), None);
    assert!(!store.use_step(&ann, 5).await.unwrap(), "no factor");
    assert!(matches!(
        store
            .begin_second_factor(&MemberId::new("mem_nope"), b"x")
            .await,
        Err(StoreError::NotFound(_))
    ));
    // an unconfirmed factor is replaced by the next attempt, and is not asked for
    store.begin_second_factor(&ann, b"first").await.unwrap();
    store.begin_second_factor(&ann, b"second").await.unwrap();
    let pending = store.second_factor(&ann).await.unwrap().unwrap();
    assert_eq!(pending.sealed_secret, b"second");
    assert_eq!(pending.confirmed_at, None);
    assert!(!store.use_step(&ann, 5).await.unwrap(), "not confirmed yet");

    let codes = [token_hash("r1"), token_hash("r2")];
    let before = audit_of(store, &acme.id).await.len();
    assert!(store
        .confirm_second_factor(&ann, 10, &codes, &who)
        .await
        .unwrap());
    assert!(
        !store
            .confirm_second_factor(&ann, 11, &codes, &who)
            .await
            .unwrap(),
        "once"
    );
    let on = store.second_factor(&ann).await.unwrap().unwrap();
    assert!(on.confirmed_at.is_some());
    assert_eq!((on.last_step, on.recovery_left), (Some(10), 2));
    assert_eq!(
        store.begin_second_factor(&ann, b"third").await,
        Err(StoreError::Conflict(SECOND_FACTOR_ON.into()))
    );

    // steps: only after the last one used
    assert!(!store.use_step(&ann, 10).await.unwrap());
    assert!(!store.use_step(&ann, 9).await.unwrap());
    assert!(store.use_step(&ann, 11).await.unwrap());
    assert!(
        !store.use_step(&ann, 11).await.unwrap(),
        "a code works once"
    );

    // recovery codes: each once
    assert!(store
        .use_recovery_code(&ann, &codes[0], &who)
        .await
        .unwrap());
    assert!(!store
        .use_recovery_code(&ann, &codes[0], &who)
        .await
        .unwrap());
    assert!(!store
        .use_recovery_code(&ann, &token_hash("r9"), &who)
        .await
        .unwrap());
    assert_eq!(
        store
            .second_factor(&ann)
            .await
            .unwrap()
            .unwrap()
            .recovery_left,
        1
    );

    assert!(store
        .remove_second_factor(&ann, Action::SecondFactorReset, &who)
        .await
        .unwrap());
    assert!(!store
        .remove_second_factor(&ann, Action::SecondFactorReset, &who)
        .await
        .unwrap());
    assert_eq!(store.second_factor(&ann).await.unwrap(), None);
    assert!(
        !store
            .use_recovery_code(&ann, &codes[1], &who)
            .await
            .unwrap(),
        "gone with it"
    );
    let actions: Vec<Action> = audit_of(store, &acme.id)
        .await
        .split_off(before)
        .into_iter()
        .map(|e| e.0)
        .collect();
    assert_eq!(
        actions,
        [
            Action::SecondFactorEnable,
            Action::RecoveryCodeUse,
            Action::SecondFactorReset
        ]
    );
    // a new one can be set up again
    store.begin_second_factor(&ann, b"fourth").await.unwrap();
}

pub async fn servers_registered_and_switched_are_audited_once(store: &dyn MemberFixture) {
    let acme = org(store, "Acme").await;
    let root = Audit::operator("root");
    let before = audit_of(store, &acme.id).await.len();
    store
        .register_server(&acme.id, "Abc123", Some("Main"), &root)
        .await
        .unwrap();
    assert!(store
        .register_server(&acme.id, "abc123", None, &root)
        .await
        .is_err());
    store.set_logs_active("ABC123", true, &root).await.unwrap();
    store.set_logs_active("abc123", true, &root).await.unwrap();
    store.set_logs_active("abc123", false, &root).await.unwrap();
    assert!(store.set_logs_active("nope99", true, &root).await.is_err());
    let s = |v: &str| v.to_owned();
    assert_eq!(
        audit_of(store, &acme.id).await.split_off(before),
        [
            (Action::ServerRegister, s("Abc123"), s("root")),
            (Action::ServerLogs, s("Abc123"), s("root")),
            (Action::ServerLogs, s("Abc123"), s("root")),
        ]
    );
}
