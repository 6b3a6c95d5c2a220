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
