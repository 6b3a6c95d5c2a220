//! The words index of message search: which runs of events can hold a match of a search term.
//!
//! A message search matches a case-insensitive substring (decisions.md). Instead of indexing
//! every event's message, the store keeps, for each run of up to [`RUN_EVENTS`] events of a
//! batch (in time order, within one UTC day), the distinct *words* of their messages and the
//! run's time span. Words are the maximal parts of a message between ASCII characters that are
//! not letters or digits ([`is_separator`]); other characters, non-ASCII letters included,
//! belong to words.
//!
//! A term is cut by the same rule into [`Piece`]s. A substring match of the term in a message
//! puts each piece inside one word of that message: at a word's start when the term has a
//! separator before the piece, at its end when it has one after it. So the runs whose words
//! hold every piece so placed are the only ones that can hold a match, and a search reads only
//! their spans of the server's events, where each message is still checked against the whole
//! term. Nothing here decides a match; it only rules events out.

use chrono::{DateTime, Utc};

/// Events per run at most: a run's words are found for all of its events at once, and a search
/// reads every event of a run whose words match.
pub const RUN_EVENTS: usize = 50;

/// A run of events and the distinct words of their messages, written as one text: each word
/// preceded and followed by a space (`" bank of transfer "`), so that a word's start and end can
/// be matched with the space beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// The earliest and latest `occurredAt` of its events (inclusive), in one UTC day.
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub words: String,
}

/// ASCII characters other than letters and digits separate words; every other character
/// (non-ASCII included) belongs to one.
pub fn is_separator(c: char) -> bool {
    c.is_ascii() && !c.is_ascii_alphanumeric()
}

/// The words of a message, in order, repeats included.
pub fn words(message: &str) -> impl Iterator<Item = &str> {
    message.split(is_separator).filter(|w| !w.is_empty())
}

/// The runs of a batch's events, given as `(occurredAt, message)`: the events in time order
/// (ties in the given order), cut every [`RUN_EVENTS`] events and at each UTC midnight.
pub fn runs<'a>(events: impl IntoIterator<Item = (DateTime<Utc>, &'a str)>) -> Vec<Run> {
    let mut events: Vec<(DateTime<Utc>, &str)> = events.into_iter().collect();
    events.sort_by_key(|(t, _)| *t);
    let mut out = Vec::new();
    let mut start = 0;
    while start < events.len() {
        let day = events[start].0.date_naive();
        let end = events[start..]
            .iter()
            .take(RUN_EVENTS)
            .take_while(|(t, _)| t.date_naive() == day)
            .count()
            + start;
        let run = &events[start..end];
        let mut distinct: Vec<&str> = run.iter().flat_map(|(_, m)| words(m)).collect();
        distinct.sort_unstable();
        distinct.dedup();
        let mut text =
            String::with_capacity(distinct.iter().map(|w| w.len() + 1).sum::<usize>() + 1);
        text.push(' ');
        for w in distinct {
            text.push_str(w);
            text.push(' ');
        }
        out.push(Run {
            from: run[0].0,
            to: run[run.len() - 1].0,
            words: text,
        });
        start = end;
    }
    out
}

/// A part of a search term between separators, and where it must sit in a word of a matching
/// message: at its start when the term has a separator before it, at its end when one follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece<'a> {
    pub text: &'a str,
    pub word_start: bool,
    pub word_end: bool,
}

impl Piece<'_> {
    /// Whether the piece, as a `LIKE` pattern over the words text, has a trigram (Postgres's
    /// `pg_trgm` pads a word with two spaces before and one after when the pattern bounds it):
    /// a piece without one cannot narrow an index search, only cost a full scan of it.
    pub fn has_trigram(&self) -> bool {
        let letters = self.text.chars().filter(|c| c.is_alphanumeric()).count();
        letters + 2 * usize::from(self.word_start) + usize::from(self.word_end) >= 3
    }
}

/// The pieces of a search term, in order (repeats kept: each is a condition, and the same
/// condition twice rules out nothing more).
pub fn pieces(term: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = term;
    let mut after_separator = false;
    while !rest.is_empty() {
        let sep_len: usize = rest
            .chars()
            .take_while(|c| is_separator(*c))
            .map(char::len_utf8)
            .sum();
        if sep_len > 0 {
            after_separator = true;
            rest = &rest[sep_len..];
            continue;
        }
        let len = rest.find(is_separator).unwrap_or(rest.len());
        out.push(Piece {
            text: &rest[..len],
            word_start: after_separator,
            word_end: len < rest.len(),
        });
        rest = &rest[len..];
    }
    out
}

