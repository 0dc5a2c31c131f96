//! The selection loop across box types: open the box type whose trial fill
//! promises the lowest total (or the most items), fill it, repeat.

use std::cmp::Ordering;

use crate::deadline::Deadline;
use crate::fill::{BoxFill, Merit, PlacedUnit, PlacementRule};
use crate::geometry::volume_f64;
use crate::kinds::{BoxKind, Kind};
use crate::limits::{boxes_max_reason, Limits, Spread};
use crate::model::{ChoiceStyle, Goal, ValueTiebreaker};
use crate::prepacked::FixedContents;
use crate::sort::cmp_f64;

/// One unit to pack: which kind, and which of its units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnitRef {
    pub kind: usize,
    pub unit: u32,
}

/// The static facts of one pack shared by every trial.
pub struct Context<'a> {
    pub kinds: &'a [Kind],
    pub boxes: &'a [BoxKind],
    pub rule: PlacementRule,
    pub goal: Goal,
    pub tiebreaker: ValueTiebreaker,
    /// `holds[b][k]`: an empty box of type `b` can take one unit of kind `k`.
    pub holds: Vec<Vec<bool>>,
    /// What an empty box of each type costs (for [`cheapest_box_for_rest`]).
    pub empty_costs: Vec<f64>,
    /// The least a box of each type can cost, whatever it holds
    /// ([`BoxKind::least_cost`]).
    pub least_costs: Vec<f64>,
    /// Limits across boxes (`boxesMax`, `boxesPerItemSetMax`, ...); none by default.
    pub limits: Limits,
    /// Box types `0..openable` may be opened; the ones after them are the
    /// pre-packed boxes, in order, whose items are `prepacked`.
    pub openable: usize,
    pub prepacked: FixedContents,
    /// How new boxes are chosen and how long boxes stay open.
    pub choice: Choice,
}

/// The box choice options (`boxTypeChoiceStyle`, `usableSpace`,
/// `boxTypeChoiceLookahead`, `boxTypeChoiceLookback`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Choice {
    pub style: ChoiceStyle,
    pub usable_space: f64,
    pub lookahead: u32,
    /// `None`: every box stays open; `Some(n)`: the box being filled and the
    /// `n` opened before it.
    pub lookback: Option<u32>,
    /// Candidates of one box choice that look ahead: the best by the ranking
    /// without it ([`LOOKAHEAD_CANDIDATES`]; no option sets another).
    pub lookahead_candidates: usize,
}

impl Default for Choice {
    fn default() -> Self {
        Choice {
            style: ChoiceStyle::Actual,
            usable_space: 0.85,
            lookahead: 0,
            lookback: None,
            lookahead_candidates: LOOKAHEAD_CANDIDATES,
        }
    }
}

impl Context<'_> {
    /// True when the order units are offered in binds the answer (lookback,
    /// pre-packed boxes), so improvement, which moves units freely between
    /// boxes, must not run.
    pub fn order_bound(&self) -> bool {
        self.choice.lookback.is_some() || self.openable < self.boxes.len()
    }
}

impl<'a> Context<'a> {
    pub fn new(
        kinds: &'a [Kind],
        boxes: &'a [BoxKind],
        rule: PlacementRule,
        goal: Goal,
        tiebreaker: ValueTiebreaker,
    ) -> Self {
        let holds = boxes
            .iter()
            .enumerate()
            .map(|(i, b)| {
                kinds
                    .iter()
                    .map(|k| b.can_hold(k) && k.excluded_box_types.binary_search(&i).is_err())
                    .collect()
            })
            .collect();
        Context {
            kinds,
            boxes,
            rule,
            goal,
            tiebreaker,
            holds,
            empty_costs: boxes.iter().map(|bk| bk.cost(bk.weight_tare)).collect(),
            least_costs: boxes.iter().map(BoxKind::least_cost).collect(),
            limits: Limits::default(),
            openable: boxes.len(),
            prepacked: Vec::new(),
            choice: Choice::default(),
        }
    }
}

/// A closed box: its type and its units (slots index the packed order).
#[derive(Debug, Clone)]
pub struct FilledBox {
    pub box_type: usize,
    pub units: Vec<PlacedUnit>,
    pub payload: f64,
}

impl FilledBox {
    pub fn cost(&self, ctx: &Context<'_>) -> f64 {
        let b = &ctx.boxes[self.box_type];
        b.cost(b.weight_tare + self.payload)
    }
}

/// The outcome of packing one ordering of the units.
#[derive(Debug, Clone)]
pub struct Packing {
    pub boxes: Vec<FilledBox>,
    /// Slots that no box type can take, with the reason.
    pub leftovers: Vec<(usize, String)>,
    pub cost: f64,
}

/// How units are assigned to boxes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One box at a time: trial-fill every box type with all remaining units,
    /// open the best trial, repeat.
    Sequential,
    /// All boxes stay open: each unit goes into the fullest open box that
    /// takes it, and a new box is opened only when none does (EP-BFD,
    /// Crainic, Perboli & Tadei 2008).
    BestFit,
    /// One box at a time, each filled by layers of units chosen to fit
    /// ([`crate::layers`]) when that packs more than the plain fill.
    Layers,
    /// One box at a time, each filled over its maximal empty spaces by the
    /// unit that fits best ([`crate::spaces`]); the order does not matter.
    Spaces,
}

/// One way of packing an ordering: the assignment mode and the point merit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    pub mode: Mode,
    pub merit: Merit,
}

impl Plan {
    /// The engine's original plan: sequential boxes, first feasible point.
    pub const BASE: Plan = Plan {
        mode: Mode::Sequential,
        merit: Merit::FirstPoint,
    };
}

/// A trial fill of one box type with the remaining units.
pub(crate) struct Trial<'a> {
    pub(crate) fill: BoxFill<'a>,
    pub(crate) box_type: usize,
    pub(crate) cost: f64,
    /// Cost of this box plus a lower estimate for what it leaves behind.
    pub(crate) projected: f64,
}

/// Packs `order` (units in the order they are offered). Returns `None` when
/// `deadline` expired and `must_finish` is false, or its grace expired too.
pub fn pack_order(
    order: &[UnitRef],
    ctx: &Context<'_>,
    plan: Plan,
    deadline: &Deadline,
    must_finish: bool,
) -> Option<Packing> {
    let rule = PlacementRule {
        merit: plan.merit,
        ..ctx.rule
    };
    let mut leftovers = Vec::new();
    let mut remaining: Vec<usize> = Vec::with_capacity(order.len());
    for (slot, u) in order.iter().enumerate() {
        if ctx.holds.iter().any(|h| h[u.kind]) {
            remaining.push(slot);
        } else {
            leftovers.push((slot, unfit_reason(u.kind, ctx)));
        }
    }
    let mut spread = Spread::new(&ctx.limits, ctx.kinds);
    let start = prefill(order, &mut remaining, ctx, rule, &mut spread);
    let run = Run {
        order,
        ctx,
        rule,
        deadline,
        must_finish,
    };
    let mut boxes = match (plan.mode, ctx.choice.lookback) {
        (Mode::Sequential, None) => sequential(&run, remaining, &mut leftovers, start, spread)?,
        (Mode::Sequential, Some(n)) => windowed(
            &run,
            remaining,
            &mut leftovers,
            start,
            spread,
            n as usize + 1,
        )?,
        (Mode::BestFit, _) => best_fit(&run, &remaining, &mut leftovers, start, spread)?,
        (Mode::Layers, _) => {
            crate::layers::pack(order, remaining, ctx, rule, deadline, must_finish)?
        }
        (Mode::Spaces, _) => {
            crate::spaces::pack(order, remaining, ctx, rule, deadline, must_finish)?
        }
    };
    downsize(&mut boxes, order, ctx, rule);
    let cost = boxes.iter().map(|b| b.cost(ctx)).sum();
    leftovers.sort_by_key(|(slot, _)| *slot);
    Some(Packing {
        boxes,
        leftovers,
        cost,
    })
}

