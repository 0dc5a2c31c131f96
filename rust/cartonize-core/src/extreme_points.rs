//! Extreme points (Crainic, Perboli & Tadei 2008): the candidate corners where
//! the next item may go, each with its residual space along every axis.

use crate::geometry::{Cuboid, Len, Vec3};

/// A candidate position and how far one can go from it along each axis
/// before meeting a wall or an item. `residual` is a necessary condition:
/// an item longer than it along any axis certainly collides.
#[derive(Debug, Clone)]
pub struct ExtremePoint {
    pub point: Vec3,
    pub residual: Vec3,
    /// Where the item that last kept a candidate at this point out begins,
    /// from the point (`origin - point` per axis; `Len::MAX` before any):
    /// a candidate here overlaps that item exactly when it is longer than
    /// this along every axis, so the overlap test ([`crate::fill`]) rules
    /// such shapes out with three comparisons, as shapes at one point run
    /// into the same neighbours. Items are never taken out of a box, so it
    /// stays true; it only saves work and is never part of the answer.
    pub blocker: std::cell::Cell<Vec3>,
}

impl ExtremePoint {
    pub fn new(point: Vec3, residual: Vec3) -> Self {
        ExtremePoint {
            point,
            residual,
            blocker: std::cell::Cell::new([Len::MAX; 3]),
        }
    }

    /// Cuts the reach along `axis` to at most `to`.
    #[inline(always)]
    pub fn shorten(&mut self, axis: usize, to: Len) {
        self.residual[axis] = self.residual[axis].min(to);
    }

    /// True when a candidate of `shape` at this point surely overlaps the
    /// item remembered in [`ExtremePoint::blocker`].
    #[inline(always)]
    pub fn blocked(&self, shape: &Vec3) -> bool {
        let t = self.blocker.get();
        (shape[0] > t[0]) & (shape[1] > t[1]) & (shape[2] > t[2])
    }

    /// True when no shape at least `min_reach` long along every axis goes
    /// here: the last blocker begins closer than that along every axis, so
    /// every such shape overlaps it. Items stay in a box, so such a point
    /// stays of no use, and is dropped ([`ExtremePoints::drop_dead`]).
    #[inline(always)]
    pub fn dead(&self, min_reach: &Vec3) -> bool {
        let t = self.blocker.get();
        (t[0] < min_reach[0]) & (t[1] < min_reach[1]) & (t[2] < min_reach[2])
    }

    /// Remembers `item`, which overlaps a candidate at this point.
    #[inline(always)]
    pub fn remember_blocker(&self, item: &Cuboid) {
        self.blocker
            .set(std::array::from_fn(|a| item.origin[a] - self.point[a]));
    }
}

/// Points are equal by position and reach; the hint is not compared.
impl PartialEq for ExtremePoint {
    fn eq(&self, other: &Self) -> bool {
        self.point == other.point && self.residual == other.residual
    }
}

impl Eq for ExtremePoint {}

/// Room for this many points from the start: grown one at a time from one,
/// the list was reallocated about five times per box filled.
const INITIAL_POINTS: usize = 16;

/// The extreme points of one box, kept sorted by the placement priority so the
/// first feasible point is the best one under lexicographic styles.
#[derive(Debug, Clone)]
pub struct ExtremePoints {
    bounds: Vec3,
    priority: [usize; 3],
    /// Points whose reach along an axis is below this can host no item: dropped.
    min_reach: Vec3,
    points: Vec<ExtremePoint>,
    /// The box's items by column, once it holds [`INDEX_FROM`] of them.
    index: Columns,
}

/// From this many items in a box on, the reach and projections of new
/// points look only at the items of their columns ([`Columns`]); below it,
/// at every item (building the index would cost more than it saves).
pub const INDEX_FROM: usize = 32;

/// Columns per side of the plane across each axis ([`Columns`]).
const COLUMN_CELLS: usize = 8;

