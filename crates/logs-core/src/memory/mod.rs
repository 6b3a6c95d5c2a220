//! In-memory adapters of the log traits (unit tests, tooling): [`LogStore`], [`ReadSlotStore`],
//! [`SavedSearchStore`] here, [`crate::alert_store::AlertStore`] in [`alerts`].

mod alerts;

pub use alerts::MemoryAlerts;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use auth_core::audit::Audit;
use auth_core::StoreError;
use chrono::{DateTime, Datelike, Utc};

use crate::event::{Batch, Level};
use crate::saved::{self, SavedPut, SavedSearch, SavedSearchStore};
use crate::slots::{ExportGuard, Lease, LeaseKind, LeaseRequest, ReadSlotStore};
use crate::store::OrgId;
use crate::store::{
    bucket_start, new_event_id, BucketCount, CountQuery, EventQuery, EventRow, FacetFields,
    FacetQuery, Facets, Filters, IngestOutcome, IngestTarget, LogStore, NameQuery,
    PlayerEventsQuery, SearchError, ServerId, TailPage, TailPosition, TailQuery,
};

/// digest, accepted events, ingested at
type StoredBatch = ([u8; 32], i32, DateTime<Utc>);

#[derive(Default)]
struct State {
    batches: HashMap<(ServerId, String), StoredBatch>,
    /// `(server, batch sequence)` of each event, beside it: the order batches were committed in
    events: Vec<(ServerId, EventRow)>,
    seqs: Vec<i64>,
    /// server, ingested at, of each batch sequence (from 1)
    batch_log: Vec<(ServerId, DateTime<Utc>)>,
    usage: HashMap<(OrgId, i32, u32), i64>,
    next_id: i64,
}

impl State {
    /// The server's events in the window below `after`, newest first, that match every filter
    /// but `data` (what a `data` filter examines).
    fn candidates(
        &self,
        server: &ServerId,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        filters: &Filters,
        after: Option<(DateTime<Utc>, i64)>,
    ) -> Vec<&EventRow> {
        let others = filters.without_data();
        let mut rows: Vec<&EventRow> = self
            .events
            .iter()
            .filter(|(s, r)| {
                *s == server.as_str()
                    && r.occurred_at >= from
                    && r.occurred_at < to
                    && after.is_none_or(|(t, id)| (r.occurred_at, r.id) < (t, id))
                    && others.matches(r)
            })
            .map(|(_, r)| r)
            .collect();
        rows.sort_by_key(|r| std::cmp::Reverse((r.occurred_at, r.id)));
        rows
    }
}

#[derive(Default)]
pub struct MemoryLogs {
    state: Mutex<State>,
}

