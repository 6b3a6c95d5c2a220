//! How a log read is carried out, chosen from the query alone: [`plan_page`] for a page of a
//! search, [`plan_counts`] for counts over time. A store executes the plan; these rules hold for
//! every store (the memory adapter needs none of them, Postgres follows each).
//!
//! Why these strategies, with the measurements behind them: docs/decisions/003, 004, 005, 007.

use chrono::{DateTime, Duration, NaiveTime, Utc};

use crate::criteria::Exclusions;
use crate::search::Filters;
use crate::store::{bucket_start, CountQuery, EventQuery, ServerId};

/// A position in a search's order (newest first): `(occurred_at, id)`.
pub type Position = (DateTime<Utc>, i64);

/// A half-open window of time, `[from, to)`.
pub type Span = (DateTime<Utc>, DateTime<Utc>);

/// Where one statement of a search reads: a server's events in `[from, to)`, strictly below
/// `after` and at or above `floor` in the search's order (newest first).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds<'a> {
    pub server: &'a ServerId,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    /// The last event of the previous page: the statement reads below it.
    pub after: Option<Position>,
    /// The lowest event the statement may read (a scan limit's floor).
    pub floor: Option<Position>,
}

impl<'a> Bounds<'a> {
    /// The whole window, no cursor, no floor.
    pub fn window(server: &'a ServerId, (from, to): Span) -> Self {
        Self {
            server,
            from,
            to,
            after: None,
            floor: None,
        }
    }

    pub fn after(self, after: Option<Position>) -> Self {
        Self { after, ..self }
    }

    pub fn floor(self, floor: Option<Position>) -> Self {
        Self { floor, ..self }
    }
}

/// How a page of a search is read.
#[derive(Debug, Clone, PartialEq)]
pub enum PagePlan {
    /// One statement over the window: no message term, and no `data` filter with a scan limit.
    Window,
    /// A `data` filter within a scan limit (`data` has no index): the page reads at or above the
    /// `limit`-th candidate (the events matching every other filter, newest first below the
    /// cursor). When there are more candidates than `limit` and the page has fewer than the
    /// query's `enough` rows, the search is too broad.
    Scanned { limit: usize },
    /// A message search, one UTC day at a time, newest first (the days of [`day_windows`]):
    /// the search stops as soon as the page is full, usually after one day.
    Days(Vec<Span>),
}

/// How the page of `q` is read: a `data` filter with a scan limit decides first (whatever the
/// message), then a message term.
pub fn plan_page(q: &EventQuery) -> PagePlan {
    match (q.filters.scans_data(), q.scan_limit) {
        (true, Some(limit)) => PagePlan::Scanned { limit },
        _ if q.filters.message.is_some() => PagePlan::Days(day_windows(q)),
        _ => PagePlan::Window,
    }
}

/// Types a store lists for [`prefix_types`] before it stops (a server with more reads a prefix in
/// time order).
pub const MAX_LISTED_TYPES: usize = 64;
/// Types a prefix's page reads as one newest-first page each, merged; more are read in time
/// order.
pub const MAX_MERGED_TYPES: usize = 8;

/// How a page whose event type is a prefix is read, from the server's types in the window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypePlan {
    /// No type of the window has the prefix: the page is empty.
    Empty,
    /// These types (1 to [`MAX_MERGED_TYPES`]) are every type of the window with the prefix:
    /// each walks its `(server, type, time)` index, newest first.
    Types(Vec<String>),
    /// Read the window in time order and keep the types with the prefix.
    Scan,
}

/// The plan of a prefix, given the distinct event types the store found in the window (`None`:
/// more than [`MAX_LISTED_TYPES`], not all listed).
pub fn prefix_types(prefix: &str, listed: Option<Vec<String>>) -> TypePlan {
    let Some(listed) = listed else {
        return TypePlan::Scan;
    };
    let mut types: Vec<String> = listed
        .into_iter()
        .filter(|t| t.starts_with(prefix))
        .collect();
    types.sort_unstable();
    types.dedup();
    match types.len() {
        0 => TypePlan::Empty,
        n if n <= MAX_MERGED_TYPES => TypePlan::Types(types),
        _ => TypePlan::Scan,
    }
}

/// A table of counts that ingestion keeps up to date, and what it can answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeptCounts {
    /// Per server, 15-minute slot and level: searches with no filter but levels.
    LevelSlots,
    /// Per server, hour, level, event type and resource: searches with no filter but levels, an
    /// event type and a resource.
    Hours,
}

