//! The looks of the templates: palette, strokes, background and labels.

use crate::model::Template;

/// Everything that differs between templates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Theme {
    /// CSS class on the root element, `cz-<name>`.
    pub name: &'static str,
    /// Background fill; `None` leaves the picture transparent.
    pub background: Option<&'static str>,
    /// Stroke of item edges.
    pub item_stroke: &'static str,
    /// Width of item edges in pixels.
    pub item_stroke_width: f64,
    /// Fill of the box's far walls and floor.
    pub box_fill: &'static str,
    /// Stroke of the box outline.
    pub box_stroke: &'static str,
    /// Width of the box outline in pixels.
    pub box_stroke_width: f64,
    /// Dash pattern of the box's near edges (drawn over the items), if dashed.
    pub front_dash: Option<&'static str>,
    /// Colour of caption and labels.
    pub text: &'static str,
    /// Item numbers on the top faces.
    pub item_labels: bool,
    /// Tick marks along the box's near bottom edges and its near upright.
    pub border_marks: bool,
    /// Style sheet inside each SVG (instead of only presentation attributes).
    pub inline_style: bool,
}

impl Theme {
    /// The theme of `template`.
    pub fn of(template: Template) -> Theme {
        match template {
            Template::Demo => DEMO,
            Template::ShipApp => SHIPAPP,
            Template::Boat => BOAT,
            Template::Classic => CLASSIC,
        }
    }
}

const DEMO: Theme = Theme {
    name: "demo",
    background: Some("#ffffff"),
    item_stroke: "#333333",
    item_stroke_width: 0.6,
    box_fill: "#f3f3f3",
    box_stroke: "#777777",
    box_stroke_width: 1.0,
    front_dash: Some("5 4"),
    text: "#333333",
    item_labels: false,
    border_marks: false,
    inline_style: false,
};

const SHIPAPP: Theme = Theme {
    name: "shipapp",
    background: Some("#eef2f7"),
    item_stroke: "#1f4e79",
    item_stroke_width: 0.8,
    box_fill: "#d9e3ee",
    box_stroke: "#1f4e79",
    box_stroke_width: 1.6,
    front_dash: None,
    text: "#1f4e79",
    item_labels: true,
    border_marks: false,
    inline_style: false,
};

const BOAT: Theme = Theme {
    name: "boat",
    background: Some("#0b2540"),
    item_stroke: "#ffffff",
    item_stroke_width: 0.5,
    box_fill: "#13365c",
    box_stroke: "#ff8c1a",
    box_stroke_width: 2.5,
    front_dash: Some("8 4"),
    text: "#ffffff",
    item_labels: false,
    border_marks: false,
    inline_style: false,
};

const CLASSIC: Theme = Theme {
    name: "classic",
    background: Some("#ffffff"),
    item_stroke: "#000000",
    item_stroke_width: 0.7,
    box_fill: "#fafafa",
    box_stroke: "#000000",
    box_stroke_width: 1.2,
    front_dash: None,
    text: "#000000",
    item_labels: false,
    border_marks: true,
    inline_style: true,
};

/// The style sheet a page includes (`styles`): highlight of the hovered item.
pub const PAGE_STYLES: &str = "\
.cz-box .cz-item{transition:opacity .1s}\
.cz-box.cz-hovering .cz-item{opacity:.35}\
.cz-box .cz-item.cz-highlight{opacity:1;stroke:#ff2d55;stroke-width:2}\
.cz-box .cz-item.cz-highlight polygon{stroke:#ff2d55;stroke-width:2}";

/// The script a page includes (`scripts`): hovering an item highlights it in every picture
/// (same `data-volume-index` and `data-box-index`), so a list row can do the same.
pub const PAGE_SCRIPT: &str = "\
(function(){\
function items(b,v){return document.querySelectorAll('.cz-item[data-box-index=\"'+b+'\"][data-volume-index=\"'+v+'\"]');}\
function set(el,on){var b=el.getAttribute('data-box-index'),v=el.getAttribute('data-volume-index');\
items(b,v).forEach(function(i){i.classList.toggle('cz-highlight',on);var s=i.closest('.cz-box');if(s){s.classList.toggle('cz-hovering',on);}});}\
document.addEventListener('mouseover',function(e){var el=e.target.closest&&e.target.closest('[data-volume-index]');if(el&&el.classList.contains('cz-item')){set(el,true);}});\
document.addEventListener('mouseout',function(e){var el=e.target.closest&&e.target.closest('[data-volume-index]');if(el&&el.classList.contains('cz-item')){set(el,false);}});\
window.cartonizeHighlight=function(b,v,on){items(b,v).forEach(function(i){set(i,on!==false);});};\
})();";
