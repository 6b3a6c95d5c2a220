//! Alert rules, destinations and deliveries as stored (issue 41), and the store they live in.
//!
//! A destination's address (a Discord webhook URL holds its token) and a generic webhook's
//! signing secret are sealed by the caller before they reach the store and opened only by the
//! delivery worker; the store keeps bytes it cannot read and a hint of the address to show.

use async_trait::async_trait;
use auth_core::audit::{Action, Audit, AuditEntry};
use auth_core::{OrgId, StoreError};
use chrono::{DateTime, Utc};
use serde_json::json;

use crate::alerts::RuleSpec;

/// Destinations an organization may have.
pub const MAX_DESTINATIONS: usize = 50;
/// Deliveries one page of the delivery log shows at most.
pub const MAX_DELIVERY_PAGE: usize = 200;

/// Where a destination sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DestinationKind {
    /// A Discord webhook: messages with embeds, Discord's rate limits followed.
    Discord,
    /// Any HTTPS endpoint: a JSON body signed the Standard Webhooks way.
    Webhook,
}

impl DestinationKind {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "discord" => Some(Self::Discord),
            "webhook" => Some(Self::Webhook),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Discord => "discord",
            Self::Webhook => "webhook",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    /// `dst_…`.
    pub id: String,
    pub org_id: OrgId,
    pub name: String,
    pub kind: DestinationKind,
    /// What may be shown of the address: its origin and the start of its path.
    pub url_hint: String,
    /// The address and signing secret, sealed ([`crate::alert_delivery::Secrets`]).
    pub sealed: Vec<u8>,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertRule {
    /// `alr_…`.
    pub id: String,
    pub org_id: OrgId,
    pub spec: RuleSpec,
    pub muted_until: Option<DateTime<Utc>>,
    pub last_fired_at: Option<DateTime<Utc>>,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// What became of a delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryStatus {
    /// Not sent yet, or to be tried again at `next_attempt_at`.
    Pending,
    Delivered,
    /// Every try failed for 24 hours (or the receiver refused it for good).
    Failed,
}

impl DeliveryStatus {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(Self::Pending),
            "delivered" => Some(Self::Delivered),
            "failed" => Some(Self::Failed),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Delivered => "delivered",
            Self::Failed => "failed",
        }
    }
}

/// One entry of the delivery log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// `msg_…`: the `webhook-id` of every attempt.
    pub id: String,
    pub seq: i64,
    pub destination_id: String,
    /// `None`: a test message.
    pub rule_id: Option<String>,
    pub status: DeliveryStatus,
    pub attempts: i32,
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// The receiver's last answer code; `None` when it gave none (refused, timed out).
    pub last_code: Option<i32>,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub delivered_at: Option<DateTime<Utc>>,
}

/// What a change to the store came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AlertPut {
    Done,
    /// Another rule (or destination) of the organization has the name, in either case.
    NameTaken,
    /// The organization has the limit's number already (creating only).
    LimitReached,
    /// No such rule or destination (changing only).
    Missing,
    /// The rule names a saved search the organization does not have.
    UnknownSavedSearch(String),
    /// The rule names a destination the organization does not have.
    UnknownDestination(String),
}

/// What deleting a destination came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DestinationDelete {
    Done,
    Missing,
    /// Rules send to it (their names): they have to be changed or deleted first.
    InUse(Vec<String>),
}

/// A page of the delivery log, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryQuery {
    pub org_id: OrgId,
    /// Only this rule's deliveries (`None`: every rule's and the test messages).
    pub rule_id: Option<String>,
    /// Only deliveries of these rules, and test messages (`None`: no such limit) — the rules a
    /// server-scoped caller may see.
    pub only_rules: Option<Vec<String>>,
    /// Only deliveries older than this `seq` (the previous page's last).
    pub before: Option<i64>,
    pub limit: usize,
}

