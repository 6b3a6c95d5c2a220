//! `POST /v1/logs/players`: players looked up by a name, across the servers a key may read. A
//! name is not an identity (two players can share one, one player changes theirs), so the
//! answer is every player seen under it: the events whose player is named so
//! ([`actor_name`]) grouped by who that player is ([`identity`]), each with the identifier to
//! open their player view by.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::player::NAME_KEYS;
use crate::search::{validate_search, RangeLimit, Search, SearchFields};
use crate::store::EventRow;

/// Longest name looked up, in characters.
pub const MAX_NAME_CHARS: usize = 64;
/// Events read per server for one lookup (the newest).
pub const PER_SERVER: usize = 500;
/// Players answered, most events first.
pub const MAX_MATCHES: usize = 50;
/// Identifier kinds preferred to open a player by, best first (a license is the one FiveM
/// identifier every player has and keeps).
pub const PREFERRED: [&str; 4] = ["license", "license2", "fivem", "discord"];

/// `POST /v1/logs/players`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlayersRequest {
    /// The name, 1 to 64 characters, matched whole and case-insensitively.
    pub name: Option<String>,
    /// Join codes of the servers to look on (1 to 50); default every server the key may read
    /// whose Logs source is active.
    pub server_ids: Option<Vec<String>>,
    /// Start of the window, inclusive (RFC 3339); any length, raised to the plan's retention.
    pub from: Option<String>,
    /// End of the window, exclusive (RFC 3339).
    pub to: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ValidPlayers {
    /// Lowercased.
    pub name: String,
    pub search: Search,
}

pub fn validate(req: &PlayersRequest) -> Result<ValidPlayers, String> {
    let name = req.name.as_deref().ok_or("`name` is required")?.trim();
    let n = name.chars().count();
    if n == 0 || n > MAX_NAME_CHARS || name.contains('\0') {
        return Err(format!(
            "`name` must be 1 to {MAX_NAME_CHARS} characters without U+0000 (got {n})"
        ));
    }
    if let Some(list) = &req.server_ids {
        if list.is_empty() || list.len() > crate::player::MAX_SERVERS {
            return Err(format!(
                "`serverIds` must name 1 to {} servers (got {})",
                crate::player::MAX_SERVERS,
                list.len()
            ));
        }
    }
    let fields = SearchFields {
        from: req.from.clone(),
        to: req.to.clone(),
        ..Default::default()
    };
    Ok(ValidPlayers {
        name: name.to_lowercase(),
        search: validate_search(&fields, RangeLimit::None)?,
    })
}

/// The name of an event's player: the first of `data.playerName`, `data.player_name` and
/// `data.name` that is present (a string, or any other value as its JSON text) — what the
/// `log_actor_name` index of Postgres computes too.
pub fn actor_name(data: &Option<Value>) -> Option<String> {
    let data = data.as_ref()?.as_object()?;
    let v = NAME_KEYS.iter().find_map(|k| data.get(*k))?;
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// Who the player of `e` is, to group events by: their preferred identifier ([`PREFERRED`],
/// written `kind:value`), else any identifier they carry, else their in-game id on that server
/// (which only names them for a session).
pub fn identity(e: &EventRow) -> String {
    let ids: BTreeMap<&str, &str> = e
        .player_identifiers
        .as_ref()
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.as_str(), v)))
                .collect()
        })
        .unwrap_or_default();
    let whole = |kind: &str, v: &str| {
        if v.starts_with(&format!("{kind}:")) {
            v.to_owned()
        } else {
            format!("{kind}:{v}")
        }
    };
    for kind in PREFERRED {
        if let Some(v) = ids.get(kind) {
            return whole(kind, v);
        }
    }
    if let Some((kind, v)) = ids.iter().next() {
        return whole(kind, v);
    }
    e.player_id.clone().unwrap_or_default()
}

/// One player seen under the name.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Match {
    /// What to open their player view by (`POST /v1/logs/player`'s `player`).
    pub player: String,
    /// The names as the events wrote them (case kept), most frequent first.
    pub names: Vec<String>,
    /// Join codes of the servers they were seen on under the name, in the order of `rows`
    /// (the API passes them newest first: the most recent server first).
    pub servers: Vec<String>,
    /// Events naming them so (of the newest read).
    pub count: i64,
    pub last_seen: DateTime<Utc>,
}

