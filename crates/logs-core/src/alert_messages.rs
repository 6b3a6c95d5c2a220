//! What an alert says, as Discord webhook messages (issue 41): one embed per event, coloured by
//! level, with its message, fields and a link to it in the console, packed into messages within
//! Discord's limits; what does not fit in the messages a delivery may send is summarised ("137
//! more matching events — open in console") instead of falling behind.
//!
//! Discord counts a text's length in UTF-16 code units (JavaScript's `length`), so every limit
//! here does too, and a text cut to fit is cut between characters and ends with `…`.

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::alerts::{ActiveRule, GroupBy};
use crate::store::EventRow;

mod discord;
pub use discord::*;

/// Events one every-match firing carries; more matching events in the same commit are counted
/// (`matched`) and summarised.
pub const MAX_FIRING_EVENTS: usize = 100;

/// A message's `content`.
pub const MAX_CONTENT: usize = 2000;
/// Embeds in one message.
pub const MAX_EMBEDS: usize = 10;
/// All the text of one message's embeds together.
pub const MAX_EMBED_TOTAL: usize = 6000;
pub const MAX_TITLE: usize = 256;
pub const MAX_DESCRIPTION: usize = 4096;
pub const MAX_FIELDS: usize = 25;
pub const MAX_FIELD_NAME: usize = 256;
pub const MAX_FIELD_VALUE: usize = 1024;
pub const MAX_FOOTER: usize = 2048;

/// A text's length as Discord counts it.
pub fn length(s: &str) -> usize {
    s.encode_utf16().count()
}

/// `s` cut to at most `max` UTF-16 units, between characters, ending with `…` when cut.
pub fn truncate(s: &str, max: usize) -> String {
    if length(s) <= max {
        return s.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    // room for the ellipsis (one unit)
    for c in s.chars() {
        if used + c.len_utf16() > max.saturating_sub(1) {
            break;
        }
        used += c.len_utf16();
        out.push(c);
    }
    out.push('…');
    out
}

/// One embed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Embed {
    pub title: String,
    pub description: String,
    pub url: Option<String>,
    pub color: u32,
    /// `(name, value, inline)`.
    pub fields: Vec<(String, String, bool)>,
    /// RFC 3339.
    pub timestamp: Option<String>,
    pub footer: Option<String>,
}

impl Embed {
    /// The text Discord counts against [`MAX_EMBED_TOTAL`].
    pub fn size(&self) -> usize {
        length(&self.title)
            + length(&self.description)
            + self
                .fields
                .iter()
                .map(|(n, v, _)| length(n) + length(v))
                .sum::<usize>()
            + self.footer.as_deref().map_or(0, length)
    }

    pub fn to_json(&self) -> Value {
        let mut e = json!({
            "title": self.title,
            "description": self.description,
            "color": self.color,
            "fields": self.fields.iter().map(|(n, v, i)| json!({"name": n, "value": v, "inline": i})).collect::<Vec<_>>(),
        });
        if let Some(url) = &self.url {
            e["url"] = json!(url);
        }
        if let Some(t) = &self.timestamp {
            e["timestamp"] = json!(t);
        }
        if let Some(f) = &self.footer {
            e["footer"] = json!({ "text": f });
        }
        e
    }
}

/// One webhook message.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Message {
    pub content: String,
    pub embeds: Vec<Embed>,
}

impl Message {
    /// The webhook's JSON body. Mentions are never parsed: an event's text cannot ping a role.
    pub fn to_json(&self) -> Value {
        json!({
            "content": self.content,
            "embeds": self.embeds.iter().map(Embed::to_json).collect::<Vec<_>>(),
            "allowed_mentions": { "parse": [] },
        })
    }
}

/// An embed's colour for a level: grey, blue, amber, red, dark red.
pub fn level_color(level: &str) -> u32 {
    match level {
        "debug" => 0x95_a5_a6,
        "info" => 0x34_98_db,
        "warn" => 0xf1_c4_0f,
        "error" => 0xe7_4c_3c,
        "fatal" => 0x99_2d_22,
        _ => 0x7f_8c_8d,
    }
}

/// A matching event as a firing carries it (and a generic webhook receives it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AlertEvent {
    pub event_id: String,
    /// The server's join code.
    pub server_id: String,
    pub level: String,
    #[serde(rename = "type")]
    pub event_type: String,
    /// ISO 8601 UTC, milliseconds.
    pub occurred_at: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_player_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub data: Option<Value>,
}

