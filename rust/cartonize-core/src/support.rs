//! Support beneath an item (`allowableOverhang`): what an item rests on and
//! whether it overhangs that by more than the allowance on any side.
//!
//! An item whose base is at height `h > 0` rests on the top faces of the
//! items that end exactly at `h` (or on the floor at `h = 0`). With an
//! allowance `a` it must touch at least one of them, and every point of its
//! base must lie within `a` (along each horizontal axis) of those faces: no
//! part of it sticks out past its support by more than `a`, and it may
//! bridge a gap of up to `2a` between two supports. `a = 0` is full support.

use crate::geometry::{Cuboid, Len};

/// The vertical axis (x, height).
pub const UP: usize = 0;

/// The two horizontal axes.
const FLAT: [usize; 2] = [1, 2];

/// A rectangle on the horizontal plane: `[lo, hi)` along each flat axis.
type Rect = [(Len, Len); 2];

/// True when `cand` overhangs what is directly beneath it by at most
/// `allowance` on every side; `placed` are the cuboids already in the box.
pub fn is_supported(cand: &Cuboid, placed: &[Cuboid], allowance: Len) -> bool {
    let base = cand.origin[UP];
    if base == 0 {
        return true;
    }
    let footprint: Rect = FLAT.map(|a| (cand.origin[a], cand.end(a)));
    let mut touching = false;
    let mut reach: Vec<Rect> = Vec::new();
    for c in placed.iter().filter(|c| c.end(UP) == base) {
        // The part of the footprint within `allowance` of this top face.
        let clipped: Rect = std::array::from_fn(|i| {
            let (lo, hi) = (c.origin[FLAT[i]], c.end(FLAT[i]));
            let (flo, fhi) = footprint[i];
            ((lo - allowance).max(flo), (hi + allowance).min(fhi))
        });
        if clipped.iter().any(|(lo, hi)| lo >= hi) {
            continue;
        }
        touching = touching || cand.face_overlap(c, UP) > 0;
        if clipped == footprint {
            return cand.face_overlap(c, UP) > 0 || touching_any(cand, placed);
        }
        reach.push(clipped);
    }
    touching && covers(&footprint, &reach)
}

/// True when some cuboid in `placed` touches the base of `cand` with positive area.
fn touching_any(cand: &Cuboid, placed: &[Cuboid]) -> bool {
    placed
        .iter()
        .any(|c| c.end(UP) == cand.origin[UP] && cand.face_overlap(c, UP) > 0)
}

/// True when the union of `parts` (each inside `whole`) is all of `whole`.
fn covers(whole: &Rect, parts: &[Rect]) -> bool {
    let area = |r: &Rect| i128::from(r[0].1 - r[0].0) * i128::from(r[1].1 - r[1].0);
    let total: i128 = parts.iter().map(area).sum();
    if total < area(whole) {
        return false;
    }
    // Strips between consecutive edges along the first axis: inside one
    // strip each part either spans it or misses it, so one interval cover
    // along the second axis per strip decides.
    let mut edges: Vec<Len> = parts.iter().flat_map(|r| [r[0].0, r[0].1]).collect();
    edges.push(whole[0].0);
    edges.push(whole[0].1);
    edges.sort_unstable();
    edges.dedup();
    let mut pieces: Vec<(Len, Len)> = Vec::with_capacity(parts.len());
    for strip in edges.windows(2) {
        pieces.clear();
        pieces.extend(
            parts
                .iter()
                .filter(|r| r[0].0 <= strip[0] && strip[1] <= r[0].1)
                .map(|r| r[1]),
        );
        pieces.sort_unstable();
        let (mut reached, goal) = whole[1];
        for (lo, hi) in &pieces {
            if *lo > reached {
                break;
            }
            reached = reached.max(*hi);
        }
        if reached < goal {
            return false;
        }
    }
    true
}

/// What an item rests on: the share of its base area resting on the floor or
/// on items, and how many items it rests on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Support {
    pub share: f64,
    pub on_floor: bool,
    pub items: usize,
}

