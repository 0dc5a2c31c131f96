//! Lower bounds on the number of boxes: no packing of the units into boxes
//! of one type needs fewer. The search stops once it reaches one, and a
//! packing at the bound needs no further strategies.

use crate::geometry::{Len, Vec3};
use crate::kinds::Kind;

/// The larger of the volume bound and Martello, Pisinger & Vigo's L1 for
/// `shapes` (one per unit, as it must be placed) in boxes of `dims`, for
/// units that cannot turn: units longer than half the box along two axes
/// can share a box only one behind the other along the third, a
/// one-dimensional bin packing bounded by Martello & Toth's L2.
pub fn box_count(shapes: &[Vec3], dims: &Vec3) -> usize {
    let mut bound = volume_bound(shapes, dims);
    for axis in 0..3 {
        let (b, c) = ((axis + 1) % 3, (axis + 2) % 3);
        let stacked: Vec<Len> = shapes
            .iter()
            .filter(|s| 2 * s[b] > dims[b] && 2 * s[c] > dims[c])
            .map(|s| s[axis])
            .collect();
        bound = bound.max(one_dimensional(&stacked, dims[axis]));
    }
    bound
}

/// The shape each unit must take, when every unit of `kinds` (with
/// `quantities`) has exactly one; `None` when some unit may turn.
pub fn fixed_shapes(kinds: &[Kind], quantities: &[u32]) -> Option<Vec<Vec3>> {
    let mut shapes = Vec::new();
    for (k, &q) in kinds.iter().zip(quantities) {
        match fixed_shape(k) {
            Some(shape) => shapes.extend(std::iter::repeat_n(shape, q as usize)),
            None if q == 0 => {}
            None => return None,
        }
    }
    Some(shapes)
}

/// The one shape a unit of `kind` can take; `None` when it may turn.
pub fn fixed_shape(kind: &Kind) -> Option<Vec3> {
    match kind.shapes.as_slice() {
        [(shape, _)] => Some(*shape),
        _ => None,
    }
}

fn volume_bound(shapes: &[Vec3], dims: &Vec3) -> usize {
    let volume = |s: &Vec3| s.iter().map(|&v| v as f64).product::<f64>();
    let used: f64 = shapes.iter().map(volume).sum();
    let box_volume = volume(dims);
    if box_volume > 0.0 {
        // Slack for float sums: a bound one too low only costs search time.
        (used / box_volume * (1.0 - 1e-9)).ceil() as usize
    } else {
        0
    }
}

/// Martello & Toth's L2 for items of `sizes` in bins of `capacity`: for each
/// threshold p, items above capacity - p each need a bin, items above half
/// need one each, and items from p to half fill what the latter leave.
fn one_dimensional(sizes: &[Len], capacity: Len) -> usize {
    if sizes.is_empty() || capacity <= 0 {
        return 0;
    }
    let cap = i128::from(capacity);
    let mut thresholds: Vec<i128> = sizes
        .iter()
        .map(|&s| i128::from(s))
        .filter(|&s| 2 * s <= cap)
        .collect();
    thresholds.push(0);
    thresholds.sort_unstable();
    thresholds.dedup();
    let mut best = 0i128;
    for p in thresholds {
        let (mut big, mut over_half, mut over_half_sum, mut small_sum) = (0i128, 0i128, 0i128, 0);
        for &s in sizes {
            let s = i128::from(s);
            if s > cap - p {
                big += 1;
            } else if 2 * s > cap {
                over_half += 1;
                over_half_sum += s;
            } else if s >= p {
                small_sum += s;
            }
        }
        let room = over_half * cap - over_half_sum;
        let extra = (small_sum - room).max(0);
        best = best.max(big + over_half + (extra + cap - 1) / cap);
    }
    usize::try_from(best).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_dimensional_bound_counts_what_cannot_share() {
        let cases: [(&[Len], Len, usize); 5] = [
            (&[], 10, 0),
            (&[6, 6, 6], 10, 3),
            (&[6, 4, 6, 4], 10, 2),
            (&[5, 5, 5], 10, 2),
            // p = 3: two items over 7 alone, the three 3s fill no gap.
            (&[8, 8, 3, 3, 3], 10, 3),
        ];
        for (sizes, cap, expected) in cases {
            assert_eq!(one_dimensional(sizes, cap), expected, "{sizes:?}");
        }
    }

    #[test]
    fn units_over_half_the_box_on_two_axes_stack_on_the_third() {
        // Three 6×6×4 units in a 10-cube: volume says 2, but no two fit
        // side by side across, and three 4s make 12 > 10 along the third axis.
        let dims = [10, 10, 10];
        assert_eq!(box_count(&[[6, 6, 4]; 3], &dims), 2);
        assert_eq!(box_count(&[[6, 6, 4]; 2], &dims), 1);
        assert_eq!(box_count(&[[6, 6, 6]; 3], &dims), 3);
        assert_eq!(box_count(&[[4, 6, 6]; 3], &dims), 2);
        assert_eq!(box_count(&[[9, 9, 4]; 3], &dims), 2);
        assert_eq!(
            box_count(&[[9, 9, 4], [9, 9, 4], [9, 9, 4], [2, 2, 2]], &dims),
            2
        );
    }
}
