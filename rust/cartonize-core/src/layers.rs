//! Layer building with item selection, for orders of many units over
//! several boxes.
//!
//! A box is filled in layers stacked along the first priority axis. Each
//! layer has a thickness `t` and takes only units turned so that their
//! extent along that axis (their depth) is just under `t`; inside the layer
//! their footprints are packed by skyline best fit (after Burke, Kendall &
//! Whitwell 2004): the lowest stretch of the skyline gets the unit that fits
//! its width best. With many distinct units to choose from, a layer is filled
//! tightly both in depth and in area, where an extreme-point fill of a fixed
//! order must take the units as they come. The layers are then pushed
//! together towards the box's origin (no unit is left above a gap) and what
//! they leave is offered to the extreme-point fill in the packing order.
//!
//! Boxes are opened one at a time; each box type gets a layered and, when it
//! could take every unit left, a plain trial fill, and the best trial is kept.
//! At the end, when the last box and the emptiest other one hold no more than
//! one box can, a few ways of packing both into one box are tried.
//!
//! Everything is deterministic. Layers use every rotation the rules allow
//! (like block building), so `itemInitialOrientationPreferred` only shapes the
//! extreme-point fills; the layered packing competes with the others and wins
//! only when strictly better.

use crate::deadline::Deadline;
use crate::fill::{BoxFill, Merit, PlacedUnit, PlacementRule};
use crate::geometry::{Cuboid, Len, Vec3};
use crate::model::{ChoiceStyle, Goal};
use crate::orientation::Perm;
use crate::select::{Context, FilledBox, UnitRef};

/// Weight comparisons allow this much rounding in the caller's sums.
const WEIGHT_SLACK: f64 = 1e-9;

/// Fewest units a request needs for layers to be tried: with fewer there is
/// little to choose from, and small orders keep their speed.
pub const MIN_UNITS: u64 = 50;

/// Depths closer to a layer's thickness than `t / DEPTH_STEPS` rank alike, so
/// the choice among them goes to the chunkier unit.
const DEPTH_STEPS: Len = 64;

/// A box type is layered only when it holds at least this many units of the
/// mean volume left: a layer needs several units across its face, and a
/// box for a handful is filled as well by the plain fill.
const ROOMY: f64 = 20.0;

/// How a box is layered.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Recipe {
    /// A unit joins a layer of thickness `t` when its depth is at least this share of `t`.
    share: f64,
    /// Units down to this share of `t` fill a stretch no unit of `share` fits.
    fallback: f64,
    /// Layer thicknesses tried for each layer (the most promising by supply).
    tries: usize,
    /// Place a unit narrower than its stretch against the taller neighbour
    /// (otherwise at the stretch's start).
    by_taller: bool,
}

/// The recipe of the main construction (measured on the large-order bench).
const RECIPE: Recipe = Recipe {
    share: 0.94,
    fallback: 0.85,
    tries: 8,
    by_taller: true,
};

/// True when layers may help and respect every constraint of the request:
/// at least [`MIN_UNITS`] units (`quantities` per kind), [`ROOMY`] of them
/// per box in the `boxes_found` so far and of their mean volume in the
/// largest box type, and boxes filled by volume rather than weight; the
/// rules block building checks for each box type ([`crate::blocks::applies`]),
/// no support check (layers rest on units of unequal depth), no limits
/// across boxes, no pre-packed boxes, no lookback, and box choice by trial
/// fills.
pub fn applies(ctx: &Context<'_>, quantities: &[u32], boxes_found: usize) -> bool {
    let units: u64 = quantities.iter().map(|q| u64::from(*q)).sum();
    let total = |of: fn(&crate::kinds::Kind) -> f64| -> f64 {
        ctx.kinds
            .iter()
            .zip(quantities)
            .map(|(k, q)| of(k) * f64::from(*q))
            .sum()
    };
    let largest = |of: fn(&crate::kinds::BoxKind) -> f64| -> f64 {
        ctx.boxes[..ctx.openable].iter().map(of).fold(0.0, f64::max)
    };
    // Boxes needed by weight against boxes needed by volume, at the most a box holds.
    let by_weight = total(|k| k.weight) / largest(|b| b.payload_max());
    let by_volume = total(|k| k.volume) / largest(|b| b.volume);
    let mean = total(|k| k.volume) / units.max(1) as f64;
    units >= MIN_UNITS
        && units as f64 >= ROOMY * boxes_found as f64
        && by_weight <= by_volume
        && largest(|b| b.volume) >= ROOMY * mean
        && ctx.rule.overhang.is_none()
        && !ctx.limits.counts_boxes()
        && ctx.choice.style == ChoiceStyle::Actual
        && !ctx.order_bound()
        && (0..ctx.openable).all(|b| crate::blocks::applies(ctx, b))
}

/// Packs the units at `remaining` of `order` into boxes opened one at a
/// time (see the module notes). `None` when the deadline stops it.
pub(crate) fn pack<'a>(
    order: &[UnitRef],
    remaining: Vec<usize>,
    ctx: &Context<'a>,
    rule: PlacementRule,
    deadline: &Deadline,
    must_finish: bool,
) -> Option<Vec<FilledBox>> {
    let mut boxes = open_boxes(order, remaining, ctx, rule, deadline, must_finish)?;
    merge_last(&mut boxes, order, ctx, rule);
    Some(boxes)
}

/// One way a unit can lie in a layer: its slot, its placed shape and the
/// rotation that gives it.
#[derive(Debug, Clone, Copy)]
struct Entry {
    slot: usize,
    shape: Vec3,
    perm: Perm,
    /// The shape's place in its kind's list: the entries of one unit at one
    /// depth come in this order.
    shape_index: usize,
}

/// A group in its cell ([`Pool::by_cell`]): what ranks it there, kept
/// together so a cell is read in one sweep.
#[derive(Debug, Clone, Copy)]
struct Member {
    group: usize,
    kind: usize,
    depth: Len,
    smallest: Len,
    shape_index: usize,
    weight: f64,
}

/// The layer axis and the two axes of its face (width, length).
#[derive(Debug, Clone, Copy)]
struct Axes {
    depth: usize,
    width: usize,
    length: usize,
}

impl Axes {
    fn of(rule: &PlacementRule) -> Self {
        Axes {
            depth: rule.priority[0],
            width: rule.priority[1],
            length: rule.priority[2],
        }
    }
}

/// The units a box type can take, each in every shape that fits it, sorted
/// by depth.
struct Pool {
    box_type: usize,
    axes: Axes,
    face: [Len; 2],
    entries: Vec<Entry>,
    /// One entry per kind and shape, of the kind's first unit: units of one
    /// kind in one shape differ only in their slot (see [`Footprints`]).
    /// Ordered as `entries` (depth, slot, shape).
    groups: Vec<Entry>,
    /// The slots of each kind's units, ascending, at `slots[kinds[kind]]`.
    slots: Vec<usize>,
    kinds: Vec<std::ops::Range<usize>>,
    /// The footprints (width, length) of the groups, ascending: the cells
    /// of [`Cells`].
    cells: Vec<(Len, Len)>,
    /// The groups by cell, each cell's in the order of `groups` (so by
    /// depth), and each cell's range of them.
    by_cell: Vec<Member>,
    cell_ranges: Vec<std::ops::Range<usize>>,
    /// The groups as the list of a window sees them, made when a window
    /// first needs it (see [`Window`]).
    list: std::cell::OnceCell<ListIndex>,
    /// [`CELL_SHARE`] (tests set others to try both ways of [`Footprints`]).
    cell_share: usize,
}

impl Pool {
    fn new(b: usize, order: &[UnitRef], slots: &[usize], ctx: &Context<'_>, axes: Axes) -> Self {
        let dims = ctx.boxes[b].dims;
        let face = [dims[axes.width], dims[axes.length]];
        let mut entries = Vec::new();
        for &slot in slots {
            let kind = order[slot].kind;
            if !ctx.holds[b][kind] {
                continue;
            }
            for (shape_index, (shape, perm)) in ctx.kinds[kind].shapes.iter().enumerate() {
                if (0..3).all(|a| shape[a] <= dims[a]) {
                    entries.push(Entry {
                        slot,
                        shape: *shape,
                        perm: *perm,
                        shape_index,
                    });
                }
            }
        }
        entries.sort_by_key(|e| (e.shape[axes.depth], e.slot));
        let mut pool = Pool {
            box_type: b,
            axes,
            face,
            entries,
            groups: Vec::new(),
            slots: Vec::new(),
            kinds: Vec::new(),
            cells: Vec::new(),
            by_cell: Vec::new(),
            cell_ranges: Vec::new(),
            list: std::cell::OnceCell::new(),
            cell_share: CELL_SHARE,
        };
        pool.group(order, ctx.kinds);
        pool
    }

    /// Drops the entries of the units `taken`.
    fn retain(&mut self, taken: &[bool], order: &[UnitRef], kinds: &[crate::kinds::Kind]) {
        self.entries.retain(|e| !taken[e.slot]);
        self.group(order, kinds);
    }

    /// Sets `groups`, `slots`, `kinds` and the cells from `entries`.
    fn group(&mut self, order: &[UnitRef], all: &[crate::kinds::Kind]) {
        let kinds = all.len();
        // Shapes of a kind already grouped, as bits (a kind has at most 6).
        let mut shapes_seen = vec![0u8; kinds];
        let mut by_kind: Vec<(usize, usize)> = Vec::new();
        self.groups.clear();
        for e in &self.entries {
            let kind = order[e.slot].kind;
            let bit = 1u8 << e.shape_index;
            if shapes_seen[kind] & bit == 0 {
                shapes_seen[kind] |= bit;
                self.groups.push(*e);
            }
            by_kind.push((kind, e.slot));
        }
        by_kind.sort_unstable();
        by_kind.dedup();
        let footprint = |e: &Entry| (e.shape[self.axes.width], e.shape[self.axes.length]);
        self.cells = self.groups.iter().map(footprint).collect();
        self.cells.sort_unstable();
        self.cells.dedup();
        // Every group's footprint is among `cells`, so the fallback is never taken.
        let mut by_cell: Vec<(usize, usize)> = (self.groups.iter().enumerate())
            .map(|(g, e)| (self.cell_of(footprint(e)).unwrap_or(0), g))
            .collect();
        by_cell.sort_unstable();
        self.by_cell = (by_cell.iter())
            .map(|&(_, group)| {
                let e = &self.groups[group];
                let kind = order[e.slot].kind;
                Member {
                    group,
                    kind,
                    depth: self.depth(e),
                    smallest: all[kind].sorted[2],
                    shape_index: e.shape_index,
                    weight: all[kind].weight,
                }
            })
            .collect();
        self.cell_ranges = (0..self.cells.len())
            .map(|c| {
                let from = by_cell.partition_point(|(d, _)| *d < c);
                let to = by_cell.partition_point(|(d, _)| *d <= c);
                from..to
            })
            .collect();
        self.list = std::cell::OnceCell::new();
        self.kinds = vec![0..0; kinds];
        self.slots = Vec::with_capacity(by_kind.len());
        for (kind, slot) in by_kind {
            let at = self.slots.len();
            let range = &mut self.kinds[kind];
            if range.start == range.end {
                *range = at..at;
            }
            range.end = at + 1;
            self.slots.push(slot);
        }
    }

