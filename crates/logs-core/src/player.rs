//! `POST /v1/logs/player`: one player across every server a key may read — who they are (the
//! identifiers and names seen with them), when they were seen, their sessions, what happened to
//! them by event type — and one timeline of every event where they are the actor or the target.
//!
//! The summary is made here from the player's newest events ([`summarize`]); the timeline is the
//! newest-first merge of each server's page ([`merge_pages`]), so any store that answers a
//! one-server search answers this too.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::criteria::PlayerMatch;
use crate::query::{DEFAULT_LIMIT, MAX_LIMIT};
use crate::search::{validate_search, RangeLimit, Search, SearchFields};
use crate::store::EventRow;

/// How many of the player's newest events (over all servers) the summary is made from.
pub const SAMPLE: usize = 5_000;
/// Servers one request may name.
pub const MAX_SERVERS: usize = 50;
/// Event types that start a session (the player as actor).
pub const JOIN_TYPES: [&str; 3] = ["player.join", "player.connect", "player.connected"];
/// Event types that end one.
pub const LEAVE_TYPES: [&str; 5] = [
    "player.leave",
    "player.drop",
    "player.dropped",
    "player.disconnect",
    "player.quit",
];
/// `data` keys that hold the name of the event's player, and of its target.
pub const NAME_KEYS: [&str; 3] = ["playerName", "player_name", "name"];
pub const TARGET_NAME_KEYS: [&str; 2] = ["targetName", "target_name"];
/// Names and identifier values kept per kind in a summary.
pub const MAX_SEEN: usize = 20;

/// `POST /v1/logs/player`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlayerRequest {
    /// A player id or any identifier the player carries (`license:…`, `discord:…`), as in the
    /// search field `player`.
    pub player: Option<String>,
    /// Join codes of the servers to look on (1 to 50); default every server the key may read
    /// whose Logs source is active.
    pub server_ids: Option<Vec<String>>,
    /// Start of the window, inclusive (RFC 3339); any length, `from` raised to the plan's
    /// retention.
    pub from: Option<String>,
    /// End of the window, exclusive (RFC 3339).
    pub to: Option<String>,
    /// Timeline events per page, 1 to 100 (default 100).
    pub limit: Option<i64>,
    /// `pagination.nextCursor` of the previous page (the summary comes with the first page only).
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ValidPlayer {
    pub player: PlayerMatch,
    /// The window and the player filter, as one search of each server.
    pub search: Search,
    pub limit: usize,
}

pub fn validate(req: &PlayerRequest) -> Result<ValidPlayer, String> {
    let Some(player) = &req.player else {
        return Err(
            "`player` is required: a player id or an identifier such as license:abc".into(),
        );
    };
    if let Some(list) = &req.server_ids {
        if list.is_empty() || list.len() > MAX_SERVERS {
            return Err(format!(
                "`serverIds` must name 1 to {MAX_SERVERS} servers (got {})",
                list.len()
            ));
        }
    }
    let search = validate_search(
        &SearchFields {
            from: req.from.clone(),
            to: req.to.clone(),
            player: Some(player.clone()),
            ..Default::default()
        },
        RangeLimit::None,
    )?;
    let limit = match req.limit {
        None => DEFAULT_LIMIT,
        Some(n) if (1..=MAX_LIMIT as i64).contains(&n) => n as usize,
        Some(n) => return Err(format!("`limit` must be 1 to {MAX_LIMIT} (got {n})")),
    };
    Ok(ValidPlayer {
        player: PlayerMatch::parse("player", player)?,
        search,
        limit,
    })
}

/// A digest of what a timeline cursor is bound to: the player, the servers (registered ids, in
/// any order), `from` and `to`.
pub fn digest(v: &ValidPlayer, servers: &[&str]) -> String {
    let mut servers: Vec<&str> = servers.to_vec();
    servers.sort_unstable();
    let value = serde_json::json!({
        "player": v.player.id,
        "servers": servers,
        "from": v.search.from.timestamp_micros(),
        "to": v.search.to.timestamp_micros(),
    });
    hex::encode(&auth_core::canonical::digest(&value)[..16])
}

/// Each server's page (newest first) merged into one, newest first, ties by id (ids are unique
/// across servers), at most `limit` rows.
pub fn merge_pages(pages: Vec<Vec<EventRow>>, limit: usize) -> Vec<EventRow> {
    let mut all: Vec<EventRow> = pages.into_iter().flatten().collect();
    all.sort_by_key(|r| std::cmp::Reverse((r.occurred_at, r.id)));
    all.truncate(limit);
    all
}

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Seen {
    pub value: String,
    pub count: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    /// The server's join code.
    pub server_id: String,
    /// `null` when the sample starts inside the session (a leave without its join).
    pub joined_at: Option<DateTime<Utc>>,
    /// `null` while the player is still on (or the leave is not in the window).
    pub left_at: Option<DateTime<Utc>>,
    pub duration_seconds: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// How many of the player's events the summary is made from.
    pub examined: i64,
    /// `true` when the player has more events in the window than were examined (the newest were).
    pub sampled: bool,
    pub first_seen: Option<DateTime<Utc>>,
    pub last_seen: Option<DateTime<Utc>>,
    /// The identifiers seen with the player (on their side of an event), by kind, each value
    /// with how many events carried it; most frequent first.
    #[schema(value_type = Object)]
    pub identifiers: BTreeMap<String, Vec<Seen>>,
    /// Names seen with the player (`data.playerName`, `player_name` or `name` when they are the
    /// actor; `data.targetName` or `target_name` when they are the target), most frequent first.
    pub names: Vec<Seen>,
    /// Join codes of the servers they were seen on, most events first.
    pub servers: Vec<Seen>,
    /// Events by type, most frequent first.
    pub event_types: Vec<Seen>,
    /// Join → leave as the actor, per server, newest first.
    pub sessions: Vec<Session>,
}

