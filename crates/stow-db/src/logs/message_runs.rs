//! Message search through the words of runs (`log_runs`, migration 13; the rule is
//! [`logs_core::words`]): before events are read for a search with a message term, the runs of
//! the window whose words hold every piece of the term say which spans of the server's events
//! can hold a match. Reading only those spans replaces a trigram index on every event's message.

use chrono::{DateTime, Utc};
use diesel::sql_types::Timestamptz;
use diesel_async::RunQueryDsl;
use logs_core::store::{Filters, SearchError, ServerId};
use logs_core::words::{merge_spans, pieces, Piece};

use super::search_sql::{like_escape, Sql};
use crate::{db_error, Conn};

/// Candidate runs in one read beyond which the spans are not read: a term in that many runs is
/// frequent enough that reading the server's events in order, each checked, finds a page
/// sooner than reading every candidate's span (docs/benchmarks.md, "Trigrams per batch").
pub const MAX_RUNS: usize = 256;

/// Where a read finds the events that can match its message term.
#[derive(Debug, Clone, PartialEq)]
pub enum Within {
    /// Anywhere in the window: no message term, no piece of it an index can use, or more
    /// candidate runs than [`MAX_RUNS`].
    Window,
    /// Only in these time spans (inclusive, ascending, disjoint); none: nothing can match.
    Spans(Vec<(DateTime<Utc>, DateTime<Utc>)>),
}

impl Within {
    /// Nothing in the window can match: the read can be skipped.
    pub fn is_empty(&self) -> bool {
        matches!(self, Within::Spans(s) if s.is_empty())
    }
}

#[derive(diesel::QueryableByName)]
struct RunSpan {
    #[diesel(sql_type = Timestamptz)]
    occurred_from: DateTime<Utc>,
    #[diesel(sql_type = Timestamptz)]
    occurred_to: DateTime<Utc>,
}

/// A piece as a pattern over a run's words text (each word between spaces).
fn words_pattern(p: &Piece) -> String {
    format!(
        "%{}{}{}%",
        if p.word_start { " " } else { "" },
        like_escape(p.text),
        if p.word_end { " " } else { "" }
    )
}

/// The statement that finds the candidate runs of `[from, to)`, or `None` when the term has no
/// piece an index can use. One more row than [`MAX_RUNS`] is asked for, to know there are more.
fn candidates_sql(
    server: &ServerId,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    term: &str,
) -> Option<Sql> {
    let usable: Vec<Piece> = pieces(term)
        .into_iter()
        .filter(Piece::has_trigram)
        .collect();
    if usable.is_empty() {
        return None;
    }
    // runs lie within one UTC day, so one overlapping the window starts on or after its
    // first day's midnight: a range of the `(server_id, occurred_from)` btree
    let midnight = from.date_naive().and_time(chrono::NaiveTime::MIN).and_utc();
    let mut sql = Sql::new("SELECT occurred_from, occurred_to FROM log_runs WHERE server_id = ");
    sql.text(server.to_string())
        .push(" AND occurred_from >= ")
        .time(midnight)
        .push(" AND occurred_from < ")
        .time(to)
        .push(" AND occurred_to >= ")
        .time(from);
    for p in &usable {
        sql.push(" AND words ILIKE ").text(words_pattern(p));
    }
    sql.push(" LIMIT ").bigint(MAX_RUNS as i64 + 1);
    Some(sql)
}

/// Where the events of `[from, to)` that can match the filters' message term are.
pub async fn within(
    conn: &mut Conn,
    server: &ServerId,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    filters: &Filters,
) -> Result<Within, SearchError> {
    let Some(term) = &filters.message else {
        return Ok(Within::Window);
    };
    let Some(sql) = candidates_sql(server, from, to, term) else {
        return Ok(Within::Window);
    };
    let runs: Vec<RunSpan> = sql.into_query().load(conn).await.map_err(db_error)?;
    if runs.len() > MAX_RUNS {
        return Ok(Within::Window);
    }
    Ok(Within::Spans(merge_spans(
        runs.into_iter()
            .map(|r| (r.occurred_from, r.occurred_to))
            .collect(),
    )))
}