    /// The groups as the list of a window sees them ([`ListIndex`]).
    fn list(&self, order: &[UnitRef], all: &[crate::kinds::Kind]) -> &ListIndex {
        self.list.get_or_init(|| ListIndex::new(self, order, all))
    }

    /// The cell (see `cells`) of a footprint.
    fn cell_of(&self, footprint: (Len, Len)) -> Option<usize> {
        self.cells.binary_search(&footprint).ok()
    }

    /// The groups with a depth in `low..=high`.
    fn groups_between(&self, low: Len, high: Len) -> &[Entry] {
        let from = self.groups.partition_point(|e| self.depth(e) < low);
        let to = self.groups.partition_point(|e| self.depth(e) <= high);
        &self.groups[from..to]
    }

    fn depth(&self, e: &Entry) -> Len {
        e.shape[self.axes.depth]
    }

    fn face_area(&self) -> f64 {
        self.face[0] as f64 * self.face[1] as f64
    }

    /// The entries with a depth in `low..=high`.
    fn between(&self, low: Len, high: Len) -> &[Entry] {
        let from = self.entries.partition_point(|e| self.depth(e) < low);
        let to = self.entries.partition_point(|e| self.depth(e) <= high);
        &self.entries[from..to]
    }

    /// Layer thicknesses up to `depth_left` worth trying, best first, and the
    /// smallest depth any unit left can take. A thickness scores by the
    /// footprint area of the units that fit it (up to 1.5 faces: enough to
    /// choose from) times the thickness: thick units have the fewest places
    /// to go, so thick layers come first while they can be filled.
    fn thicknesses(&self, used: &[bool], depth_left: Len, share: f64) -> (Vec<Len>, Len) {
        // (depth, footprint area of the units that can take it), ascending.
        let mut depths: Vec<(Len, f64)> = Vec::new();
        let mut seen: Vec<Len> = vec![Len::MIN; used.len()];
        for e in self.between(0, depth_left) {
            let d = self.depth(e);
            // Each unit once per depth (its other shapes there are rotations of one footprint).
            if used[e.slot] || seen[e.slot] == d {
                continue;
            }
            seen[e.slot] = d;
            let area = e.shape[self.axes.width] as f64 * e.shape[self.axes.length] as f64;
            match depths.last_mut() {
                Some((last, sum)) if *last == d => *sum += area,
                _ => depths.push((d, area)),
            }
        }
        let min_depth = depths.first().map_or(0, |(d, _)| *d);
        let mut prefix = Vec::with_capacity(depths.len() + 1);
        let mut sum = 0.0;
        prefix.push(sum);
        for (_, a) in &depths {
            sum += a;
            prefix.push(sum);
        }
        let mut scored: Vec<(f64, Len)> = depths
            .iter()
            .enumerate()
            .map(|(i, &(t, _))| {
                let from = depths.partition_point(|(d, _)| *d < low_depth(t, share));
                let supply = (prefix[i + 1] - prefix[from]) / self.face_area();
                (supply.min(1.5) * t as f64, t)
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
        (scored.into_iter().map(|(_, t)| t).collect(), min_depth)
    }
}

/// The smallest depth a layer of thickness `t` takes at `share`.
fn low_depth(t: Len, share: f64) -> Len {
    (t as f64 * share).ceil() as Len
}

/// A box filled by layers only: its units, their volume and weight.
struct Layered {
    units: Vec<PlacedUnit>,
    volume: f64,
}

/// Fills a fresh box of the pool's type with layers of the units not `taken`.
fn layer_box(
    pool: &Pool,
    order: &[UnitRef],
    taken: &[bool],
    ctx: &Context<'_>,
    recipe: Recipe,
) -> Layered {
    let bk = &ctx.boxes[pool.box_type];
    let axes = pool.axes;
    let mut used = taken.to_vec();
    let mut units: Vec<PlacedUnit> = Vec::new();
    let mut payload = 0.0;
    let mut volume = 0.0;
    let mut offset: Len = 0;
    loop {
        let depth_left = bk.dims[axes.depth] - offset;
        let (mut thicknesses, min_depth) = pool.thicknesses(&used, depth_left, recipe.share);
        thicknesses.truncate(recipe.tries);
        let mut best: Option<(f64, Len, Layer)> = None;
        for &t in &thicknesses {
            let layer = build_layer(
                pool,
                order,
                ctx,
                &used,
                t,
                recipe,
                bk.payload_max() - payload,
            );
            // Depth left behind that no unit can use counts against the layer.
            let dead = match depth_left - t {
                rest if rest < min_depth => rest,
                _ => 0,
            };
            let ratio = layer.volume / (pool.face_area() * (t + dead) as f64);
            if best.as_ref().is_none_or(|(r, _, _)| ratio > *r) {
                best = Some((ratio, t, layer));
            }
        }
        let Some((_, t, layer)) = best.filter(|(_, _, l)| !l.placed.is_empty()) else {
            break;
        };
        for (e, origin) in &layer.placed {
            let mut at = *origin;
            at[axes.depth] = offset;
            used[e.slot] = true;
            units.push(PlacedUnit {
                slot: e.slot,
                kind: order[e.slot].kind,
                cuboid: Cuboid {
                    origin: at,
                    size: e.shape,
                },
                perm: e.perm,
            });
        }
        payload += layer.weight;
        volume += layer.volume;
        offset += t;
    }
    Layered { units, volume }
}

/// The layered box pushed together towards its origin, as a fill, with the
/// units at `slots` it does not hold offered to the extreme-point fill in order.
fn fill_gaps<'a>(
    b: usize,
    layered: Layered,
    order: &[UnitRef],
    slots: &[usize],
    ctx: &Context<'a>,
    rule: PlacementRule,
) -> BoxFill<'a> {
    let mut units = layered.units;
    // Along every axis, then the first again, so each unit ends resting on
    // the floor or on a unit below it.
    for axis in rule.priority.into_iter().chain([rule.priority[0]]) {
        compact(&mut units, axis);
    }
    let mut fill = BoxFill::rebuild(&ctx.boxes[b], rule, &units, ctx.kinds);
    let mut inside = vec![false; order.len()];
    for u in &units {
        inside[u.slot] = true;
    }
    for &slot in slots {
        let kind = order[slot].kind;
        if !inside[slot] && ctx.holds[b][kind] {
            fill.try_add(slot, kind, ctx.kinds);
        }
    }
    fill
}

/// Moves every unit towards the origin along `axis` until it meets the wall
/// or a unit before it, lowest first, so no unit is left above a gap and the
/// free space gathers at the far end.
fn compact(units: &mut [PlacedUnit], axis: usize) {
    let mut by_start: Vec<usize> = (0..units.len()).collect();
    by_start.sort_by_key(|&i| units[i].cuboid.origin[axis]);
    for (n, &i) in by_start.iter().enumerate() {
        let c = units[i].cuboid;
        let floor = by_start[..n]
            .iter()
            .map(|&j| units[j].cuboid)
            .filter(|below| {
                (0..3)
                    .filter(|&a| a != axis)
                    .all(|a| below.origin[a] < c.end(a) && c.origin[a] < below.end(a))
            })
            .map(|below| below.end(axis))
            .max()
            .unwrap_or(0);
        units[i].cuboid.origin[axis] = floor.min(c.origin[axis]);
    }
}

/// A layer built: its placements (entry, origin on the face) and what they hold.
struct Layer {
    placed: Vec<(Entry, Vec3)>,
    volume: f64,
    weight: f64,
}

/// A stretch of the skyline: from `start` along the width, `width` long, at `height`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Segment {
    start: Len,
    width: Len,
    height: Len,
}

/// A unit as a layer sees it: its entry, its extents on the layer's axes,
/// and what the choice weighs (its weight, its smallest side).
#[derive(Debug, Clone, Copy)]
struct Footprint {
    /// An entry of the first unit it stands for (its slot is not kept up to date).
    entry: Entry,
    kind: usize,
    width: Len,
    length: Len,
}

/// The next unit not taken of each kind, while a layer is built: the
/// footprints of a kind all stand for that one.
struct KindSlots<'p> {
    pool: &'p Pool,
    /// Per kind, the position in `pool.slots` of its next unit not taken
    /// (`UNSEEN` until asked).
    next: Vec<usize>,
}

const UNSEEN: usize = usize::MAX;

impl<'p> KindSlots<'p> {
    fn new(pool: &'p Pool, kinds: usize) -> Self {
        KindSlots {
            pool,
            next: vec![UNSEEN; kinds],
        }
    }

    /// Finds the first unit of `kind` at or after position `from` not `used`.
    fn seek(&mut self, kind: usize, from: usize, used: &[bool]) {
        let range = &self.pool.kinds[kind];
        let slots = &self.pool.slots;
        let mut at = from.max(range.start);
        while at < range.end && used[slots[at]] {
            at += 1;
        }
        self.next[kind] = at;
    }

    /// The next unit of `kind` not taken, if any.
    fn get(&self, kind: usize) -> Option<usize> {
        let at = self.next[kind];
        (at < self.pool.kinds[kind].end).then(|| self.pool.slots[at])
    }

