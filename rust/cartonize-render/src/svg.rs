//! One box as an SVG picture: far walls, items back to front, near edges, labels.

use std::fmt::Write;

use crate::colour::{shade, Rgb};
use crate::projection::{face, Camera, Cuboid};
use crate::theme::Theme;

/// Blank border around the drawing, as a share of the picture width.
const MARGIN_SHARE: f64 = 0.04;
/// Height of the caption band in pixels (pictures with text only).
const CAPTION_BAND: f64 = 20.0;
/// A picture is at most this many times as tall as it is wide, so a needle-like box
/// seen end-on cannot ask for an enormous raster.
const MAX_ASPECT: f64 = 8.0;
/// Tallest picture in pixels whatever the width: with a width of at most
/// `crate::MAX_IMG_SIZE` a raster stays within 64 MB.
const MAX_HEIGHT: f64 = 4096.0;
/// Item labels are left out on top faces narrower than this, in pixels.
const MIN_LABEL_FACE: f64 = 14.0;

/// A packed item ready to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct DrawItem {
    /// The item's response-wide index (`data-volume-index`).
    pub index: u32,
    /// Its refId (`data-item-ref-id`).
    pub ref_id: i64,
    /// Where it is.
    pub cuboid: Cuboid,
    /// Base colour; faces are shades of it.
    pub colour: Rgb,
    /// Its internal spaces to show, drawn right after it.
    pub spaces: Vec<DrawSpace>,
}

/// An item's internal space as shown inside the item (rule internal-space).
#[derive(Debug, Clone, PartialEq)]
pub struct DrawSpace {
    /// Where it is, in the picture's box.
    pub cuboid: Cuboid,
    /// Draw its bounds as a white semi-transparent cuboid.
    pub outline: bool,
    /// The items packed in it, in drawing order; the item holding them is drawn
    /// see-through when there are any.
    pub items: Vec<DrawItem>,
}

/// Fill opacity of an item drawn see-through, to show the items in its internal space.
const SEE_THROUGH: f64 = 0.35;
/// Fill opacity of an internal space's bounds (white).
const SPACE_OPACITY: f64 = 0.5;

/// What one picture shows and how.
#[derive(Debug, Clone, Copy)]
pub struct Picture<'a> {
    /// Position of the box in the response (`data-box-index`).
    pub box_index: usize,
    /// Inner dimensions of the box.
    pub dimensions: [f64; 3],
    /// The extent the picture is fitted to (at least `dimensions` on every axis).
    pub extent: [f64; 3],
    /// Width in pixels.
    pub width: u32,
    /// The look.
    pub theme: &'a Theme,
    /// Whether to write text (captions, labels); PNGs have no fonts, so none.
    pub text: bool,
    /// Whether to write the `data-*` attributes (box index, item refId and index). A PNG's
    /// SVG leaves them out: they draw nothing, and without them two boxes that look the
    /// same have the same SVG, so one raster serves both (`crate::render`).
    pub data: bool,
}

/// Maps world points to pixels.
struct Frame {
    camera: Camera,
    scale: f64,
    dx: f64,
    dy: f64,
    height: f64,
}

impl Frame {
    fn new(camera: Camera, extent: [f64; 3], width: f64, top_band: f64) -> Frame {
        let (x0, y0, x1, y1) = camera.bounds(&Cuboid::new([0.0; 3], extent));
        let margin = (width * MARGIN_SHARE).round();
        let inner = (width - 2.0 * margin).max(1.0);
        let (w, h) = ((x1 - x0).max(f64::MIN_POSITIVE), (y1 - y0).max(0.0));
        let mut scale = inner / w;
        let max_drawing = (MAX_ASPECT * width).min(MAX_HEIGHT) - top_band - 2.0 * margin;
        if h * scale > max_drawing {
            scale = max_drawing.max(1.0) / h;
        }
        Frame {
            camera,
            scale,
            dx: margin + (inner - w * scale) / 2.0 - x0 * scale,
            dy: top_band + margin - y0 * scale,
            height: (top_band + 2.0 * margin + h * scale).ceil(),
        }
    }

