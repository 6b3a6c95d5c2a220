//! In-memory implementations of the CDN storage traits (unit tests, tooling).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use auth_core::audit::Audit;
use auth_core::memory::MemoryAudit;
use auth_core::{prefix_matches, OrgId, StoreError};
use chrono::{DateTime, Duration, Utc};

use crate::folder::{self, FolderEntry, FolderQuery, Slot};
use crate::folder_move::{self, FolderMove, MoveBatch};
use crate::idempotency::{Claim, IdemScope, IdempotencyStore, LEASE_SECS};
use crate::lifecycle::{self, Expiry, LifecycleRule, LifecycleStore};
use crate::path::{is_hidden, ObjectKey};
use crate::placeholder::{removed_entry, set_entry, Placeholder, PlaceholderStore, Put};
use crate::search::SearchQuery;
use crate::store::{
    deleted_entry, moved_entry, top_folder, FolderUsage, ListQuery, ObjectRecord,
    ObjectRecordStore, ObjectTotals, Renamed,
};
use crate::upload_url::{Reservation, UploadUrlRecord, UploadUrlStore};

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[derive(Default)]
pub struct MemoryObjectRecords {
    rows: Mutex<BTreeMap<(OrgId, ObjectKey), ObjectRecord>>,
    audit: Arc<MemoryAudit>,
}

impl MemoryObjectRecords {
    /// Rows whose changes' audit entries go to `audit`.
    pub fn with_audit(audit: Arc<MemoryAudit>) -> Self {
        Self {
            rows: Mutex::default(),
            audit,
        }
    }
}

#[async_trait]
impl ObjectRecordStore for MemoryObjectRecords {
    async fn upsert(
        &self,
        org_id: &OrgId,
        record: &ObjectRecord,
    ) -> Result<Option<String>, StoreError> {
        let mut rows = lock(&self.rows);
        let mut record = record.clone();
        let slot = (org_id.clone(), record.key.clone());
        if let Some(old) = rows.get(&slot) {
            record.created_at = old.created_at;
            record.keep = old.keep;
        }
        let old = rows.insert(slot, record);
        Ok(old.map(|o| o.storage_path))
    }

    async fn create(&self, org_id: &OrgId, record: &ObjectRecord) -> Result<bool, StoreError> {
        let mut rows = lock(&self.rows);
        let slot = (org_id.clone(), record.key.clone());
        if rows.contains_key(&slot) {
            return Ok(false);
        }
        rows.insert(slot, record.clone());
        Ok(true)
    }

    async fn get(
        &self,
        org_id: &OrgId,
        key: &ObjectKey,
    ) -> Result<Option<ObjectRecord>, StoreError> {
        Ok(lock(&self.rows)
            .get(&(org_id.clone(), key.clone()))
            .cloned())
    }

    async fn delete(
        &self,
        org_id: &OrgId,
        key: &ObjectKey,
        audit: &Audit,
    ) -> Result<Option<ObjectRecord>, StoreError> {
        let mut rows = lock(&self.rows);
        let removed = rows.remove(&(org_id.clone(), key.clone()));
        if let Some(r) = &removed {
            self.audit.append([deleted_entry(audit, org_id, r)]);
        }
        Ok(removed)
    }

    async fn delete_many(
        &self,
        org_id: &OrgId,
        keys: &[ObjectKey],
        audit: &Audit,
    ) -> Result<Vec<ObjectRecord>, StoreError> {
        let mut rows = lock(&self.rows);
        let removed: Vec<ObjectRecord> = keys
            .iter()
            .filter_map(|k| rows.remove(&(org_id.clone(), k.clone())))
            .collect();
        self.audit
            .append(removed.iter().map(|r| deleted_entry(audit, org_id, r)));
        Ok(removed)
    }

    async fn list(&self, org_id: &OrgId, q: &ListQuery) -> Result<Vec<ObjectRecord>, StoreError> {
        let rows = lock(&self.rows);
        Ok(rows
            .range(
                (
                    org_id.clone(),
                    ObjectKey::new(q.after.clone().unwrap_or_default()),
                )..,
            )
            .take_while(|((org, _), _)| org == org_id)
            .map(|(_, r)| r)
            .filter(|r| q.after.as_deref().is_none_or(|a| r.key.as_str() > a))
            .filter(|r| prefix_matches(&q.folder, &r.key))
            .filter(|r| !is_hidden(&r.key))
            .filter(|r| !q.denied.iter().any(|d| prefix_matches(d, &r.key)))
            .take(q.limit)
            .cloned()
            .collect())
    }

