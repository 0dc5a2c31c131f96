//! Improvement under a time budget: ruin and recreate. A few boxes are
//! emptied and their units best-fit back into the other boxes and new ones;
//! the result is kept when it is no worse. Runs only when the request sets
//! a `timeout`, so a request without one stays fast and fully deterministic.

use std::cmp::Ordering;

use crate::bounds;
use crate::compare_packings;
use crate::deadline::Deadline;
use crate::fill::{BoxFill, PlacementRule};
use crate::geometry::Vec3;
use crate::model::Goal;
use crate::select::{
    downsize, fullest_first, type_for_new_box, Context, FilledBox, Packing, UnitRef,
};
use crate::sort::cmp_f64;

/// Iterations in a row without a better box count (or cost) after which the
/// search gives up before the deadline.
const STALL_LIMIT: u32 = 30_000;

/// Units a request without a time budget may reinsert in all: a short,
/// deterministic search (about a millisecond on 50 units).
pub const DEFAULT_WORK: usize = 1_200;

/// The same where a lower bound on the box count applies (`most-items`, one
/// box type of fixed cost, units that cannot turn): there the bound ends
/// the search and skips the other strategies once reached, which freed about
/// a fifth of the engine time on MPV n = 50, spent here (docs/mpv-results.md).
/// Elsewhere 400 more units found nothing on 500 e-commerce orders and made
/// the small orders about 6 % slower.
pub const BOUNDED_WORK: usize = 1_600;

/// Length of the late-acceptance history.
const LATE_ACCEPTANCE: usize = 200;

/// Most boxes emptied in one iteration.
const MAX_RUINED: usize = 4;

/// A box of the packing being improved and its type. Boxed: the search
/// takes boxes out of the list and puts them back many times a millisecond,
/// and moving the list's tail was 2 % of the engine's instructions on MPV.
type OpenBox<'a> = (usize, Box<BoxFill<'a>>);

/// Boxes changed by an iteration, as they were before (position, box).
type Backups<'a> = Vec<(usize, Box<BoxFill<'a>>)>;

/// Boxes the search dropped, whose memory new boxes reuse ([`BoxFill::renew`]).
type Spare<'a> = Vec<Box<BoxFill<'a>>>;

/// A small deterministic generator (SplitMix64); the seed comes from the input.
pub struct Rng(u64);

impl Rng {
    /// A generator whose sequence depends only on `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// Uniform in [0, 1).
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// How good a set of boxes is: the goal's measure (box count or cost), then
/// how unevenly full the boxes are (sum of squared fill ratios, higher is
/// better), which rewards moves that drain a box towards empty.
#[derive(Debug, Clone, Copy)]
struct Score {
    primary: f64,
    concentration: f64,
}

impl Score {
    fn of(open: &[OpenBox<'_>], ctx: &Context<'_>) -> Self {
        let primary = match ctx.goal {
            Goal::MostItems => open.len() as f64,
            Goal::LowestCost => open
                .iter()
                .map(|(b, f)| ctx.boxes[*b].cost(ctx.boxes[*b].weight_tare + f.payload))
                .sum(),
        };
        let concentration = open
            .iter()
            .map(|(_, f)| {
                let r = f.volume_used() / f.box_kind.volume.max(f64::MIN_POSITIVE);
                r * r
            })
            .sum();
        Score {
            primary,
            concentration,
        }
    }

    /// Late acceptance (Burke & Bykov): never a worse goal measure; at the
    /// same measure, a concentration no worse than the current one or than
    /// the one [`LATE_ACCEPTANCE`] steps ago, which lets the search cross
    /// plateaus that strict hill climbing cannot.
    fn acceptable(&self, current: &Score, late: f64) -> bool {
        match cmp_f64(self.primary, current.primary) {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => {
                self.concentration >= current.concentration || self.concentration >= late
            }
        }
    }
}

/// Runs one independent [`improve`] chain per core (seeds `seed`, `seed + 1`,
/// ...) and keeps the best result; ties go to the lowest chain, so the
/// outcome depends on the time given, never on which thread finishes first.
pub fn improve_on_all_cores(
    packing: Packing,
    order: &[UnitRef],
    ctx: &Context<'_>,
    rule: PlacementRule,
    until: &Deadline,
    seed: u64,
) -> Packing {
    let chains = std::thread::available_parallelism().map_or(1, |n| n.get());
    if chains <= 1 || packing.boxes.len() < 2 {
        return improve(
            packing,
            order,
            ctx,
            rule,
            until,
            &mut Rng::new(seed),
            usize::MAX,
        );
    }
    let start = &packing;
    let results: Vec<Option<Packing>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..chains as u64)
            .map(|c| {
                scope.spawn(move || {
                    let mut rng = Rng::new(seed.wrapping_add(c));
                    improve(start.clone(), order, ctx, rule, until, &mut rng, usize::MAX)
                })
            })
            .collect();
        // A chain only panics on a bug; it then simply does not count.
        handles.into_iter().map(|h| h.join().ok()).collect()
    });
    let mut best = packing;
    for p in results.into_iter().flatten() {
        if compare_packings(&p, &best, ctx.goal) == Ordering::Less {
            best = p;
        }
    }
    best
}

