//! `POST /v1/logs/patterns`: a search's messages grouped into templates, so 340 identical
//! `ECONNRESET` errors are one line with a count. A template is the message's first line with
//! the parts that vary masked ([`template`]); events are grouped by resource and template over the
//! newest [`SAMPLE`] events of the search, with a count, first and last seen, the newest message
//! as an example and a trend over the window.

use chrono::{DateTime, Utc};

use crate::search::{validate_search, RangeLimit, Search};
use crate::store::EventRow;

/// How many of the search's newest events are grouped.
pub const SAMPLE: usize = 10_000;
pub const DEFAULT_TOP: usize = 50;
pub const MAX_TOP: usize = 200;
/// Equal parts of the window each pattern's trend counts.
pub const TREND_BUCKETS: usize = 12;
/// What a masked part reads as.
pub const MASK: &str = "<*>";
/// Characters of a template kept (a longer one ends in `…`).
pub const MAX_TEMPLATE_CHARS: usize = 200;

crate::search_request! {
    /// `POST /v1/logs/patterns`.
    pub struct PatternsRequest {
        /// Patterns answered, 1 to 200 (default 50), most frequent first.
        pub top: Option<i64>,
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ValidPatterns {
    pub search: Search,
    pub top: usize,
}

pub fn validate(req: &PatternsRequest) -> Result<ValidPatterns, String> {
    let search = validate_search(&req.search(), RangeLimit::None)?;
    let top = match req.top {
        None => DEFAULT_TOP,
        Some(n) if (1..=MAX_TOP as i64).contains(&n) => n as usize,
        Some(n) => return Err(format!("`top` must be 1 to {MAX_TOP} (got {n})")),
    };
    Ok(ValidPatterns { search, top })
}

/// Whether `c` may be part of a word-like token: letters, digits and the punctuation that holds
/// ids, numbers, addresses and identifiers together (`license:ab12`, `10.0.0.1:30120`, `1,250.50`,
/// `a1b2-c3d4`).
fn token_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '/' | '@' | '#' | ',' | '+')
}

/// Whether a quote at this point opens a quoted value: `"` always, `'` and `` ` `` only at the
/// start of a token (so the apostrophe of `player's` is text).
fn opens_quote(c: char, prev: Option<char>) -> bool {
    c == '"' || (matches!(c, '\'' | '`') && prev.is_none_or(|p| !p.is_alphanumeric()))
}

/// The message's template: its first line, every quoted value (`"…"`, `'…'`, `` `…` ``) and
/// every token holding a digit (numbers, ids, addresses, identifiers, money) masked as `<*>`,
/// runs of whitespace as one space, at most [`MAX_TEMPLATE_CHARS`] characters.
pub fn template(message: &str) -> String {
    let line = message.lines().next().unwrap_or("").trim();
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let prev = i.checked_sub(1).map(|p| chars[p]);
        if opens_quote(c, prev) {
            if let Some(len) = chars[i + 1..].iter().position(|&q| q == c) {
                out.push(c);
                out.push_str(MASK);
                out.push(c);
                i += len + 2;
                continue;
            }
        }
        if token_char(c) {
            let end = chars[i..]
                .iter()
                .position(|&t| !token_char(t))
                .map_or(chars.len(), |n| i + n);
            let token = &chars[i..end];
            if token.iter().any(char::is_ascii_digit) {
                // keep what ends a sentence or a list outside the mask: "at 5." → "at <*>."
                let trail = token
                    .iter()
                    .rev()
                    .take_while(|t| matches!(t, '.' | ',' | ':'))
                    .count();
                out.push_str(MASK);
                out.extend(&token[token.len() - trail..]);
            } else {
                out.extend(token);
            }
            i = end;
            continue;
        }
        if c.is_whitespace() {
            if !out.ends_with(' ') {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
        i += 1;
    }
    if out.chars().count() > MAX_TEMPLATE_CHARS {
        out = out.chars().take(MAX_TEMPLATE_CHARS - 1).collect();
        out.push('…');
    }
    out
}

/// One group of a search's events, as answered.
#[derive(Debug, Clone, PartialEq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Pattern {
    /// The first line of the messages with numbers, ids and quoted values masked as `<*>`.
    pub template: String,
    /// `null` for events without a resource.
    pub resource: Option<String>,
    pub count: i64,
    pub first_seen: DateTime<Utc>,
    pub last_seen: DateTime<Utc>,
    /// The newest event's whole message.
    pub example: String,
    /// Events in each of `trendBuckets` ([`TREND_BUCKETS`]) equal parts of the window, oldest
    /// first.
    pub trend: Vec<i64>,
}

/// The patterns of `rows` (newest first, as a search reads them) in the window `[from, to)`:
/// the `top` most frequent, ties by the most recently seen, then by template.
pub fn tally(
    rows: &[EventRow],
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    top: usize,
) -> Vec<Pattern> {
    use std::collections::HashMap;
    let span = (to - from).num_microseconds().unwrap_or(i64::MAX).max(1);
    let bucket = |t: DateTime<Utc>| {
        let at = (t - from)
            .num_microseconds()
            .unwrap_or(0)
            .clamp(0, span - 1);
        // i128: `at * buckets` overflows i64 for windows of a few thousand years
        (i128::from(at) * TREND_BUCKETS as i128 / i128::from(span)) as usize
    };
    let mut groups: HashMap<(Option<&str>, String), Pattern> = HashMap::new();
    for r in rows {
        let key = (r.resource.as_deref(), template(&r.message));
        let p = groups
            .entry(key)
            .or_insert_with_key(|(resource, t)| Pattern {
                template: t.clone(),
                resource: resource.map(str::to_owned),
                count: 0,
                first_seen: r.occurred_at,
                last_seen: r.occurred_at,
                example: r.message.clone(),
                trend: vec![0; TREND_BUCKETS],
            });
        p.count += 1;
        if r.occurred_at > p.last_seen {
            p.last_seen = r.occurred_at;
            p.example = r.message.clone();
        }
        p.first_seen = p.first_seen.min(r.occurred_at);
        p.trend[bucket(r.occurred_at)] += 1;
    }
    let mut v: Vec<Pattern> = groups.into_values().collect();
    v.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then_with(|| b.last_seen.cmp(&a.last_seen))
            .then_with(|| a.template.cmp(&b.template))
            .then_with(|| a.resource.cmp(&b.resource))
    });
    v.truncate(top);
    v
}

#[cfg(test)]
#[path = "patterns_tests.rs"]
mod tests;
