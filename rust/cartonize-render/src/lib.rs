//! cartonize-render: pictures of packed boxes.
//!
//! Pure Rust, no Python: the camera ([`projection`]), painter's order that is also a
//! loading order ([`depth`]), colours and shades ([`colour`]), template looks
//! ([`theme`]), SVG writing ([`svg`]) and PNG rasterisation with resvg ([`raster`]).

pub mod colour;
pub mod depth;
pub mod error;
pub mod model;
pub mod projection;
pub mod raster;
pub mod svg;
pub mod theme;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};

use base64::Engine as _;

pub use error::RenderError;
pub use model::{RenderInput, RenderOutput};

use colour::Rgb;
use model::{Format, RenderedBox};
use projection::{Camera, Cuboid};
use svg::{DrawItem, DrawSpace, Picture};
use theme::Theme;

/// Renders every box of `input`: its depth order and its SVG or PNG picture.
///
/// Large inputs use every core (as the engine's packing does; the pack is over by then):
/// boxes are drawn, then their PNGs rasterised, on scoped threads, each taking the next
/// box in turn; the output is the same whatever the threads' timing. Boxes that look the
/// same (the same SVG once the `data-*` attributes are left out) are rasterised once.
pub fn render(input: &RenderInput) -> Result<RenderOutput, RenderError> {
    check(input)?;
    let camera = Camera::new(input.eye);
    let theme = Theme::of(input.template.unwrap_or_default());
    let heat = input.sequence_heat_map.then(|| sequence_ranks(input));
    let items_in_all: usize = input.boxes.iter().map(|b| count_items(&b.items)).sum();
    let threads = if items_in_all >= PARALLEL_ITEMS {
        cores()
    } else {
        1
    };
    let drawn = in_parallel(&input.boxes, threads, |bi, b| {
        let items = draw_items(&camera, &b.items, heat.as_ref());
        let extent = match input.scale_extent {
            Some(e) => [
                b.dimensions[0].max(e[0]),
                b.dimensions[1].max(e[1]),
                b.dimensions[2].max(e[2]),
            ],
            None => b.dimensions,
        };
        let picture = Picture {
            box_index: bi,
            dimensions: b.dimensions,
            extent,
            width: input.img_size,
            theme: &theme,
            text: input.format == Format::Svg,
            data: input.format == Format::Svg,
        };
        let depth_order: Vec<u32> = items.iter().map(|i| i.index).collect();
        (svg::draw(camera, &picture, &items), depth_order)
    });
    let boxes = match input.format {
        Format::Svg => drawn
            .into_iter()
            .map(|(svg, depth_order)| RenderedBox {
                svg: Some(svg),
                png: None,
                depth_order,
            })
            .collect(),
        Format::Png => {
            // Each box's picture is the first box's with the same SVG.
            let mut first: HashMap<&str, usize> = HashMap::new();
            let mut unique: Vec<&str> = Vec::new();
            let picture: Vec<usize> = drawn
                .iter()
                .map(|(svg, _)| {
                    *first.entry(svg.as_str()).or_insert_with(|| {
                        unique.push(svg.as_str());
                        unique.len() - 1
                    })
                })
                .collect();
            let threads = if unique.len() >= 2 { cores() } else { 1 };
            let pngs = in_parallel(&unique, threads, |_, svg| {
                raster::png(svg).map(|png| base64::engine::general_purpose::STANDARD.encode(png))
            })
            .into_iter()
            .collect::<Result<Vec<String>, RenderError>>()?;
            drawn
                .into_iter()
                .zip(picture)
                .map(|((_, depth_order), p)| RenderedBox {
                    svg: None,
                    png: pngs.get(p).cloned(),
                    depth_order,
                })
                .collect()
        }
    };
    Ok(RenderOutput {
        boxes,
        scripts: input
            .include_scripts
            .then(|| theme::PAGE_SCRIPT.to_string()),
        styles: input
            .include_scripts
            .then(|| theme::PAGE_STYLES.to_string()),
    })
}

/// Items (counting those inside shown spaces) from which drawing the boxes' SVGs uses
/// every core: about 2 ms of work on one, against some 50 µs to start a thread.
/// PNGs use every core from two distinct pictures on (each is 0.2 ms or more).
const PARALLEL_ITEMS: usize = 500;

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn count_items(items: &[model::ItemInput]) -> usize {
    items
        .iter()
        .map(|i| {
            1 + i
                .spaces
                .iter()
                .map(|s| count_items(&s.items))
                .sum::<usize>()
        })
        .sum()
}

