//! A maximal-space construction: boxes filled one at a time, each by
//! repeatedly placing the unit that best fits the free space left, where
//! the free space is kept as its maximal empty cuboids (Lai & Chan 1997;
//! Parreño et al. 2008) rather than as extreme points.
//!
//! Each step looks at every unit left and every maximal space; a unit goes
//! at a space's origin corner. Two rankings fill each box, and the box keeps
//! the one that holds more units (then more volume):
//! - **volume**: the largest unit that fits anywhere, in the space it fills
//!   most (then the space first in axis priority);
//! - **fill**: the unit and space where the unit fills its space most, then
//!   the larger unit.
//!
//! It is one more starting packing beside the extreme-point orderings, for
//! plain requests of one box type: its boxes differ in which units share
//! them, which no extreme-point ordering reaches on some instances (on
//! Martello-Pisinger-Vigo 8_50/4 it packs 8 bins where they and the
//! fixed-work search from them pack 9). Alone it packs fewer units per box
//! than they do on most instances, so it wins only where it is strictly
//! better. Everything is deterministic.

use std::cmp::Ordering;

use crate::deadline::Deadline;
use crate::extreme_points::key;
use crate::fill::{PlacedUnit, PlacementRule};
use crate::geometry::{volume_f64, Cuboid, Vec3};
use crate::model::ChoiceStyle;
use crate::placing::{Anchor, ShapeOrder};
use crate::select::{Context, FilledBox, UnitRef};

/// Weight comparisons allow this much rounding in the caller's sums.
const WEIGHT_SLACK: f64 = 1e-9;

/// Most units a request may have for the construction to run: each step
/// looks at every kind left in every space, so the work grows with the
/// square of the units, and beyond this the extreme-point orderings and the
/// search have the time.
pub const UNITS_MAX: u64 = 120;

/// True when the construction respects every constraint of the request:
/// one box type and no pre-packed boxes, the rules block building checks
/// ([`crate::blocks::applies`]), no support check (a unit may rest on a
/// shorter one), no limits across boxes, no lookback, box choice by trial,
/// no placement style or interlock, kinds of one volume, and at most
/// [`UNITS_MAX`] units.
pub fn applies(ctx: &Context<'_>, units: u64) -> bool {
    ctx.openable == 1
        && ctx.boxes.len() == 1
        && (1..=UNITS_MAX).contains(&units)
        && ctx.rule.overhang.is_none()
        && ctx.rule.placing.anchor == Anchor::None
        && !ctx.rule.placing.interlock
        && !ctx.limits.counts_boxes()
        && ctx.choice.style == ChoiceStyle::Actual
        && !ctx.order_bound()
        && crate::blocks::applies(ctx, 0)
}

/// A kind's shapes, each with its perm and volume, in the passes they are
/// tried in ([`ShapeOrder::passes`]).
type Passes = Vec<Vec<(Vec3, crate::orientation::Perm, f64)>>;

/// How a step ranks the (unit, space) pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rank {
    /// The largest unit first, then the fuller space.
    Volume,
    /// The fuller space first, then the larger unit.
    Fill,
}

/// One box's loading: its units and their volume and weight.
struct Loading {
    units: Vec<PlacedUnit>,
    volume: f64,
    payload: f64,
}

/// A candidate placement: the kind, its shape and perm, where, and its rank.
#[derive(Debug, Clone, Copy)]
struct Choice {
    kind: usize,
    shape: Vec3,
    perm: crate::orientation::Perm,
    origin: Vec3,
    volume: f64,
    fill: f64,
}