#[async_trait]
impl LogStore for MemoryLogs {
    async fn ingest(
        &self,
        t: &IngestTarget,
        batch: Batch,
        now: DateTime<Utc>,
    ) -> Result<IngestOutcome, StoreError> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let key = (t.server_id.clone(), batch.batch_id.clone());
        if let Some((digest, n, at)) = st.batches.get(&key) {
            return Ok(if *digest == batch.digest {
                IngestOutcome::Replayed {
                    accepted_events: *n,
                    ingested_at: *at,
                }
            } else {
                IngestOutcome::Conflict
            });
        }
        let n = batch.events.len() as i32;
        st.batches.insert(key, (batch.digest, n, now));
        st.batch_log.push((t.server_id.clone(), now));
        let seq = st.batch_log.len() as i64;
        for e in &batch.events {
            st.next_id += 1;
            let row = EventRow::stored(
                st.next_id,
                e.event_id.clone().unwrap_or_else(new_event_id),
                t,
                &batch.batch_id,
                e,
                now,
            );
            st.events.push((t.server_id.clone(), row));
            st.seqs.push(seq);
        }
        *st.usage
            .entry((t.org_id.clone(), now.year(), now.month()))
            .or_default() += i64::from(n);
        Ok(IngestOutcome::Accepted {
            accepted_events: n,
            ingested_at: now,
        })
    }

    async fn query(&self, q: &EventQuery) -> Result<Vec<EventRow>, SearchError> {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let candidates = st.candidates(&q.server_id, q.from, q.to, &q.filters, q.after);
        let mut page = Vec::new();
        for (examined, r) in candidates.into_iter().enumerate() {
            if page.len() == q.limit {
                break;
            }
            if let (true, Some(limit)) = (q.filters.scans_data(), q.scan_limit) {
                if examined == limit {
                    if page.len() >= q.enough {
                        break;
                    }
                    return Err(SearchError::TooBroad { limit });
                }
            }
            if q.filters.matches(r) {
                page.push(r.clone());
            }
        }
        Ok(page)
    }

    async fn counts(&self, q: &CountQuery) -> Result<Vec<BucketCount>, SearchError> {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let candidates = st.candidates(&q.server_id, q.from, q.to, &q.filters, None);
        if q.filters.scans_data() && candidates.len() > q.scan_limit {
            return Err(SearchError::TooBroad {
                limit: q.scan_limit,
            });
        }
        let mut counts = std::collections::BTreeMap::new();
        for r in candidates.into_iter().filter(|r| q.filters.matches(r)) {
            let level = Level::parse(&r.level).unwrap_or(Level::Info);
            *counts
                .entry((bucket_start(r.occurred_at, q.bucket), level))
                .or_insert(0) += 1;
        }
        Ok(counts
            .into_iter()
            .map(|((start, level), count)| BucketCount {
                start,
                level,
                count,
            })
            .collect())
    }

    async fn facets(&self, q: &FacetQuery) -> Result<Facets, SearchError> {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let candidates = st.candidates(&q.server_id, q.from, q.to, &q.filters, None);
        let sampled = candidates.len() > q.sample;
        let rows = candidates
            .into_iter()
            .take(q.sample)
            .filter(|r| q.filters.matches(r))
            .map(FacetFields::from);
        Ok(Facets::tally(rows, sampled, q.top))
    }

    async fn named(&self, q: &NameQuery) -> Result<Vec<EventRow>, SearchError> {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let candidates = st.candidates(&q.server_id, q.from, q.to, &Filters::default(), None);
        Ok(candidates
            .into_iter()
            .filter(|r| {
                crate::players::actor_name(&r.data).is_some_and(|n| n.to_lowercase() == q.name)
            })
            .take(q.limit)
            .cloned()
            .collect())
    }

    async fn player_events(&self, q: &PlayerEventsQuery) -> Result<Vec<EventRow>, StoreError> {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let filters = Filters {
            player: Some(q.player.clone()),
            ..Filters::default()
        };
        let mut rows: Vec<EventRow> = q
            .servers
            .iter()
            .flat_map(|s| st.candidates(s, q.from, q.to, &filters, q.after))
            .cloned()
            .collect();
        rows.sort_by_key(|r| std::cmp::Reverse((r.occurred_at, r.id)));
        rows.truncate(q.limit);
        Ok(rows)
    }

    async fn tail_start(&self, _server: &ServerId) -> Result<TailPosition, StoreError> {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        Ok(TailPosition::after_batch(st.batch_log.len() as i64))
    }

    async fn tail(&self, q: &TailQuery) -> Result<TailPage, StoreError> {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut next = q.after;
        let mut read = 0;
        let mut events = Vec::new();
        // every batch is committed here as soon as it is numbered
        for seq in q.after.seq.max(1)..=st.batch_log.len() as i64 {
            if read == q.max_batches {
                break;
            }
            if st.batch_log[seq as usize - 1].0 != q.server_id.as_str()
                || (seq == q.after.seq && q.after.id == TailPosition::WHOLE_BATCH)
            {
                next = next.max(TailPosition::after_batch(seq));
                continue;
            }
            read += 1;
            for ((server, r), s) in st.events.iter().zip(&st.seqs) {
                let pos = TailPosition { seq, id: r.id };
                if *s == seq
                    && *server == q.server_id.as_str()
                    && pos > q.after
                    && q.filters.matches(r)
                {
                    events.push((pos, r.clone()));
                }
            }
            next = next.max(TailPosition::after_batch(seq));
        }
        Ok(TailPage { events, next })
    }

    async fn tail_batch_time(
        &self,
        server: &ServerId,
        seq: i64,
    ) -> Result<Option<DateTime<Utc>>, StoreError> {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        Ok(usize::try_from(seq - 1)
            .ok()
            .and_then(|i| st.batch_log.get(i))
            .filter(|(s, _)| *s == server.as_str())
            .map(|(_, at)| *at))
    }

    async fn monthly_usage(&self, org_id: &OrgId, now: DateTime<Utc>) -> Result<i64, StoreError> {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        Ok(st
            .usage
            .get(&(org_id.clone(), now.year(), now.month()))
            .copied()
            .unwrap_or(0))
    }

    async fn last_batches(
        &self,
        servers: &[ServerId],
    ) -> Result<HashMap<ServerId, DateTime<Utc>>, StoreError> {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut last = HashMap::new();
        for (server, at) in &st.batch_log {
            if servers.contains(server) {
                last.insert(server.clone(), *at);
            }
        }
        Ok(last)
    }
}

