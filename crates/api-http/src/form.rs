//! Streaming multipart reading for every upload route.
//!
//! Parts may come in any order. A file part streams straight into the object store at a fresh
//! location while its content digest (BLAKE3), size and first bytes (for type detection) are
//! computed; text parts
//! are small and kept. Staged bytes belong to a [`StageGuard`]: whatever is not explicitly kept
//! when the guard drops (error, rejected file, cancelled request) is deleted in the background,
//! so a failed upload never leaves a visible object or an orphan.
//!
//! Over 400 lines only with its unit and property tests (the reader is about 350).

use actix_multipart::Multipart;
use actix_web::error::PayloadError;
use actix_web::http::header::HeaderMap;
use actix_web::web;
use cdn_core::content_type::SNIFF_LEN;
use cdn_core::idempotency::Fingerprint;
use futures::{Stream, StreamExt};
use std::rc::Rc;
use stow_http::{ApiError, Code};

use crate::part_headers::{
    header_block_len, part_headers_overflow, HeaderBounded, HeaderBudget, MAX_PART_HEADER_BYTES,
};
use stow_objects::{ObjectPath, ObjectWriter, Objects};

/// Text parts larger than this are refused.
pub const MAX_FIELD_BYTES: usize = 64 * 1024;
/// More text parts than this are refused.
pub const MAX_FIELDS: usize = 200;
/// Text parts that hold one value: sent twice, the request is refused instead of one copy silently
/// winning (other text parts are ignored by every route).
const SINGLE_FIELDS: [&str; 4] = ["path", "filename", "metadata", "payload"];

#[derive(Debug, Clone, Copy)]
pub struct FormLimits {
    pub max_file_size: u64,
    pub max_files: usize,
    /// Single-file routes stop at the first oversize file (413); bulk routes drain it and report
    /// `FILE_TOO_LARGE` for that item only.
    pub fail_fast: bool,
    /// Dry mode hashes files without storing them (idempotent replays).
    pub store: bool,
}

#[derive(Debug)]
pub struct StagedFile {
    /// Form field name; repeated `files` parts are numbered `files[0]`, `files[1]`, ...
    pub field: String,
    pub file_name: Option<String>,
    pub declared: Option<String>,
    pub location: Option<ObjectPath>,
    pub size: u64,
    /// Hex BLAKE3 of the content (etag and idempotency fingerprint). BLAKE3 rather than SHA-256:
    /// hashing was a large share of a big upload's CPU with SHA-256 (docs/benchmarks.md); BLAKE3
    /// is faster and equally collision-resistant.
    pub digest: String,
    pub head: Vec<u8>,
    pub too_large: bool,
}

impl StagedFile {
    /// The content-derived entity tag.
    pub fn etag(&self) -> String {
        self.digest[..32].to_owned()
    }
}

pub struct Form {
    pub files: Vec<StagedFile>,
    pub fields: Vec<(String, String)>,
    pub fingerprint: Vec<u8>,
    pub guard: StageGuard,
}

impl Form {
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Deletes staged objects that were not kept.
pub struct StageGuard {
    objects: Objects,
    pending: Vec<ObjectPath>,
}

impl StageGuard {
    pub fn new(objects: Objects) -> Self {
        Self {
            objects,
            pending: Vec::new(),
        }
    }

    fn track(&mut self, loc: ObjectPath) {
        self.pending.push(loc);
    }

    /// Tracks bytes written outside [`read_form`] (Base64 uploads).
    pub fn track_external(&mut self, loc: ObjectPath) {
        self.track(loc);
    }