/// Under box-count limits, the units `packing` left over that some box type
/// takes are packed into new boxes, one at a time as [`sequential`] does, as
/// far as the limits allow. The steps after the portfolio (re-boxing merges
/// and empties boxes) can free room under `boxesMax` that the leftovers never
/// saw: two small boxes merged into one leave a box for a unit that was left
/// over when both were open. The packing is kept as it was unless some unit
/// gets in (fewer leftovers). Not under `boxTypeChoiceLookback` (a leftover
/// offered early may not go into a box opened after later units).
pub fn top_up(
    packing: Packing,
    order: &[UnitRef],
    ctx: &Context<'_>,
    rule: PlacementRule,
    deadline: &Deadline,
) -> Packing {
    if packing.leftovers.is_empty() || !ctx.limits.counts_boxes() || ctx.choice.lookback.is_some() {
        return packing;
    }
    let openable = |slot: usize| {
        ctx.holds[..ctx.openable]
            .iter()
            .any(|h| h[order[slot].kind])
    };
    let (remaining, mut leftovers): (Vec<_>, Vec<_>) = packing
        .leftovers
        .iter()
        .cloned()
        .partition(|(slot, _)| openable(*slot));
    if remaining.is_empty() {
        return packing;
    }
    let mut spread = Spread::new(&ctx.limits, ctx.kinds);
    for (position, contents) in ctx.prepacked.iter().enumerate() {
        for (_, kind) in contents {
            spread.record(&ctx.kinds[*kind], position);
        }
    }
    for (position, filled) in packing.boxes.iter().enumerate() {
        for u in &filled.units {
            spread.record(&ctx.kinds[u.kind], position);
        }
    }
    let run = Run {
        order,
        ctx,
        rule,
        deadline,
        must_finish: true,
    };
    let slots: Vec<usize> = remaining.iter().map(|(slot, _)| *slot).collect();
    let before = packing.boxes.len();
    let Some(mut boxes) =
        sequential_after(&run, slots, &mut leftovers, packing.boxes.clone(), spread)
    else {
        return packing;
    };
    if leftovers.len() >= packing.leftovers.len() {
        return packing;
    }
    downsize(&mut boxes[before..], order, ctx, rule);
    leftovers.sort_by_key(|(slot, _)| *slot);
    let cost = boxes.iter().map(|b| b.cost(ctx)).sum();
    Packing {
        boxes,
        leftovers,
        cost,
    }
}

/// What every assignment mode needs: the units, the pack, the placement
/// rule and the deadline.
struct Run<'r, 'a> {
    order: &'r [UnitRef],
    ctx: &'r Context<'a>,
    rule: PlacementRule,
    deadline: &'r Deadline,
    must_finish: bool,
}

/// The pre-packed boxes holding their own items, each offered the
/// `remaining` units in order (taken units leave `remaining`); they take the
/// first box positions.
fn prefill<'a>(
    order: &[UnitRef],
    remaining: &mut Vec<usize>,
    ctx: &Context<'a>,
    rule: PlacementRule,
    spread: &mut Spread,
) -> Vec<(usize, BoxFill<'a>)> {
    // Their own items count toward boxesPerItemSetMax / boxesPerSequenceMax.
    for (position, contents) in ctx.prepacked.iter().enumerate() {
        for (_, kind) in contents {
            spread.record(&ctx.kinds[*kind], position);
        }
    }
    let mut out = Vec::with_capacity(ctx.prepacked.len());
    for (position, contents) in ctx.prepacked.iter().enumerate() {
        let b = ctx.openable + position;
        let mut fill = crate::prepacked::fill_with(&ctx.boxes[b], contents, rule, ctx.kinds);
        remaining.retain(|&slot| {
            let kind = order[slot].kind;
            let k = &ctx.kinds[kind];
            let placed = ctx.holds[b][kind]
                && spread.refuses(k, position).is_none()
                && fill.try_add(slot, kind, ctx.kinds);
            if placed {
                spread.record(k, position);
            }
            !placed
        });
        out.push((b, fill));
    }
    out
}

fn closed(opened: Vec<(usize, BoxFill<'_>)>) -> Vec<FilledBox> {
    opened
        .into_iter()
        .map(|(box_type, fill)| FilledBox {
            box_type,
            units: fill.units,
            payload: fill.payload,
        })
        .collect()
}

/// Opens one box at a time: the best trial fill of every box type with the
/// `remaining` units, until none remain.
fn sequential(
    run: &Run<'_, '_>,
    remaining: Vec<usize>,
    leftovers: &mut Vec<(usize, String)>,
    start: Vec<(usize, BoxFill<'_>)>,
    spread: Spread,
) -> Option<Vec<FilledBox>> {
    sequential_after(run, remaining, leftovers, closed(start), spread)
}

/// [`sequential`] after the closed `boxes` (their units recorded in `spread`).
fn sequential_after(
    run: &Run<'_, '_>,
    mut remaining: Vec<usize>,
    leftovers: &mut Vec<(usize, String)>,
    mut boxes: Vec<FilledBox>,
    mut spread: Spread,
) -> Option<Vec<FilledBox>> {
    let (order, ctx, rule) = (run.order, run.ctx, run.rule);
    let (deadline, must_finish) = (run.deadline, run.must_finish);
    let mut taken = vec![false; order.len()];
    while !remaining.is_empty() {
        if deadline.stops(must_finish) {
            return None;
        }
        let position = boxes.len();
        if let Some(max) = ctx.limits.boxes_max.filter(|m| position >= *m as usize) {
            leftovers.extend(remaining.drain(..).map(|s| (s, boxes_max_reason(max))));
            break;
        }
        remaining.retain(
            |&s| match spread.refuses(&ctx.kinds[order[s].kind], position) {
                Some(refusal) => {
                    leftovers.push((s, refusal.reason()));
                    false
                }
                None => true,
            },
        );
        if remaining.is_empty() {
            break;
        }
        let boxes_left = ctx.limits.boxes_max.map(|m| m as usize - position);
        let Some(trial) = choose_box(order, &remaining, ctx, rule, boxes_left, false)
            .map(|t| keep_groups_whole(t, order, &remaining, ctx, rule, boxes_left, &spread))
        else {
            // Unreachable in practice: every remaining unit fits some empty box.
            for slot in remaining.drain(..) {
                leftovers.push((slot, "no box type could take this item".to_string()));
            }
            break;
        };
        for u in &trial.fill.units {
            taken[u.slot] = true;
            spread.record(&ctx.kinds[u.kind], position);
        }
        remaining.retain(|s| !taken[*s]);
        boxes.push(FilledBox {
            box_type: trial.box_type,
            units: trial.fill.units,
            payload: trial.fill.payload,
        });
    }
    Some(boxes)
}

/// Under `boxesPerItemSetMax` / `boxesPerSequenceMax`: when `trial` is the
/// last box an item set (or sequence) may use but leaves some of its units
/// behind, the box is chosen again without that group, so the group can go
/// whole into a later box; the first trial stays when nothing else fits.
fn keep_groups_whole<'a>(
    trial: Trial<'a>,
    order: &[UnitRef],
    remaining: &[usize],
    ctx: &Context<'a>,
    rule: PlacementRule,
    boxes_left: Option<usize>,
    spread: &Spread,
) -> Trial<'a> {
    if boxes_left.is_some_and(|n| n <= 1) {
        return trial; // no later box for the group to go to
    }
    let (taken, left) = taken_and_left(&trial, order, remaining);
    let Some(stranded) = spread.stranded(ctx.kinds, &taken, &left) else {
        return trial;
    };
    let others: Vec<usize> = remaining
        .iter()
        .copied()
        .filter(|s| !stranded.holds(&ctx.kinds[order[*s].kind]))
        .collect();
    if others.is_empty() {
        // Only stranded groups are left: a box that takes each group it opens for
        // whole, when one does, rather than the best trial that splits one.
        return whole_groups(order, remaining, ctx, rule, boxes_left, spread).unwrap_or(trial);
    }
    choose_box(order, &others, ctx, rule, boxes_left, false).unwrap_or(trial)
}

