//! The engine's input and output. The Python layer validates the public
//! request and lowers it to this smaller, already-normalised shape.

use serde::{Deserialize, Serialize};

use crate::cost::Rating;
use crate::limits::Limits;

/// One kind of item, with how many units of it to pack.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ItemKindInput {
    /// Dimensions along x (height), y (width), z (length), all > 0.
    pub dimensions: [f64; 3],
    #[serde(default)]
    pub weight: f64,
    pub quantity: u32,
    /// Axes the item may spin about; `None` = free rotation, `[]` = locked.
    #[serde(default)]
    pub free_axes: Option<Vec<usize>>,
}

/// One box type the engine may open, any number of times.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct BoxTypeInput {
    /// Inner dimensions along x, y, z, all > 0.
    pub dimensions: [f64; 3],
    /// Max gross weight; 0 or less means no limit.
    #[serde(default)]
    pub weight_max: f64,
    #[serde(default)]
    pub weight_tare: f64,
    /// Fixed price; without it (and without a rate table) cost is the volume.
    #[serde(default)]
    pub price: Option<f64>,
    /// Rate table, lowered (carrier tables resolved to breakpoints).
    #[serde(default)]
    pub rating: Option<Rating>,
}

/// Item orderings tried before packing (service-spec.md, `itemSort`).
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ItemSort {
    Default,
    LargestBoxNeeded,
    LargestGirth,
    LargestLengthPlusGirth,
    LongestDimension,
    ShortestDimension,
    LargestCrossSection,
    SetVolume,
    Weight,
    Density,
    /// The items in the order given (`sequenceSort`: the service gives them
    /// in sequence order); not a request `itemSort`.
    Sequence,
    #[default]
    Combined,
    All,
}

/// What box choice optimises.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Goal {
    #[default]
    LowestCost,
    MostItems,
}

/// Breaks ties between otherwise equal box type choices.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ValueTiebreaker {
    #[default]
    Volume,
    Weight,
}

fn default_coord_order() -> [usize; 3] {
    [0, 1, 2]
}

fn default_true() -> bool {
    true
}

fn default_usable_space() -> f64 {
    0.85
}

/// How the box type of a new box is chosen (`boxTypeChoiceStyle`).
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ChoiceStyle {
    /// Trial-fill every box type with the remaining units.
    #[default]
    Actual,
    /// Estimate each type's fill from `usableSpace` x its volume and its
    /// weight limit; only the chosen type is filled (see [`crate::choice`]).
    Estimated,
}

fn default_search_depth() -> u32 {
    1
}

/// Where placement gathers the items (service-spec.md, `placementStyle`;
/// docs/decisions.md "Placement styles").
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum PlacementStyle {
    /// The first candidate point in `coordOrder` priority.
    #[default]
    Default,
    /// Nearest to the rear bottom corner (0, 0, 0).
    Corner,
    /// Nearest to the middle of the bottom back edge (0, W/2, 0).
    Wedge,
    /// Nearest to the centre of the floor (0, W/2, L/2).
    Mound,
    /// Nearest to the centre of volume (H/2, W/2, L/2).
    Orb,
}