/// Inclusive time spans, merged where they overlap or touch, in ascending order.
pub fn merge_spans(
    mut spans: Vec<(DateTime<Utc>, DateTime<Utc>)>,
) -> Vec<(DateTime<Utc>, DateTime<Utc>)> {
    spans.sort();
    let mut out: Vec<(DateTime<Utc>, DateTime<Utc>)> = Vec::with_capacity(spans.len());
    for (from, to) in spans {
        match out.last_mut() {
            Some(last) if from <= last.1 => last.1 = last.1.max(to),
            _ => out.push((from, to)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    fn piece(text: &str, word_start: bool, word_end: bool) -> Piece<'_> {
        Piece {
            text,
            word_start,
            word_end,
        }
    }

    #[test]
    fn words_are_cut_at_ascii_characters_other_than_letters_and_digits() {
        let w: Vec<&str> = words("[OOC] anyone selling a car_near légion-square? 42%").collect();
        assert_eq!(
            w,
            ["OOC", "anyone", "selling", "a", "car", "near", "légion", "square", "42"]
        );
        // non-ASCII characters of every kind belong to words
        let w: Vec<&str> = words("x\u{a0}y €5 日本語 👍ok").collect();
        assert_eq!(w, ["x\u{a0}y", "€5", "日本語", "👍ok"]);
        assert_eq!(words("").count(), 0);
        assert_eq!(words(" ..\t/\\ ").count(), 0);
    }

    #[test]
    fn a_run_holds_the_distinct_words_between_spaces_and_its_span() {
        let t = at("2026-11-20T10:00:00Z");
        let runs = runs([
            (t + Duration::seconds(5), "bank transfer of 4242"),
            (t, "Transfer of 7, bank"),
        ]);
        assert_eq!(
            runs,
            [Run {
                from: t,
                to: t + Duration::seconds(5),
                // case kept: Postgres's ILIKE decides what matches, not this code
                words: " 4242 7 Transfer bank of transfer ".into(),
            }]
        );
        // a message of separators only leaves the run without words
        let runs = super::runs([(t, "--")]);
        assert_eq!(runs[0].words, " ");
        assert!(super::runs(Vec::<(DateTime<Utc>, &str)>::new()).is_empty());
    }

    #[test]
    fn runs_are_cut_every_fifty_events_in_time_order() {
        let t = at("2026-11-20T10:00:00Z");
        let messages: Vec<String> = (0..RUN_EVENTS * 2 + 1).map(|i| format!("m{i}")).collect();
        // given newest first, stored oldest first
        let events: Vec<_> = messages
            .iter()
            .enumerate()
            .rev()
            .map(|(i, m)| (t + Duration::seconds(i as i64), m.as_str()))
            .collect();
        for (n, runs) in [
            (
                RUN_EVENTS - 1,
                runs(events[..RUN_EVENTS - 1].iter().copied()),
            ),
            (RUN_EVENTS, runs(events[..RUN_EVENTS].iter().copied())),
            (
                RUN_EVENTS + 1,
                runs(events[..RUN_EVENTS + 1].iter().copied()),
            ),
        ] {
            let sizes: Vec<usize> = runs
                .iter()
                .map(|r| r.words.split(' ').filter(|w| !w.is_empty()).count())
                .collect();
            let expected: Vec<usize> = if n <= RUN_EVENTS {
                vec![n]
            } else {
                vec![RUN_EVENTS, 1]
            };
            assert_eq!(sizes, expected, "{n} events");
        }
        let all = runs(events.iter().copied());
        assert_eq!(all.len(), 3);
        assert_eq!(all[0].from, t);
        assert_eq!(all[0].to, t + Duration::seconds(RUN_EVENTS as i64 - 1));
        assert_eq!(all[2].from, t + Duration::seconds(2 * RUN_EVENTS as i64));
        assert!(all[1].words.contains(" m50 ") && all[1].words.contains(" m99 "));
    }

    #[test]
    fn runs_end_at_utc_midnight() {
        let runs = runs([
            (at("2026-11-20T23:59:59.999999Z"), "late"),
            (at("2026-11-21T00:00:00Z"), "early"),
            (at("2026-11-20T00:00:00Z"), "first"),
        ]);
        let spans: Vec<_> = runs
            .iter()
            .map(|r| (r.from, r.to, r.words.as_str()))
            .collect();
        assert_eq!(
            spans,
            [
                (
                    at("2026-11-20T00:00:00Z"),
                    at("2026-11-20T23:59:59.999999Z"),
                    " first late "
                ),
                (
                    at("2026-11-21T00:00:00Z"),
                    at("2026-11-21T00:00:00Z"),
                    " early "
                ),
            ]
        );
    }

    #[test]
    fn a_term_is_cut_into_pieces_that_know_their_word_bounds() {
        assert_eq!(pieces("speedhack"), [piece("speedhack", false, false)]);
        assert_eq!(
            pieces("transfer of 4242"),
            [
                piece("transfer", false, true),
                piece("of", true, true),
                piece("4242", true, false)
            ]
        );
        assert_eq!(
            pieces(" [OOC]  légion-"),
            [piece("OOC", true, true), piece("légion", true, true)]
        );
        assert_eq!(pieces("100%"), [piece("100", false, true)]);
        assert!(pieces("").is_empty());
        assert!(pieces(" -_%\\ ").is_empty());
        assert_eq!(pieces("€€€"), [piece("€€€", false, false)]);
    }

    #[test]
    fn a_piece_narrows_an_index_search_only_with_a_trigram() {
        // two letters alone have none; bounded, pg_trgm pads them into some
        assert!(!piece("of", false, false).has_trigram());
        assert!(piece("off", false, false).has_trigram());
        assert!(piece("of", false, true).has_trigram());
        assert!(piece("o", true, false).has_trigram());
        assert!(!piece("o", false, true).has_trigram());
        // symbols are not letters to pg_trgm, whatever their count
        assert!(!piece("€€€", false, false).has_trigram());
        assert!(piece("日本語", false, false).has_trigram());
    }

    #[test]
    fn spans_merge_where_they_overlap_or_touch() {
        let t = |s: i64| at("2026-11-20T00:00:00Z") + Duration::seconds(s);
        assert_eq!(
            merge_spans(vec![
                (t(10), t(20)),
                (t(0), t(5)),
                (t(20), t(30)),
                (t(12), t(15)),
                (t(31), t(31))
            ]),
            [(t(0), t(5)), (t(10), t(30)), (t(31), t(31))]
        );
        assert!(merge_spans(vec![]).is_empty());
    }
}
