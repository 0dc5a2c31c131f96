//! Lower bounds on the number of boxes: no packing of the units into boxes
//! of one type needs fewer. The search stops once it reaches one, and a
//! packing at the bound needs no further strategies. [`CostBound`] tells
//! when a one-box packing costs as little as any packing could.

use crate::geometry::{Len, Vec3};
use crate::kinds::{BoxKind, Kind};

/// What a packing of every unit costs at least, to tell when a one-box
/// packing is the cheapest there is: then nothing beats it under either
/// goal, neither in cost nor in boxes.
pub struct CostBound {
    /// The least cost of one box holding every unit.
    one_box: f64,
    /// Each box type's least cost and volume, cheapest first.
    covers: Vec<(f64, f64)>,
    /// The units' volume.
    volume: f64,
}

impl CostBound {
    /// The bound for every unit of `kinds` (with `quantities`) in boxes of
    /// `types`. `None` when no box holds them all, when some box could cost
    /// nothing or less (so no count of boxes bounds the cost), or when
    /// there are no units.
    pub fn new(kinds: &[Kind], quantities: &[u32], types: &[BoxKind]) -> Option<Self> {
        let units = kinds.iter().zip(quantities).filter(|(_, q)| **q > 0);
        let volume: f64 = units.clone().map(|(k, q)| k.volume * f64::from(*q)).sum();
        let weight: f64 = units.clone().map(|(k, q)| k.weight * f64::from(*q)).sum();
        // Slack for float sums: a bound a little low only costs search time.
        let (volume, weight) = (volume * (1.0 - 1e-9), weight * (1.0 - 1e-9));
        // One box costs at least the cheapest type that could hold every
        // unit (by volume, weight and each unit's fit) at their weight.
        let one_box = types
            .iter()
            .filter(|t| t.volume >= volume && t.payload_max() >= weight)
            .filter(|t| units.clone().all(|(k, _)| t.can_hold(k)))
            .map(|t| t.least_cost_from(t.weight_tare + weight))
            .fold(f64::INFINITY, f64::min);
        let mut covers: Vec<(f64, f64)> =
            types.iter().map(|t| (t.least_cost(), t.volume)).collect();
        let free = covers.iter().any(|(c, _)| c.is_nan() || *c <= 0.0);
        if volume <= 0.0 || !one_box.is_finite() || free {
            return None;
        }
        covers.sort_by(|a, b| a.0.total_cmp(&b.0));
        Some(CostBound {
            one_box,
            covers,
            volume,
        })
    }

    /// True when no packing of every unit costs less than `cost`: no one
    /// box, and no two boxes or more whose volumes hold the units'
    /// ([`cover_below`]). False too when that search grows too large.
    pub fn is_least(&self, cost: f64) -> bool {
        cost <= self.one_box && !cover_below(&self.covers, self.volume, cost)
    }
}

/// Search nodes [`cover_below`] visits at most before it gives up.
const COVER_NODES_MAX: u32 = 2_000;

/// True when two boxes or more of `(least cost, volume)` from `boxes`
/// (cheapest first, every cost above 0), each as often as wanted, add up
/// to `volume` for less than `cost`; true too when the search grows past
/// [`COVER_NODES_MAX`] before it can tell.
fn cover_below(boxes: &[(f64, f64)], volume: f64, cost: f64) -> bool {
    let mut search = Cover {
        boxes,
        volume,
        cost,
        nodes: 0,
        most_per_cost: boxes.iter().map(|(c, v)| v / c).fold(0.0, f64::max),
    };
    search.from(0, 0, 0.0, 0.0)
}

struct Cover<'a> {
    boxes: &'a [(f64, f64)],
    volume: f64,
    cost: f64,
    nodes: u32,
    most_per_cost: f64,
}

