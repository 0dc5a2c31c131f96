//! Item kinds and box types lowered to fixed point, with what the search needs
//! precomputed once per pack.

use crate::cost::{box_cost, least_box_cost, Rating};
use crate::fragile::{FragileInput, FragileLimit};
use crate::geometry::{len_floor, len_side, volume_f64, Vec3};
use crate::limits::{BoxCaps, BoxExtra};

use crate::model::{BoxTypeInput, Exclusions, ItemKindInput};
use crate::orientation::{allowed_perms, distinct_shapes, Perm};

/// An item kind ready for placement.
#[derive(Debug, Clone)]
pub struct Kind {
    pub dims: Vec3,
    pub weight: f64,
    /// Volume of one unit; with alternate dimensions, of its smallest shape.
    pub volume: f64,
    /// Allowed placed shapes, the as-given orientation first when allowed.
    pub shapes: Vec<(Vec3, Perm)>,
    /// Sides sorted largest first, and whether every rotation is allowed:
    /// then domination is a plain comparison of sorted sides.
    pub sorted: Vec3,
    pub free: bool,
    /// The item set (refId group) for per-box and per-set limits.
    pub item_set: u32,
    /// The sequence group, `None` for an empty sequence.
    pub sequence: Option<u32>,
    /// Kinds whose units may not share a box with this one, sorted.
    pub excludes: Vec<usize>,
    /// Under `maxSequenceDistance`, the rank of the kind's sequence and the
    /// highest rank it may share a box with ([`crate::model::Exclusions`]).
    pub window: Option<(usize, usize)>,
    /// Box types this kind may not enter, sorted.
    pub excluded_box_types: Vec<usize>,
    /// What may rest above a unit (rule `fragile`).
    pub fragile: Option<FragileLimit>,
    /// Amount of each constrained property per unit (`propertyConstraints`).
    pub amounts: Vec<f64>,
    /// The first shape is tried alone first (orientation search pinned it).
    pub pinned: bool,
    /// Under `interlock`, the sides (sorted) of the shapes whose footprint
    /// alternates by layer: a unit in an alternate shape interlocks as that
    /// shape's turns allow, whatever its own shape's do.
    pub interlocking: Vec<Vec3>,
    /// Shapes differ in volume (alternate dimensions): `volume` is the least,
    /// a bound, and each placement counts its own shape's volume.
    pub varied: bool,
}

impl Kind {
    /// Lowers an input item kind; item lengths round up.
    pub fn new(input: &ItemKindInput) -> Self {
        let dims = input.dimensions.map(len_side);
        let perms = allowed_perms(input.free_axes.as_deref());
        let shapes = distinct_shapes(&dims, &perms);
        let mut sorted = dims;
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        Kind {
            dims,
            weight: input.weight,
            volume: volume_f64(&dims),
            shapes,
            sorted,
            free: perms.len() == 6,
            item_set: 0,
            sequence: None,
            excludes: Vec::new(),
            window: None,
            excluded_box_types: Vec::new(),
            fragile: None,
            amounts: Vec::new(),
            pinned: false,
            interlocking: Vec::new(),
            varied: false,
        }
    }

    /// Adds the shapes of alternate dimensions `alternates` (turned as the
    /// kind's own may be) after its own; a unit then takes any of them.
    pub fn add_alternates(&mut self, alternates: &[[f64; 3]], free_axes: Option<&[usize]>) {
        let perms = allowed_perms(free_axes);
        for dims in alternates {
            for shape in distinct_shapes(&dims.map(len_side), &perms) {
                if !self.shapes.iter().any(|(s, _)| *s == shape.0) {
                    self.shapes.push(shape);
                }
            }
        }
        self.varied = self
            .shapes
            .iter()
            .any(|(s, _)| volume_f64(s) != self.volume);
        if self.varied {
            // Domination then compares shapes one by one.
            self.free = false;
            self.volume = self
                .shapes
                .iter()
                .map(|(s, _)| volume_f64(s))
                .fold(f64::INFINITY, f64::min);
        }
    }

    /// The volume a unit placed as `at` takes: its kind's, or with alternate
    /// dimensions the volume of the shape it took.
    pub fn placed_volume(&self, at: &crate::geometry::Cuboid) -> f64 {
        if self.varied {
            at.volume()
        } else {
            self.volume
        }
    }

    /// True when a unit of this kind may share a box with a unit of kind
    /// `other` (at that index).
    pub fn may_share_with(&self, index: usize, other: &Kind) -> bool {
        let near = match (self.window, other.window) {
            (Some((a, reach_a)), Some((b, reach_b))) => {
                if a <= b {
                    b <= reach_a
                } else {
                    a <= reach_b
                }
            }
            _ => true,
        };
        near && self.excludes.binary_search(&index).is_err()
    }

    /// True when some kinds may not share a box with this one (rules or
    /// `maxSequenceDistance`).
    pub fn keeps_apart(&self) -> bool {
        !self.excludes.is_empty() || self.window.is_some()
    }

    /// True when every shape of `self` is at least as large on every axis as
    /// some shape of `other`: if `other` found no place, `self` finds none.
    pub fn dominates(&self, other: &Kind) -> bool {
        // A fragile kind fails for its own limit, which says nothing of others.
        if self.weight < other.weight || other.fragile.is_some() {
            return false;
        }
        if self.free && other.free {
            return (0..3).all(|a| self.sorted[a] >= other.sorted[a]);
        }
        self.shapes.iter().all(|(s, _)| {
            other
                .shapes
                .iter()
                .any(|(o, _)| (0..3).all(|a| s[a] >= o[a]))
        })
    }
}

