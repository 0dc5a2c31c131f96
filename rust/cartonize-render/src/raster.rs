//! SVG to PNG in-process with resvg: no system libraries, no subprocess.

use resvg::{tiny_skia, usvg};

use crate::error::RenderError;

/// The zlib level PNGs are deflated at (tiny-skia's `encode_png` uses 6).
pub const DEFLATE_LEVEL: u8 = 2;

/// PNG bytes of `svg`, at the SVG's own pixel size.
pub fn png(svg: &str) -> Result<Vec<u8>, RenderError> {
    let tree = usvg::Tree::from_str(svg, &usvg::Options::default())
        .map_err(|e| RenderError::Raster(e.to_string()))?;
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).ok_or_else(|| {
        RenderError::Raster(format!(
            "cannot allocate {}x{} pixels",
            size.width(),
            size.height()
        ))
    })?;
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    encode(pixmap)
}

/// The PNG of `pixmap`: 8-bit RGBA as tiny-skia's own `encode_png` writes it (the same
/// pixels, the same adaptive row filters), but deflated at zlib level 2 rather than 6:
/// about twice as fast, files 1-5 % larger. Faster settings cost far more bytes on
/// pictures with large even areas (docs/decisions.md, "Pictures").
pub fn encode(pixmap: tiny_skia::Pixmap) -> Result<Vec<u8>, RenderError> {
    let (width, height) = (pixmap.width(), pixmap.height());
    let rgba = pixmap.take_demultiplied();
    let mut out = Vec::with_capacity(rgba.len() / 8);
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_deflate_compression(png::DeflateCompression::Level(DEFLATE_LEVEL));
    encoder.set_filter(png::Filter::Adaptive);
    let fail = |e: png::EncodingError| RenderError::Raster(e.to_string());
    let mut writer = encoder.write_header().map_err(fail)?;
    writer.write_image_data(&rgba).map_err(fail)?;
    writer.finish().map_err(fail)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_red_square_comes_out_as_a_png_of_its_size() {
        let svg = r##"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="6"><rect width="100%" height="100%" fill="#ff0000"/></svg>"##;
        let bytes = png(svg).unwrap_or_default();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        // IHDR width and height, big-endian, right after the signature and chunk header.
        assert_eq!(&bytes[16..24], &[0, 0, 0, 10, 0, 0, 0, 6]);
    }

    #[test]
    fn level_2_deflate_keeps_tiny_skias_pixels() {
        // Half-transparent fills and anti-aliased edges: demultiplied alpha is where an
        // encoder could change pixels.
        let svg = r##"<svg xmlns="http://www.w3.org/2000/svg" width="40" height="30"><polygon points="3.5,2.2 37.1,9.9 20.3,28.4" fill="#3366cc" fill-opacity="0.35" stroke="#333333" stroke-width="0.6"/><rect x="5" y="5" width="10" height="10" fill="tomato"/></svg>"##;
        let tree = usvg::Tree::from_str(svg, &usvg::Options::default()).ok();
        let pixmap = tiny_skia::Pixmap::new(40, 30);
        assert!(tree.is_some() && pixmap.is_some());
        let (Some(tree), Some(mut pixmap)) = (tree, pixmap) else {
            return;
        };
        resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
        let theirs = pixmap
            .encode_png()
            .ok()
            .and_then(|p| tiny_skia::Pixmap::decode_png(&p).ok());
        let ours = encode(pixmap.clone())
            .ok()
            .and_then(|p| tiny_skia::Pixmap::decode_png(&p).ok());
        assert!(theirs.is_some() && theirs == ours);
        assert!(pixmap
            .pixels()
            .iter()
            .any(|p| p.alpha() > 0 && p.alpha() < 255));
        assert_eq!(
            ours.map(|p| p.data().to_vec()),
            Some(pixmap.data().to_vec())
        );
    }

    #[test]
    fn broken_svg_is_an_error_not_a_panic() {
        assert!(matches!(png("<svg"), Err(RenderError::Raster(_))));
    }
}
