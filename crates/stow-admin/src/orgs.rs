//! `stowctl org …`: organizations (workspaces).

use auth_core::model::slugify;
use auth_core::{AccountStore, StoreError};
use serde_json::{json, Value};

use crate::cli::*;
use crate::plans::known_plan;
use crate::table::table;
use crate::{CliError, Ctx};

pub(crate) async fn run(ctx: &Ctx, cmd: OrgCmd) -> Result<(Value, String), CliError> {
    let accounts = &ctx.accounts;
    match cmd {
        OrgCmd::List => {
            let orgs = accounts.list_orgs().await?;
            let rows: Vec<Vec<String>> = orgs
                .iter()
                .map(|o| {
                    vec![
                        o.id.to_string(),
                        o.name.clone(),
                        o.slug.clone(),
                        o.plan.clone(),
                    ]
                })
                .collect();
            Ok((
                json!({ "organizations": orgs.iter().map(|o| json!({ "id": o.id, "name": o.name, "slug": o.slug, "plan": o.plan })).collect::<Vec<_>>() }),
                table(&["ID", "NAME", "WORKSPACE", "PLAN"], &rows),
            ))
        }
        OrgCmd::Create {
            name,
            plan,
            slug,
            allow_duplicate_name,
        } => {
            if name.trim().is_empty() {
                return Err(CliError("--name must not be empty".into()));
            }
            known_plan(ctx, &plan).await?;
            if !allow_duplicate_name {
                let existing = accounts.list_orgs().await?;
                if let Some(same) = existing
                    .iter()
                    .find(|o| o.name.trim().to_lowercase() == name.trim().to_lowercase())
                {
                    return Err(CliError(format!(
                        "organization {} is already named {:?} (workspace {}); pass --allow-duplicate-name to create another",
                        same.id, same.name, same.slug
                    )));
                }
            }
            let org = match slug {
                Some(s) => {
                    let s = s.trim().to_owned();
                    if s.is_empty() || s != slugify(&s) {
                        return Err(CliError(format!(
                            "--slug {s:?}: use lowercase letters, digits and hyphens"
                        )));
                    }
                    accounts.create_org(&name, &s, &plan).await?
                }
                None => {
                    let base = slugify(&name);
                    match accounts.create_org(&name, &base, &plan).await {
                        Err(StoreError::Conflict(_)) => {
                            let suffix = &ulid::Ulid::new().to_string().to_lowercase()[20..];
                            accounts
                                .create_org(&name, &format!("{base}-{suffix}"), &plan)
                                .await?
                        }
                        other => other?,
                    }
                }
            };
            Ok((
                json!({ "id": org.id, "name": org.name, "slug": org.slug, "plan": org.plan }),
                format!("organization {} created (workspace {})", org.id, org.slug),
            ))
        }
        OrgCmd::SetPlan { org, plan } => {
            known_plan(ctx, &plan).await?;
            let o = accounts.set_org_plan(&org, &plan, &ctx.audit()).await?;
            Ok((
                json!({ "id": o.id, "plan": o.plan }),
                format!("organization {} is on plan {}", o.id, o.plan),
            ))
        }
    }
}
