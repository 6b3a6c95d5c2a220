//! The adapter's error, and how local I/O errors map to it (a full disk is its own case).

use auth_core::Cause;

#[derive(Debug, thiserror::Error)]
pub enum ObjectsError {
    #[error("object not found")]
    NotFound,
    #[error("object store unavailable: {0}")]
    Unavailable(#[source] Cause),
    /// The store has no space left (disk full, quota): writes fail until space is freed.
    #[error("object store is out of space: {0}")]
    NoSpace(#[source] Cause),
    #[error("object store error: {0}")]
    Other(#[source] Cause),
    #[error("invalid OBJECT_STORE_URL: {0}")]
    Config(String),
}

impl From<object_store::Error> for ObjectsError {
    fn from(e: object_store::Error) -> Self {
        match e {
            object_store::Error::NotFound { .. } => ObjectsError::NotFound,
            other => ObjectsError::Other(Cause::from_error(other)),
        }
    }
}

pub(crate) fn local_error(e: std::io::Error) -> ObjectsError {
    write_error("local object store", e)
}

/// A failed local write: out of space (`ENOSPC`, `EDQUOT`) or anything else.
pub(crate) fn write_error(context: &str, e: std::io::Error) -> ObjectsError {
    use std::io::ErrorKind;
    match e.kind() {
        ErrorKind::StorageFull | ErrorKind::QuotaExceeded => {
            ObjectsError::NoSpace(Cause::context(context, e))
        }
        _ => ObjectsError::Other(Cause::context(context, e)),
    }
}