    /// Takes the next unit of `kind`.
    fn take(&mut self, kind: usize, used: &[bool]) {
        let at = self.next[kind];
        self.seek(kind, at + 1, used);
    }
}

/// How footprints of one class for a stretch rank (see [`build_layer`]),
/// lowest best: depth close to the layer's thickness (by step), the larger
/// smallest side, the wider, then by depth, the unit's slot and its shape
/// (the order of the units' entries).
type Order = (Len, Len, Len, Len, usize, usize);

impl Footprint {
    fn new(e: &Entry, order: &[UnitRef], axes: Axes) -> Self {
        Footprint {
            entry: *e,
            kind: order[e.slot].kind,
            width: e.shape[axes.width],
            length: e.shape[axes.length],
        }
    }
}

/// What a layer needs to build footprints from the pool's groups.
#[derive(Clone, Copy)]
struct Source<'s, 'c> {
    pool: &'s Pool,
    order: &'s [UnitRef],
    ctx: &'s Context<'c>,
    used: &'s [bool],
    step: Len,
}

impl Source<'_, '_> {
    fn footprint(&self, group: usize) -> Footprint {
        let e = &self.pool.groups[group];
        Footprint::new(e, self.order, self.pool.axes)
    }

    /// The slot of the next unit of `kind` not taken, if any.
    fn slot(&self, units: &mut KindSlots<'_>, kind: usize) -> Option<usize> {
        if units.next[kind] == UNSEEN {
            units.seek(kind, 0, self.used);
        }
        units.get(kind)
    }
}

/// One footprint (width and length) of a layer's window, with the range of
/// its groups in [`Pool::by_cell`] and its best footprint while fresh.
struct LayerCell {
    width: Len,
    length: Len,
    groups: std::ops::Range<usize>,
    /// The least [`Order`] of its footprints with a unit left and that
    /// footprint's group; `None` inside when none is left; `None` outside
    /// when a kind of the cell was taken since it was found.
    best: Option<Option<(Order, usize)>>,
}

/// The cells of a layer's window: every cell of the pool with a group in it.
/// A footprint's class for a stretch depends on its width and length alone
/// and the rest of its rank is its [`Order`], so a stretch looks at the best
/// footprint of each cell instead of every footprint; taking a unit only
/// makes the cells of its kind look again.
struct Cells {
    cells: Vec<LayerCell>,
    /// Each width, ascending, with the range of its cells in `cells`.
    widths: Vec<(Len, std::ops::Range<usize>)>,
}

impl Cells {
    fn of(pool: &Pool, low: Len, high: Len) -> Self {
        let mut cells: Vec<LayerCell> = Vec::new();
        let mut widths: Vec<(Len, std::ops::Range<usize>)> = Vec::new();
        for (c, &(width, length)) in pool.cells.iter().enumerate() {
            let range = pool.cell_ranges[c].clone();
            let in_cell = &pool.by_cell[range.clone()];
            let from = range.start + in_cell.partition_point(|m| m.depth < low);
            let to = range.start + in_cell.partition_point(|m| m.depth <= high);
            if from == to {
                continue;
            }
            if widths.last().is_none_or(|(w, _)| *w != width) {
                widths.push((width, cells.len()..cells.len()));
            }
            cells.push(LayerCell {
                width,
                length,
                groups: from..to,
                best: None,
            });
            if let Some((_, r)) = widths.last_mut() {
                r.end = cells.len();
            }
        }
        Cells { cells, widths }
    }

    /// The best footprint of cell `c` among those that `fit` (by [`Order`]):
    /// its order and group.
    fn best_in(
        &self,
        c: usize,
        src: &Source<'_, '_>,
        units: &mut KindSlots<'_>,
        fits: impl Fn(f64) -> bool,
    ) -> Option<(Order, usize)> {
        let cell = &self.cells[c];
        let mut best: Option<(Order, usize)> = None;
        for i in cell.groups.clone() {
            let m = &src.pool.by_cell[i];
            let Some(slot) = src.slot(units, m.kind) else {
                continue;
            };
            let order = (
                -(m.depth / src.step),
                -m.smallest,
                -cell.width,
                m.depth,
                slot,
                m.shape_index,
            );
            if best.is_none_or(|(o, _)| order < o) && fits(m.weight) {
                best = Some((order, i));
            }
        }
        best
    }

    /// Cell `c`'s best footprint with a unit left, found again if stale.
    fn fresh(
        &mut self,
        c: usize,
        src: &Source<'_, '_>,
        units: &mut KindSlots<'_>,
    ) -> Option<(Order, usize)> {
        if let Some(best) = self.cells[c].best {
            return best;
        }
        let best = self.best_in(c, src, units, |_| true);
        self.cells[c].best = Some(best);
        best
    }

    /// After a unit of `f`'s kind is taken: the cells of the kind's shapes
    /// whose best is of that kind look again. (The kind's footprints only
    /// rank lower or leave, so another kind's best stays the best.)
    fn retake(&mut self, f: &Footprint, src: &Source<'_, '_>) {
        let axes = src.pool.axes;
        for (shape, _) in &src.ctx.kinds[f.kind].shapes {
            let key = (shape[axes.width], shape[axes.length]);
            if let Ok(c) = (self.cells).binary_search_by_key(&key, |c| (c.width, c.length)) {
                let cell = &mut self.cells[c];
                if let Some(Some((_, at))) = cell.best {
                    if src.pool.by_cell[at].kind == f.kind {
                        cell.best = None;
                    }
                }
            }
        }
    }
}

/// The footprints a layer chooses from: one per kind and shape of the groups
/// given ([`Pool::groups`]) with a unit not `used`. Choosing among them is
/// choosing among the units' entries: a kind's units in one shape differ only
/// in their slot, and the first one not taken ranks first (entries are ordered
/// by depth, then slot, then shape), so each layer looks at kinds, not units.
///
/// When the pool has few footprints (width, length) for the groups of the
/// window, by [`Cells`]; otherwise as a list scanned at every stretch.
enum Footprints<'p> {
    List(Window<'p>),
    Cells(Cells),
}

impl<'p> Footprints<'p> {
    /// The footprints of the groups with a depth in `low..=high`.
    fn of(src: &Source<'p, '_>, low: Len, high: Len) -> Self {
        if low > high {
            return Footprints::List(Window::empty());
        }
        let groups = src.pool.groups_between(low, high);
        if src.pool.cells.len().saturating_mul(src.pool.cell_share) <= groups.len() {
            return Footprints::Cells(Cells::of(src.pool, low, high));
        }
        Footprints::List(Window::of(src, low, high))
    }

    /// The narrowest width and shortest length among the footprints left.
    fn least(&mut self, src: &Source<'_, '_>, units: &mut KindSlots<'_>) -> (Len, Len) {
        let mut least = (Len::MAX, Len::MAX);
        match self {
            Footprints::List(list) => least = list.least(src, units),
            Footprints::Cells(cells) => {
                for c in 0..cells.cells.len() {
                    if cells.fresh(c, src, units).is_some() {
                        let cell = &cells.cells[c];
                        least = (least.0.min(cell.width), least.1.min(cell.length));
                    }
                }
            }
        }
        least
    }

    /// The best footprint at most the stretch's width wide and its room
    /// long, by its [`Stretch::class`] and then by [`Order`], among those
    /// with a unit left that `fit`; with the slot of that unit.
    fn best(
        &mut self,
        src: &Source<'_, '_>,
        units: &mut KindSlots<'_>,
        stretch: &Stretch,
        fits: impl Fn(f64) -> bool,
    ) -> Option<(Footprint, usize)> {
        let mut best: Option<((u8, u8), Order, Footprint)> = None;
        let (width, room) = (stretch.width, stretch.room);
        let class = |w: Len, l: Len| stretch.class(w, l);
        match self {
            Footprints::List(list) => {
                best = (list.best(src, units, stretch, fits))
                    .map(|(class, order, at)| (class, order, src.footprint(at)));
            }
            Footprints::Cells(cells) => {
                let mut found: Option<((u8, u8), Order, usize)> = None;
                for w in 0..cells.widths.len() {
                    let (cell_width, range) = cells.widths[w].clone();
                    if cell_width > width {
                        break;
                    }
                    for c in range {
                        if cells.cells[c].length > room {
                            break;
                        }
                        let rank = class(cell_width, cells.cells[c].length);
                        if found.as_ref().is_some_and(|(b, _, _)| *b < rank) {
                            continue;
                        }
                        let Some((mut order, mut at)) = cells.fresh(c, src, units) else {
                            continue;
                        };
                        if !fits(src.pool.by_cell[at].weight) {
                            // Rare: the best is too heavy; the cell's best that is not.
                            let Some(found) = cells.best_in(c, src, units, &fits) else {
                                continue;
                            };
                            (order, at) = found;
                        }
                        if found
                            .as_ref()
                            .is_none_or(|(b, o, _)| (rank, order) < (*b, *o))
                        {
                            found = Some((rank, order, at));
                        }
                    }
                }
                if let Some((rank, order, at)) = found {
                    best = Some((rank, order, src.footprint(src.pool.by_cell[at].group)));
                }
            }
        }
        best.map(|(_, order, f)| (f, order.4))
    }

    /// After a unit of `f`'s kind is taken (`units` moved on).
    fn retake(&mut self, f: &Footprint, src: &Source<'_, '_>) {
        if let Footprints::Cells(cells) = self {
            cells.retake(f, src);
        }
    }
}

/// The stretch a layer fills next, as the choice of a footprint sees it.
#[derive(Debug, Clone, Copy)]
struct Stretch {
    width: Len,
    height: Len,
    /// The face's length left above it.
    room: Len,
    face_length: Len,
    /// The heights of its neighbours.
    left: Option<Len>,
    right: Option<Len>,
    /// The narrowest and shortest close footprints left.
    min_w: Len,
    min_l: Len,
}

impl Stretch {
    /// The class of a footprint (at most the stretch's width and room) by
    /// its width and length; then [`Order`] ranks within a class.
    fn class(&self, width: Len, length: Len) -> (u8, u8) {
        // Fills the stretch's width exactly, or leaves room a footprint fits.
        let width_class = match self.width - width {
            0 => 0,
            r if r >= self.min_w => 1,
            _ => 2,
        };
        // Ends level with a neighbour or the face's end, or leaves room.
        let top = self.height + length;
        let length_class =
            if top == self.face_length || Some(top) == self.left || Some(top) == self.right {
                0
            } else if self.face_length - top >= self.min_l {
                1
            } else {
                2
            };
        (width_class, length_class)
    }