/// The length of a [`KeptCounts::LevelSlots`] slot (aligned to the Unix epoch).
pub const LEVEL_SLOT: Duration = Duration::minutes(15);

impl KeptCounts {
    /// The length of the table's units (aligned to the Unix epoch).
    pub fn unit(self) -> Duration {
        match self {
            KeptCounts::LevelSlots => LEVEL_SLOT,
            KeptCounts::Hours => Duration::hours(1),
        }
    }
}

/// How counts over time are read.
#[derive(Debug, Clone, PartialEq)]
pub struct CountPlan {
    /// With a `data` filter: first, whether the window has more than this many candidates
    /// (events matching every other filter); then the counts are too broad.
    pub scan_check: Option<usize>,
    pub reads: CountReads,
}

#[derive(Debug, Clone, PartialEq)]
pub enum CountReads {
    /// One statement over the window's events.
    Window,
    /// The whole units `whole` from a kept table (each unit lies in one bucket), and the
    /// partial units at the window's ends (`ends`, zero to two spans) from the events.
    Kept {
        table: KeptCounts,
        whole: Span,
        ends: Vec<Span>,
    },
    /// A message search, one UTC day at a time (as pages are read), newest first.
    Days(Vec<Span>),
}

/// How the counts of `q` are read.
pub fn plan_counts(q: &CountQuery) -> CountPlan {
    let scan_check = q.filters.scans_data().then_some(q.scan_limit);
    let reads = if let Some(table) = kept_counts(q) {
        let unit = table.unit();
        let first = bucket_start(q.from + unit - Duration::microseconds(1), unit);
        let end = bucket_start(q.to, unit);
        let ends = [(q.from, first), (end, q.to)]
            .into_iter()
            .filter(|(from, to)| from < to)
            .collect();
        CountReads::Kept {
            table,
            whole: (first, end),
            ends,
        }
    } else if q.filters.message.is_some() {
        CountReads::Days(days(q.from, q.to))
    } else {
        CountReads::Window
    };
    CountPlan { scan_check, reads }
}

/// The kept counts that answer `q` for the whole units of its window, if any: with no filter
/// but levels, [`KeptCounts::LevelSlots`]; with only level, event type and resource filters
/// (types by prefix too, and either excluded), [`KeptCounts::Hours`]; in either case only for
/// buckets of whole units and a window of at least two units (a shorter one reads the events).
fn kept_counts(q: &CountQuery) -> Option<KeptCounts> {
    let Filters {
        levels: _,
        event_type,
        resource,
        message,
        player_id,
        player,
        identifier,
        data,
        data_where,
        exclude,
    } = &q.filters;
    let Exclusions {
        event_types: excluded_types,
        resources: excluded_resources,
        players: excluded_players,
        message: excluded_message,
        data: excluded_data,
    } = exclude;
    if message.is_some()
        || player_id.is_some()
        || player.is_some()
        || identifier.is_some()
        || data.is_some()
        || !data_where.is_empty()
        || !excluded_players.is_empty()
        || excluded_message.is_some()
        || excluded_data.is_some()
    {
        return None;
    }
    let kept = if event_type.is_none()
        && resource.is_none()
        && excluded_types.is_empty()
        && excluded_resources.is_empty()
    {
        KeptCounts::LevelSlots
    } else {
        KeptCounts::Hours
    };
    let micros = |d: Duration| d.num_microseconds().unwrap_or(1);
    let whole_units = micros(q.bucket) % micros(kept.unit()) == 0;
    (whole_units && q.to - q.from >= kept.unit() * 2).then_some(kept)
}

/// The part of `q`'s window a page can still come from (below its cursor), cut at UTC
/// midnights (the partition bounds), newest first.
pub fn day_windows(q: &EventQuery) -> Vec<Span> {
    let to = match q.after {
        // the cursor's own instant stays in: ties continue below its id
        Some((t, _)) => q.to.min(t + Duration::microseconds(1)),
        None => q.to,
    };
    days(q.from, to)
}

/// `[from, to)` cut at UTC midnights, newest first.
pub fn days(from: DateTime<Utc>, mut to: DateTime<Utc>) -> Vec<Span> {
    let mut windows = Vec::new();
    while to > from {
        let last = to - Duration::microseconds(1);
        let midnight = last.date_naive().and_time(NaiveTime::MIN).and_utc();
        let start = from.max(midnight);
        windows.push((start, to));
        to = start;
    }
    windows
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