/// Packs the units at `remaining` of `order` into boxes of type 0, opened
/// one at a time. `None` when the deadline stops it and `must_finish` is
/// false.
pub(crate) fn pack(
    order: &[UnitRef],
    remaining: Vec<usize>,
    ctx: &Context<'_>,
    rule: PlacementRule,
    deadline: &Deadline,
    must_finish: bool,
) -> Option<Vec<FilledBox>> {
    // The slots of each kind's units, in offer order (taken from the front).
    let mut slots: Vec<Vec<usize>> = vec![Vec::new(); ctx.kinds.len()];
    for &slot in remaining.iter().rev() {
        slots[order[slot].kind].push(slot);
    }
    let mut by_volume: Vec<usize> = (0..ctx.kinds.len()).collect();
    by_volume.sort_by(|&a, &b| ctx.kinds[b].volume.total_cmp(&ctx.kinds[a].volume));
    let dims = ctx.boxes[0].dims;
    let best_for_box = rule.placing.best_for_box.then_some(&dims);
    let passes: Vec<Passes> = ctx
        .kinds
        .iter()
        .map(|k| {
            let order = ShapeOrder::new(k, rule.prefer_given, best_for_box);
            order
                .passes()
                .iter()
                .filter(|pass| !pass.is_empty())
                .map(|pass| {
                    pass.iter()
                        .map(|(shape, perm)| (*shape, *perm, volume_f64(shape)))
                        .collect()
                })
                .collect()
        })
        .collect();
    let mut boxes = Vec::new();
    while slots.iter().any(|s| !s.is_empty()) {
        if deadline.stops(must_finish) {
            return None;
        }
        let counts: Vec<usize> = slots.iter().map(Vec::len).collect();
        let best = [Rank::Volume, Rank::Fill]
            .into_iter()
            .map(|rank| fill_box(&counts, &by_volume, &passes, ctx, &rule, rank))
            .max_by(|a, b| {
                a.units
                    .len()
                    .cmp(&b.units.len())
                    .then(a.volume.total_cmp(&b.volume))
                    // On a tie the volume ranking (the first) is kept.
                    .then(Ordering::Greater)
            })?;
        if best.units.is_empty() {
            // Every unit left fits an empty box ([`Context::holds`]), so
            // this does not happen; stop rather than loop.
            return None;
        }
        let units = best
            .units
            .into_iter()
            .map(|u| PlacedUnit {
                // `slot` held the kind's index until now.
                slot: slots[u.kind].pop().unwrap_or(u.slot),
                ..u
            })
            .collect();
        boxes.push(FilledBox {
            box_type: 0,
            units,
            payload: best.payload,
        });
    }
    Some(boxes)
}

/// Fills one empty box from `counts` units of each kind under `rank`; the
/// units' `slot` holds their kind until the caller assigns slots.
/// `by_volume` lists the kinds largest first: under the volume ranking the
/// first that fits settles the step (with the others of its volume);
/// `passes` are each kind's shapes in the passes they are tried in.
fn fill_box(
    counts: &[usize],
    by_volume: &[usize],
    passes: &[Passes],
    ctx: &Context<'_>,
    rule: &PlacementRule,
    rank: Rank,
) -> Loading {
    let bk = &ctx.boxes[0];
    let dims = bk.dims;
    let payload_max = bk.payload_max();
    let mut left = counts.to_vec();
    // The kinds that may still fit, largest first. One that fits no space
    // of this box leaves for good: free space only shrinks.
    let mut live: Vec<usize> = by_volume
        .iter()
        .copied()
        .filter(|&k| left[k] > 0 && ctx.holds[0][k])
        .collect();
    // Smallest first, then in axis priority: a shape's first fit is then
    // the space it fills most.
    let mut spaces = vec![Cuboid {
        origin: [0; 3],
        size: dims,
    }];
    let mut loading = Loading {
        units: Vec::new(),
        volume: 0.0,
        payload: 0.0,
    };
    loop {
        let mut best: Option<Choice> = None;
        let mut gone = false;
        for slot in live.iter_mut() {
            let kind = *slot;
            let k = &ctx.kinds[kind];
            if let (Rank::Volume, Some(b)) = (rank, &best) {
                if k.volume < b.volume {
                    break;
                }
            }
            let place = match loading.payload + k.weight > payload_max + WEIGHT_SLACK {
                true => None,
                false => best_place(&passes[kind], kind, &spaces, rule),
            };
            match place {
                Some(c) => {
                    if best.as_ref().is_none_or(|b| better(&c, b, rank, rule)) {
                        best = Some(c);
                    }
                }
                None => {
                    *slot = usize::MAX;
                    gone = true;
                }
            }
        }
        if gone {
            live.retain(|&k| k != usize::MAX);
        }
        let Some(c) = best else {
            return loading;
        };
        let placed = Cuboid {
            origin: c.origin,
            size: c.shape,
        };
        loading.units.push(PlacedUnit {
            slot: c.kind,
            kind: c.kind,
            cuboid: placed,
            perm: c.perm,
        });
        loading.volume += c.volume;
        loading.payload += ctx.kinds[c.kind].weight;
        left[c.kind] -= 1;
        if left[c.kind] == 0 {
            live.retain(|&k| k != c.kind);
        }
        let reach = min_reach(passes, &live);
        subtract(&mut spaces, &placed, reach, &rule.priority);
    }
}

