//! Criterion benchmarks: one 50-item box as SVG, and as PNG at 400 px.

use cartonize_render::model::{BoxInput, Format, ItemInput, RenderInput};
use cartonize_render::render;
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

/// A 50-item box: a 5 x 5 x 2 grid of mixed cuboids, colours by name, hex and none.
fn fifty_items(format: Format) -> RenderInput {
    let mut items = Vec::new();
    let colours = [Some("tomato"), Some("#3366cc"), None, Some("gold"), None];
    for n in 0..50u32 {
        let (x, y, z) = (n / 25, (n / 5) % 5, n % 5);
        items.push(ItemInput {
            index: n + 1,
            ref_id: i64::from(n % 7),
            origin: [f64::from(x) * 4.0, f64::from(y) * 4.0, f64::from(z) * 6.0],
            dimensions: [4.0, 3.0 + f64::from(n % 2), 5.0 + f64::from(n % 2)],
            color: colours[(n % 5) as usize].map(String::from),
            sequence: None,
            spaces: vec![],
        });
    }
    RenderInput {
        eye: [1.0, 1.0, 1.0],
        img_size: 400,
        format,
        template: None,
        scale_extent: None,
        sequence_heat_map: false,
        include_scripts: false,
        boxes: vec![BoxInput {
            dimensions: [8.0, 20.0, 30.0],
            items,
        }],
    }
}

fn bench_render(c: &mut Criterion) {
    let svg = fifty_items(Format::Svg);
    c.bench_function("render 50-item box, svg", |b| {
        b.iter(|| render(black_box(&svg)))
    });
    let png = fifty_items(Format::Png);
    c.bench_function("render 50-item box, png 400 px", |b| {
        b.iter(|| render(black_box(&png)))
    });
}

criterion_group!(benches, bench_render);
criterion_main!(benches);
