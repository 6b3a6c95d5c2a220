//! `stowctl`, the admin CLI: provisioning (plans, organizations, servers, Logs sources, keys),
//! migrations, usage, garbage collection and log-partition maintenance. With `--json` every
//! command prints exactly one JSON object on stdout; errors go to stderr with exit code 1
//! (2 for usage errors) and a message a person can act on.

use std::sync::Arc;

use auth_core::model::{new_id, slugify, NewKey, Plan};
use auth_core::{
    secret, AccountStore, ApiKey, CredentialType, Permission, PermissionSet, StoreError,
};
use cdn_core::path::normalize_folder;
use cdn_core::store::ObjectRepo;
use clap::{Parser, Subcommand, ValueEnum};
use futures::StreamExt;
use serde_json::{json, Value};
use stow_db::{Db, DbConfig, PgAccounts, PgObjects};

#[derive(Parser, Debug)]
#[command(name = "stowctl", version, about = "Stowage admin CLI")]
pub struct Cli {
    /// Print exactly one JSON object on stdout.
    #[arg(long, global = true)]
    pub json: bool,
    /// Postgres URL.
    #[arg(
        long,
        env = "DATABASE_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/stowage",
        global = true,
        hide_env_values = true
    )]
    pub database_url: String,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Apply pending migrations (safe to run twice, and concurrently).
    Migrate,
    /// Plans.
    Plan {
        #[command(subcommand)]
        cmd: PlanCmd,
    },
    /// Organizations.
    Org {
        #[command(subcommand)]
        cmd: OrgCmd,
    },
    /// Registered game servers.
    Server {
        #[command(subcommand)]
        cmd: ServerCmd,
    },
    /// Logs sources of registered servers.
    #[command(name = "logs-source")]
    LogsSource {
        #[command(subcommand)]
        cmd: LogsSourceCmd,
    },
    /// API keys.
    Key {
        #[command(subcommand)]
        cmd: KeyCmd,
    },
    /// Usage of an organization this month.
    Usage {
        /// Organization id (`org_…`).
        #[arg(long)]
        org: String,
    },
    /// Remove stored bytes no object row references (left by crashes).
    Gc {
        /// Object store URL (default: OBJECT_STORE_URL or ./data/objects).
        #[arg(long, env = "OBJECT_STORE_URL")]
        object_store_url: Option<String>,
        /// Only bytes older than this many seconds (in-flight uploads are younger).
        #[arg(long, default_value_t = 3600)]
        min_age_secs: i64,
    },
    /// Log storage maintenance.
    Logs {
        #[command(subcommand)]
        cmd: LogsCmd,
    },
    /// Provision a local development workspace (used by `just run`).
    #[command(name = "dev-setup", hide = true)]
    DevSetup,
}

#[derive(Subcommand, Debug)]
pub enum PlanCmd {
    /// Create or update a plan (options left out keep their current value, or the default).
    Upsert {
        /// Plan name, referred to by `org create --plan`.
        #[arg(long)]
        name: String,
        /// The plan includes Logs.
        #[arg(long, conflicts_with = "no_logs")]
        logs: bool,
        /// The plan does not include Logs.
        #[arg(long)]
        no_logs: bool,
        /// Days of log events kept and searchable (0 or more).
        #[arg(long)]
        retention_days: Option<i32>,
        /// Largest file in bytes (default 104857600, 100 MiB).
        #[arg(long)]
        max_file_size: Option<i64>,
        /// Longest upload-URL lifetime in seconds (default 3600).
        #[arg(long)]
        max_url_lifetime: Option<i32>,
        /// Log searches running at once per organization (default 4).
        #[arg(long)]
        concurrent_searches: Option<i32>,
    },
}