/// The items of a box by column: for each axis, the plane across it is cut
/// into [`COLUMN_CELLS`] by [`COLUMN_CELLS`] cells, and each cell lists every
/// item whose extent across the axis meets the cell. A ray from a point
/// along the axis meets only items that hold the point's two other
/// coordinates, and all of them are in the list of the cell those
/// coordinates fall in; so scanning that list finds the same nearest face
/// as scanning every item. The lists are chains through one array (a head
/// per cell, then each entry's next), so a box builds its index with two
/// allocations, not one per cell, and keeps them when renewed.
#[derive(Debug, Default, Clone)]
struct Columns {
    /// The first entry of each cell's chain ([`NO_ENTRY`] for none),
    /// `COLUMN_CELLS²` cells per axis, axis by axis; empty until built.
    heads: Vec<u32>,
    /// Entries: an item and the next entry of the same cell.
    links: Vec<(u32, u32)>,
    bounds: Vec3,
    /// How many items of the box are listed; 0 while not built.
    listed: usize,
}

/// The end of a chain of [`Columns`].
const NO_ENTRY: u32 = u32::MAX;

impl Columns {
    /// Forgets every item (keeping the lists' memory) for a box of `bounds`.
    fn reset(&mut self, bounds: Vec3) {
        if self.listed > 0 {
            self.heads.clear();
            self.links.clear();
        }
        self.bounds = bounds;
        self.listed = 0;
    }

    /// Whether the index serves a box holding `all`: it is built (and kept
    /// up to date) from [`INDEX_FROM`] items on, in a box of positive sides.
    fn update(&mut self, all: &[Cuboid]) -> bool {
        if all.len() < INDEX_FROM || self.bounds.iter().any(|&b| b <= 0) {
            return false;
        }
        if self.listed == 0 {
            self.heads.clear();
            self.heads.resize(3 * COLUMN_CELLS * COLUMN_CELLS, NO_ENTRY);
        }
        // Items are only ever added to a box, at the end of its list.
        for (i, c) in all.iter().enumerate().skip(self.listed) {
            for a in 0..3 {
                let (u, v) = ((a + 1) % 3, (a + 2) % 3);
                let (u0, u1) = (self.cell(u, c.origin[u]), self.cell(u, c.end(u) - 1));
                let (v0, v1) = (self.cell(v, c.origin[v]), self.cell(v, c.end(v) - 1));
                for cu in u0..=u1 {
                    for cv in v0..=v1 {
                        let slot = Self::slot(a, cu, cv);
                        let entry = self.links.len() as u32;
                        self.links.push((i as u32, self.heads[slot]));
                        self.heads[slot] = entry;
                    }
                }
            }
        }
        self.listed = all.len();
        true
    }

    /// The cell along `axis` of coordinate `x`: monotone in `x`, so the
    /// cells of an extent's first and last coordinates bound those of every
    /// coordinate within it (coordinates outside the box fall in the edge cells).
    #[inline(always)]
    fn cell(&self, axis: usize, x: Len) -> usize {
        // Lengths stay within a few times `LEN_LIMIT` (2^56), so the product
        // does not overflow; saturating keeps it monotone regardless.
        let n = COLUMN_CELLS as Len;
        (x.saturating_mul(n) / self.bounds[axis]).clamp(0, n - 1) as usize
    }

    #[inline(always)]
    fn slot(axis: usize, cu: usize, cv: usize) -> usize {
        (axis * COLUMN_CELLS + cu) * COLUMN_CELLS + cv
    }

    /// The items whose extent across `axis` may hold `p`'s two other
    /// coordinates (latest first; an item given twice comes twice).
    #[inline(always)]
    fn column<'s>(&'s self, axis: usize, p: &Vec3) -> Chain<'s> {
        let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
        let slot = Self::slot(axis, self.cell(u, p[u]), self.cell(v, p[v]));
        Chain {
            links: &self.links,
            next: self.heads.get(slot).copied().unwrap_or(NO_ENTRY),
        }
    }
}

/// The items of one cell of [`Columns`].
struct Chain<'s> {
    links: &'s [(u32, u32)],
    next: u32,
}

impl Iterator for Chain<'_> {
    type Item = u32;

    #[inline(always)]
    fn next(&mut self) -> Option<u32> {
        let (item, next) = *self.links.get(self.next as usize)?;
        self.next = next;
        Some(item)
    }
}

impl ExtremePoints {
    /// The points of an empty box: only its origin. `min_reach` is the
    /// smallest extent along each axis of any item that may still come.
    pub fn new(bounds: Vec3, priority: [usize; 3], min_reach: Vec3) -> Self {
        let mut eps = ExtremePoints::with_capacity();
        eps.renew(bounds, priority, min_reach);
        eps
    }

