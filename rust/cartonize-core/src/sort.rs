//! Item orderings (`itemSort`) and the sets of them that `combined` and `all` try.

use std::cmp::Ordering;

use crate::geometry::len_to_f64;
use crate::kinds::{BoxKind, Kind};
use crate::model::ItemSort;

/// The single orderings, in the order `all` tries them.
pub const SINGLE_SORTS: [ItemSort; 10] = [
    ItemSort::Default,
    ItemSort::LargestBoxNeeded,
    ItemSort::LargestGirth,
    ItemSort::LargestLengthPlusGirth,
    ItemSort::LongestDimension,
    ItemSort::ShortestDimension,
    ItemSort::LargestCrossSection,
    ItemSort::SetVolume,
    ItemSort::Weight,
    ItemSort::Density,
];

/// The recommended orderings `combined` tries: volume first, then the
/// orderings that most often beat it on mixed orders.
pub const COMBINED_SORTS: [ItemSort; 4] = [
    ItemSort::Default,
    ItemSort::LargestCrossSection,
    ItemSort::LongestDimension,
    ItemSort::SetVolume,
];

/// Wire spelling of a sort.
pub fn sort_name(sort: ItemSort) -> &'static str {
    match sort {
        ItemSort::Default => "default",
        ItemSort::LargestBoxNeeded => "largest-box-needed",
        ItemSort::LargestGirth => "largest-girth",
        ItemSort::LargestLengthPlusGirth => "largest-length-plus-girth",
        ItemSort::LongestDimension => "longest-dimension",
        ItemSort::ShortestDimension => "shortest-dimension",
        ItemSort::LargestCrossSection => "largest-cross-section",
        ItemSort::SetVolume => "set-volume",
        ItemSort::Weight => "weight",
        ItemSort::Density => "density",
        ItemSort::Sequence => "sequence",
        ItemSort::Combined => "combined",
        ItemSort::All => "all",
    }
}

/// The (sort, reversed) pairs to try for a request.
pub fn candidates(sort: ItemSort, reverse: bool, dual: bool) -> Vec<(ItemSort, bool)> {
    let base: Vec<ItemSort> = match sort {
        ItemSort::Combined => COMBINED_SORTS.to_vec(),
        ItemSort::All => SINGLE_SORTS.to_vec(),
        single => vec![single],
    };
    let mut out = Vec::new();
    for s in base {
        out.push((s, reverse));
        if dual || sort == ItemSort::All {
            out.push((s, !reverse));
        }
    }
    out
}

/// Sorted dimensions, largest first, in the caller's unit.
fn sides(k: &Kind) -> [f64; 3] {
    let mut s = k.dims.map(len_to_f64);
    s.sort_by(|a, b| b.total_cmp(a));
    s
}

/// The key of a kind under a sort, arranged so that ascending order of the
/// key is the sort's order.
fn key(sort: ItemSort, k: &Kind, quantity: u32, boxes: &[BoxKind]) -> f64 {
    let [l, m, s] = sides(k);
    match sort {
        ItemSort::Default | ItemSort::Combined | ItemSort::All => -k.volume,
        // `order_kinds` keeps the given order; no key is needed.
        ItemSort::Sequence => 0.0,
        ItemSort::LargestBoxNeeded => -boxes
            .iter()
            .filter(|b| b.can_hold(k))
            .map(|b| b.volume)
            .min_by(|a, b| a.total_cmp(b))
            .unwrap_or(f64::INFINITY),
        ItemSort::LargestGirth => -2.0 * (m + s),
        ItemSort::LargestLengthPlusGirth => -(l + 2.0 * (m + s)),
        ItemSort::LongestDimension => -l,
        ItemSort::ShortestDimension => s,
        ItemSort::LargestCrossSection => -(l * m),
        ItemSort::SetVolume => -(k.volume * f64::from(quantity)),
        ItemSort::Weight => -k.weight,
        ItemSort::Density => {
            if k.volume > 0.0 {
                -(k.weight / k.volume)
            } else {
                0.0
            }
        }
    }
}

/// Kind indices in the order of `sort`; ties fall back to volume, then input order.
pub fn order_kinds(
    sort: ItemSort,
    reverse: bool,
    kinds: &[Kind],
    quantities: &[u32],
    boxes: &[BoxKind],
) -> Vec<usize> {
    let mut order: Vec<usize> = (0..kinds.len()).collect();
    if sort == ItemSort::Sequence {
        if reverse {
            order.reverse();
        }
        return order;
    }
    let keys: Vec<f64> = kinds
        .iter()
        .zip(quantities)
        .map(|(k, q)| key(sort, k, *q, boxes))
        .collect();
    order.sort_by(|&a, &b| {
        keys[a]
            .total_cmp(&keys[b])
            .then_with(|| kinds[b].volume.total_cmp(&kinds[a].volume))
            .then(a.cmp(&b))
    });
    if reverse {
        order.reverse();
    }
    order
}

