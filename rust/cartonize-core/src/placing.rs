//! Placement options beyond the default first-corner-point rule:
//! `placementStyle`, `packOrigin`, `corners`, `interlock` and
//! `itemInitialOrientationBestForBox` (docs/decisions.md, "Placement styles
//! and orientation options").
//!
//! - A style other than `default`, or a `packOrigin` that is not a bottom
//!   corner of the box, gives each box a *reference point*. Which units share
//!   a box is decided by the default placement; each box is then re-filled
//!   toward its reference point ([`restyle`]). Candidates are the
//!   extreme points, each also *slid* toward the reference (along x first,
//!   then y, then z, twice) until the item meets an item or its centre reaches
//!   the reference's coordinate; the feasible candidate whose centre is
//!   nearest (Euclidean) to the reference wins, ties by `coordOrder`.
//! - `packOrigin` at a bottom corner under style `default` packs exactly as
//!   `default` does and mirrors the finished box along y and/or z, so packing
//!   starts from that corner.
//! - `corners: false` adds, for each item already placed, the positions flush
//!   against its near face along each axis, and the extreme points pushed to
//!   the far wall along y and z; candidates that float drop down (x) until
//!   they meet an item or the floor.

use crate::fill::{BoxFill, Merit, PlacementRule};
use crate::geometry::{len_floor, volume_f64, Cuboid, Len, Vec3};
use crate::kinds::Kind;
use crate::model::{Options, PlacementStyle};
use crate::orientation::Perm;
use crate::select::{Context, Packing};

/// What placement gathers items toward, before a box is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Anchor {
    /// The default: first candidate point in priority order.
    #[default]
    None,
    Style(PlacementStyle),
    /// `packOrigin`, fixed point; `corner_mirrors` is true under style
    /// `default`, where a bottom-corner origin mirrors the default packing.
    Point {
        point: Vec3,
        corner_mirrors: bool,
    },
}

/// The anchor resolved for one box.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Resolved {
    /// Twice the reference point (so centres stay integral), if any.
    pub reference2: Option<Vec3>,
    /// Axes along which the finished box is mirrored for output.
    pub mirror: [bool; 3],
}

impl Anchor {
    /// The anchor the options ask for.
    pub fn from_options(opts: &Options) -> Anchor {
        match (opts.pack_origin, opts.placement_style) {
            (Some(p), style) => Anchor::Point {
                point: p.map(|v| len_floor(v.clamp(0.0, 1e9))),
                corner_mirrors: style == PlacementStyle::Default,
            },
            (None, PlacementStyle::Default) => Anchor::None,
            (None, style) => Anchor::Style(style),
        }
    }

    /// The reference point and mirroring for a box of inner size `dims`.
    pub fn resolve(&self, dims: Vec3) -> Resolved {
        let [h, w, l] = dims;
        match *self {
            Anchor::None | Anchor::Style(PlacementStyle::Default) => Resolved::default(),
            Anchor::Style(PlacementStyle::Corner) => Resolved {
                reference2: Some([0, 0, 0]),
                mirror: [false; 3],
            },
            Anchor::Style(PlacementStyle::Wedge) => Resolved {
                reference2: Some([0, w, 0]),
                mirror: [false; 3],
            },
            Anchor::Style(PlacementStyle::Mound) => Resolved {
                reference2: Some([0, w, l]),
                mirror: [false; 3],
            },
            Anchor::Style(PlacementStyle::Orb) => Resolved {
                reference2: Some([h, w, l]),
                mirror: [false; 3],
            },
            Anchor::Point {
                point,
                corner_mirrors,
            } => {
                let p: Vec3 = std::array::from_fn(|a| point[a].clamp(0, dims[a]));
                let at_corner = p[0] == 0 && (1..3).all(|a| p[a] == 0 || p[a] == dims[a]);
                if corner_mirrors && at_corner {
                    Resolved {
                        reference2: None,
                        mirror: [false, p[1] == dims[1], p[2] == dims[2]],
                    }
                } else {
                    Resolved {
                        reference2: Some(p.map(|v| 2 * v)),
                        mirror: [false; 3],
                    }
                }
            }
        }
    }
}

