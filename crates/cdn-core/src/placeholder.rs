//! Placeholders: an organization's path patterns, each with a fallback object. Public delivery of
//! a missing key that a pattern matches answers with the fallback's bytes, as a 404 with a short
//! cache lifetime (the HTTP side), so nothing caches it as the real object.
//!
//! A pattern is an object key with glob wildcards (the `globset` syntax, with `/` as a literal
//! separator): `*` is any run of characters within one segment, `?` one character, `**` as a
//! whole segment any number of segments, `[abc]` a class, `{png,webp}` alternatives. It is
//! normalized like a key first, so it never has a leading `/`, a `.`/`..` segment or a hidden
//! segment. When several patterns match a key, the longest pattern wins, then the first in byte
//! order.

use async_trait::async_trait;
use auth_core::audit::{Action, Audit, AuditEntry};
use auth_core::policy::PathScope;
use auth_core::{OrgId, StoreError};
use chrono::{DateTime, Utc};
use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

use crate::path::{normalize_key, ObjectKey, PathError};
use crate::store::ObjectRecordStore;

/// Placeholders an organization may have.
pub const MAX_PLACEHOLDERS: usize = 100;

/// Characters that make a segment a wildcard segment.
const WILDCARDS: &[char] = &['*', '?', '[', ']', '{', '}'];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placeholder {
    /// A normalized pattern ([`Pattern`]).
    pub pattern: String,
    /// The key of the object served for a missing key the pattern matches.
    pub fallback: ObjectKey,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlaceholderError {
    #[error("invalid pattern: {0}")]
    Pattern(PathError),
    #[error("invalid pattern `{pattern}`: {reason}")]
    Glob { pattern: String, reason: String },
    #[error("invalid fallback: {0}")]
    Fallback(PathError),
    #[error("fallback `{0}` is not an object of this workspace; upload it first")]
    FallbackMissing(String),
    #[error("this workspace has {MAX_PLACEHOLDERS} placeholders, the limit; remove one first")]
    Limit,
}

/// A validated pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    normalized: String,
}

/// Compiles a normalized pattern (`*` never crosses a `/`).
fn glob(pattern: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(false)
        .build()
}

impl Pattern {
    /// Normalizes `raw` like an object key and checks its wildcard syntax.
    pub fn parse(raw: &str) -> Result<Self, PlaceholderError> {
        let normalized = normalize_key(raw).map_err(PlaceholderError::Pattern)?;
        glob(&normalized).map_err(|e| PlaceholderError::Glob {
            pattern: normalized.to_string(),
            reason: e.kind().to_string(),
        })?;
        Ok(Self {
            normalized: normalized.into_string(),
        })
    }

    pub fn as_str(&self) -> &str {
        &self.normalized
    }

    /// The keys this pattern can match, as a scope check sees them: the key itself when it has
    /// no wildcard, else the folder of its segments before the first wildcard (`""`, the root,
    /// when the first segment has one).
    fn reach(&self) -> (&str, bool) {
        if !self.normalized.contains(WILDCARDS) {
            return (&self.normalized, true);
        }
        let mut end = 0;
        for seg in self.normalized.split('/') {
            if seg.contains(WILDCARDS) {
                break;
            }
            end += seg.len() + 1;
        }
        (&self.normalized[..end.saturating_sub(1)], false)
    }

    /// The part of what this pattern can match that lies outside `scope` (see
    /// [`PathScope::outside_part`]), or `None` when a key of that scope may set it.
    pub fn outside<'a>(&'a self, scope: &'a PathScope) -> Option<&'a str> {
        match self.reach() {
            (key, true) => (!scope.allows(key)).then_some(key),
            (folder, false) => scope.outside_part(folder),
        }
    }
}

/// A request to set a placeholder, validated.
#[derive(Debug, Clone)]
pub struct NewPlaceholder {
    pub pattern: Pattern,
    pub fallback: ObjectKey,
}