/// `work` of each of `jobs` (given its position), in order, on up to `threads` scoped
/// threads that each take the next job in turn. A panic in a job is resumed here, as if
/// the jobs had run on this thread.
fn in_parallel<T: Sync, R: Send>(
    jobs: &[T],
    threads: usize,
    work: impl Fn(usize, &T) -> R + Sync,
) -> Vec<R> {
    let threads = threads.min(jobs.len());
    if threads <= 1 {
        return jobs.iter().enumerate().map(|(i, j)| work(i, j)).collect();
    }
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, AtomicOrdering::Relaxed);
                        let Some(job) = jobs.get(i) else {
                            break;
                        };
                        mine.push((i, work(i, job)));
                    }
                    mine
                })
            })
            .collect();
        let mut all = Vec::with_capacity(jobs.len());
        for handle in handles {
            match handle.join() {
                Ok(mine) => all.extend(mine),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        all
    });
    done.sort_unstable_by_key(|&(i, _)| i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// `items` ready to draw, back to front, each with its shown internal spaces (and their
/// items, back to front among themselves: they are drawn right after the item holding
/// them, which is where they lie in the order of the others).
fn draw_items(
    camera: &Camera,
    items: &[model::ItemInput],
    heat: Option<&HeatMap>,
) -> Vec<DrawItem> {
    let cuboids: Vec<Cuboid> = items
        .iter()
        .map(|i| Cuboid::new(i.origin, i.dimensions))
        .collect();
    depth::back_to_front(camera, &cuboids)
        .iter()
        .filter_map(|&k| Some((items.get(k)?, *cuboids.get(k)?)))
        .map(|(item, cuboid)| DrawItem {
            index: item.index,
            ref_id: item.ref_id,
            cuboid,
            colour: item_colour(item, heat),
            spaces: item
                .spaces
                .iter()
                .map(|space| DrawSpace {
                    cuboid: Cuboid::new(space.origin, space.dimensions),
                    outline: space.outline,
                    items: draw_items(camera, &space.items, heat),
                })
                .collect(),
        })
        .collect()
}

/// Renders a JSON-encoded [`RenderInput`] and returns the [`RenderOutput`] as JSON.
pub fn render_json(input: &str) -> Result<String, RenderError> {
    let parsed: RenderInput = serde_json::from_str(input)?;
    Ok(serde_json::to_string(&render(&parsed)?)?)
}

/// The widest picture allowed, in pixels: a raster of it stays well under 1 GB.
pub const MAX_IMG_SIZE: u32 = 4096;

fn check(input: &RenderInput) -> Result<(), RenderError> {
    let invalid = |field: String, message: &str| RenderError::Invalid {
        field,
        message: message.to_string(),
    };
    if input.img_size == 0 || input.img_size > MAX_IMG_SIZE {
        return Err(invalid(
            "imgSize".into(),
            &format!("must be 1 to {MAX_IMG_SIZE} pixels"),
        ));
    }
    for (bi, b) in input.boxes.iter().enumerate() {
        if !b.dimensions.iter().all(|d| d.is_finite() && *d > 0.0) {
            return Err(invalid(format!("boxes[{bi}].dimensions"), "must be > 0"));
        }
        check_items(&b.items, &format!("boxes[{bi}]"))?;
    }
    Ok(())
}

/// Every item (and every space and item inside it) has a finite origin and dimensions > 0.
fn check_items(items: &[model::ItemInput], at: &str) -> Result<(), RenderError> {
    let sound = |origin: &[f64; 3], dimensions: &[f64; 3]| {
        origin.iter().chain(dimensions).all(|v| v.is_finite())
            && dimensions.iter().all(|d| *d > 0.0)
    };
    for (ii, item) in items.iter().enumerate() {
        let here = format!("{at}.items[{ii}]");
        if !sound(&item.origin, &item.dimensions) {
            return Err(RenderError::Invalid {
                field: here,
                message: "origin must be finite and dimensions > 0".to_string(),
            });
        }
        for (si, space) in item.spaces.iter().enumerate() {
            let there = format!("{here}.spaces[{si}]");
            if !sound(&space.origin, &space.dimensions) {
                return Err(RenderError::Invalid {
                    field: there,
                    message: "origin must be finite and dimensions > 0".to_string(),
                });
            }
            check_items(&space.items, &there)?;
        }
    }
    Ok(())
}

/// The colour of an item: its heat-map rank, else its own colour, else one derived from
/// its refId (also when its colour does not parse, so a picture is never refused).
fn item_colour(item: &model::ItemInput, heat: Option<&HeatMap>) -> Rgb {
    if let Some(map) = heat {
        return item
            .sequence
            .as_ref()
            .and_then(|s| map.rank.get(s.as_str()))
            .map_or(colour::NO_SEQUENCE, |&r| colour::heat(r, map.count));
    }
    item.color
        .as_deref()
        .and_then(colour::parse)
        .unwrap_or_else(|| colour::for_ref_id(item.ref_id))
}

struct HeatMap<'a> {
    rank: HashMap<&'a str, usize>,
    count: usize,
}

