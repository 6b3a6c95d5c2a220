//! `stowctl signing-secret …`: rotate and list the token-signing secrets in the database.

use auth_core::signing_secrets::{self, SigningSecretStore};
use chrono::{Duration, Utc};
use serde_json::{json, Value};
use stow_db::PgSigningSecrets;

use crate::cli::*;
use crate::table::table;
use crate::{CliError, Ctx};

pub(crate) async fn run(ctx: &Ctx, cmd: SigningSecretCmd) -> Result<(Value, String), CliError> {
    let store = PgSigningSecrets::new(ctx.db.clone());
    let now = Utc::now();
    let time = |t: chrono::DateTime<Utc>| t.format("%Y-%m-%d %H:%M:%S UTC").to_string();
    match cmd {
        SigningSecretCmd::Rotate { grace_hours } => {
            let until = now + Duration::hours(i64::from(grace_hours));
            store
                .rotate(&signing_secrets::generate(), now, until)
                .await?;
            Ok((
                json!({ "rotated": true, "previousAcceptedUntil": until.to_rfc3339() }),
                format!(
                    "a new signing secret is current; cdn-api instances sign with it within a minute, and tokens of the previous one are accepted until {}",
                    time(until)
                ),
            ))
        }
        SigningSecretCmd::List => {
            let list = store.list(now).await?;
            let rows: Vec<Vec<String>> = list
                .iter()
                .map(|s| {
                    vec![
                        s.id.to_string(),
                        time(s.created_at),
                        s.accepted_until.map_or_else(
                            || "current".to_owned(),
                            |t| format!("accepted until {}", time(t)),
                        ),
                    ]
                })
                .collect();
            Ok((
                json!({ "secrets": list.iter().map(|s| json!({ "id": s.id, "createdAt": s.created_at.to_rfc3339(), "acceptedUntil": s.accepted_until.map(|t| t.to_rfc3339()) })).collect::<Vec<_>>() }),
                table(&["ID", "CREATED", "STATE"], &rows),
            ))
        }
    }
}
