//! Discord messages of firings: an embed per event, packed into messages within Discord's limits.

use super::*;

/// The embed of one matching event: `[level] type` as the title (a link to the event in the
/// console), its message, then its server, resource and players as fields.
pub fn event_embed(e: &AlertEvent, event_url: &str, rule_name: &str) -> Embed {
    let mut fields = vec![("Server".to_owned(), e.server_id.clone(), true)];
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
        timestamp: Some(e.occurred_at.clone()),
        footer: Some(truncate(rule_name, MAX_FOOTER)),
    }
}

/// One Discord message for firings waiting for a destination, oldest first: the events of
/// every-match firings as embeds (what does not fit summarised with a link to the search), or a
/// threshold firing's breach, or the test message. The caller sends several firings together
/// only when they are of the same rule.
pub fn discord_message(firings: &[Firing], links: &ConsoleLinks) -> Message {
    let Some(first) = firings.first() else {
        return Message::default();
    };
    let Some(rule) = &first.rule else {
        return Message {
            content: "Stowage test message: this destination receives alerts.".into(),
            embeds: Vec::new(),
        };
    };
    let search = links.search(&rule.saved_search_id);
    if let Some(b) = &first.breach {
        let group = b.group.as_ref().map(|g| (g.by.as_str(), g.value.as_str()));
        return threshold_message(&rule.name, group, b.count, b.window_minutes, &search);
    }
    let mut embeds = Vec::new();
    for f in firings {
        for e in &f.events {
            embeds.push(event_embed(e, &links.event(e), &rule.name));
        }
    }
    let total: u64 = firings
        .iter()
        .map(|f| f.matched.unwrap_or(f.events.len() as u64))
        .sum();
    let mut message = pack(embeds, 1, &search).pop().unwrap_or_default();
    let more = total.saturating_sub(message.embeds.len() as u64);
    message.content = if more > 0 {
        more_text(more, &search)
    } else {
        String::new()
    };
    message
}

/// "137 more matching events — open in console: …".
fn more_text(more: u64, search_url: &str) -> String {
    truncate(
        &format!(
            "{more} more matching event{} — open in console: {search_url}",
            if more == 1 { "" } else { "s" }
        ),
        MAX_CONTENT,
    )
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
            last.content = more_text(more as u64, search_url);
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
