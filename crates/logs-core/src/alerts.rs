//! Alert rules on saved searches (issue 41) — the pure part: what a rule is and how a request for
//! one is checked, the group an event falls in, the sliding window of a threshold rule and its
//! decision as batches commit, and muting.
//!
//! A rule watches one saved search. *Every match* forwards each matching event; *threshold* fires
//! when at least `threshold` matching events fall within `windowMinutes`, once per breach: again
//! only after the count has dropped below the threshold (the breach cleared) or, while it lasts,
//! after `cooldownMinutes`. With `groupBy` each group (a resource, an event type, a player)
//! breaches on its own.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, DurationRound, Utc};
use serde::Deserialize;

use auth_core::{OrgId, ServerId};

use crate::saved::SavedServers;
use crate::search::Filters;
use crate::store::EventRow;

mod evaluation;
pub use evaluation::*;

/// Rules an organization may have.
pub const MAX_RULES: usize = 100;
/// Characters of a rule's name.
pub const MAX_NAME_CHARS: usize = 100;
/// The largest threshold.
pub const MAX_THRESHOLD: i64 = 100_000;
/// The longest window (a day): counts are kept per minute for this long.
pub const MAX_WINDOW_MINUTES: i64 = 1440;
/// The longest cool-down (a week).
pub const MAX_COOLDOWN_MINUTES: i64 = 10_080;
/// Destinations one rule sends to.
pub const MAX_DESTINATIONS: usize = 10;
/// Groups one threshold rule tracks in a window; events of further groups count in the last one
/// (`"(other)"`), so a flood of distinct values cannot grow the state without bound.
pub const MAX_GROUPS: usize = 1000;
/// The group of events beyond [`MAX_GROUPS`].
pub const OTHER_GROUP: &str = "(other)";
/// The group of events that have no value for the field grouped by.
pub const NO_VALUE_GROUP: &str = "(none)";

/// `POST /v1/logs/alert-rules` (and, all fields optional, `PATCH`).
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AlertRuleRequest {
    /// 1 to 100 characters, unique in the organization (either case).
    pub name: Option<String>,
    /// The saved search the rule watches.
    pub saved_search_id: Option<String>,
    /// `every` (forward each matching event) or `threshold`.
    pub kind: Option<String>,
    /// `threshold` rules: at least this many matching events (1–100,000)…
    pub threshold: Option<i64>,
    /// …within this many minutes (1–1,440).
    pub window_minutes: Option<i64>,
    /// `threshold` rules: while a breach lasts, fire again after this many minutes (0–10,080;
    /// default 0: only after it clears).
    pub cooldown_minutes: Option<i64>,
    /// `resource`, `eventType` or `player` (the actor's id): each group breaches on its own.
    pub group_by: Option<String>,
    /// 1 to 10 destinations.
    pub destination_ids: Option<Vec<String>>,
    /// Mute until this time (ISO 8601): nothing is counted or sent before it. `null` unmutes.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    pub muted_until: Option<Option<String>>,
}

/// A field that was sent, `null` included (`Some(None)`), told from one that was not (`None`).
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// A mute time as sent: `Some(None)` unmutes.
pub fn parse_mute(sent: &Option<String>) -> Result<Option<DateTime<Utc>>, RuleError> {
    match sent {
        None => Ok(None),
        Some(t) => DateTime::parse_from_rfc3339(t)
            .map(|t| Some(t.with_timezone(&Utc)))
            .map_err(|_| {
                refuse(
                    "mutedUntil",
                    format!("must be an ISO 8601 time with a zone (2026-11-27T18:00:00Z) or null; got {t:?}"),
                )
            }),
    }
}

/// What makes a rule fire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    EveryMatch,
    Threshold {
        count: u64,
        window: Duration,
        cooldown: Duration,
    },
}

impl Trigger {
    /// `every` or `threshold`.
    pub fn kind(self) -> &'static str {
        match self {
            Trigger::EveryMatch => "every",
            Trigger::Threshold { .. } => "threshold",
        }
    }

    /// A threshold rule's count, window and cool-down (minutes).
    pub fn threshold(self) -> Option<(u64, i64, i64)> {
        match self {
            Trigger::EveryMatch => None,
            Trigger::Threshold {
                count,
                window,
                cooldown,
            } => Some((count, window.num_minutes(), cooldown.num_minutes())),
        }
    }
}

/// The field a rule groups by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    Resource,
    EventType,
    Player,
}

impl GroupBy {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "resource" => Some(GroupBy::Resource),
            "eventType" => Some(GroupBy::EventType),
            "player" => Some(GroupBy::Player),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            GroupBy::Resource => "resource",
            GroupBy::EventType => "eventType",
            GroupBy::Player => "player",
        }
    }

    /// The group `e` falls in (its value of the field; [`NO_VALUE_GROUP`] when it has none).
    pub fn group_of(self, e: &EventRow) -> String {
        let value = match self {
            GroupBy::Resource => e.resource.as_deref(),
            GroupBy::EventType => Some(e.event_type.as_str()),
            GroupBy::Player => e.player_id.as_deref(),
        };
        value
            .filter(|v| !v.is_empty())
            .unwrap_or(NO_VALUE_GROUP)
            .to_owned()
    }
}

/// A rule's settings, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleSpec {
    pub name: String,
    pub saved_search_id: String,
    pub trigger: Trigger,
    pub group_by: Option<GroupBy>,
    pub destination_ids: Vec<String>,
}

/// A refused rule request: the field and what it must be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{field}`: {reason}")]
pub struct RuleError {
    pub field: &'static str,
    pub reason: String,
}

fn refuse(field: &'static str, reason: impl Into<String>) -> RuleError {
    RuleError {
        field,
        reason: reason.into(),
    }
}

