//! In-memory [`LogStore`] (unit tests, tooling).

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
use auth_core::StoreError;
use chrono::{DateTime, Datelike, Utc};
use serde_json::Value;

use crate::event::Batch;
use crate::store::{
    new_event_id, EventQuery, EventRow, IngestOutcome, IngestTarget, LogStore, Owner,
};

/// digest, accepted events, ingested at
type StoredBatch = ([u8; 32], i32, DateTime<Utc>);

#[derive(Default)]
struct State {
    batches: HashMap<(String, String), StoredBatch>,
    events: Vec<(String, EventRow)>,
    usage: HashMap<(String, i32, u32), i64>,
    next_id: i64,
}

#[derive(Default)]
pub struct MemoryLogs {
    state: Mutex<State>,
}

fn map_value(m: &Option<std::collections::BTreeMap<String, String>>) -> Option<Value> {
    m.as_ref()
        .map(|m| serde_json::to_value(m).unwrap_or(Value::Null))
}

#[async_trait]
impl LogStore for MemoryLogs {
    async fn ingest(
        &self,
        t: &IngestTarget,
        batch: &Batch,
        now: DateTime<Utc>,
    ) -> Result<IngestOutcome, StoreError> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let key = (t.server_id.0.clone(), batch.batch_id.clone());
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
        for e in &batch.events {
            st.next_id += 1;
            let row = EventRow {
                id: st.next_id,
                event_id: e.event_id.clone().unwrap_or_else(new_event_id),
                cfx_id: t.cfx_id.clone(),
                batch_id: batch.batch_id.clone(),
                level: e.level.as_str().to_owned(),
                event_type: e.event_type.clone(),
                occurred_at: e.occurred_at.unwrap_or(now),
                ingested_at: now,
                player_id: e.player_id.clone(),
                target_player_id: e.target_player_id.clone(),
                player_identifiers: map_value(&e.player_identifiers),
                target_player_identifiers: map_value(&e.target_player_identifiers),
                resource: e.resource.clone(),
                trace_id: e.trace_id.clone(),
                environment: e.environment.clone(),
                message: e.message.clone(),
                data: e.data.clone().map(Value::Object),
            };
            st.events.push((t.server_id.0.clone(), row));
        }
        *st.usage
            .entry((t.org_id.clone(), now.year(), now.month()))
            .or_default() += i64::from(n);
        Ok(IngestOutcome::Accepted {
            accepted_events: n,
            ingested_at: now,
        })
    }

    async fn query(&self, q: &EventQuery) -> Result<Vec<EventRow>, StoreError> {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut rows: Vec<&EventRow> = st
            .events
            .iter()
            .filter(|(server, r)| {
                *server == q.server_id.0
                    && r.occurred_at >= q.from
                    && r.occurred_at < q.to
                    && q.levels
                        .as_ref()
                        .is_none_or(|ls| ls.iter().any(|l| r.level == l.as_str()))
                    && q.event_type.as_ref().is_none_or(|t| &r.event_type == t)
                    && q.resource
                        .as_ref()
                        .is_none_or(|x| r.resource.as_ref() == Some(x))
                    && q.message
                        .as_ref()
                        .is_none_or(|m| r.message.to_lowercase().contains(&m.to_lowercase()))
                    && q.player_id.as_ref().is_none_or(|p| {
                        r.player_id.as_ref() == Some(p) || r.target_player_id.as_ref() == Some(p)
                    })
                    && q.identifier.as_ref().is_none_or(|i| {
                        let map = match i.owner {
                            Owner::Player => &r.player_identifiers,
                            Owner::Target => &r.target_player_identifiers,
                        };
                        map.as_ref()
                            .and_then(|m| m.get(&i.key))
                            .and_then(Value::as_str)
                            == Some(i.value.as_str())
                    })
                    && q.after
                        .is_none_or(|(t, id)| (r.occurred_at, r.id) < (t, id))
            })
            .map(|(_, r)| r)
            .collect();
        rows.sort_by_key(|r| std::cmp::Reverse((r.occurred_at, r.id)));
        Ok(rows.into_iter().take(q.limit).cloned().collect())
    }

    async fn monthly_usage(&self, org_id: &str, now: DateTime<Utc>) -> Result<i64, StoreError> {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        Ok(st
            .usage
            .get(&(org_id.to_owned(), now.year(), now.month()))
            .copied()
            .unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    async fn fixture() -> crate::testsuite::Fixture {
        crate::testsuite::Fixture {
            store: Box::new(super::MemoryLogs::default()),
            org: "org_a".into(),
            a: ("srv_a".into(), "abc".into()),
            b: ("srv_b".into(), "def".into()),
        }
    }

    crate::log_store_suite!(futures::executor::block_on, fixture);
}
