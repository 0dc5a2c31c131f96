//! Exact fits of a few units into one box: a depth-first search over every
//! extreme point and shape ([`BoxFill::spots`]) for each unit in turn, largest
//! first, within a budget of placements. The greedy fills choose one place
//! per unit and can miss a fit that needs a unit where it does not look best
//! (a box whose units all end within millimetres of its walls); with a dozen
//! units the search settles the question, or gives up at its budget.

use crate::deadline::Deadline;
use crate::fill::BoxFill;
use crate::kinds::Kind;

/// Most units a search takes on.
pub const UNITS_MAX: usize = 12;

/// Placements one search may try in all: about 2 ms when nothing fits. On
/// 2,888 random requests of at most 12 units under `boxesMax: 1` this fits
/// all units in 30 that left some over; 20,000 fit 33 (at up to 20 ms).
pub const PLACEMENTS: usize = 2_000;

/// `fill` with every unit of `units` (slot, kind) added, when the search finds
/// such a fill within `budget` placements (spent from it) and before
/// `deadline`; units are tried largest first.
pub fn fit_all<'a>(
    fill: &BoxFill<'a>,
    units: &[(usize, usize)],
    kinds: &[Kind],
    budget: &mut usize,
    deadline: &Deadline,
) -> Option<BoxFill<'a>> {
    let mut units = units.to_vec();
    units.sort_by(|a, b| {
        crate::sort::cmp_f64(kinds[b.1].volume, kinds[a.1].volume).then(a.1.cmp(&b.1))
    });
    let volume: f64 = units.iter().map(|(_, k)| kinds[*k].volume).sum();
    if volume > fill.box_kind.volume - fill.volume_used() + 1e-9 {
        return None;
    }
    search(fill.clone(), &units, kinds, budget, deadline)
}

fn search<'a>(
    mut fill: BoxFill<'a>,
    units: &[(usize, usize)],
    kinds: &[Kind],
    budget: &mut usize,
    deadline: &Deadline,
) -> Option<BoxFill<'a>> {
    let Some(((slot, kind), rest)) = units.split_first() else {
        return Some(fill);
    };
    for spot in fill.spots(*kind, kinds) {
        if *budget == 0 || deadline.expired() {
            return None;
        }
        *budget -= 1;
        let mut next = fill.clone();
        next.commit(*slot, *kind, kinds, spot);
        if let Some(done) = search(next, rest, kinds, budget, deadline) {
            return Some(done);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fill::{Merit, PlacementRule};
    use crate::kinds::BoxKind;
    use crate::model::{BoxTypeInput, ItemKindInput};

    fn kind(dimensions: [f64; 3], weight: f64) -> Kind {
        Kind::new(&ItemKindInput {
            dimensions,
            weight,
            quantity: 1,
            free_axes: None,
        })
    }

    /// Six units that fill a 350 x 400 x 600 carton to within 1-3 mm of its
    /// walls (bench.ecommerce order-406's second box, items free to turn; the
    /// greedy fill alone leaves one over):
    /// two 337 x 288 x 319 cartons, three 391 x 288 x 30 slabs, a small box.
    fn order_406() -> (Vec<Kind>, BoxKind, Vec<(usize, usize)>) {
        let kinds = vec![
            kind([337.0, 288.0, 319.0], 9684.0),
            kind([391.0, 288.0, 30.0], 2974.0),
            kind([38.0, 128.0, 119.0], 123.0),
            kind([300.0, 300.0, 300.0], 1.0),
        ];
        let carton = BoxKind::new(&BoxTypeInput {
            dimensions: [350.0, 400.0, 600.0],
            weight_max: 30_000.0,
            weight_tare: 0.0,
            price: None,
            rating: None,
        });
        let units = vec![(0, 0), (1, 0), (2, 1), (3, 1), (4, 1), (5, 2)];
        (kinds, carton, units)
    }

    fn rule() -> PlacementRule {
        PlacementRule {
            prefer_given: false,
            merit: Merit::FirstPoint,
            ..crate::testkit::first_point_rule()
        }
    }

    #[test]
    fn the_search_fits_what_the_greedy_fill_leaves_over() -> Result<(), String> {
        let (kinds, carton, units) = order_406();
        let mut greedy = BoxFill::new(&carton, rule());
        let placed = units
            .iter()
            .filter(|(slot, kind)| greedy.try_add(*slot, *kind, &kinds))
            .count();
        assert!(placed < units.len(), "the greedy fill places them all");
        let mut budget = PLACEMENTS;
        let empty = BoxFill::new(&carton, rule());
        let never = Deadline::after(None);
        let full = fit_all(&empty, &units, &kinds, &mut budget, &never)
            .ok_or("the search finds no fit")?;
        assert_eq!(full.units.len(), units.len());
        for (i, a) in full.units.iter().enumerate() {
            assert!((0..3).all(|x| a.cuboid.origin[x] + a.cuboid.size[x] <= carton.dims[x]));
            for b in &full.units[i + 1..] {
                assert!(!a.cuboid.overlaps(&b.cuboid));
            }
        }
        assert!(budget < PLACEMENTS);
        Ok(())
    }

    #[test]
    fn what_cannot_fit_is_refused_within_the_budget() {
        let (kinds, carton, units) = order_406();
        let empty = BoxFill::new(&carton, rule());
        let never = Deadline::after(None);
        // A third large carton: more than the volume, refused before any placement.
        let mut more = units.clone();
        more.push((6, 0));
        let mut budget = PLACEMENTS;
        assert!(fit_all(&empty, &more, &kinds, &mut budget, &never).is_none());
        assert_eq!(budget, PLACEMENTS);
        // Three 300-cubes: 81 % of the volume, but one across and one deep, so two fit.
        let cubes = [(0, 3), (1, 3), (2, 3)];
        let mut budget = PLACEMENTS;
        assert!(fit_all(&empty, &cubes, &kinds, &mut budget, &never).is_none());
        assert!(budget > 0, "the search ends before its budget");
        assert!(fit_all(&empty, &cubes[..2], &kinds, &mut budget, &never).is_some());
        // The fit above, with one placement to spend: the search gives up.
        let mut budget = 1;
        assert!(fit_all(&empty, &units, &kinds, &mut budget, &never).is_none());
        assert_eq!(budget, 0);
    }
}
