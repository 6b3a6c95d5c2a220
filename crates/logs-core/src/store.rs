//! The log storage trait: atomic, idempotent batch ingestion and keyset-paginated queries.

use async_trait::async_trait;
use auth_core::StoreError;
use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::event::{Batch, Level};
pub use crate::search::Filters;
pub use crate::tail::TailPosition;

pub use auth_core::{OrgId, ServerId};

/// Where a batch goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IngestTarget {
    pub org_id: OrgId,
    pub server_id: ServerId,
    /// Join code as registered.
    pub cfx_id: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IngestOutcome {
    /// Committed now (batch row, events and usage in one transaction).
    Accepted {
        accepted_events: i32,
        ingested_at: DateTime<Utc>,
    },
    /// The same batch was accepted before; nothing was written.
    Replayed {
        accepted_events: i32,
        ingested_at: DateTime<Utc>,
    },
    /// The batch id was used before with a different payload.
    Conflict,
    /// Another request is still committing this batch id.
    InProgress,
}

/// A stored event as returned by queries.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRow {
    /// Internal, monotonic; the pagination tiebreak.
    pub id: i64,
    pub event_id: String,
    /// The server's join code as registered (the wire's `serverId`; not the registered id).
    pub cfx_id: String,
    pub batch_id: String,
    pub level: String,
    pub event_type: String,
    pub occurred_at: DateTime<Utc>,
    pub ingested_at: DateTime<Utc>,
    pub player_id: Option<String>,
    pub target_player_id: Option<String>,
    pub player_identifiers: Option<Value>,
    pub target_player_identifiers: Option<Value>,
    pub resource: Option<String>,
    pub trace_id: Option<String>,
    pub environment: Option<String>,
    pub message: String,
    pub data: Option<Value>,
}

impl EventRow {
    /// The row an accepted event becomes: `id` and `event_id` as the store gave them, `now` its
    /// batch's arrival.
    pub fn stored(
        id: i64,
        event_id: String,
        target: &IngestTarget,
        batch_id: &str,
        e: &crate::event::Event,
        now: DateTime<Utc>,
    ) -> EventRow {
        let map_value = |m: &Option<std::collections::BTreeMap<String, String>>| {
            m.as_ref()
                .map(|m| serde_json::to_value(m).unwrap_or(Value::Null))
        };
        EventRow {
            id,
            event_id,
            cfx_id: target.cfx_id.clone(),
            batch_id: batch_id.to_owned(),
            level: e.level.as_str().to_owned(),
            event_type: e.event_type.clone(),
            occurred_at: e.occurred_at,
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
        }
    }
}

