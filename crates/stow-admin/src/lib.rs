//! `stowctl`, the admin CLI: provisioning (plans, organizations, servers, Logs sources, keys),
//! migrations, usage, garbage collection and log-partition maintenance. With `--json` every
//! command prints exactly one JSON object on stdout; errors go to stderr with exit code 1
//! (2 for usage errors) and a message a person can act on.

// no production function over 100 lines of code (test code is exempt)
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

mod cli;
mod dev_setup;
mod keys;
mod maintenance;
mod members;
mod orgs;
mod placeholders;
mod plans;
mod servers;
mod signing;
mod table;

use auth_core::OrgId;
use std::sync::Arc;

use auth_core::{AccountStore, StoreError};
use clap::Parser;
use serde_json::{json, Value};
use stow_db::{Db, DbConfig, PgAccounts};

pub use cli::*;
pub use maintenance::gc;

/// A command failure: the message is for a person.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CliError(pub String);

impl From<StoreError> for CliError {
    fn from(e: StoreError) -> Self {
        CliError(match e {
            StoreError::NotFound(m) | StoreError::Conflict(m) => m,
            StoreError::Unavailable(m) => {
                format!("database unavailable: {m} (is Postgres running? check DATABASE_URL)")
            }
            StoreError::Internal(m) => m.to_string(),
        })
    }
}

/// The operations' errors, mapped once: a refused field is named by its flag (`--allow-path`).
impl From<stow_ops::OpError> for CliError {
    fn from(e: stow_ops::OpError) -> Self {
        match e {
            stow_ops::OpError::Store(e) => e.into(),
            e => CliError(e.naming(flag)),
        }
    }
}

/// The flag a command takes an API field as: `allowPaths` is `--allow-path`, `permissions`
/// `--perm`; other names in kebab case.
fn flag(field: &str) -> String {
    let named = match field {
        "permissions" => "perm",
        "logServers" => "log-server",
        "allowPaths" => "allow-path",
        "denyPaths" => "deny-path",
        "servers" => "server",
        "expiresInHours" => "hours",
        other => {
            let mut kebab = String::from("--");
            for c in other.chars() {
                if c.is_ascii_uppercase() {
                    kebab.push('-');
                }
                kebab.push(c.to_ascii_lowercase());
            }
            return kebab;
        }
    };
    format!("--{named}")
}

pub struct Ctx {
    pub db: Db,
    pub accounts: Arc<PgAccounts>,
    /// Every store, for the operations (`stow_ops`) the commands run.
    pub stores: stow_ops::Stores,
    pub database_url: String,
}

impl Ctx {
    /// The audit log's name for this command's changes: the operating-system user running
    /// `stowctl` (`SUDO_USER` first, so `sudo stowctl` names the person), via `stowctl`.
    pub fn audit(&self) -> auth_core::audit::Audit {
        let user = ["SUDO_USER", "USER", "LOGNAME"]
            .iter()
            .find_map(|v| std::env::var(v).ok().filter(|u| !u.is_empty()))
            .unwrap_or_else(|| "unknown".to_owned());
        auth_core::audit::Audit::operator(user)
    }

    pub fn new(database_url: &str) -> Result<Self, CliError> {
        let mut cfg = DbConfig::new(database_url);
        cfg.max_connections = 2;
        let db = Db::connect(&cfg)?;
        Ok(Self {
            accounts: Arc::new(PgAccounts::new(db.clone())),
            stores: stow_db::stores(&db),
            db,
            database_url: database_url.to_owned(),
        })
    }
}

