//! Orientation options applied before packing: `layFlat` / `interlock`
//! (which shapes a kind may take) and `itemOrientationSearchDepth` (which
//! initial orientations are tried, each a whole pack).
//!
//! Search depth `d` (with `itemInitialOrientationPreferred: false`), as
//! service-spec.md words it: the first `d` item kinds, in the order of the
//! first requested item sort, that can turn at all get every combination of
//! their initial orientation tried. A combination pins each of those kinds to
//! one shape, tried alone at every point before its other shapes; the other
//! kinds keep trying all their orientations at once at each point. Each
//! combination packs the requested orderings; the best packing wins, and the
//! unpinned packing wins ties. Depth 0 tries no combination. The search stops
//! at the request's deadline with the best combination so far.

use crate::deadline::Deadline;
use crate::fill::PlacementRule;
use crate::kinds::{BoxKind, Kind};
use crate::model::Options;
use crate::placing::{interlocking_sides, keep_flat};
use crate::portfolio;
use crate::select::{Context, Packing, UnitRef};
use std::cmp::Ordering;

/// Largest search depth (service-spec.md; the request model clamps and warns).
pub const MAX_DEPTH: u32 = 4;

/// Under `layFlat` (or `interlock`, which implies it) keeps only the shapes
/// lying on the largest face, unless orientation locks allow none; marks the
/// shapes that interlock.
pub fn apply_lay_flat(kinds: &mut [Kind], opts: &Options) {
    if !(opts.lay_flat || opts.interlock) {
        return;
    }
    for k in kinds {
        if keep_flat(&mut k.shapes) {
            k.free = false;
        }
        if opts.interlock {
            k.interlocking = interlocking_sides(&k.shapes);
        }
    }
}

/// What the orientation search found.
pub struct Searched {
    /// Kinds with the winning pins, when a pinned combination beat the plain one.
    pub kinds: Option<Vec<Kind>>,
    /// Combinations left untried at the deadline, with how many there were.
    pub cut_short: Option<(usize, usize)>,
}

/// The first `depth` kinds in `order` that can turn at all.
fn groups(order: &[UnitRef], kinds: &[Kind], depth: usize) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for u in order {
        if out.len() == depth {
            break;
        }
        if !out.contains(&u.kind) && kinds[u.kind].shapes.len() > 1 {
            out.push(u.kind);
        }
    }
    out
}

