//! The answers the HTTP/1 parser gives by itself, in the host's envelope.
//!
//! A malformed request head (400), a head over the parser's limits (431) and a head that does not
//! arrive within the client request timeout (408) are answered by actix-http's dispatcher before
//! any service or middleware runs. Our patched actix-http (vendor/actix-http/STOWAGE-PATCH.md)
//! lets a hook build those answers; [`register`] installs ours on the calling worker thread, so
//! each host calls it from its application factory (which actix-web runs on every worker).
//!
//! They are client mistakes, so they are not logged here; the dispatcher's own log line about the
//! broken connection is throttled in `telemetry`.

use actix_http::body::BoxBody;
use actix_http::framework_error::set_framework_error_hook;
use actix_http::{Response, StatusCode};

use crate::request::{new_request_id, Flavor};
use crate::{ApiError, Code};

/// The parser's limits on a request head (actix-http's `MAX_BUFFER_SIZE` and `MAX_HEADERS`).
pub const MAX_HEAD_BYTES: usize = 131_072;
pub const MAX_HEADER_LINES: usize = 96;

/// Installs the hook for `flavor`'s envelope on the calling thread.
pub fn register(flavor: Flavor) {
    set_framework_error_hook(match flavor {
        Flavor::Api => cdn_answer,
        Flavor::Ingest => ingest_answer,
    });
}

fn cdn_answer(status: StatusCode) -> Response<BoxBody> {
    answer(Flavor::Api, status)
}

fn ingest_answer(status: StatusCode) -> Response<BoxBody> {
    answer(Flavor::Ingest, status)
}

fn answer(flavor: Flavor, status: StatusCode) -> Response<BoxBody> {
    error_for(status)
        .response_with_id(flavor, &new_request_id())
        .into()
}

/// The error for a status the dispatcher answers by itself.
pub fn error_for(status: StatusCode) -> ApiError {
    match status {
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => ApiError::new(
            Code::HeadersTooLarge,
            format!(
                "the request head is larger than the limit of {MAX_HEAD_BYTES} bytes or has more than {MAX_HEADER_LINES} header lines"
            ),
        ),
        StatusCode::REQUEST_TIMEOUT => ApiError::new(
            Code::RequestTimeout,
            "the request head did not arrive within the client request timeout",
        ),
        StatusCode::BAD_REQUEST => ApiError::invalid_request(
            "the request is not valid HTTP/1.1 (request line or a header line is malformed)",
        ),
        _ => ApiError::new(Code::Internal, "internal error"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_status_the_parser_answers_has_its_code() {
        assert_eq!(
            error_for(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE).code,
            Code::HeadersTooLarge
        );
        assert_eq!(
            error_for(StatusCode::REQUEST_TIMEOUT).code,
            Code::RequestTimeout
        );
        assert_eq!(
            error_for(StatusCode::BAD_REQUEST).code,
            Code::InvalidRequest
        );
        assert_eq!(
            error_for(StatusCode::INTERNAL_SERVER_ERROR).code,
            Code::Internal
        );
        for status in [400, 408, 431, 500] {
            let status = StatusCode::from_u16(status).unwrap();
            assert_eq!(error_for(status).code.status(), status);
        }
    }
}