/// A box type ready for filling.
#[derive(Debug, Clone)]
pub struct BoxKind {
    pub dims: Vec3,
    pub weight_max: f64,
    pub weight_tare: f64,
    pub price: Option<f64>,
    pub volume: f64,
    /// Per-box count limits.
    pub caps: BoxCaps,
    pub rating: Option<Rating>,
    /// Reserved space and property caps.
    pub extra: BoxExtra,
}

impl BoxKind {
    /// Lowers an input box type; box lengths round down.
    pub fn new(input: &BoxTypeInput) -> Self {
        let dims = input.dimensions.map(len_floor);
        BoxKind {
            dims,
            weight_max: input.weight_max,
            weight_tare: input.weight_tare,
            price: input.price,
            volume: volume_f64(&dims),
            caps: BoxCaps::default(),
            rating: input.rating.clone(),
            extra: BoxExtra::default(),
        }
    }

    /// Max weight of contents, `f64::INFINITY` when the box has no limit.
    pub fn payload_max(&self) -> f64 {
        if self.weight_max > 0.0 {
            self.weight_max - self.weight_tare
        } else {
            f64::INFINITY
        }
    }

    /// Cost of this box holding `gross_weight`: its price plus its rate
    /// table's rate at the rating weight, or its volume when it has neither
    /// (so lowest cost means least volume). See [`crate::cost`].
    pub fn cost(&self, gross_weight: f64) -> f64 {
        box_cost(self.price, self.volume, self.rating.as_ref(), gross_weight)
    }

    /// No box of this type costs less than this, whatever it holds: a bound
    /// that lets box choice skip trial fills that cannot win.
    pub fn least_cost(&self) -> f64 {
        self.least_cost_from(self.weight_tare)
    }

    /// The least cost of a box of this type at any gross weight from `gross` up.
    pub fn least_cost_from(&self, gross: f64) -> f64 {
        least_box_cost(self.price, self.volume, self.rating.as_ref(), gross)
    }

    /// True when an empty box of this type can hold one unit of `kind`.
    pub fn can_hold(&self, kind: &Kind) -> bool {
        kind.weight <= self.payload_max()
            && crate::tally::Tally::new(self).admits(self, kind, 0.0)
            && kind
                .shapes
                .iter()
                .any(|(s, _)| (0..3).all(|a| s[a] <= self.dims[a]))
    }
}

/// Records the request's exclusions on `kinds`, both ways for kind pairs;
/// indices out of range are ignored (the Python layer only sends valid ones).
pub fn apply_exclusions(kinds: &mut [Kind], exclusions: &Exclusions) {
    for &[a, b] in &exclusions.kind_pairs {
        if a < kinds.len() && b < kinds.len() {
            kinds[a].excludes.push(b);
            kinds[b].excludes.push(a);
        }
    }
    for &[k, b] in &exclusions.kind_box_types {
        if let Some(kind) = kinds.get_mut(k) {
            kind.excluded_box_types.push(b);
        }
    }
    for &[k, rank, reach] in &exclusions.sequence_windows {
        if let Some(kind) = kinds.get_mut(k) {
            kind.window = Some((rank, reach.max(rank)));
        }
    }
    for kind in kinds.iter_mut() {
        kind.excludes.sort_unstable();
        kind.excludes.dedup();
        kind.excluded_box_types.sort_unstable();
        kind.excluded_box_types.dedup();
    }
}

/// Gives kinds their alternate dimensions; indices out of range are ignored.
pub fn apply_alternates(
    kinds: &mut [Kind],
    input: &[crate::model::ItemKindInput],
    alternates: &[crate::model::AlternatesInput],
) {
    for a in alternates {
        if let (Some(kind), Some(item)) = (kinds.get_mut(a.kind), input.get(a.kind)) {
            kind.add_alternates(&a.dimensions, item.free_axes.as_deref());
        }
    }
}

/// Records each fragile kind's limit; indices out of range are ignored.
pub fn apply_fragile(kinds: &mut [Kind], fragile: &[FragileInput]) {
    for f in fragile {
        if let Some(kind) = kinds.get_mut(f.kind) {
            kind.fragile = Some(FragileLimit::new(f));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(d: [f64; 3], w: f64, free_axes: Option<Vec<usize>>) -> Kind {
        Kind::new(&ItemKindInput {
            dimensions: d,
            weight: w,
            quantity: 1,
            free_axes,
        })
    }

    #[test]
    fn domination_respects_rotation_and_weight() {
        let small = kind([1.0, 2.0, 3.0], 1.0, None);
        let big = kind([3.0, 2.0, 2.0], 1.0, None);
        assert!(big.dominates(&small));
        assert!(!small.dominates(&big));
        let heavy_small = kind([1.0, 2.0, 3.0], 5.0, None);
        assert!(!big.dominates(&heavy_small));
        let locked = kind([3.0, 1.0, 1.0], 1.0, Some(vec![]));
        let locked_long = kind([1.0, 1.0, 3.0], 1.0, Some(vec![]));
        assert!(!locked_long.dominates(&locked));
    }
}
