//! The renderer's input and output, as the Python glue sends and reads them (JSON).

use serde::{Deserialize, Serialize};

/// Picture file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// SVG text only.
    #[default]
    Svg,
    /// PNG (rasterised from an SVG without text), base64-encoded.
    Png,
}

/// The look of a picture; see `docs/pictures.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub enum Template {
    /// White background, thin dark strokes, a caption. Also the look when none is named.
    #[default]
    #[serde(rename = "demo.tmpl")]
    Demo,
    /// Light grey card, blue strokes, item numbers on the top faces.
    #[serde(rename = "shipapp.tmpl")]
    ShipApp,
    /// Night-blue background, white strokes, an orange hull-like box outline.
    #[serde(rename = "boat.tmpl")]
    Boat,
    /// Styles inlined into each SVG, and tick marks along the box border.
    #[serde(rename = "classic")]
    Classic,
}

/// One packed item as the renderer needs it: where it is and how to colour it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ItemInput {
    /// The item's response-wide `index` (0 is reserved for the box outline).
    pub index: u32,
    /// The item's refId, for `data-item-ref-id` and the derived colour.
    pub ref_id: i64,
    /// Back-bottom corner in box coordinates (x up, y width, z length).
    pub origin: [f64; 3],
    /// Extents as placed.
    pub dimensions: [f64; 3],
    /// CSS colour name or `#hex`; derived from `ref_id` when absent.
    #[serde(default)]
    pub color: Option<String>,
    /// Sequence value, used by the heat map.
    #[serde(default)]
    pub sequence: Option<String>,
    /// Its internal spaces to show (rule internal-space, `display` and
    /// `displayChildren`); none by default.
    #[serde(default)]
    pub spaces: Vec<SpaceInput>,
}

/// An item's internal space as its box's picture shows it: the space's bounds as a white
/// semi-transparent cuboid (`outline`), and the items packed in it (`items`), drawn inside
/// the item, which is then drawn see-through.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpaceInput {
    /// Back-bottom corner in the coordinates of the picture's box.
    pub origin: [f64; 3],
    /// Extents.
    pub dimensions: [f64; 3],
    /// Draw the space's bounds.
    #[serde(default)]
    pub outline: bool,
    /// The items packed in the space, in the coordinates of the picture's box; they do
    /// not count in the picture's `depthOrder` (their own box's picture orders them).
    #[serde(default)]
    pub items: Vec<ItemInput>,
}

/// One packed box.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BoxInput {
    /// Inner dimensions.
    pub dimensions: [f64; 3],
    /// Its items, in any order.
    pub items: Vec<ItemInput>,
}

/// Everything one render call needs.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RenderInput {
    /// Viewpoint direction (from the box towards the viewer).
    #[serde(default = "default_eye")]
    pub eye: [f64; 3],
    /// Picture width in pixels.
    #[serde(default = "default_img_size")]
    pub img_size: u32,
    /// SVG or PNG.
    #[serde(default)]
    pub format: Format,
    /// The look; `None` is the demo look.
    #[serde(default)]
    pub template: Option<Template>,
    /// Every picture is fitted to the per-axis maximum of its box and this extent, so
    /// pictures sharing it share one scale. `None`: each picture fills its width.
    #[serde(default)]
    pub scale_extent: Option<[f64; 3]>,
    /// Colour items by sequence rank (light high, dark low) instead of their colour.
    #[serde(default)]
    pub sequence_heat_map: bool,
    /// Return the page script and style sheet.
    #[serde(default)]
    pub include_scripts: bool,
    /// The boxes, in response order (`data-box-index` is the position here).
    pub boxes: Vec<BoxInput>,
}

fn default_eye() -> [f64; 3] {
    [1.0, 1.0, 1.0]
}

fn default_img_size() -> u32 {
    400
}

/// The pictures of one box.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RenderedBox {
    /// SVG text (format svg), else `None`.
    pub svg: Option<String>,
    /// Base64 PNG (format png), else `None`.
    pub png: Option<String>,
    /// Item indices back to front relative to the eye: also a feasible loading order.
    pub depth_order: Vec<u32>,
}

/// What one render call returns.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RenderOutput {
    /// One entry per input box, same order.
    pub boxes: Vec<RenderedBox>,
    /// The page script (with `include_scripts`).
    pub scripts: Option<String>,
    /// The page style sheet (with `include_scripts`).
    pub styles: Option<String>,
}
