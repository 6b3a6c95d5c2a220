//! Request bodies read whole, with the limit on the bytes the handler will see.
//!
//! Both hosts read JSON bodies through [`read_limited`] (and the API host's routes through the
//! [`Json`] extractor built on it) rather than actix-web's `Json`/`Decompress`: `Content-Encoding`
//! other than identity, gzip or deflate is a 415 naming it (actix treated an unknown encoding as
//! identity, so a `br` body became a confusing 400), and a compressed body is inflated in small
//! steps, so a highly compressed body is refused within about half a KiB of input past the limit
//! instead of being inflated a whole received chunk at a time (up to ~1000× the chunk's size).
//!
//! Over 400 lines only with its unit tests (the code is about 240).

use actix_web::dev::Payload;
use actix_web::error::PayloadError;
use actix_web::http::header;
use actix_web::{mime, web, FromRequest, HttpMessage, HttpRequest};
use futures::future::LocalBoxFuture;
use futures::StreamExt;
use serde::de::DeserializeOwned;
use std::io::Write;

use crate::{ApiError, Code};

/// The largest body (after decoding) a host's JSON routes accept; app data read by [`Json`].
#[derive(Clone, Copy, Debug)]
pub struct BodyLimit(pub usize);

/// The 413 for a body over `limit` bytes (the limit counts decoded bytes).
pub fn too_large(limit: usize) -> ApiError {
    let human = if limit.is_multiple_of(1024 * 1024) {
        format!(" ({} MiB)", limit / (1024 * 1024))
    } else {
        String::new()
    };
    ApiError::new(
        Code::PayloadTooLarge,
        format!("request body is larger than the limit of {limit} bytes{human}"),
    )
}

/// Reads the whole body, decoding `Content-Encoding`, and refuses it (413) as soon as either the
/// bytes as sent or the decoded bytes pass `limit`; before reading when `Content-Length` does.
pub async fn read_limited<S, E>(
    req: &HttpRequest,
    mut payload: S,
    limit: usize,
) -> Result<Vec<u8>, ApiError>
where
    S: futures::Stream<Item = Result<web::Bytes, E>> + Unpin,
    E: Into<PayloadError>,
{
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    let mut body = Body::for_request(req, declared.unwrap_or(8192).min(limit), limit)?;
    if declared.is_some_and(|n| n > limit) {
        return Err(too_large(limit));
    }
    let mut received = 0;
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| payload_error(e.into()))?;
        received += chunk.len();
        if received > limit {
            return Err(too_large(limit));
        }
        body.feed(&chunk)?;
    }
    body.finish()
}

/// The answer to a request body that could not be read: 408 `REQUEST_TIMEOUT` when it stopped
/// arriving (see [`crate::idle`]), else 400.
pub fn payload_error(e: PayloadError) -> ApiError {
    match crate::idle::too_slow(&e) {
        Some(why) => ApiError::new(Code::RequestTimeout, why.to_string()),
        None => ApiError::invalid_request(format!("could not read the request body: {e}")),
    }
}

/// The request's `Content-Encoding`, trimmed and lowercased; `None` when absent, empty or
/// `identity` (the body is as sent).
pub fn content_encoding(headers: &header::HeaderMap) -> Option<String> {
    let value = headers.get(header::CONTENT_ENCODING)?;
    let value = String::from_utf8_lossy(value.as_bytes())
        .trim()
        .to_ascii_lowercase();
    (!value.is_empty() && value != "identity").then_some(value)
}

/// The body being read: kept as sent, or inflated.
enum Body {
    Plain(Vec<u8>),
    Compressed(Box<Inflate>),
}

