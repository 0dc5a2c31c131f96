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
//! at the request's deadline with the best combination so far. The packing
//! of the winning combination is the one the rest of the pipeline starts
//! from (it is not packed again). When the plain packing is one box and
//! re-boxing follows (which tries the same combinations within each cheaper
//! box type), the whole-pack combinations are skipped.

use crate::deadline::Deadline;
use crate::error::CoreError;
use crate::kinds::Kind;
use crate::model::Options;
use crate::placing::{interlocking_sides, keep_flat};
use crate::portfolio::Found;
use crate::select::UnitRef;
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
    /// The requested orderings packed with the winning kinds (or the plain
    /// ones), when the search packed them at all.
    pub found: Option<Found>,
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

/// Packs the requested orderings with the given kinds; with `true` the
/// first ordering completes even past the deadline.
pub type PackKinds<'p> = dyn Fn(&[Kind], bool) -> Result<Found, CoreError> + 'p;

/// Runs the orientation search the options ask for (see the module docs).
/// `first_order` is the unit order of the first requested ordering; `pack`
/// packs the requested orderings with the given kinds (the first ordering
/// always completes when asked to). With `per_box`, re-boxing searches the
/// same combinations within each box afterwards, so when the plain packing
/// is one box holding everything the whole-pack combinations are skipped:
/// only a single cheaper box could beat it, and that is what re-boxing
/// tries, with the combinations, for each cheaper box type.
pub fn search(
    kinds: &[Kind],
    first_order: &[UnitRef],
    opts: &Options,
    deadline: &Deadline,
    per_box: bool,
    pack: &PackKinds<'_>,
) -> Result<Searched, CoreError> {
    let mut out = Searched {
        kinds: None,
        found: None,
        cut_short: None,
    };
    let depth = opts.orientation_search_depth.min(MAX_DEPTH) as usize;
    if opts.orientation_preferred || depth == 0 {
        return Ok(out);
    }
    let groups = groups(first_order, kinds, depth);
    if groups.is_empty() {
        return Ok(out);
    }
    let plain = pack(kinds, true)?;
    let one_box = plain
        .best
        .as_ref()
        .is_some_and(|(p, _)| p.boxes.len() <= 1 && p.leftovers.is_empty());
    let Some((mut best, _)) = plain.best.clone() else {
        out.found = Some(plain);
        return Ok(out);
    };
    out.found = Some(plain);
    if per_box && one_box {
        return Ok(out);
    }
    let sizes: Vec<usize> = groups.iter().map(|&g| kinds[g].shapes.len()).collect();
    let total: usize = sizes.iter().product();
    let mut choice = vec![0usize; groups.len()];
    for n in 0..total {
        if deadline.expired() {
            out.cut_short = Some((total - n, total));
            return Ok(out);
        }
        let mut pinned = kinds.to_vec();
        for (i, &g) in groups.iter().enumerate() {
            pinned[g].shapes[..=choice[i]].rotate_right(1);
            pinned[g].pinned = true;
        }
        // A combination whose pre-packed items cannot be placed is no answer.
        if let Ok(found) = pack(&pinned, false) {
            if let Some((p, _)) = &found.best {
                if crate::compare_packings(p, &best, opts.goal) == Ordering::Less {
                    best = p.clone();
                    out.found = Some(found);
                    out.kinds = Some(pinned);
                }
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
    Ok(out)
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
    fn depth_zero_or_preferred_orientation_searches_nothing() -> Result<(), CoreError> {
        let kinds: Vec<Kind> = input(true, 2).items.iter().map(Kind::new).collect();
        let order: Vec<UnitRef> = (0..5).map(|unit| UnitRef { kind: 0, unit }).collect();
        let packs = std::cell::Cell::new(0);
        let pack = |_: &[Kind], _: bool| -> Result<Found, CoreError> {
            packs.set(packs.get() + 1);
            Ok(Found {
                best: None,
                runners_up: Vec::new(),
                timed_out: false,
            })
        };
        let d = Deadline::after(None);
        for (preferred, depth) in [(true, 2), (false, 0)] {
            let opts = input(preferred, depth).options;
            let found = search(&kinds, &order, &opts, &d, true, &pack)?;
            assert!(found.kinds.is_none() && found.found.is_none() && found.cut_short.is_none());
        }
        assert_eq!(packs.get(), 0);
        Ok(())
    }

    #[test]
    fn depth_one_finds_the_orientation_that_tiles_the_floor() -> Result<(), crate::CoreError> {
        let boxes = |depth| crate::pack(&input(false, depth)).map(|o| o.boxes.len());
        // Without the search, re-boxing's block building turns them as well;
        // as given they never fit the 2-high box, and re-boxing's fit tries
        // each turn that fits, so preferred orientations find it too.
        assert_eq!(boxes(0)?, 1);
        let preferred = crate::pack(&input(true, 1))?;
        assert_eq!(preferred.boxes.len(), 1);
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
