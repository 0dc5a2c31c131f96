//! Pre-packed boxes (`boxes` in the request): boxes that already exist, with
//! items in them. Their items stay where they are given (or, without a
//! position, go where a unit would go, in the order given); the boxes are
//! offered every unit of the pack before any new box is opened, count toward
//! `boxesMax` and are always part of the answer, even when they take nothing.

use serde::{Deserialize, Serialize};

use crate::error::CoreError;
use crate::fill::{BoxFill, PlacementRule};
use crate::geometry::{len_ceil, Cuboid};
use crate::kinds::{BoxKind, Kind};
use crate::limits::{BoxCaps, BoxExtra};
use crate::model::BoxTypeInput;

/// One pre-packed box as the engine input carries it.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PrepackedInput {
    /// The box's own type (never opened again as a new box).
    pub box_type: BoxTypeInput,
    #[serde(default)]
    pub caps: BoxCaps,
    #[serde(default)]
    pub extra: BoxExtra,
    /// The items already in it, one per unit.
    #[serde(default)]
    pub items: Vec<FixedItemInput>,
}

/// One item already in a pre-packed box.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FixedItemInput {
    /// Index into `PackInput::items` (a kind with quantity 0 when it is not
    /// also packed as new units).
    pub item: usize,
    /// Box-local back-bottom corner; the item keeps its given dimensions
    /// (as placed). `None`: placed by the engine.
    #[serde(default)]
    pub origin: Option<[f64; 3]>,
}

/// The items of each pre-packed box, as (place, kind), all with a place.
pub type FixedContents = Vec<Vec<(Cuboid, usize)>>;

/// Places the items of every pre-packed box once for the whole pack: given
/// positions first (checked to lie inside the box without overlap), then the
/// others in the order given. An item that cannot be placed is a request error.
pub fn fixed_contents(
    input: &[PrepackedInput],
    box_kinds: &[BoxKind],
    kinds: &[Kind],
    rule: PlacementRule,
) -> Result<FixedContents, CoreError> {
    let mut out = Vec::with_capacity(input.len());
    for (b, (p, bk)) in input.iter().zip(box_kinds).enumerate() {
        let mut fill = BoxFill::new(bk, rule);
        let mut placed: Vec<(usize, Cuboid, usize)> = Vec::with_capacity(p.items.len());
        let positioned = p
            .items
            .iter()
            .enumerate()
            .filter(|(_, i)| i.origin.is_some());
        let free = p
            .items
            .iter()
            .enumerate()
            .filter(|(_, i)| i.origin.is_none());
        for (j, item) in positioned.chain(free) {
            let field = format!("boxes[{b}].items[{j}]");
            let k = kinds
                .get(item.item)
                .ok_or_else(|| invalid(&field, "unknown item"))?;
            let at = match item.origin {
                Some(origin) => {
                    let c = Cuboid {
                        origin: origin.map(len_ceil),
                        size: k.dims,
                    };
                    check_place(&c, bk, &placed, &field)?;
                    Some(c)
                }
                None => None,
            };
            let cuboid = fill
                .place_fixed(item.item, at, kinds)
                .ok_or_else(|| invalid(&field, "does not fit in its pre-packed box"))?;
            placed.push((j, cuboid, item.item));
        }
        if fill.payload > bk.payload_max() + 1e-9 {
            return Err(invalid(
                &format!("boxes[{b}].items"),
                "weigh more than the box's weightMax allows",
            ));
        }
        // Reported in the order given.
        placed.sort_by_key(|(j, ..)| *j);
        out.push(placed.into_iter().map(|(_, c, k)| (c, k)).collect());
    }
    Ok(out)
}

/// A given position must lie inside the box and overlap no other item.
fn check_place(
    c: &Cuboid,
    bk: &BoxKind,
    placed: &[(usize, Cuboid, usize)],
    field: &str,
) -> Result<(), CoreError> {
    if (0..3).any(|a| c.origin[a] < 0 || c.end(a) > bk.dims[a]) {
        return Err(invalid(
            field,
            "origin puts the item (partly) outside its box",
        ));
    }
    if placed.iter().any(|(_, other, _)| other.overlaps(c)) {
        return Err(invalid(field, "overlaps another item of its box"));
    }
    Ok(())
}

fn invalid(field: &str, message: &str) -> CoreError {
    CoreError::Invalid {
        field: field.to_string(),
        message: message.to_string(),
    }
}

