//! Count limits of a pack: per box (`itemsPerBoxMax`, `itemSetsPerBoxMax`,
//! `itemsInlineMax`) and across boxes (`boxesMax`, `boxesPerItemSetMax`,
//! `boxesPerSequenceMax`). The Python layer resolves which value applies
//! (box-level overrides win; 0, negative and null mean no limit).

use serde::{Deserialize, Serialize};

use crate::geometry::{Cuboid, Len};
use crate::kinds::Kind;

/// Caps of one box type; `None` (or 0 on an inline axis) means no limit.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct BoxCaps {
    #[serde(default)]
    pub items_max: Option<u32>,
    #[serde(default)]
    pub item_sets_max: Option<u32>,
    /// Most items on one line parallel to x, y, z; 0 = no limit on that axis.
    #[serde(default)]
    pub inline_max: [u32; 3],
}

/// The limits of one pack, as the engine input carries them.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    #[serde(default)]
    pub boxes_max: Option<u32>,
    #[serde(default)]
    pub boxes_per_item_set_max: Option<u32>,
    #[serde(default)]
    pub boxes_per_sequence_max: Option<u32>,
    /// Per item kind: its item set (kinds sharing a refId share one); a
    /// missing entry makes the kind its own item set.
    #[serde(default)]
    pub item_sets: Vec<u32>,
    /// Per item kind: its sequence group, `None` for an empty sequence.
    #[serde(default)]
    pub sequences: Vec<Option<u32>>,
    /// Per box type: its caps; a missing entry has none.
    #[serde(default)]
    pub box_caps: Vec<BoxCaps>,
    /// Per box type: reserved space and property caps; a missing entry has none.
    #[serde(default)]
    pub box_extras: Vec<BoxExtra>,
    /// Per item kind: its amount of each constrained property (keys numbered
    /// as in [`BoxExtra::properties`]); a missing entry or key counts 0.
    #[serde(default)]
    pub amounts: Vec<Vec<f64>>,
}

/// A box type's volume and property caps beyond the count limits.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct BoxExtra {
    /// `reservedSpace`: share of the box volume kept free for packing
    /// material; the items' volume may not exceed the rest.
    #[serde(default)]
    pub reserved_space: f64,
    /// `propertyConstraints`, per property key: the box's start value and
    /// the most the start plus its items' amounts may sum to.
    #[serde(default)]
    pub properties: Vec<PropertyCap>,
    /// `cohortMax` under `cohortPacking` (the same for every box type).
    #[serde(default)]
    pub cohort_max: Option<u32>,
}

/// One `propertyConstraint` (aggregate `sum`) of a box type.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PropertyCap {
    /// The constraint's `value` in the box type: where the sum starts.
    #[serde(default)]
    pub initial: f64,
    /// `None`: no limit (the sum is still reported).
    #[serde(default)]
    pub max: Option<f64>,
}

impl Limits {
    /// The item set of item kind `item` of a pack of `items` kinds: its entry in
    /// `item_sets` when every kind has one, else the kind is its own item set.
    pub fn item_set_of(&self, item: usize, items: usize) -> u32 {
        match self.item_sets.len() == items {
            true => self.item_sets[item],
            false => item as u32,
        }
    }

    /// True when a limit counts boxes; improvement, which reshuffles whole
    /// boxes, is then skipped.
    pub fn counts_boxes(&self) -> bool {
        self.boxes_max.is_some()
            || self.boxes_per_item_set_max.is_some()
            || self.boxes_per_sequence_max.is_some()
    }
}

/// True when a box with `units` items and the item sets `sets` may take one
/// more item of item set `set` under `caps`.
pub fn caps_admit(caps: &BoxCaps, units: usize, sets: &[u32], set: u32) -> bool {
    if caps.items_max.is_some_and(|m| units >= m as usize) {
        return false;
    }
    match caps.item_sets_max {
        Some(m) => sets.contains(&set) || sets.len() < m as usize,
        None => true,
    }
}