    fn px(&self, p: [f64; 3]) -> (f64, f64) {
        let (x, y) = self.camera.project(p);
        (x * self.scale + self.dx, y * self.scale + self.dy)
    }

    fn points(&self, out: &mut String, corners: &[[f64; 3]]) {
        for (i, &c) in corners.iter().enumerate() {
            let (x, y) = self.px(c);
            let sep = if i == 0 { "" } else { " " };
            let _ = write!(out, "{sep}{x:.1},{y:.1}");
        }
    }
}

/// The SVG of one box. `items` must already be in drawing order (back to front).
pub fn draw(camera: Camera, pic: &Picture<'_>, items: &[DrawItem]) -> String {
    let theme = pic.theme;
    let width = f64::from(pic.width);
    let band = if pic.text { CAPTION_BAND } else { 0.0 };
    let frame = Frame::new(camera, pic.extent, width, band);
    let bi = pic.box_index;
    let container = Cuboid::new([0.0; 3], pic.dimensions);
    let mut s = String::with_capacity(1024 + items.len() * 420);
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="cz-box cz-{name}"{data} width="{w}" height="{h}" viewBox="0 0 {w} {h}">"#,
        name = theme.name,
        data = box_data(pic),
        w = pic.width,
        h = frame.height,
    );
    if theme.inline_style {
        let _ = write!(
            s,
            "<style>.cz-item polygon{{stroke:{st};stroke-width:{sw};stroke-linejoin:round}}\
             .cz-outline polygon,.cz-outline line{{stroke:{bs};stroke-width:{bw};fill-opacity:1}}\
             .cz-marks line{{stroke:{bs};stroke-width:1}}\
             text{{font-family:sans-serif;fill:{tx}}}</style>",
            st = theme.item_stroke,
            sw = theme.item_stroke_width,
            bs = theme.box_stroke,
            bw = theme.box_stroke_width,
            tx = theme.text,
        );
    }
    if let Some(bg) = theme.background {
        let _ = write!(s, r#"<rect width="100%" height="100%" fill="{bg}"/>"#);
    }
    // Far walls and floor: the faces of the box that look away from the viewer.
    let _ = write!(
        s,
        r#"<g class="cz-outline"{} fill="{}"{}>"#,
        volume_data(pic, 0),
        theme.box_fill,
        stroke_attrs(theme, theme.box_stroke, theme.box_stroke_width)
    );
    for (axis, at_hi) in camera.visible_faces() {
        s.push_str(r#"<polygon points=""#);
        frame.points(&mut s, &face(&container, axis, !at_hi));
        s.push_str(r#""/>"#);
    }
    s.push_str("</g>");
    let _ = write!(
        s,
        r#"<g class="cz-items"{}>"#,
        stroke_attrs(theme, theme.item_stroke, theme.item_stroke_width)
    );
    for item in items {
        draw_item(&mut s, &frame, pic, item, "cz-item");
    }
    s.push_str("</g>");
    near_edges(&mut s, &frame, &container, pic);
    if theme.border_marks {
        border_marks(&mut s, &frame, &container, theme.box_stroke);
    }
    if pic.text {
        let [x, y, z] = pic.dimensions;
        let _ = write!(
            s,
            r#"<text x="{m:.0}" y="15" font-family="sans-serif" font-size="12" fill="{}">Box {} · {} × {} × {} · {} items</text>"#,
            theme.text,
            bi + 1,
            num(x),
            num(y),
            num(z),
            items.len(),
            m = (width * MARGIN_SHARE).round(),
        );
    }
    s.push_str("</svg>");
    s
}

/// One item's visible faces (and label), then its shown internal spaces: each space's
/// bounds, then the items in it (class `cz-item cz-inner`), and so on inwards.
fn draw_item(s: &mut String, frame: &Frame, pic: &Picture<'_>, item: &DrawItem, class: &str) {
    if pic.data {
        let _ = write!(
            s,
            r#"<g class="{class}" data-box-index="{}" data-item-ref-id="{}" data-volume-index="{}">"#,
            pic.box_index, item.ref_id, item.index
        );
    } else {
        let _ = write!(s, r#"<g class="{class}">"#);
    }
    let see_through = item.spaces.iter().any(|space| !space.items.is_empty());
    let opacity = if see_through {
        format!(r#" fill-opacity="{SEE_THROUGH}""#)
    } else {
        String::new()
    };
    for (axis, at_hi) in frame.camera.visible_faces() {
        s.push_str(r#"<polygon points=""#);
        frame.points(s, &face(&item.cuboid, axis, at_hi));
        let _ = write!(
            s,
            r#"" fill="{}"{opacity}/>"#,
            shade(item.colour, axis).hex()
        );
    }
    if pic.text && pic.theme.item_labels {
        label(s, frame, item, pic.theme);
    }
    s.push_str("</g>");
    for space in &item.spaces {
        if space.outline {
            let _ = write!(
                s,
                r##"<g class="cz-space"{} fill="#ffffff" fill-opacity="{SPACE_OPACITY}">"##,
                volume_data(pic, item.index)
            );
            for (axis, at_hi) in frame.camera.visible_faces() {
                s.push_str(r#"<polygon points=""#);
                frame.points(s, &face(&space.cuboid, axis, at_hi));
                s.push_str(r#""/>"#);
            }
            s.push_str("</g>");
        }
        for inner in &space.items {
            draw_item(s, frame, pic, inner, "cz-item cz-inner");
        }
    }
}

/// ` data-box-index="…"`, or nothing when the picture has no `data-*` attributes.
fn box_data(pic: &Picture<'_>) -> String {
    if pic.data {
        format!(r#" data-box-index="{}""#, pic.box_index)
    } else {
        String::new()
    }
}

/// ` data-box-index="…" data-volume-index="…"`, or nothing when the picture has no
/// `data-*` attributes.
fn volume_data(pic: &Picture<'_>, index: u32) -> String {
    if pic.data {
        format!(
            r#" data-box-index="{}" data-volume-index="{index}""#,
            pic.box_index
        )
    } else {
        String::new()
    }
}

/// Stroke presentation attributes, unless the template's inline style sheet sets them.
fn stroke_attrs(theme: &Theme, colour: &str, width: f64) -> String {
    if theme.inline_style {
        String::new()
    } else {
        format!(r#" stroke="{colour}" stroke-width="{width}" stroke-linejoin="round""#)
    }
}

/// The three box edges through the corner nearest the viewer, drawn over the items so
/// the box's extent stays visible.
fn near_edges(s: &mut String, frame: &Frame, container: &Cuboid, pic: &Picture<'_>) {
    let theme = pic.theme;
    let near = near_corner(&frame.camera, container);
    let dash = theme
        .front_dash
        .map(|d| format!(r#" stroke-dasharray="{d}""#))
        .unwrap_or_default();
    let _ = write!(
        s,
        r#"<g class="cz-outline"{} fill="none"{}{dash}>"#,
        volume_data(pic, 0),
        stroke_attrs(theme, theme.box_stroke, theme.box_stroke_width)
    );
    for axis in 0..3 {
        let mut other = near;
        other[axis] = if near[axis] == container.hi[axis] {
            container.lo[axis]
        } else {
            container.hi[axis]
        };
        line(s, frame, near, other);
    }
    s.push_str("</g>");
}

/// Tick marks along the box's near bottom edges and near upright (template classic):
/// a "nice" step (1, 2 or 5 times a power of ten) gives 4 to 10 marks per edge.
fn border_marks(s: &mut String, frame: &Frame, container: &Cuboid, stroke: &str) {
    let near = near_corner(&frame.camera, container);
    // The bottom is the floor whatever the eye: ticks on the floor's near edges.
    let mut floor_near = near;
    floor_near[0] = container.lo[0];
    let _ = write!(
        s,
        r#"<g class="cz-marks" stroke="{stroke}" stroke-width="1">"#
    );
    for axis in 0..3 {
        let start = floor_near;
        let len = container.hi[axis] - container.lo[axis];
        let step = nice_step(len);
        if step <= 0.0 {
            continue;
        }
        let (ax, ay) = frame.px(start);
        let mut end = start;
        end[axis] = if start[axis] == container.hi[axis] {
            container.lo[axis]
        } else {
            container.hi[axis]
        };
        let (bx, by) = frame.px(end);
        let (ex, ey) = (bx - ax, by - ay);
        let norm = (ex * ex + ey * ey).sqrt();
        if norm < 1.0 {
            continue;
        }
        // Ticks stand perpendicular to the edge's picture, 5 px long.
        let (nx, ny) = (-ey / norm * 5.0, ex / norm * 5.0);
        let count = (len / step).floor() as usize;
        for k in 0..=count {
            let t = (k as f64 * step) / len;
            let (x, y) = (ax + ex * t, ay + ey * t);
            let _ = write!(
                s,
                r#"<line x1="{x:.1}" y1="{y:.1}" x2="{:.1}" y2="{:.1}"/>"#,
                x + nx,
                y + ny
            );
        }
    }
    s.push_str("</g>");
}

/// 1, 2 or 5 times a power of ten, giving 4 to 10 steps over `len`.
pub fn nice_step(len: f64) -> f64 {
    if !(len.is_finite() && len > 0.0) {
        return 0.0;
    }
    let raw = len / 10.0;
    let pow = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * pow)
        .find(|&step| step >= raw)
        .unwrap_or(10.0 * pow)
}

fn near_corner(camera: &Camera, c: &Cuboid) -> [f64; 3] {
    std::array::from_fn(|a| {
        if camera.dir[a] >= 0.0 {
            c.hi[a]
        } else {
            c.lo[a]
        }
    })
}

fn line(s: &mut String, frame: &Frame, a: [f64; 3], b: [f64; 3]) {
    let (x1, y1) = frame.px(a);
    let (x2, y2) = frame.px(b);
    let _ = write!(
        s,
        r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}"/>"#
    );
}

/// The item's index on its top face, when the top is visible and large enough.
fn label(s: &mut String, frame: &Frame, item: &DrawItem, theme: &Theme) {
    let c = &item.cuboid;
    if frame.camera.dir[0] <= 0.0 {
        return;
    }
    let top = face(c, 0, true);
    let (x0, _) = frame.px(top[0]);
    let (x2, _) = frame.px(top[2]);
    let (x1, _) = frame.px(top[1]);
    let (x3, _) = frame.px(top[3]);
    let span = x0.max(x1).max(x2).max(x3) - x0.min(x1).min(x2).min(x3);
    if span < MIN_LABEL_FACE {
        return;
    }
    let centre = [
        c.hi[0],
        (c.lo[1] + c.hi[1]) / 2.0,
        (c.lo[2] + c.hi[2]) / 2.0,
    ];
    let (x, y) = frame.px(centre);
    let size = (span / 4.0).clamp(7.0, 14.0);
    let _ = write!(
        s,
        r#"<text x="{x:.1}" y="{:.1}" font-family="sans-serif" font-size="{size:.0}" text-anchor="middle" stroke="none" fill="{}">{}</text>"#,
        y + size / 3.0,
        theme.text,
        item.index
    );
}

/// A length as written in captions: whole numbers without decimals.
fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Template;

    fn picture(theme: &Theme, text: bool) -> Picture<'_> {
        Picture {
            box_index: 2,
            dimensions: [2.0, 2.0, 4.0],
            extent: [2.0, 2.0, 4.0],
            width: 200,
            theme,
            text,
            data: text,
        }
    }

    #[test]
    fn the_picture_fills_its_width_and_carries_the_data_attributes() {
        let theme = Theme::of(Template::Demo);
        let cam = Camera::new([1.0, 1.0, 1.0]);
        let item = DrawItem {
            index: 9,
            ref_id: 4,
            cuboid: Cuboid::new([0.0; 3], [1.0, 1.0, 1.0]),
            colour: Rgb(10, 20, 30),
            spaces: vec![],
        };
        let svg = draw(cam, &picture(&theme, true), &[item]);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(svg.contains(r#"data-box-index="2" data-item-ref-id="4" data-volume-index="9""#));
        assert!(svg.contains(r#"width="200""#));
        assert!(svg.contains(&shade(Rgb(10, 20, 30), 0).hex()));
        assert!(svg.contains("Box 3 · 2 × 2 × 4 · 1 items"));
        let no_text = draw(cam, &picture(&theme, false), &[]);
        assert!(!no_text.contains("<text"));
    }

    #[test]
    fn without_data_attributes_the_svg_is_the_same_less_those() {
        let theme = Theme::of(Template::Classic);
        let cam = Camera::new([1.0, 1.0, 1.0]);
        let mut inner = DrawItem {
            index: 12,
            ref_id: 5,
            cuboid: Cuboid::new([0.2; 3], [0.5, 0.5, 0.5]),
            colour: Rgb(200, 20, 30),
            spaces: vec![],
        };
        let item = DrawItem {
            index: 9,
            ref_id: 4,
            cuboid: Cuboid::new([0.0; 3], [1.0, 1.0, 1.0]),
            colour: Rgb(10, 20, 30),
            spaces: vec![DrawSpace {
                cuboid: Cuboid::new([0.1; 3], [0.8, 0.8, 0.8]),
                outline: true,
                items: vec![inner.clone()],
            }],
        };
        let mut pic = picture(&theme, false);
        pic.data = true;
        let with = draw(cam, &pic, std::slice::from_ref(&item));
        pic.data = false;
        let without = draw(cam, &pic, std::slice::from_ref(&item));
        assert!(!without.contains("data-"));
        let stripped = [
            r#" data-box-index="2""#,
            r#" data-item-ref-id="4""#,
            r#" data-item-ref-id="5""#,
            r#" data-volume-index="0""#,
            r#" data-volume-index="9""#,
            r#" data-volume-index="12""#,
        ]
        .iter()
        .fold(with, |svg, attr| svg.replace(attr, ""));
        assert_eq!(stripped, without);
        // Item indices and refIds are the attributes' only trace.
        inner.index = 99;
        let other = DrawItem {
            index: 1,
            ref_id: 77,
            spaces: vec![DrawSpace {
                items: vec![inner],
                ..item.spaces[0].clone()
            }],
            ..item
        };
        assert_eq!(draw(cam, &pic, &[other]), without);
    }

    #[test]
    fn frame_maps_the_extent_inside_the_margins() {
        let cam = Camera::new([1.0, 1.0, 1.0]);
        let frame = Frame::new(cam, [2.0, 2.0, 4.0], 200.0, 0.0);
        let xs: Vec<f64> = crate::projection::corners(&Cuboid::new([0.0; 3], [2.0, 2.0, 4.0]))
            .iter()
            .map(|&p| frame.px(p).0)
            .collect();
        let min = xs.iter().cloned().fold(f64::MAX, f64::min);
        let max = xs.iter().cloned().fold(f64::MIN, f64::max);
        assert!((min - 8.0).abs() < 1e-9 && (max - 192.0).abs() < 1e-9);
    }

    #[test]
    fn a_needle_seen_end_on_stays_within_the_height_cap() {
        let cam = Camera::new([1.0, 0.0, 0.0]);
        let frame = Frame::new(cam, [1.0, 1.0, 1e6], 4000.0, 0.0);
        assert!(frame.height <= MAX_HEIGHT);
        let frame = Frame::new(cam, [1.0, 1.0, 1e3], 100.0, 20.0);
        assert!(frame.height <= 8.0 * 100.0);
    }

    #[test]
    fn nice_steps() {
        assert_eq!(nice_step(10.0), 1.0);
        assert_eq!(nice_step(35.0), 5.0);
        assert_eq!(nice_step(0.0), 0.0);
        assert!((nice_step(0.3) - 0.05).abs() < 1e-12);
    }
}
