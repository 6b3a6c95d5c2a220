//! [`Rotate`]: a new key with an old one's settings (its secret shown once); the old key keeps
//! working until disabled, so clients can move over first.

use auth_core::audit::Action;
use auth_core::model::NewKey;
use auth_core::{secret, ApiKey, KeyId, Server};

use super::{reachable, state::disable};
use crate::{Ctx, OpError};

pub struct Rotate {
    pub key: KeyId,
    /// Disable the old key at once (its console sessions end with it).
    pub disable_old: bool,
}

pub struct Rotated {
    pub key: ApiKey,
    pub secret: String,
    /// The key it replaces.
    pub old: ApiKey,
    /// The organization's servers (join codes to show the key with).
    pub servers: Vec<Server>,
}

impl Rotate {
    pub async fn run(self, ctx: &Ctx<'_>) -> Result<Rotated, OpError> {
        let old = reachable(ctx, &self.key, Action::KeyCreate).await?;
        let s = secret::generate(old.credential_type);
        let key = ctx
            .stores
            .accounts
            .create_key(&NewKey::replacing(&old, &s), &ctx.audit)
            .await?;
        let old = if self.disable_old {
            disable(ctx, &old.id).await?.0
        } else {
            old
        };
        let servers = ctx.stores.accounts.list_servers(&old.org_id).await?;
        Ok(Rotated {
            key,
            secret: s.secret,
            old,
            servers,
        })
    }
}