/// A fresh fill of a pre-packed box of type `bk` holding its items.
pub fn fill_with<'a>(
    bk: &'a BoxKind,
    contents: &[(Cuboid, usize)],
    rule: PlacementRule,
    kinds: &[Kind],
) -> BoxFill<'a> {
    let mut fill = BoxFill::new(bk, rule);
    for (c, kind) in contents {
        // Already checked by `fixed_contents`, so this always succeeds.
        let _ = fill.place_fixed(*kind, Some(*c), kinds);
    }
    fill
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ItemKindInput;
    use crate::tally::face_adjacent;

    fn cube_kind(side: f64) -> Kind {
        Kind::new(&ItemKindInput {
            dimensions: [side; 3],
            weight: 1.0,
            quantity: 0,
            free_axes: None,
        })
    }

    fn prepacked(items: Vec<FixedItemInput>) -> PrepackedInput {
        PrepackedInput {
            box_type: BoxTypeInput {
                dimensions: [10.0; 3],
                weight_max: 0.0,
                weight_tare: 0.0,
                price: None,
                rating: None,
            },
            caps: BoxCaps::default(),
            extra: BoxExtra::default(),
            items,
        }
    }

    fn item(origin: Option<[f64; 3]>) -> FixedItemInput {
        FixedItemInput { item: 0, origin }
    }

    #[test]
    fn given_positions_are_kept_and_the_rest_placed_around_them() -> Result<(), CoreError> {
        let kinds = vec![cube_kind(5.0)];
        let input = [prepacked(vec![item(None), item(Some([0.0, 0.0, 0.0]))])];
        let bk = [BoxKind::new(&input[0].box_type)];
        let rule = crate::testkit::first_point_rule();
        let contents = fixed_contents(&input, &bk, &kinds, rule)?;
        // In the order given: the free item went next to the one at the origin.
        assert_eq!(contents[0][1].0.origin, [0, 0, 0]);
        assert_eq!(contents[0][0].0.origin, [0, 0, 50_000]);
        let fill = fill_with(&bk[0], &contents[0], rule, &kinds);
        assert!(fill.units.is_empty());
        assert_eq!(fill.tally.fixed, 2);
        assert!((fill.volume_used() - 250.0).abs() < 1e-9);
        Ok(())
    }

    #[test]
    fn given_items_over_the_box_caps_stay_and_no_unit_joins_them() -> Result<(), CoreError> {
        let kinds = vec![cube_kind(5.0), cube_kind(1.0)];
        let mut over = prepacked(vec![item(Some([0.0, 0.0, 0.0])), item(None)]);
        over.caps.items_max = Some(1);
        let input = [over];
        let mut capped = BoxKind::new(&input[0].box_type);
        capped.caps = input[0].caps;
        let bk = [capped];
        let rule = crate::testkit::first_point_rule();
        let contents = fixed_contents(&input, &bk, &kinds, rule)?;
        assert_eq!(contents[0].len(), 2);
        let mut fill = fill_with(&bk[0], &contents[0], rule, &kinds);
        assert!(!fill.try_add(0, 1, &kinds));
        Ok(())
    }

    #[test]
    fn given_items_are_placed_whatever_cohort_max() -> Result<(), CoreError> {
        // One cohort allowed, the given one in mid-box: no free place touches it, and the
        // second given item still goes in, a cohort of its own.
        let kinds = vec![cube_kind(1.0)];
        let input = [prepacked(vec![item(Some([5.0, 5.0, 5.0])), item(None)])];
        let mut bk = BoxKind::new(&input[0].box_type);
        bk.extra.cohort_max = Some(1);
        let bk = [bk];
        let rule = crate::testkit::first_point_rule();
        let contents = fixed_contents(&input, &bk, &kinds, rule)?;
        assert_eq!(contents[0].len(), 2);
        assert!(!face_adjacent(&contents[0][0].0, &contents[0][1].0));
        Ok(())
    }

    #[test]
    fn a_unit_excluded_from_a_pre_packed_item_keeps_out_of_its_box() -> Result<(), CoreError> {
        let mut kinds = vec![cube_kind(1.0), cube_kind(1.0), cube_kind(1.0)];
        let exclusions = crate::model::Exclusions {
            kind_pairs: vec![[0, 1]],
            ..Default::default()
        };
        crate::kinds::apply_exclusions(&mut kinds, &exclusions);
        let input = [prepacked(vec![item(None)])];
        let bk = [BoxKind::new(&input[0].box_type)];
        let rule = crate::testkit::first_point_rule();
        let contents = fixed_contents(&input, &bk, &kinds, rule)?;
        let mut fill = fill_with(&bk[0], &contents[0], rule, &kinds);
        assert!(!fill.try_add(0, 1, &kinds));
        assert!(fill.try_add(1, 2, &kinds));
        Ok(())
    }

    #[test]
    fn overlapping_or_outside_items_are_refused() {
        let kinds = vec![cube_kind(5.0)];
        let rule = crate::testkit::first_point_rule();
        let refused = |items| {
            let input = [prepacked(items)];
            let bk = [BoxKind::new(&input[0].box_type)];
            match fixed_contents(&input, &bk, &kinds, rule) {
                Err(CoreError::Invalid { field, message }) => format!("{field}: {message}"),
                other => format!("accepted: {other:?}"),
            }
        };
        let at = |x: f64| item(Some([x, 0.0, 0.0]));
        assert_eq!(
            refused(vec![at(0.0), at(4.0)]),
            "boxes[0].items[1]: overlaps another item of its box"
        );
        assert_eq!(
            refused(vec![at(6.0)]),
            "boxes[0].items[0]: origin puts the item (partly) outside its box"
        );
        let nine = vec![item(None); 9];
        assert_eq!(
            refused(nine),
            "boxes[0].items[8]: does not fit in its pre-packed box"
        );
    }
}
