//! Saved searches ([`crate::saved::SavedSearchStore`]).

use auth_core::audit::{Action, Audit, AuditQuery};
use chrono::{Duration, SubsecRound, Utc};
use serde_json::json;

use super::Fixture;
use crate::saved::{SavedPut, SavedSearch, SavedServers};

fn saved(f: &Fixture, name: &str) -> SavedSearch {
    let now = Utc::now().trunc_subsecs(6);
    SavedSearch {
        id: crate::saved::new_id(),
        org_id: f.org.clone(),
        name: name.into(),
        servers: SavedServers::Named(vec![f.a.0.clone()]),
        search: json!({ "eventType": "admin.*", "minLevel": "warn" }),
        created_at: now,
        updated_at: now,
        created_by: "jay".into(),
    }
}

async fn actions(f: &Fixture) -> Vec<(Action, String)> {
    // the fixture's own setup (servers registered) is not this suite's
    let query = AuditQuery {
        actions: vec![
            Action::SavedSearchCreate,
            Action::SavedSearchChange,
            Action::SavedSearchDelete,
        ],
        limit: 100,
        ..Default::default()
    };
    let mut events = f.audit.page(&f.org, &query).await.unwrap();
    events.reverse();
    events
        .into_iter()
        .map(|e| (e.entry.action, e.entry.target))
        .collect()
}

pub async fn saved_searches_are_created_listed_changed_and_deleted(f: &Fixture) {
    let who = Audit::operator("test");
    let bans = saved(f, "Bans");
    assert_eq!(
        f.saved.create(&bans, 10, &who).await.unwrap(),
        SavedPut::Done
    );
    assert_eq!(
        f.saved.get(&f.org, &bans.id).await.unwrap().as_ref(),
        Some(&bans),
        "read back as stored"
    );
    let same_name = saved(f, "bANS");
    assert_eq!(
        f.saved.create(&same_name, 10, &who).await.unwrap(),
        SavedPut::NameTaken,
        "names are unique in either case"
    );
    let kicks = SavedSearch {
        servers: SavedServers::All,
        search: json!({}),
        ..saved(f, "kicks")
    };
    assert_eq!(
        f.saved.create(&kicks, 10, &who).await.unwrap(),
        SavedPut::Done
    );
    let names = |l: Vec<SavedSearch>| l.into_iter().map(|s| s.name).collect::<Vec<_>>();
    assert_eq!(
        names(f.saved.list(&f.org).await.unwrap()),
        ["Bans", "kicks"]
    );

    // a rename onto another's name, in another case, is refused and changes nothing
    let onto = SavedSearch {
        name: "KICKS".into(),
        ..bans.clone()
    };
    assert_eq!(
        f.saved.update(&onto, &who).await.unwrap(),
        SavedPut::NameTaken
    );
    // its own name in another case is fine
    let renamed = SavedSearch {
        name: "BANS".into(),
        servers: SavedServers::Named(vec![f.a.0.clone(), f.b.0.clone()]),
        search: json!({ "eventType": "admin.ban" }),
        updated_at: bans.updated_at + Duration::seconds(5),
        ..bans.clone()
    };
    assert_eq!(
        f.saved.update(&renamed, &who).await.unwrap(),
        SavedPut::Done
    );
    let read = f.saved.get(&f.org, &bans.id).await.unwrap().unwrap();
    assert_eq!(read, renamed, "every field replaced, created_at kept");
    // the same content again is no change: no entry, `updated_at` kept
    let again = SavedSearch {
        updated_at: renamed.updated_at + Duration::seconds(5),
        ..renamed.clone()
    };
    assert_eq!(f.saved.update(&again, &who).await.unwrap(), SavedPut::Done);
    assert_eq!(
        f.saved
            .get(&f.org, &bans.id)
            .await
            .unwrap()
            .unwrap()
            .updated_at,
        renamed.updated_at
    );
    let missing = SavedSearch {
        id: "ss_missing".into(),
        name: "Nobody's".into(),
        ..renamed.clone()
    };
    assert_eq!(
        f.saved.update(&missing, &who).await.unwrap(),
        SavedPut::Missing
    );

    // another organization's id finds nothing
    let other = auth_core::OrgId::new("org_other");
    assert_eq!(f.saved.get(&other, &bans.id).await.unwrap(), None);
    assert!(!f.saved.delete(&other, &bans.id, &who).await.unwrap());

    assert!(f.saved.delete(&f.org, &bans.id, &who).await.unwrap());
    assert!(!f.saved.delete(&f.org, &bans.id, &who).await.unwrap());
    assert_eq!(names(f.saved.list(&f.org).await.unwrap()), ["kicks"]);
    assert_eq!(
        actions(f).await,
        [
            (Action::SavedSearchCreate, bans.id.clone()),
            (Action::SavedSearchCreate, kicks.id.clone()),
            (Action::SavedSearchChange, bans.id.clone()),
            (Action::SavedSearchDelete, bans.id.clone()),
        ],
        "one entry per change, none for refusals or no change"
    );
}

pub async fn saved_searches_stop_at_the_limit(f: &Fixture) {
    let who = Audit::operator("test");
    let first = saved(f, "one");
    assert_eq!(
        f.saved.create(&first, 2, &who).await.unwrap(),
        SavedPut::Done
    );
    assert_eq!(
        f.saved.create(&saved(f, "two"), 2, &who).await.unwrap(),
        SavedPut::Done
    );
    assert_eq!(
        f.saved.create(&saved(f, "three"), 2, &who).await.unwrap(),
        SavedPut::LimitReached
    );
    assert!(f.saved.delete(&f.org, &first.id, &who).await.unwrap());
    assert_eq!(
        f.saved.create(&saved(f, "three"), 2, &who).await.unwrap(),
        SavedPut::Done
    );
}
