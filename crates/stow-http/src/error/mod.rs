//! The error type every route returns, and its two envelopes. See the crate docs for the policy.

mod code;
mod envelope;
mod responses;

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use serde_json::Value;

pub use code::Code;
pub use envelope::{ApiErrorBody, ApiErrorDetail, ErrorBody, IngestErrorBody};
pub use responses::{BodyRouteErrors, JsonBodyErrors, KeyedRouteErrors, StoringRouteErrors};

use crate::request::{current_flavor, current_request_id, Flavor, X_REQUEST_ID};

/// `Retry-After` of a 507: space is freed by an operator, not within a second.
pub const INSUFFICIENT_STORAGE_RETRY_SECS: u64 = 60;

/// An error answer. `message` is shown to the caller: lowercase, specific, never internal text.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub code: Code,
    pub message: String,
    pub details: Option<Value>,
    pub retry_after: Option<u64>,
}

impl ApiError {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        let retry_after = match code {
            Code::Unavailable | Code::BatchInProgress | Code::RateLimited => Some(1),
            Code::InsufficientStorage => Some(INSUFFICIENT_STORAGE_RETRY_SECS),
            _ => None,
        };
        Self {
            code,
            message: message.into(),
            details: None,
            retry_after,
        }
    }

    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(Code::InvalidRequest, message)
    }

    pub fn unavailable() -> Self {
        Self::new(
            Code::Unavailable,
            "the service is temporarily unavailable; retry later",
        )
    }

    /// Logs `detail` and returns a generic 500.
    pub fn internal(detail: impl std::fmt::Display) -> Self {
        tracing::error!(error = %detail, request_id = %current_request_id(), "internal error");
        Self::new(Code::Internal, "internal error")
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    pub fn with_retry_after(mut self, secs: u64) -> Self {
        self.retry_after = Some(secs.max(1));
        self
    }

    /// A JSON body that does not parse or does not fit the route's type, named without Rust's
    /// type names.
    pub fn from_serde_json(e: &serde_json::Error) -> Self {
        Self::invalid_request(format!(
            "invalid JSON body: {}",
            without_type_names(&e.to_string())
        ))
    }

    /// Like [`ApiError::from_serde_json`], naming the field at `path` (serde_path_to_error's
    /// rendering; `.` is the body itself and `?` a position it could not name: neither is named).
    pub fn from_serde_json_at(path: &str, e: &serde_json::Error) -> Self {
        if path == "." || path.is_empty() || path.contains('?') {
            return Self::from_serde_json(e);
        }
        Self::invalid_request(format!(
            "invalid JSON body at `{path}`: {}",
            without_type_names(&e.to_string())
        ))
    }

    /// The body for `flavor` with request id `request_id`.
    pub fn body(&self, flavor: Flavor, request_id: &str) -> ErrorBody {
        ErrorBody::new(
            flavor,
            self.code,
            self.message.clone(),
            self.details.clone(),
            request_id.to_owned(),
        )
    }

    /// The whole answer: status, `Cache-Control: no-store`, `Retry-After` when set, the body.
    pub fn response(&self, flavor: Flavor, request_id: &str) -> HttpResponse {
        let mut res = HttpResponse::build(self.code.status());
        res.insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")));
        if let Some(secs) = self.retry_after {
            res.insert_header((header::RETRY_AFTER, secs.to_string()));
        }
        res.json(self.body(flavor, request_id))
    }

    /// [`Self::response`] with `X-Request-Id`, for answers made outside the request middleware
    /// (which sets that header on every other answer).
    pub fn response_with_id(&self, flavor: Flavor, request_id: &str) -> HttpResponse {
        let mut res = self.response(flavor, request_id);
        if let Ok(v) = HeaderValue::from_str(request_id) {
            res.headers_mut().insert(X_REQUEST_ID, v);
        }
        res
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.cdn_name(), self.message)
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.code.status()
    }

    fn error_response(&self) -> HttpResponse {
        self.response(current_flavor(), &current_request_id())
    }
}

