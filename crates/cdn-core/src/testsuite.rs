//! Shared behavioural suites for the CDN storage traits (run against memory and Postgres).
//!
//! Kept whole, over 400 lines: it is one suite over the three CDN stores (one `pub async fn` per case).

#![allow(clippy::unwrap_used)]

use chrono::{Duration, SubsecRound, Utc};

use crate::folder::{FolderEntry, FolderQuery};
use crate::idempotency::{Claim, IdemScope, IdempotencyStore, LEASE_SECS};
use crate::metadata::Metadata;
use crate::store::{ListQuery, ObjectRecord, ObjectRecordStore};
use crate::upload_url::{Reservation, UploadUrlRecord, UploadUrlStore};

fn record(key: &str, path: &str) -> ObjectRecord {
    ObjectRecord {
        key: key.to_owned(),
        size: 3,
        content_type: Some("image/png".into()),
        etag: "abc".into(),
        metadata: Metadata::from([("k".to_owned(), "v".to_owned())]),
        storage_path: path.to_owned(),
        last_modified: Utc::now().trunc_subsecs(6),
        created_at: Utc::now().trunc_subsecs(6),
    }
}

fn q(folder: &str, after: Option<&str>, limit: usize) -> ListQuery {
    ListQuery {
        folder: folder.into(),
        after: after.map(Into::into),
        denied: vec![],
        limit,
    }
}

fn keys(v: &[ObjectRecord]) -> Vec<&str> {
    v.iter().map(|r| r.key.as_str()).collect()
}

/// What each case runs on: fresh, empty stores, two organizations and a key of the first that
/// exist wherever a store checks references (Postgres checks its foreign keys).
pub struct Fixture {
    pub records: Box<dyn ObjectRecordStore>,
    pub idempotency: Box<dyn IdempotencyStore>,
    pub upload_urls: Box<dyn UploadUrlStore>,
    pub org_a: String,
    pub org_b: String,
    pub key_id: String,
}

/// One `#[test]` per case of the CDN store suites, each on a fresh fixture, so a failure names its
/// case. `$run` drives a future to completion; `$fixture` is an `async fn() -> Fixture`. A case
/// that needs the state an earlier one leaves runs that one first (its checks included).
#[macro_export]
macro_rules! cdn_store_suite {
    ($run:path, $fixture:path) => {
        $crate::cdn_store_suite!(@cases $run, $fixture;
            records_upsert_replaces_and_keeps_organizations_apart,
            records_list_in_byte_order_recursively_and_by_pages,
            records_list_without_denied_prefixes_or_other_organizations,
            records_delete_and_report_references,
            folder_view_shows_direct_objects_and_each_subfolder_once,
            folder_view_pages_across_folder_boundaries,
            records_delete_many_in_one_step,
            idempotency_scope_includes_route_and_credential,
            idempotency_completion_is_the_owners_and_kept_as_bytes,
            idempotency_release_is_the_owners,
            idempotency_leases_lapse_and_are_taken_over,
            idempotency_sweep_frees_finished_keys,
            upload_urls_are_stored_and_read_back,
            upload_url_reservations_count_files_and_expire);
    };
    (@cases $run:path, $fixture:path; $($case:ident),*) => {
        $(
            #[test]
            fn $case() {
                $run(async {
                    let fixture = $fixture().await;
                    $crate::testsuite::$case(&fixture).await;
                })
            }
        )*
    };
}

