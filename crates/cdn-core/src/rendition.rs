//! Renditions: an image object delivered resized (`/cdn/<workspace>/<key>?w=320&h=180&fit=cover`),
//! for thumbnails and galleries. This module holds the rules — which requests are renditions,
//! their bounds, the size and format they give, and the name their cached bytes are kept under;
//! decoding and resizing are an adapter's (`stow-images`).

/// The longest side a rendition may ask for, in pixels.
pub const MAX_SIDE: u32 = 2048;
/// The most pixels an original may have to be rendered (checked from its header, before
/// decoding: a "decompression bomb" of a few kilobytes that claims 100,000 × 100,000 pixels is
/// refused without allocating anything).
pub const MAX_SOURCE_PIXELS: u64 = 40_000_000;
/// The largest original rendered, in bytes (it is read whole to be decoded).
pub const MAX_SOURCE_BYTES: u64 = 50 * 1024 * 1024;
/// The most memory one rendition may take to make ([`render_cost`]); a picture that would need
/// more is refused before it is decoded.
pub const MAX_RENDER_BYTES: u64 = 384 * 1024 * 1024;
/// Renditions kept per original at most: every distinct box, fit and format asked for is one.
pub const MAX_KEPT_PER_ORIGINAL: usize = 24;
/// A kept rendition younger than this is never evicted to make room for a new one, so new sizes
/// of one original are made at most [`MAX_KEPT_PER_ORIGINAL`] an hour once it has that many.
pub const EVICTABLE_AFTER: chrono::Duration = chrono::Duration::hours(1);

/// The memory making a rendition of a `width` × `height` picture takes: the decoded picture at
/// `bytes_per_pixel` (its decoder's color type: up to 8 for RGBA of 16 bits) and its 8-bit
/// working copy (4 bytes a pixel) held together while it is converted; the resized picture and
/// its encoding are smaller than the box (at most 2048 × 2048 × 4 × 2).
pub fn render_cost(width: u32, height: u32, bytes_per_pixel: u8) -> u64 {
    let pixels = u64::from(width) * u64::from(height);
    let working = u64::from(MAX_SIDE) * u64::from(MAX_SIDE) * 4 * 2;
    pixels * (u64::from(bytes_per_pixel) + 4) + working.min(pixels * 8)
}

/// What to do about keeping a new rendition of an original that has `kept` renditions (their
/// names and when each was made).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Keep {
    /// Make it and keep it: there is room.
    Room,
    /// Make it and keep it after deleting this one, the oldest, made long enough ago.
    Evict(String),
    /// Refused: every kept one is younger than [`EVICTABLE_AFTER`]; a new one is possible at
    /// this time.
    Full {
        until: chrono::DateTime<chrono::Utc>,
    },
}

/// The keeping rule: at most [`MAX_KEPT_PER_ORIGINAL`] renditions per original; past that the
/// oldest gives way when it is at least [`EVICTABLE_AFTER`] old, else the new one is refused.
pub fn keep(
    kept: &[(String, chrono::DateTime<chrono::Utc>)],
    now: chrono::DateTime<chrono::Utc>,
) -> Keep {
    if kept.len() < MAX_KEPT_PER_ORIGINAL {
        return Keep::Room;
    }
    let Some((name, made)) = kept.iter().min_by_key(|(name, made)| (*made, name.clone())) else {
        return Keep::Room;
    };
    if now - *made >= EVICTABLE_AFTER {
        Keep::Evict(name.clone())
    } else {
        Keep::Full {
            until: *made + EVICTABLE_AFTER,
        }
    }
}

/// How the picture fills the box of `w` × `h`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// The whole picture, as large as fits inside the box (the default).
    Contain,
    /// The box filled exactly, the picture cropped around its centre (needs `w` and `h`).
    Cover,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Jpeg,
    Png,
    Webp,
}

impl Format {
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Jpeg => "image/jpeg",
            Format::Png => "image/png",
            Format::Webp => "image/webp",
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            Format::Jpeg => "jpg",
            Format::Png => "png",
            Format::Webp => "webp",
        }
    }
}