    /// No points yet, with room for a few ([`ExtremePoints::renew`] sets them).
    pub fn with_capacity() -> Self {
        ExtremePoints {
            points: Vec::with_capacity(INITIAL_POINTS),
            ..ExtremePoints::default()
        }
    }

    /// [`ExtremePoints::new`], keeping the memory of `self`'s point list.
    pub fn renew(&mut self, bounds: Vec3, priority: [usize; 3], min_reach: Vec3) {
        let mut points = std::mem::take(&mut self.points);
        points.clear();
        points.push(ExtremePoint::new([0, 0, 0], bounds));
        let mut index = std::mem::take(&mut self.index);
        index.reset(bounds);
        *self = ExtremePoints {
            bounds,
            priority,
            min_reach: min_reach.map(|r| r.max(1)),
            points,
            index,
        };
    }

    /// Points in priority order.
    pub fn iter(&self) -> impl Iterator<Item = &ExtremePoint> {
        self.points.iter()
    }

    pub fn len(&self) -> usize {
        self.points.len()
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The smallest extent along each axis of any item that may come (at least 1).
    pub fn min_reach(&self) -> &Vec3 {
        &self.min_reach
    }

    /// Drops the points found [`ExtremePoint::dead`] (where no item that may
    /// come can go): searches walk every point, and
    /// in a box filling up about one visit in six was to such a point. A
    /// point dropped may come back as a new point of a later item, without
    /// its blocker; it then takes nothing, as before.
    pub fn drop_dead(&mut self) {
        let min_reach = self.min_reach;
        self.points.retain(|ep| !ep.dead(&min_reach));
    }

    /// Updates the set after `placed` was added; `all` includes `placed`.
    pub fn add_item(&mut self, placed: &Cuboid, all: &[Cuboid]) {
        // Existing points: drop those now covered, shorten the others' reach.
        let min_reach = self.min_reach;
        self.points.retain_mut(|ep| {
            match outside_axis(placed, &ep.point) {
                Outside::Covered => return false,
                Outside::One(a) if placed.origin[a] >= ep.point[a] => {
                    ep.shorten(a, placed.origin[a] - ep.point[a]);
                }
                _ => {}
            }
            (0..3).all(|a| ep.residual[a] >= min_reach[a])
        });
        // New points: each far corner of the item, projected back along the
        // other two axes onto the nearest face behind it. The points kept
        // are still in priority order; the new ones are merged in. Two passes
        // over the items serve all six (the projections, then the reach of
        // the new points), where one pass per corner and per point took a
        // third of the engine's instructions on small orders.
        let kept = self.points.len();
        let mut corners = [[0; 3]; 3];
        let mut active = [false; 3];
        for a in 0..3 {
            corners[a] = placed.origin;
            corners[a][a] = placed.end(a);
            active[a] = corners[a][a] < self.bounds[a];
        }
        let indexed = self.index.update(all);
        let to = match indexed {
            true => project_corners_by_column(&corners, active, all, &self.index),
            false => project_corners(&corners, active, all),
        };
        let mut fresh = [[0; 3]; 6];
        let mut count = 0;
        for a in 0..3 {
            if !active[a] {
                continue;
            }
            let (b, c) = ((a + 1) % 3, (a + 2) % 3);
            for (i, axis) in [b, c].into_iter().enumerate() {
                let mut p = corners[a];
                p[axis] = to[a][i];
                if !fresh[..count].contains(&p) && !self.known(&p, kept) {
                    fresh[count] = p;
                    count += 1;
                }
            }
        }
        let reach = match indexed {
            true => reach_by_column(&fresh[..count], self.bounds, all, &self.index),
            false => reach_of(&fresh[..count], self.bounds, all),
        };
        for (p, r) in fresh[..count].iter().zip(reach) {
            if let Some(residual) = r.filter(|r| (0..3).all(|a| r[a] >= self.min_reach[a])) {
                self.points.push(ExtremePoint::new(*p, residual));
            }
        }
        let priority = self.priority;
        // At most six new points: merged from a buffer on the stack, not a
        // second vector (an allocation per placement).
        let added = self.points.len() - kept;
        if added > 0 {
            let mut new: [ExtremePoint; 6] =
                std::array::from_fn(|_| ExtremePoint::new([0; 3], [0; 3]));
            for (slot, ep) in new.iter_mut().zip(self.points.drain(kept..)) {
                *slot = ep;
            }
            new[..added].sort_by_key(|ep| key(&ep.point, &priority));
            for ep in &new[..added] {
                let k = key(&ep.point, &priority);
                let at = self
                    .points
                    .partition_point(|other| key(&other.point, &priority) < k);
                self.points.insert(at, ep.clone());
            }
        }
    }

    /// True when `p` is one of the first `sorted` points (those in priority order).
    fn known(&self, p: &Vec3, sorted: usize) -> bool {
        let priority = self.priority;
        let k = key(p, &priority);
        let sorted = &self.points[..sorted];
        let at = sorted.partition_point(|ep| key(&ep.point, &priority) < k);
        sorted.get(at).is_some_and(|ep| ep.point == *p)
    }
}

/// How far one can go from each of `points` along every axis before meeting
/// a wall or an item of `all`, `None` for a point inside an item.
fn reach_of(points: &[Vec3], bounds: Vec3, all: &[Cuboid]) -> [Option<Vec3>; 6] {
    let mut reach = [Some([0; 3]); 6];
    for (r, p) in reach.iter_mut().zip(points) {
        *r = Some(std::array::from_fn(|a| bounds[a] - p[a]));
    }
    for c in all {
        for (r, p) in reach.iter_mut().zip(points) {
            let Some(residual) = r else { continue };
            // An item bounds the reach along the one axis on which the
            // point is not within it; within it on all three, the point is
            // covered; on fewer than two, the item is beside the point.
            match outside_axis(c, p) {
                Outside::Covered => *r = None,
                Outside::One(a) if c.origin[a] >= p[a] => {
                    residual[a] = residual[a].min(c.origin[a] - p[a]);
                }
                _ => {}
            }
        }
    }
    reach
}

/// [`reach_of`] looking only at the items of each point's columns: the
/// items that bound the reach along an axis are in the column across it,
/// and an item that holds the point is in every column.
fn reach_by_column(
    points: &[Vec3],
    bounds: Vec3,
    all: &[Cuboid],
    index: &Columns,
) -> [Option<Vec3>; 6] {
    let mut reach = [Some([0; 3]); 6];
    for (r, p) in reach.iter_mut().zip(points) {
        let mut residual: Vec3 = std::array::from_fn(|a| bounds[a] - p[a]);
        let mut covered = false;
        'axes: for a in 0..3 {
            for i in index.column(a, p) {
                let c = &all[i as usize];
                match outside_axis(c, p) {
                    Outside::Covered => {
                        covered = true;
                        break 'axes;
                    }
                    Outside::One(b) if b == a && c.origin[a] >= p[a] => {
                        residual[a] = residual[a].min(c.origin[a] - p[a]);
                    }
                    _ => {}
                }
            }
        }
        *r = (!covered).then_some(residual);
    }
    reach
}