#[cfg(test)]
impl EventRow {
    /// An `info` event of type `log` with id `id`, message "m" and nothing else set, at the
    /// epoch, on server `c`: unit tests set what they look at over it.
    pub(crate) fn fixture(id: i64) -> EventRow {
        EventRow {
            id,
            event_id: format!("e{id}"),
            cfx_id: "c".into(),
            batch_id: "b".into(),
            level: "info".into(),
            event_type: "log".into(),
            occurred_at: DateTime::UNIX_EPOCH,
            ingested_at: DateTime::UNIX_EPOCH,
            player_id: None,
            target_player_id: None,
            player_identifiers: None,
            target_player_identifiers: None,
            resource: None,
            trace_id: None,
            environment: None,
            message: "m".into(),
            data: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Owner {
    Player,
    Target,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentifierFilter {
    pub owner: Owner,
    pub key: String,
    pub value: String,
}

/// One page of a search: newest first, strictly after `after` in that order.
#[derive(Debug, Clone, PartialEq)]
pub struct EventQuery {
    pub server_id: ServerId,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub filters: Filters,
    /// `(occurred_at, id)` of the last event of the previous page.
    pub after: Option<(DateTime<Utc>, i64)>,
    pub limit: usize,
    /// With a `data` filter: how many events matching the other filters the page may examine
    /// (newest first, from `after`) before it is full; past that, [`SearchError::TooBroad`].
    /// `None`: no limit (exports, which read the whole search anyway).
    pub scan_limit: Option<usize>,
    /// How many rows make a page whose scan stopped at `scan_limit` an answer (the caller may
    /// fetch one more than it shows to learn whether there are more): fewer is `TooBroad`.
    pub enough: usize,
}

/// Counts of a search's events per level, in buckets of `bucket` aligned to the Unix epoch.
#[derive(Debug, Clone, PartialEq)]
pub struct CountQuery {
    pub server_id: ServerId,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub filters: Filters,
    pub bucket: chrono::Duration,
    /// With a `data` filter: how many events matching the other filters may be examined.
    pub scan_limit: usize,
}

/// The number of events of one level whose `occurred_at` falls in the bucket starting at `start`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct BucketCount {
    pub start: DateTime<Utc>,
    pub level: Level,
    pub count: i64,
}

/// The most frequent values of a search's events, among the newest `sample` events that match
/// every filter but `data` (all of them when there are no more).
#[derive(Debug, Clone, PartialEq)]
pub struct FacetQuery {
    pub server_id: ServerId,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub filters: Filters,
    pub sample: usize,
    /// Values kept per facet.
    pub top: usize,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Facets {
    /// How many events the figures are over.
    pub examined: i64,
    /// Whether the search may have more events than were examined (the newest were).
    pub sampled: bool,
    /// `(value, count)`, most frequent first, then by value.
    pub levels: Vec<(String, i64)>,
    pub event_types: Vec<(String, i64)>,
    pub resources: Vec<(String, i64)>,
    /// Player ids, each counted once per event where it is the actor or the target (so a
    /// count is what a `playerId` search of the sample finds).
    pub players: Vec<(String, i64)>,
}

/// What facets count of one event.
#[derive(Debug, Clone, Copy)]
pub struct FacetFields<'a> {
    pub level: &'a str,
    pub event_type: &'a str,
    pub resource: Option<&'a str>,
    pub player_id: Option<&'a str>,
    pub target_player_id: Option<&'a str>,
}

impl<'a> From<&'a EventRow> for FacetFields<'a> {
    fn from(r: &'a EventRow) -> Self {
        FacetFields {
            level: &r.level,
            event_type: &r.event_type,
            resource: r.resource.as_deref(),
            player_id: r.player_id.as_deref(),
            target_player_id: r.target_player_id.as_deref(),
        }
    }
}

impl Facets {
    /// Facets of the events of the sample; `sampled` when the search had events beyond it.
    pub fn tally<'a>(
        rows: impl IntoIterator<Item = FacetFields<'a>>,
        sampled: bool,
        top: usize,
    ) -> Self {
        use std::collections::HashMap;
        let mut maps: [HashMap<&str, i64>; 4] = Default::default();
        let mut examined = 0;
        for row in rows {
            examined += 1;
            *maps[0].entry(row.level).or_default() += 1;
            *maps[1].entry(row.event_type).or_default() += 1;
            if let Some(r) = row.resource {
                *maps[2].entry(r).or_default() += 1;
            }
            if let Some(p) = row.player_id {
                *maps[3].entry(p).or_default() += 1;
            }
            if let Some(t) = row.target_player_id.filter(|t| Some(*t) != row.player_id) {
                *maps[3].entry(t).or_default() += 1;
            }
        }
        let [levels, event_types, resources, players] =
            maps.map(|m| Self::top(m.into_iter().map(|(k, v)| (k.to_owned(), v)), top));
        Facets {
            examined,
            sampled,
            levels,
            event_types,
            resources,
            players,
        }
    }

    /// Several servers' facets as one: counts added value by value, then the `top` again. Each
    /// server's lists hold its own top values only, so a value just outside every server's top
    /// is missing from the sum (the answer says so as `sampled` when any server sampled).
    pub fn merge(all: Vec<Facets>, top: usize) -> Facets {
        use std::collections::HashMap;
        let mut maps: [HashMap<String, i64>; 4] = Default::default();
        let (mut examined, mut sampled) = (0, false);
        for f in all {
            examined += f.examined;
            sampled |= f.sampled;
            for (map, list) in
                maps.iter_mut()
                    .zip([f.levels, f.event_types, f.resources, f.players])
            {
                for (v, n) in list {
                    *map.entry(v).or_default() += n;
                }
            }
        }
        let [levels, event_types, resources, players] = maps.map(|m| Self::top(m, top));
        Facets {
            examined,
            sampled,
            levels,
            event_types,
            resources,
            players,
        }
    }

    /// The `top` most frequent of `counts`, most frequent first, ties by value.
    pub fn top(counts: impl IntoIterator<Item = (String, i64)>, top: usize) -> Vec<(String, i64)> {
        let mut v: Vec<_> = counts.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        v.truncate(top);
        v
    }
}

/// A lookup of the events that name their player `name` ([`LogStore::named`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameQuery {
    pub server_id: ServerId,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    /// Lowercased.
    pub name: String,
    pub limit: usize,
}

/// One player's events on several servers at once ([`LogStore::player_events`]): the events of
/// any of `servers` in `[from, to)` whose player or target is `player` (as the search field
/// `player` matches it), newest first, below `after`, at most `limit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayerEventsQuery {
    /// The organization `servers` belong to (a store may find identifiers by organization).
    pub org: OrgId,
    pub servers: Vec<ServerId>,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub player: crate::criteria::PlayerMatch,
    /// `(occurred_at, id)` of the last event of the previous page.
    pub after: Option<(DateTime<Utc>, i64)>,
    pub limit: usize,
}