/// Placement options carried by [`crate::fill::PlacementRule`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placing {
    pub anchor: Anchor,
    /// Only extreme points are candidates (`corners: true`, the default).
    pub corners: bool,
    /// Lying-flat orientation alternates by layer (`interlock`).
    pub interlock: bool,
    /// Try first the orientation fitting most units in the box type.
    pub best_for_box: bool,
    /// Boxes fill toward the anchor's reference point. Off while packing
    /// decides which units go in which box; [`restyle`] turns it on.
    pub styling: bool,
}

impl Default for Placing {
    fn default() -> Self {
        Placing {
            anchor: Anchor::None,
            corners: true,
            interlock: false,
            best_for_box: false,
            styling: false,
        }
    }
}

impl Placing {
    pub fn from_options(opts: &Options) -> Placing {
        Placing {
            anchor: Anchor::from_options(opts),
            corners: opts.corners,
            interlock: opts.interlock,
            best_for_box: opts.best_for_box,
            styling: false,
        }
    }

    /// True when a unit that found no place says nothing about larger kinds.
    pub fn breaks_domination(&self) -> bool {
        self.interlock || !self.corners
    }
}

/// Re-places each box's units under the style's reference point (see the
/// module docs): in their packed order, else largest first; a box whose units
/// the style cannot all place keeps its packed arrangement. So a style
/// changes where items sit, never how many boxes a request needs.
pub fn restyle(packing: &mut Packing, ctx: &Context<'_>) {
    let placing = Placing {
        styling: true,
        ..ctx.rule.placing
    };
    let rule = PlacementRule {
        placing,
        merit: Merit::FirstPoint,
        ..ctx.rule
    };
    for filled in &mut packing.boxes {
        let bk = &ctx.boxes[filled.box_type];
        // Pre-packed boxes keep their items where the request put them.
        if filled.box_type >= ctx.openable || placing.anchor.resolve(bk.dims).reference2.is_none() {
            continue;
        }
        let mut by_volume = filled.units.clone();
        by_volume.sort_by(|a, b| {
            crate::sort::cmp_f64(ctx.kinds[b.kind].volume, ctx.kinds[a.kind].volume)
        });
        for order in [filled.units.clone(), by_volume] {
            let mut fill = BoxFill::new(bk, rule);
            if order
                .iter()
                .all(|u| fill.try_add(u.slot, u.kind, ctx.kinds))
            {
                filled.units = fill.units;
                break;
            }
        }
    }
}

/// The layer of a flat item resting at height `base` with placed height `h`:
/// how many of its own heights fit below it.
pub fn layer(base: Len, h: Len) -> Len {
    if h <= 0 {
        0
    } else {
        base / h
    }
}

/// Under `interlock`, whether `shape` may go at height `base`: on even layers
/// the long horizontal side runs along z (length), on odd ones along y.
/// Shapes whose sides lie flat in no turn allowed, or in turns with only one
/// footprint (orientation locks), are not constrained.
pub fn interlock_allows(k: &Kind, base: Len, shape: &Vec3) -> bool {
    if k.interlocking.is_empty() || !k.interlocking.contains(&sorted_sides(shape)) {
        return true;
    }
    if layer(base, shape[0]) % 2 == 0 {
        shape[2] >= shape[1]
    } else {
        shape[1] >= shape[2]
    }
}

/// True when an item with `shapes` may alternate its footprint by layer.
pub fn can_interlock(shapes: &[(Vec3, Perm)]) -> bool {
    shapes.iter().any(|(s, _)| s[2] >= s[1]) && shapes.iter().any(|(s, _)| s[1] >= s[2])
}

/// The sides (sorted) of `shapes` that interlock: each set of sides (an
/// item's own, or an alternate's) whose allowed shapes all lie flat and
/// include both footprints. A unit is judged by the shape it takes, as
/// `layFlat` judges it (`keep_flat`).
pub fn interlocking_sides(shapes: &[(Vec3, Perm)]) -> Vec<Vec3> {
    let mut out: Vec<Vec3> = Vec::new();
    for (s, _) in shapes {
        let sides = sorted_sides(s);
        if out.contains(&sides) {
            continue;
        }
        let alike: Vec<(Vec3, Perm)> = shapes
            .iter()
            .filter(|(t, _)| sorted_sides(t) == sides)
            .copied()
            .collect();
        if alike.iter().all(|(t, _)| t[0] == sides[0]) && can_interlock(&alike) {
            out.push(sides);
        }
    }
    out
}

