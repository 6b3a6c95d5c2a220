//! [`Disable`], [`Enable`] and [`Delete`]: stop a key (its console sessions end at once, its API
//! calls within `KEY_CACHE_SECONDS`, its upload URLs with it), let it work again (an expired key
//! stays expired), or delete it for good.

use auth_core::audit::Action;
use auth_core::{ApiKey, KeyId, Server};

use super::reachable;
use crate::{Ctx, OpError};

pub struct Disable {
    pub key: KeyId,
}

/// A key disabled, and how many console sessions ended with it.
pub struct Disabled {
    pub key: ApiKey,
    pub sessions_ended: u64,
    pub servers: Vec<Server>,
}

/// Disables `id` and ends its console sessions now, not at their next request.
pub(super) async fn disable(ctx: &Ctx<'_>, id: &KeyId) -> Result<(ApiKey, u64), OpError> {
    let key = ctx
        .stores
        .accounts
        .disable_key(id, ctx.now, &ctx.audit)
        .await?;
    let ended = ctx.stores.console_sessions.end_for_key(id).await?;
    Ok((key, ended))
}

impl Disable {
    pub async fn run(self, ctx: &Ctx<'_>) -> Result<Disabled, OpError> {
        let key = reachable(ctx, &self.key, Action::KeyDisable).await?;
        let (key, sessions_ended) = disable(ctx, &key.id).await?;
        let servers = ctx.stores.accounts.list_servers(&key.org_id).await?;
        Ok(Disabled {
            key,
            sessions_ended,
            servers,
        })
    }
}

pub struct Enable {
    pub key: KeyId,
}

impl Enable {
    /// The key, working again unless it has expired; the organization's servers.
    pub async fn run(self, ctx: &Ctx<'_>) -> Result<(ApiKey, Vec<Server>), OpError> {
        let key = reachable(ctx, &self.key, Action::KeyEnable).await?;
        let key = ctx.stores.accounts.enable_key(&key.id, &ctx.audit).await?;
        let servers = ctx.stores.accounts.list_servers(&key.org_id).await?;
        Ok((key, servers))
    }
}

pub struct Delete {
    pub key: KeyId,
}

impl Delete {
    pub async fn run(self, ctx: &Ctx<'_>) -> Result<(), OpError> {
        let key = reachable(ctx, &self.key, Action::KeyDelete).await?;
        ctx.stores.accounts.delete_key(&key.id, &ctx.audit).await?;
        Ok(())
    }
}
