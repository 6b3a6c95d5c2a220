use super::*;

fn embed(desc_len: usize) -> Embed {
    Embed {
        title: "t".into(),
        description: "d".repeat(desc_len),
        url: None,
        color: 0,
        fields: Vec::new(),
        timestamp: None,
        footer: None,
    }
}

#[test]
fn texts_are_cut_between_characters_in_utf16_units() {
    assert_eq!(truncate("abc", 3), "abc");
    assert_eq!(truncate("abcd", 3), "ab…");
    assert_eq!(length("😀"), 2, "outside the BMP: two units");
    // never half a surrogate pair: the emoji does not fit in the one unit left
    assert_eq!(truncate("a😀bc", 3), "a…");
    assert_eq!(
        length(&truncate(&"é".repeat(5000), MAX_DESCRIPTION)),
        MAX_DESCRIPTION
    );
    assert_eq!(truncate("", 0), "");
}

#[test]
fn an_event_reads_as_an_embed_within_the_limits() {
    let mut e = EventRow::fixture(1);
    e.level = "error".into();
    e.event_type = "resource.error".into();
    e.message = format!("line one\nline two {}", "x".repeat(5000));
    e.resource = Some("phone".into());
    e.player_id = Some("license:abc".into());
    e.target_player_id = Some(String::new());
    let em = event_embed(
        &AlertEvent::from(&e),
        "https://console.example/logs?event=e1",
        "Errors",
    );
    assert_eq!(em.title, "[error] resource.error");
    assert_eq!(em.color, level_color("error"));
    assert!(em.description.starts_with("line one\nline two"));
    assert_eq!(length(&em.description), MAX_DESCRIPTION);
    assert_eq!(
        em.fields,
        [
            ("Server".to_owned(), "c".to_owned(), true),
            ("Resource".to_owned(), "phone".to_owned(), true),
            ("Player".to_owned(), "license:abc".to_owned(), true),
        ],
        "an empty target is left out"
    );
    let json = em.to_json();
    assert_eq!(json["url"], "https://console.example/logs?event=e1");
    assert_eq!(json["footer"]["text"], "Errors");
    assert_eq!(json["timestamp"], "1970-01-01T00:00:00.000Z");
    let mut long_type = EventRow::fixture(2);
    long_type.event_type = "t".repeat(300);
    assert_eq!(
        length(&event_embed(&AlertEvent::from(&long_type), "u", "r").title),
        MAX_TITLE
    );
}

#[test]
fn embeds_are_packed_ten_a_message_and_six_thousand_characters() {
    let small: Vec<Embed> = (0..25).map(|_| embed(10)).collect();
    let packed = pack(small, 5, "https://s");
    assert_eq!(
        packed.iter().map(|m| m.embeds.len()).collect::<Vec<_>>(),
        [10, 10, 5]
    );
    assert!(packed.iter().all(|m| m.content.is_empty()));
    // big descriptions: one per message, as two would pass 6,000
    let big: Vec<Embed> = (0..3).map(|_| embed(MAX_DESCRIPTION)).collect();
    let packed = pack(big, 5, "https://s");
    assert_eq!(packed.len(), 3);
    for m in &packed {
        assert!(m.embeds.iter().map(Embed::size).sum::<usize>() <= MAX_EMBED_TOTAL);
    }
    // exactly at the total: N fits, N+1 does not
    let half = MAX_EMBED_TOTAL / 2 - 1; // title "t" is one
    assert_eq!(pack(vec![embed(half), embed(half)], 5, "u").len(), 1);
    assert_eq!(pack(vec![embed(half), embed(half + 1)], 5, "u").len(), 2);
}

#[test]
fn what_does_not_fit_is_summarised_with_a_link() {
    let many: Vec<Embed> = (0..137 + 20).map(|_| embed(10)).collect();
    let packed = pack(many, 2, "https://console.example/logs?saved=ss_1");
    assert_eq!(packed.len(), 2);
    assert_eq!(packed[1].embeds.len(), 10);
    assert_eq!(
        packed[1].content,
        "137 more matching events — open in console: https://console.example/logs?saved=ss_1"
    );
    let one_more = pack((0..11).map(|_| embed(1)).collect(), 1, "u");
    assert_eq!(
        one_more[0].content,
        "1 more matching event — open in console: u"
    );
    let long_url = "u".repeat(3000);
    let capped = pack((0..11).map(|_| embed(1)).collect(), 1, &long_url);
    assert_eq!(length(&capped[0].content), MAX_CONTENT);
    assert!(pack(Vec::new(), 3, "u").is_empty());
}

#[test]
fn a_threshold_firing_says_count_window_and_group() {
    let m = threshold_message(
        "Resource errors",
        Some(("resource", "phone")),
        20,
        5,
        "https://s",
    );
    assert_eq!(m.embeds[0].title, "Resource errors (resource phone)");
    assert_eq!(
        m.embeds[0].description,
        "20 matching events in the last 5 minutes."
    );
    let json = m.to_json();
    assert_eq!(json["allowed_mentions"]["parse"], serde_json::json!([]));
    let one = threshold_message("R", None, 1, 1, "u");
    assert_eq!(
        one.embeds[0].description,
        "1 matching event in the last 1 minute."
    );
}

#[test]
fn firings_queued_behind_each_other_become_one_discord_message_with_a_summary() {
    let rule = crate::alerts::ActiveRule {
        id: "alr_1".into(),
        org_id: auth_core::OrgId::new("org_a"),
        name: "Bans".into(),
        saved_search_id: "ss_1".into(),
        servers: crate::saved::SavedServers::All,
        reach: Some(crate::alerts::MakerReach {
            servers: auth_core::ServerScope::All,
            until: None,
        }),
        filters: crate::search::Filters::default(),
        trigger: crate::alerts::Trigger::EveryMatch,
        group_by: None,
        muted_until: None,
    };
    let rows: Vec<EventRow> = (1..=8).map(EventRow::fixture).collect();
    let refs: Vec<&EventRow> = rows.iter().collect();
    let now = chrono::DateTime::UNIX_EPOCH;
    // 8 events listed of 150 that matched in one commit, and 8 of 8 in the next
    let mut big = Firing::every(&rule, &refs, now);
    big.matched = Some(150);
    let small = Firing::every(&rule, &refs, now);
    let links = ConsoleLinks("https://console.example");
    let m = discord_message(&[big, small], &links);
    assert_eq!(m.embeds.len(), MAX_EMBEDS);
    assert_eq!(
        m.content,
        "148 more matching events — open in console: https://console.example/logs?saved=ss_1&range=1h"
    );
    assert!(m.embeds[0].url.as_deref().unwrap().starts_with(
        "https://console.example/logs?server=c&range=custom&from=1969-12-31T23%3A59%3A00.000Z"
    ));
    // one that fits says nothing more; the test message has no embeds
    let one = Firing::every(&rule, &refs[..1], now);
    assert_eq!(discord_message(&[one], &links).content, "");
    assert!(discord_message(&[Firing::test(now)], &links)
        .embeds
        .is_empty());
}
