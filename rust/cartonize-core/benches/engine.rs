//! Criterion benchmarks of the hot paths: candidate (extreme) point
//! generation, the overlap test, one box fill, the packing of all units one
//! box at a time (extreme points against maximal spaces), and a whole pack.
//!
//! `cargo bench -p cartonize-core --bench engine`. The fill and point
//! benchmarks use 60 deterministic items with sides 10..50 offered to one
//! 100-cube box, orientation free.

use cartonize_core::deadline::Deadline;
use cartonize_core::extreme_points::ExtremePoints;
use cartonize_core::fill::{BoxFill, Merit, PlacementRule};
use cartonize_core::geometry::Cuboid;
use cartonize_core::kinds::{BoxKind, Kind};
use cartonize_core::model::{BoxTypeInput, Goal, ItemKindInput, PackInput, ValueTiebreaker};
use cartonize_core::pack;
use cartonize_core::placing::Placing;
use cartonize_core::select::{pack_order, Context, Mode, Plan, UnitRef};
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

/// A small deterministic generator (an LCG), so every run benches the same items.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, lo: u64, hi: u64) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (lo + (self.0 >> 33) % (hi - lo + 1)) as f64
    }
}

/// 60 items with sides 10..50 in a 100-cube bin (many fit one box), orientation free.
fn many_small_items() -> (Vec<Kind>, BoxKind) {
    let mut rng = Lcg(42);
    let kinds = (0..60)
        .map(|_| {
            Kind::new(&ItemKindInput {
                dimensions: [rng.below(10, 50), rng.below(10, 50), rng.below(10, 50)],
                weight: 1.0,
                quantity: 1,
                free_axes: None,
            })
        })
        .collect();
    let bin = BoxKind::new(&BoxTypeInput {
        dimensions: [100.0, 100.0, 100.0],
        weight_max: 0.0,
        weight_tare: 0.0,
        price: None,
        rating: None,
    });
    (kinds, bin)
}

fn rule(kinds: &[Kind]) -> PlacementRule {
    let mut min_reach = [i64::MAX; 3];
    for k in kinds {
        for (shape, _) in &k.shapes {
            for a in 0..3 {
                min_reach[a] = min_reach[a].min(shape[a]);
            }
        }
    }
    PlacementRule {
        priority: [0, 1, 2],
        prefer_given: true,
        min_reach,
        merit: Merit::FirstPoint,
        overhang: None,
        placing: Placing::default(),
    }
}

/// Offers every item once, in order, to one empty box.
fn fill_one_box<'a>(bin: &'a BoxKind, kinds: &[Kind], rule: PlacementRule) -> BoxFill<'a> {
    let mut fill = BoxFill::new(bin, rule);
    for k in 0..kinds.len() {
        fill.try_add(k, k, kinds);
    }
    fill
}

fn bench_fill(c: &mut Criterion) {
    let (kinds, bin) = many_small_items();
    let rule = rule(&kinds);
    c.bench_function("fill one box: 60 items offered, first point", |b| {
        b.iter(|| {
            fill_one_box(black_box(&bin), black_box(&kinds), rule)
                .units
                .len()
        })
    });
    let rs = PlacementRule {
        merit: Merit::ResidualSpace,
        ..rule
    };
    c.bench_function("fill one box: 60 items offered, residual space", |b| {
        b.iter(|| {
            fill_one_box(black_box(&bin), black_box(&kinds), rs)
                .units
                .len()
        })
    });
}

fn bench_points(c: &mut Criterion) {
    let (kinds, bin) = many_small_items();
    let rule = rule(&kinds);
    let placed: Vec<Cuboid> = fill_one_box(&bin, &kinds, rule)
        .units
        .iter()
        .map(|u| u.cuboid)
        .collect();
    c.bench_function(
        &format!("extreme points: add the {} items of one fill", placed.len()),
        |b| {
            b.iter(|| {
                let mut eps = ExtremePoints::new(bin.dims, rule.priority, rule.min_reach);
                for i in 0..placed.len() {
                    eps.add_item(&placed[i], &placed[..=i]);
                }
                eps.len()
            })
        },
    );
    let probe = Cuboid {
        origin: [bin.dims[0] / 3, bin.dims[1] / 3, bin.dims[2] / 3],
        size: [bin.dims[0] / 4, bin.dims[1] / 4, bin.dims[2] / 4],
    };
    c.bench_function(
        &format!("overlap test: one cuboid against {} placed", placed.len()),
        |b| {
            b.iter(|| {
                black_box(&placed)
                    .iter()
                    .filter(|q| black_box(&probe).overlaps(q))
                    .count()
            })
        },
    );
}

/// All 60 items packed into 100-cubes, largest first, one box at a time:
/// by the extreme-point fill and by the maximal-space construction.
fn bench_constructions(c: &mut Criterion) {
    let (kinds, bin) = many_small_items();
    let boxes = [bin];
    let ctx = Context::new(
        &kinds,
        &boxes,
        rule(&kinds),
        Goal::MostItems,
        ValueTiebreaker::Volume,
    );
    let mut order: Vec<UnitRef> = (0..kinds.len())
        .map(|kind| UnitRef { kind, unit: 0 })
        .collect();
    order.sort_by(|a, b| kinds[b.kind].volume.total_cmp(&kinds[a.kind].volume));
    let deadline = Deadline::after(None);
    for (name, mode) in [
        (
            "pack 60 units one box at a time: extreme points",
            Mode::Sequential,
        ),
        (
            "pack 60 units one box at a time: maximal spaces",
            Mode::Spaces,
        ),
    ] {
        let plan = Plan {
            mode,
            merit: Merit::FirstPoint,
        };
        c.bench_function(name, |b| {
            b.iter(|| {
                pack_order(black_box(&order), &ctx, plan, &deadline, true).map(|p| p.boxes.len())
            })
        });
    }
}

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

criterion_group!(
    benches,
    bench_points,
    bench_fill,
    bench_constructions,
    bench_pack
);
criterion_main!(benches);
