//! Images for tests (feature `fixtures`): pictures of known colours, a sideways photo's EXIF, and
//! the header of a decompression bomb. Shared by this crate's tests and the integration tests.

use image::{ImageEncoder, Rgb, RgbImage};

/// A `w` × `h` picture of `left` on its left half and `right` on its right.
pub fn halves(w: u32, h: u32, left: [u8; 3], right: [u8; 3]) -> RgbImage {
    RgbImage::from_fn(w, h, |x, _| if x < w / 2 { Rgb(left) } else { Rgb(right) })
}

/// `img` as PNG bytes.
pub fn png(img: &RgbImage) -> Vec<u8> {
    let mut out = Vec::new();
    image::codecs::png::PngEncoder::new(&mut out)
        .write_image(
            img.as_raw(),
            img.width(),
            img.height(),
            image::ExtendedColorType::Rgb8,
        )
        .expect("a PNG of an RGB picture");
    out
}

/// `img` as a JPEG carrying the EXIF orientation `orientation` (6: "rotate 90° clockwise to view",
/// as a phone held upright writes it).
pub fn jpeg_with_orientation(img: &RgbImage, orientation: u16) -> Vec<u8> {
    // a minimal EXIF block (TIFF, little-endian) whose one entry is the orientation
    let mut exif = b"II*\0".to_vec();
    exif.extend_from_slice(&8u32.to_le_bytes());
    exif.extend_from_slice(&1u16.to_le_bytes());
    exif.extend_from_slice(&0x0112u16.to_le_bytes());
    exif.extend_from_slice(&3u16.to_le_bytes());
    exif.extend_from_slice(&1u32.to_le_bytes());
    exif.extend_from_slice(&orientation.to_le_bytes());
    exif.extend_from_slice(&[0, 0]);
    exif.extend_from_slice(&0u32.to_le_bytes());
    let mut out = Vec::new();
    let mut encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 95);
    encoder.set_exif_metadata(exif).expect("JPEG carries EXIF");
    encoder
        .write_image(
            img.as_raw(),
            img.width(),
            img.height(),
            image::ExtendedColorType::Rgb8,
        )
        .expect("a JPEG of an RGB picture");
    out
}

/// A PNG whose header claims `w` × `h` pixels, with a few bytes of data: a decompression bomb's
/// shape (its pixels would take gigabytes) in under 100 bytes.
pub fn claimed_png(w: u32, h: u32) -> Vec<u8> {
    claimed_png_of(w, h, 8, 2)
}

/// [`claimed_png`] with a bit depth and PNG color type of its own (16 and 6: RGBA of 16 bits,
/// 8 bytes a pixel decoded).
pub fn claimed_png_of(w: u32, h: u32, depth: u8, color_type: u8) -> Vec<u8> {
    let chunk = |kind: &[u8], data: &[u8]| {
        let mut crc = flate2::Crc::new();
        crc.update(kind);
        crc.update(data);
        let mut c = (data.len() as u32).to_be_bytes().to_vec();
        c.extend_from_slice(kind);
        c.extend_from_slice(data);
        c.extend_from_slice(&crc.sum().to_be_bytes());
        c
    };
    let mut ihdr = w.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[depth, color_type, 0, 0, 0]);
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    out.extend(chunk(b"IHDR", &ihdr));
    out.extend(chunk(
        b"IDAT",
        &[0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01],
    ));
    out.extend(chunk(b"IEND", &[]));
    out
}
