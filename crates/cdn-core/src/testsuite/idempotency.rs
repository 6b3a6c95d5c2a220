//! `Idempotency-Key` records: scopes, owners, leases, sweeping.

use chrono::{Duration, Utc};

use super::Fixture;
use crate::idempotency::{Claim, IdemScope, LEASE_SECS};

/// The scopes the idempotency cases share.
struct Scopes {
    now: chrono::DateTime<Utc>,
    s: IdemScope,
    other_route: IdemScope,
}

pub async fn idempotency_scope_includes_route_and_credential(f: &Fixture) {
    scopes(f).await;
}

async fn scopes(f: &Fixture) -> Scopes {
    let repo = f.idempotency.as_ref();
    let now = Utc::now();
    let s = IdemScope {
        scope: "key_1".into(),
        method: "POST".into(),
        route: "/v1/objects".into(),
        key: "k1".into(),
    };
    assert_eq!(repo.claim(&s, "a", now).await.unwrap(), Claim::Claimed);
    assert_eq!(repo.claim(&s, "b", now).await.unwrap(), Claim::InFlight);
    let other_route = IdemScope {
        route: "/v1/objects/bulk".into(),
        ..s.clone()
    };
    assert_eq!(
        repo.claim(&other_route, "a", now).await.unwrap(),
        Claim::Claimed,
        "scope includes the route"
    );
    let other_cred = IdemScope {
        scope: "key_2".into(),
        ..s.clone()
    };
    assert_eq!(
        repo.claim(&other_cred, "a", now).await.unwrap(),
        Claim::Claimed,
        "scope includes the credential"
    );

    Scopes {
        now,
        s,
        other_route,
    }
}

pub async fn idempotency_completion_is_the_owners_and_kept_as_bytes(f: &Fixture) {
    completed(f).await;
}

async fn completed(f: &Fixture) -> Scopes {
    let Scopes {
        now,
        s,
        other_route,
    } = scopes(f).await;
    let repo = f.idempotency.as_ref();
    // any response bytes are kept as sent, an escaped NUL included
    let body = br#"{"ok":true,"path":"a\u0000b"}"#.to_vec();
    repo.complete(&s, "b", b"fp", 200, b"{}").await.unwrap();
    assert_eq!(
        repo.claim(&s, "c", now).await.unwrap(),
        Claim::InFlight,
        "only the owner completes"
    );
    repo.complete(&s, "a", b"fp", 200, &body).await.unwrap();
    assert_eq!(
        repo.claim(&s, "c", now).await.unwrap(),
        Claim::Done {
            fingerprint: b"fp".to_vec(),
            status: 200,
            response: body.clone(),
        }
    );
    repo.release(&s, "a").await.unwrap();
    assert!(
        matches!(repo.claim(&s, "c", now).await.unwrap(), Claim::Done { .. }),
        "release never drops a completed record"
    );
    assert!(
        !repo.renew(&s, "a", now).await.unwrap(),
        "a done record has no lease"
    );

    Scopes {
        now,
        s,
        other_route,
    }
}

pub async fn idempotency_release_is_the_owners(f: &Fixture) {
    released(f).await;
}

async fn released(f: &Fixture) -> Scopes {
    let Scopes {
        now,
        s,
        other_route,
    } = completed(f).await;
    let repo = f.idempotency.as_ref();
    repo.release(&other_route, "someone-else").await.unwrap();
    assert_eq!(
        repo.claim(&other_route, "b", now).await.unwrap(),
        Claim::InFlight,
        "only the owner releases"
    );
    repo.release(&other_route, "a").await.unwrap();
    assert_eq!(
        repo.claim(&other_route, "b", now).await.unwrap(),
        Claim::Claimed,
        "a failed request can be retried"
    );

    Scopes {
        now,
        s,
        other_route,
    }
}

pub async fn idempotency_leases_lapse_and_are_taken_over(f: &Fixture) {
    leased(f).await;
}

async fn leased(f: &Fixture) -> Scopes {
    let Scopes {
        now,
        s,
        other_route,
    } = released(f).await;
    let repo = f.idempotency.as_ref();
    // a lease lives LEASE_SECS past its last renewal, then the next request takes it over
    let leased = IdemScope {
        key: "leased".into(),
        ..s.clone()
    };
    let secs = Duration::seconds;
    assert_eq!(repo.claim(&leased, "a", now).await.unwrap(), Claim::Claimed);
    assert_eq!(
        repo.claim(&leased, "b", now + secs(LEASE_SECS))
            .await
            .unwrap(),
        Claim::InFlight
    );
    assert!(repo.renew(&leased, "a", now + secs(4)).await.unwrap());
    assert!(!repo.renew(&leased, "b", now + secs(4)).await.unwrap());
    assert_eq!(
        repo.claim(&leased, "b", now + secs(4 + LEASE_SECS))
            .await
            .unwrap(),
        Claim::InFlight,
        "the renewal moved the lease"
    );
    // the owner crashed: no renewal
    assert_eq!(
        repo.claim(&leased, "b", now + secs(5 + LEASE_SECS))
            .await
            .unwrap(),
        Claim::Claimed,
        "taken over once the lease ran out"
    );
    assert!(!repo.renew(&leased, "a", now + secs(6)).await.unwrap());
    repo.complete(&leased, "a", b"old", 200, b"{}")
        .await
        .unwrap();
    repo.release(&leased, "a").await.unwrap();
    assert_eq!(
        repo.claim(&leased, "c", now + secs(6)).await.unwrap(),
        Claim::InFlight,
        "the old owner neither completes nor releases the new owner's claim"
    );

    Scopes {
        now,
        s,
        other_route,
    }
}

pub async fn idempotency_sweep_frees_finished_keys(f: &Fixture) {
    let Scopes { now, s, .. } = leased(f).await;
    let repo = f.idempotency.as_ref();
    let secs = Duration::seconds;
    let swept = repo.sweep(now + secs(LEASE_SECS + 10)).await.unwrap();
    assert!(swept >= 4, "swept {swept}");
    assert_eq!(repo.claim(&s, "d", now).await.unwrap(), Claim::Claimed);
}
