//! [`MoveObjects`]: rename an object or a folder without copying bytes.
//!
//! Locations are immutable, so a move changes rows only: each object moves in one store call
//! (`ObjectRecordStore::rename`, audited there), found at its old key or its new one, never both
//! or neither. A folder moves in batches of [`BATCH`] like a folder delete; the caller calls
//! again while `done` is false.

use auth_core::{OrgId, Permission};
use cdn_core::folder_move::{self, FolderMove, BATCH};
use cdn_core::path::{normalize_folder, normalize_key, ObjectKey};
use cdn_core::store::Renamed;

use super::ObjectsHost;
use crate::{Ctx, OpError};

/// A move as asked: `from` and `to` are keys, or folders with `folder`.
#[derive(Debug, Clone)]
pub struct MoveObjects {
    pub from: String,
    pub to: String,
    /// Replace an object that already has the destination key (else a conflict).
    pub replace: bool,
    pub folder: bool,
}

/// A move the caller may make: both sides normalized and within the caller's paths.
#[derive(Debug, Clone)]
pub struct CheckedMove {
    from: String,
    to: String,
    replace: bool,
    folder: bool,
}

/// An object that stayed because its destination was taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoveConflict {
    pub from: String,
    pub to: String,
}

/// What a move did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moved {
    /// The normalized source and destination.
    pub from: String,
    pub to: String,
    /// Objects moved.
    pub moved: usize,
    /// Folder moves: objects left in place because their destination exists, at most [`BATCH`].
    pub conflicts: Vec<MoveConflict>,
    /// False when a folder move has more objects it can move.
    pub done: bool,
}

impl MoveObjects {
    /// Who may and what is asked, before anything is done (the API host fingerprints the checked
    /// move for `Idempotency-Key`): `cdn:write` and `cdn:delete`, valid keys (or folders, neither
    /// the root nor one inside the other), both within the caller's paths.
    pub fn check(self, ctx: &Ctx<'_>) -> Result<CheckedMove, OpError> {
        ctx.require(Permission::CdnWrite)?;
        ctx.require(Permission::CdnDelete)?;
        let (from, to) = if self.folder {
            folders(ctx, &self.from, &self.to)?
        } else {
            keys(ctx, &self.from, &self.to)?
        };
        Ok(CheckedMove {
            from,
            to,
            replace: self.replace,
            folder: self.folder,
        })
    }
}

fn keys(ctx: &Ctx<'_>, from: &str, to: &str) -> Result<(String, String), OpError> {
    let key = |raw: &str, field: &str| {
        normalize_key(raw)
            .map(String::from)
            .map_err(|e| OpError::InvalidPath(format!("invalid {field}: {e}")))
    };
    let (from, to) = (key(from, "from")?, key(to, "to")?);
    let scope = ctx.path_scope();
    for k in [&from, &to] {
        if !scope.allows(k) {
            return Err(ctx.outside_paths(k, "move"));
        }
    }
    Ok((from, to))
}

fn folders(ctx: &Ctx<'_>, from: &str, to: &str) -> Result<(String, String), OpError> {
    let folder = |raw: &str, field: &str| {
        normalize_folder(raw).map_err(|e| OpError::InvalidPath(format!("invalid {field}: {e}")))
    };
    let (from, to) = (folder(from, "from")?, folder(to, "to")?);
    folder_move::check_folders(&from, &to).map_err(|e| OpError::InvalidPath(e.to_string()))?;
    let scope = ctx.path_scope();
    for f in [&from, &to] {
        if let Some(part) = scope.outside_part(f) {
            return Err(ctx.outside_paths(part, "move"));
        }
    }
    Ok((from, to))
}

impl CheckedMove {
    pub fn from(&self) -> &str {
        &self.from
    }

    pub fn to(&self) -> &str {
        &self.to
    }

    pub fn replace(&self) -> bool {
        self.replace
    }

    pub fn folder(&self) -> bool {
        self.folder
    }

    /// Moves in `org` (the caller's own; the operator's any).
    pub async fn run(
        self,
        ctx: &Ctx<'_>,
        org: &OrgId,
        host: &dyn ObjectsHost,
    ) -> Result<Moved, OpError> {
        ctx.within(org)?;
        if self.folder {
            let m = FolderMove {
                from: self.from,
                to: self.to,
                replace: self.replace,
                limit: BATCH,
            };
            move_folder(ctx, org, host, m).await
        } else {
            // both were normalized as keys (`keys`)
            let (from, to) = (ObjectKey::new(self.from), ObjectKey::new(self.to));
            move_one(ctx, org, host, from, to, self.replace).await
        }
    }
}

async fn move_one(
    ctx: &Ctx<'_>,
    org: &OrgId,
    host: &dyn ObjectsHost,
    from: ObjectKey,
    to: ObjectKey,
    replace: bool,
) -> Result<Moved, OpError> {
    match rename(ctx, org, host, &from, &to, replace).await? {
        Renamed::SourceMissing => Err(OpError::NotFound(format!("no object has the key `{from}`"))),
        Renamed::DestinationExists => Err(OpError::Conflict(format!(
            "an object already has the key `{to}`; send \"replace\": true to replace it"
        ))),
        Renamed::Moved { .. } => Ok(Moved {
            moved: usize::from(from != to),
            from: from.into_string(),
            to: to.into_string(),
            conflicts: Vec::new(),
            done: true,
        }),
    }
}

async fn move_folder(
    ctx: &Ctx<'_>,
    org: &OrgId,
    host: &dyn ObjectsHost,
    m: FolderMove,
) -> Result<Moved, OpError> {
    let batch = ctx.stores.records.folder_move_batch(org, &m).await?;
    let FolderMove {
        from, to, replace, ..
    } = m;
    let (mut moved, mut conflicts) = (0, Vec::new());
    for key in &batch.movable {
        let dest = folder_move::destination(&from, &to, key);
        match rename(ctx, org, host, key, &dest, replace).await? {
            Renamed::Moved { .. } => moved += 1,
            // taken since the batch was read
            Renamed::DestinationExists => conflicts.push(MoveConflict {
                from: key.to_string(),
                to: dest.into_string(),
            }),
            // deleted meanwhile: nothing to move
            Renamed::SourceMissing => {}
        }
    }
    let done = batch.done();
    conflicts.extend(batch.blocked.into_iter().map(|key| MoveConflict {
        to: folder_move::destination(&from, &to, &key).into_string(),
        from: key.into_string(),
    }));
    conflicts.truncate(BATCH);
    Ok(Moved {
        from,
        to,
        moved,
        conflicts,
        done,
    })
}

/// Renames one object, has the host forget both keys' cached rows, and removes the bytes of an
/// object the rename replaced (after the commit).
async fn rename(
    ctx: &Ctx<'_>,
    org: &OrgId,
    host: &dyn ObjectsHost,
    from: &ObjectKey,
    to: &ObjectKey,
    replace: bool,
) -> Result<Renamed, OpError> {
    let renamed = ctx
        .stores
        .records
        .rename(org, from, to, replace, &ctx.audit)
        .await?;
    host.forget_row(org, from);
    host.forget_row(org, to);
    if let Renamed::Moved {
        replaced: Some(location),
    } = &renamed
    {
        host.remove_bytes(location).await;
    }
    Ok(renamed)
}
