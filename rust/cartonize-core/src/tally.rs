//! What a box holds beyond geometry and weight: its pre-packed items (which
//! count toward the per-box caps), the volume `reservedSpace` keeps free, the
//! sums of constrained item properties (`propertyConstraints`) and, under
//! `cohortPacking`, the face-connected groups ("cohorts") of each item set.

use crate::geometry::Cuboid;
use crate::kinds::{BoxKind, Kind};

/// Relative slack for the property sums, which are the caller's decimals.
const SUM_SLACK: f64 = 1e-9;

/// The running state of one box.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    /// Pre-packed items in the box (not units of this pack).
    pub fixed: usize,
    /// Current sum of each constrained property, from the box type's start value.
    sums: Vec<f64>,
    /// Under `cohortPacking`: the units so far and their groups.
    cohorts: Option<Cohorts>,
    /// True while a pre-packed item is given a place: the box's contents, which
    /// `cohortMax` (like every limit) never keeps out.
    cohorts_open: bool,
}

impl Tally {
    /// The state of an empty box of type `bk`.
    pub fn new(bk: &BoxKind) -> Self {
        Tally {
            fixed: 0,
            sums: bk.extra.properties.iter().map(|p| p.initial).collect(),
            cohorts: bk.extra.cohort_max.map(|max| Cohorts {
                max: max as usize,
                ..Cohorts::default()
            }),
            cohorts_open: false,
        }
    }

    /// True when one more unit of `k` keeps the box within its reserved
    /// space and property caps; `volume_used` is the item volume already in it.
    /// A unit without a property (amount 0 or less) never breaks its cap. For a
    /// kind with alternate dimensions the volume is its least shape's, and each
    /// placement checks its own shape ([`Tally::room_for`]).
    pub fn admits(&self, bk: &BoxKind, k: &Kind, volume_used: f64) -> bool {
        if !self.room_for(bk, k.volume, volume_used) {
            return false;
        }
        bk.extra
            .properties
            .iter()
            .zip(&self.sums)
            .enumerate()
            .all(|(i, (cap, sum))| {
                let amount = k.amounts.get(i).copied().unwrap_or(0.0);
                amount <= 0.0
                    || cap
                        .max
                        .is_none_or(|max| sum + amount <= max + SUM_SLACK * max.abs().max(1.0))
            })
    }

    /// True when `volume` more of items keeps the box within its reserved space.
    pub fn room_for(&self, bk: &BoxKind, volume: f64, volume_used: f64) -> bool {
        let reserved = bk.extra.reserved_space;
        reserved <= 0.0 || volume_used + volume <= bk.volume * (1.0 - reserved) * (1.0 + 1e-12)
    }

    /// True when a unit of `k` at `at` keeps its item set within `cohortMax`
    /// groups in this box (always true without `cohortPacking`).
    pub fn cohorts_allow(&self, k: &Kind, at: &Cuboid) -> bool {
        self.cohorts_open
            || self
                .cohorts
                .as_ref()
                .is_none_or(|c| c.allows(k.item_set, at))
    }

    /// Opens (`true`) or closes every place to [`Tally::cohorts_allow`]: open
    /// while a pre-packed item is placed, which the limit does not bind.
    pub fn open_cohorts(&mut self, open: bool) {
        self.cohorts_open = open;
    }

    /// True when placements may depend on more than space, weight and
    /// support, so a kind that found no place says nothing about others.
    pub fn position_bound(&self) -> bool {
        self.cohorts.is_some()
    }

    /// Notes a unit of `k` placed at `at`.
    pub fn add(&mut self, k: &Kind, at: &Cuboid) {
        for (sum, amount) in self.sums.iter_mut().zip(&k.amounts) {
            *sum += amount;
        }
        if let Some(c) = &mut self.cohorts {
            c.add(k.item_set, at);
        }
    }
}

/// Units of a box grouped into face-connected components per item set: two
/// units of one item set are in one group when a chain of units of that set,
/// each sharing a face (a contact of positive area) with the next, joins them.
#[derive(Debug, Clone, Default)]
struct Cohorts {
    max: usize,
    /// Item set and place of each unit, in placement order.
    units: Vec<(u32, Cuboid)>,
    /// Union-find parents over `units`.
    parent: Vec<usize>,
}

impl Cohorts {
    fn root(&self, mut i: usize) -> usize {
        while self.parent[i] != i {
            i = self.parent[i];
        }
        i
    }

