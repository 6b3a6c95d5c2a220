#![allow(clippy::unwrap_used)]

use image::GenericImageView;

use super::*;
use crate::fixtures::{claimed_png, claimed_png_of, jpeg_with_orientation, png};
use cdn_core::rendition::{validate, RenditionParams};

fn rendition(w: Option<u32>, h: Option<u32>, fit: &str) -> Rendition {
    validate(&RenditionParams {
        w: w.map(|n| n.to_string()),
        h: h.map(|n| n.to_string()),
        fit: Some(fit.into()),
        format: None,
    })
    .unwrap()
}

const RED: [u8; 3] = [255, 0, 0];
const BLUE: [u8; 3] = [0, 0, 255];

/// A `w` × `h` picture: red on the left half, blue on the right.
fn halves(w: u32, h: u32) -> image::RgbImage {
    crate::fixtures::halves(w, h, RED, BLUE)
}

fn decoded(bytes: &[u8]) -> DynamicImage {
    image::load_from_memory(bytes).unwrap()
}

#[test]
fn a_screenshot_becomes_a_thumbnail_of_its_shape_in_each_format() {
    let source = png(&halves(1920, 1080));
    let r = rendition(Some(320), None, "contain");
    for (format, guessed) in [
        (Format::Png, image::ImageFormat::Png),
        (Format::Jpeg, image::ImageFormat::Jpeg),
        (Format::Webp, image::ImageFormat::WebP),
    ] {
        let made = render(&source, &r, format).unwrap();
        assert_eq!((made.width, made.height), (320, 180));
        assert_eq!(image::guess_format(&made.bytes).unwrap(), guessed);
        let back = decoded(&made.bytes);
        assert_eq!(back.dimensions(), (320, 180));
        // still red on the left, blue on the right
        let left = back.get_pixel(40, 90);
        let right = back.get_pixel(280, 90);
        assert!(left[0] > 200 && left[2] < 60, "{format:?} {left:?}");
        assert!(right[2] > 200 && right[0] < 60, "{format:?} {right:?}");
    }
}

#[test]
fn cover_fills_the_box_from_the_middle_and_nothing_is_enlarged() {
    let source = png(&halves(400, 100));
    // a square from the middle: half red, half blue
    let made = render(
        &source,
        &rendition(Some(50), Some(50), "cover"),
        Format::Png,
    )
    .unwrap();
    assert_eq!((made.width, made.height), (50, 50));
    let back = decoded(&made.bytes);
    assert!(back.get_pixel(5, 25)[0] > 200 && back.get_pixel(45, 25)[2] > 200);
    // a box larger than the picture: the picture at its size
    let same = render(
        &source,
        &rendition(Some(2048), None, "contain"),
        Format::Png,
    )
    .unwrap();
    assert_eq!((same.width, same.height), (400, 100));
}

#[test]
fn a_photo_taken_sideways_is_turned_upright_by_its_exif_orientation() {
    // stored 200 × 100 (red left, blue right) with "rotate 90° clockwise to view" (6)
    let jpeg = jpeg_with_orientation(&halves(200, 100), 6);
    let made = render(&jpeg, &rendition(None, Some(100), "contain"), Format::Png).unwrap();
    // upright it is 100 wide and 200 tall (here halved): red on top, blue below
    assert_eq!((made.width, made.height), (50, 100));
    let back = decoded(&made.bytes);
    assert!(back.get_pixel(25, 10)[0] > 200, "red on top");
    assert!(back.get_pixel(25, 90)[2] > 200, "blue below");
}

#[test]
fn a_decompression_bomb_is_refused_from_its_header() {
    let r = rendition(Some(100), None, "contain");
    let bomb = claimed_png(100_000, 100_000);
    assert!(bomb.len() < 100);
    match render(&bomb, &r, Format::Png) {
        Err(RenderError::TooManyPixels {
            width,
            height,
            limit,
        }) => {
            assert_eq!(
                (width, height, limit),
                (100_000, 100_000, MAX_SOURCE_PIXELS)
            );
        }
        other => panic!("{other:?}"),
    }
    // N - 1, N, N + 1 pixels against a small limit
    let small = png(&halves(10, 10));
    let pixels = |max_pixels| Bounds {
        max_pixels,
        ..Bounds::default()
    };
    assert!(render_within(&small, &r, Format::Png, pixels(101)).is_ok());
    assert!(render_within(&small, &r, Format::Png, pixels(100)).is_ok());
    assert!(matches!(
        render_within(&small, &r, Format::Png, pixels(99)),
        Err(RenderError::TooManyPixels { .. })
    ));
    let message = render(&bomb, &r, Format::Png).unwrap_err().to_string();
    assert!(
        message.contains("100000 × 100000") && message.contains("40000000"),
        "{message}"
    );
}

