//! `stowctl server …` and `stowctl logs-source …`: registered game servers and their Logs source.

use auth_core::AccountStore;
use serde_json::{json, Value};

use crate::cli::*;
use crate::plans::plan_names;
use crate::table::{or_dash, table};
use crate::{CliError, Ctx};

pub(crate) async fn run(ctx: &Ctx, cmd: ServerCmd) -> Result<(Value, String), CliError> {
    let accounts = &ctx.accounts;
    match cmd {
        ServerCmd::List { org } => {
            let servers = accounts.list_servers(&org).await?;
            let rows: Vec<Vec<String>> = servers
                .iter()
                .map(|s| {
                    vec![
                        s.cfx_id.clone(),
                        or_dash(s.name.clone()),
                        if s.logs_active { "active" } else { "inactive" }.into(),
                        s.id.to_string(),
                    ]
                })
                .collect();
            Ok((
                json!({ "servers": servers.iter().map(|s| json!({ "id": s.id, "cfxId": s.cfx_id, "name": s.name, "logsActive": s.logs_active })).collect::<Vec<_>>() }),
                table(&["JOIN CODE", "NAME", "LOGS SOURCE", "ID"], &rows),
            ))
        }
        ServerCmd::Register { org, cfx_id, name } => {
            let code = auth_core::join_code::parse(&cfx_id)
                .map_err(|e| CliError(format!("--cfx-id {cfx_id:?}: {e}")))?;
            let s = accounts
                .register_server(&org, code, name.as_deref(), &ctx.audit())
                .await?;
            Ok((
                json!({ "id": s.id, "cfxId": s.cfx_id, "orgId": s.org_id, "name": s.name, "logsActive": s.logs_active }),
                format!("server {} registered as {}", s.cfx_id, s.id),
            ))
        }
    }
}

pub(crate) async fn logs_source(
    ctx: &Ctx,
    cmd: LogsSourceCmd,
) -> Result<(Value, String), CliError> {
    let accounts = &ctx.accounts;
    let (cfx, active) = match cmd {
        LogsSourceCmd::Activate { cfx_id } => (cfx_id, true),
        LogsSourceCmd::Deactivate { cfx_id } => (cfx_id, false),
    };
    if active {
        // a source on a plan without Logs could only be refused at every batch
        let server = accounts
            .find_server_by_cfx(&cfx)
            .await?
            .ok_or_else(|| CliError(format!("unknown server join code {cfx:?}")))?;
        let org = ctx.org(&server.org_id).await?;
        let plan = accounts.get_plan(&org.plan).await?;
        if !plan.is_some_and(|p| p.logs_enabled) {
            return Err(CliError(format!(
                "organization {} is on plan {}, which has no Logs; move it to a plan with Logs first ({}: `stowctl org set-plan --org {} --plan …`)",
                org.id,
                org.plan,
                plan_names(ctx, true).await?,
                org.id
            )));
        }
    }
    let s = accounts.set_logs_active(&cfx, active, &ctx.audit()).await?;
    Ok((
        json!({ "id": s.id, "cfxId": s.cfx_id, "logsActive": s.logs_active }),
        format!(
            "Logs source of {} is {}",
            s.cfx_id,
            if active { "active" } else { "inactive" }
        ),
    ))
}
