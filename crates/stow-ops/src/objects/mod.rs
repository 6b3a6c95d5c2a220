//! Objects' operations that take more than one step: moving an object or a folder
//! ([`MoveObjects`]), deleting a folder ([`DeleteFolder`]) and purging cached states ([`Purge`]). The host hands over what it keeps beside the rows ([`ObjectsHost`]): its
//! cached rows and the bytes a replacement leaves behind.

mod folder_delete;
mod moving;
mod purge;

use async_trait::async_trait;
use auth_core::OrgId;
use cdn_core::ObjectKey;

pub use folder_delete::{CheckedFolderDelete, DeleteFolder, FolderDeleted};
pub use moving::{CheckedMove, MoveConflict, MoveObjects, Moved};
pub use purge::{CheckedPurge, Purge, Purged};

/// What the host keeps beside the rows, told of a change once it has committed.
#[async_trait]
pub trait ObjectsHost: Send + Sync {
    /// Forgets what this instance caches of the row at `key` (other instances' caches turn over
    /// on their own; the API host waits for that before it answers).
    fn forget_row(&self, org: &OrgId, key: &ObjectKey);
    /// Removes the bytes at `location`, no longer referenced. A failure is the host's to log:
    /// `stowctl gc` removes bytes left behind.
    async fn remove_bytes(&self, location: &str);
}

#[cfg(test)]
mod tests;