/// The query parameters of a rendition, as sent.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
pub struct RenditionParams {
    pub w: Option<String>,
    pub h: Option<String>,
    pub fit: Option<String>,
    pub format: Option<String>,
}

impl RenditionParams {
    /// Whether the request asks for a rendition at all (any of the four parameters).
    pub fn asked(&self) -> bool {
        self.w.is_some() || self.h.is_some() || self.fit.is_some() || self.format.is_some()
    }
}

/// A valid rendition request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rendition {
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub fit: Fit,
    /// `None`: the original's own format (PNG for a GIF).
    pub format: Option<Format>,
}

fn side(name: &str, v: &Option<String>) -> Result<Option<u32>, String> {
    v.as_deref()
        .map(|text| {
            text.parse::<u32>()
                .ok()
                .filter(|n| (1..=MAX_SIDE).contains(n))
                .ok_or_else(|| {
                    format!("`{name}` must be a whole number of pixels from 1 to {MAX_SIDE} (got {text:?})")
                })
        })
        .transpose()
}

/// The rendition `p` asks for; the message names the parameter that is wrong.
pub fn validate(p: &RenditionParams) -> Result<Rendition, String> {
    let width = side("w", &p.w)?;
    let height = side("h", &p.h)?;
    let fit = match p.fit.as_deref() {
        None | Some("contain") => Fit::Contain,
        Some("cover") => Fit::Cover,
        Some(other) => {
            return Err(format!(
                "`fit` must be `contain` or `cover` (got {other:?})"
            ))
        }
    };
    let format = match p.format.as_deref() {
        None => None,
        Some("jpeg" | "jpg") => Some(Format::Jpeg),
        Some("png") => Some(Format::Png),
        Some("webp") => Some(Format::Webp),
        Some(other) => {
            return Err(format!(
                "`format` must be `webp`, `jpeg` or `png` (got {other:?})"
            ))
        }
    };
    if width.is_none() && height.is_none() {
        return Err("a rendition needs `w`, `h` or both (pixels, at most 2048)".into());
    }
    if fit == Fit::Cover && (width.is_none() || height.is_none()) {
        return Err("`fit=cover` needs both `w` and `h`".into());
    }
    Ok(Rendition {
        width,
        height,
        fit,
        format,
    })
}

/// The format of the original's bytes, when renditions are made of it.
pub fn source_format(content_type: &str) -> Option<Format> {
    match content_type.split(';').next().unwrap_or("").trim() {
        "image/jpeg" => Some(Format::Jpeg),
        "image/png" | "image/gif" => Some(Format::Png),
        "image/webp" => Some(Format::Webp),
        _ => None,
    }
}

impl Rendition {
    /// The format given for an original of `content_type`, or `None` when renditions are not
    /// made of it (not a PNG, JPEG, WebP or GIF).
    pub fn output(&self, content_type: &str) -> Option<Format> {
        let source = source_format(content_type)?;
        Some(self.format.unwrap_or(source))
    }

    /// The size of the rendition of a `w` × `h` picture: inside the box (`Contain`) or the box
    /// (`Cover`), never larger than the picture (a box larger than the picture gives the picture
    /// at its size, or for `Cover` the largest crop of the box's shape).
    pub fn size_for(&self, w: u32, h: u32) -> (u32, u32) {
        let (w, h) = (w.max(1), h.max(1));
        let box_w = self.width.unwrap_or(u32::MAX).min(w) as f64;
        let box_h = self.height.unwrap_or(u32::MAX).min(h) as f64;
        let scaled = |x: f64| (x.round() as u32).max(1);
        match self.fit {
            Fit::Contain => {
                let scale = (box_w / w as f64).min(box_h / h as f64).min(1.0);
                (scaled(w as f64 * scale), scaled(h as f64 * scale))
            }
            Fit::Cover => {
                let (bw, bh) = (
                    self.width.unwrap_or(w) as f64,
                    self.height.unwrap_or(h) as f64,
                );
                // the box's shape, no larger than the picture
                let shrink = (w as f64 / bw).min(h as f64 / bh).min(1.0);
                (scaled(bw * shrink), scaled(bh * shrink))
            }
        }
    }

