//! Storage traits of the CDN. Rows are the source of truth for listing; bytes live in the
//! object store at `storage_path` (managed by the caller).

use async_trait::async_trait;
use auth_core::audit::{Action, Audit, AuditEntry};
use auth_core::{OrgId, StoreError};

use crate::folder::{FolderEntry, FolderQuery};
use crate::folder_move::{FolderMove, MoveBatch};
use crate::lifecycle::Expiry;
use crate::path::ObjectKey;
use crate::search::SearchQuery;

pub use crate::record::ObjectRecord;

/// A page request of the recursive listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListQuery {
    /// Normalized folder; `""` is the root.
    pub folder: String,
    /// Return keys strictly after this one (keyset pagination).
    pub after: Option<String>,
    /// Objects under these prefixes (whole segments) are left out.
    pub denied: Vec<String>,
    pub limit: usize,
}

/// What a rename did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Renamed {
    /// The row now has the new key (its bytes did not move). `replaced` is the location of the
    /// object that was at the destination, whose bytes the caller removes.
    Moved { replaced: Option<String> },
    /// No object has the source key.
    SourceMissing,
    /// An object has the destination key and the rename was not allowed to replace it.
    DestinationExists,
}

#[async_trait]
pub trait ObjectRecordStore: Send + Sync {
    /// Inserts or replaces the row for `(org, record.key)`. Returns the storage path of the
    /// replaced object, whose bytes the caller removes after this commit.
    async fn upsert(
        &self,
        org_id: &OrgId,
        record: &ObjectRecord,
    ) -> Result<Option<String>, StoreError>;
    /// Inserts the row for `(org, record.key)` only when that key has none (a create-only
    /// upload); `false`, with nothing changed, when it has one. Of two racing creates of one key,
    /// exactly one gets `true`.
    async fn create(&self, org_id: &OrgId, record: &ObjectRecord) -> Result<bool, StoreError>;
    async fn get(
        &self,
        org_id: &OrgId,
        key: &ObjectKey,
    ) -> Result<Option<ObjectRecord>, StoreError>;
    /// Removes the row, with its `object.delete` audit entry; returns it (so the caller can
    /// remove its bytes) or `None` (and no entry).
    async fn delete(
        &self,
        org_id: &OrgId,
        key: &ObjectKey,
        audit: &Audit,
    ) -> Result<Option<ObjectRecord>, StoreError>;
    /// Removes the rows of `keys` that exist in one step, with an `object.delete` entry each;
    /// returns them (their bytes are the caller's to remove).
    async fn delete_many(
        &self,
        org_id: &OrgId,
        keys: &[ObjectKey],
        audit: &Audit,
    ) -> Result<Vec<ObjectRecord>, StoreError>;
    /// Keys in ascending byte order under `folder` (whole segments), dot-prefixed keys never.
    async fn list(
        &self,
        org_id: &OrgId,
        query: &ListQuery,
    ) -> Result<Vec<ObjectRecord>, StoreError>;
    /// One page of a search ([`crate::search`]): up to `query.limit` of the objects it
    /// matches ([`SearchQuery::matches`]) after `query.after`, in its order
    /// ([`SearchQuery::compare`]).
    async fn search(
        &self,
        org_id: &OrgId,
        query: &SearchQuery,
    ) -> Result<Vec<ObjectRecord>, StoreError>;
    /// One page of `query.folder`'s folder view ([`crate::folder`]): objects directly inside and
    /// sub-folders, each once, in sort-key order; hidden (dot-named) and denied entries never.
    /// Costs one index probe per entry, however many keys a sub-folder holds.
    async fn list_folder(
        &self,
        org_id: &OrgId,
        query: &FolderQuery,
    ) -> Result<Vec<FolderEntry>, StoreError>;
    /// Gives the object at `from` the key `to`, atomically: a reader finds it at one key or the
    /// other, never both or neither. An object at `to` is replaced only when `replace`. A move
    /// to another key writes its `object.move` audit entry in the same step.
    async fn rename(
        &self,
        org_id: &OrgId,
        from: &ObjectKey,
        to: &ObjectKey,
        replace: bool,
        audit: &Audit,
    ) -> Result<Renamed, StoreError>;
    /// The next batch of a folder move ([`crate::folder_move`]): up to `m.limit` keys under
    /// `m.from` whose destination has no object (every key, when `m.replace`) and up to `m.limit`
    /// whose destination has one (none, when `m.replace`), each in key order; dot-named keys and
    /// an object named like `m.from` itself never.
    async fn folder_move_batch(
        &self,
        org_id: &OrgId,
        m: &FolderMove,
    ) -> Result<MoveBatch, StoreError>;
    /// Deletes up to `limit` objects that `expiry` expires ([`Expiry::expires`], judged on the
    /// row as it is when deleted: an object replaced or kept meanwhile stays), in key order,
    /// with an `object.expire` entry each, in one step; returns them (their bytes are the
    /// caller's to remove). Concurrent calls never delete one object twice.
    async fn expire(
        &self,
        org_id: &OrgId,
        expiry: &Expiry,
        limit: usize,
        audit: &Audit,
    ) -> Result<Vec<ObjectRecord>, StoreError>;
    /// Marks the objects of `keys` that exist as kept (or not), with an `object.keep` entry for
    /// each one whose mark changed; returns the keys that exist.
    async fn set_keep(
        &self,
        org_id: &OrgId,
        keys: &[ObjectKey],
        keep: bool,
        audit: &Audit,
    ) -> Result<Vec<ObjectKey>, StoreError>;
    /// Whether any row points at this storage path (garbage collection).
    async fn is_referenced(&self, storage_path: &str) -> Result<bool, StoreError>;
    /// The organization's objects and bytes per top-level folder ([`top_folder`]), in folder
    /// byte order, folders with no object left out. Exact after every committed change.
    async fn folder_usage(&self, org_id: &OrgId) -> Result<Vec<FolderUsage>, StoreError>;
    /// How many objects the organization stores, and their bytes (the overview's usage).
    async fn totals(&self, org_id: &OrgId) -> Result<ObjectTotals, StoreError>;
}

/// An organization's stored objects, counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ObjectTotals {
    pub objects: i64,
    /// The sum of their sizes.
    pub bytes: i64,
}

/// One top-level folder's share of an organization's objects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderUsage {
    /// The first segment of the keys counted; `""` for objects at the top level.
    pub folder: String,
    pub totals: ObjectTotals,
}

/// The top-level folder a key is counted in: its first segment, or `""` for a key without a
/// `/` (an object at the top level). Hidden keys count like any other (they take space).
pub fn top_folder(key: &str) -> &str {
    match key.split_once('/') {
        Some((first, _)) => first,
        None => "",
    }
}

/// The audit entry of a deleted object: its key, with its size, type and entity tag.
pub fn deleted_entry(audit: &Audit, org_id: &OrgId, r: &ObjectRecord) -> AuditEntry {
    audit.entry(
        org_id,
        Action::ObjectDelete,
        r.key.as_str(),
        serde_json::json!({ "size": r.size, "contentType": r.content_type, "etag": r.etag }),
    )
}

/// The audit entry of a moved object: the old key as the target, the new one in `to`.
pub fn moved_entry(
    audit: &Audit,
    org_id: &OrgId,
    from: &ObjectKey,
    to: &ObjectKey,
    replaced: bool,
) -> AuditEntry {
    audit.entry(
        org_id,
        Action::ObjectMove,
        from.as_str(),
        serde_json::json!({ "to": to.as_str(), "replaced": replaced }),
    )
}