/// The kinds of the units `trial` takes, and of the `remaining` units it
/// leaves (slots into `order`).
fn taken_and_left(
    trial: &Trial<'_>,
    order: &[UnitRef],
    remaining: &[usize],
) -> (Vec<usize>, Vec<usize>) {
    let mut placed: Vec<usize> = trial.fill.units.iter().map(|u| u.slot).collect();
    placed.sort_unstable();
    let taken = trial.fill.units.iter().map(|u| u.kind).collect();
    let left = remaining
        .iter()
        .filter(|s| placed.binary_search(s).is_err())
        .map(|s| order[*s].kind)
        .collect();
    (taken, left)
}

/// The best trial fill of the `remaining` units that strands no item set or
/// sequence group (takes all of a group's units or none of them when the box
/// is the group's last allowed one), if any: a cheap box for one unit of a
/// group at its last box would leave the group's other units over although a
/// larger box takes them all (a pack-as-is carton of a single unit against a
/// carton for the whole item set under `boxesPerItemSetMax: 1`).
fn whole_groups<'a>(
    order: &[UnitRef],
    remaining: &[usize],
    ctx: &Context<'a>,
    rule: PlacementRule,
    boxes_left: Option<usize>,
    spread: &Spread,
) -> Option<Trial<'a>> {
    let (trials, remaining_volume) = trial_fills(order, remaining, ctx, rule, false, false);
    let whole: Vec<Trial<'a>> = trials
        .into_iter()
        .filter(|t| {
            let (taken, left) = taken_and_left(t, order, remaining);
            spread.stranded(ctx.kinds, &taken, &left).is_none()
        })
        .collect();
    if whole.is_empty() {
        return None;
    }
    let rest = crate::choice::Rest {
        order,
        remaining,
        rule,
        boxes_left,
        stop: false,
    };
    best_trial(whole, remaining_volume, &rest, ctx, 0)
}

/// Sequential boxes under `boxTypeChoiceLookback`: only the last `window`
/// boxes opened stay open (the box being filled and `window - 1` before
/// it). Each unit, in order, goes into the newest open box that takes it;
/// when none does, a new box is chosen among trial fills that stop at the
/// first unit they cannot take, and the oldest open box closes if the window
/// is full. Pre-packed boxes were offered every unit before.
fn windowed(
    run: &Run<'_, '_>,
    remaining: Vec<usize>,
    leftovers: &mut Vec<(usize, String)>,
    start: Vec<(usize, BoxFill<'_>)>,
    mut spread: Spread,
    window: usize,
) -> Option<Vec<FilledBox>> {
    let (order, ctx, rule) = (run.order, run.ctx, run.rule);
    let mut boxes = closed(start);
    let mut open: Vec<(usize, BoxFill<'_>)> = Vec::new();
    let mut taken = vec![false; order.len()];
    for (i, &slot) in remaining.iter().enumerate() {
        if taken[slot] {
            continue;
        }
        if run.deadline.stops(run.must_finish) {
            return None;
        }
        let kind = order[slot].kind;
        let k = &ctx.kinds[kind];
        let first = boxes.len();
        let into = (0..open.len()).rev().find(|&j| {
            ctx.holds[open[j].0][kind]
                && spread.refuses(k, first + j).is_none()
                && open[j].1.try_add(slot, kind, ctx.kinds)
        });
        if let Some(j) = into {
            spread.record(k, first + j);
            taken[slot] = true;
            continue;
        }
        let position = first + open.len();
        if let Some(max) = ctx.limits.boxes_max.filter(|m| position >= *m as usize) {
            leftovers.push((slot, boxes_max_reason(max)));
            continue;
        }
        if let Some(refusal) = spread.refuses(k, position) {
            leftovers.push((slot, refusal.reason()));
            continue;
        }
        let rest: Vec<usize> = remaining[i..]
            .iter()
            .copied()
            .filter(|&s| {
                !taken[s]
                    && spread
                        .refuses(&ctx.kinds[order[s].kind], position)
                        .is_none()
            })
            .collect();
        let boxes_left = ctx.limits.boxes_max.map(|m| m as usize - position);
        let Some(trial) = choose_box(order, &rest, ctx, rule, boxes_left, true)
            .filter(|t| t.fill.units.first().is_some_and(|u| u.slot == slot))
        else {
            leftovers.push((slot, "no box type could take this item".to_string()));
            continue;
        };
        for u in &trial.fill.units {
            taken[u.slot] = true;
            spread.record(&ctx.kinds[u.kind], position);
        }
        open.push((trial.box_type, trial.fill));
        if open.len() > window {
            boxes.extend(closed(open.drain(..1).collect()));
        }
    }
    boxes.extend(closed(open));
    Some(boxes)
}

/// Assigns `slots` in order to open boxes, fullest box first; opens a box of
/// [`type_for_new_box`] when no open box takes a unit.
fn best_fit<'a>(
    run: &Run<'_, 'a>,
    slots: &[usize],
    leftovers: &mut Vec<(usize, String)>,
    start: Vec<(usize, BoxFill<'a>)>,
    mut spread: Spread,
) -> Option<Vec<FilledBox>> {
    let mut open = start;
    for chunk in slots.chunks(BEST_FIT_CHUNK) {
        if run.deadline.stops(run.must_finish) {
            return None;
        }
        best_fit_into(
            &mut open,
            run.order,
            chunk,
            run.ctx,
            run.rule,
            leftovers,
            &mut spread,
        );
    }
    Some(closed(open))
}

/// Units best-fit assigns between two looks at the deadline.
const BEST_FIT_CHUNK: usize = 64;

/// Best-fit assignment of `slots`, in order, into the boxes already `open`
/// (box type, fill) and new ones; a unit no box type takes goes to `leftovers`.
fn best_fit_into<'a>(
    open: &mut Vec<(usize, BoxFill<'a>)>,
    order: &[UnitRef],
    slots: &[usize],
    ctx: &Context<'a>,
    rule: PlacementRule,
    leftovers: &mut Vec<(usize, String)>,
    spread: &mut Spread,
) {
    let mut candidates: Vec<(f64, usize)> = Vec::new();
    for &slot in slots {
        let kind = order[slot].kind;
        let k = &ctx.kinds[kind];
        fullest_first(open, kind, ctx, &mut candidates);
        // Under lookback only the last boxes opened are still open.
        let oldest_open = ctx
            .choice
            .lookback
            .map_or(0, |n| open.len().saturating_sub(n as usize + 1));
        if let Some(&(_, i)) = candidates.iter().find(|&&(_, i)| {
            i >= oldest_open
                && spread.refuses(k, i).is_none()
                && open[i].1.try_add(slot, kind, ctx.kinds)
        }) {
            spread.record(k, i);
            continue;
        }
        if let Some(max) = ctx.limits.boxes_max.filter(|m| open.len() >= *m as usize) {
            leftovers.push((slot, boxes_max_reason(max)));
            continue;
        }
        if let Some(refusal) = spread.refuses(k, open.len()) {
            leftovers.push((slot, refusal.reason()));
            continue;
        }
        let placed = type_for_new_box(kind, ctx).and_then(|b| {
            let mut fill = BoxFill::new(&ctx.boxes[b], rule);
            fill.try_add(slot, kind, ctx.kinds).then_some((b, fill))
        });
        match placed {
            Some(opened) => {
                spread.record(k, open.len());
                open.push(opened);
            }
            None => leftovers.push((slot, "no box type could take this item".to_string())),
        }
    }
}

/// The open boxes whose type can take a unit of `kind`, fullest first, so space
/// left in nearly full boxes gets used; the index keeps ties deterministic.
/// Each entry is (volume used, index): read once per box, not once per
/// comparison (the sort runs for every unit the search reinserts).
pub(crate) fn fullest_first<'a, F: std::borrow::Borrow<BoxFill<'a>>>(
    open: &[(usize, F)],
    kind: usize,
    ctx: &Context<'_>,
    out: &mut Vec<(f64, usize)>,
) {
    out.clear();
    out.extend(
        open.iter()
            .enumerate()
            .filter(|(_, (b, _))| ctx.holds[*b][kind])
            .map(|(i, (_, fill))| (fill.borrow().volume_used(), i)),
    );
    // The index makes the order total, so an unstable sort gives the one order.
    out.sort_unstable_by(|a, b| cmp_f64(b.0, a.0).then(a.1.cmp(&b.1)));
}

/// The box type best-fit opens for a unit of `kind`: the lowest cost per
/// volume (`most-items`: the largest), larger first on ties, so a box has
/// room for what follows; the downsize pass shrinks it afterwards.
pub(crate) fn type_for_new_box(kind: usize, ctx: &Context<'_>) -> Option<usize> {
    let rate = |b: usize| {
        let bk = &ctx.boxes[b];
        match ctx.goal {
            Goal::LowestCost => bk.cost(bk.weight_tare) / bk.volume.max(f64::MIN_POSITIVE),
            Goal::MostItems => 0.0,
        }
    };
    (0..ctx.openable)
        .filter(|&b| ctx.holds[b][kind])
        .min_by(|&a, &b| {
            cmp_f64(rate(a), rate(b))
                .then(cmp_f64(ctx.boxes[b].volume, ctx.boxes[a].volume))
                .then(a.cmp(&b))
        })
}

/// Fills a fresh box of type `b` with `slots`, in order; with `stop` the
/// box closes at the first unit it cannot take (lookback).
pub(crate) fn fill_box<'a>(
    b: usize,
    order: &[UnitRef],
    slots: &[usize],
    ctx: &Context<'a>,
    rule: PlacementRule,
    stop: bool,
) -> BoxFill<'a> {
    let mut fill = BoxFill::new(&ctx.boxes[b], rule);
    // Smallest volume among the units still to offer, to stop once nothing can fit.
    let mut min_after = vec![f64::INFINITY; slots.len() + 1];
    for i in (0..slots.len()).rev() {
        min_after[i] = min_after[i + 1].min(ctx.kinds[order[slots[i]].kind].volume);
    }
    for (i, &slot) in slots.iter().enumerate() {
        if fill.volume_used() + min_after[i] > ctx.boxes[b].volume * (1.0 + 1e-12) {
            break;
        }
        let kind = order[slot].kind;
        let added = ctx.holds[b][kind] && fill.try_add(slot, kind, ctx.kinds);
        if stop && !added {
            break;
        }
    }
    fill
}