    /// Where the renditions of the original at `storage_path` are kept (the folder of
    /// [`Rendition::cache_path`]).
    pub fn kept_under(storage_path: &str) -> String {
        format!("renditions/{storage_path}/")
    }

    /// The name its bytes are cached under, beside the original's storage location (a
    /// replaced original has a new location, so new renditions).
    pub fn cache_path(&self, storage_path: &str, format: Format) -> String {
        let side = |v: Option<u32>| v.map_or_else(|| "auto".to_owned(), |n| n.to_string());
        let fit = match self.fit {
            Fit::Contain => "contain",
            Fit::Cover => "cover",
        };
        format!(
            "{}{}x{}-{fit}.{}",
            Self::kept_under(storage_path),
            side(self.width),
            side(self.height),
            format.extension()
        )
    }

    /// The entity tag of the rendition of an original whose tag is `etag`.
    pub fn etag(&self, etag: &str, format: Format) -> String {
        let side = |v: Option<u32>| v.map_or(0, |n| n);
        let fit = match self.fit {
            Fit::Contain => "n",
            Fit::Cover => "c",
        };
        format!(
            "{etag}-r{}x{}{fit}{}",
            side(self.width),
            side(self.height),
            format.extension()
        )
    }
}

#[cfg(test)]
mod keep_tests {
    use super::*;
    use chrono::{Duration, TimeZone, Utc};

    fn kept(n: usize, made: chrono::DateTime<Utc>) -> Vec<(String, chrono::DateTime<Utc>)> {
        (0..n)
            .map(|i| (format!("r{i:02}"), made + Duration::seconds(i as i64)))
            .collect()
    }

    #[test]
    fn renditions_are_kept_up_to_the_limit_then_the_oldest_gives_way_after_an_hour() {
        let t0 = Utc.with_ymd_and_hms(2026, 11, 29, 12, 0, 0).unwrap();
        let now = t0 + Duration::minutes(10);
        assert_eq!(keep(&[], now), Keep::Room);
        assert_eq!(keep(&kept(MAX_KEPT_PER_ORIGINAL - 1, t0), now), Keep::Room);
        // at the limit, all younger than an hour: refused until the oldest is an hour old
        assert_eq!(
            keep(&kept(MAX_KEPT_PER_ORIGINAL, t0), now),
            Keep::Full {
                until: t0 + EVICTABLE_AFTER
            }
        );
        assert_eq!(
            keep(&kept(MAX_KEPT_PER_ORIGINAL + 1, t0), now),
            Keep::Full {
                until: t0 + EVICTABLE_AFTER
            }
        );
        // the oldest at exactly an hour gives way; a second earlier it does not
        let full = kept(MAX_KEPT_PER_ORIGINAL, t0);
        assert_eq!(keep(&full, t0 + EVICTABLE_AFTER), Keep::Evict("r00".into()));
        assert!(matches!(
            keep(&full, t0 + EVICTABLE_AFTER - Duration::seconds(1)),
            Keep::Full { .. }
        ));
    }

    #[test]
    fn the_cost_of_a_rendition_counts_the_decoded_picture_and_its_working_copy() {
        // a 12 MP photo decoded as RGB: 3 + 4 bytes a pixel, and the resize buffers
        assert_eq!(render_cost(4000, 3000, 3), 12_000_000 * 7 + 2048 * 2048 * 8);
        // 16-bit RGBA of 40 MP is far past what one rendition may take
        assert!(render_cost(8000, 5000, 8) > MAX_RENDER_BYTES);
        // a tiny picture: its buffers, not a 2048-square's
        assert_eq!(render_cost(10, 10, 4), 100 * 8 + 100 * 8);
    }

