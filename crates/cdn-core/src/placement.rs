//! Where one uploaded file goes and as what type, whichever route it came by (multipart, Base64,
//! bulk, upload URL): name it, then check it against the upload URL's folder, the key's paths and
//! every MIME allow-list. The HTTP layer maps a [`PlaceError`] to its error code.

use auth_core::policy::{mime_allowed, prefix_matches, PathScope};

use crate::content_type::{self, extension_for};
use crate::path::{self, join_key, normalize_folder, ObjectKey, PathError};

/// Who may write where, for one upload.
#[derive(Debug, Clone)]
pub struct UploadPolicy {
    pub scope: PathScope,
    /// Whose paths `scope` is, as a refusal names it: `this key`, `your role (admin)`.
    pub holder: String,
    /// Every list must admit the effective type (the key's, and the upload URL's).
    pub mime_lists: Vec<Vec<String>>,
    /// Default folder (an upload URL's lock); uploads must stay under it when set.
    pub lock: Option<String>,
    pub randomize_name: bool,
}

/// What is known of a received file before it is placed.
#[derive(Debug, Clone, Copy)]
pub struct FileFacts<'a> {
    /// Its first bytes, for sniffing.
    pub head: &'a [u8],
    /// The type the client declared.
    pub declared: Option<&'a str>,
    /// The file name the client sent with it.
    pub file_name: Option<&'a str>,
}

/// A validated destination for one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub key: ObjectKey,
    pub content_type: String,
}

/// Why a file cannot be placed. The messages are shown to clients.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlaceError {
    /// The folder or the name is not a valid path.
    #[error("invalid {what}: {source}")]
    InvalidPath {
        what: &'static str,
        #[source]
        source: PathError,
    },
    /// The folder is outside the upload URL's folder.
    #[error("path `{folder}` is outside this upload URL's path `{lock}`")]
    FolderOutsideLock { folder: String, lock: String },
    /// The key is outside the upload URL's folder.
    #[error("`{key}` is outside this upload URL's path `{lock}`")]
    KeyOutsideLock { key: String, lock: String },
    /// The key is outside the paths the caller may write.
    #[error("`{key}` is outside the paths {holder} may write")]
    OutsideScope { key: String, holder: String },
    /// The effective type is not on one of the allow-lists.
    #[error("content type `{content_type}` is not allowed (allowed: {})", allowed.join(", "))]
    TypeNotAllowed {
        content_type: String,
        allowed: Vec<String>,
    },
}

/// Decides the key and effective type of a file, or why it is refused.
pub fn place(
    file: FileFacts<'_>,
    folder: Option<&str>,
    filename: Option<&str>,
    policy: &UploadPolicy,
) -> Result<Placement, PlaceError> {
    let folder = match folder {
        Some(f) => normalize_folder(f).map_err(|source| PlaceError::InvalidPath {
            what: "path",
            source,
        })?,
        None => policy.lock.clone().unwrap_or_default(),
    };
    if let Some(lock) = &policy.lock {
        if !prefix_matches(lock, &folder) {
            return Err(PlaceError::FolderOutsideLock {
                folder,
                lock: lock.clone(),
            });
        }
    }
    let detected_type =
        content_type::effective(file.head, file.declared, filename.or(file.file_name));
    let chosen_name = match filename {
        Some(n) => n.to_owned(),
        None => file
            .file_name
            .map(path::last_segment)
            .filter(|n| !n.is_empty())
            .map(str::to_owned)
            .unwrap_or_else(|| generated_name(&detected_type, None)),
    };
    let name = if policy.randomize_name {
        let ext = path::extension(&chosen_name);
        generated_name(&detected_type, ext.as_deref())
    } else {
        chosen_name
    };
    let key = join_key(&folder, &name).map_err(|source| PlaceError::InvalidPath {
        what: "filename or path",
        source,
    })?;
    if let Some(lock) = &policy.lock {
        if !prefix_matches(lock, &key) {
            return Err(PlaceError::KeyOutsideLock {
                key: key.into_string(),
                lock: lock.clone(),
            });
        }
    }
    if !policy.scope.allows(&key) {
        return Err(PlaceError::OutsideScope {
            key: key.into_string(),
            holder: policy.holder.clone(),
        });
    }
    if let Some(list) = policy
        .mime_lists
        .iter()
        .find(|l| !mime_allowed(Some(l), &detected_type))
    {
        return Err(PlaceError::TypeNotAllowed {
            content_type: detected_type,
            allowed: list.clone(),
        });
    }
    Ok(Placement {
        key,
        content_type: detected_type,
    })
}