/// `shape`'s sides, smallest first.
fn sorted_sides(shape: &Vec3) -> Vec3 {
    let mut sides = *shape;
    sides.sort_unstable();
    sides
}

/// Keeps only the shapes lying on their largest face (smallest side along x),
/// of each set of sides (an item's own, or an alternate's) that has one;
/// returns whether any shape was dropped.
pub fn keep_flat(shapes: &mut Vec<(Vec3, Perm)>) -> bool {
    let sides = sorted_sides;
    let flat = |s: &Vec3| s[0] == sides(s)[0];
    // Sides none of whose allowed shapes lies flat keep them all: the lock wins.
    let keep: Vec<bool> = shapes
        .iter()
        .map(|(s, _)| flat(s) || !shapes.iter().any(|(t, _)| sides(t) == sides(s) && flat(t)))
        .collect();
    let before = shapes.len();
    let mut i = 0;
    shapes.retain(|_| {
        i += 1;
        keep[i - 1]
    });
    shapes.len() != before
}

/// How many units of `shape` fit in a grid in an empty box of size `dims`.
pub fn grid_count(shape: &Vec3, dims: &Vec3) -> i128 {
    (0..3)
        .map(|a| i128::from(dims[a] / shape[a].max(1)))
        .product()
}

/// The shapes of `k` in the order a box tries them, and where the first pass
/// ends: the preferred shape alone first when orientations are preferred,
/// pinned by the orientation search, or chosen best for the box. A kind with
/// alternate dimensions ([`Kind::varied`]) has a third pass: with preferred
/// orientations its own shapes are tried at every point before the
/// alternates (shapes of another volume than the first).
#[derive(Debug, Clone)]
// Lives on the stack for one placement: boxing the large variant would
// allocate for each placement under best-for-box orientation.
#[allow(clippy::large_enum_variant)]
pub enum ShapeOrder<'k> {
    /// The kind's own shapes in their order, the first `split` in the first
    /// pass: borrowed, as placement asks for the order of every unit it
    /// tries (copying the shapes was 5 % of the engine's instructions on MPV).
    Given {
        shapes: &'k [(Vec3, Perm)],
        split: usize,
    },
    /// The shape best for the box first, alone in the first pass.
    BestFirst {
        shapes: [(Vec3, Perm); 6],
        len: usize,
    },
    /// A varied kind's shapes in pass order, and where passes 2 and 3 begin.
    Varied {
        shapes: Vec<(Vec3, Perm)>,
        splits: [usize; 2],
    },
}

impl<'k> ShapeOrder<'k> {
    pub fn new(k: &'k Kind, prefer_given: bool, best_for_box: Option<&Vec3>) -> Self {
        if k.varied {
            return Self::of_varied(k, prefer_given, best_for_box);
        }
        let len = k.shapes.len().min(6);
        if let Some(dims) = best_for_box.filter(|_| !k.pinned && len > 1) {
            let mut shapes = [([0; 3], [0, 1, 2]); 6];
            shapes[..len].copy_from_slice(&k.shapes[..len]);
            // The first shape with the highest count; ties keep the given order.
            let mut best = 0;
            for i in 1..len {
                if grid_count(&shapes[i].0, dims) > grid_count(&shapes[best].0, dims) {
                    best = i;
                }
            }
            shapes[..=best].rotate_right(1);
            return ShapeOrder::BestFirst { shapes, len };
        }
        let split = if prefer_given || k.pinned { 1 } else { len };
        ShapeOrder::Given {
            shapes: &k.shapes[..len],
            split: split.min(len),
        }
    }

    /// [`ShapeOrder::new`] for a kind with alternate dimensions.
    fn of_varied(k: &Kind, prefer_given: bool, best_for_box: Option<&Vec3>) -> Self {
        let mut shapes = k.shapes.clone();
        let len = shapes.len();
        let mut splits = [len, len];
        if let Some(dims) = best_for_box.filter(|_| !k.pinned && len > 1) {
            let mut best = 0;
            for i in 1..len {
                if grid_count(&shapes[i].0, dims) > grid_count(&shapes[best].0, dims) {
                    best = i;
                }
            }
            shapes[..=best].rotate_right(1);
            splits = [1, len];
        } else if prefer_given || k.pinned {
            // The first shape alone, then the others of its volume, then the rest.
            let first = volume_f64(&shapes[0].0);
            shapes[1..].sort_by_key(|(s, _)| volume_f64(s) != first);
            let same = 1 + shapes[1..]
                .iter()
                .take_while(|(s, _)| volume_f64(s) == first)
                .count();
            splits = [1, same];
        }
        ShapeOrder::Varied { shapes, splits }
    }

