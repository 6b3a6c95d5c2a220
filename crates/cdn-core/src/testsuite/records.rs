//! Object records: upsert, get, the recursive listing, the folder view, deletes.

use chrono::Duration;

use super::{key, keys, q, record, Fixture};
use crate::folder::{FolderEntry, FolderQuery};
use crate::folder_move::FolderMove;
use crate::path::ObjectKey;
use crate::store::{ObjectTotals, Renamed};

pub async fn records_upsert_replaces_and_keeps_organizations_apart(f: &Fixture) {
    let (repo, org_a, org_b) = (f.records.as_ref(), &f.org_a, &f.org_b);
    assert_eq!(
        repo.upsert(org_a, &record("images/a.png", "p1"))
            .await
            .unwrap(),
        None
    );
    let first_created = repo
        .get(org_a, &key("images/a.png"))
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
    let got = repo
        .get(org_a, &key("images/a.png"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(got.storage_path, "p2");
    assert_eq!(
        got.created_at, first_created,
        "a replacement keeps the creation time"
    );
    assert_eq!(got.last_modified, replacement.last_modified);
    assert_eq!(got.metadata["k"], "v");
    assert_eq!(got.content_type.as_deref(), Some("image/png"));
    assert_eq!(
        repo.get(org_b, &key("images/a.png")).await.unwrap(),
        None,
        "organizations are separate"
    );
}

/// A create takes a free key only; the stored row is untouched when the key is taken, and keys
/// of other organizations do not count.
pub async fn records_create_only_where_no_object_is(f: &Fixture) {
    let repo = f.records.as_ref();
    assert!(repo
        .create(&f.org_a, &record("new.png", "p1"))
        .await
        .unwrap());
    let first = repo.get(&f.org_a, &key("new.png")).await.unwrap().unwrap();
    let mut other = record("new.png", "p2");
    other.size = 99;
    assert!(!repo.create(&f.org_a, &other).await.unwrap(), "taken");
    let kept = repo.get(&f.org_a, &key("new.png")).await.unwrap().unwrap();
    assert_eq!(kept, first, "the stored object is untouched");
    assert!(
        repo.create(&f.org_b, &other).await.unwrap(),
        "another organization's key is free"
    );
    repo.delete(
        &f.org_a,
        &key("new.png"),
        &auth_core::audit::Audit::operator("test"),
    )
    .await
    .unwrap();
    assert!(repo.create(&f.org_a, &other).await.unwrap(), "free again");
}

pub async fn records_list_in_byte_order_recursively_and_by_pages(f: &Fixture) {
    records_upsert_replaces_and_keeps_organizations_apart(f).await;
    let (repo, org_a, org_b) = (f.records.as_ref(), &f.org_a, &f.org_b);
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
    let (repo, org_a, org_b) = (f.records.as_ref(), &f.org_a, &f.org_b);
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
    let (repo, org_a) = (f.records.as_ref(), &f.org_a);
    assert!(repo.is_referenced("p2").await.unwrap());
    assert!(!repo.is_referenced("p1").await.unwrap());
    let deleted = repo
        .delete(
            org_a,
            &key("images/a.png"),
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(deleted.storage_path, "p2");
    assert_eq!(
        repo.delete(
            org_a,
            &key("images/a.png"),
            &auth_core::audit::Audit::operator("test")
        )
        .await
        .unwrap(),
        None
    );
    assert_eq!(repo.get(org_a, &key("images/a.png")).await.unwrap(), None);
    assert!(!repo.is_referenced("p2").await.unwrap());
}

fn entries(v: &[FolderEntry]) -> Vec<String> {
    v.iter()
        .map(|e| match e {
            FolderEntry::Object(r) => r.key.to_string(),
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

pub async fn records_totals_count_one_organizations_objects(f: &Fixture) {
    let repo = f.records.as_ref();
    assert_eq!(
        repo.totals(&f.org_a).await.unwrap(),
        ObjectTotals::default()
    );
    seed_folders(f).await;
    let mut big = record("images/a.png", "p-big");
    big.size = 5_000_000_000; // past 32 bits
    repo.upsert(&f.org_a, &big).await.unwrap();
    let t = repo.totals(&f.org_a).await.unwrap();
    assert_eq!(t.objects, 13, "a replaced object counts once");
    assert_eq!(t.bytes, 12 * 3 + 5_000_000_000);
    let other = repo.totals(&f.org_b).await.unwrap();
    assert_eq!(
        other,
        ObjectTotals {
            objects: 1,
            bytes: 3
        }
    );
    repo.delete(
        &f.org_a,
        &key("images/a.png"),
        &auth_core::audit::Audit::operator("test"),
    )
    .await
    .unwrap();
    assert_eq!(repo.totals(&f.org_a).await.unwrap().bytes, 12 * 3);
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
    let wanted: Vec<ObjectKey> = ["images/a.png", "images/missing.png", "top.png"]
        .map(ObjectKey::from)
        .to_vec();
    let mut gone = repo
        .delete_many(
            &f.org_a,
            &wanted,
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    gone.sort_by(|a, b| a.key.cmp(&b.key));
    assert_eq!(
        keys(&gone),
        ["images/a.png", "top.png"],
        "what existed, with its rows"
    );
    assert_eq!(gone[0].storage_path, "p-images/a.png");
    assert!(repo.get(&f.org_a, &key("top.png")).await.unwrap().is_none());
    assert!(repo
        .delete_many(
            &f.org_a,
            &wanted,
            &auth_core::audit::Audit::operator("test")
        )
        .await
        .unwrap()
        .is_empty());
    assert!(
        repo.delete_many(
            &f.org_b,
            &[key("images/other-org.png"), key("images/b.png")],
            &auth_core::audit::Audit::operator("test")
        )
        .await
        .unwrap()
        .len()
            == 1,
        "only the organization's own rows"
    );
    assert!(repo
        .get(&f.org_a, &key("images/b.png"))
        .await
        .unwrap()
        .is_some());
}

pub async fn records_rename_atomically_and_replace_only_when_asked(f: &Fixture) {
    seed_folders(f).await;
    let repo = f.records.as_ref();
    let before = repo
        .get(&f.org_a, &key("images/a.png"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        repo.rename(
            &f.org_a,
            &key("images/a.png"),
            &key("moved/a.png"),
            false,
            &auth_core::audit::Audit::operator("test")
        )
        .await
        .unwrap(),
        Renamed::Moved { replaced: None }
    );
    assert!(repo
        .get(&f.org_a, &key("images/a.png"))
        .await
        .unwrap()
        .is_none());
    let after = repo
        .get(&f.org_a, &key("moved/a.png"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        after.storage_path, before.storage_path,
        "the bytes do not move"
    );
    assert_eq!(after.created_at, before.created_at);
    assert_eq!(after.etag, before.etag);

    assert_eq!(
        repo.rename(
            &f.org_a,
            &key("moved/a.png"),
            &key("images/b.png"),
            false,
            &auth_core::audit::Audit::operator("test")
        )
        .await
        .unwrap(),
        Renamed::DestinationExists
    );
    assert!(
        repo.get(&f.org_a, &key("moved/a.png"))
            .await
            .unwrap()
            .is_some(),
        "nothing moved"
    );
    assert_eq!(
        repo.get(&f.org_a, &key("images/b.png"))
            .await
            .unwrap()
            .unwrap()
            .storage_path,
        "p-images/b.png"
    );
    assert_eq!(
        repo.rename(
            &f.org_a,
            &key("moved/a.png"),
            &key("images/b.png"),
            true,
            &auth_core::audit::Audit::operator("test")
        )
        .await
        .unwrap(),
        Renamed::Moved {
            replaced: Some("p-images/b.png".into())
        }
    );
    assert_eq!(
        repo.get(&f.org_a, &key("images/b.png"))
            .await
            .unwrap()
            .unwrap()
            .storage_path,
        before.storage_path
    );
    assert_eq!(
        repo.rename(
            &f.org_a,
            &key("nowhere.png"),
            &key("x.png"),
            true,
            &auth_core::audit::Audit::operator("test")
        )
        .await
        .unwrap(),
        Renamed::SourceMissing
    );
    assert_eq!(
        repo.rename(
            &f.org_a,
            &key("images/other-org.png"),
            &key("mine.png"),
            true,
            &auth_core::audit::Audit::operator("test")
        )
        .await
        .unwrap(),
        Renamed::SourceMissing,
        "another organization's object is not there"
    );
    assert_eq!(
        repo.rename(
            &f.org_a,
            &key("top.png"),
            &key("top.png"),
            false,
            &auth_core::audit::Audit::operator("test")
        )
        .await
        .unwrap(),
        Renamed::Moved { replaced: None },
        "onto itself: nothing to do"
    );
    assert!(repo.get(&f.org_a, &key("top.png")).await.unwrap().is_some());
}

pub async fn records_folder_move_batches_skip_taken_destinations(f: &Fixture) {
    let repo = f.records.as_ref();
    for k in [
        "src",
        "src/a",
        "src/b",
        "src/c",
        "src/d/e",
        "src/.hidden",
        "src-x/z",
        "dst/b",
        "dst/d/e",
    ] {
        repo.upsert(&f.org_a, &record(k, &format!("p-{k}")))
            .await
            .unwrap();
    }
    // another organization's object at a destination takes nothing
    repo.upsert(&f.org_b, &record("dst/a", "px")).await.unwrap();
    let batch = |replace, limit| {
        let m = FolderMove {
            from: "src".into(),
            to: "dst".into(),
            replace,
            limit,
        };
        async move { repo.folder_move_batch(&f.org_a, &m).await }
    };

    let all = batch(false, 10).await.unwrap();
    assert_eq!(all.movable, ["src/a", "src/c"]);
    assert_eq!(all.blocked, ["src/b", "src/d/e"]);
    assert!(!all.more_movable && all.done());

    // a limit cuts both lists, and says when movable keys remain
    let first = batch(false, 1).await.unwrap();
    assert_eq!(
        (first.movable.as_slice(), first.blocked.as_slice()),
        (&[key("src/a")][..], &[key("src/b")][..])
    );
    assert!(first.more_movable && !first.done());
    let exact = batch(false, 2).await.unwrap();
    assert!(!exact.more_movable, "exactly the limit left: nothing more");

    // replacing: every key is movable, none blocked
    let replacing = batch(true, 3).await.unwrap();
    assert_eq!(replacing.movable, ["src/a", "src/b", "src/c"]);
    assert!(replacing.blocked.is_empty() && replacing.more_movable);

    // after the movable ones have moved, only conflicts are left: done
    for k in ["src/a", "src/c"] {
        let to = crate::folder_move::destination("src", "dst", &key(k));
        repo.rename(
            &f.org_a,
            &key(k),
            &to,
            false,
            &auth_core::audit::Audit::operator("test"),
        )
        .await
        .unwrap();
    }
    let rest = batch(false, 10).await.unwrap();
    assert!(rest.movable.is_empty() && rest.done());
    assert_eq!(rest.blocked, ["src/b", "src/d/e"]);
    // an empty or missing folder
    let nothing = FolderMove {
        from: "nothing".into(),
        to: "dst".into(),
        replace: false,
        limit: 10,
    };
    let none = repo.folder_move_batch(&f.org_a, &nothing).await.unwrap();
    assert_eq!(none, Default::default());
}
