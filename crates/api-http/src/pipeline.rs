//! The one code path that places a staged file, whichever route it came by (multipart, Base64,
//! bulk, upload URL): the rule is `cdn_core::placement`; the commit that follows is
//! [`crate::state::CdnState::commit`]. Also the object shapes upload and listing answers share.

use cdn_core::metadata::Metadata;
use cdn_core::placement::{self, FileFacts, PlaceError};
use serde::Serialize;
use stow_http::{ApiError, Code};
use utoipa::ToSchema;

use crate::form::StagedFile;

pub use cdn_core::placement::{Placement, UploadPolicy};

/// Decides the key and effective type of a file (`cdn_core::placement`), or the error to answer.
pub fn place(
    file: &StagedFile,
    folder: Option<&str>,
    filename: Option<&str>,
    policy: &UploadPolicy,
) -> Result<Placement, ApiError> {
    let facts = FileFacts {
        head: &file.head,
        declared: file.declared.as_deref(),
        file_name: file.file_name.as_deref(),
    };
    placement::place(facts, folder, filename, policy).map_err(|e| {
        let code = match e {
            PlaceError::InvalidPath { .. } => Code::InvalidPath,
            PlaceError::FolderOutsideLock { .. }
            | PlaceError::KeyOutsideLock { .. }
            | PlaceError::OutsideScope { .. } => Code::PathNotAllowed,
            PlaceError::TypeNotAllowed { .. } => Code::ContentTypeNotAllowed,
        };
        ApiError::new(code, e.to_string())
    })
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

/// A CDN object of listings (docs/api.md, "The object").
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
