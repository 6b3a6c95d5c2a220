//! `stowctl placeholder …`: an organization's placeholders, through the same rules as the API
//! (`cdn_core::placeholder`). The API host picks a change up within its placeholder cache
//! lifetime (`api_http::state::PLACEHOLDER_TTL`).

use cdn_core::placeholder::{self, NewPlaceholder, Pattern, Placeholder, PlaceholderStore};
use chrono::{SubsecRound, Utc};
use serde_json::{json, Value};
use stow_db::{PgObjectRecords, PgPlaceholders};

use crate::cli::*;
use crate::{CliError, Ctx};

fn view(p: &Placeholder) -> Value {
    json!({
        "pattern": p.pattern,
        "fallback": p.fallback,
        "createdAt": p.created_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "updatedAt": p.updated_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
    })
}

pub(crate) async fn run(ctx: &Ctx, cmd: PlaceholderCmd) -> Result<(Value, String), CliError> {
    let store = PgPlaceholders::new(ctx.db.clone());
    match cmd {
        PlaceholderCmd::Set {
            org,
            pattern,
            fallback,
        } => {
            ctx.org(&org).await?;
            let new =
                NewPlaceholder::parse(&pattern, &fallback).map_err(|e| CliError(e.to_string()))?;
            let records = PgObjectRecords::new(ctx.db.clone());
            let now = Utc::now().trunc_subsecs(3);
            let (p, created) = placeholder::set(&records, &store, &org, &new, now, &ctx.audit())
                .await
                .map_err(|e| match e {
                    placeholder::SetError::Refused(e) => CliError(e.to_string()),
                    placeholder::SetError::Store(e) => e.into(),
                })?;
            let verb = if created { "set" } else { "replaced" };
            Ok((
                json!({ "placeholder": view(&p), "created": created }),
                format!(
                    "placeholder {verb}: a missing key matching {} is served {}",
                    p.pattern, p.fallback
                ),
            ))
        }
        PlaceholderCmd::List { org } => {
            ctx.org(&org).await?;
            let list = store.list(&org).await?;
            let human = if list.is_empty() {
                format!("organization {org} has no placeholders")
            } else {
                let width = list.iter().map(|p| p.pattern.len()).max().unwrap_or(0);
                list.iter()
                    .map(|p| format!("{:width$}  →  {}", p.pattern, p.fallback))
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            Ok((
                json!({ "placeholders": list.iter().map(view).collect::<Vec<_>>() }),
                human,
            ))
        }
        PlaceholderCmd::Remove { org, pattern } => {
            ctx.org(&org).await?;
            let pattern = Pattern::parse(&pattern).map_err(|e| CliError(e.to_string()))?;
            if !store.delete(&org, pattern.as_str(), &ctx.audit()).await? {
                return Err(CliError(format!(
                    "organization {org} has no placeholder for the pattern {} (see `stowctl placeholder list --org {org}`)",
                    pattern.as_str()
                )));
            }
            Ok((
                json!({ "pattern": pattern.as_str(), "removed": true }),
                format!("placeholder {} removed", pattern.as_str()),
            ))
        }
    }
}