/// Tuning of one pack.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Options {
    #[serde(default)]
    pub item_sort: ItemSort,
    #[serde(default)]
    pub item_sort_reverse: bool,
    #[serde(default)]
    pub item_sort_dual_direction: bool,
    #[serde(default)]
    pub goal: Goal,
    #[serde(default)]
    pub value_tiebreaker: ValueTiebreaker,
    /// Axis priority of candidate points, most significant first.
    #[serde(default = "default_coord_order")]
    pub coord_order: [usize; 3],
    /// Place items as given and rotate only when that fails.
    #[serde(default = "default_true")]
    pub orientation_preferred: bool,
    /// Seconds; the best complete packing found by then is returned.
    #[serde(default)]
    pub timeout: Option<f64>,
    /// Spend up to half of `timeout` improving the best packing (ruin and
    /// recreate). Absent: improve exactly when `timeout` is given. The service
    /// passes `false` when `timeout` is only its own cap, so requests that did
    /// not ask for a time budget stay fast.
    #[serde(default)]
    pub improve: Option<bool>,
    /// Set when `timeout` is the service's time limit standing in for one the
    /// request did not give (or gave above the limit): that limit, in seconds.
    /// Only the wording of the timeout warning and error depends on it, since
    /// a caller who sent no `timeout` must not be told to raise one.
    #[serde(default)]
    pub service_limit: Option<f64>,
    /// `allowableOverhang`: with `Some(a)`, `a >= 0`, no item overhangs the
    /// items or floor beneath it by more than `a` on any side, and each
    /// placement reports its support. `None` or negative: no support check.
    #[serde(default)]
    pub allowable_overhang: Option<f64>,
    /// Count limits per box and across boxes.
    #[serde(default)]
    pub limits: Limits,
    /// `boxTypeChoiceStyle`.
    #[serde(default)]
    pub box_type_choice_style: ChoiceStyle,
    /// `usableSpace` (0..=1]: the share of a box's volume `estimated` expects to fill.
    #[serde(default = "default_usable_space")]
    pub usable_space: f64,
    /// `boxTypeChoiceLookahead`: further boxes packed greedily to judge each candidate.
    #[serde(default)]
    pub lookahead: u32,
    /// `boxTypeChoiceLookback`: `None` keeps every box open; `Some(n)` keeps the
    /// box being filled and the `n` boxes opened before it open.
    #[serde(default)]
    pub lookback: Option<u32>,
    /// `cohortPacking` with `cohortMax`: most face-connected groups per item set and box.
    #[serde(default)]
    pub cohort_max: Option<u32>,
    /// `placementStyle`: which feasible position wins.
    #[serde(default)]
    pub placement_style: PlacementStyle,
    /// `packOrigin`, box-local: the point placement gathers items nearest to
    /// (see [`crate::placing`]).
    #[serde(default)]
    pub pack_origin: Option<[f64; 3]>,
    /// `corners`: only corner (extreme) points are candidates; `false` adds
    /// positions against walls and item faces.
    #[serde(default = "default_true")]
    pub corners: bool,
    /// `layFlat`: items lie on their largest face (smallest side along x, up).
    #[serde(default)]
    pub lay_flat: bool,
    /// `interlock`: lying flat, the long side alternates between z and y
    /// from one layer to the next.
    #[serde(default)]
    pub interlock: bool,
    /// `itemOrientationSearchDepth` (used when `orientation_preferred` is false).
    #[serde(default = "default_search_depth")]
    pub orientation_search_depth: u32,
    /// `itemInitialOrientationBestForBox`: try first, in each box type, the
    /// orientation fitting the most units in an empty box of that type.
    #[serde(default)]
    pub best_for_box: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            item_sort: ItemSort::default(),
            item_sort_reverse: false,
            item_sort_dual_direction: false,
            goal: Goal::default(),
            value_tiebreaker: ValueTiebreaker::default(),
            coord_order: default_coord_order(),
            orientation_preferred: true,
            timeout: None,
            improve: None,
            service_limit: None,
            allowable_overhang: None,
            limits: Limits::default(),
            box_type_choice_style: ChoiceStyle::default(),
            usable_space: default_usable_space(),
            lookahead: 0,
            lookback: None,
            cohort_max: None,
            placement_style: PlacementStyle::Default,
            pack_origin: None,
            corners: true,
            lay_flat: false,
            interlock: false,
            orientation_search_depth: default_search_depth(),
            best_for_box: false,
        }
    }
}