pub async fn records_upsert_replaces_and_keeps_organizations_apart(f: &Fixture) {
    let (repo, org_a, org_b) = (f.records.as_ref(), f.org_a.as_str(), f.org_b.as_str());
    assert_eq!(
        repo.upsert(org_a, &record("images/a.png", "p1"))
            .await
            .unwrap(),
        None
    );
    let first_created = repo
        .get(org_a, "images/a.png")
        .await
        .unwrap()
        .unwrap()
        .created_at;
    let mut replacement = record("images/a.png", "p2");
    replacement.created_at = first_created + Duration::hours(1);
    replacement.last_modified = first_created + Duration::hours(1);
    assert_eq!(
        repo.upsert(org_a, &replacement).await.unwrap(),
        Some("p1".into())
    );
    let got = repo.get(org_a, "images/a.png").await.unwrap().unwrap();
    assert_eq!(got.storage_path, "p2");
    assert_eq!(
        got.created_at, first_created,
        "a replacement keeps the creation time"
    );
    assert_eq!(got.last_modified, replacement.last_modified);
    assert_eq!(got.metadata["k"], "v");
    assert_eq!(got.content_type.as_deref(), Some("image/png"));
    assert_eq!(
        repo.get(org_b, "images/a.png").await.unwrap(),
        None,
        "organizations are separate"
    );
}

pub async fn records_list_in_byte_order_recursively_and_by_pages(f: &Fixture) {
    records_upsert_replaces_and_keeps_organizations_apart(f).await;
    let (repo, org_a, org_b) = (f.records.as_ref(), f.org_a.as_str(), f.org_b.as_str());
    for k in [
        "images/b.png",
        "images2/c.png",
        "images/sub/d.png",
        "clips/e.ogg",
        "images",
        "z/猫.png",
        "images/Z.png",
    ] {
        repo.upsert(org_a, &record(k, &format!("p-{k}")))
            .await
            .unwrap();
    }
    repo.upsert(org_b, &record("images/other-org.png", "px"))
        .await
        .unwrap();

    let all = repo.list(org_a, &q("", None, 100)).await.unwrap();
    assert_eq!(
        keys(&all),
        vec![
            "clips/e.ogg",
            "images",
            "images/Z.png",
            "images/a.png",
            "images/b.png",
            "images/sub/d.png",
            "images2/c.png",
            "z/猫.png"
        ],
        "byte order, recursive"
    );
    let images = repo.list(org_a, &q("images", None, 100)).await.unwrap();
    assert_eq!(
        keys(&images),
        vec![
            "images",
            "images/Z.png",
            "images/a.png",
            "images/b.png",
            "images/sub/d.png"
        ]
    );
    let page1 = repo.list(org_a, &q("images", None, 2)).await.unwrap();
    assert_eq!(keys(&page1), vec!["images", "images/Z.png"]);
    let page2 = repo
        .list(org_a, &q("images", Some("images/Z.png"), 2))
        .await
        .unwrap();
    assert_eq!(keys(&page2), vec!["images/a.png", "images/b.png"]);
    let page3 = repo
        .list(org_a, &q("images", Some("images/b.png"), 2))
        .await
        .unwrap();
    assert_eq!(keys(&page3), vec!["images/sub/d.png"]);
}

pub async fn records_list_without_denied_prefixes_or_other_organizations(f: &Fixture) {
    records_list_in_byte_order_recursively_and_by_pages(f).await;
    let (repo, org_a, org_b) = (f.records.as_ref(), f.org_a.as_str(), f.org_b.as_str());
    let mut denied = q("images", None, 100);
    denied.denied = vec!["images/sub".into()];
    assert_eq!(
        keys(&repo.list(org_a, &denied).await.unwrap()),
        vec!["images", "images/Z.png", "images/a.png", "images/b.png"]
    );
    assert!(repo
        .list(org_a, &q("nothing", None, 10))
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        keys(&repo.list(org_b, &q("", None, 10)).await.unwrap()),
        vec!["images/other-org.png"]
    );
}

pub async fn records_delete_and_report_references(f: &Fixture) {
    records_list_without_denied_prefixes_or_other_organizations(f).await;
    let (repo, org_a) = (f.records.as_ref(), f.org_a.as_str());
    assert!(repo.is_referenced("p2").await.unwrap());
    assert!(!repo.is_referenced("p1").await.unwrap());
    let deleted = repo.delete(org_a, "images/a.png").await.unwrap().unwrap();
    assert_eq!(deleted.storage_path, "p2");
    assert_eq!(repo.delete(org_a, "images/a.png").await.unwrap(), None);
    assert_eq!(repo.get(org_a, "images/a.png").await.unwrap(), None);
    assert!(!repo.is_referenced("p2").await.unwrap());
}