/// The message spans of a window read day by day (pages, counts): one lookup for the whole
/// window first; when it finds at most [`MAX_RUNS`] candidates, each day takes its share of
/// them with no statement of its own, else each day looks up its own candidates (a term frequent
/// over the window may still be rare on some of its days). Rare terms, the ones read through
/// spans, then cost one lookup instead of one per day.
pub struct Days {
    whole: Within,
}

impl From<Within> for Days {
    /// From the spans of the window the days cover together.
    fn from(whole: Within) -> Self {
        Self { whole }
    }
}

impl Days {
    /// For `days`, consecutive and newest first (none: nothing to read).
    pub async fn new(
        conn: &mut Conn,
        server: &ServerId,
        days: &[(DateTime<Utc>, DateTime<Utc>)],
        filters: &Filters,
    ) -> Result<Self, SearchError> {
        let whole = match (days.last(), days.first()) {
            (Some(&(from, _)), Some(&(_, to))) => within(conn, server, from, to, filters).await?,
            _ => Within::Spans(Vec::new()),
        };
        Ok(Self { whole })
    }

    /// Where the matches of `[from, to)`, a day of the window, can be.
    pub async fn day(
        &self,
        conn: &mut Conn,
        server: &ServerId,
        (from, to): (DateTime<Utc>, DateTime<Utc>),
        filters: &Filters,
    ) -> Result<Within, SearchError> {
        match &self.whole {
            Within::Spans(spans) => Ok(Within::Spans(
                spans
                    .iter()
                    .filter(|(f, t)| *f < to && *t >= from)
                    .copied()
                    .collect(),
            )),
            Within::Window => within(conn, server, from, to, filters).await,
        }
    }
}

impl Sql {
    /// `AND` the spans of `within` (nothing for the whole window). Called with no spans, the
    /// condition is false.
    pub fn within(&mut self, within: &Within) -> &mut Self {
        let Within::Spans(spans) = within else {
            return self;
        };
        if spans.is_empty() {
            return self.push(" AND false");
        }
        self.push(" AND (");
        for (i, (from, to)) in spans.iter().enumerate() {
            if i > 0 {
                self.push(" OR ");
            }
            self.push("occurred_at BETWEEN ")
                .time(*from)
                .push(" AND ")
                .time(*to);
        }
        self.push(")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    #[test]
    fn each_usable_piece_is_a_pattern_placed_by_its_word_bounds() {
        let server = ServerId::new("s");
        let (from, to) = (at("2026-11-20T06:00:00Z"), at("2026-11-21T00:00:00Z"));
        let sql = candidates_sql(&server, from, to, "transfer of 4242").unwrap();
        assert_eq!(
            sql.sql(),
            "SELECT occurred_from, occurred_to FROM log_runs WHERE server_id = $1 \
             AND occurred_from >= $2 AND occurred_from < $3 AND occurred_to >= $4 \
             AND words ILIKE $5 AND words ILIKE $6 AND words ILIKE $7 LIMIT $8"
        );
        assert_eq!(
            words_pattern(&pieces("transfer of 4242")[1]),
            "% of %",
            "a piece between separators is a whole word"
        );
        assert_eq!(words_pattern(&pieces("x 100%_")[1]), "% 100 %");
        assert_eq!(words_pattern(&pieces("a\\b")[1]), "% b%");
        // pieces without a trigram are left to the check of each message
        let sql = candidates_sql(&server, from, to, "x speedhack").unwrap();
        assert_eq!(sql.sql().matches("ILIKE").count(), 1, "{}", sql.sql());
        assert!(candidates_sql(&server, from, to, "of").is_none());
        assert!(candidates_sql(&server, from, to, "--").is_none());
    }

    #[test]
    fn spans_are_conditions_and_no_span_matches_nothing() {
        let mut sql = Sql::new("x");
        sql.within(&Within::Window);
        assert_eq!(sql.sql(), "x");
        let mut sql = Sql::new("x");
        sql.within(&Within::Spans(vec![]));
        assert_eq!(sql.sql(), "x AND false");
        let t = at("2026-11-20T06:00:00Z");
        let mut sql = Sql::new("x");
        sql.within(&Within::Spans(vec![(t, t), (t, t)]));
        assert_eq!(
            sql.sql(),
            "x AND (occurred_at BETWEEN $1 AND $2 OR occurred_at BETWEEN $3 AND $4)"
        );
    }
}
