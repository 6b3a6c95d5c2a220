//! `/v1/logs/destinations`, `/v1/logs/alert-rules` and `/v1/logs/alert-deliveries`: where alerts
//! go, the rules that send them, and what became of each delivery (issue 41). One module per
//! operation.
//!
//! Anyone who reads logs lists them; changing them, sending a test message and sending a
//! delivery again take `logs:alerts`. A rule is seen only by callers who may read its saved
//! search's servers (as the saved search itself).

mod create_destination;
mod create_rule;
mod delete_destination;
mod delete_rule;
mod list_deliveries;
mod list_destinations;
mod list_rules;
mod send_again;
mod test_destination;
mod update_destination;
mod update_rule;

pub use create_destination::*;
pub use create_rule::*;
pub use delete_destination::*;
pub use delete_rule::*;
pub use list_deliveries::*;
pub use list_destinations::*;
pub use list_rules::*;
pub use send_again::*;
pub use test_destination::*;
pub use update_destination::*;
pub use update_rule::*;

use auth_core::second_factor::SealKey;
use auth_core::Permission;
use chrono::{DateTime, SecondsFormat, Utc};
use logs_core::alert_delivery::Allow;
use logs_core::alert_store::{AlertPut, AlertRule, Delivery, Destination};
use serde::Serialize;
use stow_http::{ApiError, Auth, Code};
use utoipa::ToSchema;

use crate::saved_searches::reader;
use crate::state::ApiState;

fn time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// One destination; its address only as a hint, its secrets never.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DestinationOut {
    /// `dst_…`.
    pub id: String,
    pub name: String,
    /// `discord` or `webhook`.
    pub kind: String,
    /// The address's origin (and a Discord webhook's id), never its token or path.
    pub url: String,
    pub created_by: String,
    pub created_at: String,
    pub updated_at: String,
}

impl From<Destination> for DestinationOut {
    fn from(d: Destination) -> Self {
        DestinationOut {
            id: d.id,
            name: d.name,
            kind: d.kind.as_str().to_owned(),
            url: d.url_hint,
            created_by: d.created_by,
            created_at: time(d.created_at),
            updated_at: time(d.updated_at),
        }
    }
}

/// One rule.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AlertRuleOut {
    /// `alr_…`.
    pub id: String,
    pub name: String,
    pub saved_search_id: String,
    /// `every` or `threshold`.
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_minutes: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cooldown_minutes: Option<i64>,
    /// `resource`, `eventType` or `player`; `null` when the rule does not group.
    pub group_by: Option<String>,
    pub destination_ids: Vec<String>,
    /// Muted (nothing sent, nothing counted) until this time; `null` when not muted.
    pub muted_until: Option<String>,
    /// When it last fired (`null`: not in the last 7 days, or never).
    pub last_fired_at: Option<String>,
    pub created_by: String,
    pub created_at: String,
    pub updated_at: String,
}

impl From<AlertRule> for AlertRuleOut {
    fn from(r: AlertRule) -> Self {
        let threshold = r.spec.trigger.threshold();
        AlertRuleOut {
            id: r.id,
            name: r.spec.name,
            saved_search_id: r.spec.saved_search_id,
            kind: r.spec.trigger.kind().to_owned(),
            threshold: threshold.map(|t| t.0),
            window_minutes: threshold.map(|t| t.1),
            cooldown_minutes: threshold.map(|t| t.2),
            group_by: r.spec.group_by.map(|g| g.as_str().to_owned()),
            destination_ids: r.spec.destination_ids,
            muted_until: r.muted_until.map(time),
            last_fired_at: r.last_fired_at.map(time),
            created_by: r.created_by,
            created_at: time(r.created_at),
            updated_at: time(r.updated_at),
        }
    }
}

/// One entry of the delivery log.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryOut {
    /// `msg_…`: the `webhook-id` of every attempt.
    pub id: String,
    pub destination_id: String,
    /// `null`: a test message.
    pub rule_id: Option<String>,
    /// `pending`, `delivered` or `failed`.
    pub status: String,
    pub attempts: i32,
    /// Pending: when it is tried (again).
    pub next_attempt_at: Option<String>,
    /// The receiver's last answer code (`null`: none — refused, unreachable or timed out).
    pub last_code: Option<i32>,
    pub last_error: Option<String>,
    pub created_at: String,
    pub delivered_at: Option<String>,
}

