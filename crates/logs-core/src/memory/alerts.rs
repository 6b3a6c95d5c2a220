//! Alert rules, destinations and the delivery log in memory ([`AlertStore`]): the same names,
//! limits and references as the Postgres adapter, each change's audit entry written to `audit`.
//! Rules watch the saved searches of the [`MemorySavedSearches`] they were made with.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use auth_core::audit::{Action, Audit};
use auth_core::memory::MemoryAudit;
use auth_core::{OrgId, StoreError};
use chrono::{DateTime, Utc};

use super::MemorySavedSearches;
use crate::alert_store::{
    self, new_delivery_id, AlertPut, AlertRule, AlertStore, Delivery, DeliveryQuery,
    DeliveryStatus, Destination, DestinationDelete,
};
use crate::saved::SavedSearchStore;

#[derive(Default)]
struct State {
    destinations: Vec<Destination>,
    rules: Vec<AlertRule>,
    deliveries: Vec<(OrgId, Delivery)>,
}

/// Alerts in memory, beside the saved searches their rules name.
pub struct MemoryAlerts {
    state: Mutex<State>,
    saved: Arc<MemorySavedSearches>,
    audit: Arc<MemoryAudit>,
}

impl MemoryAlerts {
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
            .filter(|(org, d)| {
                *org == q.org_id
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

    async fn send_again(
        &self,
        org: &OrgId,
        id: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<bool>, StoreError> {
        let mut state = self.state();
        let Some((_, d)) = state
            .deliveries
            .iter_mut()
            .find(|(o, d)| o == org && d.id == id)
        else {
            return Ok(None);
        };
        if d.status == DeliveryStatus::Pending {
            return Ok(Some(false));
        }
        d.status = DeliveryStatus::Pending;
        d.next_attempt_at = Some(now);
        d.attempts = 0;
        d.delivered_at = None;
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
        let seq = state.deliveries.last().map_or(1, |(_, d)| d.seq + 1);
        let delivery = Delivery {
            id: new_delivery_id(),
            seq,
            destination_id: id.to_owned(),
            rule_id: None,
            status: DeliveryStatus::Pending,
            attempts: 0,
            next_attempt_at: Some(now),
            last_code: None,
            last_error: None,
            created_at: now,
            delivered_at: None,
        };
        let made = delivery.id.clone();
        state.deliveries.push((org.clone(), delivery));
        Ok(Some(made))
    }
}
