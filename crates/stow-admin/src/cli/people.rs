//! `stowctl key …` and `stowctl member …`: the arguments of the commands about keys and members.

use super::*;

#[derive(Subcommand, Debug)]
pub enum KeyCmd {
    /// Create an API key (the secret is printed once and never stored).
    Create {
        /// Organization: its id (`org_…`), workspace or name.
        #[arg(long)]
        org: OrgId,
        /// Join code of the server a `server` key is bound to.
        #[arg(long)]
        server: Option<String>,
        /// Key type.
        #[arg(long = "type", value_enum)]
        kind: KeyType,
        /// Limit a developer key's logs:read and logs:write to this server (join code),
        /// repeatable; without it the key acts on every server of the organization.
        #[arg(long = "log-server")]
        log_servers: Vec<String>,
        /// A permission, repeatable: cdn:read, cdn:write, cdn:delete, cdn:purge, logs:read, logs:write.
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
        /// Organization: its id (`org_…`), workspace or name.
        #[arg(long)]
        org: OrgId,
    },
    /// Make a disabled key work again (within KEY_CACHE_SECONDS; an expired key stays expired).
    Enable {
        /// Key id (`key_…`).
        key_id: KeyId,
    },
    /// Create a new key with the same settings (printed once); the old one keeps working until
    /// `key disable`, so clients can move over first.
    Rotate {
        /// Key id (`key_…`) of the key to replace.
        key_id: KeyId,
        /// Disable the old key at once instead.
        #[arg(long)]
        disable_old: bool,
    },
    /// Disable a key (takes effect within KEY_CACHE_SECONDS; its upload URLs stop working).
    Disable {
        /// Key id (`key_…`).
        key_id: KeyId,
    },
    /// Delete a key for good.
    Delete {
        /// Key id (`key_…`).
        key_id: KeyId,
    },
}

#[derive(Subcommand, Debug)]
pub enum MemberCmd {
    /// Make an invitation link (shown once): the first owner of an organization, or anyone.
    Invite {
        /// Organization: its id (`org_…`), workspace or name.
        #[arg(long)]
        org: OrgId,
        /// owner, admin, moderator or viewer.
        #[arg(long)]
        role: String,
        /// Limit the member's logs to this server (join code), repeatable.
        #[arg(long = "server")]
        servers: Vec<String>,
        /// Limit the member's files to this path prefix, repeatable.
        #[arg(long = "allow-path")]
        allow_paths: Vec<String>,
        /// Who it is for, shown in the team's list.
        #[arg(long)]
        note: Option<String>,
        /// Hours the link works (1 to 720).
        #[arg(long, default_value_t = 72)]
        hours: u64,
        /// The console's address, to print the whole link (e.g. https://console.example.com).
        #[arg(long, env = "CONSOLE_URL")]
        console_url: Option<String>,
    },
    /// List an organization's members and pending invitations.
    List {
        /// Organization: its id (`org_…`), workspace or name.
        #[arg(long)]
        org: OrgId,
    },
    /// Give a member a new password, read from standard input (recovers a locked-out owner); it
    /// ends every console session of theirs.
    #[command(name = "set-password")]
    SetPassword {
        /// The member's sign-in name.
        #[arg(long)]
        login: String,
    },
    /// Take away a member's second factor (they lost their app and their recovery codes); they
    /// sign in with their password and may set up a new one. Ends their console sessions.
    #[command(name = "reset-second-factor")]
    ResetSecondFactor {
        /// The member's sign-in name.
        #[arg(long)]
        login: String,
    },
}