impl Body {
    /// Chosen by `Content-Encoding` (415 for one we do not speak); `capacity` is for a plain body.
    fn for_request(req: &HttpRequest, capacity: usize, limit: usize) -> Result<Self, ApiError> {
        let Some(value) = content_encoding(req.headers()) else {
            return Ok(Body::Plain(Vec::with_capacity(capacity)));
        };
        let decoder = match value.as_str() {
            "gzip" | "x-gzip" => Decoder::Gzip(flate2::write::MultiGzDecoder::new(Vec::new())),
            "deflate" => Decoder::Deflate(flate2::write::ZlibDecoder::new(Vec::new())),
            _ => {
                return Err(ApiError::new(
                    Code::UnsupportedMediaType,
                    format!(
                        "Content-Encoding `{value}` is not supported; send the body as is, or with gzip or deflate"
                    ),
                ))
            }
        };
        Ok(Body::Compressed(Box::new(Inflate {
            decoder,
            encoding: value,
            limit,
        })))
    }

    fn feed(&mut self, chunk: &[u8]) -> Result<(), ApiError> {
        match self {
            Body::Plain(body) => {
                body.extend_from_slice(chunk);
                Ok(())
            }
            Body::Compressed(inflate) => inflate.feed(chunk),
        }
    }

    fn finish(self) -> Result<Vec<u8>, ApiError> {
        match self {
            Body::Plain(body) => Ok(body),
            Body::Compressed(inflate) => inflate.finish(),
        }
    }
}

enum Decoder {
    Gzip(flate2::write::MultiGzDecoder<Vec<u8>>),
    Deflate(flate2::write::ZlibDecoder<Vec<u8>>),
}

/// Inflates into at most `limit` bytes, fed in small slices so the output can pass the limit by
/// at most one slice's worth of inflation (~0.5 MiB at gzip's best ratio).
struct Inflate {
    decoder: Decoder,
    encoding: String,
    limit: usize,
}

impl Inflate {
    const SLICE: usize = 512;

    fn feed(&mut self, compressed: &[u8]) -> Result<(), ApiError> {
        for slice in compressed.chunks(Self::SLICE) {
            let inflated = match &mut self.decoder {
                Decoder::Gzip(d) => d.write_all(slice).map(|()| d.get_ref().len()),
                Decoder::Deflate(d) => d.write_all(slice).map(|()| d.get_ref().len()),
            };
            if inflated.map_err(|e| not_valid(&self.encoding, e))? > self.limit {
                return Err(too_large(self.limit));
            }
        }
        Ok(())
    }

    fn finish(self) -> Result<Vec<u8>, ApiError> {
        let body = match self.decoder {
            Decoder::Gzip(d) => d.finish(),
            Decoder::Deflate(d) => d.finish(),
        };
        let body = body.map_err(|e| not_valid(&self.encoding, e))?;
        if body.len() > self.limit {
            return Err(too_large(self.limit));
        }
        Ok(body)
    }
}

fn not_valid(encoding: &str, e: std::io::Error) -> ApiError {
    ApiError::invalid_request(format!(
        "the body is not valid {encoding} (Content-Encoding: {encoding}): {e}"
    ))
}

/// Whether the request says its body is JSON (`application/json`, any `*/json` or `*+json`).
pub fn is_json(req: &HttpRequest) -> bool {
    matches!(req.mime_type(), Ok(Some(m)) if m.subtype() == mime::JSON || m.suffix() == Some(mime::JSON))
}

/// A JSON body read through [`read_limited`] with the [`BodyLimit`] in app data (1 MiB without
/// one). Errors: 415 for another content type or encoding, 413 past the limit, 400 naming what
/// is wrong with the JSON.
pub struct Json<T>(pub T);

