//! Who sees and who may re-point alerts: a rule is seen only by callers who may read its saved
//! search's servers (as the saved search itself), and where a destination sends changes only for
//! a caller who reads everything every rule sending to it watches. The API's alert routes decide
//! with these; they are tested here on the memory stores.

use auth_core::OrgId;
use logs_core::alert_store::{AlertPut, AlertRule};
use logs_core::saved::{SavedSearch, SavedServers};

use crate::{Ctx, OpError};

/// Whether a caller reading `scope` sees saved search `s`: one of every server is everyone's
/// (it reads what each reader may), one of named servers needs all of them.
pub fn search_visible(scope: &auth_core::ServerScope, s: &SavedSearch) -> bool {
    match &s.servers {
        SavedServers::All => true,
        SavedServers::Named(ids) => ids.iter().all(|id| scope.includes(id)),
    }
}

/// Whether the caller sees rule `r`: they see its saved search.
pub async fn rule_visible(ctx: &Ctx<'_>, r: &AlertRule) -> Result<bool, OpError> {
    let scope = ctx.log_scope();
    Ok(ctx
        .stores
        .saved_searches
        .get(&r.org_id, &r.spec.saved_search_id)
        .await?
        .is_some_and(|s| search_visible(&scope, &s)))
}

/// `org`'s rules the caller sees, by name.
pub async fn visible_rules(ctx: &Ctx<'_>, org: &OrgId) -> Result<Vec<AlertRule>, OpError> {
    let mut visible = Vec::new();
    if !ctx.acts_in(org) {
        return Ok(visible);
    }
    for rule in ctx.stores.alerts.rules(org).await? {
        if rule_visible(ctx, &rule).await? {
            visible.push(rule);
        }
    }
    Ok(visible)
}

/// Rule `id` of `org`, when the caller sees it (as unknown otherwise).
pub async fn find_rule(ctx: &Ctx<'_>, org: &OrgId, id: &str) -> Result<AlertRule, OpError> {
    let missing = || OpError::NotFound(format!("no alert rule `{id}` in this organization"));
    if !ctx.acts_in(org) || id.contains('\0') {
        return Err(missing());
    }
    let rule = ctx.stores.alerts.rule(org, id).await?.ok_or_else(missing)?;
    if !rule_visible(ctx, &rule).await? {
        return Err(missing());
    }
    Ok(rule)
}

/// Refuses to change where destination `id` sends unless the caller may read everything every
/// rule sending to it watches: a server-scoped caller with `logs:alerts` could otherwise re-point
/// an organization-wide destination and receive other servers' events. A caller who reads every
/// server always may; any other only when each such rule's saved search names servers, all of
/// them the caller's (a saved search of every server watches servers beyond theirs).
pub async fn may_redirect(ctx: &Ctx<'_>, org: &OrgId, id: &str) -> Result<(), OpError> {
    let scope = ctx.log_scope();
    if scope == auth_core::ServerScope::All {
        return Ok(());
    }
    let rules = ctx.stores.alerts.rules(org).await?;
    let mut beyond = 0usize;
    for rule in rules
        .iter()
        .filter(|r| r.spec.destination_ids.iter().any(|d| d == id))
    {
        let search = ctx
            .stores
            .saved_searches
            .get(org, &rule.spec.saved_search_id)
            .await?;
        let within = search.is_some_and(|s| match &s.servers {
            SavedServers::All => false,
            SavedServers::Named(ids) => ids.iter().all(|i| scope.includes(i)),
        });
        if !within {
            beyond += 1;
        }
    }
    if beyond == 0 {
        return Ok(());
    }
    Err(OpError::Forbidden(format!(
        "`url`: {beyond} alert rule(s) sending to this destination watch servers outside the ones you read; only someone who reads every server they watch may change where they send (renaming it is fine)"
    )))
}

/// Delivery `delivery` of `org` sent again (a failed or delivered one: pending now, with the same
/// `webhook-id`), when the caller sees its rule: a server-scoped caller neither learns of nor
/// re-sends what a rule on other servers sent (a rule since deleted: only a caller who reads every
/// server). Test messages belong to no rule.
pub struct SendAgain {
    pub org: OrgId,
    pub delivery: String,
}

impl SendAgain {
    pub async fn run(self, ctx: &Ctx<'_>) -> Result<(), OpError> {
        let (org, id) = (&self.org, self.delivery.as_str());
        let missing = || OpError::NotFound(format!("no delivery `{id}` in this organization"));
        if !ctx.acts_in(org) || id.contains('\0') {
            return Err(missing());
        }
        let delivery = ctx
            .stores
            .alerts
            .delivery(org, id)
            .await?
            .ok_or_else(missing)?;
        if let Some(rule) = &delivery.rule_id {
            let seen = match ctx.stores.alerts.rule(org, rule).await? {
                Some(r) => rule_visible(ctx, &r).await?,
                None => ctx.log_scope() == auth_core::ServerScope::All,
            };
            if !seen {
                return Err(missing());
            }
        }
        match ctx.stores.alerts.send_again(org, id, ctx.now).await? {
            None => Err(missing()),
            Some(false) => Err(OpError::Conflict(format!(
                "delivery `{id}` is pending: it is being tried already"
            ))),
            Some(true) => Ok(()),
        }
    }
}

/// The answer to a refused change of a rule or destination (`what`: "alert rule" or
/// "destination").
pub fn put_refusal(put: AlertPut, what: &str, name: &str, limit: usize) -> Result<(), OpError> {
    match put {
        AlertPut::Done => Ok(()),
        AlertPut::NameTaken => Err(OpError::Conflict(format!(
            "a {what} named `{name}` exists (names compare in either case); pick another name"
        ))),
        AlertPut::LimitReached => Err(OpError::Conflict(format!(
            "this organization has {limit} {what}s, the limit; delete one first"
        ))),
        AlertPut::Missing => Err(OpError::NotFound(format!(
            "the {what} was deleted meanwhile"
        ))),
        AlertPut::UnknownSavedSearch(id) => Err(OpError::NotFound(format!(
            "`savedSearchId`: no saved search `{id}` in this organization"
        ))),
        AlertPut::UnknownDestination(id) => Err(OpError::NotFound(format!(
            "`destinationIds`: no destination `{id}` in this organization"
        ))),
    }
}

#[cfg(test)]
mod tests;
