//! Alert rules, destinations, the delivery log and the outbox in memory ([`AlertStore`],
//! [`AlertQueue`]): the same names, limits, references, leases and order as the Postgres adapter,
//! each change's audit entry written to `audit`. Rules watch the saved searches of the
//! [`MemorySavedSearches`] they were made with.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use auth_core::audit::{Action, Audit};
use auth_core::memory::MemoryAudit;
use auth_core::{OrgId, StoreError};
use chrono::{DateTime, Utc};

use super::MemorySavedSearches;
use crate::alert_queue::{AlertQueue, Attempt, Leased};
use crate::alert_store::{
    self, new_delivery_id, AlertPut, AlertRule, AlertStore, Delivery, DeliveryQuery,
    DeliveryStatus, Destination, DestinationDelete,
};
use crate::saved::SavedSearchStore;

/// How long a delivery is tried (the Postgres adapter's `RETRY_FOR`).
const RETRY_FOR: chrono::Duration = chrono::Duration::hours(24);

/// A delivery in the outbox.
struct Queued {
    org: OrgId,
    delivery: Delivery,
    leased_until: Option<DateTime<Utc>>,
    give_up_at: DateTime<Utc>,
    body: Option<serde_json::Value>,
}

#[derive(Default)]
struct State {
    destinations: Vec<Destination>,
    rules: Vec<AlertRule>,
    deliveries: Vec<Queued>,
    /// Destinations held back, until when.
    holds: HashMap<String, DateTime<Utc>>,
}

/// Alerts in memory, beside the saved searches their rules name.
pub struct MemoryAlerts {
    state: Mutex<State>,
    saved: Arc<MemorySavedSearches>,
    audit: Arc<MemoryAudit>,
}

impl MemoryAlerts {
    /// Queues a firing of rule `rule_id` to `destination_id`, as a batch commit does (the
    /// Postgres adapter queues firings in its commit; tests of what a firing's delivery may be
    /// used for queue one here). Its delivery's id.
    pub fn queue_firing(
        &self,
        org: &OrgId,
        rule_id: &str,
        destination_id: &str,
        body: serde_json::Value,
        now: DateTime<Utc>,
    ) -> String {
        let rule = Some((rule_id.to_owned(), body));
        self.state().queue(org, destination_id, rule, now)
    }