/// The players of `rows` (events whose player has the name), most events first, then the most
/// recently seen; at most [`MAX_MATCHES`].
pub fn matches(rows: &[EventRow]) -> Vec<Match> {
    #[derive(Default)]
    struct Seen {
        names: HashMap<String, i64>,
        servers: Vec<String>,
        count: i64,
        last: Option<DateTime<Utc>>,
    }
    let mut by: HashMap<String, Seen> = HashMap::new();
    for e in rows {
        let who = identity(e);
        if who.is_empty() {
            continue;
        }
        let seen = by.entry(who).or_default();
        seen.count += 1;
        seen.last = seen.last.max(Some(e.occurred_at));
        if let Some(n) = actor_name(&e.data) {
            *seen.names.entry(n).or_default() += 1;
        }
        if !seen.servers.contains(&e.cfx_id) {
            seen.servers.push(e.cfx_id.clone());
        }
    }
    let mut out: Vec<Match> = by
        .into_iter()
        .filter_map(|(player, s)| {
            let mut names: Vec<(String, i64)> = s.names.into_iter().collect();
            names.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            Some(Match {
                player,
                names: names.into_iter().map(|(n, _)| n).collect(),
                servers: s.servers,
                count: s.count,
                last_seen: s.last?,
            })
        })
        .collect();
    out.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then_with(|| b.last_seen.cmp(&a.last_seen))
            .then_with(|| a.player.cmp(&b.player))
    });
    out.truncate(MAX_MATCHES);
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn event(
        id: i64,
        server: &str,
        data: Value,
        ids: Option<Value>,
        player: Option<&str>,
    ) -> EventRow {
        EventRow {
            cfx_id: server.into(),
            data: Some(data),
            player_identifiers: ids,
            player_id: player.map(Into::into),
            occurred_at: DateTime::from_timestamp(1_800_000_000 + id, 0).unwrap(),
            ..EventRow::fixture(id)
        }
    }

    #[test]
    fn the_name_is_the_first_name_key_present() {
        assert_eq!(
            actor_name(&Some(json!({ "playerName": "Jay", "name": "x" }))),
            Some("Jay".into())
        );
        assert_eq!(
            actor_name(&Some(json!({ "player_name": "Mia" }))),
            Some("Mia".into())
        );
        assert_eq!(actor_name(&Some(json!({ "name": 12 }))), Some("12".into()));
        assert_eq!(actor_name(&Some(json!({ "playerName": null }))), None);
        assert_eq!(
            actor_name(&Some(json!({ "targetName": "Jay" }))),
            None,
            "the target's name is not the player's"
        );
        assert_eq!(actor_name(&Some(json!(["Jay"]))), None);
        assert_eq!(actor_name(&None), None);
    }

    #[test]
    fn a_name_is_one_to_64_characters_and_looked_up_lowercased() {
        let req = |name: &str| PlayersRequest {
            name: Some(name.into()),
            from: Some("2026-11-01T00:00:00Z".into()),
            to: Some("2026-11-27T00:00:00Z".into()),
            ..Default::default()
        };
        assert_eq!(validate(&req(" Jäy ")).unwrap().name, "jäy");
        assert!(validate(&req(&"é".repeat(64))).is_ok());
        assert!(validate(&req(&"é".repeat(65)))
            .unwrap_err()
            .contains("`name` must be 1 to 64 characters"));
        assert!(validate(&req("  ")).is_err());
        assert!(validate(&PlayersRequest::default())
            .unwrap_err()
            .contains("`name` is required"));
        // any window: retention bounds it later
        let mut year = req("Jay");
        year.from = Some("2025-11-01T00:00:00Z".into());
        assert!(validate(&year).is_ok());
    }

    #[test]
    fn players_are_told_apart_by_who_they_are_not_by_the_name() {
        let jay = json!({ "license": "license:abc", "discord": "discord:1" });
        let other_jay = json!({ "discord": "discord:2" });
        let rows = [
            event(
                1,
                "srv1",
                json!({ "playerName": "Jay" }),
                Some(jay.clone()),
                Some("12"),
            ),
            event(
                2,
                "srv2",
                json!({ "playerName": "jay" }),
                Some(json!({ "license": "abc" })),
                Some("40"),
            ),
            event(
                3,
                "srv1",
                json!({ "playerName": "Jay" }),
                Some(other_jay),
                Some("7"),
            ),
            // no identifiers: the in-game id is all there is
            event(4, "srv1", json!({ "playerName": "Jay" }), None, Some("3")),
            // nobody at all: left out
            event(5, "srv1", json!({ "playerName": "Jay" }), None, None),
        ];
        let found = matches(&rows);
        let players: Vec<&str> = found.iter().map(|m| m.player.as_str()).collect();
        // both license forms are one player; the newest breaks the tie of the others
        assert_eq!(players, ["license:abc", "3", "discord:2"]);
        assert_eq!(found[0].count, 2);
        assert_eq!(found[0].servers, ["srv1", "srv2"]);
        assert_eq!(found[0].names, ["Jay", "jay"]);
        assert_eq!(found[0].last_seen, rows[1].occurred_at);
    }
}
