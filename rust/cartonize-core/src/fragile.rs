//! Fragile items (rule `fragile`): a limit on the weight resting above an
//! item, or nothing above it at all (`onTopOnly`). "Above" means higher along
//! x (height) with overlapping footprints in y and z, however far up: weight
//! reaches the item through whatever lies between.

use serde::{Deserialize, Serialize};

use crate::geometry::Cuboid;
use crate::select::UnitRef;

/// The vertical axis: x is height.
const UP: usize = 0;

/// Weight comparisons allow this much rounding in the caller's sums.
const WEIGHT_SLACK: f64 = 1e-9;

/// One fragile item kind, as the Python layer lowers a `fragile` rule.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FragileInput {
    /// Index into `PackInput::items`.
    pub kind: usize,
    /// Most weight that may rest above a unit; `None`: no weight limit.
    #[serde(default)]
    pub max_weight: Option<f64>,
    /// Nothing at all may rest above a unit.
    #[serde(default)]
    pub on_top_only: bool,
    /// Offer the units after every non-fragile unit, so they tend to go on top
    /// (the rule's `unrestrictedPlacement: false`, the default).
    #[serde(default)]
    pub offer_last: bool,
}

/// What may rest above a unit of a fragile kind.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FragileLimit {
    /// Weight allowed above; negative when nothing at all is (`onTopOnly`).
    allowance: f64,
    pub offer_last: bool,
}

impl FragileLimit {
    pub fn new(input: &FragileInput) -> Self {
        let allowance = if input.on_top_only {
            -1.0
        } else {
            input.max_weight.unwrap_or(f64::INFINITY)
        };
        FragileLimit {
            allowance,
            offer_last: input.offer_last,
        }
    }
}

/// True when `upper` rests (directly or not) above `lower`.
fn above(upper: &Cuboid, lower: &Cuboid) -> bool {
    upper.origin[UP] >= lower.end(UP)
        && (0..3)
            .filter(|&a| a != UP)
            .all(|a| upper.origin[a] < lower.end(a) && lower.origin[a] < upper.end(a))
}

/// The units of one box seen as a stack: each unit's place and weight, and
/// how much more weight each fragile unit can take above it.
#[derive(Debug, Clone, Default)]
pub struct Stack {
    placed: Vec<(Cuboid, f64)>,
    /// (index into `placed`, weight it can still take above it).
    fragile: Vec<(usize, f64)>,
}

impl Stack {
    /// An empty stack with room for `units` placements.
    pub fn with_capacity(units: usize) -> Self {
        Stack {
            placed: Vec::with_capacity(units),
            fragile: Vec::new(),
        }
    }

    /// Empties the stack, keeping its memory.
    pub fn clear(&mut self) {
        self.placed.clear();
        self.fragile.clear();
    }

    fn load_above(&self, c: &Cuboid) -> f64 {
        self.placed
            .iter()
            .filter(|(p, _)| above(p, c))
            .map(|(_, w)| *w)
            .sum()
    }

    fn anything_above(&self, c: &Cuboid) -> bool {
        self.placed.iter().any(|(p, _)| above(p, c))
    }

    /// True when a unit of `weight` (and fragile `limit`) may go at `c`: no
    /// fragile unit below gets too much weight above it, and what is already
    /// above `c` is within the unit's own limit.
    pub fn allows(&self, c: &Cuboid, weight: f64, limit: Option<FragileLimit>) -> bool {
        let below_ok = self.fragile.iter().all(|&(i, left)| {
            !above(c, &self.placed[i].0) || (left >= 0.0 && weight <= left + WEIGHT_SLACK)
        });
        below_ok
            && limit.is_none_or(|l| {
                if l.allowance < 0.0 {
                    !self.anything_above(c)
                } else {
                    self.load_above(c) <= l.allowance + WEIGHT_SLACK
                }
            })
    }

    /// Records a unit placed at `c`; keep [`Stack::allows`] true first.
    pub fn push(&mut self, c: Cuboid, weight: f64, limit: Option<FragileLimit>) {
        for (i, left) in &mut self.fragile {
            if above(&c, &self.placed[*i].0) {
                *left -= weight;
            }
        }
        if let Some(l) = limit {
            let left = if l.allowance < 0.0 {
                -1.0
            } else {
                l.allowance - self.load_above(&c)
            };
            self.fragile.push((self.placed.len(), left));
        }
        self.placed.push((c, weight));
    }
}

/// Moves the units of kinds whose fragile limit asks to be offered last to
/// the end of `order`, keeping the relative order on both sides.
pub fn offer_last(order: &mut [UnitRef], limits: &[Option<FragileLimit>]) {
    let last = |u: &UnitRef| {
        limits
            .get(u.kind)
            .copied()
            .flatten()
            .is_some_and(|l| l.offer_last)
    };
    if order.iter().any(last) {
        order.sort_by_key(last);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cube(x: i64, y: i64, z: i64) -> Cuboid {
        Cuboid {
            origin: [x, y, z],
            size: [10, 10, 10],
        }
    }

    fn limit(max_weight: Option<f64>, on_top_only: bool) -> Option<FragileLimit> {
        Some(FragileLimit::new(&FragileInput {
            kind: 0,
            max_weight,
            on_top_only,
            offer_last: false,
        }))
    }

    #[test]
    fn weight_above_a_fragile_unit_is_limited_up_the_whole_column() {
        let mut stack = Stack::default();
        stack.push(cube(0, 0, 0), 1.0, limit(Some(5.0), false));
        assert!(stack.allows(&cube(10, 0, 0), 3.0, None));
        stack.push(cube(10, 0, 0), 3.0, None);
        // 3 + 3 > 5 two levels up; beside the column anything goes.
        assert!(!stack.allows(&cube(20, 5, 0), 3.0, None));
        assert!(stack.allows(&cube(20, 5, 0), 2.0, None));
        assert!(stack.allows(&cube(0, 10, 0), 50.0, None));
    }

    #[test]
    fn on_top_only_takes_nothing_above_and_goes_nowhere_under() {
        let mut stack = Stack::default();
        stack.push(cube(10, 0, 0), 1.0, None);
        assert!(!stack.allows(&cube(0, 0, 0), 1.0, limit(None, true)));
        assert!(stack.allows(&cube(0, 10, 0), 1.0, limit(None, true)));
        stack.push(cube(0, 10, 0), 1.0, limit(None, true));
        assert!(!stack.allows(&cube(10, 10, 0), 0.0, None));
        // A fragile unit under a heavier load than its limit is refused too.
        assert!(!stack.allows(&cube(0, 0, 0), 1.0, limit(Some(0.5), false)));
        assert!(stack.allows(&cube(0, 0, 0), 1.0, limit(Some(1.0), false)));
    }

    #[test]
    fn offer_last_moves_fragile_units_to_the_end_in_order() {
        let lim = FragileLimit {
            allowance: 1.0,
            offer_last: true,
        };
        let limits = vec![None, Some(lim), None];
        let mut order: Vec<UnitRef> = [1, 0, 1, 2]
            .iter()
            .enumerate()
            .map(|(i, &kind)| UnitRef {
                kind,
                unit: i as u32,
            })
            .collect();
        offer_last(&mut order, &limits);
        let kinds: Vec<usize> = order.iter().map(|u| u.kind).collect();
        assert_eq!(kinds, vec![0, 2, 1, 1]);
        assert_eq!(order[2].unit, 0);
    }
}
