//! Stowage patch (see `STOWAGE-PATCH.md`): the answers the HTTP/1 dispatcher writes by itself.
//!
//! A malformed request head (400), a head over the buffer limit (431) and a head that does not
//! arrive in time (408) are answered before any service runs, so no middleware can give them the
//! application's error body or headers. A hook registered here builds those answers instead. It is
//! kept per thread because each server worker runs its connections on its own thread: registering
//! it from the application factory (which runs on every worker) scopes it to that server.

use std::cell::Cell;

use crate::{body::BoxBody, Response, StatusCode};

/// Builds the whole answer (status, headers, body) for an error the dispatcher answers itself.
/// `status` is 400, 408 or 431 for the client's mistakes, 500 for the dispatcher's own faults.
pub type FrameworkErrorHook = fn(status: StatusCode) -> Response<BoxBody>;

thread_local! {
    static HOOK: Cell<Option<FrameworkErrorHook>> = const { Cell::new(None) };
}

/// Registers `hook` for the connections served on the calling thread.
pub fn set_framework_error_hook(hook: FrameworkErrorHook) {
    HOOK.with(|h| h.set(Some(hook)));
}

/// The response and body for `res`, an answer the dispatcher made by itself: the hook's, when one
/// is registered on this thread, else `res` with an empty body as upstream sends it.
pub(crate) fn framework_error(res: Response<()>) -> (Response<()>, BoxBody) {
    match HOOK.with(Cell::get) {
        Some(hook) => {
            let built = hook(res.status());
            let (head, body) = built.into_parts();
            (head, body)
        }
        None => (res, BoxBody::new(())),
    }
}
