//! [`StoreError`] and its [`Cause`]: what a store fails with, transport-neutral (the HTTP edge and
//! `stowctl` map it). Its own module, below the audit log and every store trait that use it.

use std::sync::Arc;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// A referenced record does not exist; the text names it (`unknown plan "gold"`).
    #[error("{0}")]
    NotFound(String),
    /// A uniqueness rule was violated; the text names it.
    #[error("{0}")]
    Conflict(String),
    /// The backing store cannot be reached or timed out; retrying later may succeed.
    #[error("storage unavailable: {0}")]
    Unavailable(#[source] Cause),
    /// Anything else; the text is for logs, never for responses.
    #[error("storage error: {0}")]
    Internal(#[source] Cause),
}

/// What went wrong below a store: text for logs, and the error it came from when there is one,
/// kept as the [`std::error::Error::source`] so a caller can walk or downcast it instead of
/// parsing text. Shared (`Arc`) so errors stay `Clone`; compared by text.
#[derive(Debug, Clone)]
pub struct Cause {
    message: String,
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

/// Any error a store may keep as a cause (boxed errors, as some libraries return, included).
type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl Cause {
    /// `error`'s text, keeping `error` as the source.
    pub fn from_error(error: impl Into<BoxError>) -> Self {
        let error: BoxError = error.into();
        Self {
            message: error.to_string(),
            source: Some(Arc::from(error)),
        }
    }

    /// `what: error`, keeping `error` as the source.
    pub fn context(what: &str, error: impl Into<BoxError>) -> Self {
        let error: BoxError = error.into();
        Self {
            message: format!("{what}: {error}"),
            source: Some(Arc::from(error)),
        }
    }
}

impl From<String> for Cause {
    fn from(message: String) -> Self {
        Self {
            message,
            source: None,
        }
    }
}

impl From<&str> for Cause {
    fn from(message: &str) -> Self {
        message.to_owned().into()
    }
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Cause {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl PartialEq for Cause {
    fn eq(&self, other: &Self) -> bool {
        self.message == other.message
    }
}

impl Eq for Cause {}
