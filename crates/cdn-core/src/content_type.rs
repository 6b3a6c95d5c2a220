//! The effective content type of an upload and the delivery policy for active content.
//!
//! Order: the type detected from the content's magic bytes when recognizable (binary formats via
//! `infer`, plus markup — HTML, SVG, XML — sniffed here because `infer` does not recognize text),
//! else the declared part type, else the type guessed from the file extension, else
//! `application/octet-stream`. A declared `application/octet-stream` counts as "no declaration",
//! so the extension can still refine it.

/// Bytes of the start of a file used for detection.
pub const SNIFF_LEN: usize = 8192;
pub const OCTET_STREAM: &str = "application/octet-stream";

/// Detects a type from the first bytes of the content.
pub fn sniff(head: &[u8]) -> Option<String> {
    if let Some(markup) = sniff_markup(head) {
        return Some(markup.to_owned());
    }
    infer::get(head).map(|kind| kind.mime_type().to_owned())
}

fn sniff_markup(head: &[u8]) -> Option<&'static str> {
    let mut s = head;
    if s.starts_with(&[0xEF, 0xBB, 0xBF]) {
        s = &s[3..];
    }
    let start = s.iter().position(|b| !b.is_ascii_whitespace())?;
    let s = &s[start..];
    let lower: Vec<u8> = s.iter().take(512).map(|b| b.to_ascii_lowercase()).collect();
    let has = |p: &[u8]| lower.starts_with(p);
    const HTML_TAGS: [&[u8]; 17] = [
        b"<!doctype html",
        b"<html",
        b"<head",
        b"<body",
        b"<script",
        b"<iframe",
        b"<h1",
        b"<div",
        b"<font",
        b"<table",
        b"<a ",
        b"<style",
        b"<title",
        b"<b>",
        b"<br",
        b"<p>",
        b"<!--",
    ];
    if HTML_TAGS.iter().any(|t| has(t)) {
        return Some("text/html");
    }
    if has(b"<svg") || (has(b"<?xml") && contains(&lower, b"<svg")) {
        return Some("image/svg+xml");
    }
    if has(b"<?xml") {
        return Some("text/xml");
    }
    None
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// A declared type worth using: parseable, and not the generic octet-stream.
fn useful_declared(declared: Option<&str>) -> Option<String> {
    let d = declared?.split(';').next()?.trim().to_ascii_lowercase();
    let (t, sub) = d.split_once('/')?;
    let token = |x: &str| {
        !x.is_empty()
            && x.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&^_.+-".contains(&b))
    };
    (token(t) && token(sub) && d != OCTET_STREAM).then_some(d)
}

/// The effective type of an upload.
pub fn effective(head: &[u8], declared: Option<&str>, file_name: Option<&str>) -> String {
    if let Some(t) = sniff(head) {
        return t;
    }
    if let Some(d) = useful_declared(declared) {
        return d;
    }
    if let Some(ext) = file_name.and_then(crate::path::extension) {
        if let Some(m) = mime_guess::from_ext(&ext).first() {
            return m.essence_str().to_owned();
        }
    }
    OCTET_STREAM.to_owned()
}

/// The extension for a generated file name of this type (`image/png` → `png`).
pub fn extension_for(mime: &str) -> Option<&'static str> {
    let essence = mime.split(';').next().unwrap_or("").trim();
    let preferred = match essence {
        "image/jpeg" => Some("jpg"),
        "text/plain" => Some("txt"),
        "audio/mpeg" => Some("mp3"),
        "audio/ogg" => Some("ogg"),
        "video/mp4" => Some("mp4"),
        // mime_guess lists `aaf` and `htm` first; an unknown blob is not an AAF file
        "application/octet-stream" => Some("bin"),
        "text/html" => Some("html"),
        _ => None,
    };
    preferred
        .or_else(|| mime_guess::get_mime_extensions_str(essence).and_then(|e| e.first().copied()))
}

/// Raster image types a browser only ever draws (no SVG: it can carry script).
const INLINE_IMAGES: [&str; 10] = [
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "image/avif",
    "image/apng",
    "image/bmp",
    "image/x-icon",
    "image/vnd.microsoft.icon",
    "image/tiff",
];

