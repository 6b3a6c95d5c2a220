//! `POST /v1/objects/search`: objects anywhere under a folder whose path contains a text, or
//! whose metadata holds one of some values (the player view finds a player's screenshots by the
//! identifiers screenshot-basic uploads carry), sorted by path, last modified or size, either
//! way, paged by a token that continues after the last object in that order (ties by path).

use std::cmp::Ordering;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::path::normalize_folder;
use crate::record::ObjectRecord;

/// Longest `contains` text, in characters.
pub const MAX_CONTAINS_CHARS: usize = 256;
/// Most `metadataValues`.
pub const MAX_METADATA_VALUES: usize = 20;
/// Longest metadata value searched for, in characters.
pub const MAX_METADATA_VALUE_CHARS: usize = 512;

/// The request body (camelCase; unknown fields refused).
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchRequest {
    /// Folder to search under, recursively (default: every folder the key may read).
    pub path: Option<String>,
    /// Case-insensitive text the object's path must contain, 1 to 256 characters.
    pub contains: Option<String>,
    /// Values, 1 to 20: an object matches when any value of its metadata equals one of them.
    pub metadata_values: Option<Vec<String>>,
    /// `key` (the default), `lastModified` or `size`.
    pub sort: Option<String>,
    /// `asc` or `desc`; default `asc` for `key`, `desc` otherwise (newest or largest first).
    pub order: Option<String>,
    /// Page size, 1 to 1000 (default 100).
    pub limit: Option<i64>,
    /// `continuationToken` of the previous page of the same search.
    pub continuation_token: Option<String>,
}

/// What objects are ordered by (ties by path, in the same direction).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SortField {
    Key,
    LastModified,
    Size,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sort {
    pub field: SortField,
    pub descending: bool,
}

/// Where a page continues: the sort value and path of the previous page's last object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "camelCase")]
pub enum Position {
    Key { key: String },
    LastModified { micros: i64, key: String },
    Size { size: i64, key: String },
}

impl Position {
    /// The position of `r` in `sort`'s order.
    pub fn of(sort: Sort, r: &ObjectRecord) -> Self {
        let key = r.key.as_str().to_owned();
        match sort.field {
            SortField::Key => Position::Key { key },
            SortField::LastModified => Position::LastModified {
                micros: r.last_modified.timestamp_micros(),
                key,
            },
            SortField::Size => Position::Size { size: r.size, key },
        }
    }

    /// The path of the object at this position.
    pub fn key(&self) -> &str {
        match self {
            Position::Key { key }
            | Position::LastModified { key, .. }
            | Position::Size { key, .. } => key,
        }
    }

    /// The sort value as a timestamp (last modified) or a number (size); `None` for `key`.
    pub fn last_modified(&self) -> Option<DateTime<Utc>> {
        match self {
            Position::LastModified { micros, .. } => DateTime::from_timestamp_micros(*micros),
            _ => None,
        }
    }
}

/// A validated search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchQuery {
    /// Normalized folder; `""` is the root.
    pub folder: String,
    /// Lowercased text the path contains.
    pub contains: Option<String>,
    /// Metadata values, any of which matches (duplicates removed, in the order sent).
    pub metadata_values: Vec<String>,
    pub sort: Sort,
    /// Continue strictly after this position.
    pub after: Option<Position>,
    /// Objects under these prefixes (whole segments) are left out.
    pub denied: Vec<String>,
    pub limit: usize,
}

impl SearchQuery {
    /// What a continuation token is bound to: everything but the position, the denied
    /// prefixes (the key's own) and the page size.
    pub fn binding(&self) -> String {
        let v = serde_json::json!({
            "folder": self.folder,
            "contains": self.contains,
            "values": self.metadata_values,
            "sort": self.sort.field,
            "desc": self.sort.descending,
        });
        format!("search:{v}")
    }

    /// Whether `r` is one of the objects this search finds (position and page aside): under
    /// the folder (or the folder's own key), not hidden, not denied, its path containing the
    /// text, its metadata holding a value.
    pub fn matches(&self, r: &ObjectRecord) -> bool {
        let key = r.key.as_str();
        let inside = self.folder.is_empty()
            || key == self.folder
            || key.starts_with(&format!("{}/", self.folder));
        let hidden = key.starts_with('.') || key.contains("/.");
        let denied = self.denied.iter().any(|d| {
            let d = d.trim_matches('/');
            !d.is_empty() && (key == d || key.starts_with(&format!("{d}/")))
        });
        let contains = self
            .contains
            .as_ref()
            .is_none_or(|text| key.to_lowercase().contains(text));
        let valued = self.metadata_values.is_empty()
            || r.metadata
                .values()
                .any(|v| self.metadata_values.contains(v));
        inside && !hidden && !denied && contains && valued
    }