    #[test]
    fn kept_renditions_live_under_their_originals_location() {
        let r = validate(&RenditionParams {
            w: Some("320".into()),
            ..RenditionParams::default()
        })
        .unwrap();
        let path = r.cache_path("org_1/01abc", Format::Webp);
        assert!(
            path.starts_with(&Rendition::kept_under("org_1/01abc")),
            "{path}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(
        w: Option<&str>,
        h: Option<&str>,
        fit: Option<&str>,
        format: Option<&str>,
    ) -> RenditionParams {
        RenditionParams {
            w: w.map(Into::into),
            h: h.map(Into::into),
            fit: fit.map(Into::into),
            format: format.map(Into::into),
        }
    }

    #[test]
    fn sides_are_bounded_at_one_and_2048() {
        for (w, ok) in [
            ("0", false),
            ("1", true),
            ("2047", true),
            ("2048", true),
            ("2049", false),
            ("-1", false),
            ("1.5", false),
            ("", false),
            ("１", false),
        ] {
            let r = validate(&params(Some(w), None, None, None));
            assert_eq!(r.is_ok(), ok, "{w:?}: {r:?}");
            if !ok {
                assert!(r
                    .unwrap_err()
                    .contains("`w` must be a whole number of pixels from 1 to 2048"));
            }
        }
        assert!(validate(&params(None, Some("3000"), None, None))
            .unwrap_err()
            .contains("`h`"));
    }

    #[test]
    fn every_parameter_is_checked_and_named() {
        assert!(!RenditionParams::default().asked());
        assert!(params(None, None, None, Some("png")).asked());
        assert!(validate(&params(None, None, None, Some("png")))
            .unwrap_err()
            .contains("needs `w`, `h` or both"));
        assert!(validate(&params(Some("10"), None, Some("cover"), None))
            .unwrap_err()
            .contains("`fit=cover` needs both"));
        assert!(validate(&params(Some("10"), None, Some("fill"), None))
            .unwrap_err()
            .contains("`fit` must be"));
        assert!(validate(&params(Some("10"), None, None, Some("gif")))
            .unwrap_err()
            .contains("`format` must be"));
        let r = validate(&params(Some("10"), Some("20"), Some("cover"), Some("jpg"))).unwrap();
        assert_eq!(
            (r.width, r.height, r.fit, r.format),
            (Some(10), Some(20), Fit::Cover, Some(Format::Jpeg))
        );
    }

    #[test]
    fn the_output_keeps_the_originals_format_unless_asked_and_only_images_render() {
        let r = validate(&params(Some("10"), None, None, None)).unwrap();
        assert_eq!(r.output("image/jpeg"), Some(Format::Jpeg));
        assert_eq!(r.output("image/gif"), Some(Format::Png));
        assert_eq!(r.output("image/webp; charset=x"), Some(Format::Webp));
        assert_eq!(
            r.output("image/svg+xml"),
            None,
            "no vector or script-carrying formats"
        );
        assert_eq!(r.output("text/plain"), None);
        let webp = validate(&params(Some("10"), None, None, Some("webp"))).unwrap();
        assert_eq!(webp.output("image/png"), Some(Format::Webp));
    }

    #[test]
    fn sizes_fit_the_box_and_never_enlarge() {
        let r = |w, h, fit| validate(&params(w, h, fit, None)).unwrap();
        // a 1920×1080 screenshot
        assert_eq!(r(Some("320"), None, None).size_for(1920, 1080), (320, 180));
        assert_eq!(r(None, Some("180"), None).size_for(1920, 1080), (320, 180));
        assert_eq!(
            r(Some("320"), Some("320"), None).size_for(1920, 1080),
            (320, 180)
        );
        assert_eq!(
            r(Some("320"), Some("320"), Some("cover")).size_for(1920, 1080),
            (320, 320)
        );
        // larger than the picture: the picture's size, or the box's shape at most as large
        assert_eq!(r(Some("2048"), None, None).size_for(100, 50), (100, 50));
        assert_eq!(
            r(Some("400"), Some("400"), Some("cover")).size_for(100, 50),
            (50, 50)
        );
        // never zero
        assert_eq!(r(Some("1"), None, None).size_for(1000, 1), (1, 1));
    }

    #[test]
    fn cached_renditions_are_named_by_the_originals_location() {
        let r = validate(&params(Some("320"), None, None, None)).unwrap();
        assert_eq!(
            r.cache_path("org/ab/cd", Format::Webp),
            "renditions/org/ab/cd/320xauto-contain.webp"
        );
        assert_ne!(
            r.cache_path("org/ab/cd", Format::Webp),
            r.cache_path("org/ab/ce", Format::Webp)
        );
        assert_eq!(r.etag("abc", Format::Jpeg), "abc-r320x0njpg");
    }
}