#[test]
fn bytes_that_are_not_an_image_are_refused() {
    let r = rendition(Some(100), None, "contain");
    assert!(matches!(
        render(b"hello, not a picture", &r, Format::Png),
        Err(RenderError::Undecodable(_))
    ));
    // a damaged PNG: its header, then nothing
    let mut cut = png(&halves(64, 64));
    cut.truncate(40);
    assert!(matches!(
        render(&cut, &r, Format::Png),
        Err(RenderError::Undecodable(_))
    ));
}

#[test]
fn a_transparent_picture_becomes_a_jpeg_on_white() {
    // half transparent, half opaque red
    let img = image::RgbaImage::from_fn(40, 20, |x, _| {
        if x < 20 {
            image::Rgba([0, 0, 0, 0])
        } else {
            image::Rgba([255, 0, 0, 255])
        }
    });
    let mut source = Vec::new();
    PngEncoder::new(&mut source)
        .write_image(img.as_raw(), 40, 20, image::ExtendedColorType::Rgba8)
        .unwrap();
    let made = render(&source, &rendition(Some(40), None, "contain"), Format::Jpeg).unwrap();
    let back = decoded(&made.bytes);
    let clear = back.get_pixel(4, 10);
    assert!(
        clear[0] > 240 && clear[1] > 240 && clear[2] > 240,
        "white, not black: {clear:?}"
    );
    let red = back.get_pixel(36, 10);
    assert!(red[0] > 200 && red[1] < 60, "{red:?}");
    // PNG and WebP keep the transparency
    let png_made = render(&source, &rendition(Some(40), None, "contain"), Format::Png).unwrap();
    assert_eq!(decoded(&png_made.bytes).get_pixel(4, 10)[3], 0);
}

/// The memory a rendition takes is bounded from the header: a 303 KB PNG of 36 MP at 16 bits
/// RGBA would take 465 MB to decode and convert (it took +460 MB), more than a rendition may.
#[test]
fn a_picture_that_would_take_too_much_memory_is_refused_from_its_header() {
    let r = rendition(Some(100), None, "contain");
    let deep = claimed_png_of(6000, 6000, 16, 6);
    match cost(&deep, Bounds::default()) {
        Err(RenderError::TooMuchMemory {
            bytes_per_pixel,
            needed,
            limit,
            ..
        }) => {
            assert_eq!(bytes_per_pixel, 8);
            assert_eq!(needed, 36_000_000 * 12 + 2048 * 2048 * 8);
            assert_eq!(limit, cdn_core::rendition::MAX_RENDER_BYTES);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        render(&deep, &r, Format::Png),
        Err(RenderError::TooMuchMemory { .. })
    ));
    // the same pixels at 8 bits RGB fit
    let shallow = claimed_png_of(6000, 6000, 8, 2);
    assert_eq!(
        cost(&shallow, Bounds::default()).unwrap(),
        36_000_000 * 7 + 2048 * 2048 * 8
    );
    // N - 1, N, N + 1 bytes against a small memory limit: a 10 × 10 RGB picture takes 1,500
    let small = png(&halves(10, 10));
    let bytes = |max_bytes| Bounds {
        max_bytes,
        ..Bounds::default()
    };
    assert_eq!(cost(&small, Bounds::default()).unwrap(), 1500);
    assert!(render_within(&small, &r, Format::Png, bytes(1501)).is_ok());
    assert!(render_within(&small, &r, Format::Png, bytes(1500)).is_ok());
    assert!(matches!(
        render_within(&small, &r, Format::Png, bytes(1499)),
        Err(RenderError::TooMuchMemory { .. })
    ));
}