fn entries(v: &[FolderEntry]) -> Vec<String> {
    v.iter()
        .map(|e| match e {
            FolderEntry::Object(r) => r.key.clone(),
            FolderEntry::Folder(p) => format!("{p}/"),
        })
        .collect()
}

fn fq(folder: &str, after: Option<String>, limit: usize) -> FolderQuery {
    FolderQuery {
        folder: folder.into(),
        after,
        denied: vec![],
        limit,
    }
}

async fn seed_folders(f: &Fixture) {
    for k in [
        "top.png",
        "images",
        "images/a.png",
        "images/b.png",
        "images/sub-x.png",
        "images/sub/c.png",
        "images/sub/deep/d.png",
        "images/sub0.png",
        "images/.env",
        "images/.cache/e.png",
        "images2/f.png",
        ".hidden/g.png",
        "z/猫/h.png",
    ] {
        f.records
            .upsert(&f.org_a, &record(k, &format!("p-{k}")))
            .await
            .unwrap();
    }
    f.records
        .upsert(&f.org_b, &record("images/other-org.png", "px"))
        .await
        .unwrap();
}

pub async fn folder_view_shows_direct_objects_and_each_subfolder_once(f: &Fixture) {
    seed_folders(f).await;
    let repo = f.records.as_ref();
    let root = repo
        .list_folder(&f.org_a, &fq("", None, 100))
        .await
        .unwrap();
    assert_eq!(
        entries(&root),
        ["images", "images/", "images2/", "top.png", "z/"],
        "sort-key order; dot-named entries never"
    );
    let images = repo
        .list_folder(&f.org_a, &fq("images", None, 100))
        .await
        .unwrap();
    assert_eq!(
        entries(&images),
        [
            "images/a.png",
            "images/b.png",
            "images/sub-x.png",
            "images/sub/",
            "images/sub0.png"
        ],
        "the folder's own name is not inside it; a sub-folder once, however deep"
    );
    let FolderEntry::Object(a) = &images[0] else {
        panic!("an object")
    };
    assert_eq!(
        a.storage_path, "p-images/a.png",
        "objects come with their rows"
    );
    assert_eq!(
        entries(
            &repo
                .list_folder(&f.org_a, &fq("images/sub", None, 100))
                .await
                .unwrap()
        ),
        ["images/sub/c.png", "images/sub/deep/"]
    );
    assert_eq!(
        entries(
            &repo
                .list_folder(&f.org_a, &fq("z", None, 100))
                .await
                .unwrap()
        ),
        ["z/猫/"]
    );
    let mut denied = fq("images", None, 100);
    denied.denied = vec!["images/sub".into(), "images/b.png".into()];
    assert_eq!(
        entries(&repo.list_folder(&f.org_a, &denied).await.unwrap()),
        ["images/a.png", "images/sub-x.png", "images/sub0.png"]
    );
    assert!(repo
        .list_folder(&f.org_a, &fq("nothing", None, 10))
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        entries(&repo.list_folder(&f.org_b, &fq("", None, 10)).await.unwrap()),
        ["images/"],
        "organizations are separate"
    );
}

pub async fn folder_view_pages_across_folder_boundaries(f: &Fixture) {
    seed_folders(f).await;
    let repo = f.records.as_ref();
    for folder in ["", "images"] {
        let whole = entries(
            &repo
                .list_folder(&f.org_a, &fq(folder, None, 100))
                .await
                .unwrap(),
        );
        for limit in [1, 2, 3] {
            let mut walked = Vec::new();
            let mut after = None;
            loop {
                let page = repo
                    .list_folder(&f.org_a, &fq(folder, after.clone(), limit))
                    .await
                    .unwrap();
                assert!(page.len() <= limit);
                let Some(last) = page.last() else { break };
                after = Some(last.sort_key());
                walked.extend(entries(&page));
            }
            assert_eq!(walked, whole, "folder {folder:?}, pages of {limit}");
        }
    }
}