    /// The passes, the later ones possibly empty.
    pub fn passes(&self) -> [&[(Vec3, Perm)]; 3] {
        match self {
            ShapeOrder::Given { shapes, split } => {
                let (a, b) = shapes.split_at(*split);
                [a, b, &[]]
            }
            ShapeOrder::BestFirst { shapes, len } => {
                let (a, b) = shapes[..*len].split_at(1.min(*len));
                [a, b, &[]]
            }
            ShapeOrder::Varied { shapes, splits } => {
                let (a, rest) = shapes.split_at(splits[0]);
                let (b, c) = rest.split_at(splits[1] - splits[0]);
                [a, b, c]
            }
        }
    }
}

/// Moves an item of `size` at `origin` toward `target` (an origin
/// coordinate per axis, `None` = stay) until it meets an item in `placed`:
/// x first, then y, then z, two rounds. The box walls bound `target`.
pub fn slide(origin: Vec3, size: &Vec3, target: &[Option<Len>; 3], placed: &[Cuboid]) -> Vec3 {
    let mut o = origin;
    for _ in 0..2 {
        let before = o;
        for a in 0..3 {
            let Some(t) = target[a] else { continue };
            if t == o[a] {
                continue;
            }
            let me = Cuboid {
                origin: o,
                size: *size,
            };
            let across = |c: &Cuboid| {
                (0..3)
                    .filter(|&b| b != a)
                    .all(|b| c.origin[b] < me.end(b) && me.origin[b] < c.end(b))
            };
            if t < o[a] {
                let stop = placed
                    .iter()
                    .filter(|c| c.end(a) <= o[a] && across(c))
                    .map(|c| c.end(a))
                    .max()
                    .unwrap_or(Len::MIN);
                o[a] = t.max(stop);
            } else {
                let stop = placed
                    .iter()
                    .filter(|c| c.origin[a] >= me.end(a) && across(c))
                    .map(|c| c.origin[a] - size[a])
                    .min()
                    .unwrap_or(Len::MAX);
                o[a] = t.min(stop);
            }
        }
        if o == before {
            break;
        }
    }
    o
}

/// The origin coordinates that put the centre of `size` on the reference
/// (twice the point, `reference2`), within a box of `dims`.
pub fn target_of(reference2: &Vec3, size: &Vec3, dims: &Vec3) -> [Option<Len>; 3] {
    std::array::from_fn(|a| {
        let t = (reference2[a] - size[a]).div_euclid(2);
        Some(t.clamp(0, (dims[a] - size[a]).max(0)))
    })
}

/// Squared distance between the centre of `size` at `origin` and the
/// reference, in doubled units.
pub fn distance2(origin: &Vec3, size: &Vec3, reference2: &Vec3) -> i128 {
    (0..3)
        .map(|a| {
            let d = i128::from(2 * origin[a] + size[a] - reference2[a]);
            d * d
        })
        .sum()
}

