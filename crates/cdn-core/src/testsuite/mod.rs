//! Shared behavioural suites for the CDN storage traits (run against memory and Postgres): one
//! `pub async fn` per case, a module per store, and [`cdn_store_suite!`] to make the tests.

#![allow(clippy::unwrap_used)]

mod audit;
mod idempotency;
mod lifecycle;
mod placeholders;
mod records;
mod search;
mod upload_urls;

pub use audit::*;
pub use idempotency::*;
pub use lifecycle::*;
pub use placeholders::*;
pub use records::*;
pub use search::*;
pub use upload_urls::*;

use auth_core::{KeyId, OrgId};
use chrono::{SubsecRound, Utc};

use crate::idempotency::IdempotencyStore;
use crate::metadata::Metadata;
use crate::path::ObjectKey;
use crate::placeholder::PlaceholderStore;
use crate::store::{ListQuery, ObjectRecord, ObjectRecordStore};
use crate::upload_url::UploadUrlStore;

/// An object key, as the suite writes them.
pub(crate) fn key(k: &str) -> ObjectKey {
    ObjectKey::new(k)
}

pub(crate) fn record(k: &str, path: &str) -> ObjectRecord {
    ObjectRecord {
        key: key(k),
        size: 3,
        content_type: Some("image/png".into()),
        etag: "abc".into(),
        metadata: Metadata::from([("k".to_owned(), "v".to_owned())]),
        storage_path: path.to_owned(),
        last_modified: Utc::now().trunc_subsecs(6),
        created_at: Utc::now().trunc_subsecs(6),
        keep: false,
    }
}

pub(crate) fn q(folder: &str, after: Option<&str>, limit: usize) -> ListQuery {
    ListQuery {
        folder: folder.into(),
        after: after.map(Into::into),
        denied: vec![],
        limit,
    }
}

pub(crate) fn keys(v: &[ObjectRecord]) -> Vec<&str> {
    v.iter().map(|r| r.key.as_str()).collect()
}

/// What each case runs on: fresh, empty stores, two organizations and a key of the first that
/// exist wherever a store checks references (Postgres checks its foreign keys).
pub struct Fixture {
    pub records: Box<dyn ObjectRecordStore>,
    pub idempotency: Box<dyn IdempotencyStore>,
    pub upload_urls: Box<dyn UploadUrlStore>,
    pub placeholders: Box<dyn PlaceholderStore>,
    pub lifecycle: Box<dyn crate::lifecycle::LifecycleStore>,
    /// The audit log the stores above write to.
    pub audit: Box<dyn auth_core::audit::AuditStore>,
    pub org_a: OrgId,
    pub org_b: OrgId,
    pub key_id: KeyId,
}

/// One `#[test]` per case of the CDN store suites, each on a fresh fixture, so a failure names its
/// case. `$run` drives a future to completion; `$fixture` is an `async fn() -> Fixture`. A case
/// that needs the state an earlier one leaves runs that one first (its checks included).
#[macro_export]
macro_rules! cdn_store_suite {
    ($run:path, $fixture:path) => {
        $crate::cdn_store_suite!(@cases $run, $fixture;
            records_upsert_replaces_and_keeps_organizations_apart,
            records_create_only_where_no_object_is,
            records_list_in_byte_order_recursively_and_by_pages,
            records_list_without_denied_prefixes_or_other_organizations,
            records_delete_and_report_references,
            records_totals_count_one_organizations_objects,
            folder_view_shows_direct_objects_and_each_subfolder_once,
            folder_view_pages_across_folder_boundaries,
            records_delete_many_in_one_step,
            records_rename_atomically_and_replace_only_when_asked,
            records_folder_move_batches_skip_taken_destinations,
            records_search_finds_paths_by_text_and_objects_by_metadata,
            records_search_sorts_both_ways_with_pages_that_never_repeat,
            idempotency_scope_includes_route_and_credential,
            idempotency_completion_is_the_owners_and_kept_as_bytes,
            idempotency_release_is_the_owners,
            idempotency_leases_lapse_and_are_taken_over,
            idempotency_sweep_frees_finished_keys,
            upload_urls_are_stored_and_read_back,
            upload_url_reservations_count_files_and_expire,
            placeholders_are_put_replaced_listed_and_deleted,
            placeholders_stop_at_the_limit_for_new_patterns_only,
            placeholders_limit_holds_under_concurrent_puts,
            placeholders_set_needs_an_existing_fallback,
            lifecycle_rules_are_set_listed_and_removed_within_the_limit,
            records_expire_by_rule_age_and_keep_in_key_order,
            records_keep_marks_survive_replacement_and_moves,
            records_usage_per_top_folder_follows_every_change,
            changes_write_one_audit_entry_each_and_no_change_none);
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
