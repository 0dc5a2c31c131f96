//! Fixtures shared by the engine's unit tests.

use crate::cost::{Rate, Rating};
use crate::fill::{Merit, PlacementRule};
use crate::improve::Rng;
use crate::kinds::{BoxKind, Kind};
use crate::model::{BoxTypeInput, Goal, ItemKindInput, ValueTiebreaker};
use crate::select::Context;

/// A unit kind that may turn freely.
pub fn free_kind(dimensions: [f64; 3], weight: f64, quantity: u32) -> Kind {
    Kind::new(&ItemKindInput {
        dimensions,
        weight,
        quantity,
        free_axes: None,
    })
}

/// Uniform in `lo..hi`.
fn draw(rng: &mut Rng, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * rng.unit()
}

/// A random unit kind for property tests: sides from 1 to `side`, weight
/// below 5; kind `i` may turn when even, not at all when odd.
pub fn random_kind(rng: &mut Rng, i: usize, quantity: u32, side: f64) -> Kind {
    Kind::new(&ItemKindInput {
        dimensions: [
            draw(rng, 1.0, side),
            draw(rng, 1.0, side),
            draw(rng, 1.0, side),
        ],
        weight: draw(rng, 0.0, 5.0),
        quantity,
        free_axes: if i % 2 == 0 { None } else { Some(vec![]) },
    })
}

/// A random box type for property tests (box `i` of catalogue `case`):
/// sides from 3 to `side`; priced (whole prices, so ties are common, or
/// not) or costed by volume; rated by breakpoints that may fall with
/// weight, a linear rate whose slope may be negative or an empty table, or
/// not rated; some with a weight limit, some with a dimFactor.
pub fn random_box_type(rng: &mut Rng, case: usize, i: usize, side: f64) -> BoxKind {
    let sides = [
        draw(rng, 3.0, side),
        draw(rng, 3.0, side),
        draw(rng, 3.0, side),
    ];
    let rate = match (case + i) % 4 {
        0 => None,
        1 => Some(Rate::Breakpoints {
            weights: vec![2.0, 6.0, 12.0],
            rates: vec![
                draw(rng, 0.0, 9.0),
                draw(rng, 0.0, 9.0),
                draw(rng, 0.0, 9.0),
            ],
        }),
        2 => Some(Rate::Linear {
            base_price: draw(rng, 0.0, 9.0),
            price_increase_rate: draw(rng, -1.0, 2.0),
        }),
        _ => Some(Rate::Breakpoints {
            weights: vec![],
            rates: vec![],
        }),
    };
    BoxKind::new(&BoxTypeInput {
        dimensions: sides,
        weight_max: if i % 3 == 0 {
            draw(rng, 5.0, 30.0)
        } else {
            0.0
        },
        weight_tare: draw(rng, 0.0, 1.0),
        price: match (case + i) % 5 {
            0 => None,
            1 | 2 => Some(draw(rng, 1.0, 6.0).floor()),
            _ => Some(draw(rng, 1.0, 20.0)),
        },
        rating: rate.map(|rate| Rating {
            volume: sides.iter().product(),
            dim_factor: if i % 2 == 0 {
                Some(draw(rng, 50.0, 500.0))
            } else {
                None
            },
            rate: Some(rate),
        }),
    })
}

/// A cube-shaped box type with no weight limit and no price.
pub fn cube_box(side: f64) -> BoxKind {
    BoxKind::new(&BoxTypeInput {
        dimensions: [side; 3],
        weight_max: 0.0,
        weight_tare: 0.0,
        price: None,
        rating: None,
    })
}

/// The default placement: lowest point by x, y, z; items as given first.
pub fn first_point_rule() -> PlacementRule {
    PlacementRule {
        priority: [0, 1, 2],
        prefer_given: true,
        min_reach: [1, 1, 1],
        merit: Merit::FirstPoint,
        overhang: None,
        placing: crate::placing::Placing::default(),
    }
}

/// A context under the default placement rule, volume tiebreaker and `goal`.
pub fn context<'a>(kinds: &'a [Kind], boxes: &'a [BoxKind], goal: Goal) -> Context<'a> {
    Context::new(
        kinds,
        boxes,
        first_point_rule(),
        goal,
        ValueTiebreaker::Volume,
    )
}