impl From<&EventRow> for AlertEvent {
    fn from(e: &EventRow) -> Self {
        AlertEvent {
            event_id: e.event_id.clone(),
            server_id: e.cfx_id.clone(),
            level: e.level.clone(),
            event_type: e.event_type.clone(),
            occurred_at: e.occurred_at.to_rfc3339_opts(SecondsFormat::Millis, true),
            message: e.message.clone(),
            resource: e.resource.clone(),
            player_id: e.player_id.clone(),
            target_player_id: e.target_player_id.clone(),
            data: e.data.clone(),
        }
    }
}

/// The rule a firing is of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuleRef {
    pub id: String,
    pub name: String,
    /// `every` or `threshold`.
    pub kind: String,
    pub saved_search_id: String,
}

/// A threshold rule's breach.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Breach {
    /// Matching events in the window when it fired.
    pub count: u64,
    pub threshold: u64,
    pub window_minutes: i64,
    /// The group that breached, when the rule groups: `{"by": "resource", "value": "phone"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<BreachGroup>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct BreachGroup {
    /// `resource`, `eventType` or `player`.
    pub by: String,
    pub value: String,
}

/// What a firing says: the body of a generic webhook (with its delivery's id added), and what a
/// Discord message is made from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Firing {
    /// `alert.fired`, or `alert.test` for a destination's test message.
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<RuleRef>,
    /// ISO 8601 UTC, milliseconds.
    pub fired_at: String,
    /// Every-match rules: the matching events (at most 100)…
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<AlertEvent>,
    /// …of this many that matched in the batches committed together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matched: Option<u64>,
    /// Threshold rules: the breach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breach: Option<Breach>,
}

fn rule_ref(rule: &ActiveRule) -> RuleRef {
    RuleRef {
        id: rule.id.clone(),
        name: rule.name.clone(),
        kind: rule.trigger.kind().to_owned(),
        saved_search_id: rule.saved_search_id.clone(),
    }
}

fn millis(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

impl Firing {
    /// An every-match rule's firing: the first [`MAX_FIRING_EVENTS`] of `events`.
    pub fn every(rule: &ActiveRule, events: &[&EventRow], now: DateTime<Utc>) -> Firing {
        Firing {
            kind: "alert.fired".into(),
            rule: Some(rule_ref(rule)),
            fired_at: millis(now),
            events: events
                .iter()
                .take(MAX_FIRING_EVENTS)
                .map(|e| AlertEvent::from(*e))
                .collect(),
            matched: Some(events.len() as u64),
            breach: None,
        }
    }

    /// A threshold rule's firing for `group` (`None` when it does not group).
    pub fn breach(
        rule: &ActiveRule,
        group: Option<(GroupBy, &str)>,
        count: u64,
        now: DateTime<Utc>,
    ) -> Firing {
        let (threshold, window, _) = rule.trigger.threshold().unwrap_or((1, 0, 0));
        Firing {
            kind: "alert.fired".into(),
            rule: Some(rule_ref(rule)),
            fired_at: millis(now),
            events: Vec::new(),
            matched: None,
            breach: Some(Breach {
                count,
                threshold,
                window_minutes: window,
                group: group.map(|(by, value)| BreachGroup {
                    by: by.as_str().to_owned(),
                    value: value.to_owned(),
                }),
            }),
        }
    }

    /// A destination's test message.
    pub fn test(now: DateTime<Utc>) -> Firing {
        Firing {
            kind: "alert.test".into(),
            rule: None,
            fired_at: millis(now),
            events: Vec::new(),
            matched: None,
            breach: None,
        }
    }
}

/// Links into the console, from its public address (`CONSOLE_PUBLIC_URL`).
pub struct ConsoleLinks<'a>(pub &'a str);

impl ConsoleLinks<'_> {
    /// The saved search, opened over the last hour.
    pub fn search(&self, saved_search_id: &str) -> String {
        format!("{}/logs?saved={saved_search_id}&range=1h", self.0)
    }

    /// The event among its server's events of the minute either side.
    pub fn event(&self, e: &AlertEvent) -> String {
        let at = DateTime::parse_from_rfc3339(&e.occurred_at)
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or_default();
        let from = millis(at - Duration::minutes(1));
        let to = millis(at + Duration::minutes(1));
        let q: String = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("server", &e.server_id)
            .append_pair("range", "custom")
            .append_pair("from", &from)
            .append_pair("to", &to)
            .finish();
        format!("{}/logs?{q}", self.0)
    }
}

#[cfg(test)]
#[path = "alert_messages_tests.rs"]
mod tests;
