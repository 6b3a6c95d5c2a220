//! The error type every route returns, and its two envelopes. See the crate docs for the policy.

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use serde_json::{json, Value};

use crate::request::{current_flavor, current_request_id, Flavor};

/// Transport-neutral error codes. The status and wire spelling come from here alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    Unauthorized,
    Forbidden,
    InvalidPath,
    PathNotAllowed,
    FileTooLarge,
    TooManyFiles,
    ContentTypeNotAllowed,
    TokenInvalid,
    TokenExpired,
    RateLimited,
    Conflict,
    InvalidRequest,
    NotFound,
    MethodNotAllowed,
    PayloadTooLarge,
    UnsupportedMediaType,
    InvalidCursor,
    CursorExpired,
    BatchIdConflict,
    BatchInProgress,
    ServerNotFound,
    LogsNotEnabled,
    /// No body bytes arrived for the body idle timeout.
    RequestTimeout,
    /// The object store is out of space (disk full, quota): writes fail until space is freed.
    InsufficientStorage,
    Internal,
    Unavailable,
}

impl Code {
    pub fn status(self) -> StatusCode {
        use Code::*;
        match self {
            Unauthorized | TokenInvalid => StatusCode::UNAUTHORIZED,
            Forbidden | PathNotAllowed | LogsNotEnabled => StatusCode::FORBIDDEN,
            InvalidPath | TooManyFiles | InvalidRequest | InvalidCursor | CursorExpired => {
                StatusCode::BAD_REQUEST
            }
            FileTooLarge | PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ContentTypeNotAllowed | UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            TokenExpired => StatusCode::GONE,
            RateLimited => StatusCode::TOO_MANY_REQUESTS,
            Conflict | BatchIdConflict => StatusCode::CONFLICT,
            NotFound | ServerNotFound => StatusCode::NOT_FOUND,
            MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            InsufficientStorage => StatusCode::INSUFFICIENT_STORAGE,
            Internal => StatusCode::INTERNAL_SERVER_ERROR,
            Unavailable | BatchInProgress => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// The API host's spelling.
    pub fn cdn_name(self) -> &'static str {
        use Code::*;
        match self {
            Unauthorized => "UNAUTHORIZED",
            Forbidden | LogsNotEnabled => "FORBIDDEN",
            InvalidPath => "INVALID_PATH",
            PathNotAllowed => "PATH_NOT_ALLOWED",
            FileTooLarge => "FILE_TOO_LARGE",
            TooManyFiles => "TOO_MANY_FILES",
            ContentTypeNotAllowed => "CONTENT_TYPE_NOT_ALLOWED",
            TokenInvalid => "TOKEN_INVALID",
            TokenExpired => "TOKEN_EXPIRED",
            RateLimited => "RATE_LIMITED",
            Conflict | BatchIdConflict => "CONFLICT",
            InvalidRequest => "INVALID_REQUEST",
            NotFound | ServerNotFound => "NOT_FOUND",
            MethodNotAllowed => "METHOD_NOT_ALLOWED",
            PayloadTooLarge => "PAYLOAD_TOO_LARGE",
            UnsupportedMediaType => "UNSUPPORTED_MEDIA_TYPE",
            InvalidCursor => "INVALID_CURSOR",
            CursorExpired => "CURSOR_EXPIRED",
            RequestTimeout => "REQUEST_TIMEOUT",
            InsufficientStorage => "INSUFFICIENT_STORAGE",
            Internal => "INTERNAL_ERROR",
            Unavailable | BatchInProgress => "SERVICE_UNAVAILABLE",
        }
    }

    /// The ingestion host's spelling.
    pub fn ingest_name(self) -> &'static str {
        use Code::*;
        match self {
            Unauthorized | TokenInvalid => "unauthorized",
            Forbidden | PathNotAllowed => "forbidden",
            InvalidPath | TooManyFiles | InvalidRequest | InvalidCursor | CursorExpired => {
                "invalid_request"
            }
            FileTooLarge | PayloadTooLarge => "payload_too_large",
            ContentTypeNotAllowed | UnsupportedMediaType => "unsupported_media_type",
            TokenExpired | NotFound => "not_found",
            RateLimited => "rate_limited",
            Conflict => "conflict",
            BatchIdConflict => "batch_id_conflict",
            BatchInProgress => "batch_in_progress",
            ServerNotFound => "server_not_found",
            LogsNotEnabled => "logs_not_enabled",
            MethodNotAllowed => "method_not_allowed",
            RequestTimeout => "request_timeout",
            InsufficientStorage => "insufficient_storage",
            Internal => "internal_error",
            Unavailable => "unavailable",
        }
    }