fn within(field: &'static str, v: i64, lo: i64, hi: i64) -> Result<i64, RuleError> {
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(refuse(
            field,
            format!("must be between {lo} and {hi}; got {v}"),
        ))
    }
}

impl AlertRuleRequest {
    /// The request over `base` (a PATCH's stored rule; `None` to create, where the name, saved
    /// search, kind and destinations are required), checked.
    pub fn resolve(&self, base: Option<&RuleSpec>) -> Result<RuleSpec, RuleError> {
        let name = self.name(base)?;
        let saved_search_id = match (&self.saved_search_id, base) {
            (Some(id), _) if id.chars().any(char::is_control) => {
                return Err(refuse("savedSearchId", "must not hold control characters"))
            }
            (Some(id), _) if !id.trim().is_empty() => id.trim().to_owned(),
            (Some(_), _) => return Err(refuse("savedSearchId", "must name a saved search")),
            (None, Some(b)) => b.saved_search_id.clone(),
            (None, None) => return Err(refuse("savedSearchId", "is required")),
        };
        let trigger = self.trigger(base)?;
        let group_by = match (&self.group_by, base) {
            (Some(g), _) if g.is_empty() => None,
            (Some(g), _) => Some(GroupBy::parse(g).ok_or_else(|| {
                refuse(
                    "groupBy",
                    format!("must be `resource`, `eventType` or `player`; got {g:?}"),
                )
            })?),
            (None, Some(b)) => b.group_by,
            (None, None) => None,
        };
        if group_by.is_some() && trigger == Trigger::EveryMatch {
            return Err(refuse(
                "groupBy",
                "is for `threshold` rules (an every-match rule forwards each event)",
            ));
        }
        Ok(RuleSpec {
            name,
            saved_search_id,
            trigger,
            group_by,
            destination_ids: self.destination_ids(base)?,
        })
    }

    fn name(&self, base: Option<&RuleSpec>) -> Result<String, RuleError> {
        let name = match (&self.name, base) {
            (Some(n), _) => n.trim().to_owned(),
            (None, Some(b)) => b.name.clone(),
            (None, None) => return Err(refuse("name", "is required")),
        };
        let chars = name.chars().count();
        if chars == 0 || chars > MAX_NAME_CHARS {
            return Err(refuse(
                "name",
                format!("must be 1 to {MAX_NAME_CHARS} characters; got {chars}"),
            ));
        }
        if name.chars().any(char::is_control) {
            return Err(refuse("name", "must not contain control characters"));
        }
        Ok(name)
    }

    fn trigger(&self, base: Option<&RuleSpec>) -> Result<Trigger, RuleError> {
        let kind = match (&self.kind, base) {
            (Some(k), _) => k.as_str(),
            (None, Some(b)) => b.trigger.kind(),
            (None, None) => return Err(refuse("kind", "is required: `every` or `threshold`")),
        };
        let stored = base
            .and_then(|b| b.trigger.threshold())
            .map(|(count, window, cooldown)| (count as i64, window, cooldown));
        match kind {
            "every" => {
                for (field, given) in [
                    ("threshold", self.threshold),
                    ("windowMinutes", self.window_minutes),
                    ("cooldownMinutes", self.cooldown_minutes),
                ] {
                    if given.is_some() {
                        return Err(refuse(field, "is for `threshold` rules only"));
                    }
                }
                Ok(Trigger::EveryMatch)
            }
            "threshold" => {
                let count = self
                    .threshold
                    .or(stored.map(|s| s.0))
                    .ok_or_else(|| refuse("threshold", "is required for a `threshold` rule"))?;
                let window = self
                    .window_minutes
                    .or(stored.map(|s| s.1))
                    .ok_or_else(|| refuse("windowMinutes", "is required for a `threshold` rule"))?;
                let cooldown = self.cooldown_minutes.or(stored.map(|s| s.2)).unwrap_or(0);
                Ok(Trigger::Threshold {
                    count: within("threshold", count, 1, MAX_THRESHOLD)? as u64,
                    window: Duration::minutes(within(
                        "windowMinutes",
                        window,
                        1,
                        MAX_WINDOW_MINUTES,
                    )?),
                    cooldown: Duration::minutes(within(
                        "cooldownMinutes",
                        cooldown,
                        0,
                        MAX_COOLDOWN_MINUTES,
                    )?),
                })
            }
            other => Err(refuse(
                "kind",
                format!("must be `every` or `threshold`; got {other:?}"),
            )),
        }
    }

    fn destination_ids(&self, base: Option<&RuleSpec>) -> Result<Vec<String>, RuleError> {
        let destination_ids = match (&self.destination_ids, base) {
            (Some(d), _) => d.clone(),
            (None, Some(b)) => b.destination_ids.clone(),
            (None, None) => return Err(refuse("destinationIds", "is required")),
        };
        if destination_ids.is_empty() || destination_ids.len() > MAX_DESTINATIONS {
            return Err(refuse(
                "destinationIds",
                format!(
                    "must name 1 to {MAX_DESTINATIONS} destinations; got {}",
                    destination_ids.len()
                ),
            ));
        }
        if destination_ids
            .iter()
            .any(|d| d.is_empty() || d.chars().any(char::is_control))
        {
            return Err(refuse(
                "destinationIds",
                "holds an id that is empty or has control characters",
            ));
        }
        let mut seen = destination_ids.clone();
        seen.sort();
        seen.dedup();
        if seen.len() != destination_ids.len() {
            return Err(refuse("destinationIds", "names a destination twice"));
        }
        Ok(destination_ids)
    }
}

#[cfg(test)]
#[path = "alerts_tests.rs"]
mod tests;