/// Runs the orientation search the options ask for (see the module docs).
pub fn search(
    kinds: &[Kind],
    boxes: &[BoxKind],
    quantities: &[u32],
    rule: PlacementRule,
    opts: &Options,
    deadline: &Deadline,
) -> Searched {
    let none = Searched {
        kinds: None,
        cut_short: None,
    };
    let depth = opts.orientation_search_depth.min(MAX_DEPTH) as usize;
    if opts.orientation_preferred || depth == 0 {
        return none;
    }
    let mut strategies = portfolio::base_strategies(opts, kinds, quantities, boxes);
    let fragile: Vec<_> = kinds.iter().map(|k| k.fragile).collect();
    strategies
        .iter_mut()
        .for_each(|s| crate::fragile::offer_last(&mut s.order, &fragile));
    let Some(first) = strategies.first() else {
        return none;
    };
    let groups = groups(&first.order, kinds, depth);
    if groups.is_empty() {
        return none;
    }
    let units: u64 = quantities.iter().map(|q| u64::from(*q)).sum();
    let work = units.saturating_mul(boxes.len() as u64);
    let run = |ks: &[Kind], must: bool| -> Option<Packing> {
        let mut ctx = Context::new(ks, boxes, rule, opts.goal, opts.value_tiebreaker);
        ctx.limits = opts.limits.clone();
        portfolio::run(&strategies, &ctx, deadline, work, must)
            .best
            .map(|(p, _)| p)
    };
    let Some(mut best) = run(kinds, true) else {
        return none;
    };
    let sizes: Vec<usize> = groups.iter().map(|&g| kinds[g].shapes.len()).collect();
    let total: usize = sizes.iter().product();
    let mut winner: Option<Vec<Kind>> = None;
    let mut choice = vec![0usize; groups.len()];
    for n in 0..total {
        if deadline.expired() {
            return Searched {
                kinds: winner,
                cut_short: Some((total - n, total)),
            };
        }
        let mut pinned = kinds.to_vec();
        for (i, &g) in groups.iter().enumerate() {
            pinned[g].shapes[..=choice[i]].rotate_right(1);
            pinned[g].pinned = true;
        }
        if let Some(p) = run(&pinned, false) {
            if crate::compare_packings(&p, &best, opts.goal) == Ordering::Less {
                best = p;
                winner = Some(pinned);
            }
        }
        // Next combination, the last group fastest.
        for i in (0..choice.len()).rev() {
            choice[i] += 1;
            if choice[i] < sizes[i] {
                break;
            }
            choice[i] = 0;
        }
    }
    Searched {
        kinds: winner,
        cut_short: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BoxTypeInput, ItemKindInput, PackInput};

    fn input(preferred: bool, depth: u32) -> PackInput {
        // Five 3x2x10 bars tile the 10x15 floor of a 2-high box only all as
        // 2x10x3 (10 across, 3 deep); the flattest shape at the first point,
        // 2x3x10, leaves slivers.
        PackInput {
            items: vec![ItemKindInput {
                dimensions: [3.0, 2.0, 10.0],
                weight: 0.0,
                quantity: 5,
                free_axes: None,
            }],
            box_types: vec![BoxTypeInput {
                dimensions: [2.0, 10.0, 15.0],
                weight_max: 0.0,
                weight_tare: 0.0,
                price: None,
                rating: None,
            }],
            options: Options {
                orientation_preferred: preferred,
                orientation_search_depth: depth,
                ..Options::default()
            },
            ..PackInput::default()
        }
    }

    #[test]
    fn depth_counts_the_first_kinds_that_can_turn_in_packing_order() {
        let kind = |d: [f64; 3]| {
            Kind::new(&ItemKindInput {
                dimensions: d,
                weight: 0.0,
                quantity: 1,
                free_axes: None,
            })
        };
        // Kind 1 is a cube: it has one shape and is no group.
        let kinds = vec![
            kind([1.0, 2.0, 3.0]),
            kind([2.0, 2.0, 2.0]),
            kind([1.0, 1.0, 2.0]),
        ];
        let order: Vec<UnitRef> = [1, 2, 2, 0]
            .iter()
            .map(|&k| UnitRef { kind: k, unit: 0 })
            .collect();
        assert_eq!(groups(&order, &kinds, 1), vec![2]);
        assert_eq!(groups(&order, &kinds, 2), vec![2, 0]);
        assert_eq!(groups(&order, &kinds, 4), vec![2, 0]);
        assert!(groups(&order, &kinds, 0).is_empty());
    }

    #[test]
    fn depth_zero_or_preferred_orientation_searches_nothing() {
        let inp = input(true, 2);
        let kinds: Vec<Kind> = inp.items.iter().map(Kind::new).collect();
        let boxes: Vec<BoxKind> = inp.box_types.iter().map(BoxKind::new).collect();
        let rule = crate::testkit::first_point_rule();
        let d = Deadline::after(None);
        let found = search(&kinds, &boxes, &[5], rule, &inp.options, &d);
        assert!(found.kinds.is_none() && found.cut_short.is_none());
        let inp = input(false, 0);
        let found = search(&kinds, &boxes, &[5], rule, &inp.options, &d);
        assert!(found.kinds.is_none());
    }

    #[test]
    fn depth_one_finds_the_orientation_that_tiles_the_floor() -> Result<(), crate::CoreError> {
        let boxes = |depth| crate::pack(&input(false, depth)).map(|o| o.boxes.len());
        assert_eq!(boxes(0)?, 2);
        assert_eq!(boxes(1)?, 1);
        assert_eq!(boxes(2)?, 1);
        let out = crate::pack(&input(false, 1))?;
        assert!(out.boxes[0]
            .items
            .iter()
            .all(|p| p.dimensions == [2.0, 10.0, 3.0]));
        Ok(())
    }
}
