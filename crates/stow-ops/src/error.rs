//! [`OpError`]: what an operation refuses or fails with, free of any transport. The API host
//! maps it to its error envelope (`stow_http`), `stowctl` to a message and exit code.

use auth_core::{AuthError, StoreError};

/// Why an operation did not happen.
#[derive(Debug, thiserror::Error)]
pub enum OpError {
    /// A field of the request is refused. `field` is its name in the API (`allowPaths`); `text`
    /// follows that name (": …" or " is …"), so each front end names the field its own way
    /// ([`OpError::naming`]): the API as `` `allowPaths` ``, `stowctl` as `--allow-path`.
    #[error("`{field}`{text}")]
    Invalid { field: &'static str, text: String },
    /// The request as a whole is refused (the message names what to change).
    #[error("{0}")]
    BadRequest(String),
    /// More entries than the limit the message names.
    #[error("{0}")]
    TooManyFiles(String),
    /// A key or folder that is not a valid path (or a move of a folder into itself).
    #[error("{0}")]
    InvalidPath(String),
    /// A path outside the ones the caller may touch.
    #[error("{0}")]
    PathNotAllowed(String),
    /// Nothing by that name in the caller's organization.
    #[error("{0}")]
    NotFound(String),
    /// The caller may not do this (the message says why).
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    Conflict(String),
    /// The caller's role or credential does not allow it.
    #[error(transparent)]
    Auth(#[from] AuthError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl OpError {
    pub fn invalid(field: &'static str, text: impl Into<String>) -> Self {
        Self::Invalid {
            field,
            text: text.into(),
        }
    }

    /// The message with a refused field named by `name` (the front end's spelling of the API
    /// field name); other errors as they are.
    pub fn naming(&self, name: impl Fn(&str) -> String) -> String {
        match self {
            Self::Invalid { field, text } => format!("{}{text}", name(field)),
            other => other.to_string(),
        }
    }
}