/// The best place for one unit of a kind among `spaces` (sorted smallest
/// first), given the kind's `passes`: with orientations preferred as given,
/// the given shape wherever it fits before any turn.
fn best_place(
    passes: &Passes,
    kind: usize,
    spaces: &[Cuboid],
    rule: &PlacementRule,
) -> Option<Choice> {
    for pass in passes {
        let mut best: Option<Choice> = None;
        for &(shape, perm, volume) in pass {
            // Spaces of less volume cannot hold the shape.
            let from = spaces.partition_point(|s| volume_f64(&s.size) < volume);
            let first = spaces[from..]
                .iter()
                .find(|space| (0..3).all(|a| shape[a] <= space.size[a]));
            if let Some(space) = first {
                let c = Choice {
                    kind,
                    shape,
                    perm,
                    origin: space.origin,
                    volume,
                    fill: volume / volume_f64(&space.size),
                };
                // Within one kind both rankings agree: the fuller space.
                if best
                    .as_ref()
                    .is_none_or(|b| better(&c, b, Rank::Fill, rule))
                {
                    best = Some(c);
                }
            }
        }
        if best.is_some() {
            return best;
        }
    }
    None
}

/// True when `a` ranks before `b`; ties go to the earlier space in axis
/// priority, then to the earlier kind, so `b` (found first) keeps them.
fn better(a: &Choice, b: &Choice, rank: Rank, rule: &PlacementRule) -> bool {
    let primary = match rank {
        Rank::Volume => a
            .volume
            .total_cmp(&b.volume)
            .then(a.fill.total_cmp(&b.fill)),
        Rank::Fill => a
            .fill
            .total_cmp(&b.fill)
            .then(a.volume.total_cmp(&b.volume)),
    };
    let p = rule.priority;
    primary
        .reverse()
        .then(key(&a.origin, &p).cmp(&key(&b.origin, &p)))
        .then(a.kind.cmp(&b.kind))
        == Ordering::Less
}

/// The smallest extent along each axis of any shape of the `live` kinds
/// (`None` when there is none): a space narrower than that along some axis
/// can take nothing more.
fn min_reach(passes: &[Passes], live: &[usize]) -> Option<Vec3> {
    let mut reach: Option<Vec3> = None;
    for &kind in live {
        for (shape, _, _) in passes[kind].iter().flatten() {
            let r = reach.get_or_insert(*shape);
            for a in 0..3 {
                r[a] = r[a].min(shape[a]);
            }
        }
    }
    reach
}