#[async_trait]
pub trait AlertStore: Send + Sync {
    /// The organization's destinations, by name (case-insensitively).
    async fn destinations(&self, org: &OrgId) -> Result<Vec<Destination>, StoreError>;
    async fn destination(&self, org: &OrgId, id: &str) -> Result<Option<Destination>, StoreError>;
    async fn create_destination(
        &self,
        d: &Destination,
        max: usize,
        audit: &Audit,
    ) -> Result<AlertPut, StoreError>;
    /// Replaces the name, hint and sealed secrets of destination `d.id` (the caller kept what
    /// does not change), and `updated_at`.
    async fn update_destination(
        &self,
        d: &Destination,
        what: &str,
        audit: &Audit,
    ) -> Result<AlertPut, StoreError>;
    async fn delete_destination(
        &self,
        org: &OrgId,
        id: &str,
        audit: &Audit,
    ) -> Result<DestinationDelete, StoreError>;

    /// The organization's rules, by name (case-insensitively).
    async fn rules(&self, org: &OrgId) -> Result<Vec<AlertRule>, StoreError>;
    async fn rule(&self, org: &OrgId, id: &str) -> Result<Option<AlertRule>, StoreError>;
    /// Adds a rule. It acts as `audit`'s actor (a member or key, its *maker*): it sends only
    /// what that maker may read at the time ([`crate::alerts::MakerReach`]).
    async fn create_rule(
        &self,
        r: &AlertRule,
        max: usize,
        audit: &Audit,
    ) -> Result<AlertPut, StoreError>;
    /// Replaces rule `r.id`'s settings and mute (its threshold memory starts again when the
    /// trigger, group or saved search changes); from now on it acts as `audit`'s actor.
    async fn update_rule(&self, r: &AlertRule, audit: &Audit) -> Result<AlertPut, StoreError>;
    async fn delete_rule(&self, org: &OrgId, id: &str, audit: &Audit) -> Result<bool, StoreError>;

    /// A page of the delivery log.
    async fn deliveries(&self, q: &DeliveryQuery) -> Result<Vec<Delivery>, StoreError>;
    /// Delivery `id` of `org`.
    async fn delivery(&self, org: &OrgId, id: &str) -> Result<Option<Delivery>, StoreError>;
    /// Sends delivery `id` again (a failed or delivered one: pending now, with 24 hours of
    /// retries; the same `webhook-id`). `None`: no such delivery; `Some(false)`: it is pending.
    async fn send_again(
        &self,
        org: &OrgId,
        id: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<bool>, StoreError>;
    /// Queues a test message to destination `id`; its delivery's id, `None` when no such
    /// destination.
    async fn send_test(
        &self,
        org: &OrgId,
        id: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<String>, StoreError>;
}

/// A new destination's id.
pub fn new_destination_id() -> String {
    auth_core::model::new_id("dst")
}

/// A new rule's id.
pub fn new_rule_id() -> String {
    auth_core::model::new_id("alr")
}

/// A new delivery's id (its `webhook-id`).
pub fn new_delivery_id() -> String {
    format!("msg_{}", ulid::Ulid::new())
}

/// The rule's settings as the audit log shows them.
fn rule_details(r: &AlertRule) -> serde_json::Value {
    let mut v = json!({
        "name": r.spec.name,
        "savedSearchId": r.spec.saved_search_id,
        "destinationIds": r.spec.destination_ids,
        "mutedUntil": r.muted_until.map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
    });
    v["kind"] = r.spec.trigger.kind().into();
    if let Some((count, window, cooldown)) = r.spec.trigger.threshold() {
        v["threshold"] = count.into();
        v["windowMinutes"] = window.into();
        v["cooldownMinutes"] = cooldown.into();
        v["groupBy"] = r.spec.group_by.map(|g| g.as_str()).into();
    }
    v
}

pub fn rule_entry(audit: &Audit, action: Action, r: &AlertRule) -> AuditEntry {
    audit.entry(&r.org_id, action, r.id.as_str(), rule_details(r))
}

/// The audit entry of a destination made, changed (`what` says how) or deleted; never its
/// address or secret.
pub fn destination_entry(audit: &Audit, action: Action, d: &Destination, what: &str) -> AuditEntry {
    let mut details = json!({ "name": d.name, "kind": d.kind.as_str(), "url": d.url_hint });
    if !what.is_empty() {
        details["change"] = what.into();
    }
    audit.entry(&d.org_id, action, d.id.as_str(), details)
}