/// Everything one pack needs.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct PackInput {
    #[serde(default)]
    pub items: Vec<ItemKindInput>,
    #[serde(default)]
    pub box_types: Vec<BoxTypeInput>,
    #[serde(default)]
    pub options: Options,
    /// Which units may not share a box, or enter a box type (rules).
    #[serde(default)]
    pub exclusions: Exclusions,
    /// Subsets of `box_types` (indices) also packed alone; the best complete
    /// answer wins, the full set on ties (see `subsets`).
    #[serde(default)]
    pub box_type_subsets: Vec<Vec<usize>>,
    /// Fragile item kinds (rule `fragile`).
    #[serde(default)]
    pub fragile: Vec<crate::fragile::FragileInput>,
    /// Pre-packed boxes (`boxes`): filled before any new box is opened, and
    /// always part of the answer.
    #[serde(default)]
    pub boxes: Vec<crate::prepacked::PrepackedInput>,
    /// Further dimensions units of a kind may take (rule `alternate-dimensions`).
    #[serde(default)]
    pub alternates: Vec<AlternatesInput>,
}

/// Dimensions a unit of one item kind may take instead of its own, each turned
/// as the kind's orientation lock allows, tried after the kind's own shapes.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct AlternatesInput {
    /// Index into `PackInput::items`.
    pub kind: usize,
    /// Dimensions along x, y, z as given, all > 0, in the order to try them.
    pub dimensions: Vec<[f64; 3]>,
}

/// Separation the request's rules ask for (`exclude`, `exclude-all`).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct Exclusions {
    /// Pairs of item kinds whose units never share a box (either order).
    #[serde(default)]
    pub kind_pairs: Vec<[usize; 2]>,
    /// (item kind, box type) pairs: units of the kind never enter the type.
    #[serde(default)]
    pub kind_box_types: Vec<[usize; 2]>,
    /// `maxSequenceDistance`, as (item kind, rank, reach): the rank of the
    /// kind's numeric sequence among the request's distinct ones (ascending)
    /// and the highest rank within the distance of it. Two such kinds share
    /// a box only when the higher rank is within the lower one's reach. The
    /// same as a kind pair for every two sequences too far apart, without
    /// their number growing with the square of the kinds.
    #[serde(default)]
    pub sequence_windows: Vec<[usize; 3]>,
}

/// One unit placed in a box.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Placement {
    /// Index into `PackInput::items`.
    pub item: usize,
    /// Which unit of that kind (0-based).
    pub unit: u32,
    /// Position of the unit in the winning item order.
    pub packed_index: usize,
    /// Box-local back-bottom corner.
    pub origin: [f64; 3],
    /// Dimensions as placed, after rotation.
    pub dimensions: [f64; 3],
    /// Increase of the box's cost caused by this unit.
    pub delta_cost: f64,
    /// What the unit rests on; reported only under a support check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub support: Option<SupportReport>,
}

/// What a placed unit rests on.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SupportReport {
    /// Share of the unit's base area resting on the floor or on items, 0..=1.
    pub share: f64,
    pub on_floor: bool,
    /// How many items the unit rests on.
    pub items: usize,
}

/// One box opened by the engine.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PackedBox {
    /// Index into `PackInput::box_types`.
    pub box_type: usize,
    pub cost: f64,
    /// Volume over `dimFactor`, when the box type's rate table has one.
    #[serde(default)]
    pub dimensional_weight: Option<f64>,
    /// Whether the dimensional weight, not the gross weight, was rated.
    #[serde(default)]
    pub dimensional_weight_used: bool,
    /// Units in placement order.
    pub items: Vec<Placement>,
    /// For a pre-packed box: its index in `PackInput::boxes` (then `box_type`
    /// is meaningless) and where its own items are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prepacked: Option<usize>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixed: Vec<Placement>,
}

/// A unit that could not be packed, and why.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Leftover {
    pub item: usize,
    pub unit: u32,
    pub reason: String,
}

/// The engine's answer.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct PackOutput {
    pub boxes: Vec<PackedBox>,
    pub leftovers: Vec<Leftover>,
    /// The item sort that won, in its wire spelling (`none` when nothing was sorted).
    pub item_sort_used: String,
    pub item_sort_reverse_used: bool,
    pub timed_out: bool,
    pub warnings: Vec<String>,
    /// Seconds spent in the engine.
    pub pack_time: f64,
}
