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
        self.points.retain_mut(|ep| {
            if placed.contains_point(&ep.point) {
                return false;
            }
            for a in 0..3 {
                if placed.shadows(&ep.point, a) && placed.origin[a] >= ep.point[a] {
                    ep.residual[a] = ep.residual[a].min(placed.origin[a] - ep.point[a]);
                }
            }
            (0..3).all(|a| ep.residual[a] >= self.min_reach[a])
        });
        // New points: each far corner of the item, projected back along the
        // other two axes onto the nearest face behind it.
        for a in 0..3 {
            let mut corner = placed.origin;
            corner[a] = placed.end(a);
            if corner[a] >= self.bounds[a] {
                continue;
            }
            for b in (0..3).filter(|&b| b != a) {
                let mut p = corner;
                p[b] = project(&p, b, all);
                self.insert(p, all);
            }
        }
        let priority = self.priority;
        self.points.sort_by_key(|ep| key(&ep.point, &priority));
    }

    fn insert(&mut self, p: Vec3, all: &[Cuboid]) {
        if self.points.iter().any(|ep| ep.point == p) {
            return;
        }
        if all.iter().any(|c| c.contains_point(&p)) {
            return;
        }
        let mut residual = [0; 3];
        for a in 0..3 {
            let mut reach = self.bounds[a] - p[a];
            for c in all {
                if c.shadows(&p, a) && c.origin[a] >= p[a] {
                    reach = reach.min(c.origin[a] - p[a]);
                }
            }
            residual[a] = reach;
        }
        if (0..3).all(|a| residual[a] >= self.min_reach[a]) {
            self.points.push(ExtremePoint { point: p, residual });
        }
    }
}

/// The lexicographic key of a point under an axis priority.
pub fn key(p: &Vec3, priority: &[usize; 3]) -> (Len, Len, Len) {
    (p[priority[0]], p[priority[1]], p[priority[2]])
}

/// Moves `p` back along `axis` until it meets an item face or the wall.
fn project(p: &Vec3, axis: usize, all: &[Cuboid]) -> Len {
    all.iter()
        .filter(|c| c.shadows(p, axis) && c.end(axis) <= p[axis])
        .map(|c| c.end(axis))
        .max()
        .unwrap_or(0)
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