/// Chooses the box type of a new box for the `remaining` units: by trial
/// fills (`actual`, optionally looking ahead) or by estimate (`estimated`).
/// With `boxes_left` (under `boxesMax`) a trial that leaves more volume than
/// the other allowed boxes could hold loses, and among such the fullest wins.
fn choose_box<'a>(
    order: &[UnitRef],
    remaining: &[usize],
    ctx: &Context<'a>,
    rule: PlacementRule,
    boxes_left: Option<usize>,
    stop: bool,
) -> Option<Trial<'a>> {
    match ctx.choice.style {
        ChoiceStyle::Estimated => {
            crate::choice::choose_estimated(order, remaining, ctx, rule, boxes_left, stop)
        }
        ChoiceStyle::Actual => choose_actual(
            order,
            remaining,
            ctx,
            rule,
            boxes_left,
            stop,
            ctx.choice.lookahead,
        ),
    }
}

/// Tries every box type on the remaining units and keeps the best trial;
/// with `lookahead` > 0 each trial is judged with the boxes that greedily
/// follow it (see [`crate::choice::look_ahead`]).
pub(crate) fn choose_actual<'a>(
    order: &[UnitRef],
    remaining: &[usize],
    ctx: &Context<'a>,
    rule: PlacementRule,
    boxes_left: Option<usize>,
    stop: bool,
    lookahead: u32,
) -> Option<Trial<'a>> {
    let skipping = boxes_left.is_none() && lookahead == 0;
    let (trials, remaining_volume) = trial_fills(order, remaining, ctx, rule, stop, skipping);
    let rest = crate::choice::Rest {
        order,
        remaining,
        rule,
        boxes_left,
        stop,
    };
    best_trial(trials, remaining_volume, &rest, ctx, lookahead)
}

/// Each box type's trial fill of the remaining units, with its projection
/// (without the trials that cannot win when `skipping`), and the remaining
/// units' volume.
fn trial_fills<'a>(
    order: &[UnitRef],
    remaining: &[usize],
    ctx: &Context<'a>,
    rule: PlacementRule,
    stop: bool,
    skipping: bool,
) -> (Vec<Trial<'a>>, f64) {
    let mut trials: Vec<Trial<'a>> = Vec::with_capacity(ctx.openable);
    let (types, mut skip) = Skip::new(order, remaining, ctx, skipping);
    for b in types {
        if skip.cannot_win(b, ctx) || !remaining.iter().any(|s| ctx.holds[b][order[*s].kind]) {
            continue;
        }
        let fill = fill_box(b, order, remaining, ctx, rule, stop);
        if fill.is_empty() {
            continue;
        }
        let cost = ctx.boxes[b].cost(ctx.boxes[b].weight_tare + fill.payload);
        skip.note(&fill, cost, (order, remaining), ctx);
        trials.push(Trial {
            fill,
            box_type: b,
            cost,
            projected: cost,
        });
    }
    // The cheapest cost per packed volume any box achieves bounds what the
    // units left behind will cost; a left-behind unit needs at least one box.
    for (t, &(_, left_volume, rest)) in trials.iter_mut().zip(&skip.made) {
        if let Some(cheapest_box) = rest {
            t.projected = t.cost + (left_volume * skip.best_rate).max(cheapest_box);
        }
    }
    (trials, skip.remaining_volume)
}