pub async fn records_delete_many_in_one_step(f: &Fixture) {
    seed_folders(f).await;
    let repo = f.records.as_ref();
    let wanted: Vec<String> = ["images/a.png", "images/missing.png", "top.png"]
        .map(String::from)
        .to_vec();
    let mut gone = repo.delete_many(&f.org_a, &wanted).await.unwrap();
    gone.sort_by(|a, b| a.key.cmp(&b.key));
    assert_eq!(
        keys(&gone),
        ["images/a.png", "top.png"],
        "what existed, with its rows"
    );
    assert_eq!(gone[0].storage_path, "p-images/a.png");
    assert!(repo.get(&f.org_a, "top.png").await.unwrap().is_none());
    assert!(repo
        .delete_many(&f.org_a, &wanted)
        .await
        .unwrap()
        .is_empty());
    assert!(
        repo.delete_many(
            &f.org_b,
            &["images/other-org.png".to_owned(), "images/b.png".to_owned()]
        )
        .await
        .unwrap()
        .len()
            == 1,
        "only the organization's own rows"
    );
    assert!(repo.get(&f.org_a, "images/b.png").await.unwrap().is_some());
}

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

pub async fn upload_urls_are_stored_and_read_back(f: &Fixture) {
    stored_url(f).await;
}

async fn stored_url(f: &Fixture) -> (UploadUrlRecord, chrono::DateTime<Utc>) {
    let (repo, org_id, key_id) = (f.upload_urls.as_ref(), f.org_a.as_str(), f.key_id.as_str());
    use chrono::SubsecRound;
    let now = Utc::now().trunc_subsecs(6); // Postgres keeps microseconds
    let rec = UploadUrlRecord {
        token_hash: [1u8; 32],
        org_id: org_id.into(),
        key_id: key_id.into(),
        path: "uploads".into(),
        max_files: 3,
        files_used: 0,
        max_file_size: 1000,
        allowed_mime: Some(vec!["image/*".into()]),
        allow_custom_metadata: true,
        randomize_name: false,
        expires_at: now + Duration::seconds(60),
    };
    repo.create(&rec).await.unwrap();
    assert_eq!(repo.get(&rec.token_hash).await.unwrap(), Some(rec.clone()));
    (rec, now)
}

pub async fn upload_url_reservations_count_files_and_expire(f: &Fixture) {
    let (rec, now) = stored_url(f).await;
    let repo = f.upload_urls.as_ref();
    assert_eq!(repo.get(&[9u8; 32]).await.unwrap(), None);
    assert_eq!(
        repo.reserve(&[9u8; 32], 1, now).await.unwrap(),
        Reservation::NotFound
    );
    assert_eq!(
        repo.reserve(&rec.token_hash, 4, now).await.unwrap(),
        Reservation::TooMany { remaining: 3 }
    );
    assert_eq!(
        repo.reserve(&rec.token_hash, 2, now).await.unwrap(),
        Reservation::Reserved
    );
    assert_eq!(
        repo.reserve(&rec.token_hash, 2, now).await.unwrap(),
        Reservation::TooMany { remaining: 1 }
    );
    assert_eq!(
        repo.reserve(&rec.token_hash, 1, now).await.unwrap(),
        Reservation::Reserved
    );
    assert_eq!(
        repo.reserve(&rec.token_hash, 1, now).await.unwrap(),
        Reservation::Exhausted
    );
    repo.release(&rec.token_hash, 1).await.unwrap();
    assert_eq!(
        repo.get(&rec.token_hash).await.unwrap().unwrap().files_used,
        2
    );
    assert_eq!(
        repo.reserve(&rec.token_hash, 1, now).await.unwrap(),
        Reservation::Reserved
    );
    assert_eq!(
        repo.reserve(&rec.token_hash, 1, now + Duration::seconds(61))
            .await
            .unwrap(),
        Reservation::Expired
    );
}