/// Orderings the engine adds to `combined` and `all` when the request is
/// small enough; they are not wire sorts, so a win reports the requested one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtraSort {
    /// Height (the most significant placement axis) bands of this many
    /// percent of the tallest box, taller bands first, larger base area first
    /// within a band (Crainic, Perboli & Tadei 2008, "clustered height-area").
    ClusteredHeightArea(u32),
    /// Larger base area first, then taller.
    AreaHeight,
}

/// Height along `axis` and base area of a kind as it is likely placed: as
/// given when locked, lying on its largest face when free.
fn height_area(k: &Kind, axis: usize) -> (f64, f64) {
    if k.free {
        let [l, m, s] = sides(k);
        (s, l * m)
    } else {
        let d = k.dims.map(len_to_f64);
        let area: f64 = (0..3).filter(|&a| a != axis).map(|a| d[a]).product();
        (d[axis], area)
    }
}

/// Kind indices in the order of an [`ExtraSort`]; `axis` is the height axis.
pub fn order_kinds_extra(
    sort: ExtraSort,
    axis: usize,
    kinds: &[Kind],
    boxes: &[BoxKind],
) -> Vec<usize> {
    let tallest = boxes
        .iter()
        .map(|b| len_to_f64(b.dims[axis]))
        .fold(0.0, f64::max);
    let keys: Vec<(f64, f64)> = kinds
        .iter()
        .map(|k| {
            let (h, area) = height_area(k, axis);
            match sort {
                ExtraSort::ClusteredHeightArea(percent) => {
                    let band = tallest * f64::from(percent.max(1)) / 100.0;
                    (-(h / band).floor(), -area)
                }
                ExtraSort::AreaHeight => (-area, -h),
            }
        })
        .collect();
    let mut order: Vec<usize> = (0..kinds.len()).collect();
    order.sort_by(|&a, &b| {
        let (ka, kb) = (keys[a], keys[b]);
        ka.0.total_cmp(&kb.0)
            .then(ka.1.total_cmp(&kb.1))
            .then_with(|| kinds[b].volume.total_cmp(&kinds[a].volume))
            .then(a.cmp(&b))
    });
    order
}

/// Orders two finite scores, treating NaN as equal (never produced here).
pub fn cmp_f64(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ItemKindInput;

    fn kind(d: [f64; 3], w: f64) -> Kind {
        Kind::new(&ItemKindInput {
            dimensions: d,
            weight: w,
            quantity: 1,
            free_axes: None,
        })
    }

    #[test]
    fn sorts_order_as_the_spec_says() {
        let kinds = vec![
            kind([1.0, 1.0, 9.0], 1.0),
            kind([3.0, 3.0, 3.0], 5.0),
            kind([2.0, 2.0, 2.0], 0.5),
        ];
        let q = [1, 1, 10];
        let o = |s, r| order_kinds(s, r, &kinds, &q, &[]);
        assert_eq!(o(ItemSort::Default, false), vec![1, 0, 2]);
        assert_eq!(o(ItemSort::Default, true), vec![2, 0, 1]);
        assert_eq!(o(ItemSort::LongestDimension, false), vec![0, 1, 2]);
        assert_eq!(o(ItemSort::ShortestDimension, false), vec![0, 2, 1]);
        assert_eq!(o(ItemSort::SetVolume, false), vec![2, 1, 0]);
        assert_eq!(o(ItemSort::Weight, false), vec![1, 0, 2]);
        assert_eq!(o(ItemSort::Sequence, false), vec![0, 1, 2]);
        assert_eq!(o(ItemSort::Sequence, true), vec![2, 1, 0]);
    }

    #[test]
    fn clustered_height_area_bands_heights_then_sorts_by_area() {
        let locked = |d: [f64; 3]| {
            Kind::new(&ItemKindInput {
                dimensions: d,
                weight: 1.0,
                quantity: 1,
                free_axes: Some(vec![]),
            })
        };
        // Heights 50 and 45 share the 40..60 band (20% of a 100-high box); 30 is lower.
        let kinds = vec![
            locked([30.0, 90.0, 90.0]),
            locked([45.0, 20.0, 20.0]),
            locked([50.0, 10.0, 10.0]),
        ];
        let boxes = vec![BoxKind::new(&crate::model::BoxTypeInput {
            dimensions: [100.0, 100.0, 100.0],
            weight_max: 0.0,
            weight_tare: 0.0,
            price: None,
            rating: None,
        })];
        let band = order_kinds_extra(ExtraSort::ClusteredHeightArea(20), 0, &kinds, &boxes);
        assert_eq!(band, vec![1, 2, 0]);
        let fine = order_kinds_extra(ExtraSort::ClusteredHeightArea(1), 0, &kinds, &boxes);
        assert_eq!(fine, vec![2, 1, 0]);
        let area = order_kinds_extra(ExtraSort::AreaHeight, 0, &kinds, &boxes);
        assert_eq!(area, vec![0, 1, 2]);
    }

    #[test]
    fn combined_and_all_try_several() {
        assert_eq!(candidates(ItemSort::Combined, false, false).len(), 4);
        assert_eq!(candidates(ItemSort::All, false, false).len(), 20);
        assert_eq!(candidates(ItemSort::Weight, false, true).len(), 2);
    }
}