/// In-memory [`ReadSlotStore`]: the slots of one process.
#[derive(Default, Clone)]
pub struct MemoryReadSlots {
    state: Arc<Mutex<Slots>>,
}

#[derive(Default)]
struct Slots {
    /// id → kind, organization, expires at
    leases: HashMap<String, (LeaseKind, OrgId, DateTime<Utc>)>,
    /// organizations whose export lock is held
    exports: HashSet<OrgId>,
}

impl MemoryReadSlots {
    fn slots(&self) -> std::sync::MutexGuard<'_, Slots> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl ReadSlotStore for MemoryReadSlots {
    async fn acquire(
        &self,
        org_id: &OrgId,
        req: &LeaseRequest,
    ) -> Result<Option<Lease>, StoreError> {
        let LeaseRequest {
            kind,
            limit,
            expires_at,
        } = *req;
        let now = Utc::now();
        let mut slots = self.slots();
        slots
            .leases
            .retain(|_, (k, org, until)| !(*k == kind && org == org_id && *until < now));
        let held = slots
            .leases
            .values()
            .filter(|(k, org, _)| *k == kind && org == org_id)
            .count();
        if held >= limit {
            return Ok(None);
        }
        let id = kind.new_id();
        slots
            .leases
            .insert(id.clone(), (kind, org_id.clone(), expires_at));
        Ok(Some(Lease { kind, id }))
    }

    async fn renew(&self, lease: &Lease, expires_at: DateTime<Utc>) -> Result<bool, StoreError> {
        Ok(match self.slots().leases.get_mut(&lease.id) {
            Some((k, _, until)) if *k == lease.kind => {
                *until = expires_at;
                true
            }
            _ => false,
        })
    }

    async fn release(&self, lease: &Lease) -> Result<(), StoreError> {
        let mut slots = self.slots();
        if slots
            .leases
            .get(&lease.id)
            .is_some_and(|(k, _, _)| *k == lease.kind)
        {
            slots.leases.remove(&lease.id);
        }
        Ok(())
    }

    async fn try_export_lock(
        &self,
        org_id: &OrgId,
    ) -> Result<Option<Box<dyn ExportGuard>>, StoreError> {
        if !self.slots().exports.insert(org_id.clone()) {
            return Ok(None);
        }
        Ok(Some(Box::new(MemoryExportGuard {
            slots: self.clone(),
            org_id: org_id.clone(),
        })))
    }
}

struct MemoryExportGuard {
    slots: MemoryReadSlots,
    org_id: OrgId,
}

#[async_trait]
impl ExportGuard for MemoryExportGuard {
    async fn unlock(self: Box<Self>) {
        drop(self);
    }
}

impl Drop for MemoryExportGuard {
    fn drop(&mut self) {
        self.slots.slots().exports.remove(&self.org_id);
    }
}

/// Saved searches in memory ([`crate::saved::SavedSearchStore`]), their changes' audit entries
/// written to `audit`.
#[derive(Default)]
pub struct MemorySavedSearches {
    rows: Mutex<Vec<SavedSearch>>,
    audit: Arc<auth_core::memory::MemoryAudit>,
}

impl MemorySavedSearches {
    pub fn with_audit(audit: Arc<auth_core::memory::MemoryAudit>) -> Self {
        Self {
            rows: Mutex::default(),
            audit,
        }
    }
}

fn name_taken(rows: &[SavedSearch], s: &SavedSearch) -> bool {
    rows.iter().any(|r| {
        r.org_id == s.org_id && r.id != s.id && r.name.to_lowercase() == s.name.to_lowercase()
    })
}

