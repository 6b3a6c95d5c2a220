//! What every log read shares (query, counts, facets, export, tail): the search fields as sent,
//! their validation into a window and [`Filters`], and the filters' meaning on one event, which
//! the in-memory store and the live tail apply and the Postgres store reproduces in SQL.
//!
//! A `data` filter is JSON containment as PostgreSQL's `jsonb @>` defines it: every key of the
//! filter is in the event's data with a value that contains the filter's value (objects
//! recursively, arrays as "every element of the filter's array is contained in some element of
//! the event's", scalars equal, numbers by value so `1` matches `1.0`).

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::criteria::{
    self, DataCondition, DataConditionRequest, ExcludeRequest, Exclusions, PlayerMatch, TypeMatch,
};
use crate::event::Level;
use crate::store::{EventRow, IdentifierFilter, Owner};

mod validate;
pub(crate) use validate::{data_filter, nul_error};
pub use validate::{validate_filters, validate_search};

pub const MAX_FILTER_CHARS: usize = 256;
/// The size of a `data` filter, as compact JSON.
pub const MAX_DATA_FILTER_BYTES: usize = 1024;
/// How deep a `data` filter may nest objects and arrays.
pub const MAX_DATA_FILTER_DEPTH: usize = 8;

/// The level names a request may use.
const LEVEL_NAMES: &str = "debug, info, warn, error, fatal";

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct IdentifierRequest {
    pub owner: String,
    pub key: String,
    pub value: String,
}

/// The search part of a request, however it was sent (a JSON body or query parameters).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchFields {
    pub server_id: Option<String>,
    pub from: Option<String>,
    pub to: Option<String>,
    pub level: Option<String>,
    pub levels: Option<Vec<String>>,
    pub min_level: Option<String>,
    pub event_type: Option<String>,
    pub resource: Option<String>,
    pub message: Option<String>,
    pub player_id: Option<String>,
    pub player: Option<String>,
    pub identifier: Option<IdentifierRequest>,
    pub data: Option<Value>,
    pub data_where: Option<Vec<DataConditionRequest>>,
    pub exclude: Option<ExcludeRequest>,
}

