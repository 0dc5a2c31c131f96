//! Fixtures shared by the engine's unit tests.

use crate::fill::{Merit, PlacementRule};
use crate::kinds::{BoxKind, Kind};
use crate::model::{BoxTypeInput, Goal, ValueTiebreaker};
use crate::select::Context;

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
