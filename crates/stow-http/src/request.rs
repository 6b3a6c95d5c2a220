//! Request ids, the per-request context, and the one-line-per-request log.
//!
//! The middleware runs outermost: it makes the request id, runs the rest of the stack inside a
//! task-local scope (so error renderers anywhere below know the id and the host's envelope),
//! sets `X-Request-Id` on every response and logs one structured line.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Instant;

use actix_web::body::{BoxBody, EitherBody, MessageBody};
use actix_web::dev::Payload;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::error::PayloadError;
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::http::Method;
use actix_web::middleware::Next;
use actix_web::HttpMessage;
use percent_encoding::percent_decode_str;

use crate::idle::{BodyEnd, BodyPace, IdleBody};
use crate::{ApiError, Code};

/// Which error envelope and code spelling a host uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// The API host (`cdn-api`, crate `api-http`): `{success:false, error:{code,message},
    /// requestId}`, the interface's "CDN envelope".
    Api,
    /// The ingestion host (`logs-api`): `{error, message, request_id}`.
    Ingest,
}

#[derive(Debug, Clone)]
pub struct RequestCtx {
    pub id: String,
    pub flavor: Flavor,
}

tokio::task_local! {
    static CTX: RequestCtx;
}

/// The id of the request being served (a fresh one outside any request).
pub fn current_request_id() -> String {
    CTX.try_with(|c| c.id.clone())
        .unwrap_or_else(|_| new_request_id())
}

pub fn current_flavor() -> Flavor {
    CTX.try_with(|c| c.flavor).unwrap_or(Flavor::Api)
}

/// `req_` and a lowercase ULID, built with one allocation (this runs on every request).
pub fn new_request_id() -> String {
    let mut buf = [0u8; ulid::ULID_LEN];
    let encoded = ulid::Ulid::new().array_to_str(&mut buf);
    encoded.make_ascii_lowercase();
    let mut id = String::with_capacity(4 + ulid::ULID_LEN);
    id.push_str("req_");
    id.push_str(encoded);
    id
}

/// The request id, also stored in request extensions for handlers.
#[derive(Debug, Clone)]
pub struct RequestId(pub String);

/// The authenticated key id, recorded by the auth extractor for the access log.
#[derive(Debug, Clone)]
pub struct KeyId(pub String);

