//! How committed events meet the rules: the minute and window of a threshold rule, its decision,
//! the groups of a batch, the servers a rule's maker still reads, and the matches of a commit.

use super::*;

/// Whether a rule muted until `until` is muted at `now`.
pub fn is_muted(until: Option<DateTime<Utc>>, now: DateTime<Utc>) -> bool {
    until.is_some_and(|u| now < u)
}

/// The minute a threshold rule counts an event in (its `occurredAt`, truncated).
pub fn minute_of(t: DateTime<Utc>) -> DateTime<Utc> {
    t.duration_trunc(Duration::minutes(1)).unwrap_or(t)
}

/// The events of the window ending at `now` in per-minute counts: the minutes after
/// `now - window` up to and including `now`'s (a window of 5 minutes at 12:07:30 counts 12:03 to
/// 12:07). Counts of minutes outside are ignored (late or future events count in their own
/// minute, as the rule saw them arrive).
pub fn window_sum(counts: &[(DateTime<Utc>, u64)], now: DateTime<Utc>, window: Duration) -> u64 {
    let last = minute_of(now);
    let first = last - window + Duration::minutes(1);
    counts
        .iter()
        .filter(|(m, _)| *m >= first && *m <= last)
        .map(|(_, n)| n)
        .sum()
}

/// A threshold rule's memory of one group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GroupState {
    /// The count was at or over the threshold when last seen (a breach is on).
    pub breached: bool,
    pub last_fired: Option<DateTime<Utc>>,
}

/// What a threshold rule does for one group after a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// A new breach, or a lasting one past its cool-down: send.
    Fire,
    /// Nothing to send.
    Hold,
    /// The breach is over (the next one fires again).
    Clear,
}

/// The decision for a group whose window now holds `in_window` matching events, and its next
/// state. A breach fires once; while it lasts it fires again only when `cooldown` is positive
/// and has passed since the last firing; it clears when the count falls below the threshold.
pub fn decide(
    state: GroupState,
    in_window: u64,
    threshold: u64,
    cooldown: Duration,
    now: DateTime<Utc>,
) -> (Decision, GroupState) {
    if in_window >= threshold {
        let again = state.breached
            && cooldown > Duration::zero()
            && state.last_fired.is_some_and(|t| now - t >= cooldown);
        if !state.breached || again {
            return (
                Decision::Fire,
                GroupState {
                    breached: true,
                    last_fired: Some(now),
                },
            );
        }
        return (Decision::Hold, state);
    }
    if state.breached {
        return (
            Decision::Clear,
            GroupState {
                breached: false,
                ..state
            },
        );
    }
    (Decision::Hold, state)
}

/// The groups a batch's matching events fall in, with their counts per minute, in group and
/// minute order; at most [`MAX_GROUPS`] groups with `known` (the groups the rule already tracks,
/// which keep their own counts) — events of any further group count in [`OTHER_GROUP`].
pub fn tally<'a>(
    group_by: Option<GroupBy>,
    events: impl IntoIterator<Item = &'a EventRow>,
    known: &[String],
) -> Vec<(String, DateTime<Utc>, u64)> {
    let mut groups: BTreeSet<String> = known.iter().cloned().collect();
    let mut counts: BTreeMap<(String, DateTime<Utc>), u64> = BTreeMap::new();
    for e in events {
        let mut g = group_by.map_or_else(String::new, |by| by.group_of(e));
        if !groups.contains(&g) {
            if groups.len() >= MAX_GROUPS {
                g = OTHER_GROUP.to_owned();
            } else {
                groups.insert(g.clone());
            }
        }
        *counts.entry((g, minute_of(e.occurred_at))).or_default() += 1;
    }
    counts.into_iter().map(|((g, m), n)| (g, m, n)).collect()
}

/// What a rule's maker — the member or key that last saved it — may read now: a rule sends
/// only events its maker could query (a saved search of every server means every server *the
/// maker* may read), and nothing once the maker is gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MakerReach {
    /// The servers whose logs the maker reads.
    pub servers: auth_core::ServerScope,
    /// When the maker's key expires (`None`: a member, or a key without expiry).
    pub until: Option<DateTime<Utc>>,
}

