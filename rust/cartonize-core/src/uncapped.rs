//! A packing under box-count limits (`boxesMax`, `boxesPerItemSetMax`,
//! `boxesPerSequenceMax`) is also tried without them.
//!
//! Under a count limit the pipeline fills boxes and stops at the limit: the
//! fixed-work search, re-boxing's merges and the timed improvement, which
//! reshuffle whole boxes and know no count limits, do not run. So a request
//! such as "these 15 units, one box of this type, `boxesMax: 1`" could leave
//! a unit over that the same request without the limit packs into that one
//! box (the search merges a first fill's two boxes into one), or pay more
//! under `boxesMax: 3` than the unlimited answer's three boxes cost. A
//! packing made without the limits that keeps within them is a packing of the
//! limited request too. So a small request is also packed without its count
//! limits, and that packing is the answer when it keeps within them and is
//! better by the goal's order (fewer leftovers first). The limited pipeline
//! still runs: it is sometimes the better one (its box choice looks ahead at
//! the limits), and it keeps its answer on a tie.

use std::cmp::Ordering;
use std::time::Instant;

use crate::deadline::Deadline;
use crate::error::CoreError;
use crate::model::{PackInput, PackOutput, Placement};
use crate::subsets;

/// Requests of at most this many units get the second try (the search that
/// makes the difference runs on requests up to this size, `POLISH_UNITS_MAX`).
const UNITS_MAX: u64 = 400;

/// Whether the limited packing of `input` is worth a second try without
/// the limits: the request is small, and the volume of all units fits the
/// boxes the limit still allows (so the try is not spent on requests that
/// cannot ship whole, such as loading one container with more than it holds).
pub fn worth_trying(input: &PackInput) -> bool {
    let limits = &input.options.limits;
    if !limits.counts_boxes() {
        return false;
    }
    let units: u64 = input.items.iter().map(|i| u64::from(i.quantity)).sum();
    if units == 0 || units > UNITS_MAX {
        return false;
    }
    let Some(max) = limits.boxes_max else {
        return true;
    };
    let new_boxes = (max as usize).saturating_sub(input.boxes.len());
    if new_boxes == 0 {
        // Only the pre-packed boxes may take units, and the limited
        // pipeline fills them exactly as the unlimited one does.
        return false;
    }
    let volume = |d: &[f64; 3]| d[0] * d[1] * d[2];
    let largest = input
        .box_types
        .iter()
        .map(|b| volume(&b.dimensions))
        .fold(0.0, f64::max);
    let prepacked: f64 = input
        .boxes
        .iter()
        .map(|p| volume(&p.box_type.dimensions))
        .sum();
    let wanted: f64 = input
        .items
        .iter()
        .map(|i| volume(&i.dimensions) * f64::from(i.quantity))
        .sum();
    wanted <= largest * new_boxes as f64 + prepacked
}

/// `input` without its box-count limits.
pub fn without_limits(input: &PackInput) -> PackInput {
    let mut free = input.clone();
    let limits = &mut free.options.limits;
    limits.boxes_max = None;
    limits.boxes_per_item_set_max = None;
    limits.boxes_per_sequence_max = None;
    free
}

/// True when `out`, packed without the count limits, keeps within those of
/// `input`: no more new boxes than `boxesMax` leaves beside the pre-packed
/// ones, and no item set or sequence in more boxes than its limit (a
/// pre-packed box's own items count for the box they are in).
pub fn keeps_within(input: &PackInput, out: &PackOutput) -> bool {
    let limits = &input.options.limits;
    if let Some(max) = limits.boxes_max {
        let new = out.boxes.iter().filter(|b| b.prepacked.is_none()).count();
        let pre = out.boxes.len() - new;
        if new > 0 && new + pre.max(input.boxes.len()) > max as usize {
            return false;
        }
    }
    let item_set = |item: usize| Some(limits.item_set_of(item, input.items.len()));
    let sequence = |item: usize| limits.sequences.get(item).copied().flatten();
    let spread_ok = |max: Option<u32>, group: &dyn Fn(usize) -> Option<u32>| {
        let Some(max) = max else { return true };
        let mut boxes_of: std::collections::HashMap<u32, usize> = Default::default();
        for b in &out.boxes {
            let mut groups: Vec<u32> = b
                .items
                .iter()
                .chain(&b.fixed)
                .filter_map(|p: &Placement| group(p.item))
                .collect();
            groups.sort_unstable();
            groups.dedup();
            for g in groups {
                *boxes_of.entry(g).or_default() += 1;
            }
        }
        boxes_of.values().all(|n| *n <= max as usize)
    };
    spread_ok(limits.boxes_per_item_set_max, &item_set)
        && spread_ok(limits.boxes_per_sequence_max, &sequence)
}

