//! [`ObjectRecord`]: an object's row. Its own module, below the store and the query modules
//! (folders, lifecycle, search) that read records, so none of them imports the store.

use chrono::{DateTime, Utc};

use crate::metadata::Metadata;
use crate::path::ObjectKey;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectRecord {
    pub key: ObjectKey,
    pub size: i64,
    pub content_type: Option<String>,
    /// Content-derived entity tag (no quotes).
    pub etag: String,
    pub metadata: Metadata,
    pub storage_path: String,
    pub last_modified: DateTime<Utc>,
    /// When an object was first stored at this key; a replacement keeps it (the store ignores
    /// the value an upsert brings for an existing key).
    pub created_at: DateTime<Utc>,
    /// Kept whatever the lifecycle rules say ([`crate::lifecycle`]). Set only by
    /// [`ObjectRecordStore::set_keep`]; like `created_at`, a replacement keeps the stored value.
    pub keep: bool,
}
