//! Painter's order of packed items: back to front relative to the eye.
//!
//! Two disjoint axis-aligned cuboids whose pictures overlap (with positive area) are
//! ordered by any axis that separates them: along that axis every line of sight meets
//! the one on the far side first, so all separating axes agree. Pairs whose pictures do
//! not overlap get no relation, and a topological sort joins the relations. Ties (and
//! the rare occlusion cycle, which axis-aligned boxes can form as a pinwheel) are broken
//! by the depth of the farthest corner, so with the eye straight above (x = 1) the order
//! is bottom layer first: every item comes after all items it rests on, a loading order.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use crate::projection::{cross, Camera, Cuboid, EPS};

/// Relative tolerance of contact and overlap tests, times the scene's largest extent:
/// placements come from fixed-point geometry, so touching faces are equal to rounding.
const REL_TOL: f64 = 1e-9;

/// The order in which to draw `items`: indices into `items`, back to front.
pub fn back_to_front(camera: &Camera, items: &[Cuboid]) -> Vec<usize> {
    let n = items.len();
    let tol = REL_TOL * scene_extent(items).max(1.0);
    let screen_normals: Vec<[f64; 3]> = (0..3)
        .filter_map(|a| {
            let mut axis = [0.0; 3];
            axis[a] = 1.0;
            // dir × axis lies in the screen plane, perpendicular to the axis's picture:
            // the silhouettes of both cuboids have edges only along those pictures.
            let n = cross(camera.dir, axis);
            (n.iter().map(|c| c * c).sum::<f64>() > EPS).then_some(n)
        })
        .collect();
    let mut after: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut blockers = vec![0usize; n];
    for i in 0..n {
        for j in i + 1..n {
            let (a, b) = (&items[i], &items[j]);
            if !pictures_overlap(&screen_normals, a, b, tol) {
                continue;
            }
            match behind(camera, a, b, tol) {
                Some(true) => {
                    after[i].push(j);
                    blockers[j] += 1;
                }
                Some(false) => {
                    after[j].push(i);
                    blockers[i] += 1;
                }
                None => {}
            }
        }
    }
    let keys: Vec<SortKey> = items.iter().map(|c| SortKey::of(camera, c)).collect();
    let mut ready: BinaryHeap<Reverse<(SortKey, usize)>> = (0..n)
        .filter(|&i| blockers[i] == 0)
        .map(|i| Reverse((keys[i], i)))
        .collect();
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(n);
    while order.len() < n {
        let next = match ready.pop() {
            Some(Reverse((_, i))) => i,
            // An occlusion cycle: draw its farthest member first, ignoring what blocks it.
            None => match (0..n)
                .filter(|&i| !done[i])
                .min_by(|&x, &y| keys[x].cmp(&keys[y]).then(x.cmp(&y)))
            {
                Some(i) => i,
                None => break,
            },
        };
        if done[next] {
            continue;
        }
        done[next] = true;
        order.push(next);
        for &k in &after[next] {
            blockers[k] = blockers[k].saturating_sub(1);
            if blockers[k] == 0 && !done[k] {
                ready.push(Reverse((keys[k], k)));
            }
        }
    }
    order
}

/// Whether `a` is behind `b` (`Some(true)`), in front (`Some(false)`), or neither is
/// separated from the other along an axis the eye looks along (`None`).
pub fn behind(camera: &Camera, a: &Cuboid, b: &Cuboid, tol: f64) -> Option<bool> {
    (0..3).filter(|&k| camera.dir[k].abs() > EPS).find_map(|k| {
        let towards = camera.dir[k] > 0.0;
        if a.hi[k] <= b.lo[k] + tol {
            Some(towards)
        } else if b.hi[k] <= a.lo[k] + tol {
            Some(!towards)
        } else {
            None
        }
    })
}

/// Whether the pictures of `a` and `b` share an area (not just an edge): separating-axis
/// test over the normals of the silhouette edges.
fn pictures_overlap(normals: &[[f64; 3]], a: &Cuboid, b: &Cuboid, tol: f64) -> bool {
    normals.iter().all(|n| {
        let (a_lo, a_hi) = extent_along(n, a);
        let (b_lo, b_hi) = extent_along(n, b);
        a_lo.max(b_lo) < a_hi.min(b_hi) - tol
    })
}

fn extent_along(n: &[f64; 3], c: &Cuboid) -> (f64, f64) {
    let (mut lo, mut hi) = (0.0, 0.0);
    for (k, nk) in n.iter().enumerate() {
        let (p, q) = (nk * c.lo[k], nk * c.hi[k]);
        lo += p.min(q);
        hi += p.max(q);
    }
    (lo, hi)
}

fn scene_extent(items: &[Cuboid]) -> f64 {
    items
        .iter()
        .flat_map(|c| c.hi.iter().chain(c.lo.iter()))
        .fold(0.0f64, |m, v| m.max(v.abs()))
}

/// Farthest-corner depth, then centre depth: smaller is drawn first.
#[derive(Debug, Clone, Copy, PartialEq)]
struct SortKey(f64, f64);