    /// `a` against `b` in the search's order.
    pub fn compare(&self, a: &ObjectRecord, b: &ObjectRecord) -> Ordering {
        let by_key = || a.key.as_str().cmp(b.key.as_str());
        let ascending = match self.sort.field {
            SortField::Key => by_key(),
            SortField::LastModified => a.last_modified.cmp(&b.last_modified).then_with(by_key),
            SortField::Size => a.size.cmp(&b.size).then_with(by_key),
        };
        if self.sort.descending {
            ascending.reverse()
        } else {
            ascending
        }
    }

    /// Whether `r` comes after the page's start (`after`) in the search's order.
    pub fn is_after(&self, r: &ObjectRecord) -> bool {
        let Some(after) = &self.after else {
            return true;
        };
        let key = r.key.as_str();
        let ascending = match after {
            Position::Key { key: k } => key.cmp(k.as_str()),
            Position::LastModified { micros, key: k } => r
                .last_modified
                .timestamp_micros()
                .cmp(micros)
                .then_with(|| key.cmp(k.as_str())),
            Position::Size { size, key: k } => r.size.cmp(size).then_with(|| key.cmp(k.as_str())),
        };
        let order = if self.sort.descending {
            ascending.reverse()
        } else {
            ascending
        };
        order == Ordering::Greater
    }
}

/// The search of `req` (position and denied prefixes added by the caller), or the message of
/// the first field that is wrong.
pub fn validate(req: &SearchRequest) -> Result<SearchQuery, String> {
    let folder = normalize_folder(req.path.as_deref().unwrap_or(""))
        .map_err(|e| format!("`path` is not a valid folder: {e}"))?;
    let contains = match req.contains.as_deref() {
        None => None,
        Some(t) => {
            let n = t.chars().count();
            if n == 0 || n > MAX_CONTAINS_CHARS {
                return Err(format!(
                    "`contains` must be 1 to {MAX_CONTAINS_CHARS} characters (got {n})"
                ));
            }
            if t.contains('\0') {
                return Err("`contains` must not contain U+0000".into());
            }
            Some(t.to_lowercase())
        }
    };
    let mut metadata_values: Vec<String> = Vec::new();
    if let Some(values) = &req.metadata_values {
        if values.is_empty() || values.len() > MAX_METADATA_VALUES {
            return Err(format!(
                "`metadataValues` must hold 1 to {MAX_METADATA_VALUES} values (got {})",
                values.len()
            ));
        }
        for (i, v) in values.iter().enumerate() {
            let n = v.chars().count();
            if n == 0 || n > MAX_METADATA_VALUE_CHARS || v.contains('\0') {
                return Err(format!(
                    "`metadataValues[{i}]` must be 1 to {MAX_METADATA_VALUE_CHARS} characters without U+0000"
                ));
            }
            if !metadata_values.contains(v) {
                metadata_values.push(v.clone());
            }
        }
    }
    let field = match req.sort.as_deref() {
        None | Some("key") => SortField::Key,
        Some("lastModified") => SortField::LastModified,
        Some("size") => SortField::Size,
        Some(other) => {
            return Err(format!(
                "`sort` must be `key`, `lastModified` or `size` (got {other:?})"
            ))
        }
    };
    let descending = match req.order.as_deref() {
        None => field != SortField::Key,
        Some("asc") => false,
        Some("desc") => true,
        Some(other) => return Err(format!("`order` must be `asc` or `desc` (got {other:?})")),
    };
    let limit = match req.limit {
        None => crate::listing::DEFAULT_LIMIT,
        Some(n) if (1..=crate::listing::MAX_LIMIT as i64).contains(&n) => n as usize,
        Some(n) => {
            return Err(format!(
                "`limit` must be 1 to {} (got {n})",
                crate::listing::MAX_LIMIT
            ))
        }
    };
    Ok(SearchQuery {
        folder,
        contains,
        metadata_values,
        sort: Sort { field, descending },
        after: None,
        denied: Vec::new(),
        limit,
    })
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