/// The support of `c` among the cuboids of its box (`c` itself may be among them).
pub fn support_of(c: &Cuboid, all: &[Cuboid]) -> Support {
    let base = c.origin[UP];
    if base == 0 {
        return Support {
            share: 1.0,
            on_floor: true,
            items: 0,
        };
    }
    let mut area: i128 = 0;
    let mut items = 0;
    for other in all.iter().filter(|o| o.end(UP) == base) {
        let contact = c.face_overlap(other, UP);
        if contact > 0 {
            area += contact;
            items += 1;
        }
    }
    let base_area = i128::from(c.size[FLAT[0]]) * i128::from(c.size[FLAT[1]]);
    Support {
        share: area as f64 / base_area.max(1) as f64,
        on_floor: false,
        items,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cuboid(origin: [Len; 3], size: [Len; 3]) -> Cuboid {
        Cuboid { origin, size }
    }

    #[test]
    fn allowance_decides_how_far_an_item_may_stick_out() {
        // A 10×10 top at height 4; the candidate sits on it, shifted by 2 along y.
        let below = [cuboid([0, 0, 0], [4, 10, 10])];
        let shifted = cuboid([4, 2, 0], [3, 10, 10]);
        let cases = [(0, false), (1, false), (2, true), (5, true)];
        for (allowance, want) in cases {
            assert_eq!(
                is_supported(&shifted, &below, allowance),
                want,
                "{allowance}"
            );
        }
    }

    #[test]
    fn a_gap_may_be_bridged_by_twice_the_allowance() {
        let two = [cuboid([0, 0, 0], [4, 5, 10]), cuboid([0, 5, 0], [4, 5, 10])];
        let gap = [cuboid([0, 0, 0], [4, 4, 10]), cuboid([0, 6, 0], [4, 4, 10])];
        let on_top = cuboid([4, 0, 0], [2, 10, 10]);
        assert!(is_supported(&on_top, &two, 0));
        assert!(!is_supported(&on_top, &gap, 0));
        assert!(is_supported(&on_top, &gap, 1));
        // Items ending at another height give no support.
        let lower = [cuboid([0, 0, 0], [3, 10, 10])];
        assert!(!is_supported(&on_top, &lower, 100));
        assert!(is_supported(&cuboid([0, 3, 3], [1, 1, 1]), &[], 0));
    }

    #[test]
    fn an_item_must_touch_its_support() {
        // Beside the top, within the allowance, but resting on nothing.
        let below = [cuboid([0, 0, 0], [4, 10, 10])];
        assert!(!is_supported(&cuboid([4, 11, 0], [1, 2, 2]), &below, 4));
        assert!(is_supported(&cuboid([4, 9, 0], [1, 4, 2]), &below, 3));
        assert!(!is_supported(&cuboid([4, 9, 0], [1, 4, 2]), &below, 2));
    }

    #[test]
    fn corner_supports_leave_the_middle_uncovered() {
        // Four 3×3 posts at the corners of a 10×10 item: the middle 4×4 is bare.
        let posts: Vec<Cuboid> = [(0, 0), (0, 7), (7, 0), (7, 7)]
            .map(|(y, z)| cuboid([0, y, z], [4, 3, 3]))
            .to_vec();
        let slab = cuboid([4, 0, 0], [1, 10, 10]);
        assert!(!is_supported(&slab, &posts, 1));
        assert!(is_supported(&slab, &posts, 2));
    }

    #[test]
    fn support_reports_share_and_count() {
        let all = [
            cuboid([0, 0, 0], [4, 5, 10]),
            cuboid([0, 5, 0], [4, 5, 10]),
            cuboid([4, 0, 0], [2, 10, 20]),
        ];
        let s = support_of(&all[2], &all);
        assert_eq!((s.items, s.on_floor), (2, false));
        assert!((s.share - 0.5).abs() < 1e-12);
        assert!(support_of(&all[0], &all).on_floor);
    }
}
