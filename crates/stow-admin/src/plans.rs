//! `stowctl plan …`: plans and their limits.

use auth_core::model::Plan;
use auth_core::AccountStore;
use serde_json::{json, Value};

use crate::cli::*;
use crate::{CliError, Ctx};

pub(crate) async fn run(ctx: &Ctx, cmd: PlanCmd) -> Result<(Value, String), CliError> {
    let accounts = &ctx.accounts;
    match cmd {
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
            Ok((
                json!({ "name": p.name, "logs": p.logs_enabled, "retentionDays": p.retention_days, "maxFileSize": p.max_file_size, "maxUrlLifetime": p.max_url_lifetime_secs, "concurrentSearches": p.concurrent_searches }),
                format!("plan {} saved", p.name),
            ))
        }
    }
}