/// The trial to open: one that leaves what the box-count limit can still
/// take, then (with `lookahead`) the best with the boxes that follow it,
/// then the best under the goal.
fn best_trial<'a>(
    mut trials: Vec<Trial<'a>>,
    remaining_volume: f64,
    rest: &crate::choice::Rest<'_>,
    ctx: &Context<'a>,
    lookahead: u32,
) -> Option<Trial<'a>> {
    let boxes_left = rest.boxes_left;
    let largest = ctx.boxes[..ctx.openable]
        .iter()
        .map(|b| b.volume)
        .fold(0.0, f64::max);
    let room = |t: &Trial<'_>| {
        boxes_left.is_none_or(|n| {
            let rest = remaining_volume - t.fill.volume_used();
            rest <= n.saturating_sub(1) as f64 * largest * (1.0 + 1e-9)
        })
    };
    // Without looking ahead: room for the rest first, then the fuller
    // among those without it, then the goal.
    let plain = |a: &Trial<'_>, b: &Trial<'_>| {
        let (ra, rb) = (room(a), room(b));
        let fuller = || match (ra, rb) {
            (false, false) => cmp_f64(b.fill.volume_used(), a.fill.volume_used()),
            _ => Ordering::Equal,
        };
        rb.cmp(&ra).then_with(fuller)
    };
    let candidates = ctx.choice.lookahead_candidates;
    if lookahead > 0 && trials.len() > candidates {
        // Only the best candidates by the plain ranking look ahead: each
        // look-ahead trial-fills every box type again, so with a thousand
        // types one box choice was a million fills.
        let mut ranked: Vec<usize> = (0..trials.len()).collect();
        ranked.sort_by(|&i, &j| {
            let (a, b) = (&trials[i], &trials[j]);
            plain(a, b).then_with(|| compare_trials(a, b, ctx))
        });
        ranked.truncate(candidates);
        ranked.sort_unstable();
        let mut kept = ranked.into_iter().peekable();
        let mut i = 0;
        trials.retain(|_| {
            let keep = kept.next_if_eq(&i).is_some();
            i += 1;
            keep
        });
    }
    let ahead: Vec<Option<crate::choice::Ahead>> = if lookahead > 0 && trials.len() > 1 {
        trials
            .iter()
            .map(|t| Some(crate::choice::look_ahead(t, rest, ctx, lookahead)))
            .collect()
    } else {
        Vec::new()
    };
    let best = (0..trials.len()).min_by(|&i, &j| {
        let (a, b) = (&trials[i], &trials[j]);
        let looked = || match (ahead.get(i), ahead.get(j)) {
            (Some(Some(x)), Some(Some(y))) => x.compare(y, ctx.goal),
            _ => Ordering::Equal,
        };
        plain(a, b)
            .then_with(looked)
            .then_with(|| compare_trials(a, b, ctx))
    })?;
    Some(trials.swap_remove(best))
}

/// Candidates of one box choice that look ahead (`boxTypeChoiceLookahead`):
/// the best by the ranking without it. With at most this many box types,
/// every candidate does.
pub const LOOKAHEAD_CANDIDATES: usize = 16;

/// Which trial fills [`choose_actual`] may leave out (with no lookahead and
/// no box-count limit), so the choice is the same as with every trial made.
/// A trial is judged by its projection: its cost plus, for what it leaves,
/// the left volume at the best cost per volume of any trial (or the
/// cheapest box that takes some of it). A box type is skipped when, even
/// full, it could not pack volume more cheaply than a trial already made
/// (so it would not lower that rate), and the least it can cost plus the
/// least its leftover can be projected at is above what a trial already
/// made is projected at, at most (the rate only falls as trials are added,
/// never below the least rate of the types still to try). Under `most-items`
/// the unit count decides first, so only a trial that took every unit
/// skips others. Types that can take everything by volume are tried from
/// the least they can cost up (the cheapest that takes everything comes
/// early); otherwise from the least cost per volume up.
struct Skip {
    on: bool,
    /// Each type's least cost per volume it could take, a little low.
    floor: Vec<f64>,
    /// `later[i]`: the least of `floor` from the `i`th type tried on.
    later: Vec<f64>,
    /// Types tried or skipped so far.
    tried: usize,
    /// Most volume the remaining units can take.
    volume_cap: f64,
    remaining_volume: f64,
    /// Whether a unit's volume depends on its shape (alternate dimensions).
    varied: bool,
    goal: Goal,
    /// Of each trial made: its cost, the volume it left, and the cheapest
    /// box that takes some of it (`None` when it took every unit).
    made: Vec<(f64, f64, Option<f64>)>,
    /// Lowest cost per packed volume of a trial so far.
    best_rate: f64,
}

impl Skip {
    /// The box types in the order to try them, and the rule that skips some.
    fn new(
        order: &[UnitRef],
        remaining: &[usize],
        ctx: &Context<'_>,
        on: bool,
    ) -> (Vec<usize>, Self) {
        let kinds = remaining.iter().map(|s| &ctx.kinds[order[*s].kind]);
        let remaining_volume: f64 = kinds.clone().map(|k| k.volume).sum();
        let volume_cap: f64 = kinds
            .clone()
            .map(|k| match k.varied {
                true => k
                    .shapes
                    .iter()
                    .map(|(d, _)| volume_f64(d))
                    .fold(k.volume, f64::max),
                false => k.volume,
            })
            .sum();
        let mut skip = Skip {
            on,
            floor: Vec::new(),
            later: Vec::new(),
            tried: 0,
            volume_cap,
            remaining_volume,
            varied: kinds.clone().any(|k| k.varied),
            goal: ctx.goal,
            made: Vec::new(),
            best_rate: f64::INFINITY,
        };
        let mut types: Vec<usize> = (0..ctx.openable).collect();
        if !on {
            return (types, skip);
        }
        let boxes = &ctx.boxes[..ctx.openable];
        let least = &ctx.least_costs[..ctx.openable];
        skip.floor = boxes
            .iter()
            .zip(least)
            .map(|(bk, least)| least / (bk.volume.min(volume_cap) * (1.0 + 1e-9)))
            .collect();
        let one_box = boxes.iter().any(|bk| bk.volume >= volume_cap);
        let key = match one_box {
            true => least,
            false => &skip.floor[..],
        };
        types.sort_by(|&a, &b| cmp_f64(key[a], key[b]).then(a.cmp(&b)));
        skip.later = vec![f64::INFINITY; types.len() + 1];
        for i in (0..types.len()).rev() {
            skip.later[i] = skip.later[i + 1].min(skip.floor[types[i]]);
        }
        (types, skip)
    }