/// Declares a JSON request type: the filter fields of a search (documented once, here) plus its
/// own; `filters()` gives them as [`SearchFields`] with no server and no window.
#[macro_export]
macro_rules! filter_request {
    (
        $(#[$meta:meta])*
        pub struct $name:ident { $( $(#[$fmeta:meta])* pub $field:ident : $ty:ty, )* }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, serde::Deserialize, serde::Serialize, utoipa::ToSchema)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
            /// One level.
            pub level: Option<String>,
            /// Any of these levels (1 to 5 names).
            pub levels: Option<Vec<String>>,
            /// This level and the more severe ones (debug < info < warn < error < fatal).
            pub min_level: Option<String>,
            /// An event type (`admin.kick`), or a prefix of types (`admin.` or `admin.*`).
            pub event_type: Option<String>,
            pub resource: Option<String>,
            /// Case-insensitive substring of the message.
            pub message: Option<String>,
            /// The event's player or target player.
            pub player_id: Option<String>,
            /// A player id or any identifier the player carries (`license:…`, `discord:…`), as
            /// the event's player or its target.
            pub player: Option<String>,
            pub identifier: Option<$crate::search::IdentifierRequest>,
            /// A JSON object the event's `data` must contain (exact values, nested objects).
            #[schema(value_type = Option<Object>)]
            pub data: Option<serde_json::Value>,
            /// Conditions on `data` paths, all of which must hold: numbers compared (`>`, `>=`,
            /// `<`, `<=`), strings by prefix.
            pub data_where: Option<Vec<$crate::criteria::DataConditionRequest>>,
            /// Events matching any of these are left out.
            pub exclude: Option<$crate::criteria::ExcludeRequest>,
        }

        impl $name {
            /// The filter part of the request (no server, no window).
            pub fn filters(&self) -> $crate::search::SearchFields {
                $crate::search::SearchFields {
                    level: self.level.clone(),
                    levels: self.levels.clone(),
                    min_level: self.min_level.clone(),
                    event_type: self.event_type.clone(),
                    resource: self.resource.clone(),
                    message: self.message.clone(),
                    player_id: self.player_id.clone(),
                    player: self.player.clone(),
                    identifier: self.identifier.clone(),
                    data: self.data.clone(),
                    data_where: self.data_where.clone(),
                    exclude: self.exclude.clone(),
                    ..Default::default()
                }
            }
        }
    };
}

/// Declares a JSON request type: a server or servers, a window, the filter fields of
/// [`filter_request!`] and its own.
#[macro_export]
macro_rules! search_request {
    (
        $(#[$meta:meta])*
        pub struct $name:ident { $( $(#[$fmeta:meta])* pub $field:ident : $ty:ty, )* }
    ) => {
        $crate::filter_request! {
            $(#[$meta])*
            pub struct $name {
                /// The server's join code; required for a global key, optional for a server-bound one.
                pub server_id: Option<String>,
                /// Instead of `serverId`: several servers' join codes (1 to 50), or `["*"]` for every
                /// server the key may read whose Logs source is active.
                pub server_ids: Option<Vec<String>>,
                /// Start of the window, inclusive (RFC 3339).
                pub from: Option<String>,
                /// End of the window, exclusive (RFC 3339).
                pub to: Option<String>,
                $( $(#[$fmeta])* pub $field: $ty, )*
            }
        }

        impl $name {
            /// The search part of the request.
            pub fn search(&self) -> $crate::search::SearchFields {
                $crate::search::SearchFields {
                    server_id: self.server_id.clone(),
                    from: self.from.clone(),
                    to: self.to.clone(),
                    ..self.filters()
                }
            }
        }
    };
}

/// The filters of a search, validated. Every one that is set must hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filters {
    /// The levels an event may have, ascending; `None` for any.
    pub levels: Option<Vec<Level>>,
    pub event_type: Option<TypeMatch>,
    pub resource: Option<String>,
    /// Case-insensitive substring.
    pub message: Option<String>,
    /// Matches `player_id` or `target_player_id`.
    pub player_id: Option<String>,
    /// Matches the player or the target, by id or identifier.
    pub player: Option<PlayerMatch>,
    pub identifier: Option<IdentifierFilter>,
    /// A JSON object the event's data contains.
    pub data: Option<Value>,
    /// Conditions on data paths, every one holding.
    pub data_where: Vec<DataCondition>,
    pub exclude: Exclusions,
}

impl Filters {
    /// Whether a filter no index serves is set (`data`, `dataWhere`, `exclude.data`): such a
    /// search examines a bounded number of candidates (see [`crate::plan`]).
    pub fn scans_data(&self) -> bool {
        self.data.is_some() || !self.data_where.is_empty() || self.exclude.data.is_some()
    }

    /// These filters but those on `data` (`data`, `dataWhere`, `exclude.data`): what a `data`
    /// filter's scan examines (its candidates).
    pub fn without_data(&self) -> Filters {
        Filters {
            data: None,
            data_where: Vec::new(),
            exclude: Exclusions {
                data: None,
                ..self.exclude.clone()
            },
            ..self.clone()
        }
    }

    /// Whether `r` is one of the search's events (the window aside).
    pub fn matches(&self, r: &EventRow) -> bool {
        self.levels
            .as_ref()
            .is_none_or(|ls| ls.iter().any(|l| r.level == l.as_str()))
            && self
                .event_type
                .as_ref()
                .is_none_or(|t| t.matches(&r.event_type))
            && self
                .resource
                .as_ref()
                .is_none_or(|x| r.resource.as_ref() == Some(x))
            && self
                .message
                .as_ref()
                .is_none_or(|m| r.message.to_lowercase().contains(&m.to_lowercase()))
            && self.player_id.as_ref().is_none_or(|p| {
                r.player_id.as_ref() == Some(p) || r.target_player_id.as_ref() == Some(p)
            })
            && self.identifier.as_ref().is_none_or(|i| {
                let map = match i.owner {
                    Owner::Player => &r.player_identifiers,
                    Owner::Target => &r.target_player_identifiers,
                };
                map.as_ref()
                    .and_then(|m| m.get(&i.key))
                    .and_then(Value::as_str)
                    == Some(i.value.as_str())
            })
            && self.player.as_ref().is_none_or(|p| p.matches(r))
            && self
                .data
                .as_ref()
                .is_none_or(|d| r.data.as_ref().is_some_and(|have| contains(have, d)))
            && self.data_where.iter().all(|c| c.matches(r.data.as_ref()))
            && self.exclude.keeps(r)
    }

    /// The filters as JSON, for digests: equal filters said differently give equal values.
    /// The filters added after the first cursors were issued (`player`, `dataWhere`,
    /// `exclude`) appear only when set, so a search without them digests as it always did.
    pub fn digest_value(&self) -> Value {
        let mut v = serde_json::json!({
            "levels": self.levels.as_ref().map(|ls| ls.iter().map(|l| l.as_str()).collect::<Vec<_>>()),
            "eventType": self.event_type.as_ref().map(TypeMatch::as_written),
            "resource": self.resource,
            "message": self.message,
            "playerId": self.player_id,
            "identifier": self.identifier.as_ref().map(|i| serde_json::json!([i.owner, i.key, i.value])),
            "data": self.data,
        });
        if let Some(p) = &self.player {
            v["player"] = Value::String(p.id.clone());
        }
        if !self.data_where.is_empty() {
            v["dataWhere"] = self
                .data_where
                .iter()
                .map(DataCondition::digest_value)
                .collect();
        }
        if !self.exclude.is_empty() {
            v["exclude"] = self.exclude.digest_value();
        }
        v
    }
}

/// `jsonb @>`: whether `have` contains `want`.
pub fn contains(have: &Value, want: &Value) -> bool {
    match (have, want) {
        (Value::Object(h), Value::Object(w)) => w
            .iter()
            .all(|(k, wv)| h.get(k).is_some_and(|hv| contains(hv, wv))),
        (Value::Array(h), Value::Array(w)) => {
            w.iter().all(|wv| h.iter().any(|hv| contains(hv, wv)))
        }
        (Value::Number(h), Value::Number(w)) => match (h.as_i64(), w.as_i64()) {
            (Some(a), Some(b)) => a == b,
            _ => match (h.as_u64(), w.as_u64()) {
                (Some(a), Some(b)) => a == b,
                _ => h.as_f64() == w.as_f64(),
            },
        },
        (h, w) => h == w,
    }
}

/// A validated window and its filters.
#[derive(Debug, Clone, PartialEq)]
pub struct Search {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub filters: Filters,
}

impl Search {
    /// The search a plan keeping `retention_days` of events allows at `now`: `from` raised to
    /// `now - retention_days` when it is older. A window that ends before then is left empty
    /// (`from >= to`, see [`Search::is_empty`]) rather than refused.
    pub fn within_retention(mut self, retention_days: i32, now: DateTime<Utc>) -> Search {
        let start = now - chrono::Duration::days(i64::from(retention_days));
        self.from = self.from.max(start);
        self
    }

    /// No event can be in the window.
    pub fn is_empty(&self) -> bool {
        self.from >= self.to
    }
}

/// How long a window may be.
#[derive(Debug, Clone, Copy)]
pub enum RangeLimit {
    Days(i64),
    /// Any length (retention bounds it later).
    None,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn containment_is_jsonb_containment() {
        let have = json!({
            "item": "WEAPON_PISTOL", "count": 2, "price": 1.5,
            "pos": { "x": 1, "y": 2, "zone": { "name": "Sandy" } },
            "tags": ["a", "b", { "k": 1 }], "none": null, "ok": true,
        });
        for (want, yes) in [
            (json!({}), true),
            (json!({"item": "WEAPON_PISTOL"}), true),
            (json!({"item": "weapon_pistol"}), false),
            (json!({"item": "WEAPON"}), false),
            (json!({"count": 2}), true),
            (json!({"count": 2.0}), true),
            (json!({"count": "2"}), false),
            (json!({"price": 1.5}), true),
            (json!({"pos": {"x": 1}}), true),
            (json!({"pos": {"zone": {"name": "Sandy"}}}), true),
            (json!({"pos": {"zone": {"name": "Paleto"}}}), false),
            (json!({"pos": {"x": 1, "w": 0}}), false),
            (json!({"x": 1}), false),
            (json!({"tags": ["b"]}), true),
            (json!({"tags": ["b", "a"]}), true),
            (json!({"tags": [{"k": 1}]}), true),
            (json!({"tags": ["c"]}), false),
            (json!({"tags": "a"}), false),
            (json!({"tags": []}), true),
            (json!({"none": null}), true),
            (json!({"ok": true}), true),
            (json!({"ok": 1}), false),
            (json!({"item": "WEAPON_PISTOL", "count": 3}), false),
        ] {
            assert_eq!(contains(&have, &want), yes, "{want}");
        }
        assert!(contains(&json!({"ü": "ß"}), &json!({"ü": "ß"})));
        assert!(!contains(
            &json!({"n": 18446744073709551615u64}),
            &json!({"n": -1})
        ));
    }

    fn fields() -> SearchFields {
        SearchFields {
            from: Some("2026-11-20T00:00:00Z".into()),
            to: Some("2026-11-21T00:00:00Z".into()),
            ..Default::default()
        }
    }

    #[test]
    fn data_filters_are_bounded_objects() {
        let with = |v: Value| {
            validate_search(
                &SearchFields {
                    data: Some(v),
                    ..fields()
                },
                RangeLimit::Days(7),
            )
        };
        assert!(with(json!({"item": "x"})).is_ok());
        for (v, says) in [
            (json!("x"), "must be a JSON object"),
            (json!([1]), "must be a JSON object"),
            (json!(null), "must be a JSON object"),
            (json!({}), "at least one key"),
            (json!({"a\u{0}": 1}), "NUL"),
            (json!({"a": ["\u{0}"]}), "NUL"),
        ] {
            let e = with(v.clone()).unwrap_err();
            assert!(e.contains(says) && e.contains("`data`"), "{v}: {e}");
        }
        // size: N - 1, N, N + 1 bytes ({"a":"…"} is 8 bytes around the string)
        for (n, ok) in [(1023, true), (1024, true), (1025, false)] {
            let r = with(json!({ "a": "x".repeat(n - 8) }));
            assert_eq!(r.is_ok(), ok, "{n} bytes: {r:?}");
            if !ok {
                assert!(r.unwrap_err().contains("at most 1024 bytes"));
            }
        }
        // depth: N - 1, N, N + 1
        let nested = |depth: usize| {
            let mut v = json!(1);
            for _ in 0..depth {
                v = json!({ "a": v });
            }
            v
        };
        assert!(with(nested(7)).is_ok());
        assert!(with(nested(8)).is_ok());
        assert!(with(nested(9))
            .unwrap_err()
            .contains("at most 8 levels deep (got 9)"));
    }

    #[test]
    fn ranges_are_limited_only_when_asked() {
        let long = SearchFields {
            to: Some("2026-12-20T00:00:00Z".into()),
            ..fields()
        };
        assert!(validate_search(&long, RangeLimit::Days(7))
            .unwrap_err()
            .contains("at most 7 days"));
        assert!(validate_search(&long, RangeLimit::None).is_ok());
    }
}