    /// The lengths of class 0 (ending level with the face's end or a
    /// neighbour) that fit the room, each once.
    fn level_lengths(&self) -> impl Iterator<Item = Len> {
        let [a, b, c] = [Some(self.face_length), self.left, self.right].map(|top| {
            top.map(|t| t - self.height)
                .filter(|&l| l > 0 && l <= self.room)
        });
        let b = b.filter(|&l| a != Some(l));
        let c = c.filter(|&l| a != Some(l) && b != Some(l));
        [a, b, c].into_iter().flatten()
    }
}

/// A group as the list of a layer's window sees it ([`Pool::flat`]).
#[derive(Debug, Clone, Copy)]
struct Flat {
    group: usize,
    kind: usize,
    width: Len,
    length: Len,
    depth: Len,
    smallest: Len,
    shape_index: usize,
    weight: f64,
}

/// A pool's groups as the list of a window sees them (see [`Window`]).
struct ListIndex {
    /// The groups by depth, then width, length and group.
    flat: Vec<Flat>,
    /// Their widths, for a search by width within a depth's groups.
    widths: Vec<Len>,
    /// Each depth of `flat`, ascending, with where its groups begin.
    depth_starts: Vec<(Len, usize)>,
    /// At each position of `flat`, the shortest length of its depth's
    /// groups up to it (so of those at most its width).
    shortest_so_far: Vec<Len>,
    /// `flat` by width and by length, then depth: a width's or a length's
    /// groups in a depth window are one range of each.
    by_width: SideIndex,
    by_length: SideIndex,
}

impl ListIndex {
    fn new(pool: &Pool, order: &[UnitRef], all: &[crate::kinds::Kind]) -> Self {
        let mut flat: Vec<Flat> = (pool.groups.iter().enumerate())
            .map(|(group, e)| {
                let kind = order[e.slot].kind;
                Flat {
                    group,
                    kind,
                    width: e.shape[pool.axes.width],
                    length: e.shape[pool.axes.length],
                    depth: pool.depth(e),
                    smallest: all[kind].sorted[2],
                    shape_index: e.shape_index,
                    weight: all[kind].weight,
                }
            })
            .collect();
        flat.sort_unstable_by_key(|f| (f.depth, f.width, f.length, f.group));
        let mut depth_starts: Vec<(Len, usize)> = Vec::new();
        let mut shortest_so_far: Vec<Len> = Vec::with_capacity(flat.len());
        for (at, f) in flat.iter().enumerate() {
            let mut shortest = f.length;
            if depth_starts.last().is_none_or(|(d, _)| *d != f.depth) {
                depth_starts.push((f.depth, at));
            } else if let Some(&before) = shortest_so_far.last() {
                shortest = shortest.min(before);
            }
            shortest_so_far.push(shortest);
        }
        let by_width = SideIndex::new(&flat, |f| f.width);
        let by_length = SideIndex::new(&flat, |f| f.length);
        ListIndex {
            widths: flat.iter().map(|f| f.width).collect(),
            flat,
            depth_starts,
            shortest_so_far,
            by_width,
            by_length,
        }
    }

    /// The groups of depth `depth_starts[d]`, as positions in `flat`.
    fn run(&self, d: usize) -> std::ops::Range<usize> {
        let end = (self.depth_starts.get(d + 1)).map_or(self.flat.len(), |(_, at)| *at);
        self.depth_starts[d].1..end
    }
}

/// The positions of [`ListIndex::flat`] by one side (width or length), then
/// depth, then position.
#[derive(Default)]
struct SideIndex {
    /// Each value of the side, ascending, with where its positions begin.
    values: Vec<(Len, usize)>,
    /// The depth of each position below, for a search within a value's range.
    depths: Vec<Len>,
    positions: Vec<u32>,
}

impl SideIndex {
    fn new(flat: &[Flat], side: impl Fn(&Flat) -> Len) -> Self {
        let mut keyed: Vec<(Len, Len, u32)> = (flat.iter().enumerate())
            .map(|(p, f)| (side(f), f.depth, p as u32))
            .collect();
        keyed.sort_unstable();
        let mut values: Vec<(Len, usize)> = Vec::new();
        for (at, (value, _, _)) in keyed.iter().enumerate() {
            if values.last().is_none_or(|(v, _)| v != value) {
                values.push((*value, at));
            }
        }
        SideIndex {
            values,
            depths: keyed.iter().map(|k| k.1).collect(),
            positions: keyed.iter().map(|k| k.2).collect(),
        }
    }

    /// The positions of value number `v` (in `values`).
    fn range_of(&self, v: usize) -> std::ops::Range<usize> {
        let end = self
            .values
            .get(v + 1)
            .map_or(self.positions.len(), |(_, at)| *at);
        self.values[v].1..end
    }

    /// The positions of the side `value` with a depth in `low..=high`.
    fn between(&self, value: Len, low: Len, high: Len) -> &[u32] {
        let Ok(v) = self.values.binary_search_by_key(&value, |(v, _)| *v) else {
            return &[];
        };
        self.depth_range(v, low, high)
    }

    /// The positions of value number `v` with a depth in `low..=high`.
    fn depth_range(&self, v: usize, low: Len, high: Len) -> &[u32] {
        let range = self.range_of(v);
        let depths = &self.depths[range.clone()];
        let from = depths.partition_point(|d| *d < low);
        let to = depths.partition_point(|d| *d <= high).max(from);
        &self.positions[range.start + from..range.start + to]
    }
}

/// A layer window's footprints as a list (sizes that rarely repeat): the
/// pool's groups of the window's depths, found through the pool's orders of
/// them ([`Pool::flat`] and its indexes), so a layer builds nothing. A
/// stretch's choice looks first where the best classes can only be: the
/// footprints exactly its width (width class 0), then those of the lengths
/// ending level (length class 0); only when neither has one with a unit
/// left that fits does it scan the footprints narrower than the stretch,
/// each depth's by width up to the stretch's. The choice is the one a scan
/// of every footprint makes: ranks (class, [`Order`]) differ between any
/// two footprints (the order ends in the unit's slot and the shape's index).
struct Window<'p> {
    list: Option<&'p ListIndex>,
    low: Len,
    high: Len,
    /// The window's depths, as positions in [`Pool::depth_starts`].
    depths: std::ops::Range<usize>,
}

impl<'p> Window<'p> {
    fn empty() -> Self {
        Window {
            list: None,
            low: 1,
            high: 0,
            depths: 0..0,
        }
    }

    fn of(src: &Source<'p, '_>, low: Len, high: Len) -> Self {
        let list = src.pool.list(src.order, src.ctx.kinds);
        let from = list.depth_starts.partition_point(|(d, _)| *d < low);
        let to = list.depth_starts.partition_point(|(d, _)| *d <= high);
        Window {
            list: Some(list),
            low,
            high,
            depths: from..to,
        }
    }

    /// The narrowest width and shortest length among the footprints with a unit left.
    fn least(&self, src: &Source<'_, '_>, units: &mut KindSlots<'_>) -> (Len, Len) {
        let Some(list) = self.list else {
            return (Len::MAX, Len::MAX);
        };
        let mut width = Len::MAX;
        for d in self.depths.clone() {
            // Each depth's groups come by width.
            let first = list
                .run(d)
                .map(|p| &list.flat[p])
                .take_while(|f| f.width < width)
                .find(|f| src.slot(units, f.kind).is_some());
            if let Some(f) = first {
                width = f.width;
            }
        }
        if width == Len::MAX {
            // No footprint of the window has a unit left.
            return (width, width);
        }
        // The lengths ascending, each one's groups in the window at once.
        let index = &list.by_length;
        let length = (0..index.values.len()).find(|&v| {
            (index.depth_range(v, self.low, self.high).iter())
                .any(|&p| src.slot(units, list.flat[p as usize].kind).is_some())
        });
        (width, length.map_or(Len::MAX, |v| index.values[v].0))
    }

    /// See [`Footprints::best`]: the best footprint for `stretch` with its
    /// rank and group, as a scan of every footprint of the window finds it.
    fn best(
        &self,
        src: &Source<'_, '_>,
        units: &mut KindSlots<'_>,
        stretch: &Stretch,
        fits: impl Fn(f64) -> bool,
    ) -> Option<((u8, u8), Order, usize)> {
        type Best = Option<((u8, u8), Order, usize)>;
        let list = self.list?;
        let mut consider = |best: &mut Best, f: &Flat| {
            if f.width > stretch.width || f.length > stretch.room || !fits(f.weight) {
                return;
            }
            let class = stretch.class(f.width, f.length);
            let head = (-(f.depth / src.step), -f.smallest, -f.width, f.depth);
            // Ranked below the best by what precedes the slot: it cannot win,
            // whatever its slot (so its unit need not be looked up).
            if best
                .as_ref()
                .is_some_and(|(b, o, _)| (*b, (o.0, o.1, o.2, o.3)) < (class, head))
            {
                return;
            }
            let Some(slot) = src.slot(units, f.kind) else {
                return;
            };
            let order = (head.0, head.1, head.2, head.3, slot, f.shape_index);
            if best
                .as_ref()
                .is_none_or(|(b, o, _)| (class, order) < (*b, *o))
            {
                *best = Some((class, order, f.group));
            }
        };
        let mut best: Best = None;
        // Width class 0 is exactly the stretch's width: the best of those is
        // the best of all.
        for &p in (list.by_width).between(stretch.width, self.low, self.high) {
            consider(&mut best, &list.flat[p as usize]);
        }
        if best.is_some() {
            return best;
        }
        // None of width class 0: every one of class (1, 0) has a level length.
        for length in stretch.level_lengths() {
            for &p in (list.by_length).between(length, self.low, self.high) {
                consider(&mut best, &list.flat[p as usize]);
            }
        }
        if best.as_ref().is_some_and(|(class, _, _)| *class == (1, 0)) {
            return best;
        }
        // Deepest first: once the best is of class (1, 1), the least class
        // left here, the footprints of a depth of a lower depth step (all
        // shallower ones after it) rank below it.
        for d in self.depths.clone().rev() {
            if let Some(((1, 1), o, _)) = best {
                if -(list.depth_starts[d].0 / src.step) > o.0 {
                    break;
                }
            }
            let run = list.run(d);
            // By width: the narrower ones first, and none at all when even
            // the shortest of the run's narrower ones is too long.
            let narrower =
                run.start + (list.widths[run.clone()]).partition_point(|w| *w < stretch.width);
            if narrower == run.start || list.shortest_so_far[narrower - 1] > stretch.room {
                continue;
            }
            for f in &list.flat[run.start..narrower] {
                consider(&mut best, f);
            }
        }
        best
    }
}

