//! Criterion benchmarks of the hot paths: one box fill and a whole pack.

use cartonize_core::model::{BoxTypeInput, ItemKindInput, PackInput};
use cartonize_core::pack;
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

/// A deterministic mixed order: 20 units of 5 kinds into 10 box types.
fn small_order() -> PackInput {
    let items = (0..5)
        .map(|i| ItemKindInput {
            dimensions: [2.0 + i as f64, 3.0 + (i % 3) as f64, 4.0 + (i % 2) as f64],
            weight: 1.0 + i as f64,
            quantity: 4,
            free_axes: None,
        })
        .collect();
    let box_types = (0..10)
        .map(|i| BoxTypeInput {
            dimensions: [6.0 + i as f64, 8.0 + i as f64, 10.0 + i as f64],
            weight_max: 100.0,
            weight_tare: 0.5,
            price: Some(100.0 + 25.0 * i as f64),
            rating: None,
        })
        .collect();
    PackInput {
        items,
        box_types,
        ..PackInput::default()
    }
}

fn bench_pack(c: &mut Criterion) {
    let input = small_order();
    c.bench_function("pack 20 units, 10 box types, combined", |b| {
        b.iter(|| pack(black_box(&input)))
    });
}

criterion_group!(benches, bench_pack);
criterion_main!(benches);
