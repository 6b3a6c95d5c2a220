//! The command line: clap definitions only; each command group runs in its own module.

use auth_core::{KeyId, OrgId};
use clap::{Parser, Subcommand, ValueEnum};

mod people;
pub use people::*;

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
    /// Members: people with their own console sign-in.
    Member {
        #[command(subcommand)]
        cmd: MemberCmd,
    },
    /// Placeholders: what public delivery serves for a missing key that a pattern matches.
    Placeholder {
        #[command(subcommand)]
        cmd: PlaceholderCmd,
    },
    /// The secrets continuation tokens and query cursors are signed with (kept in the database).
    #[command(name = "signing-secret")]
    SigningSecret {
        #[command(subcommand)]
        cmd: SigningSecretCmd,
    },
    /// Usage of an organization this month.
    Usage {
        /// Organization: its id (`org_…`), workspace or name.
        #[arg(long)]
        org: OrgId,
    },
    /// Remove stored bytes no object row references (left by crashes).
    Gc {
        /// Object store URL, the one the services use (default: OBJECT_STORE_URL).
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
    /// Provision the local development workspace `dev` (join code `devsrv`) with a developer key and
    /// a server key, and print them (used by `just run`). Earlier dev keys stop working, unless
    /// `--keys-file` holds ones that still do, which are printed again instead.
    #[command(name = "dev-setup")]
    DevSetup {
        /// Reuse the keys saved in this file while they still work; save new ones there (mode 0600).
        #[arg(long)]
        keys_file: Option<std::path::PathBuf>,
    },
}

#[derive(Subcommand, Debug)]
pub enum PlanCmd {
    /// List the plans and their limits.
    List,
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
    /// List the organizations (id, name, workspace, plan).
    List,
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
        /// Create it even if an organization already has this name.
        #[arg(long)]
        allow_duplicate_name: bool,
    },
    /// Move an organization to another plan.
    #[command(name = "set-plan")]
    SetPlan {
        /// Organization: its id (`org_…`), workspace or name.
        #[arg(long)]
        org: OrgId,
        /// Plan name.
        #[arg(long)]
        plan: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum SigningSecretCmd {
    /// Make a new current secret. Tokens and cursors signed with the one it replaces stay valid
    /// for the grace period; every cdn-api instance signs with the new one within a minute.
    Rotate {
        /// Hours the replaced secret is still accepted (0: refuse its tokens at once).
        #[arg(long, default_value_t = 24)]
        grace_hours: u32,
    },
    /// List the secrets still accepted (never the secrets themselves).
    List,
}

#[derive(Subcommand, Debug)]
pub enum PlaceholderCmd {
    /// Set the fallback object of a key pattern (creates or replaces).
    Set {
        /// Organization: its id (`org_…`), workspace or name.
        #[arg(long)]
        org: OrgId,
        /// Key pattern: `*` within a segment, `**` across segments, `?`, `[abc]`, `{a,b}`.
        #[arg(long)]
        pattern: String,
        /// Key of an existing object of the organization.
        #[arg(long)]
        fallback: String,
    },
    /// List an organization's placeholders.
    List {
        /// Organization: its id (`org_…`), workspace or name.
        #[arg(long)]
        org: OrgId,
    },
    /// Remove a placeholder.
    Remove {
        /// Organization: its id (`org_…`), workspace or name.
        #[arg(long)]
        org: OrgId,
        /// The pattern, as set.
        #[arg(long)]
        pattern: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum ServerCmd {
    /// List an organization's servers with their Logs source state.
    List {
        /// Organization: its id (`org_…`), workspace or name.
        #[arg(long)]
        org: OrgId,
    },
    /// Register a game server by its join code.
    Register {
        /// Organization: its id (`org_…`), workspace or name.
        #[arg(long)]
        org: OrgId,
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

impl KeyType {
    /// The type's name in the API (`type`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Server => "server",
            Self::Developer => "developer",
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum LogsCmd {
    /// Create upcoming daily partitions and drop those past the longest retention.
    Maintain,
}

impl Command {
    /// The organization the command names, if it names one (to resolve before it runs).
    pub fn org_mut(&mut self) -> Option<&mut OrgId> {
        match self {
            Command::Usage { org }
            | Command::Org {
                cmd: OrgCmd::SetPlan { org, .. },
            }
            | Command::Placeholder {
                cmd:
                    PlaceholderCmd::Set { org, .. }
                    | PlaceholderCmd::List { org }
                    | PlaceholderCmd::Remove { org, .. },
            }
            | Command::Server {
                cmd: ServerCmd::List { org } | ServerCmd::Register { org, .. },
            }
            | Command::Key {
                cmd: KeyCmd::Create { org, .. } | KeyCmd::List { org },
            }
            | Command::Member {
                cmd: MemberCmd::Invite { org, .. } | MemberCmd::List { org },
            } => Some(org),
            _ => None,
        }
    }
}
