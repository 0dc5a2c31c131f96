//! Placement into one box: the best extreme point and rotation for each unit
//! offered, in the order offered.

use crate::extreme_points::{sorted3, ExtremePoint, ExtremePoints};
use crate::fragile::Stack;
use crate::geometry::{Cuboid, Len, Vec3};
use crate::kinds::{BoxKind, Kind};
use crate::limits::{caps_admit, inline_ok};
use crate::orientation::Perm;
use crate::placing::{
    distance2, face_and_wall_points, interlock_allows, slide, target_of, Placing, ShapeOrder,
};
use crate::support::is_supported;
use crate::tally::Tally;

/// How many kinds that found no place a box remembers; later units that
/// dominate one of them are rejected without a search.
const FAILED_MEMORY: usize = 32;

/// A kind that found no place, with what ruling out larger kinds needs, kept
/// beside the kind so the check reads no other memory (it runs for every
/// unit offered to a box, most often during ruin and recreate).
#[derive(Debug, Clone, Copy)]
struct Failure {
    kind: usize,
    weight: f64,
    /// The kind's one shape, when it has one and no fragile limit: then a
    /// kind dominates it when no lighter and at least as large in every shape.
    single: Option<Vec3>,
}

impl Failure {
    fn of(kind: usize, kinds: &[Kind]) -> Self {
        let k = &kinds[kind];
        let single = match k.shapes.as_slice() {
            [(shape, _)] if k.fragile.is_none() => Some(*shape),
            _ => None,
        };
        Failure {
            kind,
            weight: k.weight,
            single,
        }
    }

    /// Same as `k.dominates(&kinds[self.kind])` (see [`Kind::dominates`]);
    /// `floor` is [`floor_of`]`(k)`, worked out once for all the failures.
    fn dominated_by(&self, k: &Kind, floor: &Vec3, kinds: &[Kind]) -> bool {
        match self.single {
            Some(o) => {
                self.weight.partial_cmp(&k.weight) != Some(std::cmp::Ordering::Greater)
                    && (0..3).all(|a| floor[a] >= o[a])
            }
            None => k.dominates(&kinds[self.kind]),
        }
    }
}

/// The least of the sorted sides of `shapes`, rank by rank: a shape fits
/// within a reach only if its sorted sides are within the reach's, so a
/// reach whose sorted sides fall short of this at any rank takes none.
fn least_sorted(shapes: &[(Vec3, Perm)]) -> Vec3 {
    shapes.iter().fold([Len::MAX; 3], |m, (s, _)| {
        let s = sorted3(*s);
        std::array::from_fn(|a| m[a].min(s[a]))
    })
}

/// The least length of `k`'s shapes along each axis: every shape is at
/// least this large, so it is as large as a one-shape kind exactly when
/// this is.
fn floor_of(k: &Kind) -> Vec3 {
    k.shapes.iter().fold([Len::MAX; 3], |m, (s, _)| {
        std::array::from_fn(|a| m[a].min(s[a]))
    })
}

/// The last [`FAILED_MEMORY`] failures of a box, overwritten oldest first in
/// place: the check reads them in any order, and shifting the list on every
/// failure once it is full (`Vec::remove(0)`) cost 1 % of the large order's
/// engine instructions (`docs/benchmarks.md`, "Large order A/B").
#[derive(Debug, Clone, Default)]
struct FailedMemory {
    failures: Vec<Failure>,
    /// The oldest entry once full, the next to be overwritten.
    next: usize,
}

impl FailedMemory {
    #[inline(always)]
    fn remember(&mut self, failure: Failure) {
        if self.failures.capacity() == 0 {
            // Room for all at the first failure: grown one at a time, the
            // list was reallocated four times per box that remembers any.
            self.failures.reserve_exact(FAILED_MEMORY);
        }
        if self.failures.len() < FAILED_MEMORY {
            self.failures.push(failure);
        } else {
            self.failures[self.next] = failure;
            self.next += 1;
            if self.next == FAILED_MEMORY {
                self.next = 0;
            }
        }
    }

    fn clear(&mut self) {
        self.failures.clear();
        self.next = 0;
    }

    fn iter(&self) -> std::slice::Iter<'_, Failure> {
        self.failures.iter()
    }
}

/// From this many items in a box on, the overlap test of a candidate tries
/// first the item that kept the last candidate out: candidates at nearby
/// points tend to run into the same item.
const HINTED_ITEMS: usize = 16;

/// Room for this many units (and item sets) in a new box before its lists grow.
const INITIAL_UNITS: usize = 8;

/// Weight comparisons allow this much rounding in the caller's sums.
const WEIGHT_SLACK: f64 = 1e-9;

/// How the extreme point for a unit is chosen among the feasible ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Merit {
    /// The first feasible point in priority order (fills floor layers).
    #[default]
    FirstPoint,
    /// The point whose residual space the unit fills most tightly (least
    /// slack summed over the axes; Crainic et al.'s RS merit), ties by priority.
    ResidualSpace,
}

/// Rank of a candidate in [`BoxFill::find_general`], lowest best: distance
/// to the reference point, priority key of the origin, flatness of the shape.
type Score = (i128, (Len, Len, Len), (Len, Len));

/// How placements are chosen inside a box.
#[derive(Debug, Clone, Copy)]
pub struct PlacementRule {
    /// Axis priority of candidate points, most significant first.
    pub priority: [usize; 3],
    /// Try the as-given orientation at every point before rotating.
    pub prefer_given: bool,
    /// Smallest extent along each axis of any item of the pack, so points
    /// too tight for every item are dropped early.
    pub min_reach: Vec3,
    /// Which feasible point wins.
    pub merit: Merit,
    /// `allowableOverhang` in fixed point: `None` places without a support
    /// check; `Some(a)` lets no item overhang what is beneath it by more than `a`.
    pub overhang: Option<Len>,
    /// Placement style, `packOrigin`, `corners`, `interlock`, best-for-box
    /// orientation ([`crate::placing`]); the default changes nothing.
    pub placing: Placing,
}

