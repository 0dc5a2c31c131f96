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