/// [`project_corners`] looking only at the items of the column each corner
/// moves back along.
fn project_corners_by_column(
    corners: &[Vec3; 3],
    active: [bool; 3],
    all: &[Cuboid],
    index: &Columns,
) -> [[Len; 2]; 3] {
    let mut to = [[0; 2]; 3];
    for a in 0..3 {
        if !active[a] {
            continue;
        }
        let p = &corners[a];
        for (i, axis) in [(a + 1) % 3, (a + 2) % 3].into_iter().enumerate() {
            for j in index.column(axis, p) {
                let c = &all[j as usize];
                if outside_axis(c, p) != Outside::One(axis) {
                    continue;
                }
                let end = c.end(axis);
                if end <= p[axis] && end > to[a][i] {
                    to[a][i] = end;
                }
            }
        }
    }
    to
}

/// The sides of `v`, shortest first.
#[inline(always)]
pub fn sorted3(v: Vec3) -> Vec3 {
    let [a, b, c] = v;
    let (a, b) = (a.min(b), a.max(b));
    let (b, c) = (b.min(c), b.max(c));
    let (a, b) = (a.min(b), a.max(b));
    [a, b, c]
}

/// Where a point lies against an item's extents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outside {
    /// Within all three: inside the item.
    Covered,
    /// Within two, outside the extent along this axis.
    One(usize),
    /// Outside on two axes or more.
    Beside,
}