/// One unit placed in the box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlacedUnit {
    /// The caller's handle for the unit.
    pub slot: usize,
    pub kind: usize,
    pub cuboid: Cuboid,
    pub perm: Perm,
}

/// A free place found for a unit: where it goes and how it is turned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spot {
    pub cuboid: Cuboid,
    pub perm: Perm,
}

/// The lists of a box, emptied: what a new box can take over from a dropped
/// one instead of allocating its own ([`BoxFill::with_memory`]).
#[derive(Debug, Default)]
pub struct BoxMemory {
    cuboids: Vec<Cuboid>,
    units: Vec<PlacedUnit>,
    eps: ExtremePoints,
    failed: FailedMemory,
    stack: Stack,
    sets: Vec<u32>,
    fixed_kinds: Vec<usize>,
}

impl BoxMemory {
    /// Lists with room for a few units, for a box of its own.
    fn new() -> Self {
        BoxMemory {
            cuboids: Vec::with_capacity(INITIAL_UNITS),
            units: Vec::with_capacity(INITIAL_UNITS),
            eps: ExtremePoints::with_capacity(),
            failed: FailedMemory::default(),
            stack: Stack::with_capacity(INITIAL_UNITS),
            sets: Vec::with_capacity(INITIAL_UNITS),
            fixed_kinds: Vec::new(),
        }
    }
}

/// A box being filled.
#[derive(Debug, Clone)]
pub struct BoxFill<'a> {
    pub box_kind: &'a BoxKind,
    rule: PlacementRule,
    cuboids: Vec<Cuboid>,
    pub units: Vec<PlacedUnit>,
    eps: ExtremePoints,
    pub payload: f64,
    volume_left: f64,
    failed: FailedMemory,
    /// Weights above fragile units.
    stack: Stack,
    /// Item sets present, for `itemSetsPerBoxMax`.
    sets: Vec<u32>,
    /// Kinds of the pre-packed items in the box, for exclusions.
    fixed_kinds: Vec<usize>,
    /// Pre-packed items, reserved space, property sums, cohorts.
    pub tally: Tally,
    /// Twice this box's reference point under a placement style or `packOrigin`.
    reference2: Option<Vec3>,
    /// The item that last kept a candidate out, checked first next time.
    last_hit: std::cell::Cell<usize>,
    /// A point became [`ExtremePoint::dead`]: the next search that finds
    /// no place drops it ([`ExtremePoints::drop_dead`]).
    dead_seen: std::cell::Cell<bool>,
}

impl<'a> BoxFill<'a> {
    /// An empty box.
    pub fn new(box_kind: &'a BoxKind, rule: PlacementRule) -> Self {
        BoxFill::with_memory(box_kind, rule, BoxMemory::new())
    }

    /// Makes this box what [`BoxFill::new`] gives for `box_kind` and `rule`,
    /// keeping the memory of its lists (the search opens and drops boxes
    /// many times a millisecond).
    pub fn renew(&mut self, box_kind: &'a BoxKind, rule: PlacementRule) {
        let memory = self.take_memory();
        *self = BoxFill::with_memory(box_kind, rule, memory);
    }

    /// [`BoxFill::new`] in the memory of `memory`'s lists.
    pub fn with_memory(box_kind: &'a BoxKind, rule: PlacementRule, memory: BoxMemory) -> Self {
        let BoxMemory {
            mut cuboids,
            mut units,
            mut eps,
            mut failed,
            mut stack,
            mut sets,
            mut fixed_kinds,
        } = memory;
        cuboids.clear();
        units.clear();
        eps.renew(box_kind.dims, rule.priority, rule.min_reach);
        failed.clear();
        stack.clear();
        sets.clear();
        fixed_kinds.clear();
        BoxFill {
            box_kind,
            rule,
            cuboids,
            units,
            eps,
            payload: 0.0,
            volume_left: box_kind.volume,
            failed,
            stack,
            sets,
            fixed_kinds,
            tally: Tally::new(box_kind),
            reference2: match rule.placing.styling {
                true => rule.placing.anchor.resolve(box_kind.dims).reference2,
                false => None,
            },
            last_hit: std::cell::Cell::new(0),
            dead_seen: std::cell::Cell::new(false),
        }
    }

    /// The memory of this box's lists, leaving it without any.
    pub fn take_memory(&mut self) -> BoxMemory {
        BoxMemory {
            cuboids: std::mem::take(&mut self.cuboids),
            units: std::mem::take(&mut self.units),
            eps: std::mem::take(&mut self.eps),
            failed: std::mem::take(&mut self.failed),
            stack: std::mem::take(&mut self.stack),
            sets: std::mem::take(&mut self.sets),
            fixed_kinds: std::mem::take(&mut self.fixed_kinds),
        }
    }

    /// A box holding exactly `units` where they already are (placed under
    /// any rule), ready to take more under `rule`.
    pub fn rebuild(
        box_kind: &'a BoxKind,
        rule: PlacementRule,
        units: &[PlacedUnit],
        kinds: &[Kind],
    ) -> Self {
        let mut fill = BoxFill::new(box_kind, rule);
        for u in units {
            fill.cuboids.push(u.cuboid);
            fill.eps.add_item(&u.cuboid, &fill.cuboids);
            fill.units.push(*u);
            fill.payload += kinds[u.kind].weight;
            fill.volume_left -= kinds[u.kind].placed_volume(&u.cuboid);
            fill.stack
                .push(u.cuboid, kinds[u.kind].weight, kinds[u.kind].fragile);
            fill.note_set(kinds[u.kind].item_set);
            fill.tally.add(&kinds[u.kind], &u.cuboid);
        }
        fill
    }

