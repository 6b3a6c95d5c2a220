//! `stowctl server …` and `stowctl logs-source …`: registered game servers and their Logs source.

use auth_core::AccountStore;
use serde_json::{json, Value};

use crate::cli::*;
use crate::{CliError, Ctx};

pub(crate) async fn run(ctx: &Ctx, cmd: ServerCmd) -> Result<(Value, String), CliError> {
    let accounts = &ctx.accounts;
    match cmd {
        ServerCmd::Register { org, cfx_id, name } => {
            let code = auth_core::join_code::parse(&cfx_id)
                .map_err(|e| CliError(format!("--cfx-id {cfx_id:?}: {e}")))?;
            let s = accounts
                .register_server(&org, code, name.as_deref())
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
    let s = accounts.set_logs_active(&cfx, active).await?;
    Ok((
        json!({ "id": s.id, "cfxId": s.cfx_id, "logsActive": s.logs_active }),
        format!(
            "Logs source of {} is {}",
            s.cfx_id,
            if active { "active" } else { "inactive" }
        ),
    ))
}