    /// Groups of `set` a unit at `at` would touch, and how many `set` has now.
    fn touched(&self, set: u32, at: &Cuboid) -> (Vec<usize>, usize) {
        let mut touched = Vec::new();
        let mut roots = Vec::new();
        for (i, (s, c)) in self.units.iter().enumerate() {
            if *s != set {
                continue;
            }
            let r = self.root(i);
            if !roots.contains(&r) {
                roots.push(r);
            }
            if face_adjacent(c, at) && !touched.contains(&r) {
                touched.push(r);
            }
        }
        (touched, roots.len())
    }

    fn allows(&self, set: u32, at: &Cuboid) -> bool {
        let (touched, groups) = self.touched(set, at);
        !touched.is_empty() || groups < self.max
    }

    fn add(&mut self, set: u32, at: &Cuboid) {
        let (touched, _) = self.touched(set, at);
        let me = self.units.len();
        self.units.push((set, *at));
        self.parent.push(me);
        for r in touched {
            self.parent[r] = me;
        }
    }
}

/// True when the two cuboids share part of a face with positive area.
pub fn face_adjacent(a: &Cuboid, b: &Cuboid) -> bool {
    (0..3).any(|axis| {
        (a.end(axis) == b.origin[axis] || b.end(axis) == a.origin[axis])
            && a.face_overlap(b, axis) > 0
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::{BoxExtra, PropertyCap};
    use crate::model::ItemKindInput;

    fn cube(origin: [i64; 3]) -> Cuboid {
        Cuboid {
            origin,
            size: [1, 1, 1],
        }
    }

    fn kind(amounts: Vec<f64>, set: u32) -> Kind {
        let mut k = Kind::new(&ItemKindInput {
            dimensions: [1.0, 1.0, 1.0],
            weight: 0.0,
            quantity: 1,
            free_axes: None,
        });
        k.amounts = amounts;
        k.item_set = set;
        k
    }

    #[test]
    fn property_sums_start_at_the_box_value_and_stop_at_max() {
        let mut bk = crate::testkit::cube_box(10.0);
        bk.extra = BoxExtra {
            properties: vec![PropertyCap {
                initial: 1.0,
                max: Some(5.0),
            }],
            ..BoxExtra::default()
        };
        let mut tally = Tally::new(&bk);
        let two = kind(vec![2.0], 0);
        let none = kind(vec![], 0);
        assert!(tally.admits(&bk, &two, 0.0));
        tally.add(&two, &cube([0, 0, 0]));
        tally.add(&two, &cube([0, 0, 1]));
        assert!(!tally.admits(&bk, &two, 0.0), "1 + 2 + 2 + 2 > 5");
        assert!(tally.admits(&bk, &none, 0.0), "no amount, no limit");
    }

    #[test]
    fn reserved_space_caps_the_item_volume() {
        let mut bk = crate::testkit::cube_box(10.0);
        bk.extra.reserved_space = 0.25;
        let tally = Tally::new(&bk);
        let unit = kind(vec![], 0);
        assert!(tally.admits(&bk, &unit, 749.0));
        assert!(!tally.admits(&bk, &unit, 749.5));
    }

    #[test]
    fn cohorts_count_face_connected_groups_per_item_set() {
        let mut bk = crate::testkit::cube_box(10.0);
        bk.extra.cohort_max = Some(2);
        let mut tally = Tally::new(&bk);
        let a = kind(vec![], 0);
        let b = kind(vec![], 1);
        tally.add(&a, &cube([0, 0, 0]));
        tally.add(&a, &cube([0, 0, 5]));
        // A third group of set 0 is refused; touching a group, or another set, is not.
        assert!(!tally.cohorts_allow(&a, &cube([0, 5, 0])));
        assert!(tally.cohorts_allow(&a, &cube([0, 0, 1])));
        assert!(tally.cohorts_allow(&b, &cube([0, 5, 0])));
        // Touching only at an edge is not contact.
        assert!(!tally.cohorts_allow(&a, &cube([1, 1, 0])));
        // A unit bridging both groups merges them: one group, so a new one is allowed.
        tally.add(&a, &cube([0, 0, 1]));
        tally.add(&a, &cube([0, 0, 2]));
        tally.add(&a, &cube([0, 0, 3]));
        tally.add(&a, &cube([0, 0, 4]));
        assert!(tally.cohorts_allow(&a, &cube([0, 5, 5])));
    }
}