/// The route label for metrics and logs, for handlers reached without a route pattern (a scope's
/// default service).
#[derive(Debug, Clone, Copy)]
pub struct RouteLabel(pub &'static str);

/// A request id to use instead of the fresh one (set by idempotent replays).
#[derive(Debug, Clone)]
pub struct ReplayedRequestId(pub String);

pub const X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

pub async fn api_context(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    with_context(Flavor::Api, req, next).await
}

pub async fn ingest_context(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    with_context(Flavor::Ingest, req, next).await
}

async fn with_context(
    flavor: Flavor,
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<EitherBody<EitherBody<impl MessageBody>, HoldUnread>>, actix_web::Error>
{
    let id = new_request_id();
    let started = Instant::now();
    let method = req.method().clone();
    let body = pace_body(&mut req);
    req.extensions_mut().insert(RequestId(id.clone()));
    let ctx = RequestCtx {
        id: id.clone(),
        flavor,
    };
    let mut res = match query_not_utf8(req.query_string()) {
        None => CTX.scope(ctx, next.call(req)).await?.map_into_left_body(),
        Some(err) => CTX
            .scope(ctx, async move { req.error_response(err) })
            .await
            .map_into_right_body(),
    };
    let shown_id = res
        .request()
        .extensions()
        .get::<ReplayedRequestId>()
        .map(|r| r.0.clone())
        .unwrap_or_else(|| id.clone());
    if let Ok(v) = HeaderValue::from_str(&shown_id) {
        res.headers_mut().insert(X_REQUEST_ID, v);
    }
    let res = match body {
        // Answered before the body was read (a 401, a 404, a refusal). actix-http would read and
        // discard the rest of a chunked body for as long as the client sends it, keeping the
        // connection; with the payload still held when the answer is finished, it closes the
        // connection after the answer instead (a short linger, then shutdown). The answer's
        // body holds it until then.
        Some((end, payload)) if !end.reached() => res.map_body(|_, body| {
            EitherBody::right(HoldUnread {
                body: BoxBody::new(body),
                _payload: payload,
            })
        }),
        _ => res.map_into_left_body(),
    };
    let route = match res.request().extensions().get::<RouteLabel>() {
        Some(label) => label.0.to_owned(),
        None => res
            .request()
            .match_pattern()
            .unwrap_or_else(|| "<unmatched>".to_owned()),
    };
    let key_id = res
        .request()
        .extensions()
        .get::<KeyId>()
        .map(|k| k.0.clone());
    let status = res.status().as_u16();
    let elapsed = started.elapsed().as_secs_f64();
    let latency_ms = elapsed * 1000.0;
    let host = match flavor {
        Flavor::Api => "api",
        Flavor::Ingest => "ingest",
    };
    record_request(host, &route, method_label(&method), status, elapsed);
    tracing::info!(
        request_id = %id,
        method = %method,
        route = %route,
        status,
        latency_ms = format_args!("{latency_ms:.2}"),
        key_id = key_id.as_deref().unwrap_or("-"),
        "request"
    );
    Ok(res)
}

/// The part of a client's address a per-address limit counts by: an IPv4 address as it is (an
/// IPv4 inside IPv6 too), an IPv6 address by its /64 — the smallest block a home or a server is
/// given, so a client cannot get a fresh limit from each of its 2^64 addresses.
pub fn address_bucket(ip: std::net::IpAddr) -> String {
    match ip {
        std::net::IpAddr::V4(v4) => v4.to_string(),
        std::net::IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let s = v6.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        },
    }
}

/// The client's address: the peer's, or, when the peer is one of `trusted` proxies, the last
/// address in `X-Forwarded-For` that is not a trusted proxy (addresses further left were sent by
/// the client itself and prove nothing; nginx appends the peer it saw on the right).
pub fn client_ip(
    req: &actix_web::HttpRequest,
    trusted: &[ipnet::IpNet],
) -> Option<std::net::IpAddr> {
    let peer = req.peer_addr()?.ip();
    let is_trusted = |ip: &std::net::IpAddr| trusted.iter().any(|net| net.contains(ip));
    if !is_trusted(&peer) {
        return Some(peer);
    }
    let forwarded: Vec<std::net::IpAddr> = req
        .headers()
        .get_all(header::HeaderName::from_static("x-forwarded-for"))
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|a| a.trim().parse().ok())
        .collect();
    Some(
        forwarded
            .into_iter()
            .rev()
            .find(|ip| !is_trusted(ip))
            .unwrap_or(peer),
    )
}

/// A query string whose percent-decoded names or values are not UTF-8 is refused for every
/// route, before any handler sees it: decoders replace such bytes with U+FFFD, and a `path` of
/// `a%FFb` would otherwise become a different key (or path lock) than the one sent.
fn query_not_utf8(query: &str) -> Option<ApiError> {
    for pair in query.split('&') {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let Ok(name) = percent_decode_str(name).decode_utf8() else {
            return Some(ApiError::invalid_request(
                "a query parameter name is not valid UTF-8 once percent-decoded",
            ));
        };
        if percent_decode_str(value).decode_utf8().is_err() {
            let code = match name.as_ref() {
                "path" | "paths" | "key" | "prefix" => Code::InvalidPath,
                _ => Code::InvalidRequest,
            };
            return Some(ApiError::new(
                code,
                format!("query parameter `{name}` is not valid UTF-8 once percent-decoded"),
            ));
        }
    }
    None
}

/// An answer's body, holding the request's unread payload until the answer is sent (see
/// `with_context`).
pub struct HoldUnread {
    body: BoxBody,
    _payload: SharedPayload,
}

