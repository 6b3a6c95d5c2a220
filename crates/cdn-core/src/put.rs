//! [`Put`]: what storing a per-organization setting by its name did (placeholders, lifecycle
//! rules). Its own module, so lifecycle rules do not import the placeholders.

use chrono::{DateTime, Utc};

/// What a `put` of a placeholder or a lifecycle rule did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Put {
    Created,
    /// The pattern had a placeholder, which now has the new fallback; it was created then.
    Replaced {
        created_at: DateTime<Utc>,
    },
    /// The pattern is new and the organization already has the most it may.
    LimitReached,
}