    /// Puts a pre-packed item of `kinds[kind]` at `at` (or, with `None`, at
    /// the place a unit would get); it then takes space, weight and counts
    /// like a unit but is not one. Returns where it went, `None` when it
    /// does not fit.
    pub fn place_fixed(
        &mut self,
        kind: usize,
        at: Option<Cuboid>,
        kinds: &[Kind],
    ) -> Option<Cuboid> {
        let k = &kinds[kind];
        let cuboid = match at {
            Some(c) => c,
            // Where a unit would fit: the box's contents are given, so the count,
            // property, reserved-space, cohort and exclusion limits, which bind what
            // is added to them, do not keep them out (the weight is checked on the whole).
            None => {
                self.tally.open_cohorts(true);
                let found = self.find_place(k);
                self.tally.open_cohorts(false);
                let (origin, size, _) = found?;
                Cuboid { origin, size }
            }
        };
        self.cuboids.push(cuboid);
        self.eps.add_item(&cuboid, &self.cuboids);
        self.payload += k.weight;
        self.volume_left -= k.placed_volume(&cuboid);
        self.stack.push(cuboid, k.weight, k.fragile);
        self.note_set(k.item_set);
        self.tally.add(k, &cuboid);
        self.tally.fixed += 1;
        self.fixed_kinds.push(kind);
        self.failed.clear();
        Some(cuboid)
    }

    /// Places one unit of `kinds[kind]` if it fits anywhere; returns whether it did.
    pub fn try_add(&mut self, slot: usize, kind: usize, kinds: &[Kind]) -> bool {
        match self.find_spot(kind, kinds) {
            Some(spot) => {
                self.commit(slot, kind, kinds, spot);
                true
            }
            None => false,
        }
    }

    /// Where one unit of `kinds[kind]` would go, without placing it. Only the
    /// memory of kinds that found no place changes, and that stays true for
    /// this box as long as nothing is removed from it.
    pub fn find_spot(&mut self, kind: usize, kinds: &[Kind]) -> Option<Spot> {
        let k = &kinds[kind];
        if self.payload + k.weight > self.box_kind.payload_max() + WEIGHT_SLACK {
            return None;
        }
        // Before the failed-kind memory: a kind kept out by a rule says
        // nothing about the space left for larger kinds.
        if k.keeps_apart()
            && (self
                .units
                .iter()
                .any(|u| !k.may_share_with(u.kind, &kinds[u.kind]))
                || self
                    .fixed_kinds
                    .iter()
                    .any(|&f| !k.may_share_with(f, &kinds[f])))
        {
            return None;
        }
        if k.volume > self.volume_left * (1.0 + 1e-12) || self.eps.is_empty() {
            return None;
        }
        if !caps_admit(
            &self.box_kind.caps,
            self.units.len() + self.tally.fixed,
            &self.sets,
            k.item_set,
        ) {
            return None;
        }
        if !self.tally.admits(self.box_kind, k, self.volume_used()) {
            return None;
        }
        if self.remembers_failure(kind, kinds) {
            return None;
        }
        let found = self.find_place(k).map(|(origin, size, perm)| Spot {
            cuboid: Cuboid { origin, size },
            perm,
        });
        if found.is_none() {
            self.failed.remember(Failure::of(kind, kinds));
            // After a search that found nothing, as most in a box filling
            // up do (a check on every search cost small orders more).
            if self.dead_seen.get() {
                self.dead_seen.set(false);
                self.eps.drop_dead();
            }
        }
        found
    }

    /// Every place one unit of `kinds[kind]` could go now, for a search that
    /// tries them all ([`crate::exact`]): under the same limits as
    /// [`BoxFill::find_spot`], each extreme point with each shape of the
    /// first pass that has any (so with orientations preferred as given, the
    /// turns only where the given shape fits nowhere). Under a placement
    /// style or `corners: false` only the place `find_spot` would choose.
    pub fn spots(&mut self, kind: usize, kinds: &[Kind]) -> Vec<Spot> {
        let Some(first) = self.find_spot(kind, kinds) else {
            return Vec::new();
        };
        if self.reference2.is_some() || !self.rule.placing.corners {
            return vec![first];
        }
        let k = &kinds[kind];
        let order = self.shape_order(k);
        for pass in order.passes() {
            let mut found = Vec::new();
            for ep in self.eps.iter() {
                for (shape, perm) in pass {
                    if self.fits(ep, shape)
                        && self.stacks(ep, shape, k)
                        && interlock_allows(k, ep.point[0], shape)
                    {
                        found.push(Spot {
                            cuboid: Cuboid {
                                origin: ep.point,
                                size: *shape,
                            },
                            perm: *perm,
                        });
                    }
                }
            }
            if !found.is_empty() {
                return found;
            }
        }
        vec![first]
    }

    /// Places one unit of `kinds[kind]` at a spot [`BoxFill::find_spot`] gave
    /// for it, with nothing added to the box in between.
    pub fn commit(&mut self, slot: usize, kind: usize, kinds: &[Kind], spot: Spot) {
        let k = &kinds[kind];
        self.cuboids.push(spot.cuboid);
        self.eps.add_item(&spot.cuboid, &self.cuboids);
        self.units.push(PlacedUnit {
            slot,
            kind,
            cuboid: spot.cuboid,
            perm: spot.perm,
        });
        self.payload += k.weight;
        self.volume_left -= k.placed_volume(&spot.cuboid);
        self.stack.push(spot.cuboid, k.weight, k.fragile);
        self.note_set(k.item_set);
        self.tally.add(k, &spot.cuboid);
        if self.rule.overhang.is_some() || self.tally.position_bound() {
            // A new top can support a kind that found no place before.
            self.failed.clear();
        }
    }

    fn note_set(&mut self, set: u32) {
        if !self.sets.contains(&set) {
            self.sets.push(set);
        }
    }