impl MessageBody for HoldUnread {
    type Error = <BoxBody as MessageBody>::Error;

    fn size(&self) -> actix_web::body::BodySize {
        self.body.size()
    }

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<actix_web::web::Bytes, Self::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_next(cx)
    }
}

/// The request's payload, shared between the stream the handlers read and the middleware.
#[derive(Clone)]
struct SharedPayload(Rc<RefCell<Payload>>);

impl futures::Stream for SharedPayload {
    type Item = Result<actix_web::web::Bytes, PayloadError>;

    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        std::pin::Pin::new(&mut *self.0.borrow_mut()).poll_next(cx)
    }
}

/// Puts the [`BodyPace`] in app data around a request's body, when it has one (a bodiless GET,
/// such as every delivery, is left alone); the flag that says whether it was read to its end,
/// and the payload itself.
fn pace_body(req: &mut ServiceRequest) -> Option<(BodyEnd, SharedPayload)> {
    let headers = req.headers();
    let has_body = headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .is_some_and(|v| v.as_bytes() != b"0");
    if !has_body {
        return None;
    }
    let pace = req.app_data::<BodyPace>().copied()?;
    let payload = SharedPayload(Rc::new(RefCell::new(req.take_payload())));
    let body = IdleBody::new(payload.clone(), pace);
    let end = body.end();
    let paced: std::pin::Pin<
        Box<dyn futures::Stream<Item = Result<actix_web::web::Bytes, PayloadError>>>,
    > = Box::pin(body);
    req.set_payload(Payload::from(paced));
    Some((end, payload))
}

/// The method as a metrics label: a standard method by name, any extension method `other`, so
/// that clients choosing method names cannot grow the label sets without bound.
fn method_label(method: &Method) -> &'static str {
    match method.as_str() {
        "GET" => "GET",
        "HEAD" => "HEAD",
        "POST" => "POST",
        "PUT" => "PUT",
        "PATCH" => "PATCH",
        "DELETE" => "DELETE",
        "OPTIONS" => "OPTIONS",
        "TRACE" => "TRACE",
        "CONNECT" => "CONNECT",
        _ => "other",
    }
}

/// One label set's request counter and latency histogram.
struct RequestMetrics {
    count: metrics::Counter,
    latency: metrics::Histogram,
}

/// Label set → handles, per worker thread, keyed by route and then scanned by host, method and
/// status (a handful per route): building the four labels and looking them up in the recorder's
/// registry on every request cost more than the cached lookup (measured with callgrind; see
/// docs/benchmarks.md).
type MetricsCache = HashMap<String, Vec<(&'static str, &'static str, u16, RequestMetrics)>>;

thread_local! {
    static REQUEST_METRICS: RefCell<MetricsCache> = RefCell::new(HashMap::new());
}

