//! Lifecycle rules: "delete objects under this folder once they are older than N days" (a
//! FiveMesh folder lifetime: screenshots kept 30 days), enforced by the services' maintenance in
//! bounded batches.
//!
//! A rule names a folder (the root, `""`, is every object) and a number of days. An object's age
//! is counted from its last modification (a replacement is a new object). Where rules nest, the
//! deepest folder's rule decides for the objects under it (`shots` 30 days, `shots/evidence` 365:
//! evidence stays a year). An object marked *keep* is never expired, whatever the rules; hidden
//! (dot-named) keys never are either — they are the service's own.

use async_trait::async_trait;
use auth_core::audit::{Action, Audit, AuditEntry};
use auth_core::{OrgId, StoreError};
use chrono::{DateTime, Duration, Utc};

use crate::path::{is_hidden, normalize_folder, ObjectKey, PathError};
use crate::put::Put;
use crate::record::ObjectRecord;

/// Rules an organization may have.
pub const MAX_RULES: usize = 100;
/// The longest lifetime a rule may give (ten years); a longer one is no lifetime at all.
pub const MAX_DAYS: i64 = 3650;
/// Objects one maintenance step expires in one statement: the size of a folder delete's batch,
/// so expiry never holds a row lock longer than a `delete-folder` request does.
pub const BATCH: usize = 1000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LifecycleRule {
    /// A normalized folder; `""` is the root.
    pub folder: String,
    /// Objects last modified more than this many days ago are deleted.
    pub days: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LifecycleError {
    #[error("invalid path: {0}")]
    Folder(PathError),
    #[error("days must be between 1 and {MAX_DAYS}; got {0}")]
    Days(i64),
    #[error("this workspace has {MAX_RULES} lifecycle rules, the limit; remove one first")]
    Limit,
}

/// A request to set a rule, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRule {
    pub folder: String,
    pub days: i64,
}

impl NewRule {
    pub fn parse(path: &str, days: i64) -> Result<Self, LifecycleError> {
        let folder = normalize_folder(path).map_err(LifecycleError::Folder)?;
        if !(1..=MAX_DAYS).contains(&days) {
            return Err(LifecycleError::Days(days));
        }
        Ok(Self { folder, days })
    }
}

/// Whether `key` lies under `folder` (whole segments; every key lies under the root).
pub fn under(folder: &str, key: &str) -> bool {
    folder.is_empty()
        || key
            .strip_prefix(folder)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// What one rule expires at a moment: objects under `folder` last modified before `before`,
/// except those under a deeper rule's folder (`except`), kept ones, and hidden ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expiry {
    pub folder: String,
    pub days: i64,
    pub before: DateTime<Utc>,
    /// Folders of deeper rules inside `folder`, outermost only.
    pub except: Vec<String>,
}

impl Expiry {
    /// Whether this rule expires `record` (the memory adapter's selection; Postgres says the
    /// same in SQL).
    pub fn expires(&self, record: &ObjectRecord) -> bool {
        let key = record.key.as_str();
        !record.keep
            && record.last_modified < self.before
            && under(&self.folder, key)
            && !is_hidden(key)
            && !self.except.iter().any(|f| under(f, key))
    }
}

/// Each rule's expiry at `now`, deepest folders first (so the order of the maintenance's
/// batches is the same everywhere; the `except` lists make the rules' selections disjoint).
pub fn plan(rules: &[LifecycleRule], now: DateTime<Utc>) -> Vec<Expiry> {
    let mut out: Vec<Expiry> = rules
        .iter()
        .map(|r| {
            let inner: Vec<&str> = rules
                .iter()
                .map(|o| o.folder.as_str())
                .filter(|f| *f != r.folder && !f.is_empty() && under(&r.folder, f))
                .collect();
            // a deeper folder already inside another deeper one adds nothing
            let except = inner
                .iter()
                .filter(|f| !inner.iter().any(|o| o != *f && under(o, f)))
                .map(|f| (*f).to_owned())
                .collect();
            Expiry {
                folder: r.folder.clone(),
                days: r.days,
                before: now - Duration::days(r.days),
                except,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        let depth = |f: &str| {
            if f.is_empty() {
                0
            } else {
                f.split('/').count()
            }
        };
        depth(&b.folder)
            .cmp(&depth(&a.folder))
            .then_with(|| a.folder.cmp(&b.folder))
    });
    out
}

/// The rule that decides for `key` (the deepest folder it lies under), if any.
pub fn rule_for<'a>(rules: &'a [LifecycleRule], key: &str) -> Option<&'a LifecycleRule> {
    rules
        .iter()
        .filter(|r| under(&r.folder, key))
        .max_by_key(|r| r.folder.len())
}