    /// The object at `loc` is now referenced by a committed row: keep it.
    pub fn keep(&mut self, loc: &ObjectPath) {
        self.pending.retain(|p| p != loc);
    }
}

impl Drop for StageGuard {
    fn drop(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let objects = self.objects.clone();
        let pending = std::mem::take(&mut self.pending);
        tokio::spawn(async move {
            for loc in pending {
                if let Err(e) = objects.delete(&loc).await {
                    tracing::warn!(error = %e, location = %loc, "removing staged upload failed; `stowctl gc` will");
                }
            }
        });
    }
}

fn part_headers_too_large() -> ApiError {
    ApiError::invalid_request(format!(
        "a multipart part's headers are larger than the limit of {MAX_PART_HEADER_BYTES} bytes"
    ))
}

/// The part's `filename`, with backslashes taken literally. Browsers send file names as the HTML
/// form-data encoding says (`"` as `%22`, a backslash as it is), but actix's
/// `Content-Disposition` parser reads `\` as an RFC 2616 quoted-pair escape, so
/// `C:\Users\me\shot.png` lost its separators; each backslash that does not escape a quote is
/// doubled before parsing, so it survives as itself and `last_segment` can cut the path off.
fn file_name(headers: &HeaderMap) -> Option<String> {
    let raw = headers.get(actix_web::http::header::CONTENT_DISPOSITION)?;
    let bytes = raw.as_bytes();
    let mut literal = Vec::with_capacity(bytes.len() + 8);
    for (i, &b) in bytes.iter().enumerate() {
        literal.push(b);
        if b == b'\\' && bytes.get(i + 1) != Some(&b'"') {
            literal.push(b'\\');
        }
    }
    let value = actix_web::http::header::HeaderValue::from_bytes(&literal).ok()?;
    actix_web::http::header::ContentDisposition::from_raw(&value)
        .ok()?
        .get_filename()
        .map(str::to_owned)
}

fn is_file_field(name: &str) -> bool {
    name == "file" || name == "files" || (name.starts_with("files[") && name.ends_with(']'))
}

fn multipart_error(e: actix_multipart::MultipartError) -> ApiError {
    use actix_multipart::MultipartError as M;
    match e {
        M::ContentTypeMissing
        | M::ContentTypeParse
        | M::ContentTypeIncompatible
        | M::BoundaryMissing => {
            ApiError::invalid_request("Content-Type must be multipart/form-data with a boundary")
        }
        M::Payload(p) => match part_headers_overflow(&p) {
            true => part_headers_too_large(),
            false => stow_http::body::payload_error(p),
        },
        other => ApiError::invalid_request(format!("malformed multipart body: {other}")),
    }
}

/// Uploads are not decoded: media is already compressed, and a stored object is the bytes sent.
/// A `Content-Encoding` other than identity would be parsed as a broken form (a misleading 400),
/// so it is a 415 naming the encoding.
fn check_identity_encoding(headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(value) = stow_http::body::content_encoding(headers) else {
        return Ok(());
    };
    Err(ApiError::new(
        Code::UnsupportedMediaType,
        format!(
            "Content-Encoding `{value}` is not supported for uploads; send the form uncompressed"
        ),
    ))
}

/// Reads a whole multipart form; see the module docs.
pub async fn read_form(
    headers: &HeaderMap,
    payload: impl Stream<Item = Result<web::Bytes, PayloadError>> + Unpin + 'static,
    objects: &Objects,
    org_id: &str,
    limits: FormLimits,
) -> Result<Form, ApiError> {
    check_identity_encoding(headers)?;
    let budget = Rc::new(HeaderBudget::default());
    let mut multipart = Multipart::new(headers, HeaderBounded::new(payload, Rc::clone(&budget)));
    let mut guard = StageGuard::new(objects.clone());
    let mut files = Vec::new();
    let mut fields = Vec::new();
    let mut fingerprint = Fingerprint::new();

    loop {
        budget.start_part();
        let Some(part) = multipart.next().await else {
            break;
        };
        budget.end_part();
        let mut part = part.map_err(multipart_error)?;
        if header_block_len(part.headers()) > MAX_PART_HEADER_BYTES {
            return Err(part_headers_too_large());
        }
        let name = part.name().unwrap_or("").to_owned();
        let file_name = file_name(part.headers());
        if file_name.is_some() || is_file_field(&name) {
            if files.len() >= limits.max_files {
                return Err(ApiError::new(
                    Code::TooManyFiles,
                    format!(
                        "too many files in one request; the limit is {}",
                        limits.max_files
                    ),
                ));
            }
            let field = if name == "files" || name.is_empty() {
                format!("files[{}]", files.len())
            } else {
                name
            };
            // `file` may repeat (upload URLs take several); a named part such as `files[0]` is
            // what a bulk payload item points at, so it must be unique
            if field != "file" && files.iter().any(|f: &StagedFile| f.field == field) {
                return Err(ApiError::invalid_request(format!(
                    "the file part `{field}` appears more than once"
                )));
            }
            let staged = read_file_part(
                &mut part, field, file_name, objects, org_id, limits, &mut guard,
            )
            .await?;
            fingerprint.file(
                &staged.field,
                staged.file_name.as_deref(),
                staged.declared.as_deref(),
                &staged.digest,
            );
            files.push(staged);
        } else {
            if SINGLE_FIELDS.contains(&name.as_str()) && fields.iter().any(|(n, _)| *n == name) {
                return Err(ApiError::invalid_request(format!(
                    "the form field `{name}` appears more than once"
                )));
            }
            if fields.len() >= MAX_FIELDS {
                return Err(ApiError::invalid_request(format!(
                    "too many form fields; the limit is {MAX_FIELDS}"
                )));
            }
            let value = read_field_part(&mut part, &name).await?;
            fingerprint.field(&name, &value);
            fields.push((name, value));
        }
    }
    Ok(Form {
        files,
        fields,
        fingerprint: fingerprint.finish(),
        guard,
    })
}

/// Streams one file part to a fresh staged location (when the route stores) while hashing it,
/// keeping its first bytes for type detection and enforcing the size limit.
async fn read_file_part(
    part: &mut actix_multipart::Field,
    field: String,
    file_name: Option<String>,
    objects: &Objects,
    org_id: &str,
    limits: FormLimits,
    guard: &mut StageGuard,
) -> Result<StagedFile, ApiError> {
    let declared = part.content_type().map(|m| m.essence_str().to_owned());
    let mut writer: Option<ObjectWriter> = limits.store.then(|| {
        let loc = Objects::fresh_location(org_id);
        guard.track(loc.clone());
        objects.writer(loc, declared.clone())
    });
    let location = writer.as_ref().map(|w| w.location().clone());
    let mut hasher = blake3::Hasher::new();
    let mut size = 0u64;
    let mut head = Vec::new();
    let mut too_large = false;
    while let Some(chunk) = part.next().await {
        let chunk = chunk.map_err(multipart_error)?;
        if too_large {
            continue; // drain the rest of an oversize file (bulk routes)
        }
        size += chunk.len() as u64;
        if size > limits.max_file_size {
            too_large = true;
            if let Some(w) = writer.take() {
                w.abort().await;
            }
            if limits.fail_fast {
                return Err(ApiError::new(
                    Code::FileTooLarge,
                    format!(
                        "file `{field}` is larger than the limit of {} bytes",
                        limits.max_file_size
                    ),
                ));
            }
            continue;
        }
        hasher.update(&chunk);
        if head.len() < SNIFF_LEN {
            let take = (SNIFF_LEN - head.len()).min(chunk.len());
            head.extend_from_slice(&chunk[..take]);
            // record the detected type with the stored object (S3 keeps it)
            if let Some(w) = writer.as_mut() {
                w.set_content_type(Some(cdn_core::content_type::effective(
                    &head,
                    declared.as_deref(),
                    file_name.as_deref(),
                )));
            }
        }
        if let Some(w) = writer.as_mut() {
            w.write(chunk).await?;
        }
    }
    if let Some(mut w) = writer.take() {
        if head.is_empty() {
            w.set_content_type(Some(cdn_core::content_type::effective(
                &head,
                declared.as_deref(),
                file_name.as_deref(),
            )));
        }
        w.finish().await?;
    }
    let digest = hasher.finalize().to_hex().to_string();
    Ok(StagedFile {
        field,
        file_name,
        declared,
        location: if too_large { None } else { location },
        size,
        digest,
        head,
        too_large,
    })
}

/// Reads one text field, at most `MAX_FIELD_BYTES` of UTF-8.
async fn read_field_part(
    part: &mut actix_multipart::Field,
    name: &str,
) -> Result<String, ApiError> {
    let mut value = Vec::new();
    while let Some(chunk) = part.next().await {
        let chunk = chunk.map_err(multipart_error)?;
        if value.len() + chunk.len() > MAX_FIELD_BYTES {
            return Err(ApiError::new(
                Code::PayloadTooLarge,
                format!("form field `{name}` is larger than {MAX_FIELD_BYTES} bytes"),
            ));
        }
        value.extend_from_slice(&chunk);
    }
    String::from_utf8(value)
        .map_err(|_| ApiError::invalid_request(format!("form field `{name}` is not valid UTF-8")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::header::{HeaderValue, CONTENT_DISPOSITION, CONTENT_TYPE};
    use proptest::prelude::*;

    fn disposition(raw: &[u8]) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Ok(v) = HeaderValue::from_bytes(raw) {
            h.insert(CONTENT_DISPOSITION, v);
        }
        h
    }

    const LIMITS: FormLimits = FormLimits {
        max_file_size: 1 << 20,
        max_files: 5,
        fail_fast: true,
        store: true,
    };

    /// What a test looks at in a read form: each file's size and digest, and the `path` field.
    type Read = (Vec<(u64, String)>, Option<String>);

    /// Reads `body` cut at `cuts` with the memory store (the form is dropped inside the runtime:
    /// its stage guard cleans up there).
    fn read(body: &[u8], cuts: &[usize]) -> Result<Read, ApiError> {
        let mut pieces = Vec::new();
        let mut at = 0;
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (body.len() + 1)).collect();
        cuts.sort_unstable();
        for c in cuts.into_iter().chain([body.len()]) {
            pieces.push(Ok(web::Bytes::copy_from_slice(&body[at..c.max(at)])));
            at = c.max(at);
        }
        let mut headers = HeaderMap::new();
        headers.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("multipart/form-data; boundary=XyZ"),
        );
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let form = read_form(
                &headers,
                futures::stream::iter(pieces),
                &Objects::memory(),
                "org_1",
                LIMITS,
            )
            .await?;
            let files = form
                .files
                .iter()
                .map(|f| (f.size, f.digest.clone()))
                .collect();
            Ok((files, form.field("path").map(str::to_owned)))
        })
    }

    fn form_body(file_name: &str, pad: usize, content: &[u8], path: &str) -> Vec<u8> {
        let mut b = format!(
            "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{file_name}\"\r\nX-Pad: {}\r\n\r\n",
            "p".repeat(pad)
        )
        .into_bytes();
        b.extend_from_slice(content);
        b.extend_from_slice(
            format!("\r\n--XyZ\r\nContent-Disposition: form-data; name=\"path\"\r\n\r\n{path}\r\n--XyZ--\r\n").as_bytes(),
        );
        b
    }

    #[test]
    fn backslashes_in_file_names_are_literal() {
        let name = |raw: &str| file_name(&disposition(raw.as_bytes()));
        assert_eq!(
            name(r#"form-data; name="file"; filename="C:\Users\me\shot.png""#).as_deref(),
            Some(r"C:\Users\me\shot.png")
        );
        assert_eq!(
            name(r#"form-data; name="file"; filename="say \"hi\".txt""#).as_deref(),
            Some(r#"say "hi".txt"#)
        );
        assert_eq!(name(r#"form-data; name="file""#), None);
    }

    proptest! {
        /// Any header value: an answer, never a panic; a quoted name without quotes or control
        /// characters comes back exactly, backslashes included (but one right before the
        /// closing quote, which escapes it as in any quoted-string).
        #[test]
        fn file_names_from_any_header(raw in prop::collection::vec(any::<u8>(), 0..200), quoted in "[^\"\\p{Cc}]{0,39}[^\"\\\\\\p{Cc}]") {
            let _ = file_name(&disposition(&raw));
            let header = format!("form-data; name=\"file\"; filename=\"{quoted}\"");
            if HeaderValue::from_str(&header).is_ok() {
                prop_assert_eq!(file_name(&disposition(header.as_bytes())), Some(quoted));
            }
        }

        /// A form cut into any pieces reads the same; a part's headers over the limit are
        /// refused however they arrive.
        #[test]
        fn forms_read_the_same_in_any_pieces(
            content in prop::collection::vec(any::<u8>(), 0..3000),
            pad in 0usize..9000,
            cuts in prop::collection::vec(any::<usize>(), 0..8),
        ) {
            let body = form_body("a.bin", pad, &content, "shots");
            let header_len = "content-disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n".len()
                + "x-pad: \r\n".len() + pad;
            match read(&body, &cuts) {
                Ok((files, path)) => {
                    prop_assert!(header_len <= MAX_PART_HEADER_BYTES, "{header_len}");
                    prop_assert_eq!(files, vec![(content.len() as u64, blake3::hash(&content).to_hex().to_string())]);
                    prop_assert_eq!(path.as_deref(), Some("shots"));
                }
                Err(e) => {
                    prop_assert!(header_len > MAX_PART_HEADER_BYTES, "{header_len}: {e}");
                    prop_assert!(e.message.contains("8192"), "{e}");
                }
            }
        }

        /// Any bytes as a form body: an answer, never a panic.
        #[test]
        fn any_body_is_answered(body in prop::collection::vec(any::<u8>(), 0..2000), cuts in prop::collection::vec(any::<usize>(), 0..4)) {
            let _ = read(&body, &cuts);
        }
    }
}
