//! Pure CDN policy: object-key normalization, content-type detection and policy, metadata rules,
//! signed continuation tokens, byte ranges, upload-URL rules, and the storage traits (objects, idempotency
//! records, upload URLs) with in-memory implementations. No I/O, no framework.

// no production function over 100 lines of code (test code is exempt)
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod content_type;
pub mod folder;
pub mod folder_move;
pub mod idempotency;
pub mod lifecycle;
pub mod listing;
pub mod memory;
pub mod metadata;
pub mod path;
pub mod placeholder;
pub mod placement;
#[cfg(test)]
mod proptests;
pub mod put;
pub mod range;
pub mod record;
pub mod rendition;
pub mod search;
pub mod store;
#[cfg(any(test, feature = "testsuite"))]
#[allow(clippy::too_many_lines)] // a suite case reads as one story
pub mod testsuite;
pub mod upload_url;

pub use path::{join_key, normalize_folder, normalize_key, ObjectKey, PathError, MAX_KEY_BYTES};
pub use store::{ObjectRecord, ObjectRecordStore};