impl SortKey {
    fn of(camera: &Camera, c: &Cuboid) -> Self {
        let mut far = 0.0;
        let mut centre = 0.0;
        for k in 0..3 {
            let (p, q) = (camera.dir[k] * c.lo[k], camera.dir[k] * c.hi[k]);
            far += p.min(q);
            centre += (p + q) / 2.0;
        }
        SortKey(far, centre)
    }
}

impl Eq for SortKey {}

impl PartialOrd for SortKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SortKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(self.1.total_cmp(&other.1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cube(x: f64, y: f64, z: f64) -> Cuboid {
        Cuboid::new([x, y, z], [1.0, 1.0, 1.0])
    }

    fn position(order: &[usize], i: usize) -> usize {
        order.iter().position(|&k| k == i).unwrap_or(usize::MAX)
    }

    #[test]
    fn a_full_cube_of_cubes_draws_the_far_corner_first_and_near_last() {
        let cam = Camera::new([1.0, 1.0, 1.0]);
        let mut items = Vec::new();
        for x in 0..2 {
            for y in 0..2 {
                for z in 0..2 {
                    items.push(cube(x as f64, y as f64, z as f64));
                }
            }
        }
        let order = back_to_front(&cam, &items);
        assert_eq!(order.first(), Some(&0));
        assert_eq!(order.last(), Some(&7));
    }

    #[test]
    fn a_long_low_item_is_not_drawn_over_a_taller_one_in_front() {
        // Centroid distance gets this wrong: the long slab's centre is nearer the eye
        // than the small cube's, yet the cube stands in front of the slab's near end.
        let cam = Camera::new([1.0, 1.0, 1.0]);
        let slab = Cuboid::new([0.0, 0.0, 0.0], [1.0, 1.0, 20.0]);
        let post = Cuboid::new([0.0, 1.0, 0.0], [1.0, 1.0, 1.0]);
        assert!(cam.depth([0.5, 0.5, 10.0]) > cam.depth([0.5, 1.5, 0.5]));
        let order = back_to_front(&cam, &[slab, post]);
        assert_eq!(order, vec![0, 1]);
    }

    #[test]
    fn top_down_order_is_bottom_layer_first_and_supports_come_first() {
        let cam = Camera::new([1.0, 0.0, 0.0]);
        let tall = Cuboid::new([0.0, 0.0, 0.0], [10.0, 1.0, 1.0]);
        let low = cube(0.0, 1.0, 0.0);
        let on_low = cube(1.0, 1.0, 0.0);
        let order = back_to_front(&cam, &[on_low, tall, low]);
        assert!(position(&order, 2) < position(&order, 0), "support first");
        assert_eq!(
            order,
            vec![2, 1, 0],
            "bottom layer (both floor items) first"
        );
    }

    #[test]
    fn end_on_view_draws_farthest_along_length_first() {
        let cam = Camera::new([0.0, 0.0, 1.0]);
        let items = [
            cube(0.0, 0.0, 2.0),
            cube(0.0, 0.0, 0.0),
            cube(0.0, 0.0, 1.0),
        ];
        assert_eq!(back_to_front(&cam, &items), vec![1, 2, 0]);
    }

    #[test]
    fn eye_from_below_reverses_the_vertical_relation() {
        let cam = Camera::new([-1.0, 0.5, 0.5]);
        let items = [cube(0.0, 0.0, 0.0), cube(1.0, 0.0, 0.0)];
        assert_eq!(back_to_front(&cam, &items), vec![1, 0]);
    }

    #[test]
    fn diagonal_neighbours_touching_on_an_edge_get_no_relation() {
        let cam = Camera::new([1.0, 1.0, 1.0]);
        let normals: Vec<[f64; 3]> = (0..3)
            .map(|a| {
                let mut axis = [0.0; 3];
                axis[a] = 1.0;
                cross(cam.dir, axis)
            })
            .collect();
        let a = Cuboid::new([0.0, 1.0, 0.0], [1.0, 1.0, 10.0]);
        let b = Cuboid::new([1.0, 0.0, 0.0], [1.0, 1.0, 10.0]);
        assert!(!pictures_overlap(&normals, &a, &b, 1e-9));
        let on_top = Cuboid::new([1.0, 1.0, 0.0], [1.0, 1.0, 1.0]);
        assert!(pictures_overlap(&normals, &a, &on_top, 1e-9));
    }

    #[test]
    fn crossing_sticks_are_each_drawn_once_lowest_first() {
        let cam = Camera::new([1.0, 0.0, 0.0]);
        let items = [
            Cuboid::new([0.0, 0.0, 0.0], [1.0, 3.0, 1.0]),
            Cuboid::new([1.0, 2.0, 0.0], [1.0, 1.0, 3.0]),
            Cuboid::new([2.0, 0.0, 2.0], [1.0, 3.0, 1.0]),
        ];
        assert_eq!(back_to_front(&cam, &items), vec![0, 1, 2]);
    }
}