    async fn search(
        &self,
        org_id: &OrgId,
        q: &SearchQuery,
    ) -> Result<Vec<ObjectRecord>, StoreError> {
        let rows = lock(&self.rows);
        let mut found: Vec<&ObjectRecord> = rows
            .iter()
            .filter(|((org, _), r)| org == org_id && q.matches(r) && q.is_after(r))
            .map(|(_, r)| r)
            .collect();
        found.sort_by(|a, b| q.compare(a, b));
        Ok(found.into_iter().take(q.limit).cloned().collect())
    }

    async fn list_folder(
        &self,
        org_id: &OrgId,
        q: &FolderQuery,
    ) -> Result<Vec<FolderEntry>, StoreError> {
        let rows = lock(&self.rows);
        let resume = q.after.as_deref().map(folder::resume_bound);
        let mut entries: Vec<FolderEntry> = Vec::new();
        for ((org, key), record) in rows.range((org_id.clone(), ObjectKey::default())..) {
            if org != org_id || entries.len() == q.limit {
                break;
            }
            match &resume {
                Some((bound, true)) if key.as_str() < bound.as_str() => continue,
                Some((bound, false)) if key.as_str() <= bound.as_str() => continue,
                _ => {}
            }
            let entry = match folder::slot(&q.folder, key) {
                None => continue,
                Some(Slot::Object) => FolderEntry::Object(record.clone()),
                Some(Slot::Folder(path)) => FolderEntry::Folder(path.to_owned()),
            };
            let path = match &entry {
                FolderEntry::Object(r) => r.key.as_str(),
                FolderEntry::Folder(p) => p.as_str(),
            };
            if folder::hidden_entry(&q.folder, path)
                || q.denied.iter().any(|d| prefix_matches(d, path))
                || entries.last() == Some(&entry)
            {
                continue;
            }
            entries.push(entry);
        }
        Ok(entries)
    }

    async fn rename(
        &self,
        org_id: &OrgId,
        from: &ObjectKey,
        to: &ObjectKey,
        replace: bool,
        audit: &Audit,
    ) -> Result<Renamed, StoreError> {
        let mut rows = lock(&self.rows);
        let slot = |k: &ObjectKey| (org_id.clone(), k.clone());
        if !rows.contains_key(&slot(from)) {
            return Ok(Renamed::SourceMissing);
        }
        if from == to {
            return Ok(Renamed::Moved { replaced: None });
        }
        if rows.contains_key(&slot(to)) && !replace {
            return Ok(Renamed::DestinationExists);
        }
        let replaced = rows.remove(&slot(to)).map(|r| r.storage_path);
        if let Some(mut record) = rows.remove(&slot(from)) {
            record.key = to.clone();
            rows.insert(slot(to), record);
        }
        self.audit
            .append([moved_entry(audit, org_id, from, to, replaced.is_some())]);
        Ok(Renamed::Moved { replaced })
    }

    async fn folder_move_batch(
        &self,
        org_id: &OrgId,
        m: &FolderMove,
    ) -> Result<MoveBatch, StoreError> {
        let (from, to, limit) = (m.from.as_str(), m.to.as_str(), m.limit);
        let rows = lock(&self.rows);
        let mut batch = MoveBatch::default();
        let under = rows
            .range((org_id.clone(), ObjectKey::new(format!("{from}/")))..)
            .take_while(|((org, key), _)| org == org_id && prefix_matches(from, key))
            .map(|((_, key), _)| key)
            .filter(|key| !is_hidden(key));
        for key in under {
            let destination = folder_move::destination(from, to, key);
            let taken = rows.contains_key(&(org_id.clone(), destination));
            if taken && !m.replace {
                if batch.blocked.len() < limit {
                    batch.blocked.push(key.clone());
                }
            } else if batch.movable.len() < limit {
                batch.movable.push(key.clone());
            } else {
                batch.more_movable = true;
            }
        }
        Ok(batch)
    }