/// Whether delivery may let a browser render this type inline. An allow-list: raster images,
/// audio, video and plain text. Every other type (HTML, SVG, XML, every JavaScript spelling,
/// `message/rfc822`, Flash, PDF, JSON, types nobody has heard of) is served as an attachment with
/// a sandboxing CSP, so nothing active can ever run on the delivery origin, including types
/// invented after this list was written.
pub fn renders_inline(mime: &str) -> bool {
    let essence = mime
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let Some((kind, sub)) = essence.split_once('/') else {
        return false;
    };
    let token = !sub.is_empty()
        && sub
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$&^_.+-".contains(&b));
    if !token {
        return false;
    }
    match kind {
        "audio" | "video" => true,
        "image" => INLINE_IMAGES.contains(&essence.as_str()),
        "text" => sub == "plain",
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = &[
        0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, b'I', b'H', b'D', b'R',
    ];
    const WEBP: &[u8] = b"RIFF\x24\x00\x00\x00WEBPVP8 \x18\x00\x00\x00";
    const JPEG: &[u8] = &[0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, b'J', b'F', b'I', b'F', 0];
    const OGG: &[u8] = b"OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00";

    #[test]
    fn magic_bytes_win() {
        assert_eq!(
            effective(PNG, Some("image/jpeg"), Some("a.jpg")),
            "image/png"
        );
        assert_eq!(
            effective(WEBP, Some("image/png"), Some("image.png")),
            "image/webp"
        );
        assert_eq!(effective(JPEG, None, None), "image/jpeg");
        assert_eq!(
            effective(OGG, Some("application/octet-stream"), Some("v.bin")),
            "audio/ogg"
        );
    }

    #[test]
    fn markup_is_detected_whatever_is_declared() {
        assert_eq!(
            effective(b"<!DOCTYPE html><html>", Some("image/png"), Some("a.png")),
            "text/html"
        );
        assert_eq!(
            effective(b"\xEF\xBB\xBF  <html>", Some("image/png"), None),
            "text/html"
        );
        assert_eq!(
            effective(b"\n<script>alert(1)</script>", Some("image/png"), None),
            "text/html"
        );
        assert_eq!(
            effective(
                b"<svg xmlns='http://www.w3.org/2000/svg'/>",
                Some("image/png"),
                None
            ),
            "image/svg+xml"
        );
        assert_eq!(
            effective(b"<?xml version='1.0'?><svg/>", None, None),
            "image/svg+xml"
        );
        assert_eq!(
            effective(b"<?xml version='1.0'?><a/>", None, None),
            "text/xml"
        );
    }

    #[test]
    fn declared_then_extension_then_default() {
        assert_eq!(
            effective(b"hello", Some("text/plain; charset=utf-8"), Some("a.bin")),
            "text/plain"
        );
        assert_eq!(
            effective(b"hello", Some("application/octet-stream"), Some("a.txt")),
            "text/plain"
        );
        assert_eq!(effective(b"hello", None, Some("notes.txt")), "text/plain");
        assert_eq!(
            effective(b"{}", None, Some("data.json")),
            "application/json"
        );
        assert_eq!(effective(b"hello", None, Some("noext")), OCTET_STREAM);
        assert_eq!(effective(b"hello", Some("garbage"), None), OCTET_STREAM);
        assert_eq!(effective(b"hello", Some("text/"), None), OCTET_STREAM);
        assert_eq!(effective(b"", None, None), OCTET_STREAM);
        assert_eq!(effective(b"hello", Some("Image/PNG"), None), "image/png");
    }

    #[test]
    fn only_passive_types_render_inline() {
        for t in [
            "image/png",
            "image/jpeg",
            "image/webp",
            "image/gif",
            "IMAGE/PNG",
            "text/plain",
            "text/plain; charset=utf-8",
            "audio/ogg",
            "audio/mpeg",
            "video/mp4",
            "video/webm",
        ] {
            assert!(renders_inline(t), "{t}");
        }
        for t in [
            "text/html",
            "TEXT/HTML; charset=utf-8",
            "application/xhtml+xml",
            "image/svg+xml",
            "text/xml",
            "application/xml",
            "text/javascript",
            "application/javascript",
            "text/x-javascript",
            "application/x-ecmascript",
            "application/ecmascript",
            "text/ecmascript",
            "text/jscript",
            "text/livescript",
            "message/rfc822",
            "multipart/related",
            "application/x-shockwave-flash",
            "application/pdf",
            "application/wasm",
            "application/json",
            "text/css",
            "text/csv",
            "text/plain2",
            "image/x-made-up",
            "image/",
            "audio",
            "",
            "/",
            "audio/\u{0}x",
            "video/mp4 x",
            OCTET_STREAM,
        ] {
            assert!(!renders_inline(t), "{t}");
        }
    }

    #[test]
    fn extensions_for_types() {
        assert_eq!(extension_for("image/png"), Some("png"));
        assert_eq!(extension_for("image/jpeg"), Some("jpg"));
        assert_eq!(extension_for("image/webp"), Some("webp"));
        assert_eq!(extension_for("application/x-unknown-thing"), None);
        for (mime, ext) in [
            ("application/octet-stream", "bin"),
            ("application/json", "json"),
            ("application/pdf", "pdf"),
            ("application/zip", "zip"),
            ("image/gif", "gif"),
            ("image/avif", "avif"),
            ("audio/wav", "wav"),
            ("audio/webm", "weba"),
            ("video/webm", "webm"),
            ("text/csv", "csv"),
            ("text/html", "html"),
        ] {
            assert_eq!(extension_for(mime), Some(ext), "{mime}");
        }
    }
}