fn record_request(host: &'static str, route: &str, method: &'static str, status: u16, secs: f64) {
    REQUEST_METRICS.with_borrow_mut(|cache| {
        if !cache.contains_key(route) {
            cache.insert(route.to_owned(), Vec::new());
        }
        let Some(sets) = cache.get_mut(route) else {
            return;
        };
        let found = sets
            .iter()
            .position(|(h, m, s, _)| *h == host && *m == method && *s == status);
        let index = found.unwrap_or_else(|| {
            let labels = [
                ("host", host.to_owned()),
                ("route", route.to_owned()),
                ("method", method.to_owned()),
                ("status", status.to_string()),
            ];
            let handles = RequestMetrics {
                count: metrics::counter!("http_requests_total", &labels),
                latency: metrics::histogram!("http_request_duration_seconds", &labels),
            };
            sets.push((host, method, status, handles));
            sets.len() - 1
        });
        let handles = &sets[index].3;
        handles.count.increment(1);
        handles.latency.record(secs);
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn per_address_limits_count_ipv6_by_its_64() {
        use super::address_bucket;
        let ip = |s: &str| s.parse::<std::net::IpAddr>().unwrap();
        assert_eq!(address_bucket(ip("203.0.113.7")), "203.0.113.7");
        assert_eq!(address_bucket(ip("::ffff:203.0.113.7")), "203.0.113.7");
        assert_eq!(
            address_bucket(ip("2001:db8:1:2:aaaa::1")),
            address_bucket(ip("2001:db8:1:2:ffff:ffff:ffff:ffff")),
            "one /64"
        );
        assert_eq!(address_bucket(ip("2001:db8:1:2::1")), "2001:db8:1:2::/64");
        assert_ne!(
            address_bucket(ip("2001:db8:1:2::1")),
            address_bucket(ip("2001:db8:1:3::1")),
            "the next /64"
        );
    }

    use super::*;

    #[test]
    fn queries_must_decode_to_utf8() {
        for ok in [
            "",
            "path=a/b",
            "path=%C3%A9t%C3%A9&limit=5",
            "path=a+b",
            "flag",
            "a=%zz",
            "&&=",
        ] {
            assert!(query_not_utf8(ok).is_none(), "{ok}");
        }
        let code = |q: &str| query_not_utf8(q).map(|e| e.code);
        assert_eq!(code("path=a%FFb"), Some(Code::InvalidPath));
        assert_eq!(code("limit=5&path=%C3"), Some(Code::InvalidPath));
        assert_eq!(code("continuationToken=%80"), Some(Code::InvalidRequest));
        assert_eq!(code("%FF=1"), Some(Code::InvalidRequest));
        let message = query_not_utf8("maxFiles=%FE").unwrap().message;
        assert!(message.contains("`maxFiles`"), "{message}");
    }

    #[test]
    fn the_client_address_is_the_peer_unless_a_trusted_proxy_forwarded_it() {
        use actix_web::test::TestRequest;
        let proxies: Vec<ipnet::IpNet> = vec!["10.0.0.0/8".parse().unwrap()];
        let ip = |peer: &str, forwarded: Option<&str>| {
            let mut req = TestRequest::default().peer_addr(peer.parse().unwrap());
            if let Some(f) = forwarded {
                req = req.insert_header(("X-Forwarded-For", f));
            }
            client_ip(&req.to_http_request(), &proxies).map(|a| a.to_string())
        };
        // an untrusted peer's own claims are ignored
        assert_eq!(
            ip("203.0.113.9:5000", Some("1.2.3.4")).as_deref(),
            Some("203.0.113.9")
        );
        // through a trusted proxy: the rightmost address the proxies did not add
        assert_eq!(
            ip("10.0.0.7:5000", Some("1.2.3.4")).as_deref(),
            Some("1.2.3.4")
        );
        assert_eq!(
            ip("10.0.0.7:5000", Some("6.6.6.6, 198.51.100.2, 10.0.0.9")).as_deref(),
            Some("198.51.100.2"),
            "a client cannot pick its address by sending the header itself"
        );
        // a trusted peer that forwarded nothing usable is the address
        assert_eq!(ip("10.0.0.7:5000", None).as_deref(), Some("10.0.0.7"));
        assert_eq!(
            ip("10.0.0.7:5000", Some("garbage")).as_deref(),
            Some("10.0.0.7")
        );
    }

    #[test]
    fn request_ids_are_req_and_a_lowercase_ulid() {
        let a = new_request_id();
        let b = new_request_id();
        assert_ne!(a, b);
        for id in [&a, &b] {
            let ulid = id.strip_prefix("req_").expect("prefix");
            assert_eq!(ulid.len(), ulid::ULID_LEN, "{id}");
            assert!(
                ulid.bytes()
                    .all(|c| c.is_ascii_digit() || c.is_ascii_lowercase()),
                "{id}"
            );
            assert!(ulid::Ulid::from_string(ulid).is_ok(), "{id}");
        }
    }
}