/// What [`set`] refused, or the store's failure.
#[derive(Debug, thiserror::Error)]
pub enum SetError {
    #[error(transparent)]
    Refused(#[from] LifecycleError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Sets a rule (creates it, or gives an existing folder's rule the new days), within
/// [`MAX_RULES`]. Returns the stored rule and whether it is new.
pub async fn set(
    store: &dyn LifecycleStore,
    org_id: &OrgId,
    new: &NewRule,
    now: DateTime<Utc>,
    audit: &Audit,
) -> Result<(LifecycleRule, bool), SetError> {
    let rule = LifecycleRule {
        folder: new.folder.clone(),
        days: new.days,
        created_at: now,
        updated_at: now,
    };
    match store.put(org_id, &rule, MAX_RULES, audit).await? {
        Put::LimitReached => Err(LifecycleError::Limit.into()),
        Put::Created => Ok((rule, true)),
        Put::Replaced { created_at } => Ok((LifecycleRule { created_at, ..rule }, false)),
    }
}

/// The audit entry of a rule set; the target is its folder (`""` for the root).
pub fn set_entry(audit: &Audit, org_id: &OrgId, r: &LifecycleRule) -> AuditEntry {
    audit.entry(
        org_id,
        Action::LifecycleSet,
        r.folder.as_str(),
        serde_json::json!({ "days": r.days }),
    )
}

/// The audit entry of a rule removed.
pub fn removed_entry(audit: &Audit, org_id: &OrgId, folder: &str) -> AuditEntry {
    audit.entry(
        org_id,
        Action::LifecycleRemove,
        folder,
        serde_json::json!({}),
    )
}

/// The audit entry of an object a rule expired: its key, with the rule and what was deleted.
pub fn expired_entry(audit: &Audit, org_id: &OrgId, e: &Expiry, r: &ObjectRecord) -> AuditEntry {
    audit.entry(
        org_id,
        Action::ObjectExpire,
        r.key.as_str(),
        serde_json::json!({
            "rule": e.folder, "days": e.days, "size": r.size,
            "contentType": r.content_type, "etag": r.etag,
            "lastModified": r.last_modified.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        }),
    )
}

/// The audit entry of an object's keep mark changed.
pub fn keep_entry(audit: &Audit, org_id: &OrgId, key: &ObjectKey, keep: bool) -> AuditEntry {
    audit.entry(
        org_id,
        Action::ObjectKeep,
        key.as_str(),
        serde_json::json!({ "keep": keep }),
    )
}

#[async_trait]
pub trait LifecycleStore: Send + Sync {
    /// Creates the rule of `r.folder`, or gives the existing one `r`'s days and `updated_at`
    /// (keeping its `created_at`). A new folder is refused once the organization has `max`
    /// rules, also under concurrent puts. A stored rule writes its `lifecycle.set` audit entry
    /// in the same step.
    async fn put(
        &self,
        org_id: &OrgId,
        r: &LifecycleRule,
        max: usize,
        audit: &Audit,
    ) -> Result<Put, StoreError>;
    /// The organization's rules in folder byte order.
    async fn list(&self, org_id: &OrgId) -> Result<Vec<LifecycleRule>, StoreError>;
    /// Removes the rule of `folder`, with its `lifecycle.remove` entry; whether there was one.
    async fn delete(&self, org_id: &OrgId, folder: &str, audit: &Audit)
        -> Result<bool, StoreError>;
    /// The organizations that have at least one rule (what maintenance visits).
    async fn organizations(&self) -> Result<Vec<OrgId>, StoreError>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::Metadata;

    fn rule(folder: &str, days: i64) -> LifecycleRule {
        LifecycleRule {
            folder: folder.into(),
            days,
            created_at: Utc::now(),
            updated_at: Utc::now(),
        }
    }

    fn object(key: &str, age_days: i64, now: DateTime<Utc>) -> ObjectRecord {
        ObjectRecord {
            key: ObjectKey::new(key),
            size: 1,
            content_type: None,
            etag: "e".into(),
            metadata: Metadata::new(),
            storage_path: "p".into(),
            last_modified: now - Duration::days(age_days),
            created_at: now,
            keep: false,
        }
    }

    #[test]
    fn rules_are_folders_and_days_within_limits() {
        assert_eq!(
            NewRule::parse("shots/", 30),
            Ok(NewRule {
                folder: "shots".into(),
                days: 30
            })
        );
        assert_eq!(NewRule::parse("", 1).map(|r| r.folder), Ok(String::new()));
        assert_eq!(
            NewRule::parse("fotos//ü/", MAX_DAYS).map(|r| r.folder),
            Ok("fotos/ü".into())
        );
        assert!(matches!(
            NewRule::parse("a/../b", 3),
            Err(LifecycleError::Folder(_))
        ));
        assert_eq!(NewRule::parse("x", 0), Err(LifecycleError::Days(0)));
        assert_eq!(NewRule::parse("x", -5), Err(LifecycleError::Days(-5)));
        assert_eq!(
            NewRule::parse("x", MAX_DAYS + 1),
            Err(LifecycleError::Days(MAX_DAYS + 1))
        );
        assert!(matches!(
            NewRule::parse("/abs", 3),
            Err(LifecycleError::Folder(_))
        ));
        assert!(
            matches!(
                NewRule::parse("a/.cache", 3),
                Err(LifecycleError::Folder(_))
            ),
            "hidden folders never expire, so no rule names one"
        );
        assert!(NewRule::parse("a\0b", 3).is_err(), "control characters");
    }

    #[test]
    fn under_means_whole_segments() {
        assert!(under("", "a.png"));
        assert!(under("shots", "shots/a.png"));
        assert!(under("shots", "shots/2026/a.png"));
        assert!(
            !under("shots", "shots"),
            "the folder's own key is not inside it"
        );
        assert!(!under("shots", "shots2/a.png"));
        assert!(!under("shots", "shots.png"));
        assert!(!under("shots/2026", "shots/a.png"));
        assert!(under("fotos/ñ", "fotos/ñ/a"));
    }

    #[test]
    fn the_deepest_rule_decides_and_selections_are_disjoint() {
        let now = Utc::now();
        let rules = [
            rule("", 365),
            rule("shots", 30),
            rule("shots/evidence", 3000),
            rule("shots/evidence/old", 1),
            rule("shotsx", 2),
        ];
        let plan = plan(&rules, now);
        let folders: Vec<&str> = plan.iter().map(|e| e.folder.as_str()).collect();
        assert_eq!(
            folders,
            [
                "shots/evidence/old",
                "shots/evidence",
                "shots",
                "shotsx",
                ""
            ]
        );
        let root = plan.iter().find(|e| e.folder.is_empty()).unwrap();
        assert_eq!(
            root.except,
            ["shots", "shotsx"],
            "outermost deeper folders only"
        );
        let shots = plan.iter().find(|e| e.folder == "shots").unwrap();
        assert_eq!(shots.except, ["shots/evidence"]);
        assert_eq!(shots.before, now - Duration::days(30));
        // every object is expired by at most one rule, the one rule_for names
        for (key, age) in [
            ("a.png", 400),
            ("shots/a.png", 31),
            ("shots/evidence/a.png", 400),
            ("shots/evidence/old/a.png", 2),
            ("shotsx/a", 3),
            ("shots/.hidden/a", 4000),
        ] {
            let o = object(key, age, now);
            let by: Vec<&str> = plan
                .iter()
                .filter(|e| e.expires(&o))
                .map(|e| e.folder.as_str())
                .collect();
            let decides = rule_for(&rules, key).unwrap();
            let expected: Vec<&str> = if key.contains("/.") || age <= decides.days {
                vec![]
            } else {
                vec![decides.folder.as_str()]
            };
            assert_eq!(by, expected, "{key}");
        }
    }

    #[test]
    fn the_cutoff_is_strict_and_kept_objects_stay() {
        let now = Utc::now();
        let e = &plan(&[rule("shots", 30)], now)[0];
        let mut o = object("shots/a.png", 30, now);
        assert!(!e.expires(&o), "exactly N days old is not older than N");
        o.last_modified -= Duration::milliseconds(1);
        assert!(e.expires(&o), "N days and a millisecond is");
        o.keep = true;
        assert!(!e.expires(&o), "kept");
        assert!(
            !e.expires(&object("shots", 40, now)),
            "the folder's own key"
        );
    }
}