impl Cover<'_> {
    /// Whether boxes `from` on (so each set is met once), added to `count`
    /// boxes of `cost` and `volume`, make a cover below `self.cost`.
    fn from(&mut self, from: usize, count: u32, cost: f64, volume: f64) -> bool {
        for (t, &(c, v)) in self.boxes.iter().enumerate().skip(from) {
            let (cost, volume) = (cost + c, volume + v);
            if cost >= self.cost {
                // Dearer boxes follow.
                return false;
            }
            // Even at the best volume per cost, what is left of the budget
            // cannot make up the volume.
            if volume + (self.cost - cost) * self.most_per_cost < self.volume {
                continue;
            }
            self.nodes += 1;
            if self.nodes > COVER_NODES_MAX
                || (count >= 1 && volume >= self.volume)
                || self.from(t, count + 1, cost, volume)
            {
                return true;
            }
        }
        false
    }
}

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

    #[test]
    fn covers_take_two_boxes_or_more() {
        let boxes = [(2.0, 10.0), (5.0, 30.0), (9.0, 60.0)];
        // The cheapest cover of each volume: two of the smallest though one
        // holds 5; 5 + 2 for 40; 9 + 2 for 70; 9 + 9 for 120.
        for (volume, cheapest) in [(5.0, 4.0), (40.0, 7.0), (70.0, 11.0), (120.0, 18.0)] {
            assert!(!cover_below(&boxes, volume, cheapest), "{volume}");
            assert!(cover_below(&boxes, volume, cheapest + 0.5), "{volume}");
        }
    }

    #[test]
    fn a_cover_search_that_grows_too_large_proves_nothing() {
        // Forty types of about one unit's cost and volume: covering 30
        // means sets of 30 boxes, far more than the search visits.
        let boxes: Vec<(f64, f64)> = (0..40).map(|i| (1.0 + f64::from(i) * 1e-3, 1.0)).collect();
        assert!(cover_below(&boxes, 30.0, 30.0 + 1e-3));
        assert!(!cover_below(&boxes, 2.0, 2.0));
    }

    /// A random unit set and catalogue ([`crate::testkit::random_box_type`]).
    fn random_case(
        rng: &mut crate::improve::Rng,
        case: usize,
    ) -> (Vec<Kind>, Vec<u32>, Vec<BoxKind>) {
        use crate::testkit::{random_box_type, random_kind};
        let quantities: Vec<u32> = (0..1 + case % 3)
            .map(|i| 1 + ((case + i) % 3) as u32)
            .collect();
        let kinds = (0..quantities.len())
            .map(|i| random_kind(rng, i, quantities[i], 8.0))
            .collect();
        let boxes = (0..1 + case % 5)
            .map(|i| random_box_type(rng, case, i, 14.0))
            .collect();
        (kinds, quantities, boxes)
    }

    /// The least cost of any split of `units` (kind indices) into groups,
    /// each in a box type that holds its units by volume, weight and fit,
    /// at that box's cost for the group's weight: a relaxation (positions
    /// are not checked), so at most what any packing of them all costs.
    fn least_split(units: &[usize], kinds: &[Kind], boxes: &[BoxKind]) -> f64 {
        let Some((&first, rest)) = units.split_first() else {
            return 0.0;
        };
        // The group holding the first unit: any subset of the rest joins it.
        let mut best = f64::INFINITY;
        for mask in 0u32..1 << rest.len() {
            let joins = |i: &usize| mask >> i & 1 == 1;
            let group: Vec<usize> = std::iter::once(first)
                .chain((0..rest.len()).filter(joins).map(|i| rest[i]))
                .collect();
            let others: Vec<usize> = (0..rest.len())
                .filter(|i| !joins(i))
                .map(|i| rest[i])
                .collect();
            let volume: f64 = group.iter().map(|&k| kinds[k].volume).sum();
            let weight: f64 = group.iter().map(|&k| kinds[k].weight).sum();
            let group_cost = boxes
                .iter()
                .filter(|t| t.volume >= volume && t.payload_max() >= weight)
                .filter(|t| group.iter().all(|&k| t.can_hold(&kinds[k])))
                .map(|t| t.cost(t.weight_tare + weight))
                .fold(f64::INFINITY, f64::min);
            if group_cost.is_finite() {
                best = best.min(group_cost + least_split(&others, kinds, boxes));
            }
        }
        best
    }

    #[test]
    fn no_split_of_the_units_costs_less_than_a_least_cost() {
        let mut rng = crate::improve::Rng::new(11);
        let (mut bounded, mut least) = (0, 0);
        for case in 0..600 {
            let (kinds, quantities, boxes) = random_case(&mut rng, case);
            let Some(bound) = CostBound::new(&kinds, &quantities, &boxes) else {
                continue;
            };
            let units: Vec<usize> = quantities
                .iter()
                .enumerate()
                .flat_map(|(k, &q)| std::iter::repeat_n(k, q as usize))
                .collect();
            let split = least_split(&units, &kinds, &boxes);
            assert!(
                !bound.is_least(split + 1e-6),
                "case {case}: {split} is not least"
            );
            bounded += 1;
            least += usize::from(bound.is_least(split));
        }
        // Not a bound that proves nothing: the least split is often known.
        assert!(
            bounded >= 100 && least * 2 >= bounded,
            "{bounded} bounded, {least} least"
        );
    }

    #[test]
    fn no_bound_when_a_box_may_cost_nothing_or_none_holds_every_unit() {
        use crate::testkit::cube_box;
        let kind = Kind::new(&crate::model::ItemKindInput {
            dimensions: [4.0, 4.0, 4.0],
            weight: 1.0,
            quantity: 2,
            free_axes: None,
        });
        let kinds = [kind];
        let bound = |quantity: u32, boxes: &[BoxKind]| CostBound::new(&kinds, &[quantity], boxes);
        // Unpriced boxes cost their volume: 1000 for one 10-cube.
        let ten = bound(2, &[cube_box(10.0)]);
        assert!(ten
            .as_ref()
            .is_some_and(|b| b.is_least(1000.0) && !b.is_least(1000.5)));
        // Two 3-cubes cannot hold a 4-cube.
        assert!(bound(2, &[cube_box(3.0)]).is_none());
        let mut free = cube_box(10.0);
        free.price = Some(0.0);
        assert!(bound(2, &[cube_box(10.0), free]).is_none());
        assert!(bound(0, &[cube_box(10.0)]).is_none());
    }
}