    pub fn name(self, flavor: Flavor) -> &'static str {
        match flavor {
            Flavor::Cdn => self.cdn_name(),
            Flavor::Ingest => self.ingest_name(),
        }
    }
}

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

    /// The JSON body for `flavor` with request id `request_id`.
    pub fn body(&self, flavor: Flavor, request_id: &str) -> Value {
        let code = self.code.name(flavor);
        match flavor {
            Flavor::Cdn => {
                let mut error = json!({ "code": code, "message": self.message });
                if let Some(d) = &self.details {
                    error["details"] = d.clone();
                }
                json!({ "success": false, "error": error, "requestId": request_id })
            }
            Flavor::Ingest => {
                let mut body =
                    json!({ "error": code, "message": self.message, "request_id": request_id });
                if let Some(d) = &self.details {
                    body["details"] = d.clone();
                }
                body
            }
        }
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
        let flavor = current_flavor();
        let body = self.body(flavor, &current_request_id());
        let mut res = HttpResponse::build(self.status_code());
        res.insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")));
        if let Some(secs) = self.retry_after {
            res.insert_header((header::RETRY_AFTER, secs.to_string()));
        }
        res.json(body)
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
    fn every_code_has_both_spellings_and_a_status() {
        use Code::*;
        let all = [
            Unauthorized,
            Forbidden,
            InvalidPath,
            PathNotAllowed,
            FileTooLarge,
            TooManyFiles,
            ContentTypeNotAllowed,
            TokenInvalid,
            TokenExpired,
            RateLimited,
            Conflict,
            InvalidRequest,
            NotFound,
            MethodNotAllowed,
            PayloadTooLarge,
            UnsupportedMediaType,
            InvalidCursor,
            CursorExpired,
            BatchIdConflict,
            BatchInProgress,
            ServerNotFound,
            LogsNotEnabled,
            RequestTimeout,
            InsufficientStorage,
            Internal,
            Unavailable,
        ];
        for c in all {
            assert_eq!(c.cdn_name(), c.cdn_name().to_uppercase());
            assert_eq!(c.ingest_name(), c.ingest_name().to_lowercase());
            assert!(c.status().is_client_error() || c.status().is_server_error());
        }
        // the pinned statuses
        assert_eq!(Unauthorized.status(), 401);
        assert_eq!(Forbidden.status(), 403);
        assert_eq!(InvalidPath.status(), 400);
        assert_eq!(PathNotAllowed.status(), 403);
        assert_eq!(FileTooLarge.status(), 413);
        assert_eq!(TooManyFiles.status(), 400);
        assert_eq!(ContentTypeNotAllowed.status(), 415);
        assert_eq!(TokenInvalid.status(), 401);
        assert_eq!(TokenExpired.status(), 410);
        assert_eq!(RateLimited.status(), 429);
        assert_eq!(Conflict.status(), 409);
        assert_eq!(BatchIdConflict.status(), 409);
        assert_eq!(BatchInProgress.status(), 503);
        assert_eq!(ServerNotFound.status(), 404);
        assert_eq!(LogsNotEnabled.status(), 403);
        assert_eq!(Unavailable.status(), 503);
        assert_eq!(RequestTimeout.status(), 408);
        assert_eq!(InsufficientStorage.status(), 507);
        assert!(ApiError::new(InsufficientStorage, "full")
            .retry_after
            .is_some());
        assert_eq!(LogsNotEnabled.ingest_name(), "logs_not_enabled");
        assert_eq!(BatchInProgress.ingest_name(), "batch_in_progress");
    }

    #[test]
    fn envelopes() {
        let e = ApiError::new(Code::PathNotAllowed, "nope").with_details(json!([1]));
        let cdn = e.body(Flavor::Cdn, "req_1");
        assert_eq!(cdn["success"], false);
        assert_eq!(cdn["error"]["code"], "PATH_NOT_ALLOWED");
        assert_eq!(cdn["error"]["message"], "nope");
        assert_eq!(cdn["requestId"], "req_1");
        let ing = ApiError::new(Code::BatchIdConflict, "x").body(Flavor::Ingest, "req_2");
        assert_eq!(ing["error"], "batch_id_conflict");
        assert_eq!(ing["request_id"], "req_2");
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
