//! Extreme points (Crainic, Perboli & Tadei 2008): the candidate corners where
//! the next item may go, each with its residual space along every axis.

use crate::geometry::{Cuboid, Len, Vec3};

/// A candidate position and how far one can go from it along each axis
/// before meeting a wall or an item. `residual` is a necessary condition:
/// an item longer than it along any axis certainly collides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExtremePoint {
    pub point: Vec3,
    pub residual: Vec3,
}

/// The extreme points of one box, kept sorted by the placement priority so the
/// first feasible point is the best one under lexicographic styles.
#[derive(Debug, Clone)]
pub struct ExtremePoints {
    bounds: Vec3,
    priority: [usize; 3],
    /// Points whose reach along an axis is below this can host no item: dropped.
    min_reach: Vec3,
    points: Vec<ExtremePoint>,
}

impl ExtremePoints {
    /// The points of an empty box: only its origin. `min_reach` is the
    /// smallest extent along each axis of any item that may still come.
    pub fn new(bounds: Vec3, priority: [usize; 3], min_reach: Vec3) -> Self {
        ExtremePoints {
            bounds,
            priority,
            min_reach: min_reach.map(|r| r.max(1)),
            points: vec![ExtremePoint {
                point: [0, 0, 0],
                residual: bounds,
            }],
        }
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

    /// Updates the set after `placed` was added; `all` includes `placed`.
    pub fn add_item(&mut self, placed: &Cuboid, all: &[Cuboid]) {
        // Existing points: drop those now covered, shorten the others' reach.
        let min_reach = self.min_reach;
        self.points.retain_mut(|ep| {
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
        // New points: each far corner of the item, projected back along the
        // other two axes onto the nearest face behind it. The points kept
        // are still in priority order; the new ones are merged in.
        let kept = self.points.len();
        for a in 0..3 {
            let mut corner = placed.origin;
            corner[a] = placed.end(a);
            if corner[a] >= self.bounds[a] {
                continue;
            }
            let (b, c) = ((a + 1) % 3, (a + 2) % 3);
            let [to_b, to_c] = project_two(&corner, [b, c], all);
            for (axis, to) in [(b, to_b), (c, to_c)] {
                let mut p = corner;
                p[axis] = to;
                self.insert(p, all, kept);
            }
        }
        let priority = self.priority;
        // At most six new points: merged from a buffer on the stack, not a
        // second vector (an allocation per placement).
        let added = self.points.len() - kept;
        if added > 0 {
            let mut new = [ExtremePoint {
                point: [0; 3],
                residual: [0; 3],
            }; 6];
            new[..added].copy_from_slice(&self.points[kept..]);
            self.points.truncate(kept);
            new[..added].sort_by_key(|ep| key(&ep.point, &priority));
            for ep in &new[..added] {
                let k = key(&ep.point, &priority);
                let at = self
                    .points
                    .partition_point(|other| key(&other.point, &priority) < k);
                self.points.insert(at, *ep);
            }
        }
    }

    /// Adds `p` with its reach unless it is a known point or inside an item;
    /// points from `fresh` on are the ones this update added (not yet sorted).
    fn insert(&mut self, p: Vec3, all: &[Cuboid], fresh: usize) {
        let priority = self.priority;
        let k = key(&p, &priority);
        let sorted = &self.points[..fresh];
        let at = sorted.partition_point(|ep| key(&ep.point, &priority) < k);
        if sorted.get(at).is_some_and(|ep| ep.point == p)
            || self.points[fresh..].iter().any(|ep| ep.point == p)
        {
            return;
        }
        let mut residual = [0; 3];
        for a in 0..3 {
            residual[a] = self.bounds[a] - p[a];
        }
        for c in all {
            let inside = within(c, &p);
            if inside == [true; 3] {
                return;
            }
            for a in 0..3 {
                if inside[(a + 1) % 3] && inside[(a + 2) % 3] && c.origin[a] >= p[a] {
                    residual[a] = residual[a].min(c.origin[a] - p[a]);
                }
            }
        }
        if (0..3).all(|a| residual[a] >= self.min_reach[a]) {
            self.points.push(ExtremePoint { point: p, residual });
        }
    }
}

/// Along each axis, whether `p` lies within `c`'s extent `[origin, end)`.
fn within(c: &Cuboid, p: &Vec3) -> [bool; 3] {
    std::array::from_fn(|a| c.origin[a] <= p[a] && p[a] < c.end(a))
}

/// The lexicographic key of a point under an axis priority.
pub fn key(p: &Vec3, priority: &[usize; 3]) -> (Len, Len, Len) {
    (p[priority[0]], p[priority[1]], p[priority[2]])
}

/// Where `p` lands moved back along each of `axes` until it meets an item
/// face or the wall (one pass over the items for both).
fn project_two(p: &Vec3, axes: [usize; 2], all: &[Cuboid]) -> [Len; 2] {
    let mut to = [0; 2];
    for c in all {
        let inside = within(c, p);
        for (i, &axis) in axes.iter().enumerate() {
            let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
            let end = c.end(axis);
            if inside[u] && inside[v] && end <= p[axis] && end > to[i] {
                to[i] = end;
            }
        }
    }
    to
}

#[cfg(test)]
mod tests {
    use super::*;

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