impl From<auth_core::AuthError> for ApiError {
    fn from(e: auth_core::AuthError) -> Self {
        let code = if e.is_unauthenticated() {
            Code::Unauthorized
        } else {
            Code::Forbidden
        };
        ApiError::new(code, e.to_string())
    }
}

/// The operations' errors, mapped once: a refused field is named as the API spells it.
impl From<stow_ops::OpError> for ApiError {
    fn from(e: stow_ops::OpError) -> Self {
        use stow_ops::OpError as O;
        match e {
            O::Invalid { .. } => ApiError::invalid_request(e.naming(|f| format!("`{f}`"))),
            O::BadRequest(m) => ApiError::invalid_request(m),
            O::TooManyFiles(m) => ApiError::new(Code::TooManyFiles, m),
            O::InvalidPath(m) => ApiError::new(Code::InvalidPath, m),
            O::PathNotAllowed(m) => ApiError::new(Code::PathNotAllowed, m),
            O::NotFound(m) => ApiError::new(Code::NotFound, m),
            O::Forbidden(m) => ApiError::new(Code::Forbidden, m),
            O::Conflict(m) => ApiError::new(Code::Conflict, m),
            O::Auth(e) => e.into(),
            O::Store(e) => e.into(),
        }
    }
}

impl From<auth_core::StoreError> for ApiError {
    fn from(e: auth_core::StoreError) -> Self {
        use auth_core::StoreError as S;
        match e {
            S::NotFound(m) => ApiError::new(Code::NotFound, m),
            S::Conflict(m) => ApiError::new(Code::Conflict, m),
            S::Unavailable(detail) => {
                tracing::warn!(error = %detail, request_id = %current_request_id(), "dependency unavailable");
                ApiError::unavailable()
            }
            S::Internal(detail) => ApiError::internal(detail),
        }
    }
}

impl From<stow_objects::ObjectsError> for ApiError {
    fn from(e: stow_objects::ObjectsError) -> Self {
        use stow_objects::ObjectsError as O;
        match e {
            O::NotFound => ApiError::new(Code::NotFound, "object not found"),
            O::Unavailable(detail) => {
                tracing::warn!(error = %detail, request_id = %current_request_id(), "object store unavailable");
                ApiError::unavailable()
            }
            O::NoSpace(detail) => {
                // every upload fails alike until space is freed: one line per interval, not one
                // per request
                if NO_SPACE_LOG.ready() {
                    tracing::error!(error = %detail, "object store is out of space; uploads answer 507 until space is freed");
                }
                ApiError::new(
                    Code::InsufficientStorage,
                    "the object store is out of space; nothing was stored, retry later",
                )
            }
            other => ApiError::internal(other),
        }
    }
}

/// How often the out-of-space error is logged while it lasts.
const NO_SPACE_LOG_INTERVAL: std::time::Duration = std::time::Duration::from_secs(60);

static NO_SPACE_LOG: LogThrottle = LogThrottle::new(NO_SPACE_LOG_INTERVAL);

/// Lets one log line through per interval.
pub struct LogThrottle {
    interval: std::time::Duration,
    last: std::sync::Mutex<Option<std::time::Instant>>,
}

impl LogThrottle {
    pub const fn new(interval: std::time::Duration) -> Self {
        Self {
            interval,
            last: std::sync::Mutex::new(None),
        }
    }

    /// True at most once per interval.
    pub fn ready(&self) -> bool {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let now = std::time::Instant::now();
        if last.is_some_and(|at| now.duration_since(at) < self.interval) {
            return false;
        }
        *last = Some(now);
        true
    }
}

