//! Shared behavioural suite for the log storage traits (run against memory and Postgres): one
//! `pub async fn` per case, a module per part of the store, and [`log_store_suite!`] to make the
//! tests.

#![allow(clippy::unwrap_used)]

mod activity;
mod alert_queue;
mod alerts;
mod counts;
mod criteria;
mod data_filters;
mod messages;
mod queries;
mod saved;
mod slot_counts;
mod tail;

pub use activity::*;
pub use alert_queue::*;
pub use alerts::*;
pub use counts::*;
pub use criteria::*;
pub use data_filters::*;
pub use messages::*;
pub use queries::*;
pub use saved::*;
pub use slot_counts::*;
pub use tail::*;

use chrono::{Duration, SubsecRound, Utc};
use serde_json::json;

use crate::criteria::TypeMatch;
use crate::event::{parse_batch, Level};
use crate::store::{
    bucket_start, BucketCount, CountQuery, EventQuery, FacetQuery, Filters, IdentifierFilter,
    IngestOutcome, IngestTarget, LogStore, NameQuery, OrgId, Owner, SearchError, ServerId,
    TailPosition, TailQuery,
};

/// What each case runs on: a fresh, empty store, with organization `org` and two registered
/// servers `(id, join code)` that exist in the store's account data.
pub struct Fixture {
    pub store: Box<dyn LogStore>,
    pub slots: Box<dyn crate::slots::ReadSlotStore>,
    pub saved: Box<dyn crate::saved::SavedSearchStore>,
    /// The audit log `saved` writes to.
    pub audit: Box<dyn auth_core::audit::AuditStore>,
    pub org: OrgId,
    pub a: (ServerId, String),
    pub b: (ServerId, String),
}

/// One `#[test]` per case of this suite, each on a fresh fixture, so a failure names its case.
/// `$run` drives a future to completion (`futures::executor::block_on`, or a Tokio runtime's);
/// `$fixture` is an `async fn() -> Fixture`.
/// One `#[test]` per case of the alert store's part of the suite (`$fixture` is an
/// `async fn() -> AlertFixture`), run on the memory and the Postgres adapter.
#[macro_export]
macro_rules! alert_store_suite {
    ($run:path, $fixture:path) => {
        $crate::log_store_suite!(@cases $run, $fixture;
            destinations_are_made_renamed_and_deleted_within_names_and_limits,
            rules_refuse_what_they_cannot_name_and_keep_what_they_use,
            test_messages_are_logged_and_sent_again_only_when_finished,
            the_outbox_leases_a_queue_in_order_and_records_answers,
            held_destinations_wait_and_lost_leases_are_taken_again);
    };
}

#[macro_export]
macro_rules! log_store_suite {
    ($run:path, $fixture:path) => {
        $crate::log_store_suite!(@cases $run, $fixture;
            ingest_is_atomic_idempotent_and_counted,
            queries_are_newest_first_with_every_field,
            each_filter_narrows_the_search,
            keyset_pages_walk_every_event_once,
            servers_are_kept_apart,
            message_search_across_days,
            message_search_matches_every_substring_across_runs,
            data_filters_are_containment_within_a_scan_limit,
            prefixes_players_data_conditions_and_exclusions_select_their_events,
            counts_of_prefixes_and_exclusions_are_the_events_numbers,
            events_are_found_by_their_players_name,
            one_players_events_on_many_servers_are_one_read,
            counts_fall_in_epoch_aligned_buckets_inside_the_window,
            counts_in_whole_slot_buckets_match_the_events_of_the_window,
            facets_count_the_newest_events_of_the_search,
            a_tail_reads_batches_in_commit_order_and_resumes_from_any_position,
            last_batches_name_each_servers_newest_batch,
            read_slot_leases_hold_each_kinds_limit,
            expired_read_slot_leases_are_taken_back,
            one_export_at_a_time_per_organization,
            saved_searches_are_created_listed_changed_and_deleted,
            saved_searches_stop_at_the_limit);
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

/// The first batch on server `a`, a changed batch under the same id on server `b`.
struct Seeded {
    now: chrono::DateTime<Utc>,
    ta: IngestTarget,
    base: EventQuery,
}

fn targets(f: &Fixture) -> (IngestTarget, IngestTarget) {
    let target = |(id, code): &(ServerId, String)| IngestTarget {
        org_id: f.org.clone(),
        server_id: id.clone(),
        cfx_id: code.clone(),
    };
    (target(&f.a), target(&f.b))
}

/// Ingests four events on each server and checks the ingestion outcomes on the way.
async fn seed(f: &Fixture) -> Seeded {
    let (store, org, a) = (f.store.as_ref(), &f.org, (f.a.0.as_str(), f.a.1.as_str()));
    let (ta, tb) = targets(f);
    let now = Utc::now().trunc_subsecs(6);
    let t = |mins: i64| (now - Duration::minutes(mins)).to_rfc3339();
    let body = json!({ "batch_id": "batch-0001", "events": [
        { "level": "info", "message": "Player Joined the server", "event_type": "player.join", "occurred_at": t(10), "player_id": "p1",
          "player_identifiers": { "license": "license:aaa" }, "resource": "core" },
        { "level": "error", "message": "script error", "occurred_at": t(9), "resource": "es_extended", "event_id": "evt-00000002" },
        { "level": "info", "message": "chat: gg", "event_type": "chat", "occurred_at": t(8), "player_id": "p2", "target_player_id": "p1",
          "target_player_identifiers": { "license": "license:aaa" }, "data": { "channel": "ooc" } },
        { "level": "warn", "message": "100% discount_code", "occurred_at": t(8) },
    ]});
    let batch = parse_batch(&serde_json::to_vec(&body).unwrap(), now).unwrap();
    let first = store.ingest(&ta, batch.clone(), now).await.unwrap();
    assert_eq!(
        first,
        IngestOutcome::Accepted {
            accepted_events: 4,
            ingested_at: now
        }
    );
    assert_eq!(
        store
            .ingest(&ta, batch.clone(), now + Duration::seconds(5))
            .await
            .unwrap(),
        IngestOutcome::Replayed {
            accepted_events: 4,
            ingested_at: now
        },
        "identical retry is replayed with the original figures"
    );
    let mut changed = body.clone();
    changed["events"][0]["message"] = json!("different");
    let changed = parse_batch(&serde_json::to_vec(&changed).unwrap(), now).unwrap();
    assert_eq!(
        store.ingest(&ta, changed.clone(), now).await.unwrap(),
        IngestOutcome::Conflict
    );
    assert!(
        matches!(
            store.ingest(&tb, changed, now).await.unwrap(),
            IngestOutcome::Accepted { .. }
        ),
        "batch ids are per server"
    );
    assert_eq!(
        store.monthly_usage(org, now).await.unwrap(),
        8,
        "replays and conflicts add no usage"
    );

    let base = EventQuery {
        server_id: ServerId::new(a.0),
        from: now - Duration::hours(1),
        to: now + Duration::minutes(1),
        filters: Filters::default(),
        after: None,
        limit: 100,
        scan_limit: Some(1_000),
        enough: 100,
    };
    Seeded { now, ta, base }
}

async fn ingest_json(f: &Fixture, target: &IngestTarget, body: serde_json::Value) {
    let now = Utc::now();
    let batch = parse_batch(&serde_json::to_vec(&body).unwrap(), now).unwrap();
    assert!(matches!(
        f.store.ingest(target, batch, now).await.unwrap(),
        IngestOutcome::Accepted { .. }
    ));
}
