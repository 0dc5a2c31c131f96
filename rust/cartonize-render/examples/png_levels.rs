//! PNG size against encoding time: renders a render input (JSON, as `_core.render_json`
//! gets it; `python -m bench.render_ab --write DIR` writes some), then encodes its
//! pictures' pixels again with several deflate levels and row filters, checking that each
//! PNG decodes to the same pixels. Prints the best of REPEATS times and the bytes of each.
//!
//! `cargo run --release -p cartonize-render --example png_levels -- INPUT.json [REPEATS]`

use std::time::Instant;

use base64::Engine as _;
use png::{DeflateCompression, Filter};
use resvg::tiny_skia::Pixmap;

type Fallible<T> = Result<T, Box<dyn std::error::Error>>;

fn encode(pixmap: &Pixmap, deflate: DeflateCompression, filter: Filter) -> Fallible<Vec<u8>> {
    let rgba = pixmap.clone().take_demultiplied();
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, pixmap.width(), pixmap.height());
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_deflate_compression(deflate);
    encoder.set_filter(filter);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&rgba)?;
    writer.finish()?;
    Ok(out)
}

fn main() -> Fallible<()> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .ok_or("usage: png_levels INPUT.json [REPEATS]")?;
    let repeats: usize = args.next().map_or(Ok(5), |r| r.parse())?;
    let mut input: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    input["format"] = "png".into();
    let output: serde_json::Value =
        serde_json::from_str(&cartonize_render::render_json(&input.to_string())?)?;
    let mut pixmaps = Vec::new();
    for b in output["boxes"].as_array().ok_or("no boxes")? {
        let png = b["png"].as_str().ok_or("no png")?;
        let bytes = base64::engine::general_purpose::STANDARD.decode(png)?;
        pixmaps.push(Pixmap::decode_png(&bytes)?);
    }
    let pixels: u64 = pixmaps
        .iter()
        .map(|p| u64::from(p.width()) * u64::from(p.height()))
        .sum();
    println!("{} pictures, {pixels} pixels", pixmaps.len());
    let settings = [
        (
            "zlib 6, adaptive (tiny-skia's encode_png)",
            DeflateCompression::Level(6),
            Filter::Adaptive,
        ),
        (
            "zlib 3, adaptive",
            DeflateCompression::Level(3),
            Filter::Adaptive,
        ),
        (
            "zlib 2, adaptive",
            DeflateCompression::Level(2),
            Filter::Adaptive,
        ),
        (
            "zlib 1, adaptive",
            DeflateCompression::Level(1),
            Filter::Adaptive,
        ),
        ("zlib 1, sub", DeflateCompression::Level(1), Filter::Sub),
        (
            "fdeflate, adaptive (Compression::Fast)",
            DeflateCompression::FdeflateUltraFast,
            Filter::Adaptive,
        ),
        (
            "fdeflate, up (Compression::Fastest)",
            DeflateCompression::FdeflateUltraFast,
            Filter::Up,
        ),
    ];
    for (name, deflate, filter) in settings {
        let mut best = f64::MAX;
        let mut pngs = Vec::new();
        for _ in 0..repeats.max(1) {
            let started = Instant::now();
            pngs = pixmaps
                .iter()
                .map(|p| encode(p, deflate, filter))
                .collect::<Fallible<Vec<_>>>()?;
            best = best.min(started.elapsed().as_secs_f64() * 1000.0);
        }
        for (png, pixmap) in pngs.iter().zip(&pixmaps) {
            if Pixmap::decode_png(png)?.data() != pixmap.data() {
                return Err(format!("{name}: the pixels changed").into());
            }
        }
        let bytes: usize = pngs.iter().map(Vec::len).sum();
        println!("{name}: best {best:.2} ms, {bytes} bytes");
    }
    Ok(())
}
