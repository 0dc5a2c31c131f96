//! Packing with fewer box types as well: a greedy box choice can be misled by
//! many cheap candidates (e.g. generated sizes), so a request may name subsets
//! of its box types (`boxTypeSubsets`, e.g. the request's own types without the
//! generated ones) that are packed alone too. The best complete answer wins;
//! the full set wins ties. Packing the subset is exactly the pack the request
//! would get without the other types, so adding them never makes it dearer.

use std::cmp::Ordering;

use crate::model::{Exclusions, Goal, PackInput, PackOutput};
use crate::sort::cmp_f64;

/// `input` restricted to the box types `keep` (ascending indices), with the
/// exclusions renumbered (those of pre-packed boxes, numbered after the box
/// types, too); `None` when `keep` names no valid box type.
pub fn restrict(input: &PackInput, keep: &[usize]) -> Option<PackInput> {
    let mut keep: Vec<usize> = keep
        .iter()
        .copied()
        .filter(|&b| b < input.box_types.len())
        .collect();
    keep.sort_unstable();
    keep.dedup();
    if keep.is_empty() || keep.len() == input.box_types.len() {
        return None;
    }
    // Pre-packed boxes are numbered after the box types: they follow the kept ones.
    let types = input.box_types.len();
    let new_index = |b: usize| {
        if b >= types {
            Some(keep.len() + (b - types))
        } else {
            keep.binary_search(&b).ok()
        }
    };
    let kind_box_types = input
        .exclusions
        .kind_box_types
        .iter()
        .filter_map(|&[k, b]| new_index(b).map(|nb| [k, nb]))
        .collect();
    // Per-box-type limits follow their box types.
    let mut options = input.options.clone();
    let limits = &input.options.limits;
    if !limits.box_caps.is_empty() {
        options.limits.box_caps = keep
            .iter()
            .map(|&b| limits.box_caps.get(b).copied().unwrap_or_default())
            .collect();
    }
    if !limits.box_extras.is_empty() {
        options.limits.box_extras = keep
            .iter()
            .map(|&b| limits.box_extras.get(b).cloned().unwrap_or_default())
            .collect();
    }
    Some(PackInput {
        items: input.items.clone(),
        box_types: keep.iter().map(|&b| input.box_types[b].clone()).collect(),
        options,
        exclusions: Exclusions {
            kind_pairs: input.exclusions.kind_pairs.clone(),
            kind_box_types,
            sequence_windows: input.exclusions.sequence_windows.clone(),
        },
        box_type_subsets: Vec::new(),
        fragile: input.fragile.clone(),
        boxes: input.boxes.clone(),
        alternates: input.alternates.clone(),
    })
}

/// Renumbers the boxes of an answer packed with the box types `keep` (as
/// [`restrict`] kept them) to the full list's indices.
pub fn widen(out: &mut PackOutput, keep: &[usize]) {
    let mut keep: Vec<usize> = keep.to_vec();
    keep.sort_unstable();
    keep.dedup();
    for b in out.boxes.iter_mut().filter(|b| b.prepacked.is_none()) {
        if let Some(&full) = keep.get(b.box_type) {
            b.box_type = full;
        }
    }
}

/// Fewer leftovers first; then the goal (cost, or box count); then fewer boxes.
pub fn compare_outputs(a: &PackOutput, b: &PackOutput, goal: Goal) -> Ordering {
    let cost = |o: &PackOutput| o.boxes.iter().map(|b| b.cost).sum::<f64>();
    let left = a.leftovers.len().cmp(&b.leftovers.len());
    let count = a.boxes.len().cmp(&b.boxes.len());
    let by_cost = cmp_f64(cost(a), cost(b));
    match goal {
        Goal::LowestCost => left.then(by_cost).then(count),
        Goal::MostItems => left.then(count).then(by_cost),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BoxTypeInput, ItemKindInput, PackedBox};

    fn box_type(side: f64) -> BoxTypeInput {
        BoxTypeInput {
            dimensions: [side; 3],
            weight_max: 0.0,
            weight_tare: 0.0,
            price: None,
            rating: None,
        }
    }

    #[test]
    fn restrict_renumbers_box_exclusions_and_widen_maps_back() -> Result<(), String> {
        let input = PackInput {
            items: vec![ItemKindInput {
                dimensions: [1.0; 3],
                weight: 0.0,
                quantity: 1,
                free_axes: None,
            }],
            box_types: vec![box_type(2.0), box_type(3.0), box_type(4.0)],
            exclusions: Exclusions {
                kind_pairs: vec![],
                // Box 3 is the first pre-packed box, after the three types.
                kind_box_types: vec![[0, 1], [0, 2], [0, 3]],
                ..Exclusions::default()
            },
            ..PackInput::default()
        };
        let sub = restrict(&input, &[2, 0]).ok_or("a proper subset restricts")?;
        assert_eq!(sub.box_types, vec![box_type(2.0), box_type(4.0)]);
        // The pre-packed box follows the two kept types: it is box 2 of the subset.
        assert_eq!(sub.exclusions.kind_box_types, vec![[0, 1], [0, 2]]);
        // An exclusion from pre-packed box 1 (index 3 + 1) follows it to index 2 + 1.
        let mut with_prepacked = input.clone();
        with_prepacked.exclusions.kind_box_types.push([0, 4]);
        let sub = restrict(&with_prepacked, &[2, 0]).ok_or("a proper subset restricts")?;
        assert_eq!(sub.exclusions.kind_box_types, vec![[0, 1], [0, 2], [0, 3]]);
        assert!(restrict(&input, &[0, 1, 2]).is_none());
        assert!(restrict(&input, &[7]).is_none());
        let mut out = PackOutput {
            boxes: vec![PackedBox {
                box_type: 1,
                cost: 1.0,
                dimensional_weight: None,
                dimensional_weight_used: false,
                items: vec![],
                prepacked: None,
                fixed: vec![],
            }],
            ..PackOutput::default()
        };
        widen(&mut out, &[2, 0]);
        assert_eq!(out.boxes[0].box_type, 2);
        Ok(())
    }
}
