//! An audit entry as the API returns it (the list's items and the export's lines).

use auth_core::audit::{AuditEvent, Outcome};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

/// Who acted.
#[derive(Serialize, ToSchema)]
pub struct ActorOut {
    /// `key`, `member`, `operator` (someone running `stowctl` on the service's machine) or
    /// `service` (the service doing what a rule asked: `lifecycle`).
    pub kind: String,
    /// The key's id, the member's id, or the operator's user name.
    pub id: String,
    /// The key's name (or its hint), the member's sign-in name, or the operator's user name,
    /// as they were at the time.
    pub label: String,
}

/// One entry of the audit log.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditEventOut {
    /// Increasing in the order entries were written.
    pub id: String,
    /// When (RFC 3339, milliseconds, UTC).
    pub at: String,
    pub actor: ActorOut,
    /// `api`, `console`, `stowctl` or `maintenance` (the service's own work).
    pub via: String,
    /// The client's address (none for `stowctl`).
    pub address: Option<String>,
    /// The request's id: entries of one request (a folder delete) share it.
    pub request_id: Option<String>,
    /// What was done (docs/api.md "Audit log" lists the actions).
    pub action: String,
    /// What it was done to: an object key, a pattern, a key id, an invitation id, a sign-in
    /// name, a plan.
    pub target: String,
    /// The request's meaningful fields (never a secret, token or password).
    #[schema(value_type = Object)]
    pub details: Value,
    /// `done`, or `refused` (an attempt the caller's role or key did not allow).
    pub outcome: String,
    /// For a refused attempt, the refusal the caller got.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl From<AuditEvent> for AuditEventOut {
    fn from(e: AuditEvent) -> Self {
        let (outcome, reason) = match e.entry.outcome {
            Outcome::Done => ("done", None),
            Outcome::Refused { reason } => ("refused", Some(reason)),
        };
        let a = &e.entry.actor;
        Self {
            id: e.id.to_string(),
            at: e.at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            actor: ActorOut {
                kind: a.kind().to_owned(),
                id: a.id().to_owned(),
                label: a.label().to_owned(),
            },
            via: e.entry.via.as_str().to_owned(),
            address: e.entry.address,
            request_id: e.entry.request_id,
            action: e.entry.action.as_str().to_owned(),
            target: e.entry.target,
            details: e.entry.details,
            outcome: outcome.to_owned(),
            reason,
        }
    }
}
