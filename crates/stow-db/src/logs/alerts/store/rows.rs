//! The rows of migration 29's alert tables, the columns that read them, and their conversions.

use super::*;

#[derive(QueryableByName)]
pub(super) struct DestinationRow {
    #[diesel(sql_type = Text)]
    pub(super) id: String,
    #[diesel(sql_type = Text)]
    pub(super) org_id: String,
    #[diesel(sql_type = Text)]
    pub(super) name: String,
    #[diesel(sql_type = Text)]
    pub(super) kind: String,
    #[diesel(sql_type = Text)]
    pub(super) url_hint: String,
    #[diesel(sql_type = Bytea)]
    pub(super) sealed: Vec<u8>,
    #[diesel(sql_type = Text)]
    pub(super) created_by: String,
    #[diesel(sql_type = Timestamptz)]
    pub(super) created_at: DateTime<Utc>,
    #[diesel(sql_type = Timestamptz)]
    pub(super) updated_at: DateTime<Utc>,
}

impl From<DestinationRow> for Destination {
    fn from(r: DestinationRow) -> Self {
        Destination {
            id: r.id,
            org_id: OrgId::new(r.org_id),
            name: r.name,
            kind: DestinationKind::parse(&r.kind).unwrap_or(DestinationKind::Webhook),
            url_hint: r.url_hint,
            sealed: r.sealed,
            created_by: r.created_by,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

pub(super) const DESTINATION_COLUMNS: &str =
    "id, org_id, name, kind, url_hint, sealed, created_by, created_at, updated_at";

#[derive(QueryableByName)]
pub(in crate::logs::alerts) struct RuleRow {
    #[diesel(sql_type = Text)]
    pub(super) id: String,
    #[diesel(sql_type = Text)]
    pub(super) org_id: String,
    #[diesel(sql_type = Text)]
    pub(super) name: String,
    #[diesel(sql_type = Text)]
    pub(super) saved_search_id: String,
    #[diesel(sql_type = Text)]
    pub(super) kind: String,
    #[diesel(sql_type = Nullable<BigInt>)]
    pub(super) threshold: Option<i64>,
    #[diesel(sql_type = Nullable<Integer>)]
    pub(super) window_minutes: Option<i32>,
    #[diesel(sql_type = Nullable<Integer>)]
    pub(super) cooldown_minutes: Option<i32>,
    #[diesel(sql_type = Nullable<Text>)]
    pub(super) group_by: Option<String>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub(super) muted_until: Option<DateTime<Utc>>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub(super) last_fired_at: Option<DateTime<Utc>>,
    #[diesel(sql_type = Array<Text>)]
    pub(super) destination_ids: Vec<String>,
    #[diesel(sql_type = Text)]
    pub(super) created_by: String,
    #[diesel(sql_type = Timestamptz)]
    pub(super) created_at: DateTime<Utc>,
    #[diesel(sql_type = Timestamptz)]
    pub(super) updated_at: DateTime<Utc>,
}

/// The trigger of stored columns (the table's check keeps them consistent).
fn trigger_of(
    kind: &str,
    threshold: Option<i64>,
    window: Option<i32>,
    cooldown: Option<i32>,
) -> Trigger {
    match (kind, threshold, window) {
        ("threshold", Some(t), Some(w)) => Trigger::Threshold {
            count: t.max(1) as u64,
            window: Duration::minutes(i64::from(w)),
            cooldown: Duration::minutes(i64::from(cooldown.unwrap_or(0))),
        },
        _ => Trigger::EveryMatch,
    }
}

impl From<RuleRow> for AlertRule {
    fn from(r: RuleRow) -> Self {
        AlertRule {
            id: r.id,
            org_id: OrgId::new(r.org_id),
            spec: RuleSpec {
                name: r.name,
                saved_search_id: r.saved_search_id,
                trigger: trigger_of(&r.kind, r.threshold, r.window_minutes, r.cooldown_minutes),
                group_by: r.group_by.as_deref().and_then(GroupBy::parse),
                destination_ids: r.destination_ids,
            },
            muted_until: r.muted_until,
            last_fired_at: r.last_fired_at,
            created_by: r.created_by,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

/// Rules with their destinations (in the order given) and when they last fired, as
/// [`RuleRow`] reads them (from `alert_rules r`).
pub(in crate::logs::alerts) const RULE_COLUMNS: &str =
    "r.id, r.org_id, r.name, r.saved_search_id, r.kind, r.threshold, \
     r.window_minutes, r.cooldown_minutes, r.group_by, r.muted_until, \
     (SELECT max(f.fired_at) FROM alert_firings f WHERE f.rule_id = r.id) \
       AS last_fired_at, \
     ARRAY(SELECT d.destination_id FROM alert_rule_destinations d WHERE d.rule_id = r.id \
           ORDER BY d.position) AS destination_ids, \
     r.created_by, r.created_at, r.updated_at";

/// The columns of [`DeliveryRow`].
pub(super) const DELIVERY_COLUMNS: &str = "id, seq, destination_id, rule_id, status, attempts, \
     next_attempt_at, last_code, last_error, created_at, delivered_at";

#[derive(QueryableByName)]
pub(super) struct DeliveryRow {
    #[diesel(sql_type = Text)]
    pub(super) id: String,
    #[diesel(sql_type = BigInt)]
    pub(super) seq: i64,
    #[diesel(sql_type = Text)]
    pub(super) destination_id: String,
    #[diesel(sql_type = Nullable<Text>)]
    pub(super) rule_id: Option<String>,
    #[diesel(sql_type = Text)]
    pub(super) status: String,
    #[diesel(sql_type = Integer)]
    pub(super) attempts: i32,
    #[diesel(sql_type = Timestamptz)]
    pub(super) next_attempt_at: DateTime<Utc>,
    #[diesel(sql_type = Nullable<Integer>)]
    pub(super) last_code: Option<i32>,
    #[diesel(sql_type = Nullable<Text>)]
    pub(super) last_error: Option<String>,
    #[diesel(sql_type = Timestamptz)]
    pub(super) created_at: DateTime<Utc>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub(super) delivered_at: Option<DateTime<Utc>>,
}

impl From<DeliveryRow> for Delivery {
    fn from(r: DeliveryRow) -> Self {
        let status = DeliveryStatus::parse(&r.status).unwrap_or(DeliveryStatus::Pending);
        Delivery {
            id: r.id,
            seq: r.seq,
            destination_id: r.destination_id,
            rule_id: r.rule_id,
            status,
            attempts: r.attempts,
            next_attempt_at: (status == DeliveryStatus::Pending).then_some(r.next_attempt_at),
            last_code: r.last_code,
            last_error: r.last_error,
            created_at: r.created_at,
            delivered_at: r.delivered_at,
        }
    }
}