/// What a live tail reads next: the events of batches that became visible after `after`.
#[derive(Debug, Clone, PartialEq)]
pub struct TailQuery {
    pub server_id: ServerId,
    pub filters: Filters,
    pub after: TailPosition,
    /// Batches read at most (their events all come); a store that commits several batches in
    /// one transaction counts each transaction as one and reads all its batches.
    pub max_batches: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TailPage {
    /// In the order batches became visible, then by id; each with its position.
    pub events: Vec<(TailPosition, EventRow)>,
    /// Where the next read continues: past every batch read, including those without a
    /// matching event (never before `after`).
    pub next: TailPosition,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum SearchError {
    /// A `data` filter had to examine more events than allowed.
    #[error("the `data` filters (`data`, `dataWhere`, `exclude.data`) may examine at most {limit} events matching the other filters, and this search has more before its answer is complete; narrow `from`/`to` or add level, eventType, resource, player, playerId or identifier")]
    TooBroad { limit: usize },
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[async_trait]
pub trait LogStore: Send + Sync {
    /// Stores the batch atomically (all its events or none), or answers what became of its
    /// batch id before. The store takes the batch: an implementation may hand it to another
    /// task that commits several callers' batches together.
    async fn ingest(
        &self,
        target: &IngestTarget,
        batch: Batch,
        now: DateTime<Utc>,
    ) -> Result<IngestOutcome, StoreError>;
    async fn query(&self, q: &EventQuery) -> Result<Vec<EventRow>, SearchError>;
    /// Non-zero counts only, ordered by bucket then level.
    async fn counts(&self, q: &CountQuery) -> Result<Vec<BucketCount>, SearchError>;
    async fn facets(&self, q: &FacetQuery) -> Result<Facets, SearchError>;
    /// The events of `q.server_id` in `[q.from, q.to)` whose player's name
    /// ([`crate::players::actor_name`], lowercased) is `q.name`, newest first, at most
    /// `q.limit`.
    async fn named(&self, q: &NameQuery) -> Result<Vec<EventRow>, SearchError>;
    /// One player's events over many servers in one read (the player view), answering what a
    /// search of each server with the `player` filter, merged newest first, would.
    async fn player_events(&self, q: &PlayerEventsQuery) -> Result<Vec<EventRow>, StoreError>;
    /// The position of "now" for a new tail: every later batch comes after it.
    async fn tail_start(&self, server: &ServerId) -> Result<TailPosition, StoreError>;
    async fn tail(&self, q: &TailQuery) -> Result<TailPage, StoreError>;
    /// When batch `seq` of the server was ingested (`None`: no such batch), to tell whether a
    /// tail can resume from it.
    async fn tail_batch_time(
        &self,
        server: &ServerId,
        seq: i64,
    ) -> Result<Option<DateTime<Utc>>, StoreError>;
    /// Accepted log events of an organization in the calendar month (UTC) of `now`.
    async fn monthly_usage(&self, org_id: &OrgId, now: DateTime<Utc>) -> Result<i64, StoreError>;
    /// When each of `servers` last had a batch accepted (the newest by commit order); servers
    /// without one are absent.
    async fn last_batches(
        &self,
        servers: &[ServerId],
    ) -> Result<std::collections::HashMap<ServerId, DateTime<Utc>>, StoreError>;
}

/// The start of the bucket of `bucket` length (aligned to the Unix epoch) that holds `t`.
pub fn bucket_start(t: DateTime<Utc>, bucket: chrono::Duration) -> DateTime<Utc> {
    let size = bucket.num_microseconds().unwrap_or(i64::MAX).max(1);
    let micros = t.timestamp_micros();
    DateTime::from_timestamp_micros(micros - micros.rem_euclid(size)).unwrap_or(t)
}

/// A server-made event id: a ULID (sortable, 26 characters, valid as an event id).
pub fn new_event_id() -> String {
    ulid::Ulid::new().to_string()
}

#[cfg(test)]
mod tests {
    use super::Facets;

    #[test]
    fn facets_of_several_servers_add_up_value_by_value() {
        let f = |examined, sampled, types: &[(&str, i64)]| Facets {
            examined,
            sampled,
            event_types: types.iter().map(|(v, n)| (v.to_string(), *n)).collect(),
            ..Facets::default()
        };
        let merged = Facets::merge(
            vec![
                f(10, false, &[("chat", 6), ("join", 4)]),
                f(7, true, &[("join", 5), ("kick", 2)]),
            ],
            2,
        );
        assert_eq!(merged.examined, 17);
        assert!(merged.sampled);
        assert_eq!(
            merged.event_types,
            [("join".to_string(), 9), ("chat".to_string(), 6)]
        );
        assert_eq!(Facets::merge(vec![], 5), Facets::default());
    }
}
