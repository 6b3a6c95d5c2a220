//! The folder view of a listing: the objects directly in a folder and its sub-folders, each
//! once, in one key order, paged like the recursive listing.
//!
//! An entry sorts by its *sort key*: an object by its key, a sub-folder by its path and a `/`
//! (`shots/2026/`), which is where its objects begin; no key ends with `/`, so the two never
//! collide. A page resumes strictly after the last entry's sort key: after an object, at the next
//! key; after a folder, past every key inside it.

use crate::record::ObjectRecord;

/// A page request of the folder view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderQuery {
    /// Normalized folder; `""` is the root.
    pub folder: String,
    /// The sort key of the last entry of the previous page.
    pub after: Option<String>,
    /// Entries under these prefixes (whole segments) are left out.
    pub denied: Vec<String>,
    pub limit: usize,
}

/// One entry of a folder view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FolderEntry {
    Object(ObjectRecord),
    /// A sub-folder's path (`shots/2026`), shown once however many objects it holds.
    Folder(String),
}

impl FolderEntry {
    pub fn sort_key(&self) -> String {
        match self {
            FolderEntry::Object(r) => r.key.to_string(),
            FolderEntry::Folder(path) => format!("{path}/"),
        }
    }
}

/// What a key under `folder` is in the folder's view: itself (an object directly inside), the
/// sub-folder holding it (its path), or nothing (the key is the folder's own name, or not
/// inside it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slot<'k> {
    Object,
    Folder(&'k str),
}

/// `folder`'s slot for `key`.
pub fn slot<'k>(folder: &str, key: &'k str) -> Option<Slot<'k>> {
    let rest = if folder.is_empty() {
        key
    } else {
        key.strip_prefix(folder)?.strip_prefix('/')?
    };
    if rest.is_empty() {
        return None;
    }
    match rest.find('/') {
        Some(at) => Some(Slot::Folder(&key[..key.len() - rest.len() + at])),
        None => Some(Slot::Object),
    }
}

/// Whether an entry (an object key or a sub-folder path) is hidden: its name, the segment the
/// folder view shows, starts with a dot.
pub fn hidden_entry(folder: &str, entry_path: &str) -> bool {
    let name = if folder.is_empty() {
        entry_path
    } else {
        entry_path
            .strip_prefix(folder)
            .and_then(|r| r.strip_prefix('/'))
            .unwrap_or(entry_path)
    };
    name.starts_with('.')
}

/// Where the next page begins: `(bound, inclusive)`. After an object `k`: keys `> k`; after a
/// folder `p/`: keys `>= p0` (`'0'` follows `'/'` in byte order), past everything inside it.
pub fn resume_bound(after: &str) -> (String, bool) {
    match after.strip_suffix('/') {
        Some(folder) => (format!("{folder}0"), true),
        None => (after.to_owned(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots() {
        assert_eq!(slot("", "a.png"), Some(Slot::Object));
        assert_eq!(slot("", "a/b/c.png"), Some(Slot::Folder("a")));
        assert_eq!(slot("a", "a/b/c.png"), Some(Slot::Folder("a/b")));
        assert_eq!(slot("a", "a/c.png"), Some(Slot::Object));
        assert_eq!(
            slot("a", "a"),
            None,
            "the folder's own name is its parent's object"
        );
        assert_eq!(slot("a", "ab/c.png"), None, "whole segments");
        assert_eq!(slot("a/b", "a/b/猫/x"), Some(Slot::Folder("a/b/猫")));
    }

    #[test]
    fn hidden_entries_are_named_with_a_dot() {
        assert!(hidden_entry("", ".env"));
        assert!(hidden_entry("a", "a/.git"));
        assert!(!hidden_entry("a", "a/b.c"));
        assert!(!hidden_entry(".x", ".x/b"), "only the shown name counts");
    }

    #[test]
    fn pages_resume_past_a_whole_folder() {
        assert_eq!(resume_bound("a/b.png"), ("a/b.png".to_owned(), false));
        assert_eq!(resume_bound("a/sub/"), ("a/sub0".to_owned(), true));
        // every key inside the folder sorts before the bound, the next sibling after it
        let (bound, _) = resume_bound("a/sub/");
        assert!("a/sub/zzz" < bound.as_str() && "a/sub/\u{10FFFF}" < bound.as_str());
        assert!(
            "a/sub0" >= bound.as_str() && "a/sub1" > bound.as_str() && "a/sub-x" < bound.as_str()
        );
    }
}