    async fn expire(
        &self,
        org_id: &OrgId,
        expiry: &Expiry,
        limit: usize,
        audit: &Audit,
    ) -> Result<Vec<ObjectRecord>, StoreError> {
        let mut rows = lock(&self.rows);
        // the map is in key order
        let chosen: Vec<ObjectKey> = rows
            .iter()
            .filter(|((org, _), r)| org == org_id && expiry.expires(r))
            .map(|((_, k), _)| k.clone())
            .take(limit)
            .collect();
        let removed: Vec<ObjectRecord> = chosen
            .into_iter()
            .filter_map(|k| rows.remove(&(org_id.clone(), k)))
            .collect();
        self.audit.append(
            removed
                .iter()
                .map(|r| lifecycle::expired_entry(audit, org_id, expiry, r)),
        );
        Ok(removed)
    }

    async fn set_keep(
        &self,
        org_id: &OrgId,
        keys: &[ObjectKey],
        keep: bool,
        audit: &Audit,
    ) -> Result<Vec<ObjectKey>, StoreError> {
        let mut rows = lock(&self.rows);
        let mut found = Vec::new();
        for k in keys {
            if let Some(r) = rows.get_mut(&(org_id.clone(), k.clone())) {
                if r.keep != keep {
                    r.keep = keep;
                    self.audit
                        .append([lifecycle::keep_entry(audit, org_id, k, keep)]);
                }
                found.push(k.clone());
            }
        }
        Ok(found)
    }

    async fn is_referenced(&self, storage_path: &str) -> Result<bool, StoreError> {
        Ok(lock(&self.rows)
            .values()
            .any(|r| r.storage_path == storage_path))
    }

    async fn folder_usage(&self, org_id: &OrgId) -> Result<Vec<FolderUsage>, StoreError> {
        let rows = lock(&self.rows);
        let mut by: BTreeMap<&str, ObjectTotals> = BTreeMap::new();
        for ((_, k), r) in rows.iter().filter(|((org, _), _)| org == org_id) {
            let t = by.entry(top_folder(k.as_str())).or_default();
            t.objects += 1;
            t.bytes += r.size;
        }
        Ok(by
            .into_iter()
            .map(|(folder, totals)| FolderUsage {
                folder: folder.to_owned(),
                totals,
            })
            .collect())
    }

    async fn totals(&self, org_id: &OrgId) -> Result<ObjectTotals, StoreError> {
        let rows = lock(&self.rows);
        let mine = rows.iter().filter(|((org, _), _)| org == org_id);
        Ok(
            mine.fold(ObjectTotals::default(), |t, (_, r)| ObjectTotals {
                objects: t.objects + 1,
                bytes: t.bytes + r.size,
            }),
        )
    }
}

struct IdemRow {
    fingerprint: Vec<u8>,
    status: u16,
    response: Vec<u8>,
    /// The in-flight owner and its lease; `None` once done.
    lease: Option<(String, DateTime<Utc>)>,
    created_at: DateTime<Utc>,
}

#[derive(Default)]
pub struct MemoryIdempotency {
    rows: Mutex<HashMap<IdemScope, IdemRow>>,
}

fn lease_until(now: DateTime<Utc>) -> DateTime<Utc> {
    now + Duration::seconds(LEASE_SECS)
}

#[async_trait]
impl IdempotencyStore for MemoryIdempotency {
    async fn claim(
        &self,
        scope: &IdemScope,
        owner: &str,
        now: DateTime<Utc>,
    ) -> Result<Claim, StoreError> {
        let mut rows = lock(&self.rows);
        if let Some(row) = rows.get(scope) {
            match &row.lease {
                None => {
                    return Ok(Claim::Done {
                        fingerprint: row.fingerprint.clone(),
                        status: row.status,
                        response: row.response.clone(),
                    })
                }
                Some((_, until)) if *until >= now => return Ok(Claim::InFlight),
                Some(_) => {} // the lease ran out: take it over
            }
        }
        rows.insert(
            scope.clone(),
            IdemRow {
                fingerprint: Vec::new(),
                status: 0,
                response: Vec::new(),
                lease: Some((owner.to_owned(), lease_until(now))),
                created_at: now,
            },
        );
        Ok(Claim::Claimed)
    }