    /// True when a trial of type `b`, the next type in the order, could
    /// neither be chosen nor change the projection of the trial that is.
    fn cannot_win(&mut self, b: usize, ctx: &Context<'_>) -> bool {
        if !self.on {
            return false;
        }
        let position = self.tried;
        self.tried += 1;
        if self.floor[b] < self.best_rate {
            return false;
        }
        // The least this trial could be projected at: its least cost, plus
        // the volume it must leave at the least rate the trials can end on.
        let least_rate = self.best_rate.min(self.later[position]);
        let most_volume = ctx.boxes[b].volume.min(self.volume_cap);
        let must_leave = (self.remaining_volume - most_volume).max(0.0) * (1.0 - 1e-9);
        let at_least = match least_rate >= 0.0 && !self.varied {
            true => ctx.least_costs[b] + must_leave * least_rate,
            false => ctx.least_costs[b],
        };
        // The most a trial made could be projected at.
        let rate = self.best_rate;
        let at_most = self
            .made
            .iter()
            .filter(|(_, _, rest)| rest.is_none() || self.goal == Goal::LowestCost)
            .map(|&(cost, left, rest)| match rest {
                None => cost,
                Some(cheapest) => cost + (left * rate).max(cheapest),
            })
            .fold(f64::INFINITY, f64::min);
        at_least > at_most + 1e-9 * at_most.abs()
    }

    /// Records a trial of `cost` that took `fill` (in the order of trials).
    fn note(
        &mut self,
        fill: &BoxFill<'_>,
        cost: f64,
        (order, remaining): (&[UnitRef], &[usize]),
        ctx: &Context<'_>,
    ) {
        let used = fill.volume_used();
        self.best_rate = self.best_rate.min(cost / used.max(f64::MIN_POSITIVE));
        let rest = (fill.units.len() < remaining.len())
            .then(|| cheapest_box_for_rest(&slots_of(fill), order, remaining, ctx));
        self.made.push((cost, self.remaining_volume - used, rest));
    }
}

/// The slots a fill holds, sorted.
pub(crate) fn slots_of(fill: &BoxFill<'_>) -> Vec<usize> {
    let mut placed: Vec<usize> = fill.units.iter().map(|u| u.slot).collect();
    placed.sort_unstable();
    placed
}

/// The cheapest box type that can take some unit of `remaining` not in
/// `placed` (sorted).
pub(crate) fn cheapest_box_for_rest(
    placed: &[usize],
    order: &[UnitRef],
    remaining: &[usize],
    ctx: &Context<'_>,
) -> f64 {
    let mut cheapest = f64::INFINITY;
    for (b, &c) in ctx.empty_costs.iter().enumerate().take(ctx.openable) {
        if c < cheapest
            && remaining
                .iter()
                .any(|s| placed.binary_search(s).is_err() && ctx.holds[b][order[*s].kind])
        {
            cheapest = c;
        }
    }
    if cheapest.is_finite() {
        cheapest
    } else {
        0.0
    }
}

/// Orders trials best first under the request's goal.
fn compare_trials(a: &Trial<'_>, b: &Trial<'_>, ctx: &Context<'_>) -> Ordering {
    let count = b.fill.units.len().cmp(&a.fill.units.len());
    let projected = cmp_f64(a.projected, b.projected);
    let primary = match ctx.goal {
        Goal::LowestCost => projected.then(count),
        Goal::MostItems => count.then(projected),
    };
    primary.then(tiebreak(a.box_type, b.box_type, ctx))
}

/// `valueTiebreaker` between two box types, then the earlier type.
pub(crate) fn tiebreak(a: usize, b: usize, ctx: &Context<'_>) -> Ordering {
    let (ba, bb) = (&ctx.boxes[a], &ctx.boxes[b]);
    let tie = match ctx.tiebreaker {
        ValueTiebreaker::Volume => cmp_f64(ba.volume, bb.volume),
        ValueTiebreaker::Weight => cmp_f64(ba.weight_tare, bb.weight_tare)
            .then(cmp_f64(ba.payload_max(), bb.payload_max()).reverse()),
    };
    tie.then(a.cmp(&b))
}

/// `types` ordered by what a box of each costs holding `payload` (then
/// smaller, then earlier). With a rate table the billed weight is the
/// larger of gross and dimensional weight, so the order at a payload is not
/// the order of empty boxes: under it the first type that fits can be
/// dearer than a later one.
pub(crate) fn by_cost_at(types: &mut [usize], payload: f64, ctx: &Context<'_>) {
    // Each type's cost once, not once per comparison: under a rate table a
    // cost is a lookup with dimensional weight (5 % of the engine's work on
    // an order with 79 box types). Stable, as before, with the same keys.
    let mut keyed: Vec<(f64, f64, usize)> = types
        .iter()
        .map(|&b| {
            let bk = &ctx.boxes[b];
            (bk.cost(bk.weight_tare + payload), bk.volume, b)
        })
        .collect();
    keyed.sort_by(|a, b| {
        cmp_f64(a.0, b.0)
            .then(cmp_f64(a.1, b.1))
            .then(a.2.cmp(&b.2))
    });
    for (t, (_, _, b)) in types.iter_mut().zip(keyed) {
        *t = b;
    }
}

/// Moves each box's contents into the cheapest box type that takes them
/// all, when that is cheaper.
pub(crate) fn downsize(
    boxes: &mut [FilledBox],
    order: &[UnitRef],
    ctx: &Context<'_>,
    rule: PlacementRule,
) {
    let mut by_cost: Vec<usize> = (0..ctx.openable).collect();
    // Pre-packed boxes keep their box.
    for filled in boxes.iter_mut().filter(|f| f.box_type < ctx.openable) {
        let current = filled.cost(ctx);
        let mut slots: Vec<usize> = filled.units.iter().map(|u| u.slot).collect();
        slots.sort_unstable();
        // The least volume the units can take (a kind's volume is its
        // smallest shape's): a box of less cannot hold them.
        let volume: f64 = filled.units.iter().map(|u| ctx.kinds[u.kind].volume).sum();
        by_cost_at(&mut by_cost, filled.payload, ctx);
        for &b in &by_cost {
            if b == filled.box_type {
                continue;
            }
            let bk = &ctx.boxes[b];
            if bk.cost(bk.weight_tare + filled.payload) >= current {
                continue;
            }
            if !slots.iter().all(|s| ctx.holds[b][order[*s].kind]) {
                continue;
            }
            if volume > bk.volume * (1.0 + 1e-9) {
                continue;
            }
            let fill = fill_box(b, order, &slots, ctx, rule, false);
            if fill.units.len() == slots.len() {
                *filled = FilledBox {
                    box_type: b,
                    units: fill.units,
                    payload: fill.payload,
                };
                break;
            }
        }
    }
}