    /// True when a kind that found no place since the last change rules out
    /// `kind`. Without a support check a unit that dominates a failed one
    /// fails too; with one, a larger base can need support a smaller one did
    /// not, so only the same kind counts.
    fn remembers_failure(&self, kind: usize, kinds: &[Kind]) -> bool {
        if self.rule.overhang.is_some()
            || self.tally.position_bound()
            || self.rule.placing.breaks_domination()
        {
            return self.failed.iter().any(|f| f.kind == kind);
        }
        let k = &kinds[kind];
        let floor = floor_of(k);
        self.failed.iter().any(|f| f.dominated_by(k, &floor, kinds))
    }

    /// The best point and rotation for `k`: the first point in priority order
    /// with a feasible rotation, and there the flattest rotation.
    fn find_place(&self, k: &Kind) -> Option<(Vec3, Vec3, Perm)> {
        if self.reference2.is_some() || !self.rule.placing.corners {
            return self.find_general(k);
        }
        if self.rule.merit == Merit::ResidualSpace {
            return self.find_tightest(k);
        }
        let order = self.shape_order(k);
        for pass in order.passes() {
            if pass.is_empty() {
                continue;
            }
            if let [(shape, perm)] = pass {
                // One shape (the as-given one, or the one pinned or best for
                // the box): most points are ruled out by their reach or their
                // last blocker, tested here without a branch per axis.
                for ep in self.eps.iter() {
                    let r = &ep.residual;
                    let within = (shape[0] <= r[0]) & (shape[1] <= r[1]) & (shape[2] <= r[2]);
                    if !within | ep.blocked(shape) {
                        continue;
                    }
                    if self.fits(ep, shape)
                        && self.stacks(ep, shape, k)
                        && interlock_allows(k, ep.point[0], shape)
                    {
                        return Some((ep.point, *shape, *perm));
                    }
                }
                continue;
            }
            // With several shapes, a point whose reach, sorted, is short of
            // every shape's sides, sorted, takes none of them: skipped
            // without testing each (most points, once a box fills up).
            let f = least_sorted(pass);
            for ep in self.eps.iter() {
                let r = sorted3(ep.residual);
                if (r[0] < f[0]) | (r[1] < f[1]) | (r[2] < f[2]) {
                    continue;
                }
                let mut best: Option<(Vec3, Perm)> = None;
                for (shape, perm) in pass {
                    if !self.fits(ep, shape)
                        || !self.stacks(ep, shape, k)
                        || !interlock_allows(k, ep.point[0], shape)
                    {
                        continue;
                    }
                    let flatter = |b: &Vec3| {
                        let p = self.rule.priority;
                        (shape[p[0]], shape[p[1]]) < (b[p[0]], b[p[1]])
                    };
                    if best.as_ref().is_none_or(|(b, _)| flatter(b)) {
                        best = Some((*shape, *perm));
                    }
                }
                if let Some((shape, perm)) = best {
                    return Some((ep.point, shape, perm));
                }
            }
        }
        None
    }