/// [`Cells`] serve a window when the pool has at most one footprint (width,
/// length) for this many of the window's groups; with more, most cells would
/// hold one group and a plain list is as quick.
const CELL_SHARE: usize = 2;

/// One layer of thickness `t` by skyline best fit among the units not `used`
/// that turn to a depth in `[share * t, t]` (or, where none of those fits a
/// stretch, `[fallback * t, t]`), within `payload_left`.
fn build_layer(
    pool: &Pool,
    order: &[UnitRef],
    ctx: &Context<'_>,
    used: &[bool],
    t: Len,
    recipe: Recipe,
    payload_left: f64,
) -> Layer {
    let (axes, face) = (pool.axes, pool.face);
    let low = low_depth(t, recipe.share);
    let step = (t / DEPTH_STEPS).max(1);
    // Units of one kind in one shape are alike: one footprint stands for them
    // all, holding the first of them not taken yet (see [`Footprints`]).
    let mut units = KindSlots::new(pool, ctx.kinds.len());
    let src = Source {
        pool,
        order,
        ctx,
        used,
        step,
    };
    let mut close = Footprints::of(&src, low, t);
    let mut loose = match recipe.fallback < recipe.share {
        true => Footprints::of(&src, low_depth(t, recipe.fallback), low - 1),
        false => Footprints::List(Window::empty()),
    };
    // The narrowest and shortest footprints left among the close units (a
    // gap narrower is lost) and among all (a stretch narrower takes nothing).
    let (mut min_w, mut min_l) = close.least(&src, &mut units);
    let (loose_w, loose_l) = loose.least(&src, &mut units);
    let mut skyline = vec![Segment {
        start: 0,
        width: face[0],
        height: 0,
    }];
    let mut layer = Layer {
        placed: Vec::new(),
        volume: 0.0,
        weight: 0.0,
    };
    while let Some(i) = (0..skyline.len()).min_by_key(|&i| (skyline[i].height, skyline[i].start)) {
        let seg = skyline[i];
        if seg.height >= face[1] {
            break;
        }
        let room = face[1] - seg.height;
        let left = i.checked_sub(1).map(|j| skyline[j].height);
        let right = skyline.get(i + 1).map(|s| s.height);
        let stretch = Stretch {
            width: seg.width,
            height: seg.height,
            room,
            face_length: face[1],
            left,
            right,
            min_w,
            min_l,
        };
        let fits = |weight: f64| layer.weight + weight <= payload_left + WEIGHT_SLACK;
        let reachable = seg.width >= min_w.min(loose_w) && room >= min_l.min(loose_l);
        let best = match reachable {
            true => [&mut close, &mut loose]
                .into_iter()
                .find_map(|list| list.best(&src, &mut units, &stretch, fits)),
            false => None,
        };
        match best {
            Some((f, slot)) => {
                let e = Entry { slot, ..f.entry };
                units.take(f.kind, used);
                close.retake(&f, &src);
                loose.retake(&f, &src);
                if f.width == min_w || f.length == min_l {
                    (min_w, min_l) = close.least(&src, &mut units);
                }
                let k = &ctx.kinds[f.kind];
                layer.weight += k.weight;
                layer.volume += k.volume;
                let w = f.width;
                let at_right = recipe.by_taller
                    && w < seg.width
                    && right.unwrap_or(face[1]) > left.unwrap_or(face[1]);
                let start = match at_right {
                    true => seg.start + seg.width - w,
                    false => seg.start,
                };
                let mut origin = [0; 3];
                origin[axes.width] = start;
                origin[axes.length] = seg.height;
                layer.placed.push((e, origin));
                let top = Segment {
                    start,
                    width: w,
                    height: seg.height + f.length,
                };
                if w < seg.width {
                    let rest = Segment {
                        start: if at_right { seg.start } else { seg.start + w },
                        width: seg.width - w,
                        height: seg.height,
                    };
                    skyline[i] = rest;
                    skyline.insert(if at_right { i + 1 } else { i }, top);
                } else {
                    skyline[i] = top;
                }
            }
            // Nothing fits this stretch: raise it to its lower neighbour.
            None => {
                skyline[i].height = match (left, right) {
                    (Some(a), Some(b)) => a.min(b),
                    (Some(a), None) => a,
                    (None, Some(b)) => b,
                    (None, None) => face[1],
                }
            }
        }
        merge(&mut skyline);
    }
    layer
}

/// Joins neighbouring stretches at the same height.
fn merge(skyline: &mut Vec<Segment>) {
    let mut i = 0;
    while i + 1 < skyline.len() {
        if skyline[i].height == skyline[i + 1].height {
            skyline[i].width += skyline[i + 1].width;
            skyline.remove(i + 1);
        } else {
            i += 1;
        }
    }
}

/// Opens one box at a time until no unit of `remaining` is left. Each box
/// type roomy enough (see [`ROOMY`]) gets a layered trial (under
/// `most-items` not when a larger type's layers already hold more than it
/// can); the others, and any that could take every unit left, a plain
/// extreme-point trial. The best layered trial gets its gaps filled and a
/// plain trial of its type too; then the best trial wins: the one taking
/// every unit left, then by the goal (most volume or least projected cost).
fn open_boxes(
    order: &[UnitRef],
    mut remaining: Vec<usize>,
    ctx: &Context<'_>,
    rule: PlacementRule,
    deadline: &Deadline,
    must_finish: bool,
) -> Option<Vec<FilledBox>> {
    let axes = Axes::of(&rule);
    let mut by_volume: Vec<usize> = (0..ctx.openable).collect();
    by_volume.sort_by(|&a, &b| {
        ctx.boxes[b]
            .volume
            .total_cmp(&ctx.boxes[a].volume)
            .then(a.cmp(&b))
    });
    // Made for a box type when it is first layered (under lowest-cost most
    // never are): a pool of every unit in every shape is large, and making
    // one per box type of a big catalogue was most of the time.
    let mut pools: Vec<Option<Pool>> = (0..ctx.openable).map(|_| None).collect();
    let mut pooled = remaining.len();
    let mut taken = vec![true; order.len()];
    for &s in &remaining {
        taken[s] = false;
    }
    let mut boxes = Vec::new();
    while !remaining.is_empty() {
        if deadline.stops(must_finish) {
            return None;
        }
        let volume_left: f64 = remaining
            .iter()
            .map(|s| ctx.kinds[order[*s].kind].volume)
            .sum();
        let mut trials: Vec<(usize, BoxFill<'_>)> = Vec::new();
        let mut layered: Vec<(usize, Layered)> = Vec::new();
        let cheapest_rate = rate(ctx);
        // The least projected cost of a layered trial so far (lowest-cost).
        let mut best_projected = f64::INFINITY;
        for &b in &by_volume {
            if !remaining.iter().any(|s| ctx.holds[b][order[*s].kind]) {
                continue;
            }
            let room = ctx.boxes[b].volume;
            let roomy = room >= ROOMY * volume_left / remaining.len() as f64;
            if volume_left <= room * (1.0 + 1e-9) || !roomy {
                let plain = crate::select::fill_box(b, order, &remaining, ctx, rule, false);
                let all_in = plain.units.len() == remaining.len();
                trials.push((b, plain));
                if all_in || !roomy {
                    continue;
                }
            }
            let beaten = match ctx.goal {
                Goal::MostItems => {
                    layered.iter().any(|(_, l)| l.volume >= room) && volume_left > room
                }
                // Layers hold at most the box's volume, so its projected cost
                // (below) is at least this; a later type must be strictly
                // cheaper to win. Exact for a rate of 0 or more (with a
                // negative one the bound would not hold).
                Goal::LowestCost => {
                    let bk = &ctx.boxes[b];
                    let least = bk.cost(bk.weight_tare)
                        + (volume_left - room.min(volume_left)) * cheapest_rate;
                    cheapest_rate >= 0.0 && least >= best_projected
                }
            };
            if !beaten {
                let pool =
                    pools[b].get_or_insert_with(|| Pool::new(b, order, &remaining, ctx, axes));
                let l = layer_box(pool, order, &taken, ctx, RECIPE);
                let bk = &ctx.boxes[b];
                let projected = bk.cost(bk.weight_tare) + (volume_left - l.volume) * cheapest_rate;
                best_projected = best_projected.min(projected);
                layered.push((b, l));
            }
        }
        let best_layered = (0..layered.len()).min_by(|&i, &j| {
            let rank = |(b, l): &(usize, Layered)| {
                let bk = &ctx.boxes[*b];
                let projected = bk.cost(bk.weight_tare) + (volume_left - l.volume) * cheapest_rate;
                (l.volume, projected)
            };
            let (x, y) = (rank(&layered[i]), rank(&layered[j]));
            let by_goal = match ctx.goal {
                Goal::MostItems => y.0.total_cmp(&x.0),
                Goal::LowestCost => x.1.total_cmp(&y.1),
            };
            by_goal.then(i.cmp(&j))
        });
        if let Some(i) = best_layered {
            let (b, l) = layered.swap_remove(i);
            // The plain fill of the same box type, when not tried yet: on
            // some boxes it does better.
            if !trials.iter().any(|(t, _)| *t == b) {
                let plain = crate::select::fill_box(b, order, &remaining, ctx, rule, false);
                trials.push((b, plain));
            }
            trials.push((b, fill_gaps(b, l, order, &remaining, ctx, rule)));
        }
        let (b, fill) = best_trial(trials, remaining.len(), volume_left, cheapest_rate, ctx)?;
        if fill.units.is_empty() {
            return None;
        }
        for u in &fill.units {
            taken[u.slot] = true;
        }
        remaining.retain(|s| !taken[*s]);
        // Drop the units packed from the pools once a quarter of them is gone.
        if remaining.len() * 4 < pooled * 3 {
            for pool in pools.iter_mut().flatten() {
                pool.retain(&taken, order, ctx.kinds);
            }
            pooled = remaining.len();
        }
        boxes.push(FilledBox {
            box_type: b,
            units: fill.units,
            payload: fill.payload,
        });
    }
    Some(boxes)
}

/// The lowest cost per volume of any empty box type, a lower estimate of
/// what volume left behind will cost.
fn rate(ctx: &Context<'_>) -> f64 {
    ctx.boxes[..ctx.openable]
        .iter()
        .map(|b| b.cost(b.weight_tare) / b.volume.max(f64::MIN_POSITIVE))
        .fold(f64::INFINITY, f64::min)
}

/// The trial that takes all `units` left wins; then, under `most-items`, the
/// one holding the most volume, under `lowest-cost` the least projected cost
/// (its own plus the volume it leaves at the best rate, `cheapest_rate`,
/// from [`rate`]); then the earlier.
fn best_trial<'a>(
    mut trials: Vec<(usize, BoxFill<'a>)>,
    units: usize,
    volume_left: f64,
    cheapest_rate: f64,
    ctx: &Context<'_>,
) -> Option<(usize, BoxFill<'a>)> {
    let score = |(b, f): &(usize, BoxFill<'_>)| {
        let bk = &ctx.boxes[*b];
        let cost = bk.cost(bk.weight_tare + f.payload);
        let all_in = f.units.len() == units;
        let projected = match all_in {
            true => cost,
            false => cost + (volume_left - f.volume_used()) * cheapest_rate,
        };
        (all_in, f.volume_used(), projected)
    };
    let best = (0..trials.len()).min_by(|&i, &j| {
        let (x, y) = (score(&trials[i]), score(&trials[j]));
        let by_goal = match ctx.goal {
            Goal::MostItems => y.1.total_cmp(&x.1).then(x.2.total_cmp(&y.2)),
            Goal::LowestCost => x.2.total_cmp(&y.2).then(y.1.total_cmp(&x.1)),
        };
        y.0.cmp(&x.0).then(by_goal).then(i.cmp(&j))
    })?;
    Some(trials.swap_remove(best))
}

/// Box types tried when two boxes are merged under `lowest-cost`.
const MERGE_TYPES: usize = 2;

/// Orders of the units tried when two boxes are merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    /// Largest volume first.
    Volume,
    /// Largest smallest side first (chunky units first).
    Chunky,
    /// Longest side first.
    Longest,
}