/// Takes `placed` out of the maximal spaces: each space it overlaps is cut
/// into the up to six maximal cuboids beside it, and a new cuboid inside
/// another space, or too small for `reach`, is dropped.
fn subtract(spaces: &mut Vec<Cuboid>, placed: &Cuboid, reach: Option<Vec3>, p: &[usize; 3]) {
    let Some(reach) = reach else {
        spaces.clear();
        return;
    };
    let mut pieces: Vec<Cuboid> = Vec::new();
    spaces.retain(|s| {
        if !s.overlaps(placed) {
            return true;
        }
        for a in 0..3 {
            let below = placed.origin[a] - s.origin[a];
            if below > 0 {
                let mut size = s.size;
                size[a] = below;
                pieces.push(Cuboid {
                    origin: s.origin,
                    size,
                });
            }
            let above = s.end(a) - placed.end(a);
            if above > 0 {
                let mut origin = s.origin;
                let mut size = s.size;
                origin[a] = placed.end(a);
                size[a] = above;
                pieces.push(Cuboid { origin, size });
            }
        }
        false
    });
    let roomy = |c: &Cuboid| (0..3).all(|a| c.size[a] >= reach[a]);
    spaces.retain(roomy);
    pieces.retain(roomy);
    // An untouched space lies inside no piece (each piece lies inside the
    // space it was cut from, and the spaces were maximal), so only the
    // pieces are checked; of two equal pieces the first is kept.
    let inside =
        |c: &Cuboid, o: &Cuboid| (0..3).all(|a| o.origin[a] <= c.origin[a] && c.end(a) <= o.end(a));
    let mut kept: Vec<Cuboid> = pieces
        .iter()
        .enumerate()
        .filter(|(i, c)| {
            !spaces.iter().any(|s| inside(c, s))
                && !pieces
                    .iter()
                    .enumerate()
                    .any(|(j, o)| j != *i && inside(c, o) && (j < *i || !inside(o, c)))
        })
        .map(|(_, c)| *c)
        .collect();
    // Both lists in order, merged: the spaces stay sorted.
    let order = |a: &Cuboid, b: &Cuboid| {
        volume_f64(&a.size)
            .total_cmp(&volume_f64(&b.size))
            .then_with(|| key(&a.origin, p).cmp(&key(&b.origin, p)))
    };
    kept.sort_by(order);
    let old = std::mem::take(spaces);
    spaces.reserve(old.len() + kept.len());
    let mut new = kept.into_iter().peekable();
    for s in old {
        while let Some(n) = new.next_if(|n| order(n, &s) == Ordering::Less) {
            spaces.push(n);
        }
        spaces.push(s);
    }
    spaces.extend(new);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Len;
    use crate::improve::Rng;
    use crate::kinds::Kind;
    use crate::model::{Goal, ItemKindInput};
    use crate::select::{pack_order, Mode, Plan};
    use crate::testkit::{context, cube_box, random_box_type, random_kind};

    /// Every free point of a `side`-cube (whole coordinates, cell centres
    /// at +0.5) lies in some space, and no space holds a placed point.
    fn covers_the_free_space(spaces: &[Cuboid], placed: &[Cuboid], side: Len) {
        for x in 0..side {
            for y in 0..side {
                for z in 0..side {
                    let cell = Cuboid {
                        origin: [x, y, z],
                        size: [1; 3],
                    };
                    let taken = placed.iter().any(|p| p.overlaps(&cell));
                    let free = spaces.iter().any(|s| s.overlaps(&cell));
                    assert_eq!(free, !taken, "cell {x},{y},{z}");
                }
            }
        }
    }

    #[test]
    fn subtracting_keeps_the_maximal_spaces_exact_and_sorted() {
        let side: Len = 12;
        let p = [0, 1, 2];
        let mut rng = Rng::new(7);
        for case in 0..40 {
            let mut spaces = vec![Cuboid {
                origin: [0; 3],
                size: [side; 3],
            }];
            let mut placed: Vec<Cuboid> = Vec::new();
            for _ in 0..25 {
                let Some(s) = spaces.get(rng.below(spaces.len().max(1))).copied() else {
                    break;
                };
                // A cuboid at the space's origin or pushed inside it.
                let size = [0, 1, 2].map(|a| 1 + rng.below(s.size[a].min(6) as usize) as Len);
                let origin = [0, 1, 2].map(|a| {
                    let slack = s.size[a] - size[a];
                    s.origin[a]
                        + if case % 2 == 0 {
                            0
                        } else {
                            rng.below(slack as usize + 1) as Len
                        }
                });
                let c = Cuboid { origin, size };
                placed.push(c);
                subtract(&mut spaces, &c, Some([1; 3]), &p);
                covers_the_free_space(&spaces, &placed, side);
                for (i, a) in spaces.iter().enumerate() {
                    for (j, b) in spaces.iter().enumerate() {
                        let inside =
                            (0..3).all(|k| b.origin[k] <= a.origin[k] && a.end(k) <= b.end(k));
                        assert!(i == j || !inside, "case {case}: {a:?} inside {b:?}");
                    }
                }
                assert!(spaces.windows(2).all(|w| {
                    let key = |c: &Cuboid| (volume_f64(&c.size), key(&c.origin, &p));
                    key(&w[0]) <= key(&w[1])
                }));
            }
        }
    }

    #[test]
    fn spaces_too_small_for_every_unit_left_are_dropped() {
        let p = [0, 1, 2];
        let mut spaces = vec![Cuboid {
            origin: [0; 3],
            size: [10; 3],
        }];
        // A 10×10×8 slab leaves a 2-high space: gone when units need 3.
        let slab = Cuboid {
            origin: [0; 3],
            size: [8, 10, 10],
        };
        subtract(&mut spaces, &slab, Some([2; 3]), &p);
        assert_eq!(spaces.len(), 1);
        subtract(
            &mut spaces,
            &Cuboid {
                origin: [8, 0, 0],
                size: [1; 3],
            },
            Some([3; 3]),
            &p,
        );
        assert!(spaces.is_empty());
    }

    /// Every unit inside its box, no two overlapping, each slot once in the
    /// boxes or `left`, in a shape its kind allows, and no box over its
    /// weight limit.
    fn check(boxes: &[FilledBox], order: &[UnitRef], ctx: &Context<'_>, left: &[(usize, String)]) {
        let mut seen = vec![false; order.len()];
        for (slot, _) in left {
            seen[*slot] = true;
        }
        for b in boxes {
            let dims = ctx.boxes[b.box_type].dims;
            let mut weight = 0.0;
            for (i, u) in b.units.iter().enumerate() {
                let c = u.cuboid;
                assert!((0..3).all(|a| c.origin[a] >= 0 && c.end(a) <= dims[a]));
                assert!(b.units[..i].iter().all(|o| !o.cuboid.overlaps(&c)));
                assert!(!seen[u.slot], "slot {} twice", u.slot);
                seen[u.slot] = true;
                assert_eq!(u.kind, order[u.slot].kind);
                let k = &ctx.kinds[u.kind];
                assert!(k
                    .shapes
                    .iter()
                    .any(|(s, perm)| *s == c.size && *perm == u.perm));
                weight += k.weight;
            }
            assert!(weight <= ctx.boxes[b.box_type].payload_max() + 1e-9);
            assert!((weight - b.payload).abs() < 1e-9);
        }
        assert!(seen.iter().all(|s| *s), "a unit is missing");
    }

    #[test]
    fn the_construction_packs_every_unit_validly() {
        let mut rng = Rng::new(11);
        for case in 0..240 {
            let n = 1 + rng.below(40);
            let quantities: Vec<u32> = (0..n).map(|_| 1 + rng.below(4) as u32).collect();
            let kinds: Vec<Kind> = (0..n)
                .map(|i| random_kind(&mut rng, i, quantities[i], 9.0))
                .collect();
            // A 10-cube, or a random box (some units may fit it in no way).
            let mut boxes = match case % 4 {
                0 => vec![random_box_type(&mut rng, case, 0, 12.0)],
                _ => vec![cube_box(10.0)],
            };
            if case % 3 == 0 {
                boxes[0].weight_max = 12.0;
            }
            let mut ctx = context(&kinds, &boxes, Goal::MostItems);
            ctx.rule.prefer_given = case % 2 == 0;
            ctx.rule.placing.best_for_box = case % 5 == 0;
            ctx.rule.priority = [[0, 1, 2], [2, 0, 1], [1, 2, 0]][(case / 3) % 3];
            let order: Vec<UnitRef> = quantities
                .iter()
                .enumerate()
                .flat_map(|(kind, q)| (0..*q).map(move |unit| UnitRef { kind, unit }))
                .collect();
            let plan = Plan {
                mode: Mode::Spaces,
                merit: crate::fill::Merit::FirstPoint,
            };
            let deadline = Deadline::after(None);
            let Some(p) = pack_order(&order, &ctx, plan, &deadline, true) else {
                unreachable!("case {case}: no packing without a deadline");
            };
            // Only units no box takes at all are left over.
            for (slot, _) in &p.leftovers {
                assert!(!ctx.holds[0][order[*slot].kind], "case {case}: slot {slot}");
            }
            check(&p.boxes, &order, &ctx, &p.leftovers);
        }
    }

    /// Martello-Pisinger-Vigo class 8, n = 50, instance 4 (bins 100³,
    /// items locked): 8 bins here, 9 from every extreme-point ordering and
    /// the fixed-work search on them.
    const MPV_8_50_4: [[u32; 3]; 50] = [
        [58, 44, 90],
        [69, 40, 26],
        [25, 2, 54],
        [60, 56, 99],
        [35, 4, 62],
        [14, 95, 85],
        [92, 85, 98],
        [89, 21, 13],
        [54, 21, 90],
        [96, 43, 37],
        [55, 22, 3],
        [24, 2, 84],
        [91, 5, 72],
        [52, 27, 28],
        [78, 97, 62],
        [70, 89, 74],
        [35, 47, 38],
        [93, 92, 26],
        [78, 34, 68],
        [4, 65, 31],
        [28, 63, 10],
        [34, 6, 94],
        [83, 13, 62],
        [94, 87, 87],
        [26, 23, 71],
        [53, 90, 33],
        [53, 34, 21],
        [54, 40, 44],
        [28, 76, 20],
        [93, 93, 73],
        [41, 65, 40],
        [7, 44, 75],
        [9, 55, 26],
        [12, 17, 17],
        [38, 13, 47],
        [61, 42, 11],
        [43, 94, 14],
        [48, 55, 17],
        [41, 82, 46],
        [6, 12, 49],
        [7, 14, 29],
        [60, 34, 36],
        [97, 76, 38],
        [1, 62, 91],
        [3, 71, 49],
        [4, 30, 99],
        [4, 92, 100],
        [47, 56, 57],
        [96, 15, 21],
        [76, 66, 5],
    ];

    #[test]
    fn mpv_8_50_4_fits_eight_bins() {
        let kinds: Vec<Kind> = MPV_8_50_4
            .iter()
            .map(|d| {
                Kind::new(&ItemKindInput {
                    dimensions: d.map(f64::from),
                    weight: 1.0,
                    quantity: 1,
                    free_axes: Some(vec![]),
                })
            })
            .collect();
        let boxes = vec![cube_box(100.0)];
        let ctx = context(&kinds, &boxes, Goal::MostItems);
        // Largest first, as the extreme-point constructions order them.
        let mut order: Vec<UnitRef> = (0..kinds.len())
            .map(|kind| UnitRef { kind, unit: 0 })
            .collect();
        order.sort_by(|a, b| kinds[b.kind].volume.total_cmp(&kinds[a.kind].volume));
        let deadline = Deadline::after(None);
        let packed = |mode| {
            let plan = Plan {
                mode,
                merit: crate::fill::Merit::FirstPoint,
            };
            pack_order(&order, &ctx, plan, &deadline, true).map(|p| {
                assert!(p.leftovers.is_empty());
                check(&p.boxes, &order, &ctx, &[]);
                p.boxes.len()
            })
        };
        assert_eq!(packed(Mode::Spaces), Some(8));
        assert!(packed(Mode::Sequential) > Some(8));
        assert!(packed(Mode::BestFit) > Some(8));
    }

    #[test]
    fn the_construction_steps_aside_for_what_it_does_not_track() {
        let mut rng = Rng::new(3);
        let kinds: Vec<Kind> = (0..20).map(|i| random_kind(&mut rng, i, 1, 9.0)).collect();
        let one = vec![cube_box(10.0)];
        let plain = context(&kinds, &one, Goal::MostItems);
        assert!(applies(&plain, 20));
        assert!(!applies(&plain, UNITS_MAX + 1), "too many units");
        let two = vec![cube_box(10.0), cube_box(12.0)];
        assert!(
            !applies(&context(&kinds, &two, Goal::MostItems), 20),
            "box types to choose"
        );
        let mut supported = context(&kinds, &one, Goal::MostItems);
        supported.rule.overhang = Some(0);
        assert!(!applies(&supported, 20), "a support check");
        let mut capped = context(&kinds, &one, Goal::MostItems);
        capped.limits.boxes_max = Some(3);
        assert!(!applies(&capped, 20), "a box limit");
        let mut anchored = context(&kinds, &one, Goal::MostItems);
        anchored.rule.placing.interlock = true;
        assert!(!applies(&anchored, 20), "interlock");
        let mut excluding = kinds.clone();
        excluding[0].excludes = vec![1];
        assert!(
            !applies(&context(&excluding, &one, Goal::MostItems), 20),
            "exclusions"
        );
    }
}
