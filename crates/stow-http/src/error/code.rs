//! The error codes: one table gives each code its HTTP status and its spelling on both hosts.
//! The status enum, the spellings and the code lists of both OpenAPI documents all come from it.

use actix_web::http::StatusCode;

use crate::request::Flavor;

macro_rules! codes {
    ($( $(#[$doc:meta])* $variant:ident => $status:ident, $cdn:literal, $ingest:literal; )*) => {
        /// Transport-neutral error codes. The status and wire spelling come from here alone.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Code {
            $( $(#[$doc])* $variant, )*
        }

        impl Code {
            /// Every code, in table order.
            pub const ALL: &'static [Code] = &[$(Code::$variant),*];

            pub fn status(self) -> StatusCode {
                match self { $(Code::$variant => StatusCode::$status,)* }
            }

            /// The API host's spelling.
            pub fn cdn_name(self) -> &'static str {
                match self { $(Code::$variant => $cdn,)* }
            }

            /// The ingestion host's spelling.
            pub fn ingest_name(self) -> &'static str {
                match self { $(Code::$variant => $ingest,)* }
            }
        }
    };
}

codes! {
    Unauthorized => UNAUTHORIZED, "UNAUTHORIZED", "unauthorized";
    Forbidden => FORBIDDEN, "FORBIDDEN", "forbidden";
    /// A member's password was right and their second factor is on: send `code` (or
    /// `recoveryCode`) with it.
    SecondFactorRequired => UNAUTHORIZED, "SECOND_FACTOR_REQUIRED", "unauthorized";
    InvalidPath => BAD_REQUEST, "INVALID_PATH", "invalid_request";
    PathNotAllowed => FORBIDDEN, "PATH_NOT_ALLOWED", "forbidden";
    FileTooLarge => PAYLOAD_TOO_LARGE, "FILE_TOO_LARGE", "payload_too_large";
    TooManyFiles => BAD_REQUEST, "TOO_MANY_FILES", "invalid_request";
    ContentTypeNotAllowed => UNSUPPORTED_MEDIA_TYPE, "CONTENT_TYPE_NOT_ALLOWED", "unsupported_media_type";
    TokenInvalid => UNAUTHORIZED, "TOKEN_INVALID", "unauthorized";
    TokenExpired => GONE, "TOKEN_EXPIRED", "not_found";
    RateLimited => TOO_MANY_REQUESTS, "RATE_LIMITED", "rate_limited";
    Conflict => CONFLICT, "CONFLICT", "conflict";
    /// An upload with `If-None-Match: *` found an object at its key.
    PreconditionFailed => PRECONDITION_FAILED, "PRECONDITION_FAILED", "precondition_failed";
    InvalidRequest => BAD_REQUEST, "INVALID_REQUEST", "invalid_request";
    NotFound => NOT_FOUND, "NOT_FOUND", "not_found";
    MethodNotAllowed => METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED", "method_not_allowed";
    PayloadTooLarge => PAYLOAD_TOO_LARGE, "PAYLOAD_TOO_LARGE", "payload_too_large";
    UnsupportedMediaType => UNSUPPORTED_MEDIA_TYPE, "UNSUPPORTED_MEDIA_TYPE", "unsupported_media_type";
    InvalidCursor => BAD_REQUEST, "INVALID_CURSOR", "invalid_request";
    CursorExpired => BAD_REQUEST, "CURSOR_EXPIRED", "invalid_request";
    /// A log search's `data` filter would examine more events than `LOGS_DATA_SCAN_LIMIT`.
    SearchTooBroad => BAD_REQUEST, "SEARCH_TOO_BROAD", "invalid_request";
    BatchIdConflict => CONFLICT, "CONFLICT", "batch_id_conflict";
    BatchInProgress => SERVICE_UNAVAILABLE, "SERVICE_UNAVAILABLE", "batch_in_progress";
    ServerNotFound => NOT_FOUND, "NOT_FOUND", "server_not_found";
    LogsNotEnabled => FORBIDDEN, "FORBIDDEN", "logs_not_enabled";
    /// No body bytes arrived for the body idle timeout, or the request head did not arrive in time.
    RequestTimeout => REQUEST_TIMEOUT, "REQUEST_TIMEOUT", "request_timeout";
    /// The request head is over the HTTP/1 parser's limits (answered by the framework itself).
    HeadersTooLarge => REQUEST_HEADER_FIELDS_TOO_LARGE, "HEADERS_TOO_LARGE", "headers_too_large";
    /// The object store is out of space (disk full, quota): writes fail until space is freed.
    InsufficientStorage => INSUFFICIENT_STORAGE, "INSUFFICIENT_STORAGE", "insufficient_storage";
    Internal => INTERNAL_SERVER_ERROR, "INTERNAL_ERROR", "internal_error";
    Unavailable => SERVICE_UNAVAILABLE, "SERVICE_UNAVAILABLE", "unavailable";
}

impl Code {
    pub fn name(self, flavor: Flavor) -> &'static str {
        match flavor {
            Flavor::Api => self.cdn_name(),
            Flavor::Ingest => self.ingest_name(),
        }
    }

    /// Every distinct spelling on `flavor`'s host, in table order (for the OpenAPI documents).
    pub fn names(flavor: Flavor) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = Vec::new();
        for code in Code::ALL {
            let name = code.name(flavor);
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_both_spellings_and_a_status() {
        use Code::*;
        assert_eq!(Code::ALL.len(), 30);
        for &c in Code::ALL {
            assert_eq!(c.cdn_name(), c.cdn_name().to_uppercase());
            assert_eq!(c.ingest_name(), c.ingest_name().to_lowercase());
            assert!(c.status().is_client_error() || c.status().is_server_error());
        }
        // the pinned statuses
        assert_eq!(Unauthorized.status(), 401);
        assert_eq!(Forbidden.status(), 403);
        assert_eq!(SecondFactorRequired.status(), 401);
        assert_eq!(InvalidPath.status(), 400);
        assert_eq!(PathNotAllowed.status(), 403);
        assert_eq!(FileTooLarge.status(), 413);
        assert_eq!(TooManyFiles.status(), 400);
        assert_eq!(ContentTypeNotAllowed.status(), 415);
        assert_eq!(TokenInvalid.status(), 401);
        assert_eq!(TokenExpired.status(), 410);
        assert_eq!(RateLimited.status(), 429);
        assert_eq!(Conflict.status(), 409);
        assert_eq!(PreconditionFailed.status(), 412);
        assert_eq!(BatchIdConflict.status(), 409);
        assert_eq!(BatchInProgress.status(), 503);
        assert_eq!(ServerNotFound.status(), 404);
        assert_eq!(LogsNotEnabled.status(), 403);
        assert_eq!(Unavailable.status(), 503);
        assert_eq!(RequestTimeout.status(), 408);
        assert_eq!(HeadersTooLarge.status(), 431);
        assert_eq!(InsufficientStorage.status(), 507);
        assert_eq!(SearchTooBroad.status(), 400);
        assert_eq!(LogsNotEnabled.ingest_name(), "logs_not_enabled");
        assert_eq!(BatchInProgress.ingest_name(), "batch_in_progress");
    }

    #[test]
    fn the_documented_lists_hold_every_spelling_once() {
        let cdn = Code::names(Flavor::Api);
        assert!(cdn.contains(&"UNSUPPORTED_MEDIA_TYPE"));
        assert_eq!(cdn.iter().filter(|n| **n == "CONFLICT").count(), 1);
        for &c in Code::ALL {
            assert!(cdn.contains(&c.cdn_name()));
            assert!(Code::names(Flavor::Ingest).contains(&c.ingest_name()));
        }
    }
}