/// Ways to fill one box with the units of two, tried in turn: layers with
/// wider depth windows than the main recipe (a small pool needs them), then
/// plain extreme-point fills in several orders.
fn merge_methods() -> Vec<(Key, Option<Recipe>, Merit)> {
    let mut methods = Vec::new();
    for share in [0.8, 0.88] {
        for by_taller in [true, false] {
            for key in [Key::Volume, Key::Chunky] {
                let recipe = Recipe {
                    share,
                    fallback: share - 0.1,
                    by_taller,
                    ..RECIPE
                };
                methods.push((key, Some(recipe), Merit::FirstPoint));
            }
        }
    }
    for key in [Key::Volume, Key::Chunky, Key::Longest] {
        for merit in [Merit::FirstPoint, Merit::ResidualSpace] {
            methods.push((key, None, merit));
        }
    }
    methods
}

/// When the last box and the emptiest other box hold no more volume than one
/// box can, tries to put all their units into one box (under `lowest-cost`
/// only into a cheaper one); the first way that fits them replaces both.
fn merge_last(
    boxes: &mut Vec<FilledBox>,
    order: &[UnitRef],
    ctx: &Context<'_>,
    rule: PlacementRule,
) {
    let Some(last) = boxes.len().checked_sub(1).filter(|l| *l > 0) else {
        return;
    };
    let volume = |b: &FilledBox| -> f64 { b.units.iter().map(|u| ctx.kinds[u.kind].volume).sum() };
    let Some(partner) = (0..last).min_by(|&a, &b| volume(&boxes[a]).total_cmp(&volume(&boxes[b])))
    else {
        return;
    };
    let both = volume(&boxes[last]) + volume(&boxes[partner]);
    let was = boxes[last].cost(ctx) + boxes[partner].cost(ctx);
    let slots: Vec<usize> = [partner, last]
        .iter()
        .flat_map(|&i| boxes[i].units.iter().map(|u| u.slot))
        .collect();
    let mut types: Vec<usize> = (0..ctx.openable)
        .filter(|&b| {
            ctx.boxes[b].volume >= both && slots.iter().all(|s| ctx.holds[b][order[*s].kind])
        })
        .collect();
    // Under most-items the largest box type is the likeliest to take them
    // all (the downsize pass shrinks it after); under lowest-cost the
    // cheapest first.
    types.sort_by(|&a, &b| {
        let (x, y) = (&ctx.boxes[a], &ctx.boxes[b]);
        let by_goal = match ctx.goal {
            Goal::MostItems => y.volume.total_cmp(&x.volume),
            Goal::LowestCost => x.cost(x.weight_tare).total_cmp(&y.cost(y.weight_tare)),
        };
        by_goal.then(a.cmp(&b))
    });
    types.truncate(match ctx.goal {
        Goal::MostItems => 1,
        Goal::LowestCost => MERGE_TYPES,
    });
    let axes = Axes::of(&rule);
    for (key, recipe, merit) in merge_methods() {
        let ordered = reordered(&slots, order, ctx, key);
        let rule = PlacementRule { merit, ..rule };
        for &b in &types {
            let fill = match recipe {
                Some(recipe) => {
                    let pool = Pool::new(b, order, &ordered, ctx, axes);
                    let mut taken = vec![true; order.len()];
                    ordered.iter().for_each(|s| taken[*s] = false);
                    let layered = layer_box(&pool, order, &taken, ctx, recipe);
                    fill_gaps(b, layered, order, &ordered, ctx, rule)
                }
                None => crate::select::fill_box(b, order, &ordered, ctx, rule, false),
            };
            let merged = FilledBox {
                box_type: b,
                payload: fill.payload,
                units: fill.units,
            };
            if merged.units.len() < slots.len()
                || (ctx.goal == Goal::LowestCost && merged.cost(ctx) >= was)
            {
                continue;
            }
            boxes.remove(last);
            boxes[partner] = merged;
            return;
        }
    }
}

