//! The one code path that places a staged file, whichever route it came by (multipart, Base64,
//! bulk, upload URL): name it, check scope and type. The commit that follows is
//! [`crate::state::CdnState::commit`].

use auth_core::policy::{mime_allowed, prefix_matches, PathScope};
use cdn_core::content_type::{self, extension_for};
use cdn_core::metadata::Metadata;
use cdn_core::path::{self, join_key, normalize_folder};
use serde::Serialize;
use stow_http::{ApiError, Code};
use utoipa::ToSchema;

use crate::form::StagedFile;

/// Who may write where, for one upload.
#[derive(Debug, Clone)]
pub struct UploadPolicy {
    pub scope: PathScope,
    /// Every list must admit the effective type (the key's, and the upload URL's).
    pub mime_lists: Vec<Vec<String>>,
    /// Default folder (an upload URL's lock); uploads must stay under it when set.
    pub lock: Option<String>,
    pub randomize_name: bool,
}

/// A validated destination for one file.
#[derive(Debug, Clone)]
pub struct Placement {
    pub key: String,
    pub content_type: String,
}

fn path_error(what: &str, e: path::PathError) -> ApiError {
    ApiError::new(Code::InvalidPath, format!("invalid {what}: {e}"))
}

/// Decides the key and effective type of a file, or why it is refused.
pub fn place(
    file: &StagedFile,
    folder: Option<&str>,
    filename: Option<&str>,
    policy: &UploadPolicy,
) -> Result<Placement, ApiError> {
    let folder = match folder {
        Some(f) => normalize_folder(f).map_err(|e| path_error("path", e))?,
        None => policy.lock.clone().unwrap_or_default(),
    };
    if let Some(lock) = &policy.lock {
        if !prefix_matches(lock, &folder) {
            return Err(ApiError::new(
                Code::PathNotAllowed,
                format!("path `{folder}` is outside this upload URL's path `{lock}`"),
            ));
        }
    }
    let detected_type = content_type::effective(
        &file.head,
        file.declared.as_deref(),
        filename.or(file.file_name.as_deref()),
    );
    let chosen_name = match filename {
        Some(n) => n.to_owned(),
        None => file
            .file_name
            .as_deref()
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
    let key = join_key(&folder, &name).map_err(|e| path_error("filename or path", e))?;
    if let Some(lock) = &policy.lock {
        if !prefix_matches(lock, &key) {
            return Err(ApiError::new(
                Code::PathNotAllowed,
                format!("`{key}` is outside this upload URL's path `{lock}`"),
            ));
        }
    }
    if !policy.scope.allows(&key) {
        return Err(ApiError::new(
            Code::PathNotAllowed,
            format!("`{key}` is outside the paths this key may write"),
        ));
    }
    if let Some(list) = policy
        .mime_lists
        .iter()
        .find(|l| !mime_allowed(Some(l), &detected_type))
    {
        return Err(ApiError::new(
            Code::ContentTypeNotAllowed,
            format!(
                "content type `{detected_type}` is not allowed (allowed: {})",
                list.join(", ")
            ),
        ));
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

/// The `object` of upload responses (no `lastModified`).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UploadedObject {
    pub key: String,
    pub size: i64,
    pub content_type: Option<String>,
    pub etag: String,
    pub public_url: String,
    pub metadata: Metadata,
}

/// A CDN object of listings (interface 2.1).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListedObject {
    pub key: String,
    pub size: i64,
    pub content_type: Option<String>,
    pub etag: String,
    /// ISO 8601 UTC with milliseconds.
    pub last_modified: String,
    pub metadata: Metadata,
    pub public_url: String,
}