/// `<ulid>.<ext>`, with the given extension or one for the type.
pub fn generated_name(content_type: &str, ext: Option<&str>) -> String {
    let id = ulid::Ulid::new().to_string().to_lowercase();
    match ext.or_else(|| extension_for(content_type)) {
        Some(e) => format!("{id}.{e}"),
        None => id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    fn policy(lock: Option<&str>, allowed: &[&str], denied: &[&str]) -> UploadPolicy {
        UploadPolicy {
            holder: "this key".into(),
            scope: PathScope::new(
                allowed.iter().map(|s| s.to_string()).collect(),
                denied.iter().map(|s| s.to_string()).collect(),
            ),
            mime_lists: vec![],
            lock: lock.map(str::to_owned),
            randomize_name: false,
        }
    }

    fn png(name: Option<&str>) -> FileFacts<'_> {
        FileFacts {
            head: PNG,
            declared: None,
            file_name: name,
        }
    }

    #[test]
    fn names_come_from_the_request_then_the_file_then_a_generated_one() {
        let open = policy(None, &[], &[]);
        let p = place(png(Some("C:/shots/a.png")), Some("f"), None, &open).unwrap();
        assert_eq!(p.key, "f/a.png");
        assert_eq!(p.content_type, "image/png");
        let p = place(png(Some("a.png")), Some("f"), Some("b.png"), &open).unwrap();
        assert_eq!(p.key, "f/b.png");
        let p = place(png(None), None, None, &open).unwrap();
        assert!(
            p.key.ends_with(".png") && p.key.len() == 26 + 4,
            "{}",
            p.key
        );
        let mut random = open.clone();
        random.randomize_name = true;
        let p = place(png(Some("mine.PNG")), Some("f"), None, &random).unwrap();
        // the extension is kept, lowercased
        assert!(
            p.key.starts_with("f/") && p.key.ends_with(".png"),
            "{}",
            p.key
        );
        assert_ne!(p.key, "f/mine.png");
    }

    #[test]
    fn every_refusal_names_its_reason() {
        let open = policy(None, &[], &[]);
        assert!(matches!(
            place(png(None), Some("../x"), None, &open),
            Err(PlaceError::InvalidPath { what: "path", .. })
        ));
        assert!(matches!(
            place(png(None), Some("f"), Some("a/../../b"), &open),
            Err(PlaceError::InvalidPath {
                what: "filename or path",
                ..
            })
        ));
        let locked = policy(Some("u/1"), &[], &[]);
        assert_eq!(
            place(png(None), Some("u/2"), None, &locked),
            Err(PlaceError::FolderOutsideLock {
                folder: "u/2".into(),
                lock: "u/1".into()
            })
        );
        assert_eq!(
            place(png(Some("a.png")), None, None, &locked).unwrap().key,
            "u/1/a.png"
        );
        let scoped = policy(None, &["pub"], &["pub/secret"]);
        assert_eq!(
            place(png(Some("a.png")), Some("pub/secret"), None, &scoped),
            Err(PlaceError::OutsideScope {
                key: "pub/secret/a.png".into(),
                holder: "this key".into()
            })
        );
        assert_eq!(
            place(png(Some("a.png")), Some("pub/secret"), None, &scoped)
                .unwrap_err()
                .to_string(),
            "`pub/secret/a.png` is outside the paths this key may write"
        );
        let mut typed = open.clone();
        typed.mime_lists = vec![vec!["image/*".into()], vec!["image/jpeg".into()]];
        let refused = place(png(Some("a.png")), None, None, &typed).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "content type `image/png` is not allowed (allowed: image/jpeg)"
        );
    }
}