/// True when `cand` shares no line parallel to an axis with more items than
/// that axis's limit allows (itself included).
pub fn inline_ok(cand: &Cuboid, placed: &[Cuboid], inline_max: [u32; 3]) -> bool {
    let mut rects: Vec<[(Len, Len); 2]> = Vec::new();
    for (axis, &max) in inline_max.iter().enumerate() {
        if max == 0 {
            continue;
        }
        let across = [(axis + 1) % 3, (axis + 2) % 3];
        rects.clear();
        for c in placed {
            let clipped =
                across.map(|a| (c.origin[a].max(cand.origin[a]), c.end(a).min(cand.end(a))));
            if clipped.iter().all(|(lo, hi)| lo < hi) {
                rects.push(clipped);
            }
        }
        if rects.len() < max as usize {
            continue;
        }
        if max_depth(&rects) + 1 > max as usize {
            return false;
        }
    }
    true
}

/// The most half-open rectangles that share one point.
fn max_depth(rects: &[[(Len, Len); 2]]) -> usize {
    let mut starts: Vec<Len> = rects.iter().map(|r| r[0].0).collect();
    starts.sort_unstable();
    starts.dedup();
    let mut events: Vec<(Len, i32)> = Vec::with_capacity(2 * rects.len());
    let mut best = 0;
    for u in starts {
        events.clear();
        for r in rects.iter().filter(|r| r[0].0 <= u && u < r[0].1) {
            events.push((r[1].0, 1));
            events.push((r[1].1, -1));
        }
        // Ends sort before starts at one position: half-open intervals.
        events.sort_unstable();
        let mut depth: i32 = 0;
        for (_, step) in &events {
            depth += step;
            best = best.max(depth.max(0) as usize);
        }
    }
    best
}

/// How many boxes each item set and each sequence already spans, for the
/// cross-box limits.
#[derive(Debug, Clone, Default)]
pub struct Spread {
    per_set: Option<usize>,
    per_sequence: Option<usize>,
    /// Boxes (by position) each item set / sequence group is in.
    sets: Vec<Vec<usize>>,
    sequences: Vec<Vec<usize>>,
}

/// Why a unit did not get into a box under the cross-box limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    ItemSet(usize),
    Sequence(usize),
}

impl Refusal {
    /// The leftover message.
    pub fn reason(self) -> String {
        match self {
            Refusal::ItemSet(m) => format!(
                "boxesPerItemSetMax {m} reached: this item's item set already spans {m} box(es)"
            ),
            Refusal::Sequence(m) => format!(
                "boxesPerSequenceMax {m} reached: items of this sequence already span {m} box(es)"
            ),
        }
    }
}

impl Spread {
    /// Empty bookkeeping for `limits` over `kinds`.
    pub fn new(limits: &Limits, kinds: &[Kind]) -> Self {
        let groups = |f: &dyn Fn(&Kind) -> Option<u32>| {
            kinds
                .iter()
                .filter_map(f)
                .max()
                .map_or(0, |m| m as usize + 1)
        };
        Spread {
            per_set: limits.boxes_per_item_set_max.map(|m| m as usize),
            per_sequence: limits.boxes_per_sequence_max.map(|m| m as usize),
            sets: vec![Vec::new(); groups(&|k| Some(k.item_set))],
            sequences: vec![Vec::new(); groups(&|k| k.sequence)],
        }
    }

    /// `None` when a unit of `kind` may go into box `position`, else why not.
    pub fn refuses(&self, kind: &Kind, position: usize) -> Option<Refusal> {
        let full =
            |spans: &Vec<usize>, max: usize| spans.len() >= max && !spans.contains(&position);
        if let Some(m) = self.per_set {
            if self
                .sets
                .get(kind.item_set as usize)
                .is_some_and(|s| full(s, m))
            {
                return Some(Refusal::ItemSet(m));
            }
        }
        if let (Some(m), Some(q)) = (self.per_sequence, kind.sequence) {
            if self.sequences.get(q as usize).is_some_and(|s| full(s, m)) {
                return Some(Refusal::Sequence(m));
            }
        }
        None
    }

