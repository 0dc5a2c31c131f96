//! SVG to PNG in-process with resvg: no system libraries, no subprocess.

use resvg::{tiny_skia, usvg};

use crate::error::RenderError;

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
    pixmap
        .encode_png()
        .map_err(|e| RenderError::Raster(e.to_string()))
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
    fn broken_svg_is_an_error_not_a_panic() {
        assert!(matches!(png("<svg"), Err(RenderError::Raster(_))));
    }
}