impl From<Delivery> for DeliveryOut {
    fn from(d: Delivery) -> Self {
        DeliveryOut {
            id: d.id,
            destination_id: d.destination_id,
            rule_id: d.rule_id,
            status: d.status.as_str().to_owned(),
            attempts: d.attempts,
            next_attempt_at: d.next_attempt_at.map(time),
            last_code: d.last_code,
            last_error: d.last_error,
            created_at: time(d.created_at),
            delivered_at: d.delivered_at.map(time),
        }
    }
}

/// Reads logs (and Logs is in the plan): may list.
pub(crate) fn lister(auth: &Auth) -> Result<(), ApiError> {
    reader(auth)
}

/// May change rules and destinations (`logs:alerts`).
pub(crate) fn manager(auth: &Auth) -> Result<(), ApiError> {
    reader(auth)?;
    auth.require(Permission::LogsAlerts)?;
    Ok(())
}

/// The operator's sealing key: without it destinations cannot be made or used.
pub(crate) fn seal_key(state: &ApiState) -> Result<&SealKey, ApiError> {
    state.config.second_factor_key.as_ref().ok_or_else(|| {
        ApiError::new(
            Code::Unavailable,
            "alert destinations need the operator to set SECOND_FACTOR_KEY (it seals their addresses and secrets)",
        )
    })
}

pub(crate) fn allow(state: &ApiState) -> Allow {
    Allow {
        insecure: state.config.alerts_allow_insecure,
    }
}

/// Destination `id` of the organization (404 otherwise).
pub(crate) async fn find_destination(
    state: &ApiState,
    auth: &Auth,
    id: &str,
) -> Result<Destination, ApiError> {
    let found = match crate::storable(id) {
        true => state.stores.alerts.destination(&auth.org.id, id).await?,
        false => None,
    };
    found.ok_or_else(|| no_destination(id))
}

pub(crate) fn no_destination(id: &str) -> ApiError {
    ApiError::new(
        Code::NotFound,
        format!("no destination `{id}` in this organization"),
    )
}

/// The organization's rules the caller may see, by name (`stow_ops::alerts`).
pub(crate) async fn visible_rules(
    state: &ApiState,
    auth: &Auth,
) -> Result<Vec<AlertRule>, ApiError> {
    let ctx = crate::ops::reading(state, auth);
    Ok(stow_ops::alerts::visible_rules(&ctx, &auth.org.id).await?)
}

/// Rule `id` of the organization, when the caller may see it (404 otherwise).
pub(crate) async fn find_rule(
    state: &ApiState,
    auth: &Auth,
    id: &str,
) -> Result<AlertRule, ApiError> {
    let ctx = crate::ops::reading(state, auth);
    Ok(stow_ops::alerts::find_rule(&ctx, &auth.org.id, id).await?)
}

/// Refuses to change where destination `id` sends unless the caller may read everything every
/// rule sending to it watches (`stow_ops::alerts::may_redirect`).
pub(crate) async fn may_redirect(state: &ApiState, auth: &Auth, id: &str) -> Result<(), ApiError> {
    let ctx = crate::ops::reading(state, auth);
    Ok(stow_ops::alerts::may_redirect(&ctx, &auth.org.id, id).await?)
}

/// The answer to a refused change of a rule or destination (`what`: "alert rule" or
/// "destination").
pub(crate) fn refused(put: AlertPut, what: &str, name: &str, limit: usize) -> Result<(), ApiError> {
    Ok(stow_ops::alerts::put_refusal(put, what, name, limit)?)
}

/// What every alert route may answer besides its own (OpenAPI).
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)]
pub enum AlertErrors {
    /// FORBIDDEN: `logs:read` missing (`logs:alerts` to change), or a plan without Logs.
    #[response(status = 403)]
    Forbidden(stow_http::error::ApiErrorBody),
}
