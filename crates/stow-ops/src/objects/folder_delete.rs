//! [`DeleteFolder`]: every object under a folder, in bounded batches.
//!
//! One call deletes at most [`BATCH`] objects (rows and their audit entries in one store call,
//! then the host removes their bytes) and says whether the folder is now empty; the caller
//! repeats it until `done`. So no call runs long, a cut-off call loses nothing (what it committed
//! is gone, the rest stays for the next), and bytes whose removal fails are left to `stowctl gc`.

use auth_core::{OrgId, Permission};
use cdn_core::folder_move::BATCH;
use cdn_core::path::{normalize_folder, ObjectKey};
use cdn_core::store::ListQuery;

use super::ObjectsHost;
use crate::{Ctx, OpError};

/// A folder delete as asked (`shots/2026`; not the root).
#[derive(Debug, Clone)]
pub struct DeleteFolder {
    pub path: String,
}

/// A folder delete the caller may make: the folder normalized, wholly within the caller's paths.
#[derive(Debug, Clone)]
pub struct CheckedFolderDelete {
    folder: String,
}

/// What one call deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderDeleted {
    /// The normalized folder.
    pub path: String,
    pub deleted: usize,
    /// No object is left under the folder.
    pub done: bool,
}

impl DeleteFolder {
    /// Who may and what is asked, before anything is done: `cdn:delete`, a folder other than
    /// the root, no part of it outside the caller's paths.
    pub fn check(self, ctx: &Ctx<'_>) -> Result<CheckedFolderDelete, OpError> {
        ctx.require(Permission::CdnDelete)?;
        let folder = normalize_folder(&self.path)
            .map_err(|e| OpError::InvalidPath(format!("invalid path: {e}")))?;
        if folder.is_empty() {
            return Err(OpError::InvalidPath(
                "path must name a folder; the whole workspace cannot be deleted at once".into(),
            ));
        }
        if let Some(part) = ctx.path_scope().outside_part(&folder) {
            return Err(ctx.outside_paths(part, "delete"));
        }
        Ok(CheckedFolderDelete { folder })
    }
}

impl CheckedFolderDelete {
    pub fn folder(&self) -> &str {
        &self.folder
    }

    /// Deletes the next batch in `org` (the caller's own; the operator's any).
    pub async fn run(
        self,
        ctx: &Ctx<'_>,
        org: &OrgId,
        host: &dyn ObjectsHost,
    ) -> Result<FolderDeleted, OpError> {
        ctx.within(org)?;
        let (keys, done) = folder_batch(ctx, org, &self.folder).await?;
        let deleted = ctx
            .stores
            .records
            .delete_many(org, &keys, &ctx.audit)
            .await?;
        for record in &deleted {
            host.forget_row(org, &record.key);
            host.remove_bytes(&record.storage_path).await;
        }
        Ok(FolderDeleted {
            path: self.folder,
            deleted: deleted.len(),
            done,
        })
    }
}

/// The next batch of keys under `folder` (at most [`BATCH`]; an object whose key is the folder's
/// own name is its parent's and not among them) and whether they are all that is left.
async fn folder_batch(
    ctx: &Ctx<'_>,
    org: &OrgId,
    folder: &str,
) -> Result<(Vec<ObjectKey>, bool), OpError> {
    let query = ListQuery {
        folder: folder.to_owned(),
        after: None,
        denied: Vec::new(),
        // two past a batch: whether anything is left, even with the object named like the folder
        limit: BATCH + 2,
    };
    let mut keys: Vec<ObjectKey> = ctx
        .stores
        .records
        .list(org, &query)
        .await?
        .into_iter()
        .map(|r| r.key)
        .filter(|k| k != folder)
        .collect();
    let last = keys.len() <= BATCH;
    keys.truncate(BATCH);
    Ok((keys, last))
}