/// serde names our Rust types in its messages (`expected struct QueryRequest with 11
/// elements`); clients know them as JSON objects.
fn without_type_names(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    const PHRASE: &str = "expected struct ";
    while let Some(at) = rest.find(PHRASE) {
        out.push_str(&rest[..at]);
        out.push_str("expected a JSON object");
        let after = &rest[at + PHRASE.len()..];
        let name_end = after
            .find(|c: char| !c.is_alphanumeric() && c != '_')
            .unwrap_or(after.len());
        rest = &after[name_end..];
        if let Some(tail) = rest.strip_prefix(" with ") {
            if let Some(end) = tail.find(" element") {
                let n = &tail[..end];
                if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
                    let tail = &tail[end + " element".len()..];
                    rest = tail.strip_prefix('s').unwrap_or(tail);
                }
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serde_messages_lose_rust_type_names() {
        assert_eq!(
            without_type_names("invalid length 0, expected struct QueryRequest with 11 elements at line 1 column 2"),
            "invalid length 0, expected a JSON object at line 1 column 2"
        );
        assert_eq!(
            without_type_names(
                "invalid type: string \"x\", expected struct Identifier at line 1 column 5"
            ),
            "invalid type: string \"x\", expected a JSON object at line 1 column 5"
        );
        assert_eq!(
            without_type_names("expected struct A with 1 element"),
            "expected a JSON object"
        );
        assert_eq!(
            without_type_names("unknown field `x`, expected one of `a`, `b`"),
            "unknown field `x`, expected one of `a`, `b`"
        );
        assert_eq!(
            without_type_names("expected struct "),
            "expected a JSON object"
        );
        // the client's own text is left alone
        assert_eq!(
            without_type_names("unknown field `struct Foo`, expected `a`"),
            "unknown field `struct Foo`, expected `a`"
        );
    }

    #[test]
    fn envelopes() {
        let e = ApiError::new(Code::PathNotAllowed, "nope").with_details(json!([1]));
        let cdn = serde_json::to_value(e.body(Flavor::Api, "req_1")).unwrap();
        assert_eq!(cdn["success"], false);
        assert_eq!(cdn["error"]["code"], "PATH_NOT_ALLOWED");
        assert_eq!(cdn["error"]["message"], "nope");
        assert_eq!(cdn["requestId"], "req_1");
        assert_eq!(cdn["error"]["details"], json!([1]));
        let ing = serde_json::to_value(
            ApiError::new(Code::BatchIdConflict, "x").body(Flavor::Ingest, "req_2"),
        )
        .unwrap();
        assert_eq!(ing["error"], "batch_id_conflict");
        assert_eq!(ing["request_id"], "req_2");
        assert!(ing.get("details").is_none());
        assert!(ApiError::new(Code::RateLimited, "slow")
            .retry_after
            .is_some());
        assert!(ApiError::new(Code::Conflict, "x").retry_after.is_none());
    }

    #[test]
    fn a_full_store_is_a_507_with_retry_after_and_logged_once_per_interval() {
        let e = ApiError::from(stow_objects::ObjectsError::NoSpace(
            "/data: No space left".into(),
        ));
        assert_eq!(e.code, Code::InsufficientStorage);
        assert_eq!(e.code.status(), 507);
        assert_eq!(e.retry_after, Some(INSUFFICIENT_STORAGE_RETRY_SECS));
        assert!(!e.message.contains("/data"));
        let throttle = LogThrottle::new(std::time::Duration::from_secs(3600));
        assert!(throttle.ready());
        assert!(!throttle.ready());
        assert!(!throttle.ready());
    }

    #[test]
    fn internal_errors_do_not_leak() {
        let e = ApiError::from(auth_core::StoreError::Internal(
            "relation \"secret_table\" does not exist".into(),
        ));
        assert_eq!(e.code, Code::Internal);
        assert!(!e.message.contains("secret_table"));
        let e = ApiError::from(auth_core::StoreError::Unavailable(
            "password=hunter2".into(),
        ));
        assert_eq!(e.code, Code::Unavailable);
        assert!(!e.message.contains("hunter2"));
        assert!(e.retry_after.is_some());
    }
}