/// `slots` sorted by `key`, largest first, then by slot.
fn reordered(slots: &[usize], order: &[UnitRef], ctx: &Context<'_>, key: Key) -> Vec<usize> {
    let value = |s: usize| {
        let k = &ctx.kinds[order[s].kind];
        match key {
            Key::Volume => k.volume,
            Key::Chunky => k.sorted[2] as f64,
            Key::Longest => k.sorted[0] as f64,
        }
    };
    let mut out = slots.to_vec();
    out.sort_by(|&a, &b| value(b).total_cmp(&value(a)).then(a.cmp(&b)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::improve::Rng;
    use crate::kinds::Kind;
    use crate::model::ItemKindInput;
    use crate::select::{pack_order, Mode, Plan};

    fn kind(d: [f64; 3]) -> Kind {
        Kind::new(&ItemKindInput {
            dimensions: d,
            weight: 1.0,
            quantity: 1,
            free_axes: None,
        })
    }

    /// One unit per kind, in kind order.
    fn units(kinds: &[Kind]) -> Vec<UnitRef> {
        (0..kinds.len())
            .map(|kind| UnitRef { kind, unit: 0 })
            .collect()
    }

    /// Every unit inside its box, no two overlapping, each slot once in all.
    fn check(boxes: &[FilledBox], ctx: &Context<'_>, slots: usize) {
        let mut seen = vec![false; slots];
        for b in boxes {
            let dims = ctx.boxes[b.box_type].dims;
            for (i, u) in b.units.iter().enumerate() {
                let c = u.cuboid;
                assert!((0..3).all(|a| c.origin[a] >= 0 && c.end(a) <= dims[a]));
                assert!(b.units[..i].iter().all(|o| !o.cuboid.overlaps(&c)));
                assert!(!seen[u.slot], "slot {} twice", u.slot);
                seen[u.slot] = true;
            }
        }
        assert!(seen.iter().all(|s| *s), "a unit is missing");
    }

    /// `n` units of distinct sides `low..=high` (whole numbers), seeded.
    fn scattered(n: usize, low: usize, high: usize, seed: u64) -> Vec<Kind> {
        let mut rng = Rng::new(seed);
        (0..n)
            .map(|_| kind([0, 1, 2].map(|_| (low + rng.below(high - low + 1)) as f64)))
            .collect()
    }

    #[test]
    fn a_layer_takes_the_units_of_its_depth_and_covers_its_face() {
        // Four 5×5 slabs 3 deep cover a 10×10 face; the 2-deep slab and the
        // 4-deep cube are outside the window of a 3-thick layer.
        let mut kinds = vec![kind([3.0, 5.0, 5.0]); 4];
        kinds.push(kind([2.0, 5.0, 5.0]));
        kinds.push(kind([4.0, 4.0, 4.0]));
        let boxes = vec![crate::testkit::cube_box(10.0)];
        let ctx = crate::testkit::context(&kinds, &boxes, Goal::MostItems);
        let order = units(&kinds);
        let slots: Vec<usize> = (0..order.len()).collect();
        let pool = Pool::new(0, &order, &slots, &ctx, Axes::of(&ctx.rule));
        let used = vec![false; order.len()];
        let layer = build_layer(&pool, &order, &ctx, &used, 30_000, RECIPE, f64::INFINITY);
        let mut placed: Vec<usize> = layer.placed.iter().map(|(e, _)| e.slot).collect();
        placed.sort_unstable();
        assert_eq!(placed, vec![0, 1, 2, 3]);
        assert!((layer.volume - 300.0).abs() < 1e-9);
        assert!(layer.placed.iter().all(|(e, _)| e.shape[0] == 30_000));
    }

    #[test]
    fn compaction_leaves_no_unit_above_a_gap() {
        let at = |origin: Vec3, size: Vec3| PlacedUnit {
            slot: 0,
            kind: 0,
            cuboid: Cuboid { origin, size },
            perm: [0, 1, 2],
        };
        // A unit 1 above the floor, another above it with a gap, one beside.
        let mut placed = vec![
            at([4, 0, 0], [2, 2, 2]),
            at([1, 0, 0], [2, 2, 2]),
            at([3, 5, 5], [1, 1, 1]),
        ];
        compact(&mut placed, 0);
        assert_eq!(placed[1].cuboid.origin, [0, 0, 0]);
        assert_eq!(placed[0].cuboid.origin, [2, 0, 0]);
        assert_eq!(placed[2].cuboid.origin, [0, 5, 5]);
    }

    #[test]
    fn layers_pack_many_distinct_units_validly_and_tighter() {
        // Distinct units of sides 5..35 into 100-cubes (the bench's large
        // order at a tenth of the scale). Layers chosen to fit fill the first
        // box fuller than the plain fill of the volume order, and never need
        // more boxes; in the last case (94.7 % of the bound) one box fewer.
        for (n, seed, fewer) in [(400, 1, false), (500, 2, false), (600, 3, true)] {
            let kinds = scattered(n, 5, 35, seed);
            let boxes = vec![crate::testkit::cube_box(100.0)];
            let ctx = crate::testkit::context(&kinds, &boxes, Goal::MostItems);
            let mut order = units(&kinds);
            order.sort_by(|a, b| kinds[b.kind].volume.total_cmp(&kinds[a.kind].volume));
            let deadline = Deadline::after(None);
            let packed = |mode| {
                let plan = Plan {
                    mode,
                    merit: Merit::FirstPoint,
                };
                let p = pack_order(&order, &ctx, plan, &deadline, true);
                let p = p.filter(|p| p.leftovers.is_empty());
                p.map(|p| {
                    check(&p.boxes, &ctx, order.len());
                    let first: f64 = p.boxes[0].units.iter().map(|u| kinds[u.kind].volume).sum();
                    (p.boxes.len(), first)
                })
            };
            let (plain, layered) = (packed(Mode::Sequential), packed(Mode::Layers));
            let (Some(plain), Some(layered)) = (plain, layered) else {
                unreachable!("{n} units, seed {seed}: a packing left units out");
            };
            assert!(
                layered.1 > plain.1,
                "{n}/{seed}: first box {layered:?} vs {plain:?}"
            );
            match fewer {
                true => assert!(layered.0 < plain.0, "{n}/{seed}: {layered:?} vs {plain:?}"),
                false => assert!(layered.0 <= plain.0, "{n}/{seed}: {layered:?} vs {plain:?}"),
            }
        }
    }

    #[test]
    fn the_last_box_merges_into_the_emptiest_when_both_fit_one() {
        // Four 5-cubes in each of two 10-cube boxes: one box holds all eight.
        let kinds = vec![kind([5.0; 3]); 8];
        let boxes = vec![crate::testkit::cube_box(10.0)];
        let ctx = crate::testkit::context(&kinds, &boxes, Goal::MostItems);
        let order = units(&kinds);
        let half = |from: usize| FilledBox {
            box_type: 0,
            units: (from..from + 4)
                .map(|slot| PlacedUnit {
                    slot,
                    kind: slot,
                    cuboid: Cuboid {
                        origin: [0, 0, 50_000 * (slot - from) as Len / 2],
                        size: [50_000; 3],
                    },
                    perm: [0, 1, 2],
                })
                .collect(),
            payload: 4.0,
        };
        let mut packed = vec![half(0), half(4)];
        merge_last(&mut packed, &order, &ctx, ctx.rule);
        assert_eq!(packed.len(), 1);
        check(&packed, &ctx, 8);
    }

    #[test]
    fn layers_step_aside_for_rules_they_do_not_track() {
        let kinds = scattered(60, 5, 35, 3);
        let boxes = vec![crate::testkit::cube_box(100.0)];
        let plain = crate::testkit::context(&kinds, &boxes, Goal::MostItems);
        let each = vec![1; 60];
        assert!(applies(&plain, &each, 1));
        assert!(
            !applies(&plain, &each, 4),
            "15 units a box are too few to choose from"
        );
        let tiny = vec![crate::testkit::cube_box(40.0)];
        let tiny = crate::testkit::context(&kinds, &tiny, Goal::MostItems);
        assert!(
            !applies(&tiny, &each, 1),
            "a box holds too few units to layer"
        );
        let few = vec![1; MIN_UNITS as usize - 1];
        assert!(!applies(&plain, &few, 1), "too few units to choose from");
        let heavy_boxes = vec![crate::kinds::BoxKind {
            weight_max: 10.0,
            ..crate::testkit::cube_box(100.0)
        }];
        let heavy = crate::testkit::context(&kinds, &heavy_boxes, Goal::MostItems);
        assert!(
            !applies(&heavy, &each, 1),
            "weight, not volume, sets the boxes"
        );
        let mut capped = crate::testkit::context(&kinds, &boxes, Goal::MostItems);
        capped.limits.boxes_max = Some(3);
        assert!(!applies(&capped, &each, 1));
        let mut supported = crate::testkit::context(&kinds, &boxes, Goal::MostItems);
        supported.rule.overhang = Some(0);
        assert!(!applies(&supported, &each, 1));
        let mut estimated = crate::testkit::context(&kinds, &boxes, Goal::MostItems);
        estimated.choice.style = ChoiceStyle::Estimated;
        assert!(!applies(&estimated, &each, 1));
        let mut one_fragile = kinds.clone();
        one_fragile[0].fragile = Some(crate::fragile::FragileLimit::new(
            &crate::fragile::FragileInput {
                kind: 0,
                max_weight: None,
                on_top_only: true,
                offer_last: false,
            },
        ));
        let fragile = crate::testkit::context(&one_fragile, &boxes, Goal::MostItems);
        assert!(!applies(&fragile, &each, 1));
    }

    /// Rank of a footprint for a stretch, lowest best (see [`build_layer`]).
    type Fit = (u8, u8, Len, Len, Len);

    /// A unit as the layer saw it before units of a kind were grouped.
    #[derive(Debug, Clone, Copy)]
    struct UnitFootprint {
        entry: Entry,
        width: Len,
        length: Len,
        depth_step: Len,
        smallest: Len,
        weight: f64,
    }

    /// [`build_layer`] as it was before units of a kind were grouped: every
    /// unit's every entry scanned at every step. The reference the grouped
    /// one must agree with, placement for placement.
    fn layer_by_units(
        pool: &Pool,
        order: &[UnitRef],
        ctx: &Context<'_>,
        used: &[bool],
        t: Len,
        recipe: Recipe,
        payload_left: f64,
    ) -> Layer {
        let (axes, face) = (pool.axes, pool.face);
        let low = low_depth(t, recipe.share);
        let step = (t / DEPTH_STEPS).max(1);
        let footprints = |list: &[Entry]| -> Vec<UnitFootprint> {
            list.iter()
                .filter(|e| !used[e.slot])
                .map(|e| {
                    let k = &ctx.kinds[order[e.slot].kind];
                    UnitFootprint {
                        entry: *e,
                        width: e.shape[axes.width],
                        length: e.shape[axes.length],
                        depth_step: e.shape[axes.depth] / step,
                        smallest: k.sorted[2],
                        weight: k.weight,
                    }
                })
                .collect()
        };
        let close = footprints(pool.between(low, t));
        let loose = match recipe.fallback < recipe.share {
            true => footprints(pool.between(low_depth(t, recipe.fallback), low - 1)),
            false => Vec::new(),
        };
        let mut taken = used.to_vec();
        // The narrowest and shortest footprints left among the close units (a
        // gap narrower is lost) and among all (a stretch narrower takes nothing).
        let least = |list: &[UnitFootprint], taken: &[bool]| -> (Len, Len) {
            list.iter()
                .filter(|f| !taken[f.entry.slot])
                .fold((Len::MAX, Len::MAX), |(w, l), f| {
                    (w.min(f.width), l.min(f.length))
                })
        };
        let (mut min_w, mut min_l) = least(&close, &taken);
        let (loose_w, loose_l) = least(&loose, &taken);
        let mut skyline = vec![Segment {
            start: 0,
            width: face[0],
            height: 0,
        }];
        let mut layer = Layer {
            placed: Vec::new(),
            volume: 0.0,
            weight: 0.0,
        };
        while let Some(i) =
            (0..skyline.len()).min_by_key(|&i| (skyline[i].height, skyline[i].start))
        {
            let seg = skyline[i];
            if seg.height >= face[1] {
                break;
            }
            let room = face[1] - seg.height;
            let left = i.checked_sub(1).map(|j| skyline[j].height);
            let right = skyline.get(i + 1).map(|s| s.height);
            let fit = |f: &UnitFootprint| -> Option<Fit> {
                if f.width > seg.width || f.length > room || taken[f.entry.slot] {
                    return None;
                }
                if layer.weight + f.weight > payload_left + WEIGHT_SLACK {
                    return None;
                }
                // Fills the stretch's width exactly, or leaves room a footprint fits.
                let width_class = match seg.width - f.width {
                    0 => 0,
                    r if r >= min_w => 1,
                    _ => 2,
                };
                // Ends level with a neighbour or the face's end, or leaves room.
                let top = seg.height + f.length;
                let length_class = if top == face[1] || Some(top) == left || Some(top) == right {
                    0
                } else if face[1] - top >= min_l {
                    1
                } else {
                    2
                };
                // Then depth close to `t`, then the unit whose smallest side is
                // largest: chunky units are the hardest to place later.
                Some((
                    width_class,
                    length_class,
                    -f.depth_step,
                    -f.smallest,
                    -f.width,
                ))
            };
            let reachable = seg.width >= min_w.min(loose_w) && room >= min_l.min(loose_l);
            let best = match reachable {
                true => [&close, &loose].into_iter().find_map(|list| {
                    list.iter()
                        .filter_map(|f| fit(f).map(|rank| (rank, *f)))
                        .min_by(|a, b| a.0.cmp(&b.0))
                        .map(|(_, f)| f)
                }),
                false => None,
            };
            match best {
                Some(f) => {
                    let e = f.entry;
                    taken[e.slot] = true;
                    if f.width == min_w || f.length == min_l {
                        (min_w, min_l) = least(&close, &taken);
                    }
                    let k = &ctx.kinds[order[e.slot].kind];
                    layer.weight += k.weight;
                    layer.volume += k.volume;
                    let w = f.width;
                    let at_right = recipe.by_taller
                        && w < seg.width
                        && right.unwrap_or(face[1]) > left.unwrap_or(face[1]);
                    let start = match at_right {
                        true => seg.start + seg.width - w,
                        false => seg.start,
                    };
                    let mut origin = [0; 3];
                    origin[axes.width] = start;
                    origin[axes.length] = seg.height;
                    layer.placed.push((e, origin));
                    let top = Segment {
                        start,
                        width: w,
                        height: seg.height + f.length,
                    };
                    if w < seg.width {
                        let rest = Segment {
                            start: if at_right { seg.start } else { seg.start + w },
                            width: seg.width - w,
                            height: seg.height,
                        };
                        skyline[i] = rest;
                        skyline.insert(if at_right { i + 1 } else { i }, top);
                    } else {
                        skyline[i] = top;
                    }
                }
                // Nothing fits this stretch: raise it to its lower neighbour.
                None => {
                    skyline[i].height = match (left, right) {
                        (Some(a), Some(b)) => a.min(b),
                        (Some(a), None) => a,
                        (None, Some(b)) => b,
                        (None, None) => face[1],
                    }
                }
            }
            merge(&mut skyline);
        }
        layer
    }

    #[test]
    fn a_layer_of_grouped_kinds_places_what_the_unit_by_unit_one_did() {
        let mut rng = Rng::new(7);
        let (mut placed, mut empty) = (0, 0);
        for case in 0..300 {
            // A few kinds of several units, or many of one, with a weight per
            // kind, in a shuffled packing order, some units already used.
            let n_kinds = 1 + rng.below(if case % 3 == 0 { 40 } else { 8 });
            let mut kinds: Vec<Kind> = (0..n_kinds)
                .map(|_| {
                    let mut k = kind([0, 1, 2].map(|_| (1 + rng.below(9)) as f64));
                    k.weight = (1 + rng.below(5)) as f64;
                    k
                })
                .collect();
            kinds.truncate(n_kinds);
            let mut order: Vec<UnitRef> = Vec::new();
            for (kind, _) in kinds.iter().enumerate() {
                for unit in 0..1 + rng.below(12) {
                    order.push(UnitRef {
                        kind,
                        unit: unit as u32,
                    });
                }
            }
            for i in (1..order.len()).rev() {
                order.swap(i, rng.below(i + 1));
            }
            let side = (10 + rng.below(20)) as f64;
            let boxes = vec![crate::testkit::cube_box(side)];
            let ctx = crate::testkit::context(&kinds, &boxes, Goal::MostItems);
            let slots: Vec<usize> = (0..order.len()).filter(|_| rng.below(5) > 0).collect();
            let mut pool = Pool::new(0, &order, &slots, &ctx, Axes::of(&ctx.rule));
            // Footprints as a list, by cells, or by the rule.
            pool.cell_share = [0, usize::MAX, CELL_SHARE][case / 3 % 3];
            let used: Vec<bool> = (0..order.len()).map(|_| rng.below(6) == 0).collect();
            let t = (1 + rng.below(9)) as Len * 10_000;
            let payload = match rng.below(3) {
                0 => f64::INFINITY,
                _ => (5 + rng.below(60)) as f64,
            };
            let recipe = match rng.below(2) {
                0 => RECIPE,
                _ => Recipe {
                    share: 0.8,
                    fallback: 0.5,
                    tries: 4,
                    by_taller: false,
                },
            };
            let grouped = build_layer(&pool, &order, &ctx, &used, t, recipe, payload);
            let by_units = layer_by_units(&pool, &order, &ctx, &used, t, recipe, payload);
            let placements = |l: &Layer| -> Vec<(usize, Vec3, Perm, Vec3)> {
                l.placed
                    .iter()
                    .map(|(e, at)| (e.slot, e.shape, e.perm, *at))
                    .collect()
            };
            assert_eq!(placements(&grouped), placements(&by_units), "case {case}");
            assert_eq!(
                grouped.volume.to_bits(),
                by_units.volume.to_bits(),
                "case {case}"
            );
            assert_eq!(
                grouped.weight.to_bits(),
                by_units.weight.to_bits(),
                "case {case}"
            );
            placed += by_units.placed.len();
            empty += usize::from(by_units.placed.is_empty());
        }
        // The cases do place units, most of them several.
        assert!(
            placed > 1_500 && empty < 100,
            "{placed} placed, {empty} layers empty"
        );
    }

    /// The list of a window ([`Window`]: by width, with the pool's orders by
    /// width and length and the shortest lengths so far) against a scan of
    /// every footprint of the window, as the list was before it: the same
    /// choice for random stretches, units taken as a layer takes them.
    #[test]
    fn the_list_window_chooses_what_a_scan_of_every_footprint_does() {
        let mut rng = Rng::new(11);
        // Choices by class (9: none), so every branch of the search is met.
        let mut by_class = [0usize; 10];
        for case in 0..600 {
            let n_kinds = 1 + rng.below(if case % 2 == 0 { 60 } else { 12 });
            // Whole sides, some a little more: depths a step of the layer
            // apart rank alike by depth step.
            let kinds: Vec<Kind> = (0..n_kinds)
                .map(|_| {
                    let mut k = kind(
                        [0, 1, 2]
                            .map(|_| (1 + rng.below(9)) as f64 + [0.0, 0.0, 0.01][rng.below(3)]),
                    );
                    k.weight = (1 + rng.below(5)) as f64;
                    k
                })
                .collect();
            let mut order: Vec<UnitRef> = Vec::new();
            for (kind, _) in kinds.iter().enumerate() {
                for unit in 0..1 + rng.below(4) {
                    order.push(UnitRef {
                        kind,
                        unit: unit as u32,
                    });
                }
            }
            for i in (1..order.len()).rev() {
                order.swap(i, rng.below(i + 1));
            }
            let side = 10 + rng.below(20);
            let boxes = vec![crate::testkit::cube_box(side as f64)];
            let ctx = crate::testkit::context(&kinds, &boxes, Goal::MostItems);
            let slots: Vec<usize> = (0..order.len()).filter(|_| rng.below(5) > 0).collect();
            let pool = Pool::new(0, &order, &slots, &ctx, Axes::of(&ctx.rule));
            let used: Vec<bool> = (0..order.len()).map(|_| rng.below(6) == 0).collect();
            let unit = 10_000;
            let t = (1 + rng.below(9)) as Len * unit;
            let low = low_depth(t, [0.5, 0.8, 0.94, 1.0][rng.below(4)]);
            let step = (t / DEPTH_STEPS).max(1);
            let src = Source {
                pool: &pool,
                order: &order,
                ctx: &ctx,
                used: &used,
                step,
            };
            let window = Window::of(&src, low, t);
            let mut units = KindSlots::new(&pool, kinds.len());
            let mut plain_units = KindSlots::new(&pool, kinds.len());
            let face = pool.face;
            for _ in 0..30 {
                // The plain list: every group of the window, its rank by class and order.
                let plain_least = (pool.groups_between(low, t).iter())
                    .filter(|e| src.slot(&mut plain_units, order[e.slot].kind).is_some())
                    .fold((Len::MAX, Len::MAX), |(w, l), e| {
                        let f = Footprint::new(e, &order, pool.axes);
                        (w.min(f.width), l.min(f.length))
                    });
                assert_eq!(window.least(&src, &mut units), plain_least, "case {case}");
                let at = |rng: &mut Rng, n: usize| (rng.below(n + 1)) as Len * unit;
                let height = at(&mut rng, side - 1);
                let neighbour = |rng: &mut Rng| match rng.below(3) {
                    0 => None,
                    _ => Some((rng.below(side + 1)) as Len * unit),
                };
                let (left, right) = (neighbour(&mut rng), neighbour(&mut rng));
                let stretch = Stretch {
                    width: (1 + rng.below(side)) as Len * unit,
                    height,
                    room: face[1] - height,
                    face_length: face[1],
                    left,
                    right,
                    min_w: match rng.below(2) {
                        0 => plain_least.0,
                        _ => at(&mut rng, 5),
                    },
                    min_l: at(&mut rng, 5),
                };
                let limit = [f64::INFINITY, 3.0, 1.0][rng.below(3)];
                let fits = |w: f64| w <= limit;
                let mut plain: Option<((u8, u8), Order, Entry)> = None;
                for e in pool.groups_between(low, t) {
                    let f = Footprint::new(e, &order, pool.axes);
                    let k = &ctx.kinds[f.kind];
                    if f.width > stretch.width || f.length > stretch.room || !fits(k.weight) {
                        continue;
                    }
                    let Some(slot) = src.slot(&mut plain_units, f.kind) else {
                        continue;
                    };
                    let depth = e.shape[pool.axes.depth];
                    let o: Order = (
                        -(depth / step),
                        -k.sorted[2],
                        -f.width,
                        depth,
                        slot,
                        e.shape_index,
                    );
                    let rank = (stretch.class(f.width, f.length), o);
                    if plain.is_none_or(|(c, po, _)| rank < (c, po)) {
                        plain = Some((rank.0, rank.1, *e));
                    }
                }
                let listed = window.best(&src, &mut units, &stretch, fits);
                let shown = |b: Option<((u8, u8), Order, Entry)>| {
                    b.map(|(c, o, e)| (c, o, e.shape_index, order[e.slot].kind))
                };
                let listed_entry = listed.map(|(c, o, g)| (c, o, pool.groups[g]));
                assert_eq!(shown(listed_entry), shown(plain), "case {case}");
                by_class[plain.map_or(9, |(c, _, _)| usize::from(c.0 * 3 + c.1))] += 1;
                // Take the unit chosen, as a layer does.
                if let Some((_, _, e)) = plain {
                    let kind = order[e.slot].kind;
                    units.take(kind, &used);
                    plain_units.take(kind, &used);
                }
            }
        }
        assert!(
            by_class.iter().all(|&n| n >= 30),
            "choices by class: {by_class:?}"
        );
    }
}
