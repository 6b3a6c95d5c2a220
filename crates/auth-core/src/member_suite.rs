//! The shared suite of [`MemberStore`]: every adapter runs each case through
//! [`member_store_suite!`], on a store that also holds the organizations members belong to.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::{Duration, Utc};

use crate::console_session::{new_token, token_hash};
use crate::ids::{InvitationId, MemberId, OrgId};
use crate::member::{Accepter, Invitation, MemberStore, LAST_OWNER};
use crate::model::{new_id, Org};
use crate::roles::{Grant, Role};
use crate::store::{AccountStore, StoreError};
use crate::{PathScope, ServerScope};

/// Accounts and members of one store.
pub trait MemberFixture: AccountStore + MemberStore {}
impl<T: AccountStore + MemberStore> MemberFixture for T {}

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
            a_reset_works_once_before_it_expires_and_replaces_older_ones);
    };
    (@cases $run:path, $store:path; $($case:ident),*) => {
        $(
            #[test]
            fn $case() {
                $run(async {
                    let store = $store().await;
                    $crate::member_suite::$case(store.as_ref()).await;
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
    store.create_invitation(&invitation).await.unwrap();
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
        .accept_invitation(&token_hash(&token), &new_member(login), Utc::now())
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
            .accept_invitation(&hash, &new_member("ana"), late)
            .await
            .unwrap(),
        None,
        "expired at its exact expiry"
    );
    let wrong = token_hash("not the token");
    let now = Utc::now();
    assert_eq!(
        store
            .accept_invitation(&wrong, &new_member("ana"), now)
            .await
            .unwrap(),
        None
    );
    let (m, membership) = store
        .accept_invitation(&hash, &new_member("ana"), now)
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
            .accept_invitation(&hash, &new_member("bob"), now)
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
        store.revoke_invitation(&other.id, &withdrawn.id).await,
        Err(StoreError::NotFound(_))
    ));
    store
        .revoke_invitation(&acme.id, &withdrawn.id)
        .await
        .unwrap();
    assert_eq!(
        store
            .accept_invitation(&token_hash(&token), &new_member("cy"), now)
            .await
            .unwrap(),
        None
    );
    assert!(matches!(
        store.revoke_invitation(&acme.id, &withdrawn.id).await,
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
            .accept_invitation(&hash, &new_member("ana@example.com"), now)
            .await,
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(store.pending_invitations(&acme.id).await.unwrap().len(), 1);
    let (bob, _) = store
        .accept_invitation(&hash, &new_member("bob"), now)
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
        .accept_invitation(&hash, &Accepter::Existing(ana.clone()), now)
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
                .accept_invitation(&token_hash(&again), &Accepter::Existing(ana.clone()), now)
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
        store.set_grant(&acme.id, &owner, &viewer).await.map(|_| ())
    ));
    assert!(conflict(store.remove_member(&acme.id, &owner).await));
    let promoted = store
        .set_grant(&acme.id, &admin, &Grant::everywhere(Role::Owner))
        .await
        .unwrap();
    assert_eq!(promoted.grant.role, Role::Owner);
    let narrowed = Grant {
        role: Role::Viewer,
        servers: ServerScope::only([crate::ServerId::from("srv_a")]).unwrap(),
        paths: PathScope::unrestricted(),
    };
    let changed = store.set_grant(&acme.id, &owner, &narrowed).await.unwrap();
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
    store.remove_member(&acme.id, &owner).await.unwrap();
    assert_eq!(store.member_context(&owner, &acme.id).await.unwrap(), None);
    assert!(
        store.get_member(&owner).await.unwrap().is_some(),
        "the account stays"
    );
    assert!(conflict(store.remove_member(&acme.id, &admin).await));
    assert!(matches!(
        store.remove_member(&acme.id, &owner).await,
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        store
            .set_grant(&acme.id, &MemberId::new("mem_nope"), &viewer)
            .await,
        Err(StoreError::NotFound(_))
    ));
}

pub async fn passwords_are_replaced(store: &dyn MemberFixture) {
    let acme = org(store, "Acme").await;
    let ana = member(store, &acme.id, "ana", Grant::everywhere(Role::Owner)).await;
    store.set_password(&ana, "$argon2id$new").await.unwrap();
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
        store.set_password(&MemberId::new("mem_nope"), "x").await,
        Err(StoreError::NotFound(_))
    ));
}

pub async fn a_reset_works_once_before_it_expires_and_replaces_older_ones(
    store: &dyn MemberFixture,
) {
    use crate::member::PasswordReset;
    let acme = org(store, "Acme").await;
    let ana = member(store, &acme.id, "ana", Grant::everywhere(Role::Viewer)).await;
    let now = Utc::now();
    let reset = |token: &str, at: chrono::DateTime<Utc>| PasswordReset {
        member_id: ana.clone(),
        made_by: None,
        token_hash: token_hash(token),
        created_at: at,
        expires_at: at + Duration::hours(1),
    };
    store.create_reset(&reset("first", now)).await.unwrap();
    store
        .create_reset(&reset("second", now + Duration::seconds(1)))
        .await
        .unwrap();
    let later = now + Duration::seconds(2);
    assert_eq!(
        store
            .use_reset(&token_hash("first"), "$argon2id$x", later)
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
            .map(|m| m.id),
        Some(ana.clone())
    );
    let expiry = now + Duration::seconds(1) + Duration::hours(1);
    assert_eq!(
        store
            .use_reset(&token_hash("second"), "$argon2id$x", expiry)
            .await
            .unwrap(),
        None,
        "expired at its exact expiry"
    );
    assert_eq!(
        store
            .use_reset(&token_hash("second"), "$argon2id$new", later)
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
            .use_reset(&token_hash("second"), "$argon2id$again", later)
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
    assert!(store.create_reset(&stranger).await.is_err());
}