/// Share of what is left of the request's `timeout` the try without limits
/// may use; the pipeline under the limits has the rest.
const TRY_SHARE: f64 = 0.5;

/// Packs `input` by `pack` (the engine's whole pipeline, under the input's
/// count limits) and, when worth trying, without the count limits first: that
/// packing is the answer when it keeps within the limits and is better by the
/// goal's order (on a tie the limited pipeline's packing stays).
pub fn pack_limited(
    input: &PackInput,
    started: Instant,
    deadline: &Deadline,
    pack: impl Fn(&PackInput, Instant, &Deadline) -> Result<PackOutput, CoreError>,
) -> Result<PackOutput, CoreError> {
    let mut tried = None;
    if worth_trying(input) && !deadline.expired() {
        let mut free = without_limits(input);
        let left = input
            .options
            .timeout
            .map(|t| t - started.elapsed().as_secs_f64());
        if left.is_none_or(|l| l > 0.0) {
            free.options.timeout = left.map(|l| l * TRY_SHARE);
            match pack(&free, Instant::now(), deadline) {
                Ok(out) if keeps_within(input, &out) => tried = Some(out),
                // The limited pipeline's first packing must still finish.
                Ok(_) | Err(CoreError::Timeout { .. }) => {}
                Err(other) => return Err(other),
            }
        }
    }
    match (pack(input, started, deadline), tried) {
        (Ok(limited), Some(free)) => {
            match subsets::compare_outputs(&free, &limited, input.options.goal) {
                Ordering::Less => Ok(free),
                _ => Ok(limited),
            }
        }
        (Err(CoreError::Timeout { .. }), Some(free)) => Ok(free),
        (result, _) => result,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::Limits;
    use crate::model::{BoxTypeInput, Goal, ItemKindInput, Options, PackedBox};

    /// An order whose 15 units fit one 100 x 150 x 200 carton (the search
    /// merges a first fill's two boxes), asked for in that carton alone.
    fn one_carton_order(limits: Limits) -> PackInput {
        let item = |dimensions: [f64; 3], weight: f64, quantity: u32| ItemKindInput {
            dimensions,
            weight,
            quantity,
            free_axes: None,
        };
        PackInput {
            items: vec![
                item([22.0, 159.0, 34.0], 12.0, 9),
                item([42.0, 36.0, 120.0], 136.0, 6),
            ],
            box_types: vec![BoxTypeInput {
                dimensions: [100.0, 150.0, 200.0],
                weight_max: 30_000.0,
                weight_tare: 60.0,
                price: Some(25.0),
                rating: None,
            }],
            options: Options {
                goal: Goal::LowestCost,
                orientation_preferred: false,
                limits,
                ..Options::default()
            },
            ..PackInput::default()
        }
    }

    #[test]
    fn boxes_max_one_gets_the_packing_the_unlimited_search_finds() -> Result<(), CoreError> {
        let free = crate::pack(&one_carton_order(Limits::default()))?;
        assert_eq!((free.boxes.len(), free.leftovers.len()), (1, 0));
        let input = one_carton_order(Limits {
            boxes_max: Some(1),
            ..Limits::default()
        });
        // The limited pipeline alone leaves units over here (if it ever
        // stops doing so, this case no longer shows the second try).
        let limited = crate::pack_box_types_once(&input, Instant::now(), &Deadline::after(None))?;
        assert!(!limited.leftovers.is_empty());
        let out = crate::pack(&input)?;
        assert_eq!((out.boxes.len(), out.leftovers.len()), (1, 0));
        assert_eq!(out.boxes[0].items.len(), 15);
        Ok(())
    }

    #[test]
    fn a_limit_the_unlimited_packing_breaks_keeps_the_limited_one() -> Result<(), CoreError> {
        // Two 60-cubes in 100 x 150 x 200 cartons: 43 % of one carton's
        // volume, so tried, but two cartons unlimited; under boxesMax 1 one
        // cube stays over.
        let mut input = one_carton_order(Limits {
            boxes_max: Some(1),
            ..Limits::default()
        });
        input.box_types[0].dimensions = [100.0, 100.0, 100.0];
        input.items = vec![ItemKindInput {
            dimensions: [60.0; 3],
            weight: 1.0,
            quantity: 2,
            free_axes: None,
        }];
        assert!(worth_trying(&input));
        let out = crate::pack(&input)?;
        assert_eq!((out.boxes.len(), out.leftovers.len()), (1, 1));
        assert!(out.leftovers[0].reason.starts_with("boxesMax 1 reached"));
        // 16 units of a carton's volume each under boxesMax 15: more than the
        // allowed boxes hold, not even tried.
        input.options.limits.boxes_max = Some(15);
        input.items[0].dimensions = input.box_types[0].dimensions;
        input.items[0].quantity = 16;
        assert!(!worth_trying(&input));
        let out = crate::pack(&input)?;
        assert_eq!((out.boxes.len(), out.leftovers.len()), (15, 1));
        Ok(())
    }

    fn packed(items: &[usize], prepacked: Option<usize>) -> PackedBox {
        PackedBox {
            box_type: 0,
            cost: 0.0,
            dimensional_weight: None,
            dimensional_weight_used: false,
            items: items
                .iter()
                .map(|&item| Placement {
                    item,
                    unit: 0,
                    packed_index: 0,
                    origin: [0.0; 3],
                    dimensions: [1.0; 3],
                    delta_cost: 0.0,
                    support: None,
                })
                .collect(),
            prepacked,
            fixed: Vec::new(),
        }
    }

    #[test]
    fn keeps_within_counts_new_boxes_and_spreads() {
        let out = |boxes: Vec<PackedBox>| PackOutput {
            boxes,
            ..PackOutput::default()
        };
        let mut input = one_carton_order(Limits {
            boxes_max: Some(2),
            ..Limits::default()
        });
        assert!(keeps_within(
            &input,
            &out(vec![packed(&[0], None), packed(&[1], None)])
        ));
        assert!(!keeps_within(
            &input,
            &out(vec![
                packed(&[0], None),
                packed(&[1], None),
                packed(&[1], None)
            ])
        ));
        // A pre-packed box counts towards boxesMax.
        input.boxes = vec![crate::prepacked::PrepackedInput {
            box_type: input.box_types[0].clone(),
            caps: Default::default(),
            extra: Default::default(),
            items: Vec::new(),
        }];
        assert!(keeps_within(
            &input,
            &out(vec![packed(&[], Some(0)), packed(&[1], None)])
        ));
        assert!(!keeps_within(
            &input,
            &out(vec![
                packed(&[], Some(0)),
                packed(&[0], None),
                packed(&[1], None)
            ])
        ));
        input.boxes.clear();
        // Item 1 in two boxes breaks boxesPerItemSetMax 1; item sets given
        // per kind (both kinds one set) make item 0 and 1 one set.
        input.options.limits = Limits {
            boxes_per_item_set_max: Some(1),
            ..Limits::default()
        };
        let two = out(vec![packed(&[0, 1], None), packed(&[1], None)]);
        assert!(!keeps_within(&input, &two));
        assert!(keeps_within(
            &input,
            &out(vec![packed(&[0, 1], None), packed(&[], None)])
        ));
        input.options.limits.item_sets = vec![7, 7];
        assert!(!keeps_within(
            &input,
            &out(vec![packed(&[0], None), packed(&[1], None)])
        ));
        // Sequences: kinds without one are not counted.
        input.options.limits = Limits {
            boxes_per_sequence_max: Some(1),
            sequences: vec![Some(3), None],
            ..Limits::default()
        };
        assert!(keeps_within(
            &input,
            &out(vec![
                packed(&[0], None),
                packed(&[1], None),
                packed(&[1], None)
            ])
        ));
        assert!(!keeps_within(
            &input,
            &out(vec![packed(&[0], None), packed(&[0], None)])
        ));
    }
}