    /// The shapes to try, in passes: with `prefer_given` the as-given shape at
    /// every point first, then the rotations; otherwise all at once. A shape
    /// pinned by the orientation search, or best for this box type, goes
    /// first alone.
    fn shape_order<'k>(&self, k: &'k Kind) -> ShapeOrder<'k> {
        let best_for_box = self
            .rule
            .placing
            .best_for_box
            .then_some(&self.box_kind.dims);
        ShapeOrder::new(k, self.rule.prefer_given, best_for_box)
    }

    /// Placement over a wider candidate set ([`crate::placing`]): the extreme
    /// points, and under `corners: false` positions flush against item faces
    /// and walls; with a reference point each candidate is also slid toward
    /// it and the nearest wins, otherwise the first in priority order.
    fn find_general(&self, k: &Kind) -> Option<(Vec3, Vec3, Perm)> {
        let dims = self.box_kind.dims;
        let priority = self.rule.priority;
        let order = self.shape_order(k);
        for pass in order.passes() {
            let mut best: Option<(Score, Vec3, Vec3, Perm)> = None;
            for (shape, perm) in pass {
                let mut consider = |origin: Vec3| {
                    let score = (
                        self.reference2.map_or(0, |r| distance2(&origin, shape, &r)),
                        crate::extreme_points::key(&origin, &priority),
                        (shape[priority[0]], shape[priority[1]]),
                    );
                    if best.as_ref().is_some_and(|(b, ..)| *b <= score) {
                        return;
                    }
                    let cand = Cuboid {
                        origin,
                        size: *shape,
                    };
                    if self.fits_cuboid(&cand)
                        && self.stacks_cuboid(&cand, k)
                        && interlock_allows(k, origin[0], shape)
                    {
                        best = Some((score, origin, *shape, *perm));
                    }
                };
                let target = match self.reference2 {
                    Some(r) => target_of(&r, shape, &dims),
                    // Without a reference, floating candidates only drop.
                    None => [Some(0), None, None],
                };
                let mut starts: Vec<Vec3> = self
                    .eps
                    .iter()
                    .filter(|ep| (0..3).all(|a| shape[a] <= ep.residual[a]))
                    .map(|ep| ep.point)
                    .collect();
                if !self.rule.placing.corners {
                    let extra = face_and_wall_points(
                        shape,
                        &dims,
                        &self.cuboids,
                        self.eps.iter().map(|ep| ep.point),
                    );
                    starts.extend(extra);
                }
                for start in starts {
                    if !self.rule.placing.corners || self.reference2.is_some() {
                        let slid = slide(start, shape, &target, &self.cuboids);
                        if slid != start {
                            consider(slid);
                        }
                    }
                    consider(start);
                }
            }
            if let Some((_, point, shape, perm)) = best {
                return Some((point, shape, perm));
            }
        }
        None
    }

    fn in_box(&self, origin: &Vec3, shape: &Vec3) -> bool {
        (0..3).all(|a| origin[a] >= 0 && origin[a] + shape[a] <= self.box_kind.dims[a])
    }

    /// True when `shape` placed at `ep` stays within reach, overlaps nothing
    /// and, under a support check, rests on enough beneath it.
    fn fits(&self, ep: &ExtremePoint, shape: &Vec3) -> bool {
        if (0..3).any(|a| shape[a] > ep.residual[a]) || ep.blocked(shape) {
            return false;
        }
        self.fits_placed_near(
            &Cuboid {
                origin: ep.point,
                size: *shape,
            },
            Some(ep),
        )
    }

    /// [`BoxFill::fits`] for any candidate position.
    fn fits_cuboid(&self, cand: &Cuboid) -> bool {
        self.in_box(&cand.origin, &cand.size) && self.fits_placed(cand)
    }

    /// Overlap, inline limits and support of a candidate inside the box.
    fn fits_placed(&self, cand: &Cuboid) -> bool {
        self.fits_placed_near(cand, None)
    }

    /// [`BoxFill::fits_placed`] for a candidate at extreme point `near`, whose
    /// last blocker the caller has ruled out ([`ExtremePoint::blocked`]): the
    /// item that last kept any candidate out is tried first, then all, and
    /// the one that overlaps becomes the point's blocker. The hints only
    /// order the overlap tests; the answer is whether any item overlaps.
    fn fits_placed_near(&self, cand: &Cuboid, near: Option<&ExtremePoint>) -> bool {
        let cand = *cand;
        if self.cuboids.len() < HINTED_ITEMS {
            if self.cuboids.iter().any(|c| c.overlaps(&cand)) {
                return false;
            }
        } else {
            let hint = self.last_hit.get();
            if let Some(c) = self.cuboids.get(hint).filter(|c| c.overlaps(&cand)) {
                if let Some(ep) = near {
                    self.remember_blocker(ep, c);
                }
                return false;
            }
            if let Some(i) = self.cuboids.iter().position(|c| c.overlaps(&cand)) {
                self.last_hit.set(i);
                if let Some(ep) = near {
                    self.remember_blocker(ep, &self.cuboids[i]);
                }
                return false;
            }
        }
        let inline = self.box_kind.caps.inline_max;
        if inline != [0; 3] && !inline_ok(&cand, &self.cuboids, inline) {
            return false;
        }
        self.rule
            .overhang
            .is_none_or(|allowance| is_supported(&cand, &self.cuboids, allowance))
    }

    /// Remembers `item` as `ep`'s blocker, noting whether that left `ep` of
    /// no use ([`ExtremePoint::dead`]).
    #[inline(always)]
    fn remember_blocker(&self, ep: &ExtremePoint, item: &Cuboid) {
        ep.remember_blocker(item);
        if ep.dead(self.eps.min_reach()) {
            self.dead_seen.set(true);
        }
    }

    /// True when the fragile limits of `k` and of the units below allow
    /// `shape` at `ep` (see [`crate::fragile`]).
    fn stacks(&self, ep: &ExtremePoint, shape: &Vec3, k: &Kind) -> bool {
        self.stacks_cuboid(
            &Cuboid {
                origin: ep.point,
                size: *shape,
            },
            k,
        )
    }

    /// [`BoxFill::stacks`] for any candidate position: fragile limits,
    /// cohorts and, for a kind whose shapes differ in volume, reserved space.
    fn stacks_cuboid(&self, cand: &Cuboid, k: &Kind) -> bool {
        self.stack.allows(cand, k.weight, k.fragile)
            && self.tally.cohorts_allow(k, cand)
            && (!k.varied
                || self
                    .tally
                    .room_for(self.box_kind, cand.volume(), self.volume_used()))
    }

    /// The feasible point and rotation leaving the least residual slack.
    /// Points come in priority order, so a strict improvement is needed to
    /// move off an earlier point.
    fn find_tightest(&self, k: &Kind) -> Option<(Vec3, Vec3, Perm)> {
        let order = self.shape_order(k);
        for pass in order.passes() {
            let mut best: Option<(Len, Vec3, Vec3, Perm)> = None;
            for ep in self.eps.iter() {
                for (shape, perm) in pass {
                    if (0..3).any(|a| shape[a] > ep.residual[a]) {
                        continue;
                    }
                    let slack: Len = (0..3).map(|a| ep.residual[a] - shape[a]).sum();
                    if best.as_ref().is_some_and(|(b, ..)| *b <= slack)
                        || !self.fits(ep, shape)
                        || !self.stacks(ep, shape, k)
                        || !interlock_allows(k, ep.point[0], shape)
                    {
                        continue;
                    }
                    best = Some((slack, ep.point, *shape, *perm));
                }
            }
            if let Some((_, point, shape, perm)) = best {
                return Some((point, shape, perm));
            }
        }
        None
    }

    /// Item volume placed so far, in the caller's cubic units.
    pub fn volume_used(&self) -> f64 {
        self.box_kind.volume - self.volume_left
    }

    pub fn is_empty(&self) -> bool {
        self.units.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BoxTypeInput, ItemKindInput};
    use crate::testkit::free_kind;

    fn rule() -> PlacementRule {
        crate::testkit::first_point_rule()
    }

    #[test]
    fn the_overlap_hint_never_changes_what_fits() {
        // A box filled with many small units, then random candidates: the
        // hinted test agrees with a plain scan whatever the last hit was.
        let kinds: Vec<Kind> = (0..4)
            .map(|i| free_kind([2.0 + f64::from(i), 3.0, 1.0 + f64::from(i % 2)], 0.0, 1))
            .collect();
        let boxes = [crate::testkit::cube_box(12.0)];
        let mut fill = BoxFill::new(&boxes[0], rule());
        let mut slot = 0;
        while fill.try_add(slot, slot % kinds.len(), &kinds) {
            slot += 1;
        }
        assert!(
            fill.cuboids.len() >= HINTED_ITEMS,
            "too few items to use the hint"
        );
        let mut rng = crate::improve::Rng::new(3);
        let unit = crate::geometry::len_ceil(1.0);
        let mut kept_out = 0;
        for _ in 0..5_000 {
            let mut draw = |n: usize| rng.below(n) as i64 * unit;
            let cand = Cuboid {
                origin: [draw(12), draw(12), draw(12)],
                size: [draw(5) + unit, draw(5) + unit, draw(5) + unit],
            };
            let plain = !fill.cuboids.iter().any(|c| c.overlaps(&cand));
            assert_eq!(fill.fits_placed(&cand), plain, "{cand:?}");
            kept_out += usize::from(!plain);
        }
        assert!(
            kept_out > 1_000,
            "the candidates hardly ever overlap: {kept_out}"
        );
    }

    /// [`BoxFill::find_place`] as it read before the per-point hints and the
    /// sorted-reach skip: every point, every shape, a plain overlap scan.
    fn plain_place(fill: &BoxFill<'_>, k: &Kind) -> Option<(Vec3, Vec3, Perm)> {
        let order = fill.shape_order(k);
        for pass in order.passes() {
            for ep in fill.eps.iter() {
                let mut best: Option<(Vec3, Perm)> = None;
                for (shape, perm) in pass {
                    let cand = Cuboid {
                        origin: ep.point,
                        size: *shape,
                    };
                    if (0..3).any(|a| shape[a] > ep.residual[a])
                        || fill.cuboids.iter().any(|c| c.overlaps(&cand))
                    {
                        continue;
                    }
                    let p = fill.rule.priority;
                    if best
                        .as_ref()
                        .is_none_or(|(b, _)| (shape[p[0]], shape[p[1]]) < (b[p[0]], b[p[1]]))
                    {
                        best = Some((*shape, *perm));
                    }
                }
                if let Some((shape, perm)) = best {
                    return Some((ep.point, shape, perm));
                }
            }
        }
        None
    }

    /// `n` unit kinds of random sides from `least` to `least + 5`, one in
    /// three locked as given (one shape, so the reach skip is not used).
    fn random_kinds(rng: &mut crate::improve::Rng, n: usize, least: f64) -> Vec<Kind> {
        let side = |rng: &mut crate::improve::Rng| least + rng.below(6) as f64;
        (0..n)
            .map(|_| {
                let dims = [side(rng), side(rng), side(rng)];
                match rng.below(3) {
                    0 => Kind::new(&crate::model::ItemKindInput {
                        dimensions: dims,
                        weight: 0.0,
                        quantity: 1,
                        free_axes: Some(Vec::new()),
                    }),
                    _ => free_kind(dims, 0.0, 1),
                }
            })
            .collect()
    }

    #[test]
    fn point_hints_and_the_reach_skip_never_change_the_place() {
        // Boxes filled part way with units of random sides, then random
        // kinds offered: the place found is the plain search's, fitting or
        // not, whatever the hints the earlier searches left at each point.
        let mut rng = crate::improve::Rng::new(11);
        let (mut compared, mut placed, mut kept_out, mut indexed) = (0, 0, 0, 0);
        for round in 0..40 {
            let kinds = random_kinds(&mut rng, 150, 1.0);
            let boxes = [crate::testkit::cube_box(12.0 + f64::from(round % 3) * 3.0)];
            let mut fill = BoxFill::new(&boxes[0], rule());
            for (slot, kind) in (0..kinds.len()).enumerate() {
                let expected = plain_place(&fill, &kinds[kind]);
                assert_eq!(
                    fill.find_place(&kinds[kind]),
                    expected,
                    "round {round} unit {slot}"
                );
                compared += 1;
                // Past `INDEX_FROM` items the points come from the column index.
                indexed += usize::from(fill.cuboids.len() >= crate::extreme_points::INDEX_FROM);
                // Place only every other unit that fits, so searches repeat
                // between placements and leave hints behind.
                if let (Some((origin, size, perm)), true) = (expected, slot % 2 == 0) {
                    fill.commit(
                        slot,
                        kind,
                        &kinds,
                        Spot {
                            cuboid: Cuboid { origin, size },
                            perm,
                        },
                    );
                    placed += 1;
                } else if expected.is_none() {
                    kept_out += 1;
                }
            }
        }
        assert!(
            compared > 5_000 && placed > 1_000 && kept_out > 500 && indexed > 1_000,
            "{placed} placed, {kept_out} kept out, {indexed} searches past the index's start"
        );
    }

    #[test]
    fn dropping_dead_points_never_changes_the_place() {
        // Two boxes take the same units at the same places: one under the
        // kinds' true least extent, so points whose blocker is nearer than
        // that along every axis are dropped, the other under an extent of
        // one (nothing is ever dead, and points too short for every kind
        // stay too). Every search agrees.
        let mut rng = crate::improve::Rng::new(5);
        let unit = crate::geometry::len_ceil(1.0);
        let (mut compared, mut placed, mut kept_out, mut fewer) = (0, 0, 0, 0);
        for round in 0..30 {
            let kinds = random_kinds(&mut rng, 300, 2.0);
            let boxes = [crate::testkit::cube_box(20.0 + f64::from(round % 3) * 5.0)];
            let least = PlacementRule {
                min_reach: [2 * unit; 3],
                ..rule()
            };
            let mut fast = BoxFill::new(&boxes[0], least);
            let mut plain = BoxFill::new(&boxes[0], rule());
            for (slot, kind) in (0..kinds.len()).enumerate() {
                let expected = plain.find_spot(kind, &kinds);
                let found = fast.find_spot(kind, &kinds);
                assert_eq!(found, expected, "round {round} unit {slot}");
                compared += 1;
                fewer += usize::from(fast.eps.len() < plain.eps.len());
                // Place only every other unit that fits, so searches repeat
                // between placements and leave blockers behind.
                match (found, slot % 2 == 0) {
                    (Some(spot), true) => {
                        fast.commit(slot, kind, &kinds, spot);
                        plain.commit(slot, kind, &kinds, spot);
                        placed += 1;
                    }
                    (None, _) => kept_out += 1,
                    _ => {}
                }
            }
        }
        assert!(
            compared > 5_000 && placed > 1_000 && kept_out > 500 && fewer > 500,
            "{placed} placed, {kept_out} kept out, {fewer} searches with points dropped"
        );
    }

    #[test]
    fn a_renewed_box_is_a_new_one() {
        // A box filled with units (some failing, so its memory is not empty),
        // renewed as another box type under another rule: the same state as a
        // new box of that type, and the same placements from there on.
        let kinds: Vec<Kind> = (0..5)
            .map(|i| free_kind([3.0 + f64::from(i), 4.0, 2.0 + f64::from(i % 3)], 1.0, 1))
            .collect();
        let boxes = [
            crate::testkit::cube_box(9.0),
            crate::testkit::cube_box(13.0),
        ];
        let other = PlacementRule {
            priority: [2, 0, 1],
            merit: Merit::ResidualSpace,
            ..rule()
        };
        let mut used = BoxFill::new(&boxes[0], rule());
        for slot in 0..40 {
            let _ = used.try_add(slot, slot % kinds.len(), &kinds);
        }
        assert!(!used.failed.failures.is_empty() && used.units.len() > 4);
        used.renew(&boxes[1], other);
        let mut fresh = BoxFill::new(&boxes[1], other);
        assert_eq!(format!("{used:?}"), format!("{fresh:?}"));
        for slot in 0..40 {
            let kind = slot % kinds.len();
            assert_eq!(
                used.try_add(slot, kind, &kinds),
                fresh.try_add(slot, kind, &kinds)
            );
        }
        assert_eq!(format!("{used:?}"), format!("{fresh:?}"));
    }

    #[test]
    fn failed_memory_keeps_the_latest_failures() {
        // The ring must hold what a list dropping its first entry when full
        // holds, through clears and wrap-arounds.
        let kinds: Vec<Kind> = (1..=100)
            .map(|n| {
                Kind::new(&ItemKindInput {
                    dimensions: [f64::from(n), 1.0, 1.0],
                    weight: 1.0,
                    quantity: 1,
                    free_axes: None,
                })
            })
            .collect();
        let mut memory = FailedMemory::default();
        let mut model: Vec<usize> = Vec::new();
        for step in 0..400usize {
            if step % 97 == 96 {
                memory.clear();
                model.clear();
                continue;
            }
            let kind = step * 37 % kinds.len();
            memory.remember(Failure::of(kind, &kinds));
            if model.len() == FAILED_MEMORY {
                model.remove(0);
            }
            model.push(kind);
            let mut held: Vec<usize> = memory.iter().map(|f| f.kind).collect();
            let mut expected = model.clone();
            held.sort_unstable();
            expected.sort_unstable();
            assert_eq!(held, expected, "step {step}");
        }
    }

    #[test]
    fn failure_memory_agrees_with_kind_domination() {
        // Locked, partly free, free, cube and fragile kinds of two weights:
        // the memory's shortcut for one-shape kinds must say what
        // `Kind::dominates` says for every pair.
        let kind = |d: [f64; 3], weight: f64, axes: Option<Vec<usize>>, fragile: bool| {
            let mut k = Kind::new(&ItemKindInput {
                dimensions: d,
                weight,
                quantity: 1,
                free_axes: axes,
            });
            if fragile {
                k.fragile = Some(crate::fragile::FragileLimit::new(
                    &crate::fragile::FragileInput {
                        kind: 0,
                        max_weight: Some(1.0),
                        on_top_only: false,
                        offer_last: false,
                    },
                ));
            }
            k
        };
        let mut kinds = Vec::new();
        for d in [
            [2.0, 3.0, 4.0],
            [3.0, 3.0, 4.0],
            [4.0, 3.0, 2.0],
            [3.0, 3.0, 3.0],
            [2.0, 4.0, 3.0],
        ] {
            for weight in [1.0, 2.0] {
                for axes in [Some(vec![]), Some(vec![2]), None] {
                    for fragile in [false, true] {
                        kinds.push(kind(d, weight, axes.clone(), fragile));
                    }
                }
            }
        }
        for (i, k) in kinds.iter().enumerate() {
            for f in 0..kinds.len() {
                let memory = Failure::of(f, &kinds).dominated_by(k, &floor_of(k), &kinds);
                assert_eq!(memory, k.dominates(&kinds[f]), "kind {i} over {f}");
            }
        }
    }

    #[test]
    fn eight_cubes_fill_a_box_exactly() {
        let bk = crate::testkit::cube_box(10.0);
        let kinds = vec![Kind::new(&ItemKindInput {
            dimensions: [5.0, 5.0, 5.0],
            weight: 1.0,
            quantity: 9,
            free_axes: None,
        })];
        let mut fill = BoxFill::new(&bk, rule());
        let placed = (0..9).filter(|&i| fill.try_add(i, 0, &kinds)).count();
        assert_eq!(placed, 8);
        assert!((fill.volume_used() - 1000.0).abs() < 1e-9);
    }

    #[test]
    fn residual_space_merit_prefers_the_tighter_point() {
        // After a 6×10×5 block at the origin the free points are (0,0,5) with
        // reach 10×10×5 and (6,0,0) with reach 4×10×10. A 4×10×5 block fits
        // both; the first point in x-priority is (0,0,5), the tighter (6,0,0).
        let bk = crate::testkit::cube_box(10.0);
        let locked = |d: [f64; 3]| {
            Kind::new(&ItemKindInput {
                dimensions: d,
                weight: 0.0,
                quantity: 1,
                free_axes: Some(vec![]),
            })
        };
        let kinds = vec![locked([6.0, 10.0, 5.0]), locked([4.0, 10.0, 5.0])];
        let second_origin = |merit| {
            let mut fill = BoxFill::new(&bk, PlacementRule { merit, ..rule() });
            assert!(fill.try_add(0, 0, &kinds) && fill.try_add(1, 1, &kinds));
            fill.units[1].cuboid.origin
        };
        assert_eq!(second_origin(Merit::FirstPoint), [0, 0, 50_000]);
        assert_eq!(second_origin(Merit::ResidualSpace), [60_000, 0, 0]);
    }

    #[test]
    fn a_unit_takes_an_alternate_shape_where_its_own_does_not_fit() {
        // A 2x4x4 item that folds to 1x4x4, in a 3x4x4 box: the first unit as
        // given, the second folded into the 1 left along x.
        let bk = BoxKind::new(&BoxTypeInput {
            dimensions: [3.0, 4.0, 4.0],
            weight_max: 0.0,
            weight_tare: 0.0,
            price: None,
            rating: None,
        });
        let mut k = Kind::new(&ItemKindInput {
            dimensions: [2.0, 4.0, 4.0],
            weight: 0.0,
            quantity: 3,
            free_axes: None,
        });
        k.add_alternates(&[[1.0, 4.0, 4.0]], None);
        assert!(k.varied && (k.volume - 16.0).abs() < 1e-9);
        let kinds = vec![k];
        let mut fill = BoxFill::new(&bk, rule());
        assert!(fill.try_add(0, 0, &kinds) && fill.try_add(1, 0, &kinds));
        assert!(!fill.try_add(2, 0, &kinds));
        assert_eq!(fill.units[0].cuboid.size, [20_000, 40_000, 40_000]);
        assert_eq!(fill.units[1].cuboid.size, [10_000, 40_000, 40_000]);
        assert!((fill.volume_used() - 48.0).abs() < 1e-9);
        // With 30 % reserved only 33.6 may be filled: the folded unit no longer goes.
        let mut reserved = bk.clone();
        reserved.extra.reserved_space = 0.3;
        let mut fill = BoxFill::new(&reserved, rule());
        assert!(fill.try_add(0, 0, &kinds) && !fill.try_add(1, 0, &kinds));
    }

    /// `n` kinds of one 1-cube each, with `exclusions` applied.
    fn unit_cubes(n: usize, exclusions: &crate::model::Exclusions) -> Vec<Kind> {
        let unit = |_| {
            Kind::new(&ItemKindInput {
                dimensions: [1.0, 1.0, 1.0],
                weight: 0.0,
                quantity: 1,
                free_axes: None,
            })
        };
        let mut kinds: Vec<Kind> = (0..n).map(unit).collect();
        crate::kinds::apply_exclusions(&mut kinds, exclusions);
        kinds
    }

    #[test]
    fn excluded_kinds_never_share_a_box() {
        let bk = crate::testkit::cube_box(10.0);
        let exclusions = crate::model::Exclusions {
            kind_pairs: vec![[0, 1]],
            ..Default::default()
        };
        let kinds = unit_cubes(3, &exclusions);
        let mut fill = BoxFill::new(&bk, rule());
        assert!(fill.try_add(0, 1, &kinds));
        assert!(
            !fill.try_add(1, 0, &kinds),
            "kind 0 is excluded from kind 1's box"
        );
        assert!(
            fill.try_add(2, 2, &kinds),
            "kind 2 is excluded from nothing"
        );
        assert!(fill.try_add(3, 1, &kinds));
    }

    #[test]
    fn sequence_windows_keep_distant_kinds_apart() {
        // Sequences 1, 2, 4 and 9 within a distance of 2: ranks 0..3 reaching
        // 1 (from 1 to 2), 2 (2 to 4), 2 and 3. Kind 4 has no number.
        let bk = crate::testkit::cube_box(10.0);
        let exclusions = crate::model::Exclusions {
            sequence_windows: vec![[0, 0, 1], [1, 1, 2], [2, 2, 2], [3, 3, 3]],
            ..Default::default()
        };
        let kinds = unit_cubes(5, &exclusions);
        let shares = |a: usize, b: usize| kinds[a].may_share_with(b, &kinds[b]);
        assert!(shares(0, 1) && shares(1, 0) && shares(1, 2) && shares(2, 1));
        assert!(!shares(0, 2) && !shares(2, 0) && !shares(2, 3) && !shares(3, 0));
        assert!((0..4).all(|k| shares(k, 4) && shares(4, k)));
        let mut fill = BoxFill::new(&bk, rule());
        assert!(fill.try_add(0, 1, &kinds));
        assert!(fill.try_add(1, 2, &kinds), "2 and 4 are within 2");
        assert!(!fill.try_add(2, 0, &kinds), "1 and 2 are not within 2 of 4");
        assert!(fill.try_add(3, 4, &kinds), "no number: no constraint");
    }

    #[test]
    fn weight_limit_stops_filling() {
        let bk = BoxKind::new(&BoxTypeInput {
            dimensions: [10.0, 10.0, 10.0],
            weight_max: 10.0,
            weight_tare: 1.0,
            price: None,
            rating: None,
        });
        let kinds = vec![Kind::new(&ItemKindInput {
            dimensions: [1.0, 1.0, 1.0],
            weight: 2.0,
            quantity: 9,
            free_axes: None,
        })];
        let mut fill = BoxFill::new(&bk, rule());
        let placed = (0..9).filter(|&i| fill.try_add(i, 0, &kinds)).count();
        assert_eq!(placed, 4);
    }
}
