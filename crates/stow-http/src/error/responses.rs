//! Answers that whole groups of API-host routes share, declared once for their OpenAPI
//! descriptions (`responses(…, KeyedRouteErrors)`); each route lists only its own beside them.

use utoipa::IntoResponses;

use super::ApiErrorBody;

/// What any route that takes an API key may answer besides its own errors.
#[derive(IntoResponses)]
#[allow(dead_code)]
pub enum KeyedRouteErrors {
    /// UNAUTHORIZED: the key is missing, malformed, unknown, disabled or expired.
    #[response(status = 401)]
    Unauthorized(ApiErrorBody),
    /// RATE_LIMITED: the key's rate limit (or the route's own limit); honour `Retry-After`.
    #[response(status = 429)]
    RateLimited(ApiErrorBody),
    /// SERVICE_UNAVAILABLE: a dependency is down or timed out; honour `Retry-After`.
    #[response(status = 503)]
    Unavailable(ApiErrorBody),
}

/// What any route that reads a request body may answer besides its own errors.
#[derive(IntoResponses)]
#[allow(dead_code)]
pub enum BodyRouteErrors {
    /// REQUEST_TIMEOUT: the body stopped arriving (`BODY_IDLE_TIMEOUT_SECONDS`); nothing was stored.
    #[response(status = 408)]
    RequestTimeout(ApiErrorBody),
}

/// What any route with a JSON body may answer besides its own errors.
#[derive(IntoResponses)]
#[allow(dead_code)]
pub enum JsonBodyErrors {
    /// PAYLOAD_TOO_LARGE: the body is over 1 MiB.
    #[response(status = 413)]
    PayloadTooLarge(ApiErrorBody),
    /// UNSUPPORTED_MEDIA_TYPE: not JSON, or a Content-Encoding other than identity, gzip, deflate.
    #[response(status = 415)]
    UnsupportedMediaType(ApiErrorBody),
}

/// What any route that stores bytes may answer besides its own errors.
#[derive(IntoResponses)]
#[allow(dead_code)]
pub enum StoringRouteErrors {
    /// INSUFFICIENT_STORAGE: the object store is out of space; nothing was stored; `Retry-After`.
    #[response(status = 507)]
    InsufficientStorage(ApiErrorBody),
}
