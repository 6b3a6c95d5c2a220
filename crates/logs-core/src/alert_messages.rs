//! What an alert says, as Discord webhook messages (issue 41): one embed per event, coloured by
//! level, with its message, fields and a link to it in the console, packed into messages within
//! Discord's limits; what does not fit in the messages a delivery may send is summarised ("137
//! more matching events — open in console") instead of falling behind.
//!
//! Discord counts a text's length in UTF-16 code units (JavaScript's `length`), so every limit
//! here does too, and a text cut to fit is cut between characters and ends with `…`.

use serde_json::{json, Value};

use crate::store::EventRow;

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

/// The embed of one matching event: `[level] type` as the title (a link to the event in the
/// console), its message, then its server, resource and players as fields.
pub fn event_embed(e: &EventRow, event_url: &str, rule_name: &str) -> Embed {
    let mut fields = vec![("Server".to_owned(), e.cfx_id.clone(), true)];
    for (name, value) in [
        ("Resource", e.resource.as_deref()),
        ("Player", e.player_id.as_deref()),
        ("Target", e.target_player_id.as_deref()),
    ] {
        if let Some(v) = value.filter(|v| !v.is_empty()) {
            fields.push((name.to_owned(), truncate(v, MAX_FIELD_VALUE), true));
        }
    }
    fields.truncate(MAX_FIELDS);
    let message = if e.message.is_empty() {
        "(no message)"
    } else {
        &e.message
    };
    Embed {
        title: truncate(&format!("[{}] {}", e.level, e.event_type), MAX_TITLE),
        description: truncate(message, MAX_DESCRIPTION),
        url: Some(event_url.to_owned()),
        color: level_color(&e.level),
        fields,
        timestamp: Some(
            e.occurred_at
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        ),
        footer: Some(truncate(rule_name, MAX_FOOTER)),
    }
}

/// Packs embeds into at most `max_messages` messages (each ≤ 10 embeds and ≤ 6,000 characters of
/// embed text), in order; when some do not fit, the last message's content says how many more
/// matched, with `search_url` to see them all.
pub fn pack(embeds: Vec<Embed>, max_messages: usize, search_url: &str) -> Vec<Message> {
    let max_messages = max_messages.max(1);
    let total = embeds.len();
    let mut out: Vec<Message> = Vec::new();
    let mut sent = 0;
    for embed in embeds {
        let fits_last = out.last().is_some_and(|m| {
            m.embeds.len() < MAX_EMBEDS
                && m.embeds.iter().map(Embed::size).sum::<usize>() + embed.size() <= MAX_EMBED_TOTAL
        });
        if !fits_last {
            if out.len() == max_messages {
                break;
            }
            out.push(Message::default());
        }
        if let Some(last) = out.last_mut() {
            last.embeds.push(embed);
        }
        sent += 1;
    }
    let more = total - sent;
    if more > 0 {
        if let Some(last) = out.last_mut() {
            last.content = truncate(
                &format!(
                    "{more} more matching event{} — open in console: {search_url}",
                    if more == 1 { "" } else { "s" }
                ),
                MAX_CONTENT,
            );
        }
    }
    out
}

/// The message of a threshold rule's firing: how many matching events in how many minutes, for
/// which group, with a link to the search in the console.
pub fn threshold_message(
    rule_name: &str,
    group: Option<(&str, &str)>,
    count: u64,
    window_minutes: i64,
    search_url: &str,
) -> Message {
    let what = match group {
        Some((by, value)) => format!(" ({by} {value})"),
        None => String::new(),
    };
    Message {
        content: String::new(),
        embeds: vec![Embed {
            title: truncate(&format!("{rule_name}{what}"), MAX_TITLE),
            description: truncate(
                &format!(
                    "{count} matching event{} in the last {window_minutes} minute{}.",
                    if count == 1 { "" } else { "s" },
                    if window_minutes == 1 { "" } else { "s" }
                ),
                MAX_DESCRIPTION,
            ),
            url: Some(search_url.to_owned()),
            color: level_color("warn"),
            fields: Vec::new(),
            timestamp: None,
            footer: None,
        }],
    }
}

#[cfg(test)]
#[path = "alert_messages_tests.rs"]
mod tests;
