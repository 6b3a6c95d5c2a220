//! Folder moves: which folders may move where, where each object lands, and when a move is done.
//!
//! A folder move renames its objects in batches (one request, one batch). An object whose
//! destination is taken stays (a *conflict*) unless the request replaces; a batch is made of the
//! objects that *can* move, so conflicts never hold up the objects after them: "call again until
//! `done`" ends even when more objects conflict than a batch holds.

use auth_core::prefix_matches;

use crate::path::ObjectKey;

/// Objects one folder-move (or folder-delete) request handles at most, and conflicts it names.
pub const BATCH: usize = 1000;

/// Why two folders cannot be a move's source and destination.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FolderMoveError {
    #[error("{0} must name a folder, not the root")]
    Root(&'static str),
    #[error("`{0}` and `{1}` contain one another; a folder cannot move into itself")]
    IntoItself(String, String),
}

/// Checks two normalized folders: neither is the root, neither contains the other.
pub fn check_folders(from: &str, to: &str) -> Result<(), FolderMoveError> {
    for (folder, field) in [(from, "from"), (to, "to")] {
        if folder.is_empty() {
            return Err(FolderMoveError::Root(field));
        }
    }
    if prefix_matches(from, to) || prefix_matches(to, from) {
        return Err(FolderMoveError::IntoItself(from.to_owned(), to.to_owned()));
    }
    Ok(())
}

/// The key an object under `from` gets in `to`: `from/a/b.png` → `to/a/b.png`. `key` is under
/// `from` (whole segments).
pub fn destination(from: &str, to: &str, key: &ObjectKey) -> ObjectKey {
    debug_assert!(key.len() > from.len() && key.starts_with(from));
    ObjectKey::new(format!("{to}{}", &key[from.len()..]))
}

/// What a folder move asks the store for, batch by batch: the keys under `from` (a normalized
/// folder) that would move to `to` (another, apart from it), up to `limit` of each kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderMove {
    pub from: String,
    pub to: String,
    /// Whether objects at the destinations are replaced (then every key is movable).
    pub replace: bool,
    pub limit: usize,
}

/// One batch of a folder move, as the store finds it: objects under the source (in key order,
/// dot-named keys never, an object named like the folder itself never) split by whether their
/// destination is free.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MoveBatch {
    /// Keys (up to the limit asked) whose destination has no object (every key, when replacing).
    pub movable: Vec<ObjectKey>,
    /// Whether more movable keys follow those.
    pub more_movable: bool,
    /// Keys (up to the limit asked) whose destination has an object (none when replacing).
    pub blocked: Vec<ObjectKey>,
}

impl MoveBatch {
    /// Whether the request that moves this batch leaves nothing it could move: every object left
    /// under the source is a conflict (named, up to [`BATCH`] of them) or none is left.
    pub fn done(&self) -> bool {
        !self.more_movable
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_must_be_apart_and_not_the_root() {
        assert_eq!(check_folders("", "b"), Err(FolderMoveError::Root("from")));
        assert_eq!(check_folders("a", ""), Err(FolderMoveError::Root("to")));
        assert!(matches!(
            check_folders("a", "a/b"),
            Err(FolderMoveError::IntoItself(..))
        ));
        assert!(matches!(
            check_folders("a/b", "a"),
            Err(FolderMoveError::IntoItself(..))
        ));
        assert!(matches!(
            check_folders("a", "a"),
            Err(FolderMoveError::IntoItself(..))
        ));
        // whole segments: a sibling that shares a prefix is another folder
        assert_eq!(check_folders("a", "ab"), Ok(()));
        assert_eq!(check_folders("shots", "shots-old/2026"), Ok(()));
        assert_eq!(check_folders("猫", "犬/猫"), Ok(()));
    }

    #[test]
    fn destinations_keep_the_path_below_the_folder() {
        assert_eq!(
            destination("src", "dst", &ObjectKey::new("src/a.png")),
            "dst/a.png"
        );
        assert_eq!(
            destination("a/src", "b", &ObjectKey::new("a/src/x/y/猫.png")),
            "b/x/y/猫.png"
        );
        assert_eq!(destination("é", "e/f", &ObjectKey::new("é/ü")), "e/f/ü");
    }

    #[test]
    fn done_means_nothing_movable_is_left() {
        let mut b = MoveBatch::default();
        assert!(b.done());
        b.blocked = vec!["src/c".into(); BATCH];
        assert!(b.done(), "only conflicts are left");
        b.more_movable = true;
        assert!(!b.done());
    }
}