#[derive(Subcommand, Debug)]
pub enum OrgCmd {
    /// Create an organization (prints its id, used by the other commands).
    Create {
        /// Display name.
        #[arg(long)]
        name: String,
        /// Plan name (see `plan upsert`).
        #[arg(long)]
        plan: String,
        /// Public workspace name in `publicUrl` (default: from the name).
        #[arg(long)]
        slug: Option<String>,
    },
    /// Move an organization to another plan.
    #[command(name = "set-plan")]
    SetPlan {
        /// Organization id (`org_…`).
        #[arg(long)]
        org: String,
        /// Plan name.
        #[arg(long)]
        plan: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum ServerCmd {
    /// Register a game server by its join code.
    Register {
        /// Organization id (`org_…`).
        #[arg(long)]
        org: String,
        /// The server's cfx.re join code (compared case-insensitively).
        #[arg(long = "cfx-id")]
        cfx_id: String,
        /// Display name.
        #[arg(long)]
        name: Option<String>,
    },
}

#[derive(Subcommand, Debug)]
pub enum LogsSourceCmd {
    /// Let a registered server ingest and search logs.
    Activate {
        /// The server's join code.
        #[arg(long = "cfx-id")]
        cfx_id: String,
    },
    /// Stop a server's log ingestion and search (stored events stay until retention).
    Deactivate {
        /// The server's join code.
        #[arg(long = "cfx-id")]
        cfx_id: String,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum KeyType {
    /// Bound to one server; gets the server baseline permissions.
    Server,
    /// Global to the organization; needs at least one --perm.
    Developer,
}

#[derive(Subcommand, Debug)]
pub enum KeyCmd {
    /// Create an API key (the secret is printed once and never stored).
    Create {
        /// Organization id (`org_…`).
        #[arg(long)]
        org: String,
        /// Join code of the server a `server` key is bound to.
        #[arg(long)]
        server: Option<String>,
        /// Key type.
        #[arg(long = "type", value_enum)]
        kind: KeyType,
        /// A permission, repeatable: cdn:read, cdn:write, cdn:delete, logs:read, logs:write.
        #[arg(long = "perm")]
        perms: Vec<String>,
        /// Restrict the key to this path prefix (whole segments), repeatable.
        #[arg(long = "allow-path")]
        allow_paths: Vec<String>,
        /// Exclude this path prefix (wins over --allow-path), repeatable.
        #[arg(long = "deny-path")]
        deny_paths: Vec<String>,
        /// Allow only this MIME type on upload (`image/*` allowed), repeatable.
        #[arg(long = "mime")]
        mimes: Vec<String>,
        /// Expiry time, RFC 3339 (e.g. 2027-01-01T00:00:00Z).
        #[arg(long)]
        expires_at: Option<String>,
        /// A label shown by `key list`.
        #[arg(long)]
        name: Option<String>,
    },
    /// List an organization's keys (never their secrets), with last use.
    List {
        /// Organization id (`org_…`).
        #[arg(long)]
        org: String,
    },
    /// Disable a key (takes effect within KEY_CACHE_SECONDS; its upload URLs stop working).
    Disable {
        /// Key id (`key_…`).
        key_id: String,
    },
    /// Delete a key for good.
    Delete {
        /// Key id (`key_…`).
        key_id: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum LogsCmd {
    /// Create upcoming daily partitions and drop those past the longest retention.
    Maintain,
}

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
            StoreError::Internal(m) => m,
        })
    }
}

fn key_json(k: &ApiKey) -> Value {
    json!({
        "keyId": k.id,
        "orgId": k.org_id,
        "serverId": k.server_id,
        "type": k.credential_type.as_str(),
        "name": k.name,
        "hint": k.hint,
        "permissions": k.permissions.names(),
        "allowPaths": k.allowed_prefixes,
        "denyPaths": k.denied_prefixes,
        "mime": k.allowed_mime,
        "createdAt": k.created_at.to_rfc3339(),
        "expiresAt": k.expires_at.map(|t| t.to_rfc3339()),
        "disabledAt": k.disabled_at.map(|t| t.to_rfc3339()),
        "lastUsedAt": k.last_used_at.map(|t| t.to_rfc3339()),
    })
}

fn prefixes(raw: &[String], flag: &str) -> Result<Vec<String>, CliError> {
    raw.iter()
        .map(|p| {
            normalize_folder(p)
                .map_err(|e| CliError(format!("{flag} {p:?}: {e}")))
                .and_then(|n| {
                    if n.is_empty() {
                        Err(CliError(format!(
                            "{flag} {p:?}: an empty prefix means everything; omit the flag instead"
                        )))
                    } else {
                        Ok(n)
                    }
                })
        })
        .collect()
}

pub struct Ctx {
    pub db: Db,
    pub accounts: Arc<PgAccounts>,
    pub database_url: String,
}

impl Ctx {
    pub fn new(database_url: &str) -> Result<Self, CliError> {
        let mut cfg = DbConfig::new(database_url);
        cfg.max_connections = 2;
        let db = Db::connect(&cfg)?;
        Ok(Self {
            accounts: Arc::new(PgAccounts::new(db.clone())),
            db,
            database_url: database_url.to_owned(),
        })
    }
}

/// Runs one command; returns the JSON result and its human rendering.
pub async fn run(ctx: &Ctx, command: Command) -> Result<(Value, String), CliError> {
    let accounts = &ctx.accounts;
    match command {
        Command::Migrate => {
            let applied = stow_db::migrate::run(&ctx.database_url).await?;
            let human = if applied.is_empty() {
                "database is up to date".to_owned()
            } else {
                format!(
                    "applied {} migration(s): {}",
                    applied.len(),
                    applied.join(", ")
                )
            };
            Ok((json!({ "applied": applied }), human))
        }
        Command::Plan {
            cmd:
                PlanCmd::Upsert {
                    name,
                    logs,
                    no_logs,
                    retention_days,
                    max_file_size,
                    max_url_lifetime,
                    concurrent_searches,
                },
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
        Command::Org {
            cmd: OrgCmd::Create { name, plan, slug },
        } => {
            if name.trim().is_empty() {
                return Err(CliError("--name must not be empty".into()));
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
        Command::Org {
            cmd: OrgCmd::SetPlan { org, plan },
        } => {
            let o = accounts.set_org_plan(&org, &plan).await?;
            Ok((
                json!({ "id": o.id, "plan": o.plan }),
                format!("organization {} is on plan {}", o.id, o.plan),
            ))
        }
        Command::Server {
            cmd: ServerCmd::Register { org, cfx_id, name },
        } => {
            let code = cfx_id.trim();
            if code.is_empty()
                || code.len() > 64
                || !code
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            {
                return Err(CliError(format!(
                    "--cfx-id {cfx_id:?}: a join code is 1 to 64 letters, digits, `-` or `_`"
                )));
            }
            let s = accounts
                .register_server(&org, code, name.as_deref())
                .await?;
            Ok((
                json!({ "id": s.id, "cfxId": s.cfx_id, "orgId": s.org_id, "name": s.name, "logsActive": s.logs_active }),
                format!("server {} registered as {}", s.cfx_id, s.id),
            ))
        }
        Command::LogsSource { cmd } => {
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
        Command::Key {
            cmd:
                KeyCmd::Create {
                    org,
                    server,
                    kind,
                    perms,
                    allow_paths,
                    deny_paths,
                    mimes,
                    expires_at,
                    name,
                },
        } => {
            let kind = match kind {
                KeyType::Server => CredentialType::Server,
                KeyType::Developer => CredentialType::Developer,
            };
            let org_row = accounts
                .get_org(&org)
                .await?
                .ok_or_else(|| CliError(format!("unknown organization \"{org}\"")))?;
            let server_id = match (&kind, server) {
                (CredentialType::Server, None) => {
                    return Err(CliError("a server key needs --server <join code>".into()))
                }
                (CredentialType::Developer, Some(_)) => {
                    return Err(CliError(
                        "developer keys are global; drop --server (or use --type server)".into(),
                    ))
                }
                (_, Some(code)) => {
                    let s = accounts
                        .find_server_by_cfx(&code)
                        .await?
                        .filter(|s| s.org_id == org_row.id)
                        .ok_or_else(|| {
                            CliError(format!(
                                "no server with join code \"{code}\" in organization {org}"
                            ))
                        })?;
                    Some(s.id)
                }
                (_, None) => None,
            };
            let mut permissions: PermissionSet = perms
                .iter()
                .map(|p| {
                    p.parse::<Permission>()
                        .map_err(|e| CliError(format!("--perm: {e}")))
                })
                .collect::<Result<_, _>>()?;
            if kind == CredentialType::Server {
                permissions = permissions.union(PermissionSet::server_key_baseline());
            } else if permissions.iter().next().is_none() {
                return Err(CliError("a developer key needs at least one --perm (cdn:read, cdn:write, cdn:delete, logs:read, logs:write)".into()));
            }
            let expires = match expires_at {
                None => None,
                Some(t) => Some(
                    chrono::DateTime::parse_from_rfc3339(&t)
                        .map_err(|e| {
                            CliError(format!("--expires-at {t:?}: not an RFC 3339 time ({e})"))
                        })?
                        .with_timezone(&chrono::Utc),
                ),
            };
            let mime = if mimes.is_empty() {
                None
            } else {
                Some(
                    mimes
                        .iter()
                        .map(|m| auth_core::policy::mime_essence(m))
                        .collect(),
                )
            };
            let s = secret::generate(kind);
            let key = accounts
                .create_key(&NewKey {
                    id: new_id("key"),
                    org_id: org_row.id.clone(),
                    server_id,
                    credential_type: kind,
                    name,
                    secret_hash: s.hash,
                    hint: s.hint,
                    permissions,
                    allowed_prefixes: prefixes(&allow_paths, "--allow-path")?,
                    denied_prefixes: prefixes(&deny_paths, "--deny-path")?,
                    allowed_mime: mime,
                    expires_at: expires,
                })
                .await?;
            let mut out = key_json(&key);
            out["secret"] = json!(s.secret);
            Ok((
                out,
                format!(
                    "key {} created; its secret (shown once):\n{}",
                    key.id, s.secret
                ),
            ))
        }
        Command::Key {
            cmd: KeyCmd::List { org },
        } => {
            let keys = accounts.list_keys(&org).await?;
            let human = keys
                .iter()
                .map(|k| {
                    format!(
                        "{}  {:9}  {}  {}",
                        k.id,
                        k.credential_type.as_str(),
                        k.hint,
                        if k.disabled_at.is_some() {
                            "disabled"
                        } else {
                            "active"
                        }
                    )
                })
                .collect::<Vec<_>>()
                .join("\n");
            Ok((
                json!({ "keys": keys.iter().map(key_json).collect::<Vec<_>>() }),
                human,
            ))
        }
        Command::Key {
            cmd: KeyCmd::Disable { key_id },
        } => {
            let k = accounts.disable_key(&key_id, chrono::Utc::now()).await?;
            Ok((
                json!({ "keyId": k.id, "disabled": true }),
                format!("key {} disabled", k.id),
            ))
        }
        Command::Key {
            cmd: KeyCmd::Delete { key_id },
        } => {
            accounts.delete_key(&key_id).await?;
            Ok((
                json!({ "keyId": key_id, "deleted": true }),
                format!("key {key_id} deleted"),
            ))
        }
        Command::Usage { org } => {
            accounts
                .get_org(&org)
                .await?
                .ok_or_else(|| CliError(format!("unknown organization \"{org}\"")))?;
            let u = stow_db::logs::org_usage(&ctx.db, &org).await?;
            Ok((
                json!({ "orgId": org, "month": u.month, "logEvents": u.log_events, "objects": u.objects, "storageBytes": u.storage_bytes }),
                format!(
                    "{}: {} log events, {} objects, {} bytes stored",
                    u.month, u.log_events, u.objects, u.storage_bytes
                ),
            ))
        }
        Command::Gc {
            object_store_url,
            min_age_secs,
        } => {
            let url = match object_store_url {
                Some(u) => u,
                None => {
                    let cwd = std::env::current_dir().map_err(|e| CliError(e.to_string()))?;
                    format!("file://{}", cwd.join("data/objects").display())
                }
            };
            let objects =
                stow_objects::Objects::from_url(&url).map_err(|e| CliError(e.to_string()))?;
            let (scanned, removed) =
                gc(&ctx.db, &objects, chrono::Duration::seconds(min_age_secs)).await?;
            Ok((
                json!({ "scanned": scanned, "removed": removed }),
                format!("scanned {scanned} stored objects, removed {removed} unreferenced"),
            ))
        }
        Command::Logs {
            cmd: LogsCmd::Maintain,
        } => {
            let r = stow_db::logs::maintain_partitions(&ctx.db).await?;
            Ok((
                json!({ "created": r.created, "dropped": r.dropped, "vacuumed": r.vacuumed, "failed": r.failed }),
                format!(
                    "partitions: {} created, {} dropped, {} vacuumed, {} failed",
                    r.created.len(),
                    r.dropped.len(),
                    r.vacuumed.len(),
                    r.failed.len()
                ),
            ))
        }
        Command::DevSetup => dev_setup(ctx).await,
    }
}

/// Deletes stored bytes older than `min_age` that no row references. Returns (scanned, removed).
pub async fn gc(
    db: &Db,
    objects: &stow_objects::Objects,
    min_age: chrono::Duration,
) -> Result<(u64, u64), CliError> {
    let repo = PgObjects::new(db.clone());
    let cutoff = chrono::Utc::now() - min_age;
    let mut listing = objects.list("o");
    let (mut scanned, mut removed) = (0u64, 0u64);
    while let Some(item) = listing.next().await {
        let (location, modified) = item.map_err(|e| CliError(e.to_string()))?;
        scanned += 1;
        if modified > cutoff || repo.is_referenced(&location).await? {
            continue;
        }
        objects
            .delete(&stow_objects::ObjectPath::from(location.as_str()))
            .await
            .map_err(|e| CliError(e.to_string()))?;
        removed += 1;
    }
    Ok((scanned, removed))
}

async fn dev_setup(ctx: &Ctx) -> Result<(Value, String), CliError> {
    stow_db::migrate::run(&ctx.database_url).await?;
    let accounts = &ctx.accounts;
    let org = match accounts.find_org_by_slug("dev").await? {
        Some(o) => o,
        None => accounts.create_org("Local Dev", "dev", "pro").await?,
    };
    let server = match accounts.find_server_by_cfx("devsrv").await? {
        Some(s) => s,
        None => {
            accounts
                .register_server(&org.id, "devsrv", Some("Local dev server"))
                .await?
        }
    };
    accounts.set_logs_active(&server.cfx_id, true).await?;
    stow_db::logs::maintain_partitions(&ctx.db).await?;
    let mut made = Vec::new();
    for (kind, server_id, name) in [
        (CredentialType::Developer, None, "dev: all permissions"),
        (
            CredentialType::Server,
            Some(server.id.clone()),
            "dev: server key",
        ),
    ] {
        let s = secret::generate(kind);
        let permissions = match kind {
            CredentialType::Developer => PermissionSet::all(),
            CredentialType::Server => PermissionSet::server_key_baseline().union(
                [Permission::CdnRead, Permission::CdnDelete]
                    .into_iter()
                    .collect(),
            ),
        };
        let key = accounts
            .create_key(&NewKey {
                id: new_id("key"),
                org_id: org.id.clone(),
                server_id,
                credential_type: kind,
                name: Some(name.into()),
                secret_hash: s.hash,
                hint: s.hint,
                permissions,
                allowed_prefixes: vec![],
                denied_prefixes: vec![],
                allowed_mime: None,
                expires_at: None,
            })
            .await?;
        made.push((key.id, s.secret));
    }
    let human = format!(
        "workspace: {slug} (organization {org}, plan pro)\nserver join code: {cfx}\ndeveloper key: {dev}\nserver key:    {srv}",
        slug = org.slug,
        org = org.id,
        cfx = server.cfx_id,
        dev = made[0].1,
        srv = made[1].1
    );
    Ok((
        json!({ "orgId": org.id, "workspace": org.slug, "cfxId": server.cfx_id, "developerKey": made[0].1, "serverKey": made[1].1 }),
        human,
    ))
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