impl MakerReach {
    /// The reach of a member holding `grant`, or of a key; `None` when it reads no logs (a key
    /// without `logs:read`).
    pub fn of(
        permissions: &auth_core::PermissionSet,
        servers: auth_core::ServerScope,
        until: Option<DateTime<Utc>>,
    ) -> Option<Self> {
        permissions
            .contains(auth_core::Permission::LogsRead)
            .then_some(Self { servers, until })
    }

    fn includes(&self, server: &ServerId, now: DateTime<Utc>) -> bool {
        self.until.is_none_or(|until| now < until) && self.servers.includes(server)
    }
}

/// A rule as the commit path evaluates it: its saved search's servers and filters with it.
#[derive(Debug, Clone)]
pub struct ActiveRule {
    pub id: String,
    pub org_id: OrgId,
    pub name: String,
    pub saved_search_id: String,
    pub servers: SavedServers,
    /// What its maker may read now (`None`: nothing — removed from the organization, key
    /// disabled or deleted, or unknown).
    pub reach: Option<MakerReach>,
    pub filters: Filters,
    pub trigger: Trigger,
    pub group_by: Option<GroupBy>,
    pub muted_until: Option<DateTime<Utc>>,
}

impl ActiveRule {
    /// Whether the rule watches events of `server` of `org` and is not muted at `now`: its saved
    /// search names the server (or every server), and its maker may read that server's logs at
    /// `now`.
    pub fn watches(&self, org: &OrgId, server: &ServerId, now: DateTime<Utc>) -> bool {
        self.org_id == *org
            && !is_muted(self.muted_until, now)
            && self.reach.as_ref().is_some_and(|r| r.includes(server, now))
            && match &self.servers {
                SavedServers::All => true,
                SavedServers::Named(ids) => ids.contains(server),
            }
    }
}

/// A threshold rule's count of matching events in one group and minute, added by a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MinuteCount {
    pub rule_id: String,
    pub group: String,
    pub minute: DateTime<Utc>,
    pub n: u64,
}

/// What the rules make of the events of one commit.
#[derive(Debug, Default)]
pub struct Matches<'a> {
    /// Every-match rules (by index into the rules) and their matching events, in order.
    pub every: Vec<(usize, Vec<&'a EventRow>)>,
    /// Threshold rules' counts, in rule, group and minute order (the order rows are locked in).
    pub counts: Vec<MinuteCount>,
}

/// Matches each server's accepted events against the rules watching it. A threshold rule
/// counts at most [`MAX_GROUPS`] groups per commit (the rest in [`OTHER_GROUP`]).
pub fn evaluate<'a>(
    rules: &[ActiveRule],
    servers: &[(&OrgId, &ServerId, &'a [EventRow])],
    now: DateTime<Utc>,
) -> Matches<'a> {
    let mut out = Matches::default();
    for (i, rule) in rules.iter().enumerate() {
        let matching: Vec<&'a EventRow> = servers
            .iter()
            .filter(|(org, server, _)| rule.watches(org, server, now))
            .flat_map(|(_, _, events)| events.iter())
            .filter(|e| rule.filters.matches(e))
            .collect();
        if matching.is_empty() {
            continue;
        }
        match rule.trigger {
            Trigger::EveryMatch => out.every.push((i, matching)),
            Trigger::Threshold { .. } => {
                out.counts
                    .extend(tally(rule.group_by, matching, &[]).into_iter().map(
                        |(group, minute, n)| MinuteCount {
                            rule_id: rule.id.clone(),
                            group,
                            minute,
                            n,
                        },
                    ))
            }
        }
    }
    out.counts
        .sort_by(|a, b| (&a.rule_id, &a.group, a.minute).cmp(&(&b.rule_id, &b.group, b.minute)));
    out
}