impl Ctx {
    /// The context an operation runs in for this command: the operator, as [`Ctx::audit`]
    /// names them.
    pub fn ops(&self) -> stow_ops::Ctx<'_> {
        stow_ops::Ctx::new(&self.stores, stow_ops::Caller::Operator, self.audit())
    }

    /// The organization with this id, or the refusal every command gives for an unknown one.
    pub async fn org(&self, id: &str) -> Result<auth_core::Org, CliError> {
        self.accounts.get_org(&OrgId::new(id)).await?.ok_or_else(|| {
            CliError(format!(
                "unknown organization \"{id}\" (no id, workspace or name; `stowctl org list` shows them)"
            ))
        })
    }

    /// The id of the organization an operator named: by id (`org_…`), workspace (`dev`) or name
    /// (`Local Dev`, any case); `None` when nothing has that id, workspace or name (the command
    /// then refuses it where it checks its organization, after its other input). A name two
    /// organizations share is refused, listing their ids.
    pub async fn find_org(&self, named: &str) -> Result<Option<OrgId>, CliError> {
        if let Some(org) = self.accounts.get_org(&OrgId::new(named)).await? {
            return Ok(Some(org.id));
        }
        if let Some(org) = self.accounts.find_org_by_slug(named).await? {
            return Ok(Some(org.id));
        }
        let mut same_name: Vec<auth_core::Org> = self
            .accounts
            .list_orgs()
            .await?
            .into_iter()
            .filter(|o| o.name.eq_ignore_ascii_case(named.trim()))
            .collect();
        match same_name.len() {
            1 => Ok(Some(same_name.remove(0).id)),
            0 => Ok(None),
            _ => Err(CliError(format!(
                "{} organizations are named \"{named}\"; name one by its id: {}",
                same_name.len(),
                same_name
                    .iter()
                    .map(|o| o.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }
}

/// Runs one command; returns the JSON result and its human rendering.
pub async fn run(ctx: &Ctx, mut command: Command) -> Result<(Value, String), CliError> {
    if let Some(org) = command.org_mut() {
        if let Some(id) = ctx.find_org(org).await? {
            *org = id;
        }
    }
    match command {
        Command::Migrate => maintenance::migrate(ctx).await,
        Command::Plan { cmd } => plans::run(ctx, cmd).await,
        Command::Org { cmd } => orgs::run(ctx, cmd).await,
        Command::Server { cmd } => servers::run(ctx, cmd).await,
        Command::LogsSource { cmd } => servers::logs_source(ctx, cmd).await,
        Command::Key { cmd } => keys::run(ctx, cmd).await,
        Command::Member { cmd } => members::run(ctx, cmd).await,
        Command::Placeholder { cmd } => placeholders::run(ctx, cmd).await,
        Command::SigningSecret { cmd } => signing::run(ctx, cmd).await,
        Command::Usage { org } => maintenance::usage(ctx, org).await,
        Command::Gc {
            object_store_url,
            min_age_secs,
        } => maintenance::gc_command(ctx, object_store_url, min_age_secs).await,
        Command::Logs { cmd } => maintenance::logs(ctx, cmd).await,
        Command::DevSetup { keys_file } => dev_setup::dev_setup(ctx, keys_file).await,
    }
}

/// Entry point of the `stowctl` binary.
pub async fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let json_out = cli.json;
    let result = async {
        let ctx = Ctx::new(&cli.database_url)?;
        run(&ctx, cli.command).await
    }
    .await;
    match result {
        Ok((value, human)) => {
            if json_out {
                println!("{value}");
            } else if !human.is_empty() {
                println!("{human}");
            }
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            if json_out {
                eprintln!("{}", json!({ "error": e.0 }));
            } else {
                eprintln!("stowctl: {}", e.0);
            }
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_named_by_their_flags() {
        assert_eq!(flag("allowPaths"), "--allow-path");
        assert_eq!(flag("permissions"), "--perm");
        assert_eq!(flag("expiresAt"), "--expires-at");
        assert_eq!(flag("note"), "--note");
        assert_eq!(flag("expiresInHours"), "--hours");
    }

    /// Every command and option explains itself in `--help`.
    #[test]
    fn every_command_and_option_has_help() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            let path = format!("{path} {}", cmd.get_name());
            if cmd.get_about().is_none() {
                missing.push(path.clone());
            }
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if id != "help" && id != "version" && arg.get_help().is_none() {
                    missing.push(format!("{path} --{id}"));
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &path, missing);
            }
        }
        let mut missing = Vec::new();
        walk(&<Cli as clap::CommandFactory>::command(), "", &mut missing);
        assert!(missing.is_empty(), "no help text: {missing:?}");
    }
}