    /// The item sets and sequences that a new box holding units of the kinds
    /// `taken` would close (it is their last allowed box) while units of
    /// theirs, of the kinds `left`, stay behind; `None` when there are none.
    pub fn stranded(&self, kinds: &[Kind], taken: &[usize], left: &[usize]) -> Option<Stranded> {
        let closing =
            |limit: Option<usize>, spans: &[Vec<usize>], group: &dyn Fn(&Kind) -> Option<u32>| {
                let mut flags = vec![false; spans.len()];
                let Some(m) = limit else { return flags };
                let mut in_box = vec![false; spans.len()];
                for g in taken.iter().filter_map(|&k| group(&kinds[k])) {
                    in_box[g as usize] = true;
                }
                for g in left.iter().filter_map(|&k| group(&kinds[k])) {
                    let g = g as usize;
                    flags[g] = in_box[g] && spans[g].len() + 1 == m;
                }
                flags
            };
        let found = Stranded {
            sets: closing(self.per_set, &self.sets, &|k| Some(k.item_set)),
            sequences: closing(self.per_sequence, &self.sequences, &|k| k.sequence),
        };
        (found.sets.contains(&true) || found.sequences.contains(&true)).then_some(found)
    }

    /// Notes that a unit of `kind` went into box `position`.
    pub fn record(&mut self, kind: &Kind, position: usize) {
        let note = |spans: Option<&mut Vec<usize>>| {
            if let Some(s) = spans {
                if !s.contains(&position) {
                    s.push(position);
                }
            }
        };
        note(self.sets.get_mut(kind.item_set as usize));
        if let Some(q) = kind.sequence {
            note(self.sequences.get_mut(q as usize));
        }
    }
}

/// Item sets and sequences a box would split at their last allowed box.
#[derive(Debug, Clone)]
pub struct Stranded {
    sets: Vec<bool>,
    sequences: Vec<bool>,
}

impl Stranded {
    /// True when `kind` belongs to a stranded item set or sequence.
    pub fn holds(&self, kind: &Kind) -> bool {
        self.sets.get(kind.item_set as usize) == Some(&true)
            || kind
                .sequence
                .is_some_and(|q| self.sequences.get(q as usize) == Some(&true))
    }
}

/// The leftover message for units beyond `boxesMax`.
pub fn boxes_max_reason(max: u32) -> String {
    format!("boxesMax {max} reached: no further box may be opened")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cuboid(origin: [Len; 3], size: [Len; 3]) -> Cuboid {
        Cuboid { origin, size }
    }

    #[test]
    fn inline_limits_count_items_on_a_line_per_axis() {
        // Two 2×2×2 cubes side by side along y at the floor.
        let placed = [cuboid([0, 0, 0], [2, 2, 2]), cuboid([0, 2, 0], [2, 2, 2])];
        let third_along_y = cuboid([0, 4, 0], [2, 2, 2]);
        let on_top = cuboid([2, 0, 0], [2, 2, 2]);
        let bridging = cuboid([2, 1, 0], [2, 2, 2]);
        assert!(inline_ok(&third_along_y, &placed, [0, 3, 0]));
        assert!(!inline_ok(&third_along_y, &placed, [0, 2, 0]));
        assert!(!inline_ok(&on_top, &placed, [1, 0, 0]));
        assert!(inline_ok(&on_top, &placed, [2, 0, 0]));
        // Stacked across two cubes: each vertical line meets one of them.
        assert!(inline_ok(&bridging, &placed, [2, 0, 0]));
        assert!(inline_ok(&on_top, &placed, [0, 0, 1]));
    }

    #[test]
    fn depth_is_the_most_rectangles_sharing_a_point() {
        let r = |a: Len, b: Len, c: Len, d: Len| [(a, b), (c, d)];
        assert_eq!(max_depth(&[r(0, 2, 0, 2), r(2, 4, 0, 2)]), 1);
        assert_eq!(max_depth(&[r(0, 3, 0, 3), r(1, 4, 1, 4), r(2, 5, 2, 5)]), 3);
        assert_eq!(max_depth(&[r(0, 3, 0, 1), r(1, 4, 1, 2), r(2, 5, 0, 2)]), 2);
    }

    #[test]
    fn caps_limit_items_and_item_sets() {
        let caps = BoxCaps {
            items_max: Some(3),
            item_sets_max: Some(2),
            inline_max: [0; 3],
        };
        assert!(caps_admit(&caps, 2, &[1, 2], 2));
        assert!(!caps_admit(&caps, 2, &[1, 2], 3));
        assert!(!caps_admit(&caps, 3, &[1], 1));
        assert!(caps_admit(&BoxCaps::default(), 1000, &[1, 2, 3], 4));
    }
}