/// Improves `packing` until `until` passes or the search stalls, and returns
/// the better of the two (the input when nothing better was found).
pub fn improve(
    packing: Packing,
    order: &[UnitRef],
    ctx: &Context<'_>,
    rule: PlacementRule,
    until: &Deadline,
    rng: &mut Rng,
    work: usize,
) -> Packing {
    if packing.boxes.len() < 2 {
        return packing;
    }
    let mut open: Vec<OpenBox<'_>> = packing
        .boxes
        .iter()
        .map(|b| {
            let fill = BoxFill::rebuild(&ctx.boxes[b.box_type], rule, &b.units, ctx.kinds);
            (b.box_type, Box::new(fill))
        })
        .collect();
    let mut score = Score::of(&open, ctx);
    let floor = count_floor(&open, ctx);
    let mut stall = 0u32;
    let mut history = vec![score.concentration; LATE_ACCEPTANCE];
    let mut step = 0usize;
    let mut work_left = work;
    let mut spare: Spare<'_> = Vec::new();
    while stall < STALL_LIMIT && open.len() > floor && !until.expired() && work_left > 0 {
        stall += 1;
        step += 1;
        let late = &mut history[step % LATE_ACCEPTANCE];
        let mut ruined = pick_ruined(&open, rng);
        // Take the ruined boxes out, highest index first so indices hold.
        ruined.sort_unstable_by(|a, b| b.cmp(a));
        let removed: Vec<(usize, OpenBox<'_>)> =
            ruined.iter().map(|&i| (i, open.remove(i))).collect();
        let mut slots: Vec<usize> = removed
            .iter()
            .flat_map(|(_, (_, f))| f.units.iter().map(|u| u.slot))
            .collect();
        reorder(&mut slots, order, ctx, rng);
        work_left = work_left.saturating_sub(slots.len());

        // New boxes take the type of a ruined box: under lowest-cost a move
        // then pays off exactly when it needs fewer of them.
        let new_type = removed.first().map(|(_, (b, _))| *b);
        let kept = open.len();
        let mut backups: Backups<'_> = Vec::new();
        let complete = reinsert(
            &mut open,
            kept,
            (&mut backups, &mut spare),
            (order, &slots),
            new_type,
            ctx,
            rule,
        );
        let candidate = Score::of(&open, ctx);
        if complete && candidate.acceptable(&score, *late) {
            if cmp_f64(candidate.primary, score.primary) == Ordering::Less {
                stall = 0;
                history.fill(candidate.concentration);
            } else {
                *late = score.concentration;
            }
            score = candidate;
            spare.extend(backups.into_iter().map(|(_, f)| f));
            spare.extend(removed.into_iter().map(|(_, (_, f))| f));
        } else {
            *late = score.concentration;
            // Undo: drop new boxes, restore changed ones, put the ruined back.
            spare.extend(open.drain(kept..).map(|(_, f)| f));
            for (i, fill) in backups {
                spare.push(std::mem::replace(&mut open[i].1, fill));
            }
            for (i, entry) in removed.into_iter().rev() {
                open.insert(i, entry);
            }
        }
    }
    let mut boxes: Vec<FilledBox> = open
        .into_iter()
        .map(|(box_type, fill)| FilledBox {
            box_type,
            units: fill.units,
            payload: fill.payload,
        })
        .collect();
    downsize(&mut boxes, order, ctx, rule);
    let improved = Packing {
        cost: boxes.iter().map(|b| b.cost(ctx)).sum(),
        boxes,
        leftovers: packing.leftovers.clone(),
    };
    if compare_packings(&improved, &packing, ctx.goal) == Ordering::Less {
        improved
    } else {
        packing
    }
}

/// Best-fit of `slots` (positions in `order`) into `open` (fullest first) and
/// new boxes, of type `new_type` when it can hold the unit. Each of the first
/// `kept` boxes is copied to `backups` before its first change, so the caller
/// can undo; new boxes reuse the memory of boxes in `spare`. Returns false
/// when some unit found no box at all.
fn reinsert<'a>(
    open: &mut Vec<OpenBox<'a>>,
    kept: usize,
    (backups, spare): (&mut Backups<'a>, &mut Spare<'a>),
    (order, slots): (&[UnitRef], &[usize]),
    new_type: Option<usize>,
    ctx: &Context<'a>,
    rule: PlacementRule,
) -> bool {
    let mut candidates: Vec<(f64, usize)> = Vec::new();
    for &slot in slots {
        let kind = order[slot].kind;
        fullest_first(open, kind, ctx, &mut candidates);
        let mut placed = false;
        for &(_, i) in &candidates {
            if let Some(spot) = open[i].1.find_spot(kind, ctx.kinds) {
                if i < kept && !backups.iter().any(|(j, _)| *j == i) {
                    backups.push((i, open[i].1.clone()));
                }
                open[i].1.commit(slot, kind, ctx.kinds, spot);
                placed = true;
                break;
            }
        }
        if placed {
            continue;
        }
        let preferred = new_type.filter(|&b| ctx.holds[b][kind]);
        let Some(b) = preferred.or_else(|| type_for_new_box(kind, ctx)) else {
            return false;
        };
        let mut fill = match spare.pop() {
            Some(mut f) => {
                f.renew(&ctx.boxes[b], rule);
                f
            }
            None => Box::new(BoxFill::new(&ctx.boxes[b], rule)),
        };
        if !fill.try_add(slot, kind, ctx.kinds) {
            return false;
        }
        open.push((b, fill));
    }
    true
}

