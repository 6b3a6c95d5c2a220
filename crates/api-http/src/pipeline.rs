//! The one code path that places a staged file, whichever route it came by (multipart, Base64,
//! bulk, upload URL): the rule is `cdn_core::placement`; the commit that follows is
//! [`crate::state::ApiState::commit`]. Also the object shapes upload and listing answers share.

use actix_web::http::header;
use actix_web::HttpRequest;
use cdn_core::metadata::Metadata;
use cdn_core::placement::{self, FileFacts, PlaceError};
use serde::Serialize;
use stow_http::{ApiError, Code};
use utoipa::ToSchema;

use crate::form::StagedFile;

pub use cdn_core::placement::{Placement, UploadPolicy};

/// What an upload does with an object already at its key. `If-None-Match: *` (RFC 9110 §13.1.2)
/// asks to create only (docs/api.md, "Create-only uploads").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Replace it (the default).
    Replace,
    /// Keep it and refuse the upload: 412 `PRECONDITION_FAILED`.
    Keep,
}

impl Existing {
    /// From the request's `If-None-Match`: absent is `Replace`, `*` is `Keep`; anything else (an
    /// entity tag means nothing for an object not yet named) is refused.
    pub fn of(req: &HttpRequest) -> Result<Self, ApiError> {
        let mut tags = Vec::new();
        for value in req.headers().get_all(header::IF_NONE_MATCH) {
            let value = value.to_str().unwrap_or("\u{fffd}");
            tags.extend(value.split(',').map(str::trim).filter(|t| !t.is_empty()));
        }
        match tags.as_slice() {
            [] if !req.headers().contains_key(header::IF_NONE_MATCH) => Ok(Existing::Replace),
            ["*"] => Ok(Existing::Keep),
            _ => Err(ApiError::invalid_request(
                "`If-None-Match` on an upload takes only `*` (create only: 412 when an object \
                 exists at the key)",
            )),
        }
    }

    /// What the idempotency fingerprint adds for it: nothing for the default, so the fingerprints
    /// of earlier requests stay the same.
    pub fn fingerprint_part(self) -> &'static [u8] {
        match self {
            Existing::Replace => b"",
            Existing::Keep => b"\0if-none-match=*",
        }
    }
}

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