/// Ranks of the distinct sequence values over all boxes, lowest first: numeric values
/// by value (aisle-bin 0401 < 1228), then text values in text order (the order of
/// `sequenceSort`, docs/decisions.md).
fn sequence_ranks(input: &RenderInput) -> HeatMap<'_> {
    let mut values: Vec<&str> = input
        .boxes
        .iter()
        .flat_map(|b| &b.items)
        .filter_map(|i| i.sequence.as_deref())
        .collect();
    values.sort_unstable();
    values.dedup();
    // Stable: text values keep their text order after the numbers.
    values.sort_by(|a, b| match (sequence_number(a), sequence_number(b)) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    HeatMap {
        count: values.len(),
        rank: values
            .into_iter()
            .enumerate()
            .map(|(r, v)| (v, r))
            .collect(),
    }
}

/// The value of a numeric sequence: an optional sign, digits and an optional decimal
/// part, surrounding blanks ignored; `None` for text such as `A-11` or `1e3`.
fn sequence_number(sequence: &str) -> Option<f64> {
    let text = sequence.trim();
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let (whole, fraction) = unsigned.split_once('.').unwrap_or((unsigned, "0"));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !(digits(whole) && digits(fraction)) {
        return None;
    }
    text.parse::<f64>().ok().filter(|n| n.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::{BoxInput, ItemInput, SpaceInput, Template};

    fn item(index: u32, origin: [f64; 3], sequence: Option<&str>) -> ItemInput {
        ItemInput {
            index,
            ref_id: 1,
            origin,
            dimensions: [1.0, 1.0, 1.0],
            color: Some("red".into()),
            sequence: sequence.map(String::from),
            spaces: vec![],
        }
    }

    fn input(format: Format) -> RenderInput {
        RenderInput {
            eye: [1.0, 0.0, 0.0],
            img_size: 100,
            format,
            template: Some(Template::Classic),
            scale_extent: None,
            sequence_heat_map: false,
            include_scripts: true,
            boxes: vec![BoxInput {
                dimensions: [2.0, 1.0, 2.0],
                items: vec![
                    item(3, [1.0, 0.0, 0.0], Some("0401")),
                    item(1, [0.0, 0.0, 0.0], Some("1228")),
                    item(2, [0.0, 0.0, 1.0], Some("99")),
                ],
            }],
        }
    }

    #[test]
    fn depth_order_lists_item_indices_bottom_first_from_above() {
        let out = render(&input(Format::Svg));
        let out = out.unwrap_or_else(|e| RenderOutput {
            boxes: vec![],
            scripts: Some(e.to_string()),
            styles: None,
        });
        assert_eq!(out.boxes.len(), 1, "{:?}", out.scripts);
        assert_eq!(out.boxes[0].depth_order, vec![1, 2, 3]);
        assert!(out.boxes[0].png.is_none());
        assert!(out.scripts.is_some() && out.styles.is_some());
    }

    #[test]
    fn png_output_is_base64_png() {
        let out = render(&input(Format::Png)).map(|o| o.boxes);
        let png = out
            .ok()
            .and_then(|b| b.into_iter().next())
            .and_then(|b| b.png);
        assert!(png.is_some_and(|p| p.starts_with("iVBORw0KGgo")));
    }

    #[test]
    fn heat_map_ranks_sequences_numerically() {
        let inp = input(Format::Svg);
        let map = sequence_ranks(&inp);
        assert_eq!(map.rank.get("99"), Some(&0));
        assert_eq!(map.rank.get("0401"), Some(&1));
        assert_eq!(map.rank.get("1228"), Some(&2));
    }

    #[test]
    fn heat_map_ranks_numbers_before_text() {
        let mut inp = input(Format::Svg);
        inp.boxes[0].items[0].sequence = Some("B-7".into());
        let map = sequence_ranks(&inp);
        assert_eq!(map.rank.get("99"), Some(&0));
        assert_eq!(map.rank.get("1228"), Some(&1));
        assert_eq!(map.rank.get("B-7"), Some(&2));
        assert_eq!(sequence_number(" -11.5 "), Some(-11.5));
        assert_eq!(sequence_number("1e3"), None);
        assert_eq!(sequence_number("12."), None);
    }

    #[test]
    fn bad_input_is_refused_with_its_place() {
        let mut inp = input(Format::Svg);
        inp.boxes[0].items[1].dimensions[2] = 0.0;
        assert!(
            matches!(render(&inp), Err(RenderError::Invalid { field, .. }) if field == "boxes[0].items[1]")
        );
        assert!(matches!(render_json("{"), Err(RenderError::Decode(_))));
    }

    /// `input` with a half-size item inside item 1 (the cube at the origin), in a shown
    /// space with its bounds outlined.
    fn with_space(format: Format) -> RenderInput {
        let mut inp = input(format);
        let mut inner = item(9, [0.25, 0.25, 0.25], None);
        inner.dimensions = [0.5, 0.5, 0.5];
        inp.boxes[0].items[1].spaces = vec![SpaceInput {
            origin: [0.2, 0.2, 0.2],
            dimensions: [0.6, 0.6, 0.6],
            outline: true,
            items: vec![inner],
        }];
        inp
    }

    #[test]
    fn a_shown_space_is_drawn_right_after_its_item_and_left_out_of_the_depth_order() {
        let out = render(&with_space(Format::Svg)).map(|o| o.boxes);
        let b = out.ok().and_then(|b| b.into_iter().next());
        assert_eq!(
            b.as_ref().map(|b| b.depth_order.clone()),
            Some(vec![1, 2, 3])
        );
        let svg = b.and_then(|b| b.svg).unwrap_or_default();
        let at = |needle: &str| svg.find(needle).unwrap_or(usize::MAX);
        let host =
            at(r#"class="cz-item" data-box-index="0" data-item-ref-id="1" data-volume-index="1""#);
        let space = at(r#"class="cz-space" data-box-index="0" data-volume-index="1""#);
        let inner = at(
            r#"class="cz-item cz-inner" data-box-index="0" data-item-ref-id="1" data-volume-index="9""#,
        );
        let next = at(r#"data-volume-index="2""#);
        assert!(host < space && space < inner && inner < next, "{svg}");
        // The host is see-through; the items not holding any are not.
        let see_through = r#"fill-opacity="0.35""#;
        assert!(svg[host..space].contains(see_through));
        assert_eq!(
            svg.matches(see_through).count(),
            svg[host..space].matches(see_through).count()
        );
        assert_eq!(svg.matches("cz-space").count(), 1);
    }

    #[test]
    fn a_space_with_nothing_to_show_leaves_its_item_opaque() {
        let mut inp = with_space(Format::Svg);
        inp.boxes[0].items[1].spaces[0].items.clear();
        inp.boxes[0].items[1].spaces[0].outline = false;
        let plain = render(&input(Format::Svg)).map(|o| o.boxes[0].svg.clone());
        let empty = render(&inp).map(|o| o.boxes[0].svg.clone());
        assert!(plain.is_ok() && plain.ok() == empty.ok());
    }

    #[test]
    fn bad_items_inside_a_space_are_refused_with_their_place() {
        let mut inp = with_space(Format::Png);
        inp.boxes[0].items[1].spaces[0].items[0].dimensions[0] = 0.0;
        assert!(matches!(
            render(&inp),
            Err(RenderError::Invalid { field, .. }) if field == "boxes[0].items[1].spaces[0].items[0]"
        ));
        inp.boxes[0].items[1].spaces[0].origin[2] = f64::NAN;
        assert!(matches!(
            render(&inp),
            Err(RenderError::Invalid { field, .. }) if field == "boxes[0].items[1].spaces[0]"
        ));
    }

    /// Six boxes as PNG, each with a few items: boxes 0, 2 and 5 look the same (the same
    /// geometry and colours, other item indices and refIds), the others differ.
    fn six_boxes() -> RenderInput {
        let mut inp = input(Format::Png);
        inp.template = None;
        inp.include_scripts = false;
        let look = |shift: f64, first: u32| {
            let mut items = vec![
                item(first, [0.0, 0.0, 0.0], None),
                item(first + 1, [0.0, 1.0, shift], None),
                item(first + 2, [1.0, 0.0, 0.0], None),
            ];
            items[1].dimensions = [1.0, 1.0, 0.5];
            items
        };
        inp.boxes = [0.0, 0.5, 0.0, 1.0, 0.25, 0.0]
            .iter()
            .enumerate()
            .map(|(b, &shift)| BoxInput {
                dimensions: [2.0, 2.0, 2.0],
                items: look(shift, 10 * b as u32 + 1),
            })
            .collect();
        for it in &mut inp.boxes[5].items {
            it.ref_id = 8;
        }
        inp
    }

    fn pngs(inp: &RenderInput) -> Vec<Option<String>> {
        render(inp)
            .map(|o| o.boxes.into_iter().map(|b| b.png).collect())
            .unwrap_or_default()
    }

    #[test]
    fn each_png_of_many_boxes_is_that_box_drawn_alone() {
        let inp = six_boxes();
        let together = pngs(&inp);
        assert_eq!(together.len(), 6);
        for (b, png) in together.iter().enumerate() {
            let alone = RenderInput {
                boxes: vec![inp.boxes[b].clone()],
                ..inp.clone()
            };
            assert!(png.is_some());
            assert_eq!(pngs(&alone), vec![png.clone()], "box {b}");
        }
        // Boxes that look the same share their picture; the others do not.
        assert!(together[0] == together[2] && together[2] == together[5]);
        assert!(together[0] != together[1] && together[1] != together[3]);
        assert!(together[3] != together[4] && together[0] != together[4]);
    }

    #[test]
    fn svg_pictures_of_look_alike_boxes_keep_their_own_data_attributes() {
        // Boxes 0 and 2 differ in their data attributes only, so their SVG differs and
        // their PNG (drawn from the SVG without them) is shared.
        let mut inp = six_boxes();
        inp.format = Format::Svg;
        let svgs: Vec<String> = render(&inp)
            .map(|o| o.boxes.into_iter().filter_map(|b| b.svg).collect())
            .unwrap_or_default();
        assert_eq!(svgs.len(), 6);
        assert!(svgs[0] != svgs[2] && svgs[0].contains(r#"data-item-ref-id="1""#));
    }

    #[test]
    fn jobs_in_parallel_come_back_in_order() {
        let jobs: Vec<u64> = (0..97).collect();
        // Slow enough that every thread takes some jobs, and they finish out of order.
        let square = |i: usize, j: &u64| {
            std::thread::sleep(std::time::Duration::from_micros(100 + 50 * (j % 3)));
            (i as u64) * 1000 + j * j
        };
        let serial = in_parallel(&jobs, 1, square);
        for threads in [2, 3, 8, 200] {
            assert_eq!(in_parallel(&jobs, threads, square), serial);
        }
        assert!(in_parallel(&jobs[..0], 4, square).is_empty());
        assert_eq!(serial[5], 5025);
    }

    #[test]
    fn a_large_input_draws_the_same_svgs_on_every_core_as_box_by_box() {
        // Over PARALLEL_ITEMS items in all, so the boxes are drawn on several threads.
        let mut inp = input(Format::Svg);
        let one = inp.boxes[0].clone();
        inp.boxes = vec![one; PARALLEL_ITEMS / 3 + 1];
        for (b, bx) in inp.boxes.iter_mut().enumerate() {
            bx.items[0].index = b as u32;
        }
        let together = render(&inp).map(|o| o.boxes).unwrap_or_default();
        assert_eq!(together.len(), inp.boxes.len());
        for (b, drawn) in together.iter().enumerate().step_by(37) {
            let alone = RenderInput {
                boxes: vec![inp.boxes[b].clone()],
                ..inp.clone()
            };
            let svg = render(&alone)
                .ok()
                .and_then(|o| o.boxes.into_iter().next())
                .and_then(|x| x.svg)
                .map(|s| {
                    s.replace(r#"data-box-index="0""#, &format!(r#"data-box-index="{b}""#))
                        .replace("Box 1 ·", &format!("Box {} ·", b + 1))
                });
            assert!(svg.is_some() && svg == drawn.svg, "box {b}");
        }
    }

    #[test]
    fn unknown_colours_fall_back_to_the_ref_id_colour() {
        let mut i = item(1, [0.0; 3], None);
        i.color = Some("no such colour".into());
        assert_eq!(item_colour(&i, None), colour::for_ref_id(1));
    }
}
