//! The step from a request to an operation: [`ctx`] gives `stow_ops` the host's stores, the
//! caller and the audit log's name for them (handlers extract, run an operation, render).

use actix_web::HttpRequest;
use auth_core::AuthContext;
use stow_ops::{Caller, Ctx};

use crate::state::ApiState;

/// The context an operation runs in for `auth`'s request `req`.
pub(crate) fn ctx<'a>(state: &'a ApiState, req: &HttpRequest, auth: &'a AuthContext) -> Ctx<'a> {
    Ctx::new(
        &state.stores,
        Caller::Api(auth),
        crate::audit::of(req, auth),
    )
}

/// The context of a read that changes nothing (nothing is audited): the caller, the stores.
pub(crate) fn reading<'a>(state: &'a ApiState, auth: &'a AuthContext) -> Ctx<'a> {
    let audit = auth_core::audit::Audit::of(auth, auth_core::audit::Via::Api, None, None);
    Ctx::new(&state.stores, Caller::Api(auth), audit)
}

/// What the API host keeps beside object rows: its delivery-row cache and the bytes.
#[async_trait::async_trait]
impl stow_ops::objects::ObjectsHost for ApiState {
    fn forget_row(&self, org: &auth_core::OrgId, key: &cdn_core::ObjectKey) {
        ApiState::forget_row(self, org, key);
    }

    async fn remove_bytes(&self, location: &str) {
        let path = stow_objects::ObjectPath::from(location);
        if let Err(e) = self.blobs.delete(&path).await {
            tracing::warn!(error = %e, location = %location, "removing bytes no object references failed; `stowctl gc` will");
        }
    }
}
