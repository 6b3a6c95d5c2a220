//! Makes renditions ([`cdn_core::rendition`]) of image bytes: decoded with `image` within limits
//! checked on the header (no decompression bomb is ever allocated), turned upright by its EXIF
//! orientation, resized with `fast_image_resize` (SIMD convolution, Lanczos-3) and encoded as
//! JPEG, PNG or WebP. CPU work: callers run it off their async workers, a bounded number at once.

// no production function over 100 lines of code (test code is exempt)
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

use std::io::Cursor;

use cdn_core::rendition::{
    render_cost, Fit, Format, Rendition, MAX_RENDER_BYTES, MAX_SOURCE_PIXELS,
};
use fast_image_resize::images::Image;
use fast_image_resize::{FilterType, IntoImageView, ResizeAlg, ResizeOptions, Resizer};
use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::PngEncoder;
use image::codecs::webp::WebPEncoder;
use image::{DynamicImage, ImageDecoder, ImageEncoder, ImageReader, Limits};

/// JPEG quality of renditions (1–100).
pub const JPEG_QUALITY: u8 = 82;

/// A rendition's bytes and size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Made {
    pub bytes: Vec<u8>,
    pub width: u32,
    pub height: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The header claims more pixels than [`MAX_SOURCE_PIXELS`].
    #[error("the image is {width} × {height} pixels; renditions are made of images of at most {limit} pixels")]
    TooManyPixels { width: u32, height: u32, limit: u64 },
    /// Not an image this service can decode (or a damaged one).
    #[error("the object's bytes are not an image that can be decoded")]
    Undecodable(#[source] image::ImageError),
    /// Making it would take more memory than a rendition may ([`render_cost`]).
    #[error("the image is {width} × {height} pixels at {bytes_per_pixel} bytes a pixel; a rendition of it would take {needed} bytes of memory, more than the {limit} a rendition may take")]
    TooMuchMemory {
        width: u32,
        height: u32,
        bytes_per_pixel: u8,
        needed: u64,
        limit: u64,
    },
    #[error("encoding the rendition failed")]
    Encode(#[source] image::ImageError),
    #[error("resizing failed")]
    Resize(#[source] fast_image_resize::ResizeError),
}

/// The limits a rendition is made within.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    pub max_pixels: u64,
    /// Memory one rendition may take ([`render_cost`]).
    pub max_bytes: u64,
}

impl Default for Bounds {
    fn default() -> Self {
        Self {
            max_pixels: MAX_SOURCE_PIXELS,
            max_bytes: MAX_RENDER_BYTES,
        }
    }
}

/// What making a rendition of `source` will take, read from its header only (nothing decoded):
/// the memory ([`render_cost`]), or why it is refused (not an image, too many pixels, more memory
/// than `bounds` allow).
pub fn cost(source: &[u8], bounds: Bounds) -> Result<u64, RenderError> {
    let reader = ImageReader::new(Cursor::new(source))
        .with_guessed_format()
        .map_err(|e| RenderError::Undecodable(image::ImageError::IoError(e)))?;
    let decoder = reader.into_decoder().map_err(RenderError::Undecodable)?;
    checked_cost(&decoder, bounds)
}

fn checked_cost(decoder: &impl ImageDecoder, bounds: Bounds) -> Result<u64, RenderError> {
    let (width, height) = decoder.dimensions();
    if u64::from(width) * u64::from(height) > bounds.max_pixels {
        return Err(RenderError::TooManyPixels {
            width,
            height,
            limit: bounds.max_pixels,
        });
    }
    let bytes_per_pixel = decoder.color_type().bytes_per_pixel();
    let needed = render_cost(width, height, bytes_per_pixel);
    if needed > bounds.max_bytes {
        return Err(RenderError::TooMuchMemory {
            width,
            height,
            bytes_per_pixel,
            needed,
            limit: bounds.max_bytes,
        });
    }
    Ok(needed)
}

/// The rendition `r` of the image `source`, as `format`.
pub fn render(source: &[u8], r: &Rendition, format: Format) -> Result<Made, RenderError> {
    render_within(source, r, format, Bounds::default())
}

/// [`render`] within bounds of its own (tests use small ones).
pub fn render_within(
    source: &[u8],
    r: &Rendition,
    format: Format,
    bounds: Bounds,
) -> Result<Made, RenderError> {
    let mut reader = ImageReader::new(Cursor::new(source))
        .with_guessed_format()
        .map_err(|e| RenderError::Undecodable(image::ImageError::IoError(e)))?;
    // the decoder refuses to allocate more than a rendition may take, whatever it finds past
    // the header
    let mut limits = Limits::default();
    limits.max_alloc = Some(bounds.max_bytes);
    reader.limits(limits);
    let mut decoder = reader.into_decoder().map_err(RenderError::Undecodable)?;
    checked_cost(&decoder, bounds)?;
    let orientation = decoder.orientation().map_err(RenderError::Undecodable)?;
    let mut picture = DynamicImage::from_decoder(decoder).map_err(RenderError::Undecodable)?;
    picture.apply_orientation(orientation);
    // 8 bits a channel, with alpha when the picture has it (a JPEG gets it flattened on white
    // after resizing, where there are fewer pixels to blend)
    let alpha = picture.color().has_alpha();
    let picture = if alpha {
        DynamicImage::ImageRgba8(picture.into_rgba8())
    } else {
        DynamicImage::ImageRgb8(picture.into_rgb8())
    };
    let (w, h) = r.size_for(picture.width(), picture.height());
    let pixel_type = picture.pixel_type().ok_or_else(|| {
        RenderError::Encode(image::ImageError::Unsupported(
            image::error::UnsupportedError::from_format_and_kind(
                image::error::ImageFormatHint::Unknown,
                image::error::UnsupportedErrorKind::Color(picture.color().into()),
            ),
        ))
    })?;
    let mut resized = Image::new(w, h, pixel_type);
    let mut options = ResizeOptions::new().resize_alg(ResizeAlg::Convolution(FilterType::Lanczos3));
    if r.fit == Fit::Cover {
        // the box's shape cut from the middle of the picture
        options = options.fit_into_destination(Some((0.5, 0.5)));
    }
    Resizer::new()
        .resize(&picture, &mut resized, &options)
        .map_err(RenderError::Resize)?;
    let color = picture.color().into();
    let mut bytes = Vec::new();
    let encoded = match format {
        Format::Jpeg if alpha => JpegEncoder::new_with_quality(&mut bytes, JPEG_QUALITY)
            .write_image(
                &on_white(resized.buffer()),
                w,
                h,
                image::ExtendedColorType::Rgb8,
            ),
        Format::Jpeg => JpegEncoder::new_with_quality(&mut bytes, JPEG_QUALITY).write_image(
            resized.buffer(),
            w,
            h,
            color,
        ),
        Format::Png => PngEncoder::new(&mut bytes).write_image(resized.buffer(), w, h, color),
        Format::Webp => {
            WebPEncoder::new_lossless(&mut bytes).write_image(resized.buffer(), w, h, color)
        }
    };
    encoded.map_err(RenderError::Encode)?;
    Ok(Made {
        bytes,
        width: w,
        height: h,
    })
}

/// RGBA pixels as RGB on a white background (JPEG has no transparency: a transparent icon shows
/// on white, not on black).
fn on_white(rgba: &[u8]) -> Vec<u8> {
    rgba.chunks_exact(4)
        .flat_map(|p| {
            let a = u16::from(p[3]);
            let blend = move |c: u8| ((u16::from(c) * a + 255 * (255 - a) + 127) / 255) as u8;
            [blend(p[0]), blend(p[1]), blend(p[2])]
        })
        .collect()
}

#[cfg(feature = "fixtures")]
pub mod fixtures;

#[cfg(test)]
mod tests;