impl<T> Json<T> {
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> std::ops::Deref for Json<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// Limit used when a host registers no [`BodyLimit`].
const DEFAULT_LIMIT: usize = 1024 * 1024;

impl<T: DeserializeOwned + 'static> FromRequest for Json<T> {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let req = req.clone();
        let payload = payload.take();
        Box::pin(async move {
            if !is_json(&req) {
                return Err(ApiError::new(
                    Code::UnsupportedMediaType,
                    "Content-Type must be application/json",
                ));
            }
            let limit = req.app_data::<BodyLimit>().map_or(DEFAULT_LIMIT, |l| l.0);
            let body = read_limited(&req, payload, limit).await?;
            // the path names the field a type error is about (`levels`, `events[3].level`)
            let mut json = serde_json::Deserializer::from_slice(&body);
            let value = serde_path_to_error::deserialize(&mut json)
                .map_err(|e| ApiError::from_serde_json_at(&e.path().to_string(), e.inner()))?;
            // one JSON value and nothing after it but whitespace (`{…} xyz` is refused, as
            // ingestion refuses it)
            json.end()
                .map_err(|e| ApiError::invalid_request(format!("invalid JSON body: {e}")))?;
            Ok(Json(value))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;
    use futures::stream;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// Reads `body` sent in `chunk`-byte pieces with `encoding`.
    async fn read(
        encoding: Option<&str>,
        body: &[u8],
        chunk: usize,
        limit: usize,
    ) -> Result<Vec<u8>, ApiError> {
        let mut req = TestRequest::default();
        if let Some(e) = encoding {
            req = req.insert_header((header::CONTENT_ENCODING, e));
        }
        let req = req.to_http_request();
        let chunks: Vec<Result<web::Bytes, std::io::Error>> = body
            .chunks(chunk.max(1))
            .map(|c| Ok(web::Bytes::copy_from_slice(c)))
            .collect();
        read_limited(&req, stream::iter(chunks), limit).await
    }

    fn code(r: Result<Vec<u8>, ApiError>) -> Code {
        r.expect_err("expected an error").code
    }

    #[actix_web::test]
    async fn plain_bodies_are_limited_at_n() {
        let limit = 1000;
        for n in [0, 1, limit - 1, limit] {
            assert_eq!(
                read(None, &vec![b'a'; n], 64, limit).await.unwrap().len(),
                n
            );
        }
        assert_eq!(
            code(read(None, &vec![b'a'; limit + 1], 64, limit).await),
            Code::PayloadTooLarge
        );
        assert_eq!(
            read(Some("identity"), b"{}", 1, limit).await.unwrap(),
            b"{}".to_vec()
        );
    }

    #[actix_web::test]
    async fn compressed_bodies_are_limited_on_the_decoded_bytes() {
        let limit = 4096;
        for (name, encode) in [("gzip", gzip as fn(&[u8]) -> Vec<u8>), ("deflate", zlib)] {
            for n in [limit - 1, limit] {
                let plain = vec![b'x'; n];
                for chunk in [1, 7, 100_000] {
                    let got = read(Some(name), &encode(&plain), chunk, limit).await;
                    assert_eq!(got.unwrap(), plain, "{name}, {n} bytes, chunks of {chunk}");
                }
            }
            let over = encode(&vec![b'x'; limit + 1]);
            assert!(over.len() < limit);
            assert_eq!(
                code(read(Some(name), &over, 100_000, limit).await),
                Code::PayloadTooLarge
            );
        }
        // case and whitespace in the header, and the x-gzip alias
        for name in [" GZip ", "x-gzip"] {
            assert_eq!(
                read(Some(name), &gzip(b"{}"), 3, limit).await.unwrap(),
                b"{}"
            );
        }
    }

    #[actix_web::test]
    async fn a_compression_bomb_is_refused_without_being_inflated() {
        // 64 MiB of zeros is ~64 KiB of gzip, sent as one chunk; inflating stops near the limit
        let bomb = gzip(&vec![0u8; 64 * 1024 * 1024]);
        assert!(bomb.len() < 100 * 1024);
        let err = read(Some("gzip"), &bomb, bomb.len(), 1024 * 1024)
            .await
            .unwrap_err();
        assert_eq!(err.code, Code::PayloadTooLarge);
        assert!(
            err.message.contains("1048576 bytes (1 MiB)"),
            "{}",
            err.message
        );
        // and what was inflated before refusing stays within one slice's worth of the limit
        let mut inflate = Inflate {
            decoder: Decoder::Gzip(flate2::write::MultiGzDecoder::new(Vec::new())),
            encoding: "gzip".into(),
            limit: 1024 * 1024,
        };
        assert_eq!(inflate.feed(&bomb).unwrap_err().code, Code::PayloadTooLarge);
        let Decoder::Gzip(d) = &inflate.decoder else {
            unreachable!()
        };
        let inflated = d.get_ref().len();
        assert!(
            inflated <= 1024 * 1024 + 600 * 1024,
            "{inflated} bytes inflated"
        );
    }

    #[actix_web::test]
    async fn other_encodings_and_bad_streams_are_named() {
        for name in ["br", "zstd", "compress", "gzip, br"] {
            let err = read(Some(name), b"{}", 2, 100).await.unwrap_err();
            assert_eq!(err.code, Code::UnsupportedMediaType, "{name}");
            assert!(err.message.contains(name.trim()), "{}", err.message);
        }
        let err = read(Some("gzip"), b"{\"not\": \"gzip\"}", 4, 100)
            .await
            .unwrap_err();
        assert_eq!(err.code, Code::InvalidRequest);
        assert!(err.message.contains("not valid gzip"), "{}", err.message);
        let truncated = gzip(b"{\"a\": 1}");
        let err = read(Some("gzip"), &truncated[..truncated.len() - 4], 4, 100)
            .await
            .unwrap_err();
        assert_eq!(err.code, Code::InvalidRequest);
        let err = read(Some("deflate"), &gzip(b"{}"), 4, 100)
            .await
            .unwrap_err();
        assert!(err.message.contains("not valid deflate"), "{}", err.message);
    }

    #[actix_web::test]
    async fn a_declared_length_over_the_limit_is_refused_before_reading() {
        let req = TestRequest::default()
            .insert_header((header::CONTENT_LENGTH, "101"))
            .to_http_request();
        let never = stream::once(async {
            panic!("the body must not be read");
            #[allow(unreachable_code)]
            Ok::<_, std::io::Error>(web::Bytes::new())
        });
        let err = read_limited(&req, Box::pin(never), 100).await.unwrap_err();
        assert_eq!(err.code, Code::PayloadTooLarge);
    }

    #[actix_web::test]
    async fn a_body_of_the_wrong_shape_names_the_field() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Body {
            levels: Option<Vec<String>>,
            inner: Option<Inner>,
        }
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Inner {
            n: u8,
        }
        let message = |json: &'static str| async move {
            let (req, mut payload) = TestRequest::default()
                .insert_header((header::CONTENT_TYPE, "application/json"))
                .set_payload(json)
                .to_http_parts();
            match Json::<Body>::from_request(&req, &mut payload).await {
                Ok(_) => panic!("{json} was accepted"),
                Err(e) => e.message,
            }
        };
        assert_eq!(
            message(r#"{"levels":"info"}"#).await,
            "invalid JSON body at `levels`: invalid type: string \"info\", expected a sequence at line 1 column 16"
        );
        assert!(message(r#"{"inner":{"n":300}}"#)
            .await
            .starts_with("invalid JSON body at `inner.n`: "));
        // a body that is not JSON at all names no field
        let m = message("{nope").await;
        assert!(m.starts_with("invalid JSON body: "), "{m}");
    }

    #[test]
    fn json_content_types() {
        for (ct, ok) in [
            ("application/json", true),
            ("application/json; charset=utf-8", true),
            ("application/merge-patch+json", true),
            ("text/json", true),
            ("text/plain", false),
            ("application/x-www-form-urlencoded", false),
            ("jsonish", false),
        ] {
            let req = TestRequest::default()
                .insert_header((header::CONTENT_TYPE, ct))
                .to_http_request();
            assert_eq!(is_json(&req), ok, "{ct}");
        }
        assert!(!is_json(&TestRequest::default().to_http_request()));
    }
}