impl NewPlaceholder {
    pub fn parse(pattern: &str, fallback: &str) -> Result<Self, PlaceholderError> {
        Ok(Self {
            pattern: Pattern::parse(pattern)?,
            fallback: normalize_key(fallback).map_err(PlaceholderError::Fallback)?,
        })
    }
}

/// What [`set`] refused, or the store's failure.
#[derive(Debug, thiserror::Error)]
pub enum SetError {
    #[error(transparent)]
    Refused(#[from] PlaceholderError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Sets a placeholder (API and `stowctl` alike): the fallback must be an object of the
/// organization, and a new pattern must fit under [`MAX_PLACEHOLDERS`]. Returns the stored
/// placeholder and whether its pattern is new.
pub async fn set(
    records: &dyn ObjectRecordStore,
    store: &dyn PlaceholderStore,
    org_id: &OrgId,
    new: &NewPlaceholder,
    now: DateTime<Utc>,
    audit: &Audit,
) -> Result<(Placeholder, bool), SetError> {
    if records.get(org_id, &new.fallback).await?.is_none() {
        return Err(PlaceholderError::FallbackMissing(new.fallback.to_string()).into());
    }
    let placeholder = Placeholder {
        pattern: new.pattern.as_str().to_owned(),
        fallback: new.fallback.clone(),
        created_at: now,
        updated_at: now,
    };
    match store
        .put(org_id, &placeholder, MAX_PLACEHOLDERS, audit)
        .await?
    {
        Put::LimitReached => Err(PlaceholderError::Limit.into()),
        Put::Created => Ok((placeholder, true)),
        Put::Replaced { created_at } => Ok((
            Placeholder {
                created_at,
                ..placeholder
            },
            false,
        )),
    }
}

/// The audit entry of a placeholder set.
pub fn set_entry(audit: &Audit, org_id: &OrgId, p: &Placeholder) -> AuditEntry {
    audit.entry(
        org_id,
        Action::PlaceholderSet,
        p.pattern.as_str(),
        serde_json::json!({ "fallback": p.fallback.as_str() }),
    )
}

/// The audit entry of a placeholder removed.
pub fn removed_entry(audit: &Audit, org_id: &OrgId, pattern: &str) -> AuditEntry {
    audit.entry(
        org_id,
        Action::PlaceholderRemove,
        pattern,
        serde_json::json!({}),
    )
}

pub use crate::put::Put;

#[async_trait]
pub trait PlaceholderStore: Send + Sync {
    /// Creates the placeholder of `p.pattern`, or gives the existing one `p`'s fallback and
    /// `updated_at` (keeping its `created_at`). A new pattern is refused once the organization
    /// has `max`, also under concurrent puts. A stored placeholder writes its `placeholder.set`
    /// audit entry in the same step.
    async fn put(
        &self,
        org_id: &OrgId,
        p: &Placeholder,
        max: usize,
        audit: &Audit,
    ) -> Result<Put, StoreError>;
    /// The organization's placeholders in pattern byte order.
    async fn list(&self, org_id: &OrgId) -> Result<Vec<Placeholder>, StoreError>;
    /// Removes the placeholder of `pattern`, with its `placeholder.remove` audit entry; whether
    /// there was one (no entry when not).
    async fn delete(
        &self,
        org_id: &OrgId,
        pattern: &str,
        audit: &Audit,
    ) -> Result<bool, StoreError>;
}

/// An organization's placeholders, compiled for delivery.
#[derive(Debug, Clone, Default)]
pub struct PlaceholderSet {
    set: GlobSet,
    /// `(pattern, fallback)` in precedence order, the order of `set`'s globs.
    entries: Vec<(String, ObjectKey)>,
}

impl PlaceholderSet {
    /// Compiles `placeholders` (a stored pattern that no longer compiles is left out).
    pub fn new(placeholders: &[Placeholder]) -> Self {
        let mut entries: Vec<(String, ObjectKey)> = placeholders
            .iter()
            .map(|p| (p.pattern.clone(), p.fallback.clone()))
            .collect();
        entries.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        let mut builder = GlobSetBuilder::new();
        entries.retain(|(pattern, _)| match glob(pattern) {
            Ok(g) => {
                builder.add(g);
                true
            }
            Err(_) => false,
        });
        let set = builder.build().unwrap_or_else(|_| GlobSet::empty());
        Self { set, entries }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The fallback key for a missing `key` and the pattern that chose it.
    pub fn fallback_for(&self, key: &str) -> Option<(&str, &ObjectKey)> {
        if self.entries.is_empty() {
            return None;
        }
        let first = self.set.matches(key).into_iter().min()?;
        let (pattern, fallback) = &self.entries[first];
        Some((pattern, fallback))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> DateTime<Utc> {
        DateTime::from_timestamp(1_795_000_000, 0).unwrap()
    }

    fn set_of(pairs: &[(&str, &str)]) -> PlaceholderSet {
        let list: Vec<Placeholder> = pairs
            .iter()
            .map(|(p, f)| Placeholder {
                pattern: Pattern::parse(p).unwrap().as_str().to_owned(),
                fallback: ObjectKey::new(*f),
                created_at: at(),
                updated_at: at(),
            })
            .collect();
        PlaceholderSet::new(&list)
    }

    #[test]
    fn patterns_are_normalized_like_keys() {
        assert_eq!(
            Pattern::parse("inventory//items/*").unwrap().as_str(),
            "inventory/items/*"
        );
        for bad in [
            "",
            "/items/*",
            "items/../*",
            "items/.hidden/*",
            "a\\*",
            "a/%2e/*",
        ] {
            assert!(
                matches!(Pattern::parse(bad), Err(PlaceholderError::Pattern(_))),
                "{bad}"
            );
        }
        let long = format!("{}*", "a".repeat(1023));
        assert!(Pattern::parse(&long).is_ok());
        assert!(Pattern::parse(&format!("a{long}")).is_err());
    }

    #[test]
    fn wildcard_syntax_errors_name_the_pattern() {
        for bad in ["items/[a", "items/{a,b", "items/a]*{"] {
            let e = Pattern::parse(bad).unwrap_err();
            assert!(
                matches!(&e, PlaceholderError::Glob { pattern, .. } if pattern == bad),
                "{bad}: {e:?}"
            );
            assert!(e
                .to_string()
                .starts_with(&format!("invalid pattern `{bad}`: ")));
        }
    }

    #[test]
    fn a_star_stays_within_its_segment_and_a_double_star_crosses() {
        let s = set_of(&[
            ("inventory/items/*", "inv.png"),
            ("maps/**/tile.png", "tile.png"),
        ]);
        assert_eq!(
            s.fallback_for("inventory/items/bread.png")
                .map(|(p, f)| (p, f.as_str())),
            Some(("inventory/items/*", "inv.png"))
        );
        assert_eq!(s.fallback_for("inventory/items/sub/bread.png"), None);
        assert_eq!(s.fallback_for("inventory/items"), None);
        assert_eq!(s.fallback_for("inventory/itemsx/a.png"), None);
        assert_eq!(
            s.fallback_for("maps/tile.png").map(|m| m.1.as_str()),
            Some("tile.png")
        );
        assert_eq!(
            s.fallback_for("maps/a/b/tile.png").map(|m| m.1.as_str()),
            Some("tile.png")
        );
        assert_eq!(s.fallback_for("maps/a/b/tile.jpg"), None);
        assert_eq!(s.fallback_for("ünïcode/items/x"), None);
    }

    #[test]
    fn classes_alternatives_and_unicode() {
        let s = set_of(&[
            ("mugshots/{male,female}/*.{png,webp}", "m.png"),
            ("clips/voice-?.ogg", "v.ogg"),
            ("ünï/[ab]*", "u.png"),
        ]);
        assert!(s.fallback_for("mugshots/male/1.png").is_some());
        assert!(s.fallback_for("mugshots/female/1.webp").is_some());
        assert!(s.fallback_for("mugshots/other/1.png").is_none());
        assert!(s.fallback_for("mugshots/male/1.jpg").is_none());
        assert!(s.fallback_for("clips/voice-1.ogg").is_some());
        assert!(s.fallback_for("clips/voice-12.ogg").is_none());
        assert!(s.fallback_for("ünï/apple").is_some());
        assert!(s.fallback_for("ünï/cherry").is_none());
    }

    #[test]
    fn the_longest_pattern_wins_then_byte_order() {
        let s = set_of(&[
            ("inventory/**", "any.png"),
            ("inventory/items/*", "item.png"),
            ("inventory/items/*.png", "png.png"),
            ("inventory/items/?.png", "one.png"),
            ("inventory/items/*.PNG", "upper.png"),
        ]);
        assert_eq!(
            s.fallback_for("inventory/items/ab.png")
                .map(|m| m.1.as_str()),
            Some("png.png")
        );
        // `*.png` and `?.png` are as long: byte order (`*` < `?`)
        assert_eq!(
            s.fallback_for("inventory/items/a.png")
                .map(|m| m.1.as_str()),
            Some("png.png")
        );
        assert_eq!(
            s.fallback_for("inventory/items/a.gif")
                .map(|m| m.1.as_str()),
            Some("item.png")
        );
        assert_eq!(
            s.fallback_for("inventory/x/y").map(|m| m.1.as_str()),
            Some("any.png")
        );
        // matching is case-sensitive, like keys
        assert_eq!(
            s.fallback_for("inventory/items/a.PNG")
                .map(|m| m.1.as_str()),
            Some("upper.png")
        );
    }

    #[test]
    fn a_literal_pattern_matches_only_itself() {
        let s = set_of(&[("logo.png", "fallback.png")]);
        assert!(s.fallback_for("logo.png").is_some());
        assert!(s.fallback_for("logo.pngx").is_none());
        assert!(s.fallback_for("a/logo.png").is_none());
        assert!(PlaceholderSet::default().fallback_for("logo.png").is_none());
    }

    #[test]
    fn what_a_pattern_reaches_is_checked_against_the_scope() {
        let scope = PathScope::new(vec!["inventory".into()], vec!["inventory/secret".into()]);
        let outside = |p: &str| {
            Pattern::parse(p)
                .unwrap()
                .outside(&scope)
                .map(str::to_owned)
        };
        assert_eq!(outside("inventory/items/*"), None);
        assert_eq!(outside("inventory/items/a.png"), None);
        // the folder a wildcard segment can reach holds a denied prefix
        assert_eq!(
            outside("inventory/*/a.png"),
            Some("inventory/secret".into())
        );
        assert_eq!(outside("inventory/**"), Some("inventory/secret".into()));
        assert_eq!(
            outside("inventory/secret/*"),
            Some("inventory/secret".into())
        );
        assert_eq!(outside("*/items"), Some(String::new()));
        assert_eq!(outside("maps/*"), Some("maps".into()));
        assert_eq!(outside("inventorya/*"), Some("inventorya".into()));
        assert_eq!(outside("maps/a.png"), Some("maps/a.png".into()));
        let open = PathScope::unrestricted();
        assert_eq!(Pattern::parse("**").unwrap().outside(&open), None);
    }

    #[test]
    fn fallbacks_are_keys() {
        assert!(NewPlaceholder::parse("items/*", "items/missing.png").is_ok());
        for bad in ["", "/x.png", "a/../b.png", ".hidden.png"] {
            assert!(
                matches!(
                    NewPlaceholder::parse("items/*", bad),
                    Err(PlaceholderError::Fallback(_))
                ),
                "{bad}"
            );
        }
    }
}