    pub fn new(saved: Arc<MemorySavedSearches>, audit: Arc<MemoryAudit>) -> Self {
        Self {
            state: Mutex::default(),
            saved,
            audit,
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Whether another entry of `org` than `id` has `name`, in either case.
fn taken<'a>(
    mut names: impl Iterator<Item = (&'a OrgId, &'a str, &'a str)>,
    org: &OrgId,
    id: &str,
    name: &str,
) -> bool {
    let name = name.to_lowercase();
    names.any(|(o, i, n)| o == org && i != id && n.to_lowercase() == name)
}

fn by_name<T>(list: &mut [T], key: impl Fn(&T) -> (String, String)) {
    list.sort_by_key(key);
}

impl State {
    fn destination_taken(&self, d: &Destination) -> bool {
        let names = self
            .destinations
            .iter()
            .map(|x| (&x.org_id, x.id.as_str(), x.name.as_str()));
        taken(names, &d.org_id, &d.id, &d.name)
    }

    fn rule_taken(&self, r: &AlertRule) -> bool {
        let names = self
            .rules
            .iter()
            .map(|x| (&x.org_id, x.id.as_str(), x.spec.name.as_str()));
        taken(names, &r.org_id, &r.id, &r.spec.name)
    }

    /// The first destination `r` names that its organization does not have.
    fn unknown_destination(&self, r: &AlertRule) -> Option<AlertPut> {
        r.spec
            .destination_ids
            .iter()
            .find(|id| {
                !self
                    .destinations
                    .iter()
                    .any(|d| d.org_id == r.org_id && d.id == **id)
            })
            .map(|id| AlertPut::UnknownDestination(id.clone()))
    }
}

impl MemoryAlerts {
    /// What stops `r` from being stored as it is: its name, its saved search, its destinations.
    async fn refusal(&self, r: &AlertRule) -> Result<Option<AlertPut>, StoreError> {
        if self
            .saved
            .get(&r.org_id, &r.spec.saved_search_id)
            .await?
            .is_none()
        {
            return Ok(Some(AlertPut::UnknownSavedSearch(
                r.spec.saved_search_id.clone(),
            )));
        }
        Ok(self.state().unknown_destination(r))
    }
}

#[async_trait]
impl AlertStore for MemoryAlerts {
    async fn destinations(&self, org: &OrgId) -> Result<Vec<Destination>, StoreError> {
        let mut list: Vec<Destination> = self
            .state()
            .destinations
            .iter()
            .filter(|d| d.org_id == *org)
            .cloned()
            .collect();
        by_name(&mut list, |d| (d.name.to_lowercase(), d.id.clone()));
        Ok(list)
    }

    async fn destination(&self, org: &OrgId, id: &str) -> Result<Option<Destination>, StoreError> {
        Ok(self
            .state()
            .destinations
            .iter()
            .find(|d| d.org_id == *org && d.id == id)
            .cloned())
    }

    async fn create_destination(
        &self,
        d: &Destination,
        max: usize,
        audit: &Audit,
    ) -> Result<AlertPut, StoreError> {
        let mut state = self.state();
        if state.destination_taken(d) {
            return Ok(AlertPut::NameTaken);
        }
        let count = state
            .destinations
            .iter()
            .filter(|x| x.org_id == d.org_id)
            .count();
        if count >= max {
            return Ok(AlertPut::LimitReached);
        }
        state.destinations.push(d.clone());
        self.audit.append([alert_store::destination_entry(
            audit,
            Action::DestinationCreate,
            d,
            "",
        )]);
        Ok(AlertPut::Done)
    }

    async fn update_destination(
        &self,
        d: &Destination,
        what: &str,
        audit: &Audit,
    ) -> Result<AlertPut, StoreError> {
        let mut state = self.state();
        if state.destination_taken(d) {
            return Ok(AlertPut::NameTaken);
        }
        let Some(row) = state
            .destinations
            .iter_mut()
            .find(|x| x.org_id == d.org_id && x.id == d.id)
        else {
            return Ok(AlertPut::Missing);
        };
        row.name = d.name.clone();
        row.url_hint = d.url_hint.clone();
        row.sealed = d.sealed.clone();
        row.updated_at = d.updated_at;
        self.audit.append([alert_store::destination_entry(
            audit,
            Action::DestinationChange,
            d,
            what,
        )]);
        Ok(AlertPut::Done)
    }

    async fn delete_destination(
        &self,
        org: &OrgId,
        id: &str,
        audit: &Audit,
    ) -> Result<DestinationDelete, StoreError> {
        let mut state = self.state();
        let mut users: Vec<String> = state
            .rules
            .iter()
            .filter(|r| r.org_id == *org && r.spec.destination_ids.iter().any(|d| d == id))
            .map(|r| r.spec.name.clone())
            .collect();
        if !users.is_empty() {
            users.sort_by_key(|n| n.to_lowercase());
            return Ok(DestinationDelete::InUse(users));
        }
        let Some(i) = state
            .destinations
            .iter()
            .position(|d| d.org_id == *org && d.id == id)
        else {
            return Ok(DestinationDelete::Missing);
        };
        let gone = state.destinations.remove(i);
        self.audit.append([alert_store::destination_entry(
            audit,
            Action::DestinationDelete,
            &gone,
            "",
        )]);
        Ok(DestinationDelete::Done)
    }

    async fn rules(&self, org: &OrgId) -> Result<Vec<AlertRule>, StoreError> {
        let mut list: Vec<AlertRule> = self
            .state()
            .rules
            .iter()
            .filter(|r| r.org_id == *org)
            .cloned()
            .collect();
        by_name(&mut list, |r| (r.spec.name.to_lowercase(), r.id.clone()));
        Ok(list)
    }

    async fn rule(&self, org: &OrgId, id: &str) -> Result<Option<AlertRule>, StoreError> {
        Ok(self
            .state()
            .rules
            .iter()
            .find(|r| r.org_id == *org && r.id == id)
            .cloned())
    }

    async fn create_rule(
        &self,
        r: &AlertRule,
        max: usize,
        audit: &Audit,
    ) -> Result<AlertPut, StoreError> {
        {
            let state = self.state();
            if state.rule_taken(r) {
                return Ok(AlertPut::NameTaken);
            }
            if state.rules.iter().filter(|x| x.org_id == r.org_id).count() >= max {
                return Ok(AlertPut::LimitReached);
            }
        }
        if let Some(refused) = self.refusal(r).await? {
            return Ok(refused);
        }
        let mut state = self.state();
        if state.rule_taken(r) {
            return Ok(AlertPut::NameTaken);
        }
        state.rules.push(r.clone());
        self.audit
            .append([alert_store::rule_entry(audit, Action::AlertRuleCreate, r)]);
        Ok(AlertPut::Done)
    }

    async fn update_rule(&self, r: &AlertRule, audit: &Audit) -> Result<AlertPut, StoreError> {
        {
            let state = self.state();
            if !state
                .rules
                .iter()
                .any(|x| x.org_id == r.org_id && x.id == r.id)
            {
                return Ok(AlertPut::Missing);
            }
            if state.rule_taken(r) {
                return Ok(AlertPut::NameTaken);
            }
        }
        if let Some(refused) = self.refusal(r).await? {
            return Ok(refused);
        }
        let mut state = self.state();
        let Some(row) = state
            .rules
            .iter_mut()
            .find(|x| x.org_id == r.org_id && x.id == r.id)
        else {
            return Ok(AlertPut::Missing);
        };
        row.spec = r.spec.clone();
        row.muted_until = r.muted_until;
        row.updated_at = r.updated_at;
        self.audit
            .append([alert_store::rule_entry(audit, Action::AlertRuleChange, r)]);
        Ok(AlertPut::Done)
    }

    async fn delete_rule(&self, org: &OrgId, id: &str, audit: &Audit) -> Result<bool, StoreError> {
        let mut state = self.state();
        let Some(i) = state
            .rules
            .iter()
            .position(|r| r.org_id == *org && r.id == id)
        else {
            return Ok(false);
        };
        let gone = state.rules.remove(i);
        self.audit.append([alert_store::rule_entry(
            audit,
            Action::AlertRuleDelete,
            &gone,
        )]);
        Ok(true)
    }

    async fn deliveries(&self, q: &DeliveryQuery) -> Result<Vec<Delivery>, StoreError> {
        let state = self.state();
        let mut page: Vec<Delivery> = state
            .deliveries
            .iter()
            .map(|x| (&x.org, &x.delivery))
            .filter(|(org, d)| {
                **org == q.org_id
                    && q.rule_id
                        .as_ref()
                        .is_none_or(|r| d.rule_id.as_ref() == Some(r))
                    && q.before.is_none_or(|b| d.seq < b)
                    && match (&q.only_rules, &d.rule_id) {
                        (Some(only), Some(rule)) => only.contains(rule),
                        _ => true,
                    }
            })
            .map(|(_, d)| d.clone())
            .collect();
        page.sort_by_key(|d| std::cmp::Reverse(d.seq));
        page.truncate(q.limit.min(alert_store::MAX_DELIVERY_PAGE));
        Ok(page)
    }

    async fn delivery(&self, org: &OrgId, id: &str) -> Result<Option<Delivery>, StoreError> {
        Ok(self
            .state()
            .deliveries
            .iter()
            .find(|q| q.org == *org && q.delivery.id == id)
            .map(|q| q.delivery.clone()))
    }

    async fn send_again(
        &self,
        org: &OrgId,
        id: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<bool>, StoreError> {
        let mut state = self.state();
        let Some(q) = state
            .deliveries
            .iter_mut()
            .find(|q| q.org == *org && q.delivery.id == id)
        else {
            return Ok(None);
        };
        if q.delivery.status == DeliveryStatus::Pending {
            return Ok(Some(false));
        }
        q.delivery.status = DeliveryStatus::Pending;
        q.delivery.next_attempt_at = Some(now);
        q.delivery.attempts = 0;
        q.delivery.delivered_at = None;
        q.leased_until = None;
        q.give_up_at = now + RETRY_FOR;
        Ok(Some(true))
    }

    async fn send_test(
        &self,
        org: &OrgId,
        id: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<String>, StoreError> {
        let mut state = self.state();
        if !state
            .destinations
            .iter()
            .any(|d| d.org_id == *org && d.id == id)
        {
            return Ok(None);
        }
        Ok(Some(state.queue(org, id, None, now)))
    }
}

impl State {
    /// Queues a delivery to `destination_id`: of a rule's firing (its id and body), or a test
    /// message. Its id.
    fn queue(
        &mut self,
        org: &OrgId,
        destination_id: &str,
        rule: Option<(String, serde_json::Value)>,
        now: DateTime<Utc>,
    ) -> String {
        let (rule_id, body) = rule.map_or((None, None), |(r, b)| (Some(r), Some(b)));
        let delivery = Delivery {
            id: new_delivery_id(),
            seq: self.deliveries.last().map_or(1, |q| q.delivery.seq + 1),
            destination_id: destination_id.to_owned(),
            rule_id,
            status: DeliveryStatus::Pending,
            attempts: 0,
            next_attempt_at: Some(now),
            last_code: None,
            last_error: None,
            created_at: now,
            delivered_at: None,
        };
        let id = delivery.id.clone();
        self.deliveries.push(Queued {
            org: org.clone(),
            delivery,
            leased_until: None,
            give_up_at: now + RETRY_FOR,
            body,
        });
        id
    }

    /// Whether delivery `i` may be sent at `now`: pending, due, not leased, its destination not
    /// held, and first in its queue (no earlier pending delivery of its rule to its destination).
    fn due(&self, i: usize, now: DateTime<Utc>) -> bool {
        let q = &self.deliveries[i];
        let d = &q.delivery;
        d.status == DeliveryStatus::Pending
            && d.next_attempt_at.is_none_or(|t| t <= now)
            && q.leased_until.is_none_or(|t| t <= now)
            && self.holds.get(&d.destination_id).is_none_or(|t| *t <= now)
            && !self.deliveries[..i].iter().any(|e| {
                e.delivery.destination_id == d.destination_id
                    && e.delivery.rule_id == d.rule_id
                    && e.delivery.status == DeliveryStatus::Pending
            })
    }

    /// Leases delivery `i` until `until`, its attempt counted.
    fn lease(&mut self, i: usize, until: DateTime<Utc>) -> Leased {
        let (kind, sealed) = self
            .destinations
            .iter()
            .find(|t| t.id == self.deliveries[i].delivery.destination_id)
            .map(|t| (t.kind.as_str().to_owned(), t.sealed.clone()))
            .unwrap_or_default();
        let q = &mut self.deliveries[i];
        q.leased_until = Some(until);
        q.delivery.attempts += 1;
        Leased {
            seq: q.delivery.seq,
            id: q.delivery.id.clone(),
            destination_id: q.delivery.destination_id.clone(),
            kind,
            sealed,
            rule_id: q.delivery.rule_id.clone(),
            body: q.body.clone(),
            attempts: q.delivery.attempts,
            give_up_at: q.give_up_at,
        }
    }
}

#[async_trait]
impl AlertQueue for MemoryAlerts {
    async fn lease_due(
        &self,
        limit: usize,
        now: DateTime<Utc>,
        lease: chrono::Duration,
    ) -> Result<Vec<Leased>, StoreError> {
        let mut state = self.state();
        let mut due: Vec<usize> = (0..state.deliveries.len())
            .filter(|i| state.due(*i, now))
            .collect();
        due.sort_by_key(|i| {
            let d = &state.deliveries[*i].delivery;
            (d.next_attempt_at, d.seq)
        });
        due.truncate(limit);
        let mut taken: Vec<Leased> = due
            .into_iter()
            .map(|i| state.lease(i, now + lease))
            .collect();
        taken.sort_by_key(|l| l.seq);
        Ok(taken)
    }

    async fn lease_behind(
        &self,
        head: &Leased,
        limit: usize,
        now: DateTime<Utc>,
        lease: chrono::Duration,
    ) -> Result<Vec<Leased>, StoreError> {
        let mut state = self.state();
        let behind: Vec<usize> = (0..state.deliveries.len())
            .filter(|i| {
                let q = &state.deliveries[*i];
                q.delivery.destination_id == head.destination_id
                    && head.rule_id.is_some()
                    && q.delivery.rule_id == head.rule_id
                    && q.delivery.status == DeliveryStatus::Pending
                    && q.delivery.seq > head.seq
                    && q.leased_until.is_none_or(|t| t <= now)
            })
            .take(limit)
            .collect();
        Ok(behind
            .into_iter()
            .map(|i| state.lease(i, now + lease))
            .collect())
    }

    async fn lease_next(
        &self,
        after: &Leased,
        now: DateTime<Utc>,
        lease: chrono::Duration,
    ) -> Result<Option<Leased>, StoreError> {
        let mut state = self.state();
        let next = (0..state.deliveries.len()).find(|i| {
            let d = &state.deliveries[*i].delivery;
            d.destination_id == after.destination_id
                && d.rule_id == after.rule_id
                && d.seq > after.seq
                && state.due(*i, now)
        });
        Ok(next.map(|i| state.lease(i, now + lease)))
    }

    async fn renew(&self, seqs: &[i64], until: DateTime<Utc>) -> Result<(), StoreError> {
        let mut state = self.state();
        for q in state.deliveries.iter_mut().filter(|q| {
            seqs.contains(&q.delivery.seq)
                && q.delivery.status == DeliveryStatus::Pending
                && q.leased_until.is_some()
        }) {
            q.leased_until = Some(until);
        }
        Ok(())
    }

    async fn finish(
        &self,
        seqs: &[i64],
        destination_id: &str,
        attempt: &Attempt,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        if let Attempt::Held { until } = attempt {
            self.hold(destination_id, *until).await?;
        }
        let mut state = self.state();
        for q in state
            .deliveries
            .iter_mut()
            .filter(|q| seqs.contains(&q.delivery.seq))
        {
            let d = &mut q.delivery;
            q.leased_until = None;
            match attempt {
                Attempt::Delivered { code } => {
                    d.status = DeliveryStatus::Delivered;
                    d.delivered_at = Some(now);
                    d.last_code = Some(*code);
                    d.last_error = None;
                }
                Attempt::Failed {
                    code,
                    error,
                    retry_at,
                } => {
                    d.last_code = *code;
                    d.last_error = Some(error.clone());
                    d.next_attempt_at = Some(*retry_at);
                    if *retry_at > q.give_up_at {
                        d.status = DeliveryStatus::Failed;
                    }
                }
                Attempt::Held { until } => {
                    d.last_code = Some(429);
                    d.last_error = Some("rate limited".into());
                    d.next_attempt_at = Some(*until);
                    d.attempts -= 1;
                }
            }
        }
        Ok(())
    }

    async fn hold(&self, destination_id: &str, until: DateTime<Utc>) -> Result<(), StoreError> {
        let mut state = self.state();
        let hold = state
            .holds
            .entry(destination_id.to_owned())
            .or_insert(until);
        *hold = (*hold).max(until);
        Ok(())
    }

    async fn prune(&self, now: DateTime<Utc>, keep: chrono::Duration) -> Result<(), StoreError> {
        self.state().deliveries.retain(|q| {
            q.delivery.status == DeliveryStatus::Pending || q.delivery.created_at >= now - keep
        });
        Ok(())
    }
}