/// Why a unit fits no box type at all.
fn unfit_reason(k: usize, ctx: &Context<'_>) -> String {
    let (kind, boxes) = (&ctx.kinds[k], &ctx.boxes[..ctx.openable]);
    if boxes.is_empty() {
        return "no box types were given".to_string();
    }
    let fits_space = boxes.iter().any(|b| {
        kind.shapes
            .iter()
            .any(|(s, _)| (0..3).all(|a| s[a] <= b.dims[a]))
    });
    let allowed = |b: usize| kind.excluded_box_types.binary_search(&b).is_err();
    let fits_allowed = boxes.iter().enumerate().any(|(i, b)| {
        allowed(i)
            && kind
                .shapes
                .iter()
                .any(|(s, _)| (0..3).all(|a| s[a] <= b.dims[a]))
    });
    let light = boxes.iter().any(|b| kind.weight <= b.payload_max());
    if fits_space && !fits_allowed {
        "rules exclude this item from every box type large enough for it".to_string()
    } else if fits_space && light {
        "reservedSpace or propertyConstraints leave no box type room for this item".to_string()
    } else if fits_space {
        "item is heavier than any box type can carry".to_string()
    } else {
        "item is larger than every box type in every allowed orientation".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BoxTypeInput, ItemKindInput};

    #[test]
    fn types_go_by_cost_at_the_payload() {
        // Billed at the larger of gross and dimensional weight: the small box
        // is cheaper empty (5 + 10 against 0 + 20), the large one at payload
        // 5 (its dimensional weight 8 already pays the rate at 10).
        let rated = |side: f64, price: f64| {
            BoxKind::new(&BoxTypeInput {
                dimensions: [side; 3],
                weight_max: 0.0,
                weight_tare: 0.0,
                price: Some(price),
                rating: Some(crate::cost::Rating {
                    volume: side * side * side,
                    dim_factor: Some(1000.0),
                    rate: Some(crate::cost::Rate::Breakpoints {
                        weights: vec![1.0, 10.0],
                        rates: vec![10.0, 20.0],
                    }),
                }),
            })
        };
        let boxes = [rated(10.0, 5.0), rated(20.0, 0.0)];
        let kinds = [slab(1.0)];
        let ctx = crate::testkit::context(&kinds, &boxes, Goal::LowestCost);
        for (payload, expected) in [(0.0, [0, 1]), (5.0, [1, 0])] {
            let mut types = vec![0, 1];
            by_cost_at(&mut types, payload, &ctx);
            assert_eq!(types, expected, "payload {payload}");
        }
    }

    /// A cube-shaped box type at a fixed price.
    fn priced(side: f64, price: f64) -> BoxKind {
        BoxKind::new(&BoxTypeInput {
            dimensions: [side; 3],
            weight_max: 0.0,
            weight_tare: 0.0,
            price: Some(price),
            rating: None,
        })
    }

    fn slab(thickness: f64) -> Kind {
        Kind::new(&ItemKindInput {
            dimensions: [10.0, 10.0, thickness],
            weight: 0.0,
            quantity: 1,
            free_axes: Some(vec![]),
        })
    }

    #[test]
    fn an_item_sets_last_box_takes_it_whole_where_a_box_does() -> Result<(), String> {
        // Three unit cubes of one item set, at most one box for it: the free
        // one-cube box would leave two over; the 5-cube takes all three.
        let kinds = [crate::testkit::free_kind([1.0; 3], 0.0, 3)];
        let boxes = [priced(1.0, 0.0), priced(5.0, 10.0)];
        let order: Vec<UnitRef> = (0..3).map(|unit| UnitRef { kind: 0, unit }).collect();
        let mut ctx = crate::testkit::context(&kinds, &boxes, Goal::LowestCost);
        ctx.limits.boxes_per_item_set_max = Some(1);
        let packing = pack_order(&order, &ctx, Plan::BASE, &Deadline::after(None), true)
            .ok_or("no packing")?;
        assert!(packing.leftovers.is_empty(), "{:?}", packing.leftovers);
        assert_eq!(packing.boxes.len(), 1);
        assert_eq!(packing.boxes[0].box_type, 1);
        Ok(())
    }

    #[test]
    fn top_up_packs_leftovers_into_the_boxes_a_limit_still_allows() -> Result<(), String> {
        // Three 5-cubes, one to a 5-cube box: under boxesMax 1 two are left over.
        let kinds = [crate::testkit::free_kind([5.0; 3], 0.0, 3)];
        let boxes = [crate::testkit::cube_box(5.0)];
        let order: Vec<UnitRef> = (0..3).map(|unit| UnitRef { kind: 0, unit }).collect();
        let deadline = Deadline::after(None);
        let mut one = crate::testkit::context(&kinds, &boxes, Goal::LowestCost);
        one.limits.boxes_max = Some(1);
        let packing = pack_order(&order, &one, Plan::BASE, &deadline, true).ok_or("no packing")?;
        assert_eq!((packing.boxes.len(), packing.leftovers.len()), (1, 2));
        // At the limit nothing changes; with room for one more box one unit gets in.
        let same = top_up(packing.clone(), &order, &one, one.rule, &deadline);
        assert_eq!((same.boxes.len(), same.leftovers.len()), (1, 2));
        let mut two = crate::testkit::context(&kinds, &boxes, Goal::LowestCost);
        two.limits.boxes_max = Some(2);
        let topped = top_up(packing, &order, &two, two.rule, &deadline);
        assert_eq!((topped.boxes.len(), topped.leftovers.len()), (2, 1));
        assert_eq!(topped.leftovers[0].1, boxes_max_reason(2));
        assert_eq!(topped.cost, 250.0);
        Ok(())
    }

    #[test]
    fn best_fit_uses_the_gap_in_the_fuller_box() {
        // Slabs 6, 8, 2, 4 thick into 10-deep boxes. Filling one box at a
        // time puts 6+2 together and needs three boxes; best fit sends the 2
        // to the fuller box (8) and then 6+4 share one: two boxes.
        let kinds = vec![slab(6.0), slab(8.0), slab(2.0), slab(4.0)];
        let boxes = vec![crate::testkit::cube_box(10.0)];
        let ctx = crate::testkit::context(&kinds, &boxes, Goal::MostItems);
        let order: Vec<UnitRef> = (0..4).map(|kind| UnitRef { kind, unit: 0 }).collect();
        let deadline = Deadline::after(None);
        let count = |mode| {
            let plan = Plan {
                mode,
                merit: Merit::FirstPoint,
            };
            pack_order(&order, &ctx, plan, &deadline, true)
                .map(|p| (p.boxes.len(), p.leftovers.len()))
        };
        assert_eq!(count(Mode::Sequential), Some((3, 0)));
        assert_eq!(count(Mode::BestFit), Some((2, 0)));
    }

    /// Slab thicknesses in each box of a sequential pack of `slabs` (in order)
    /// into 10-cubes under `choice`.
    fn thicknesses(slabs: &[f64], choice: Choice) -> Vec<Vec<i64>> {
        let kinds: Vec<Kind> = slabs.iter().map(|t| slab(*t)).collect();
        let boxes = vec![crate::testkit::cube_box(10.0)];
        let mut ctx = crate::testkit::context(&kinds, &boxes, Goal::MostItems);
        ctx.choice = choice;
        let order: Vec<UnitRef> = (0..slabs.len())
            .map(|kind| UnitRef { kind, unit: 0 })
            .collect();
        let packing = pack_order(&order, &ctx, Plan::BASE, &Deadline::after(None), true);
        packing.map_or_else(Vec::new, |p| {
            p.boxes
                .iter()
                .map(|b| b.units.iter().map(|u| u.cuboid.size[2] / 10_000).collect())
                .collect()
        })
    }

    #[test]
    fn lookback_keeps_only_the_last_boxes_open() {
        let slabs = [8.0, 7.0, 6.0, 3.0, 2.0];
        let with = |lookback| Choice {
            lookback,
            ..Choice::default()
        };
        // Unlimited: each box takes every later slab that fits.
        assert_eq!(
            thicknesses(&slabs, with(None)),
            vec![vec![8, 2], vec![7, 3], vec![6]]
        );
        // 0: a box closes at the first slab it cannot take (next fit).
        assert_eq!(
            thicknesses(&slabs, with(Some(0))),
            vec![vec![8], vec![7], vec![6, 3], vec![2]]
        );
        // 1: the box before the current one stays open and takes the 2.
        assert_eq!(
            thicknesses(&slabs, with(Some(1))),
            vec![vec![8], vec![7, 2], vec![6, 3]]
        );
    }

    #[test]
    fn estimated_choice_trusts_usable_space_not_trial_fills() {
        // Three 6-cubes: a 10-cube holds one, a 6x6x18 box all three (volume 648).
        let cube = Kind::new(&ItemKindInput {
            dimensions: [6.0; 3],
            weight: 0.0,
            quantity: 3,
            free_axes: None,
        });
        let kinds = vec![cube];
        let long = BoxKind::new(&crate::model::BoxTypeInput {
            dimensions: [6.0, 6.0, 18.0],
            weight_max: 0.0,
            weight_tare: 0.0,
            price: None,
            rating: None,
        });
        let boxes = vec![crate::testkit::cube_box(10.0), long];
        let order: Vec<UnitRef> = (0..3).map(|unit| UnitRef { kind: 0, unit }).collect();
        let first_box = |style, usable_space| {
            let mut ctx = crate::testkit::context(&kinds, &boxes, Goal::LowestCost);
            ctx.choice = Choice {
                style,
                usable_space,
                ..Choice::default()
            };
            let all = [0, 1, 2];
            choose_box(&order, &all, &ctx, ctx.rule, None, false)
                .map(|t| (t.box_type, t.fill.units.len()))
        };
        assert_eq!(first_box(ChoiceStyle::Actual, 0.85), Some((1, 3)));
        // 0.85 x 648 holds two cubes, 0.85 x 1000 all three: the 10-cube is chosen.
        assert_eq!(first_box(ChoiceStyle::Estimated, 0.85), Some((0, 1)));
        assert_eq!(first_box(ChoiceStyle::Estimated, 1.0), Some((1, 3)));
    }

    /// Random case `case`: 1-5 kinds of 1-4 units, `types` box types priced,
    /// volume-costed or rated at random, a goal, and the units in kind order.
    fn random_case(
        rng: &mut crate::improve::Rng,
        case: usize,
        types: usize,
    ) -> (Vec<Kind>, Vec<BoxKind>, Goal, Vec<UnitRef>) {
        use crate::testkit::{random_box_type, random_kind};
        let quantity = |i: usize| 1 + (case + i) as u32 % 4;
        let kinds: Vec<Kind> = (0..1 + case % 5)
            .map(|i| random_kind(rng, i, quantity(i), 9.0))
            .collect();
        let boxes: Vec<BoxKind> = (0..types)
            .map(|i| random_box_type(rng, case, i, 16.0))
            .collect();
        let goal = if case % 3 == 0 {
            Goal::MostItems
        } else {
            Goal::LowestCost
        };
        let order: Vec<UnitRef> = (0..kinds.len())
            .flat_map(|kind| (0..quantity(kind)).map(move |unit| UnitRef { kind, unit }))
            .collect();
        (kinds, boxes, goal, order)
    }

    #[test]
    fn only_the_best_candidates_look_ahead() {
        // Random catalogues under lookahead 1: with at most
        // LOOKAHEAD_CANDIDATES trials the choice is the one every trial
        // looking ahead makes; with more, only the best that many by the
        // ranking without lookahead may win, and that changes some choices.
        let mut rng = crate::improve::Rng::new(11);
        let (mut small, mut changed) = (0, 0);
        for case in 0..120 {
            let (kinds, boxes, goal, order) = random_case(&mut rng, case, 4 + case % 37);
            let all: Vec<usize> = (0..order.len()).collect();
            let choose = |candidates| {
                let mut ctx = crate::testkit::context(&kinds, &boxes, goal);
                ctx.choice.lookahead_candidates = candidates;
                let (trials, _) = trial_fills(&order, &all, &ctx, ctx.rule, false, false);
                let made = trials.len();
                let best = choose_actual(&order, &all, &ctx, ctx.rule, None, false, 1)
                    .map(|t| (t.box_type, slots_of(&t.fill)));
                (best, made)
            };
            let ((capped, made), (every, _)) = (choose(LOOKAHEAD_CANDIDATES), choose(usize::MAX));
            if made <= LOOKAHEAD_CANDIDATES {
                assert_eq!(capped, every, "case {case}");
                small += 1;
            } else if capped != every {
                changed += 1;
            }
        }
        assert!(small > 0 && changed > 0, "{small} small, {changed} changed");
    }

    #[test]
    fn skipped_trials_never_change_the_choice() {
        // Random catalogues, priced, volume-costed and rated (tables that
        // fall with weight and negative slopes included), and random unit
        // sets: the choice with trials skipped is the choice with every
        // trial made, box type, units and projection alike.
        let mut rng = crate::improve::Rng::new(7);
        let mut skipped_any = false;
        for case in 0..1_000 {
            let (kinds, boxes, goal, order) = random_case(&mut rng, case, 2 + case % 7);
            let ctx = crate::testkit::context(&kinds, &boxes, goal);
            let mut remaining: Vec<usize> = (0..order.len()).collect();
            // Box by box, as a sequential pack does, until nothing is chosen.
            while !remaining.is_empty() {
                let rest = crate::choice::Rest {
                    order: &order,
                    remaining: &remaining,
                    rule: ctx.rule,
                    boxes_left: None,
                    stop: false,
                };
                let choose = |skipping| {
                    let (trials, volume) =
                        trial_fills(&order, &remaining, &ctx, ctx.rule, false, skipping);
                    let made = trials.len();
                    let best = best_trial(trials, volume, &rest, &ctx, 0)
                        .map(|t| (t.box_type, slots_of(&t.fill), t.cost, t.projected));
                    (best, made)
                };
                let ((all, every), (some, fewer)) = (choose(false), choose(true));
                assert_eq!(all, some, "case {case}");
                skipped_any |= fewer < every;
                let Some((_, placed, _, _)) = all else { break };
                remaining.retain(|s| placed.binary_search(s).is_err());
            }
        }
        assert!(
            skipped_any,
            "no case skipped a trial: the test proves nothing"
        );
    }

    #[test]
    fn downsize_moves_units_into_a_cheaper_box_they_fill_exactly() {
        // Two 5-thick slabs fill the 10-cube exactly; the 20-cube they sit in
        // costs more. Volume alone rules out nothing here.
        let boxes = [priced(20.0, 9.0), priced(9.0, 1.0), priced(10.0, 4.0)];
        let kinds = [slab(5.0)];
        let ctx = crate::testkit::context(&kinds, &boxes, Goal::LowestCost);
        let order: Vec<UnitRef> = (0..2).map(|unit| UnitRef { kind: 0, unit }).collect();
        let fill = fill_box(0, &order, &[0, 1], &ctx, ctx.rule, false);
        let mut packed = [FilledBox {
            box_type: 0,
            units: fill.units,
            payload: fill.payload,
        }];
        downsize(&mut packed, &order, &ctx, ctx.rule);
        assert_eq!(packed[0].box_type, 2);
        assert_eq!(packed[0].units.len(), 2);
    }

    #[test]
    fn a_box_type_that_ties_a_trial_that_took_everything_is_still_tried() {
        // Both boxes take the slab at the same price; the tie goes to the
        // smaller one (valueTiebreaker volume), tried after the larger.
        let boxes = [priced(20.0, 4.0), priced(10.0, 4.0)];
        let kinds = [slab(1.0)];
        let ctx = crate::testkit::context(&kinds, &boxes, Goal::LowestCost);
        let order = [UnitRef { kind: 0, unit: 0 }];
        let chosen = choose_actual(&order, &[0], &ctx, ctx.rule, None, false, 0);
        assert_eq!(chosen.map(|t| t.box_type), Some(1));
    }
}