/// [`Outside`] of `p` against `c`, without a branch per axis: most items
/// are beside most points, and this runs for every item and new point.
#[inline(always)]
fn outside_axis(c: &Cuboid, p: &Vec3) -> Outside {
    // origin <= p < origin + size as one unsigned comparison: below the
    // origin, the difference wraps to a huge number.
    let inside = |a: usize| (p[a].wrapping_sub(c.origin[a]) as u64) < c.size[a] as u64;
    let mask = inside(0) as u8 | (inside(1) as u8) << 1 | (inside(2) as u8) << 2;
    match mask {
        0b111 => Outside::Covered,
        0b110 => Outside::One(0),
        0b101 => Outside::One(1),
        0b011 => Outside::One(2),
        _ => Outside::Beside,
    }
}

/// The lexicographic key of a point under an axis priority.
pub fn key(p: &Vec3, priority: &[usize; 3]) -> (Len, Len, Len) {
    (p[priority[0]], p[priority[1]], p[priority[2]])
}

/// Where each active corner `corners[a]` lands moved back along each of the
/// other two axes (`a + 1`, then `a + 2`, modulo 3) until it meets an item
/// face or the wall (one pass over the items for all of them).
fn project_corners(corners: &[Vec3; 3], active: [bool; 3], all: &[Cuboid]) -> [[Len; 2]; 3] {
    let mut to = [[0; 2]; 3];
    for c in all {
        for a in 0..3 {
            if !active[a] {
                continue;
            }
            let p = &corners[a];
            // Moved back along `axis`, the corner meets the items it is within
            // on the other two axes whose far face along `axis` is behind it.
            let Outside::One(axis) = outside_axis(c, p) else {
                continue;
            };
            if axis == a {
                continue;
            }
            let i = usize::from(axis != (a + 1) % 3);
            let end = c.end(axis);
            if end <= p[axis] && end > to[a][i] {
                to[a][i] = end;
            }
        }
    }
    to
}