fn ranked(counts: HashMap<String, i64>, keep: usize) -> Vec<Seen> {
    let mut v: Vec<Seen> = counts
        .into_iter()
        .map(|(value, count)| Seen { value, count })
        .collect();
    v.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.value.cmp(&b.value)));
    v.truncate(keep);
    v
}

/// The summary of the player's events `rows` (any order); `sampled` when there were more.
pub fn summarize(player: &PlayerMatch, rows: &[EventRow], sampled: bool) -> Summary {
    let mut identifiers: BTreeMap<String, HashMap<String, i64>> = BTreeMap::new();
    let mut names: HashMap<String, i64> = HashMap::new();
    let mut servers: HashMap<String, i64> = HashMap::new();
    let mut types: HashMap<String, i64> = HashMap::new();
    for r in rows {
        *servers.entry(r.cfx_id.clone()).or_default() += 1;
        *types.entry(r.event_type.clone()).or_default() += 1;
        let sides = [
            (player.is_actor(r), &r.player_identifiers, &NAME_KEYS[..]),
            (
                player.is_target(r),
                &r.target_player_identifiers,
                &TARGET_NAME_KEYS[..],
            ),
        ];
        for (on_side, ids, name_keys) in sides {
            if !on_side {
                continue;
            }
            if let Some(Value::Object(m)) = ids {
                for (kind, v) in m {
                    if let Some(v) = v.as_str() {
                        *identifiers
                            .entry(kind.clone())
                            .or_default()
                            .entry(v.to_owned())
                            .or_default() += 1;
                    }
                }
            }
            let name = name_keys.iter().find_map(|k| {
                r.data
                    .as_ref()
                    .and_then(|d| d.get(*k))
                    .and_then(Value::as_str)
                    .filter(|n| !n.trim().is_empty())
            });
            if let Some(n) = name {
                *names.entry(n.to_owned()).or_default() += 1;
            }
        }
    }
    Summary {
        examined: rows.len() as i64,
        sampled,
        first_seen: rows.iter().map(|r| r.occurred_at).min(),
        last_seen: rows.iter().map(|r| r.occurred_at).max(),
        identifiers: identifiers
            .into_iter()
            .map(|(k, v)| (k, ranked(v, MAX_SEEN)))
            .collect(),
        names: ranked(names, MAX_SEEN),
        servers: ranked(servers, MAX_SERVERS),
        event_types: ranked(types, 50),
        sessions: sessions(player, rows),
    }
}

/// The player's sessions: per server, in time order, a join opens one (closing an open one with
/// no known end) and a leave closes it; a leave with none open is a session whose start is not in
/// the sample. Newest first.
fn sessions(player: &PlayerMatch, rows: &[EventRow]) -> Vec<Session> {
    let mut ordered: Vec<&EventRow> = rows
        .iter()
        .filter(|r| {
            player.is_actor(r)
                && (JOIN_TYPES.contains(&r.event_type.as_str())
                    || LEAVE_TYPES.contains(&r.event_type.as_str()))
        })
        .collect();
    ordered.sort_by_key(|r| (r.occurred_at, r.id));
    let mut open: HashMap<&str, DateTime<Utc>> = HashMap::new();
    let mut out = Vec::new();
    for r in ordered {
        let server = r.cfx_id.as_str();
        if JOIN_TYPES.contains(&r.event_type.as_str()) {
            if let Some(joined) = open.insert(server, r.occurred_at) {
                out.push(session(server, Some(joined), None));
            }
        } else {
            let joined = open.remove(server);
            out.push(session(server, joined, Some(r.occurred_at)));
        }
    }
    out.extend(open.into_iter().map(|(s, j)| session(s, Some(j), None)));
    out.sort_by(|a, b| {
        let key = |s: &Session| s.joined_at.or(s.left_at);
        key(b)
            .cmp(&key(a))
            .then_with(|| a.server_id.cmp(&b.server_id))
    });
    out
}

fn session(server: &str, joined: Option<DateTime<Utc>>, left: Option<DateTime<Utc>>) -> Session {
    Session {
        server_id: server.to_owned(),
        joined_at: joined,
        left_at: left,
        duration_seconds: match (joined, left) {
            (Some(j), Some(l)) => Some((l - j).num_seconds()),
            _ => None,
        },
    }
}

#[cfg(test)]
#[path = "player_tests.rs"]
mod tests;