    async fn renew(
        &self,
        scope: &IdemScope,
        owner: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let mut rows = lock(&self.rows);
        match rows.get_mut(scope).and_then(|r| r.lease.as_mut()) {
            Some((o, until)) if o == owner => {
                *until = lease_until(now);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn complete(
        &self,
        scope: &IdemScope,
        owner: &str,
        fingerprint: &[u8],
        status: u16,
        response: &[u8],
    ) -> Result<(), StoreError> {
        let mut rows = lock(&self.rows);
        if let Some(row) = rows.get_mut(scope) {
            if row.lease.as_ref().is_some_and(|(o, _)| o == owner) {
                row.fingerprint = fingerprint.to_vec();
                row.status = status;
                row.response = response.to_vec();
                row.lease = None;
            }
        }
        Ok(())
    }

    async fn release(&self, scope: &IdemScope, owner: &str) -> Result<(), StoreError> {
        let mut rows = lock(&self.rows);
        if rows
            .get(scope)
            .is_some_and(|r| r.lease.as_ref().is_some_and(|(o, _)| o == owner))
        {
            rows.remove(scope);
        }
        Ok(())
    }

    async fn sweep(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        let mut rows = lock(&self.rows);
        let n = rows.len();
        rows.retain(|_, r| r.created_at >= before);
        Ok((n - rows.len()) as u64)
    }
}

#[derive(Default)]
pub struct MemoryUploadUrls {
    rows: Mutex<HashMap<[u8; 32], UploadUrlRecord>>,
}

#[async_trait]
impl UploadUrlStore for MemoryUploadUrls {
    async fn create(&self, record: &UploadUrlRecord) -> Result<(), StoreError> {
        lock(&self.rows).insert(record.token_hash, record.clone());
        Ok(())
    }

    async fn get(&self, token_hash: &[u8; 32]) -> Result<Option<UploadUrlRecord>, StoreError> {
        Ok(lock(&self.rows).get(token_hash).cloned())
    }

    async fn reserve(
        &self,
        token_hash: &[u8; 32],
        n: i32,
        now: DateTime<Utc>,
    ) -> Result<Reservation, StoreError> {
        let mut rows = lock(&self.rows);
        let Some(r) = rows.get_mut(token_hash) else {
            return Ok(Reservation::NotFound);
        };
        if r.expires_at <= now {
            return Ok(Reservation::Expired);
        }
        let remaining = r.max_files - r.files_used;
        if remaining <= 0 {
            return Ok(Reservation::Exhausted);
        }
        if n > remaining {
            return Ok(Reservation::TooMany { remaining });
        }
        r.files_used += n;
        Ok(Reservation::Reserved)
    }

    async fn release(&self, token_hash: &[u8; 32], n: i32) -> Result<(), StoreError> {
        if let Some(r) = lock(&self.rows).get_mut(token_hash) {
            r.files_used = (r.files_used - n).max(0);
        }
        Ok(())
    }
}

#[derive(Default)]
pub struct MemoryPlaceholders {
    rows: Mutex<BTreeMap<(OrgId, String), Placeholder>>,
    audit: Arc<MemoryAudit>,
}

impl MemoryPlaceholders {
    /// Placeholders whose changes' audit entries go to `audit`.
    pub fn with_audit(audit: Arc<MemoryAudit>) -> Self {
        Self {
            rows: Mutex::default(),
            audit,
        }
    }
}

#[async_trait]
impl PlaceholderStore for MemoryPlaceholders {
    async fn put(
        &self,
        org_id: &OrgId,
        p: &Placeholder,
        max: usize,
        audit: &Audit,
    ) -> Result<Put, StoreError> {
        let put = put_limited(&mut lock(&self.rows), org_id, &p.pattern, p, max, |v| {
            &mut v.created_at
        });
        if put != Put::LimitReached {
            self.audit.append([set_entry(audit, org_id, p)]);
        }
        Ok(put)
    }

    async fn list(&self, org_id: &OrgId) -> Result<Vec<Placeholder>, StoreError> {
        Ok(lock(&self.rows)
            .iter()
            .filter(|((org, _), _)| org == org_id)
            .map(|(_, p)| p.clone())
            .collect())
    }

    async fn delete(
        &self,
        org_id: &OrgId,
        pattern: &str,
        audit: &Audit,
    ) -> Result<bool, StoreError> {
        let mut rows = lock(&self.rows);
        let removed = rows.remove(&(org_id.clone(), pattern.to_owned())).is_some();
        if removed {
            self.audit.append([removed_entry(audit, org_id, pattern)]);
        }
        Ok(removed)
    }
}

/// Stores `value` under `(org_id, name)` — replacing the stored one but keeping its creation
/// time — or, for a new name, only while the organization has fewer than `max` (the placeholders'
/// and lifecycle rules' `put`).
fn put_limited<V: Clone>(
    rows: &mut BTreeMap<(OrgId, String), V>,
    org_id: &OrgId,
    name: &str,
    value: &V,
    max: usize,
    created_at: fn(&mut V) -> &mut DateTime<Utc>,
) -> Put {
    let slot = (org_id.clone(), name.to_owned());
    if let Some(existing) = rows.get_mut(&slot) {
        let kept = *created_at(existing);
        *existing = value.clone();
        *created_at(existing) = kept;
        return Put::Replaced { created_at: kept };
    }
    if rows.keys().filter(|(org, _)| org == org_id).count() >= max {
        return Put::LimitReached;
    }
    rows.insert(slot, value.clone());
    Put::Created
}

/// Lifecycle rules.
pub struct MemoryLifecycle {
    rows: Mutex<BTreeMap<(OrgId, String), LifecycleRule>>,
    audit: Arc<MemoryAudit>,
}

impl MemoryLifecycle {
    /// Rules whose changes' audit entries go to `audit`.
    pub fn with_audit(audit: Arc<MemoryAudit>) -> Self {
        Self {
            rows: Mutex::default(),
            audit,
        }
    }
}

#[async_trait]
impl LifecycleStore for MemoryLifecycle {
    async fn put(
        &self,
        org_id: &OrgId,
        r: &LifecycleRule,
        max: usize,
        audit: &Audit,
    ) -> Result<Put, StoreError> {
        let put = put_limited(&mut lock(&self.rows), org_id, &r.folder, r, max, |v| {
            &mut v.created_at
        });
        if put != Put::LimitReached {
            self.audit.append([lifecycle::set_entry(audit, org_id, r)]);
        }
        Ok(put)
    }

    async fn list(&self, org_id: &OrgId) -> Result<Vec<LifecycleRule>, StoreError> {
        Ok(lock(&self.rows)
            .iter()
            .filter(|((org, _), _)| org == org_id)
            .map(|(_, r)| r.clone())
            .collect())
    }

    async fn delete(
        &self,
        org_id: &OrgId,
        folder: &str,
        audit: &Audit,
    ) -> Result<bool, StoreError> {
        let removed = lock(&self.rows)
            .remove(&(org_id.clone(), folder.to_owned()))
            .is_some();
        if removed {
            self.audit
                .append([lifecycle::removed_entry(audit, org_id, folder)]);
        }
        Ok(removed)
    }

    async fn organizations(&self) -> Result<Vec<OrgId>, StoreError> {
        let mut orgs: Vec<OrgId> = lock(&self.rows).keys().map(|(o, _)| o.clone()).collect();
        orgs.dedup();
        Ok(orgs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;

    async fn fixture() -> crate::testsuite::Fixture {
        let audit = Arc::new(MemoryAudit::default());
        crate::testsuite::Fixture {
            records: Box::new(MemoryObjectRecords::with_audit(Arc::clone(&audit))),
            idempotency: Box::new(MemoryIdempotency::default()),
            upload_urls: Box::new(MemoryUploadUrls::default()),
            placeholders: Box::new(MemoryPlaceholders::with_audit(Arc::clone(&audit))),
            lifecycle: Box::new(MemoryLifecycle::with_audit(Arc::clone(&audit))),
            audit: Box::new(audit),
            org_a: "org_a".into(),
            org_b: "org_b".into(),
            key_id: "key_a".into(),
        }
    }

    crate::cdn_store_suite!(block_on, fixture);
}