/// Extra candidates under `corners: false` for an item of `size`: flush
/// against the near face of each placed item along each axis, and each of
/// `points` pushed to the far wall along y and z.
pub fn face_and_wall_points(
    size: &Vec3,
    dims: &Vec3,
    placed: &[Cuboid],
    points: impl Iterator<Item = Vec3>,
) -> Vec<Vec3> {
    let mut out = Vec::new();
    for c in placed {
        for a in 0..3 {
            let mut q = c.origin;
            q[a] -= size[a];
            if q[a] >= 0 {
                out.push(q);
            }
        }
    }
    for p in points {
        for a in 1..3 {
            let far = dims[a] - size[a];
            if far > p[a] {
                let mut q = p;
                q[a] = far;
                out.push(q);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ItemKindInput;

    fn tiles(corners: bool) -> crate::model::PackInput {
        use crate::model::{BoxTypeInput, ItemSort, PackInput};
        let tile = |y: f64, z: f64, quantity: u32| ItemKindInput {
            dimensions: [1.0, y, z],
            weight: 1.0,
            quantity,
            free_axes: Some(vec![]),
        };
        PackInput {
            items: vec![tile(4.0, 1.0, 3), tile(1.0, 3.0, 2), tile(2.0, 3.0, 1)],
            // The second box type holds no tile: it only keeps out the
            // maximal-space construction ([`crate::spaces`], one box type),
            // which finds the gap whatever `corners` says.
            box_types: vec![
                BoxTypeInput {
                    dimensions: [1.0, 6.0, 5.0],
                    weight_max: 0.0,
                    weight_tare: 0.0,
                    price: None,
                    rating: None,
                },
                BoxTypeInput {
                    dimensions: [0.5; 3],
                    weight_max: 0.0,
                    weight_tare: 0.0,
                    price: None,
                    rating: None,
                },
            ],
            options: Options {
                item_sort: ItemSort::Default,
                corners,
                ..Options::default()
            },
            ..PackInput::default()
        }
    }

    #[test]
    fn corners_false_reaches_a_gap_no_corner_point_marks() -> Result<(), crate::CoreError> {
        assert_eq!(crate::pack(&tiles(true))?.boxes.len(), 2);
        let out = crate::pack(&tiles(false))?;
        assert_eq!((out.boxes.len(), out.leftovers.len()), (1, 0));
        Ok(())
    }

    #[test]
    fn a_mound_starts_in_the_middle_of_the_floor() {
        use crate::fill::{BoxFill, PlacementRule};
        let bk = crate::testkit::cube_box(10.0);
        let kinds = vec![Kind::new(&ItemKindInput {
            dimensions: [2.0, 2.0, 2.0],
            weight: 0.0,
            quantity: 2,
            free_axes: None,
        })];
        let rule = PlacementRule {
            placing: Placing {
                anchor: Anchor::Style(PlacementStyle::Mound),
                styling: true,
                ..Placing::default()
            },
            ..crate::testkit::first_point_rule()
        };
        let mut fill = BoxFill::new(&bk, rule);
        assert!(fill.try_add(0, 0, &kinds) && fill.try_add(1, 0, &kinds));
        assert_eq!(fill.units[0].cuboid.origin, [0, 40_000, 40_000]);
        // Beside it (centre 1 up, 2 off) is nearer the floor's centre than on top of
        // it (3 up); of the four sides the one first in coordOrder wins the tie.
        assert_eq!(fill.units[1].cuboid.origin, [0, 20_000, 40_000]);
    }

    #[test]
    fn references_follow_the_style() {
        let dims = [10, 20, 30];
        let of = |s| Anchor::Style(s).resolve(dims).reference2;
        assert_eq!(of(PlacementStyle::Default), None);
        assert_eq!(of(PlacementStyle::Corner), Some([0, 0, 0]));
        assert_eq!(of(PlacementStyle::Wedge), Some([0, 20, 0]));
        assert_eq!(of(PlacementStyle::Mound), Some([0, 20, 30]));
        assert_eq!(of(PlacementStyle::Orb), Some([10, 20, 30]));
    }

    #[test]
    fn a_corner_pack_origin_mirrors_only_under_the_default_style() {
        let dims = [10, 20, 30];
        let far = Anchor::Point {
            point: [0, 99, 30],
            corner_mirrors: true,
        };
        assert_eq!(far.resolve(dims).mirror, [false, true, true]);
        assert_eq!(far.resolve(dims).reference2, None);
        let inside = Anchor::Point {
            point: [0, 5, 30],
            corner_mirrors: true,
        };
        assert_eq!(inside.resolve(dims).reference2, Some([0, 10, 60]));
        let styled = Anchor::Point {
            point: [0, 20, 30],
            corner_mirrors: false,
        };
        assert_eq!(styled.resolve(dims).reference2, Some([0, 40, 60]));
        assert_eq!(styled.resolve(dims).mirror, [false; 3]);
    }

    #[test]
    fn sliding_stops_at_items_and_at_the_target() {
        let wall = Cuboid {
            origin: [0, 0, 0],
            size: [10, 10, 4],
        };
        // From z = 8 toward z = 0: stops against the item ending at z = 4.
        let o = slide([0, 0, 8], &[2, 2, 2], &[None, None, Some(0)], &[wall]);
        assert_eq!(o, [0, 0, 4]);
        // Above the item (x = 10) nothing blocks it.
        let o = slide([10, 0, 8], &[2, 2, 2], &[None, None, Some(1)], &[wall]);
        assert_eq!(o, [10, 0, 1]);
        // Falling: x first down to the item's top.
        let o = slide([15, 0, 0], &[2, 2, 2], &[Some(0), None, None], &[wall]);
        assert_eq!(o, [10, 0, 0]);
    }

    #[test]
    fn lay_flat_keeps_the_shapes_on_the_largest_face() {
        let k = Kind::new(&ItemKindInput {
            dimensions: [3.0, 1.0, 2.0],
            weight: 0.0,
            quantity: 1,
            free_axes: None,
        });
        let mut shapes = k.shapes.clone();
        assert!(keep_flat(&mut shapes));
        assert_eq!(shapes.len(), 2);
        assert!(shapes.iter().all(|(s, _)| s[0] == 10_000));
        assert!(can_interlock(&shapes));
        // Locked upright: no flat shape is allowed, the lock wins.
        let locked = Kind::new(&ItemKindInput {
            dimensions: [3.0, 1.0, 2.0],
            weight: 0.0,
            quantity: 1,
            free_axes: Some(vec![]),
        });
        let mut shapes = locked.shapes.clone();
        assert!(!keep_flat(&mut shapes));
        assert_eq!(shapes.len(), 1);
    }

    #[test]
    fn lay_flat_keeps_each_alternate_shape_on_its_own_largest_face() {
        // A 3x1x2 item that may also be 6x1x1: flat, x is 1 for both.
        let mut k = Kind::new(&ItemKindInput {
            dimensions: [3.0, 1.0, 2.0],
            weight: 0.0,
            quantity: 1,
            free_axes: None,
        });
        k.add_alternates(&[[6.0, 1.0, 1.0]], None);
        let mut shapes = k.shapes.clone();
        assert!(keep_flat(&mut shapes));
        assert!(shapes.iter().all(|(s, _)| s[0] == 10_000));
        assert!(shapes.iter().any(|(s, _)| s.contains(&60_000)));
        assert!(shapes.iter().any(|(s, _)| s.contains(&30_000)));
        // As given first, then its turns, then the alternate (another volume).
        let order = ShapeOrder::new(&k, true, None);
        let [given, turns, alternates] = order.passes();
        assert_eq!(given[0].0, [30_000, 10_000, 20_000]);
        assert!(turns.iter().all(|(s, _)| s.contains(&30_000)));
        assert!(alternates.iter().all(|(s, _)| s.contains(&60_000)));
    }

    #[test]
    fn an_alternate_shape_interlocks_when_its_own_turns_do() {
        // 6x6x3 spinning about x never lies flat (the lock wins); folded to
        // 3x6x3 it lies flat both ways, so that shape interlocks.
        let mut k = Kind::new(&ItemKindInput {
            dimensions: [6.0, 6.0, 3.0],
            weight: 0.0,
            quantity: 1,
            free_axes: Some(vec![0]),
        });
        k.add_alternates(&[[3.0, 6.0, 3.0]], Some(&[0]));
        assert!(!keep_flat(&mut k.shapes));
        k.interlocking = interlocking_sides(&k.shapes);
        assert_eq!(k.interlocking, vec![[30_000, 30_000, 60_000]]);
        // Layer 0: long side along z only; the unfolded shapes are free.
        assert!(interlock_allows(&k, 0, &[30_000, 30_000, 60_000]));
        assert!(!interlock_allows(&k, 0, &[30_000, 60_000, 30_000]));
        assert!(interlock_allows(&k, 0, &[60_000, 60_000, 30_000]));
    }

    #[test]
    fn best_for_box_tries_the_densest_grid_first() {
        let k = Kind::new(&ItemKindInput {
            dimensions: [4.0, 5.0, 7.0],
            weight: 0.0,
            quantity: 1,
            free_axes: None,
        });
        // In 10 x 14 x 21 the given 4x5x7 fits 2*2*3 = 12; 5x7x4 fits 2*2*5 = 20,
        // 5x4x7 fits 2*3*3 = 18 and 4x7x5 fits 2*2*4 = 16.
        let dims = [100_000, 140_000, 210_000];
        let order = ShapeOrder::new(&k, true, Some(&dims));
        let [first, rest, none] = order.passes();
        assert!(none.is_empty());
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].0, [50_000, 70_000, 40_000]);
        assert_eq!(rest.len(), 5);
        let plain = ShapeOrder::new(&k, true, None);
        assert_eq!(plain.passes()[0][0].0, [40_000, 50_000, 70_000]);
    }
}