#[async_trait]
impl SavedSearchStore for MemorySavedSearches {
    async fn list(&self, org: &OrgId) -> Result<Vec<SavedSearch>, StoreError> {
        let rows = self.rows.lock().unwrap_or_else(|e| e.into_inner());
        let mut list: Vec<SavedSearch> =
            rows.iter().filter(|r| r.org_id == *org).cloned().collect();
        saved::sort_by_name(&mut list);
        Ok(list)
    }

    async fn get(&self, org: &OrgId, id: &str) -> Result<Option<SavedSearch>, StoreError> {
        let rows = self.rows.lock().unwrap_or_else(|e| e.into_inner());
        Ok(rows
            .iter()
            .find(|r| r.org_id == *org && r.id == id)
            .cloned())
    }

    async fn create(
        &self,
        s: &SavedSearch,
        max: usize,
        audit: &Audit,
    ) -> Result<SavedPut, StoreError> {
        let mut rows = self.rows.lock().unwrap_or_else(|e| e.into_inner());
        if name_taken(&rows, s) {
            return Ok(SavedPut::NameTaken);
        }
        if rows.iter().filter(|r| r.org_id == s.org_id).count() >= max {
            return Ok(SavedPut::LimitReached);
        }
        rows.push(s.clone());
        self.audit.append([saved::created_entry(audit, s)]);
        Ok(SavedPut::Done)
    }

    async fn update(&self, s: &SavedSearch, audit: &Audit) -> Result<SavedPut, StoreError> {
        let mut rows = self.rows.lock().unwrap_or_else(|e| e.into_inner());
        if name_taken(&rows, s) {
            return Ok(SavedPut::NameTaken);
        }
        let Some(row) = rows
            .iter_mut()
            .find(|r| r.org_id == s.org_id && r.id == s.id)
        else {
            return Ok(SavedPut::Missing);
        };
        if saved::same_content(row, s) {
            return Ok(SavedPut::Done);
        }
        let before = row.clone();
        row.name = s.name.clone();
        row.servers = s.servers.clone();
        row.search = s.search.clone();
        row.updated_at = s.updated_at;
        self.audit
            .append([saved::changed_entry(audit, &before, row)]);
        Ok(SavedPut::Done)
    }

    async fn delete(&self, org: &OrgId, id: &str, audit: &Audit) -> Result<bool, StoreError> {
        let mut rows = self.rows.lock().unwrap_or_else(|e| e.into_inner());
        let Some(i) = rows.iter().position(|r| r.org_id == *org && r.id == id) else {
            return Ok(false);
        };
        let gone = rows.remove(i);
        self.audit.append([saved::deleted_entry(audit, &gone)]);
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    async fn fixture() -> crate::testsuite::Fixture {
        let audit = std::sync::Arc::new(auth_core::memory::MemoryAudit::default());
        crate::testsuite::Fixture {
            store: Box::new(super::MemoryLogs::default()),
            slots: Box::new(super::MemoryReadSlots::default()),
            saved: Box::new(super::MemorySavedSearches::with_audit(audit.clone())),
            audit: Box::new(audit),
            org: crate::store::OrgId::new("org_a"),
            a: (crate::store::ServerId::new("srv_a"), "abc".into()),
            b: (crate::store::ServerId::new("srv_b"), "def".into()),
        }
    }

    crate::log_store_suite!(futures::executor::block_on, fixture);

    /// The log fixture with alerts whose rules watch its saved searches.
    async fn alert_fixture() -> crate::testsuite::AlertFixture {
        let audit = std::sync::Arc::new(auth_core::memory::MemoryAudit::default());
        let saved = std::sync::Arc::new(super::MemorySavedSearches::with_audit(audit.clone()));
        let alerts = std::sync::Arc::new(super::MemoryAlerts::new(saved.clone(), audit.clone()));
        crate::testsuite::AlertFixture {
            alerts: alerts.clone(),
            queue: alerts,
            logs: crate::testsuite::Fixture {
                saved: Box::new(saved),
                audit: Box::new(audit),
                ..fixture().await
            },
        }
    }

    mod alerts {
        crate::alert_store_suite!(futures::executor::block_on, super::alert_fixture);
    }
}