/// No packing of these units needs fewer boxes than their volume over the
/// largest box's, nor, in boxes of one type and units that cannot turn,
/// than [`bounds::box_count`]; reaching it ends the search when box count
/// is the goal.
fn count_floor(open: &[OpenBox<'_>], ctx: &Context<'_>) -> usize {
    if ctx.goal == Goal::LowestCost && ctx.boxes.len() > 1 {
        return 0;
    }
    let used: f64 = open.iter().map(|(_, f)| f.volume_used()).sum();
    let largest = ctx.boxes.iter().map(|b| b.volume).fold(0.0, f64::max);
    // Slack for float sums: a floor one too low only costs search time.
    let by_volume = match largest > 0.0 {
        true => (used / largest * (1.0 - 1e-9)).ceil() as usize,
        false => 0,
    };
    let fixed: Option<Vec<Vec3>> = open
        .iter()
        .flat_map(|(_, f)| &f.units)
        .map(|u| bounds::fixed_shape(&ctx.kinds[u.kind]))
        .collect();
    // Under a rate table cost follows the boxes' weights, so the count
    // alone says less there; it keeps the volume floor it had.
    match (fixed, ctx.boxes) {
        (Some(shapes), [only]) if ctx.goal == Goal::MostItems || only.rating.is_none() => {
            by_volume.max(bounds::box_count(&shapes, &only.dims))
        }
        _ => by_volume,
    }
}

/// The boxes to empty: two to [`MAX_RUINED`], half the time including the
/// least-full box (the likeliest to disappear), the rest each the emptier of
/// two random boxes: emptier boxes are likelier to vanish and cheaper to
/// re-pack (same bins per iteration on MPV, about 20% more iterations).
fn pick_ruined(open: &[OpenBox<'_>], rng: &mut Rng) -> Vec<usize> {
    let n = open.len();
    let count = (2 + rng.below(MAX_RUINED - 1)).min(n);
    let mut picked = Vec::with_capacity(count);
    let fill_ratio = |i: usize| open[i].1.volume_used() / open[i].1.box_kind.volume;
    if rng.below(2) == 0 {
        let emptiest =
            (0..n).min_by(|&a, &b| cmp_f64(fill_ratio(a), fill_ratio(b)).then(a.cmp(&b)));
        picked.extend(emptiest);
    }
    while picked.len() < count {
        let (a, b) = (rng.below(n), rng.below(n));
        let i = if fill_ratio(b) < fill_ratio(a) { b } else { a };
        if !picked.contains(&i) {
            picked.push(i);
        }
    }
    picked
}

/// Orders units to reinsert: by volume, largest first, with a random
/// relative jitter of up to 30% on most iterations so orders vary.
fn reorder(slots: &mut [usize], order: &[UnitRef], ctx: &Context<'_>, rng: &mut Rng) {
    let jitter = if rng.below(4) == 0 { 0.0 } else { 0.3 };
    let mut keyed: Vec<(f64, usize)> = slots
        .iter()
        .map(|&s| {
            let v = ctx.kinds[order[s].kind].volume;
            (v * (1.0 + jitter * (rng.unit() - 0.5)), s)
        })
        .collect();
    keyed.sort_by(|a, b| cmp_f64(b.0, a.0).then(a.1.cmp(&b.1)));
    for (dst, (_, s)) in slots.iter_mut().zip(keyed) {
        *dst = s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::Kind;
    use crate::model::ItemKindInput;

    #[test]
    fn new_boxes_take_the_ruined_type_under_lowest_cost() {
        // Slabs 6 and 4 thick sit in two small boxes. Together they fill one
        // small box; a move that opened the large box (the same cost per
        // volume, so best-fit's own choice) would cost more and be refused.
        let slab = |t: f64| {
            Kind::new(&ItemKindInput {
                dimensions: [10.0, 10.0, t],
                weight: 0.0,
                quantity: 1,
                free_axes: Some(vec![]),
            })
        };
        let kinds = vec![slab(6.0), slab(4.0)];
        let cube = |side: f64| crate::testkit::cube_box(side);
        let boxes = vec![cube(10.0), cube(20.0)];
        let rule = crate::testkit::first_point_rule();
        let ctx = crate::testkit::context(&kinds, &boxes, Goal::LowestCost);
        let order: Vec<UnitRef> = (0..2).map(|kind| UnitRef { kind, unit: 0 }).collect();
        let apart: Vec<FilledBox> = (0..2)
            .map(|slot| {
                let mut fill = BoxFill::new(&boxes[0], rule);
                assert!(fill.try_add(slot, slot, &kinds));
                FilledBox {
                    box_type: 0,
                    units: fill.units,
                    payload: 0.0,
                }
            })
            .collect();
        let start = Packing {
            cost: 2000.0,
            boxes: apart,
            leftovers: Vec::new(),
        };
        let until = Deadline::after(Some(5.0));
        let merged = improve(
            start,
            &order,
            &ctx,
            rule,
            &until,
            &mut Rng::new(5),
            usize::MAX,
        );
        let types: Vec<usize> = merged.boxes.iter().map(|b| b.box_type).collect();
        assert_eq!(types, vec![0]);
    }

    #[test]
    fn late_acceptance_never_takes_more_boxes() {
        let score = |primary, concentration| Score {
            primary,
            concentration,
        };
        let current = score(10.0, 5.0);
        assert!(score(9.0, 0.0).acceptable(&current, 9.0));
        assert!(!score(11.0, 9.0).acceptable(&current, 0.0));
        assert!(score(10.0, 5.5).acceptable(&current, 9.0));
        assert!(score(10.0, 4.0).acceptable(&current, 3.0));
        assert!(!score(10.0, 4.0).acceptable(&current, 4.5));
    }

    #[test]
    fn rng_depends_only_on_its_seed() {
        let draw = |seed| {
            let mut r = Rng::new(seed);
            (0..5).map(|_| r.below(1000)).collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
    }

    #[test]
    fn ruin_and_recreate_merges_half_empty_boxes() {
        // Four 10×10×5 slabs, one per 10-cube box: two boxes suffice.
        let kinds = vec![Kind::new(&ItemKindInput {
            dimensions: [10.0, 10.0, 5.0],
            weight: 0.0,
            quantity: 4,
            free_axes: Some(vec![]),
        })];
        let boxes = vec![crate::testkit::cube_box(10.0)];
        let rule = crate::testkit::first_point_rule();
        let ctx = crate::testkit::context(&kinds, &boxes, Goal::MostItems);
        let order: Vec<UnitRef> = (0..4).map(|unit| UnitRef { kind: 0, unit }).collect();
        let one_each: Vec<FilledBox> = (0..4)
            .map(|slot| {
                let mut fill = BoxFill::new(&boxes[0], rule);
                assert!(fill.try_add(slot, 0, &kinds));
                FilledBox {
                    box_type: 0,
                    units: fill.units,
                    payload: 0.0,
                }
            })
            .collect();
        let spread = Packing {
            cost: 4000.0,
            boxes: one_each,
            leftovers: Vec::new(),
        };
        let until = Deadline::after(Some(5.0));
        let better = improve(
            spread,
            &order,
            &ctx,
            rule,
            &until,
            &mut Rng::new(1),
            usize::MAX,
        );
        assert_eq!(better.boxes.len(), 2);
        let mut slots: Vec<usize> = better
            .boxes
            .iter()
            .flat_map(|b| b.units.iter().map(|u| u.slot))
            .collect();
        slots.sort_unstable();
        assert_eq!(slots, vec![0, 1, 2, 3]);
    }

    #[test]
    fn improved_packings_keep_every_unit_once_without_overlap() {
        // 60 locked boxes of pseudo-random sizes into 10-cubes.
        let mut rng = Rng::new(42);
        let kinds: Vec<Kind> = (0..60)
            .map(|_| {
                let side = |r: &mut Rng| 2.0 + r.below(6) as f64;
                Kind::new(&ItemKindInput {
                    dimensions: [side(&mut rng), side(&mut rng), side(&mut rng)],
                    weight: 0.0,
                    quantity: 1,
                    free_axes: Some(vec![]),
                })
            })
            .collect();
        let boxes = vec![crate::testkit::cube_box(10.0)];
        let rule = crate::testkit::first_point_rule();
        let ctx = crate::testkit::context(&kinds, &boxes, Goal::MostItems);
        let order: Vec<UnitRef> = (0..60).map(|kind| UnitRef { kind, unit: 0 }).collect();
        let never = Deadline::after(None);
        let start =
            crate::select::pack_order(&order, &ctx, crate::select::Plan::BASE, &never, true);
        let Some(start) = start else {
            unreachable!("a pack that must finish returns a packing")
        };
        let before = start.boxes.len();
        let until = Deadline::after(Some(0.05));
        let after = improve(
            start,
            &order,
            &ctx,
            rule,
            &until,
            &mut Rng::new(3),
            usize::MAX,
        );
        assert!(after.boxes.len() <= before);
        let mut seen = vec![0; 60];
        for b in &after.boxes {
            for (i, u) in b.units.iter().enumerate() {
                seen[u.slot] += 1;
                assert!((0..3).all(|a| u.cuboid.end(a) <= boxes[0].dims[a]));
                assert!(b.units[..i].iter().all(|v| !v.cuboid.overlaps(&u.cuboid)));
            }
        }
        assert!(seen.iter().all(|&n| n == 1));
    }
}
