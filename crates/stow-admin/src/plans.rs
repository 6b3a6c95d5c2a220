//! `stowctl plan …`: plans and their limits.

use auth_core::model::Plan;
use auth_core::AccountStore;
use serde_json::{json, Value};

use crate::cli::*;
use crate::table::table;
use crate::{CliError, Ctx};

fn plan_json(p: &Plan) -> Value {
    json!({ "name": p.name, "logs": p.logs_enabled, "retentionDays": p.retention_days, "maxFileSize": p.max_file_size, "maxUrlLifetime": p.max_url_lifetime_secs, "concurrentSearches": p.concurrent_searches })
}

/// The plans, for a refusal that has to name them (`free, growth, pro`); with `logs_only`,
/// those that include Logs.
pub(crate) async fn plan_names(ctx: &Ctx, logs_only: bool) -> Result<String, CliError> {
    Ok(ctx
        .accounts
        .list_plans()
        .await?
        .into_iter()
        .filter(|p| p.logs_enabled || !logs_only)
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", "))
}

/// The plan of this name, or a refusal that lists the plans.
pub(crate) async fn known_plan(ctx: &Ctx, name: &str) -> Result<Plan, CliError> {
    match ctx.accounts.get_plan(name).await? {
        Some(p) => Ok(p),
        None => Err(CliError(format!(
            "unknown plan {name:?}; the plans are: {} (`stowctl plan upsert` makes another)",
            plan_names(ctx, false).await?
        ))),
    }
}

pub(crate) async fn run(ctx: &Ctx, cmd: PlanCmd) -> Result<(Value, String), CliError> {
    let accounts = &ctx.accounts;
    match cmd {
        PlanCmd::List => {
            let plans = accounts.list_plans().await?;
            let rows: Vec<Vec<String>> = plans
                .iter()
                .map(|p| {
                    vec![
                        p.name.clone(),
                        if p.logs_enabled { "yes" } else { "no" }.into(),
                        format!("{} days", p.retention_days),
                        format!("{} MiB", p.max_file_size as f64 / 1_048_576.0),
                        format!("{} s", p.max_url_lifetime_secs),
                        p.concurrent_searches.to_string(),
                    ]
                })
                .collect();
            Ok((
                json!({ "plans": plans.iter().map(plan_json).collect::<Vec<_>>() }),
                table(
                    &[
                        "PLAN",
                        "LOGS",
                        "RETENTION",
                        "MAX FILE",
                        "URL LIFETIME",
                        "SEARCHES",
                    ],
                    &rows,
                ),
            ))
        }
        PlanCmd::Upsert {
            name,
            logs,
            no_logs,
            retention_days,
            max_file_size,
            max_url_lifetime,
            concurrent_searches,
        } => {
            let mut plan = accounts
                .get_plan(&name)
                .await?
                .unwrap_or_else(|| Plan::new(&name, false, 0));
            if logs {
                plan.logs_enabled = true;
            }
            if no_logs {
                plan.logs_enabled = false;
            }
            if let Some(d) = retention_days {
                if d < 0 {
                    return Err(CliError("--retention-days must be 0 or more".into()));
                }
                plan.retention_days = d;
            }
            if let Some(s) = max_file_size {
                if s <= 0 {
                    return Err(CliError(
                        "--max-file-size must be a positive number of bytes".into(),
                    ));
                }
                plan.max_file_size = s;
            }
            if let Some(l) = max_url_lifetime {
                if l <= 0 {
                    return Err(CliError(
                        "--max-url-lifetime must be a positive number of seconds".into(),
                    ));
                }
                plan.max_url_lifetime_secs = l;
            }
            if let Some(c) = concurrent_searches {
                if c <= 0 {
                    return Err(CliError("--concurrent-searches must be positive".into()));
                }
                plan.concurrent_searches = c;
            }
            let p = accounts.upsert_plan(&plan).await?;
            Ok((plan_json(&p), format!("plan {} saved", p.name)))
        }
    }
}