/// No points at all and no memory: a placeholder for lists taken over by
/// another box ([`crate::fill::BoxMemory`]).
impl Default for ExtremePoints {
    fn default() -> Self {
        ExtremePoints {
            bounds: [0; 3],
            priority: [0, 1, 2],
            min_reach: [1; 3],
            points: Vec::new(),
            index: Columns::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The update as first written: one pass over the items per corner and
    /// per new point, tests short-circuiting per axis. `add_item` must give
    /// exactly this (same points, reaches and order).
    fn add_item_plainly(eps: &mut ExtremePoints, placed: &Cuboid, all: &[Cuboid]) {
        let within = |c: &Cuboid, p: &Vec3| -> [bool; 3] {
            std::array::from_fn(|a| c.origin[a] <= p[a] && p[a] < c.end(a))
        };
        let min_reach = eps.min_reach;
        eps.points.retain_mut(|ep| {
            let inside = within(placed, &ep.point);
            if inside == [true; 3] {
                return false;
            }
            for a in 0..3 {
                if inside[(a + 1) % 3] && inside[(a + 2) % 3] && placed.origin[a] >= ep.point[a] {
                    ep.residual[a] = ep.residual[a].min(placed.origin[a] - ep.point[a]);
                }
            }
            (0..3).all(|a| ep.residual[a] >= min_reach[a])
        });
        let kept = eps.points.len();
        for a in 0..3 {
            let mut corner = placed.origin;
            corner[a] = placed.end(a);
            if corner[a] >= eps.bounds[a] {
                continue;
            }
            for axis in [(a + 1) % 3, (a + 2) % 3] {
                let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
                let mut to = 0;
                for c in all {
                    let inside = within(c, &corner);
                    let end = c.end(axis);
                    if inside[u] && inside[v] && end <= corner[axis] && end > to {
                        to = end;
                    }
                }
                let mut p = corner;
                p[axis] = to;
                if eps.known(&p, kept) || eps.points[kept..].iter().any(|ep| ep.point == p) {
                    continue;
                }
                let mut residual: Vec3 = std::array::from_fn(|b| eps.bounds[b] - p[b]);
                let mut covered = false;
                for c in all {
                    let inside = within(c, &p);
                    if inside == [true; 3] {
                        covered = true;
                        break;
                    }
                    for b in 0..3 {
                        if inside[(b + 1) % 3] && inside[(b + 2) % 3] && c.origin[b] >= p[b] {
                            residual[b] = residual[b].min(c.origin[b] - p[b]);
                        }
                    }
                }
                if !covered && (0..3).all(|b| residual[b] >= min_reach[b]) {
                    eps.points.push(ExtremePoint::new(p, residual));
                }
            }
        }
        let priority = eps.priority;
        let mut new: Vec<ExtremePoint> = eps.points.split_off(kept);
        new.sort_by_key(|ep| key(&ep.point, &priority));
        for ep in new {
            let k = key(&ep.point, &priority);
            let at = eps
                .points
                .partition_point(|other| key(&other.point, &priority) < k);
            eps.points.insert(at, ep);
        }
    }

    #[test]
    fn the_update_matches_the_plain_one_on_random_fills() {
        // Items of random sizes go to random points of each set (any point
        // where they fit, so items float and overhang as a search may leave
        // them), under every axis priority and two reach minimums.
        // Every other round offers many small items, so boxes pass
        // `INDEX_FROM` items and new points are found through the columns
        // (boxes of odd sides, so cells split unevenly).
        let mut rng = crate::improve::Rng::new(11);
        let priorities = [[0, 1, 2], [2, 0, 1], [1, 2, 0], [2, 1, 0]];
        let (mut updates, mut indexed) = (0, 0);
        for round in 0..400 {
            let bounds: Vec3 = std::array::from_fn(|_| 20 + rng.below(40) as Len);
            let priority = priorities[round % priorities.len()];
            let min_reach: Vec3 = [1 + (round % 2) as Len * 2; 3];
            let mut fast = ExtremePoints::new(bounds, priority, min_reach);
            let mut plain = fast.clone();
            let mut all: Vec<Cuboid> = Vec::new();
            let (tries, part) = match round % 4 < 2 {
                true => (30, 2),
                false => (200, 5),
            };
            for _ in 0..tries {
                let size: Vec3 =
                    std::array::from_fn(|a| 1 + rng.below(bounds[a] as usize / part) as Len);
                let fitting: Vec<Vec3> = fast
                    .iter()
                    .filter(|ep| (0..3).all(|a| size[a] <= ep.residual[a]))
                    .map(|ep| ep.point)
                    .filter(|p| {
                        let c = Cuboid { origin: *p, size };
                        all.iter().all(|o| !o.overlaps(&c))
                    })
                    .collect();
                if fitting.is_empty() {
                    continue;
                }
                let placed = Cuboid {
                    origin: fitting[rng.below(fitting.len())],
                    size,
                };
                all.push(placed);
                fast.add_item(&placed, &all);
                add_item_plainly(&mut plain, &placed, &all);
                assert_eq!(
                    fast.points,
                    plain.points,
                    "round {round}, item {}",
                    all.len()
                );
                updates += 1;
                indexed += usize::from(all.len() >= INDEX_FROM);
            }
        }
        assert!(
            updates > 10_000 && indexed > 5_000,
            "{updates} updates compared, {indexed} through the index"
        );
    }

    #[test]
    fn first_item_yields_three_corner_points() {
        let mut eps = ExtremePoints::new([10, 10, 10], [0, 1, 2], [1, 1, 1]);
        let c = Cuboid {
            origin: [0, 0, 0],
            size: [5, 5, 5],
        };
        eps.add_item(&c, &[c]);
        let pts: Vec<Vec3> = eps.iter().map(|e| e.point).collect();
        assert_eq!(pts, vec![[0, 0, 5], [0, 5, 0], [5, 0, 0]]);
        assert_eq!(eps.iter().next().map(|e| e.residual), Some([10, 10, 5]));
    }

    #[test]
    fn points_project_down_onto_items() {
        let mut eps = ExtremePoints::new([10, 10, 10], [0, 1, 2], [1, 1, 1]);
        let a = Cuboid {
            origin: [0, 0, 0],
            size: [2, 10, 10],
        };
        eps.add_item(&a, &[a]);
        let b = Cuboid {
            origin: [2, 0, 0],
            size: [3, 4, 4],
        };
        eps.add_item(&b, &[a, b]);
        // The corner (2+3, 0, 0) stays; (2, 4, 0) and (2, 0, 4) rest on item a.
        let pts: Vec<Vec3> = eps.iter().map(|e| e.point).collect();
        assert!(pts.contains(&[2, 4, 0]));
        assert!(pts.contains(&[2, 0, 4]));
        assert!(pts.contains(&[5, 0, 0]));
        assert!(!pts.contains(&[2, 0, 0]));
    }
}
