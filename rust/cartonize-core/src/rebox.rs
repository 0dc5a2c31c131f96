//! Re-boxing a finished packing. The greedy box choice decides one box at a
//! time, so it misses answers such as two half-empty boxes that fit one
//! larger box for less, a box whose contents fit a cheaper type when placed
//! in another order, or two boxes that cost less with their units split
//! differently. Here each box, and each pair of boxes, is packed again into
//! the cheapest box types that take all its units: one box (re-boxed or
//! merged), or, for a pair, a cheaper type filled first and the rest fitted
//! into a second box; and a box is emptied into the others, each taking a
//! unit by being filled anew. A move is kept when it lowers the goal's
//! measure. Fits follow the request's orientation options as the fill of a
//! new box does: the extreme-point fill (as given first, or the flattest
//! shape at each point), the search over initial orientations only to the
//! requested depth without `itemInitialOrientationPreferred` (with it, only
//! over the turns of units too large for the box as given), and block
//! building, which turns units freely: for any units when the request lets
//! orientation be optimised (`itemInitialOrientationPreferred: false`), else
//! only for units that cannot turn.
//! Deterministic: the attempts depend only on the packing and a seed, their
//! work is counted in units offered, not in time.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use crate::deadline::Deadline;
use crate::fill::{BoxFill, BoxMemory, Merit, PlacementRule};
use crate::geometry::{len_to_f64, Vec3};
use crate::improve::Rng;
use crate::kinds::Kind;
use crate::model::{Goal, ItemSort};
use crate::select::{by_cost_at, fill_box, Context, FilledBox, Packing, UnitRef};
use crate::sort::{cmp_f64, order_kinds, order_kinds_extra, ExtraSort};

/// Units the attempts of one request may offer in all (an attempt offers
/// each of its units once); about a millisecond of work on small requests.
/// This is the budget for a catalogue of up to [`TYPES_PER_WORK`] box types.
pub const WORK: usize = 8_000;

/// The budget for re-boxing the portfolio's runner-up as well as its best
/// (a quarter: on the e-commerce orders a full one found little more and
/// made multi-box orders about 40 % slower).
pub const RUNNER_UP_WORK: usize = WORK / 4;

/// Box types one [`WORK`] budget serves: a request with more types to open
/// gets one budget per this many (rounded up). A box is re-fitted into the
/// types cheaper than it one by one, so with a large catalogue a fixed
/// budget was spent on cheap types that cannot hold the units before the
/// ones that can were tried (`bench.ecommerce --cartons 100`).
pub const TYPES_PER_WORK: usize = 32;

/// Seeded attempts [`Refitter::fit_all`] makes on one set of units once the
/// fixed attempts found no move at all.
const RANDOM_ATTEMPTS: usize = 48;

/// Seeded block constructions [`Refitter::fit_all`] makes after the
/// seeded extreme-point attempts, where block building applies.
const RANDOM_BLOCKS: usize = 24;

/// The seeded attempts get this fraction of the work of the fixed ones:
/// they rarely succeed, and mostly on what the fixed ones nearly fitted.
const SEEDED_SHARE: usize = 4;

/// Unit orders tried under both merits before anything else: as given, by
/// volume, by clustered height and area (the others rarely win first).
const FIXED_OFFERS: usize = 3;

/// Kinds that must turn in a box whose turns a fit tries in every
/// combination, with `itemInitialOrientationPreferred` ([`Refitter::fit_forced`]).
const FORCED_DEPTH: usize = 2;

/// A cost difference smaller than this is rounding, not a saving.
const SAVING_EPS: f64 = 1e-6;

/// How sets of units are fitted into one box, and the work left for it.
pub struct Refitter {
    /// Rank of each kind in each of a few kind orders; a unit order sorts by rank.
    ranks: Vec<Vec<usize>>,
    /// Units the fixed attempts may still offer.
    pub work_left: usize,
    /// Units the seeded attempts may still offer.
    pub random_left: usize,
    /// Only seeded attempts (the fixed ones already failed on these sets).
    thorough: bool,
    /// Kinds whose initial orientations are searched in each fit (the
    /// request's search depth; 0 when it prefers orientations as given).
    pin_depth: usize,
    rng: Rng,
    /// Plain attempts made so far (box type, merit, unit order) and what each
    /// gave. Re-boxing meets the same sets again after every move it applies
    /// (about half its plain attempts on small orders repeat one), and an
    /// attempt depends on nothing else: a refitter serves one context and one
    /// unit order. Repeats still count as work, so no answer changes.
    known: HashMap<(usize, Merit, Vec<usize>), Option<FilledBox>>,
    /// The lists of the last attempt's box, for the next attempt's.
    memory: BoxMemory,
}

impl Refitter {
    /// Kind orders by volume, clustered height and base area, base area,
    /// longest side and cross-section; `work` units to offer in all per
    /// [`TYPES_PER_WORK`] box types that may be opened; the
    /// orientation search depth `search_depth` (`itemOrientationSearchDepth`,
    /// acting only without `itemInitialOrientationPreferred`).
    pub fn new(
        ctx: &Context<'_>,
        quantities: &[u32],
        work: usize,
        seed: u64,
        search_depth: usize,
    ) -> Self {
        let boxes = &ctx.boxes[..ctx.openable];
        let axis = ctx.rule.priority[0];
        let orders = [
            order_kinds(ItemSort::Default, false, ctx.kinds, quantities, boxes),
            order_kinds_extra(ExtraSort::ClusteredHeightArea(10), axis, ctx.kinds, boxes),
            order_kinds_extra(ExtraSort::AreaHeight, axis, ctx.kinds, boxes),
            order_kinds(
                ItemSort::LongestDimension,
                false,
                ctx.kinds,
                quantities,
                boxes,
            ),
            order_kinds(
                ItemSort::LargestCrossSection,
                false,
                ctx.kinds,
                quantities,
                boxes,
            ),
        ];
        let ranks = orders
            .into_iter()
            .map(|mut order| {
                order.sort_by_key(|&k| offered_last(ctx, k));
                let mut rank = vec![0; order.len()];
                for (r, &k) in order.iter().enumerate() {
                    rank[k] = r;
                }
                rank
            })
            .collect();
        let work = work.saturating_mul(ctx.openable.div_ceil(TYPES_PER_WORK).max(1));
        Refitter {
            ranks,
            work_left: work,
            random_left: work / SEEDED_SHARE,
            thorough: false,
            pin_depth: if ctx.rule.prefer_given {
                0
            } else {
                search_depth
            },
            rng: Rng::new(seed),
            known: HashMap::new(),
            memory: BoxMemory::default(),
        }
    }

    /// Takes `units` from the work left; false (and nothing taken) when
    /// there is not that much.
    fn spend(&mut self, units: usize) -> bool {
        let left = match self.thorough {
            true => &mut self.random_left,
            false => &mut self.work_left,
        };
        let ok = *left >= units;
        if ok {
            *left -= units;
        }
        ok
    }

    /// True when the attempts of the current kind have work left.
    fn has_work(&self) -> bool {
        match self.thorough {
            true => self.random_left > 0,
            false => self.work_left > 0,
        }
    }

    /// `slots` in the given order, then sorted by each kind order.
    fn offers(&self, order: &[UnitRef], slots: &[usize]) -> Vec<Vec<usize>> {
        let mut offers = vec![slots.to_vec()];
        for rank in &self.ranks {
            let mut s = slots.to_vec();
            s.sort_by_key(|&slot| (rank[order[slot].kind], slot));
            if !offers.contains(&s) {
                offers.push(s);
            }
        }
        offers
    }

    /// [`attempt`] with the request's kinds and placement rule under `merit`,
    /// from what an earlier attempt of the same gave when there was one.
    fn attempt_plain(
        &mut self,
        b: usize,
        order: &[UnitRef],
        offer: &[usize],
        merit: Merit,
        ctx: &Context<'_>,
    ) -> Option<FilledBox> {
        let key = (b, merit, offer.to_vec());
        if let Some(known) = self.known.get(&key) {
            return known.clone();
        }
        let rule = PlacementRule { merit, ..ctx.rule };
        let done = attempt(&mut self.memory, b, order, offer, rule, ctx, ctx.kinds);
        self.known.insert(key, done.clone());
        done
    }

    /// Every unit at `slots` in one box of type `b`, or `None` when no
    /// attempt within the work left places them all. Attempts, cheapest
    /// first: extreme points for each unit order under both merits, the
    /// requested orientation search (units as given), the turns of units
    /// too large for the box as given, block building; then (once the fixed attempts found no move) seeded
    /// extreme-point variations and seeded block constructions.
    pub fn fit_all(
        &mut self,
        b: usize,
        order: &[UnitRef],
        slots: &[usize],
        ctx: &Context<'_>,
    ) -> Option<FilledBox> {
        if !could_hold(b, order, slots, ctx) {
            return None;
        }
        let offers = self.offers(order, slots);
        let mut present: Vec<usize> = slots.iter().map(|&s| order[s].kind).collect();
        present.sort_unstable();
        present.dedup();
        if self.thorough {
            return self.fit_seeded(b, order, slots, ctx, &offers, &present);
        }
        for offer in offers.iter().take(FIXED_OFFERS) {
            for merit in [Merit::FirstPoint, Merit::ResidualSpace] {
                if !self.spend(offer.len()) {
                    return None;
                }
                if let Some(done) = self.attempt_plain(b, order, offer, merit, ctx) {
                    return Some(done);
                }
            }
        }
        if let Some(done) = self.fit_pinned(b, order, &offers[0], ctx) {
            return Some(done);
        }
        if let Some(done) = self.fit_forced(b, order, &offers[0], ctx) {
            return Some(done);
        }
        let variants = crate::blocks::FIT_ALL_VARIANTS;
        if blocks_fit(ctx, b, slots.len(), &present) && self.spend(variants * slots.len()) {
            let seed = self.rng.below(usize::MAX) as u64;
            if let Some(done) = crate::blocks::fit_all(b, order, slots, ctx, seed) {
                return Some(done);
            }
        }
        None
    }

    /// The orientation search the request asks for, within one box: with
    /// `itemInitialOrientationPreferred: false` and search depth `d`, the
    /// first `d` kinds of `offer` that can turn get every combination of
    /// their initial orientations (each pinned: tried alone at every point
    /// first), as the search over whole packings does (`orient.rs`).
    fn fit_pinned(
        &mut self,
        b: usize,
        order: &[UnitRef],
        offer: &[usize],
        ctx: &Context<'_>,
    ) -> Option<FilledBox> {
        if self.pin_depth == 0 {
            return None;
        }
        let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
        for &s in offer {
            let k = order[s].kind;
            let shapes = ctx.kinds[k].shapes.len();
            if groups.len() < self.pin_depth && groups.iter().all(|g| g.0 != k) && shapes > 1 {
                groups.push((k, (0..shapes).collect()));
            }
        }
        self.fit_combinations(b, order, offer, ctx, &groups)
    }

    /// With `itemInitialOrientationPreferred` a unit turns only where it
    /// has no place as given; in a box too small for its given shape it
    /// always turns, and which turn is free: the flattest at each point
    /// (what a fill does) is not always the one that fits the rest. The
    /// first [`FORCED_DEPTH`] kinds of `offer` that must turn in box type
    /// `b` and have more than one turn that fits it get every combination
    /// of those turns (each pinned: tried alone at every point first).
    fn fit_forced(
        &mut self,
        b: usize,
        order: &[UnitRef],
        offer: &[usize],
        ctx: &Context<'_>,
    ) -> Option<FilledBox> {
        if !ctx.rule.prefer_given {
            return None;
        }
        let dims = ctx.boxes[b].dims;
        let fits = |shape: &Vec3| (0..3).all(|a| shape[a] <= dims[a]);
        let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
        for &s in offer {
            let k = order[s].kind;
            let kind = &ctx.kinds[k];
            if groups.len() == FORCED_DEPTH || groups.iter().any(|g| g.0 == k) || kind.varied {
                continue;
            }
            let turns: Vec<usize> = (1..kind.shapes.len())
                .filter(|&i| fits(&kind.shapes[i].0))
                .collect();
            if !fits(&kind.shapes[0].0) && turns.len() > 1 {
                groups.push((k, turns));
            }
        }
        self.fit_combinations(b, order, offer, ctx, &groups)
    }

    /// Fills box type `b` with `offer` once per combination of shapes of
    /// `groups` (a kind and the indices of its shapes to try), each shape
    /// pinned; the first fill that places every unit.
    fn fit_combinations(
        &mut self,
        b: usize,
        order: &[UnitRef],
        offer: &[usize],
        ctx: &Context<'_>,
        groups: &[(usize, Vec<usize>)],
    ) -> Option<FilledBox> {
        if groups.is_empty() {
            return None;
        }
        let mut choice = vec![0usize; groups.len()];
        let mut kinds: Vec<Kind> = ctx.kinds.to_vec();
        loop {
            if !self.spend(offer.len()) {
                return None;
            }
            for ((g, shapes), &c) in groups.iter().zip(&choice) {
                kinds[*g].clone_from(&ctx.kinds[*g]);
                kinds[*g].shapes[..=shapes[c]].rotate_right(1);
                kinds[*g].pinned = true;
            }
            if let Some(done) = attempt(&mut self.memory, b, order, offer, ctx.rule, ctx, &kinds) {
                return Some(done);
            }
            // Next combination, the last group fastest.
            let mut i = choice.len();
            loop {
                if i == 0 {
                    return None;
                }
                i -= 1;
                choice[i] += 1;
                if choice[i] < groups[i].1.len() {
                    break;
                }
                choice[i] = 0;
            }
        }
    }

    /// Seeded attempts: a fixed unit order with two kinds swapped, or all
    /// units shuffled (kinds interleaved), under a random point merit.
    fn fit_seeded(
        &mut self,
        b: usize,
        order: &[UnitRef],
        slots: &[usize],
        ctx: &Context<'_>,
        offers: &[Vec<usize>],
        present: &[usize],
    ) -> Option<FilledBox> {
        for _ in 0..RANDOM_ATTEMPTS {
            if !self.spend(slots.len()) {
                return None;
            }
            // A unit order of the fixed ones with two kinds swapped, some
            // kinds pinned to a random rotation that fits the box.
            let base = &offers[self.rng.below(offers.len())];
            let mut kind_order: Vec<usize> = Vec::with_capacity(present.len());
            for &s in base {
                if kind_order.last() != Some(&order[s].kind) {
                    kind_order.push(order[s].kind);
                }
            }
            if kind_order.len() > 1 && self.rng.below(2) == 0 {
                let (i, j) = (
                    self.rng.below(kind_order.len()),
                    self.rng.below(kind_order.len()),
                );
                kind_order.swap(i, j);
            }
            let mut offer: Vec<usize> = kind_order
                .iter()
                .flat_map(|&k| base.iter().copied().filter(move |&s| order[s].kind == k))
                .collect();
            if self.rng.below(3) == 0 {
                // Units of different kinds interleaved at random.
                for i in (1..offer.len()).rev() {
                    offer.swap(i, self.rng.below(i + 1));
                }
            }
            offer.sort_by_key(|&s| offered_last(ctx, order[s].kind));
            let merit = [Merit::FirstPoint, Merit::ResidualSpace][self.rng.below(2)];
            if let Some(done) = self.attempt_plain(b, order, &offer, merit, ctx) {
                return Some(done);
            }
        }
        // Then seeded block constructions, where blocks may turn the units.
        if !blocks_fit(ctx, b, slots.len(), present) {
            return None;
        }
        let mut blocks = crate::blocks::RandomFit::new(b, order, slots, ctx)?;
        for _ in 0..RANDOM_BLOCKS {
            if !self.spend(slots.len()) {
                return None;
            }
            if let Some(done) = blocks.attempt(b, &mut self.rng) {
                return Some(done);
            }
        }
        None
    }
}

/// True when block building may fit `units` units of the kinds `present`
/// into a box of type `b`. Blocks choose each unit's turn freely: that is
/// what `itemInitialOrientationPreferred: false` allows (orientation is
/// free to optimise), while the default places units as given where it
/// can, so then only units that cannot turn go into blocks. Blocks are
/// grids of like units: with about one unit per kind, units that cannot
/// turn only repeat what the extreme points tried.
fn blocks_fit(ctx: &Context<'_>, b: usize, units: usize, present: &[usize]) -> bool {
    let fixed = present.iter().all(|&k| ctx.kinds[k].shapes.len() == 1);
    let alike = units >= 2 * present.len();
    let allowed = match ctx.rule.prefer_given {
        true => fixed && alike,
        false => alike || !fixed,
    };
    allowed && crate::blocks::applies(ctx, b)
}

/// True when item sets or sequences may use only so many boxes: a split or
/// an emptied box could spread one over more boxes (a merge or a re-boxing
/// never does).
fn spread_bound(ctx: &Context<'_>) -> bool {
    ctx.limits.boxes_per_item_set_max.is_some() || ctx.limits.boxes_per_sequence_max.is_some()
}

/// True for fragile kinds offered after all others in every unit order
/// (their rule's `unrestrictedPlacement: false`).
fn offered_last(ctx: &Context<'_>, kind: usize) -> bool {
    ctx.kinds[kind].fragile.is_some_and(|f| f.offer_last)
}

/// The units at `offer`, in that order, into an empty box of type `b` under
/// `rule`, with the shapes of `kinds`; `None` at the first that does not fit.
/// The box is made in `memory`'s lists and gives them back.
fn attempt(
    memory: &mut BoxMemory,
    b: usize,
    order: &[UnitRef],
    offer: &[usize],
    rule: PlacementRule,
    ctx: &Context<'_>,
    kinds: &[Kind],
) -> Option<FilledBox> {
    let mut fill = BoxFill::with_memory(&ctx.boxes[b], rule, std::mem::take(memory));
    let placed_all = offer
        .iter()
        .all(|&slot| fill.try_add(slot, order[slot].kind, kinds));
    let done = placed_all.then(|| FilledBox {
        box_type: b,
        units: fill.units.clone(),
        payload: fill.payload,
    });
    *memory = fill.take_memory();
    done
}

/// Cheap necessary conditions for one box of type `b` to take every unit:
/// each fits it alone, their volume and weight are within its own; for
/// each axis, the units longer than half the box along it in every way they
/// can turn (no two of them can lie one above the other) have footprints
/// across that axis that together fit its cross-section; and at most one
/// unit is longer than half the box along every axis.
fn could_hold(b: usize, order: &[UnitRef], slots: &[usize], ctx: &Context<'_>) -> bool {
    Need::of(order, slots, ctx).within(b, ctx) && shapes_could_fit(b, order, slots, ctx)
}

/// The volume and weight of a set of units, which any box holding them
/// must have room for whatever its shape. Summed once per set: with
/// thousands of box types, summing them again for each type a set was
/// tried in was 88 % of a request's time.
struct Need {
    volume: f64,
    weight: f64,
}

impl Need {
    /// The units at `slots`, summed in that order.
    fn of(order: &[UnitRef], slots: &[usize], ctx: &Context<'_>) -> Self {
        let (mut volume, mut weight) = (0.0, 0.0);
        for &s in slots {
            let k = &ctx.kinds[order[s].kind];
            volume += k.volume;
            weight += k.weight;
        }
        Need { volume, weight }
    }

    /// Box type `b` has the volume and the payload for them.
    fn within(&self, b: usize, ctx: &Context<'_>) -> bool {
        let bk = &ctx.boxes[b];
        self.volume <= bk.volume * (1.0 + 1e-12) && self.weight <= bk.payload_max() * (1.0 + 1e-12)
    }
}

/// The conditions of [`could_hold`] that depend on the units' shapes.
fn shapes_could_fit(b: usize, order: &[UnitRef], slots: &[usize], ctx: &Context<'_>) -> bool {
    let bk = &ctx.boxes[b];
    let mut across = [0.0f64; 3];
    let mut huge = 0;
    for &s in slots {
        let kind = order[s].kind;
        if !ctx.holds[b][kind] {
            return false;
        }
        let k = &ctx.kinds[kind];
        for (a, sum) in across.iter_mut().enumerate() {
            *sum += least_long_footprint(k, &bk.dims, a);
        }
        huge += usize::from(more_than_half_always(k, &bk.dims));
    }
    let section = |a: usize| {
        let (u, v) = ((a + 1) % 3, (a + 2) % 3);
        len_to_f64(bk.dims[u]) * len_to_f64(bk.dims[v])
    };
    (0..3).all(|a| across[a] <= section(a) * (1.0 + 1e-12)) && huge <= 1
}

/// True when every turn of `k` that fits `dims` is longer than half of it
/// along every axis (two such units can never share the box).
fn more_than_half_always(k: &Kind, dims: &Vec3) -> bool {
    k.shapes
        .iter()
        .filter(|(s, _)| (0..3).all(|i| s[i] <= dims[i]))
        .all(|(s, _)| (0..3).all(|a| 2 * s[a] > dims[a]))
}

/// The smallest footprint across axis `a` of `k` turned to fit `dims` with
/// more than half of `dims[a]` along `a`; 0 when some turn that fits is at
/// most half as long (then it need not count).
fn least_long_footprint(k: &Kind, dims: &Vec3, a: usize) -> f64 {
    let (u, v) = ((a + 1) % 3, (a + 2) % 3);
    let mut least = f64::INFINITY;
    for (shape, _) in &k.shapes {
        if (0..3).any(|i| shape[i] > dims[i]) {
            continue;
        }
        if 2 * shape[a] <= dims[a] {
            return 0.0;
        }
        least = least.min(len_to_f64(shape[u]) * len_to_f64(shape[v]));
    }
    if least.is_finite() {
        least
    } else {
        0.0
    }
}

/// Box types that may be opened, cheapest empty first (then smaller, then
/// earlier): the order in which they are tried.
fn by_cost(ctx: &Context<'_>) -> Vec<usize> {
    let mut types: Vec<usize> = (0..ctx.openable).collect();
    types.sort_by(|&a, &b| {
        let (x, y) = (&ctx.boxes[a], &ctx.boxes[b]);
        cmp_f64(x.cost(x.weight_tare), y.cost(y.weight_tare))
            .then(cmp_f64(x.volume, y.volume))
            .then(a.cmp(&b))
    });
    types
}

/// One change to a packing: the boxes `from` replaced by `into`, in order;
/// with one box fewer the last of `from` is emptied.
struct Move {
    from: Vec<usize>,
    into: Vec<FilledBox>,
    saving: f64,
}

impl Move {
    /// The box this move empties, if any.
    fn removed(&self) -> Option<usize> {
        (self.into.len() < self.from.len())
            .then(|| self.from.last().copied())
            .flatten()
    }

    /// Better first: under `most-items` fewer boxes first, then the larger
    /// saving; under `lowest-cost` the larger saving, then fewer boxes.
    fn compare(&self, other: &Move, goal: Goal) -> Ordering {
        let fewer = (other.from.len() - other.into.len()).cmp(&(self.from.len() - self.into.len()));
        let saving = cmp_f64(other.saving, self.saving);
        match goal {
            Goal::MostItems => fewer.then(saving),
            Goal::LowestCost => saving.then(fewer),
        }
    }
}

/// What the boxes `from` hold: their units (slots, sorted), cost and payload.
struct Contents {
    slots: Vec<usize>,
    cost: f64,
    payload: f64,
}

impl Contents {
    fn of(from: &[usize], packing: &Packing, ctx: &Context<'_>) -> Self {
        let boxes = from.iter().map(|&i| &packing.boxes[i]);
        let mut slots: Vec<usize> = boxes
            .clone()
            .flat_map(|b| b.units.iter().map(|u| u.slot))
            .collect();
        slots.sort_unstable();
        Contents {
            slots,
            cost: boxes.clone().map(|b| b.cost(ctx)).sum(),
            payload: boxes.map(|b| b.payload).sum(),
        }
    }
}

/// The cheapest single box taking every unit of the boxes `from` for less
/// than they cost now (two boxes under `most-items`: at any cost).
fn into_one(
    from: &[usize],
    packing: &Packing,
    order: &[UnitRef],
    ctx: &Context<'_>,
    types: &[usize],
    refit: &mut Refitter,
) -> Option<Move> {
    let c = Contents::of(from, packing, ctx);
    let need = Need::of(order, &c.slots, ctx);
    let merging = from.len() > 1;
    // The first type that fits is kept: try them by cost at this payload,
    // only those that would pay and have the room (sorted after the filter:
    // with thousands of types, sorting them all for each set was a quarter
    // of the work, and the order of those kept is the same).
    let mut types: Vec<usize> = types
        .iter()
        .copied()
        .filter(|&b| {
            let bk = &ctx.boxes[b];
            let cost = bk.cost(bk.weight_tare + c.payload);
            let pays = c.cost - cost > SAVING_EPS || (merging && ctx.goal == Goal::MostItems);
            pays && (merging || b != packing.boxes[from[0]].box_type) && need.within(b, ctx)
        })
        .collect();
    by_cost_at(&mut types, c.payload, ctx);
    for &b in &types {
        if let Some(into) = refit.fit_all(b, order, &c.slots, ctx) {
            let saving = c.cost - into.cost(ctx);
            return Some(Move {
                from: from.to_vec(),
                into: vec![into],
                saving,
            });
        }
        if !refit.has_work() {
            break;
        }
    }
    None
}

/// The units of two boxes split differently: a box of a type cheaper than
/// the dearer of the two is filled first (units in the given and in volume
/// order), and the rest fitted into the cheapest box that takes it; kept
/// when the two cost less than now.
fn split_two(
    from: &[usize],
    packing: &Packing,
    order: &[UnitRef],
    ctx: &Context<'_>,
    types: &[usize],
    refit: &mut Refitter,
) -> Option<Move> {
    let c = Contents::of(from, packing, ctx);
    let empty_cost = |b: usize| ctx.boxes[b].cost(ctx.boxes[b].weight_tare);
    let dearest = from
        .iter()
        .map(|&i| packing.boxes[i].cost(ctx))
        .fold(0.0, f64::max);
    let offers: Vec<Vec<usize>> = refit.offers(order, &c.slots).into_iter().take(2).collect();
    let mut best: Option<Move> = None;
    for &t1 in types.iter().filter(|&&t| empty_cost(t) < dearest) {
        for offer in &offers {
            if !refit.spend(offer.len()) {
                return best;
            }
            let first = fill_box(t1, order, offer, ctx, ctx.rule, false);
            if first.is_empty() || first.units.len() == c.slots.len() {
                continue;
            }
            let cost1 = ctx.boxes[t1].cost(ctx.boxes[t1].weight_tare + first.payload);
            let mut placed: Vec<usize> = first.units.iter().map(|u| u.slot).collect();
            placed.sort_unstable();
            let rest: Vec<usize> = c
                .slots
                .iter()
                .copied()
                .filter(|s| placed.binary_search(s).is_err())
                .collect();
            let rest_payload = c.payload - first.payload;
            let target = best.as_ref().map_or(c.cost, |m| c.cost - m.saving);
            let need = Need::of(order, &rest, ctx);
            // Cheapest first, among the types that would pay and have the room.
            let mut seconds: Vec<usize> = types
                .iter()
                .copied()
                .filter(|&t2| {
                    let cost2 = ctx.boxes[t2].cost(ctx.boxes[t2].weight_tare + rest_payload);
                    cost1 + cost2 < target - SAVING_EPS && need.within(t2, ctx)
                })
                .collect();
            by_cost_at(&mut seconds, rest_payload, ctx);
            for &t2 in &seconds {
                if let Some(second) = refit.fit_all(t2, order, &rest, ctx) {
                    let one = FilledBox {
                        box_type: t1,
                        units: first.units.clone(),
                        payload: first.payload,
                    };
                    let saving = c.cost - (one.cost(ctx) + second.cost(ctx));
                    best = Some(Move {
                        from: from.to_vec(),
                        into: vec![one, second],
                        saving,
                    });
                    break;
                }
            }
        }
    }
    best
}

/// Box `e` emptied: each of its units, largest first, goes into another box
/// (the roomiest first), added where that box's extreme points allow or by
/// fitting the box's units and it anew into the same box type; kept when
/// every unit found a box and the boxes cost less than before (`most-items`:
/// a box fewer is always better). Re-fitting moves what is already packed,
/// which inserting into the other boxes as they are cannot.
fn empty_one(
    e: usize,
    packing: &Packing,
    order: &[UnitRef],
    ctx: &Context<'_>,
    refit: &mut Refitter,
) -> Option<Move> {
    let emptied = &packing.boxes[e];
    let mut units: Vec<usize> = emptied.units.iter().map(|u| u.slot).collect();
    let volume = |s: usize| ctx.kinds[order[s].kind].volume;
    units.sort_by(|&a, &b| cmp_f64(volume(b), volume(a)).then(a.cmp(&b)));
    // Boxes changed so far, by index, with their new contents.
    let mut changed: Vec<(usize, FilledBox)> = Vec::new();
    for slot in units {
        let kind = order[slot].kind;
        let k = &ctx.kinds[kind];
        let current = |i: usize, changed: &[(usize, FilledBox)]| -> FilledBox {
            changed
                .iter()
                .find(|(j, _)| *j == i)
                .map_or_else(|| packing.boxes[i].clone(), |(_, b)| b.clone())
        };
        let mut targets: Vec<(f64, usize)> = (0..packing.boxes.len())
            .filter(|&i| i != e && packing.boxes[i].box_type < ctx.openable)
            .filter(|&i| ctx.holds[packing.boxes[i].box_type][kind])
            .map(|i| {
                let b = current(i, &changed);
                let bk = &ctx.boxes[b.box_type];
                let used: f64 = b.units.iter().map(|u| ctx.kinds[u.kind].volume).sum();
                (bk.volume - used, i)
            })
            .filter(|(free, i)| {
                let b = &packing.boxes[*i];
                *free >= k.volume * (1.0 - 1e-12)
                    && b.payload + k.weight <= ctx.boxes[b.box_type].payload_max()
            })
            .collect();
        targets.sort_by(|a, b| cmp_f64(b.0, a.0).then(a.1.cmp(&b.1)));
        let mut placed = None;
        for &(_, i) in &targets {
            let b = current(i, &changed);
            let bk = &ctx.boxes[b.box_type];
            let mut slots: Vec<usize> = b.units.iter().map(|u| u.slot).collect();
            slots.push(slot);
            slots.sort_unstable();
            if !could_hold(b.box_type, order, &slots, ctx) {
                continue;
            }
            if !refit.spend(b.units.len() + 1) {
                return None;
            }
            let mut fill = BoxFill::rebuild(bk, ctx.rule, &b.units, ctx.kinds);
            if fill.try_add(slot, kind, ctx.kinds) {
                placed = Some((
                    i,
                    FilledBox {
                        box_type: b.box_type,
                        units: fill.units,
                        payload: fill.payload,
                    },
                ));
                break;
            }
            if let Some(again) = refit.fit_all(b.box_type, order, &slots, ctx) {
                placed = Some((i, again));
                break;
            }
        }
        let (i, b) = placed?;
        match changed.iter_mut().find(|(j, _)| *j == i) {
            Some(entry) => entry.1 = b,
            None => changed.push((i, b)),
        }
    }
    let before: f64 = emptied.cost(ctx)
        + changed
            .iter()
            .map(|(i, _)| packing.boxes[*i].cost(ctx))
            .sum::<f64>();
    let after: f64 = changed.iter().map(|(_, b)| b.cost(ctx)).sum();
    let saving = before - after;
    if ctx.goal == Goal::LowestCost && saving <= SAVING_EPS {
        return None;
    }
    let (mut from, into): (Vec<usize>, Vec<FilledBox>) = changed.into_iter().unzip();
    from.push(e);
    Some(Move { from, into, saving })
}

/// Applies the best re-boxing, merge or split until none pays, the work
/// budget is spent or `deadline` passes. Pre-packed boxes stay as they are.
pub fn rebox(
    mut packing: Packing,
    order: &[UnitRef],
    ctx: &Context<'_>,
    refit: &mut Refitter,
    deadline: &Deadline,
) -> Packing {
    let types = by_cost(ctx);
    // Sets of boxes where no move paid, for the fixed and for the seeded
    // attempts; they stay so until one of their boxes changes. Boxes that
    // could not be emptied stay so until any box changes.
    let mut futile: [HashSet<(usize, usize)>; 2] = [HashSet::new(), HashSet::new()];
    let mut stuck: Vec<usize> = Vec::new();
    // Cheap attempts first, then emptying a box, then the seeded attempts.
    'search: loop {
        for phase in 0..3 {
            if phase == 1 && spread_bound(ctx) {
                continue;
            }
            if deadline.expired() {
                break 'search;
            }
            refit.thorough = phase == 2;
            let found = match phase {
                1 => best_emptying(&packing, order, ctx, refit, &mut stuck, deadline),
                _ => best_of_all(
                    &packing,
                    order,
                    ctx,
                    &types,
                    refit,
                    &mut futile[phase / 2],
                    deadline,
                ),
            };
            if let Some(m) = found {
                for f in &mut futile {
                    forget(f, &m);
                }
                stuck.clear();
                apply(&mut packing, &m, ctx);
                continue 'search;
            }
        }
        break;
    }
    refit.thorough = false;
    packing
}

/// The first box, emptiest first, that [`empty_one`] can empty; boxes that
/// cannot join `stuck`.
fn best_emptying(
    packing: &Packing,
    order: &[UnitRef],
    ctx: &Context<'_>,
    refit: &mut Refitter,
    stuck: &mut Vec<usize>,
    deadline: &Deadline,
) -> Option<Move> {
    let fill = |i: usize| {
        let b = &packing.boxes[i];
        let used: f64 = b.units.iter().map(|u| ctx.kinds[u.kind].volume).sum();
        used / ctx.boxes[b.box_type].volume
    };
    let mut boxes: Vec<usize> = (0..packing.boxes.len())
        .filter(|&i| packing.boxes[i].box_type < ctx.openable && !stuck.contains(&i))
        .collect();
    boxes.sort_by(|&a, &b| cmp_f64(fill(a), fill(b)).then(a.cmp(&b)));
    for e in boxes {
        if deadline.expired() || !refit.has_work() {
            return None;
        }
        match empty_one(e, packing, order, ctx, refit) {
            Some(m) => return Some(m),
            None => stuck.push(e),
        }
    }
    None
}

/// The best move over every box and pair of boxes not known to be futile;
/// sets where nothing paid join `futile`.
fn best_of_all(
    packing: &Packing,
    order: &[UnitRef],
    ctx: &Context<'_>,
    types: &[usize],
    refit: &mut Refitter,
    futile: &mut HashSet<(usize, usize)>,
    deadline: &Deadline,
) -> Option<Move> {
    let movable: Vec<usize> = (0..packing.boxes.len())
        .filter(|&i| packing.boxes[i].box_type < ctx.openable)
        .collect();
    let mut sets: Vec<Vec<usize>> = movable.iter().map(|&i| vec![i]).collect();
    for (n, &i) in movable.iter().enumerate() {
        for &j in &movable[n + 1..] {
            sets.push(vec![i, j]);
        }
    }
    let mut best: Option<Move> = None;
    for from in sets {
        if deadline.expired() || !refit.has_work() {
            break;
        }
        let key = (from[0], from[from.len() - 1]);
        if futile.contains(&key) {
            continue;
        }
        let mut found = into_one(&from, packing, order, ctx, types, refit);
        let may_split = ctx.goal == Goal::LowestCost && !spread_bound(ctx);
        if found.is_none() && from.len() == 2 && may_split {
            found = split_two(&from, packing, order, ctx, types, refit);
        }
        match found {
            Some(m) => {
                if best
                    .as_ref()
                    .is_none_or(|b| m.compare(b, ctx.goal) == Ordering::Less)
                {
                    best = Some(m);
                }
            }
            None => {
                futile.insert(key);
            }
        }
    }
    best
}

/// Keeps in `futile` the sets (box pairs, a single box as a pair with
/// itself) `m` leaves unchanged, renumbered when it removes a box.
fn forget(futile: &mut HashSet<(usize, usize)>, m: &Move) {
    let changed = |i: usize| m.from.contains(&i);
    let shift = |i: usize| match m.removed() {
        Some(gone) if i > gone => i - 1,
        _ => i,
    };
    *futile = futile
        .iter()
        .filter(|(i, j)| !changed(*i) && !changed(*j))
        .map(|&(i, j)| (shift(i), shift(j)))
        .collect();
}

/// Replaces the boxes of `m.from` by `m.into`, in their places; with a box
/// fewer the last of `m.from` goes.
fn apply(packing: &mut Packing, m: &Move, ctx: &Context<'_>) {
    for (&i, b) in m.from.iter().zip(&m.into) {
        packing.boxes[i] = b.clone();
    }
    if let Some(gone) = m.removed() {
        packing.boxes.remove(gone);
    }
    packing.cost = packing.boxes.iter().map(|b| b.cost(ctx)).sum();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::BoxKind;
    use crate::model::{BoxTypeInput, ItemKindInput};

    fn kind(dims: [f64; 3], free: bool) -> Kind {
        Kind::new(&ItemKindInput {
            dimensions: dims,
            weight: 0.0,
            quantity: 1,
            free_axes: (!free).then(Vec::new),
        })
    }

    fn box_type(dims: [f64; 3], price: f64) -> BoxKind {
        BoxKind::new(&BoxTypeInput {
            dimensions: dims,
            weight_max: 0.0,
            weight_tare: 0.0,
            price: Some(price),
            rating: None,
        })
    }

    /// A packing with one box of `types[i]` per entry of `contents`, holding
    /// those slots (one unit per kind, slot = kind), placed in that order.
    fn packing(ctx: &Context<'_>, contents: &[(usize, Vec<usize>)]) -> Packing {
        let boxes: Vec<FilledBox> = contents
            .iter()
            .map(|(b, slots)| {
                let mut fill = BoxFill::new(&ctx.boxes[*b], ctx.rule);
                for &s in slots {
                    assert!(fill.try_add(s, s, ctx.kinds), "test packing must fit");
                }
                FilledBox {
                    box_type: *b,
                    units: fill.units,
                    payload: fill.payload,
                }
            })
            .collect();
        Packing {
            cost: boxes.iter().map(|b| b.cost(ctx)).sum(),
            boxes,
            leftovers: Vec::new(),
        }
    }

    /// Box types and sorted slots of each box after re-boxing `start`.
    fn reboxed(ctx: &Context<'_>, start: Packing) -> Vec<(usize, Vec<usize>)> {
        let order: Vec<UnitRef> = (0..ctx.kinds.len())
            .map(|kind| UnitRef { kind, unit: 0 })
            .collect();
        let mut refit = Refitter::new(ctx, &vec![1; ctx.kinds.len()], WORK, 7, 0);
        let never = Deadline::after(None);
        let done = rebox(start, &order, ctx, &mut refit, &never);
        let mut out: Vec<(usize, Vec<usize>)> = done
            .boxes
            .iter()
            .map(|b| {
                let mut slots: Vec<usize> = b.units.iter().map(|u| u.slot).collect();
                slots.sort_unstable();
                (b.box_type, slots)
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn moves_that_pay() {
        let cube = |s: f64| kind([s; 3], false);
        let slab = |t: f64| kind([10.0, 10.0, t], false);
        let bar = || kind([3.0, 2.0, 10.0], true);
        // (what, kinds, box types, goal, units turn freely, start, expected)
        type Case = (
            &'static str,
            Vec<Kind>,
            Vec<BoxKind>,
            Goal,
            bool,
            Vec<(usize, Vec<usize>)>,
            Vec<(usize, Vec<usize>)>,
        );
        let cases: Vec<Case> = vec![
            (
                "two small boxes merge into one larger, cheaper than both",
                vec![slab(5.0), slab(5.0)],
                vec![box_type([10.0, 10.0, 5.0], 10.0), box_type([10.0; 3], 15.0)],
                Goal::LowestCost,
                false,
                vec![(0, vec![0]), (0, vec![1])],
                vec![(1, vec![0, 1])],
            ),
            (
                // Lying as given (2 x 3 x 10) they fit the 2-high box, so they
                // are placed so where they fit: four go in, the fifth not.
                "five bars tile the cheaper 2-high box only all turned: lying as given, they stay",
                (0..5).map(|_| kind([2.0, 3.0, 10.0], true)).collect(),
                vec![
                    box_type([2.0, 10.0, 15.0], 1.0),
                    box_type([10.0, 10.0, 15.0], 5.0),
                ],
                Goal::LowestCost,
                false,
                vec![(1, vec![0, 1, 2, 3, 4])],
                vec![(1, vec![0, 1, 2, 3, 4])],
            ),
            (
                // Standing as given (3 high) they never fit the 2-high box, so
                // they turn there, and the fit tries each turn that fits
                // (the flattest at each point, 2 x 3 x 10, leaves slivers).
                "five bars tile the cheaper 2-high box only all turned: standing, they move",
                (0..5).map(|_| bar()).collect(),
                vec![
                    box_type([2.0, 10.0, 15.0], 1.0),
                    box_type([10.0, 10.0, 15.0], 5.0),
                ],
                Goal::LowestCost,
                false,
                vec![(1, vec![0, 1, 2, 3, 4])],
                vec![(0, vec![0, 1, 2, 3, 4])],
            ),
            (
                // Free to turn: block building turns them all.
                "five bars tile the cheaper 2-high box only all turned: turned, they move",
                (0..5).map(|_| bar()).collect(),
                vec![
                    box_type([2.0, 10.0, 15.0], 1.0),
                    box_type([10.0, 10.0, 15.0], 5.0),
                ],
                Goal::LowestCost,
                true,
                vec![(1, vec![0, 1, 2, 3, 4])],
                vec![(0, vec![0, 1, 2, 3, 4])],
            ),
            (
                "two boxes split anew: three cubes in the long box, one in the small",
                (0..4).map(|_| cube(5.0)).collect(),
                vec![box_type([5.0; 3], 3.0), box_type([5.0, 5.0, 15.0], 10.0)],
                Goal::LowestCost,
                false,
                vec![(1, vec![0, 1]), (1, vec![2, 3])],
                vec![(0, vec![0]), (1, vec![1, 2, 3])],
            ),
            (
                "a box emptied into two others when no two boxes merge",
                vec![slab(6.0), slab(6.0), slab(4.0), slab(4.0)],
                vec![box_type([10.0; 3], 1.0)],
                Goal::MostItems,
                false,
                vec![(0, vec![0]), (0, vec![1]), (0, vec![2, 3])],
                vec![(0, vec![0, 2]), (0, vec![1, 3])],
            ),
            (
                "nothing pays: each box is the cheapest for what it holds",
                vec![slab(6.0), slab(6.0)],
                vec![box_type([10.0; 3], 1.0)],
                Goal::MostItems,
                false,
                vec![(0, vec![0]), (0, vec![1])],
                vec![(0, vec![0]), (0, vec![1])],
            ),
        ];
        for (name, kinds, boxes, goal, turn_freely, start, expected) in cases {
            let mut ctx = crate::testkit::context(&kinds, &boxes, goal);
            ctx.rule.prefer_given = !turn_freely;
            let got = reboxed(&ctx, packing(&ctx, &start));
            assert_eq!(got, expected, "{name}");
        }
    }

    #[test]
    fn no_split_or_emptying_under_per_set_box_limits() {
        // The split of the table above, but item sets may use only so many
        // boxes: a split could spread one further, so the boxes stay.
        let kinds: Vec<Kind> = (0..4).map(|_| kind([5.0; 3], false)).collect();
        let boxes = vec![box_type([5.0; 3], 3.0), box_type([5.0, 5.0, 15.0], 10.0)];
        let mut ctx = crate::testkit::context(&kinds, &boxes, Goal::LowestCost);
        ctx.limits.boxes_per_item_set_max = Some(2);
        let start = vec![(1, vec![0, 1]), (1, vec![2, 3])];
        assert_eq!(reboxed(&ctx, packing(&ctx, &start)), start);
    }

    #[test]
    fn a_fit_turns_units_as_the_orientation_options_allow() {
        // Four 190 x 228 x 109 units fit a 250 x 250 x 400 box only all
        // turned 109 x 228 x 190 (two layers of two); without
        // itemInitialOrientationPreferred the flattest shape at the first
        // point is 109 x 190 x 228, which leaves room for two. The search to
        // depth 1 finds the turn; so does block building at depth 0 (it
        // turns freely); as given first, nothing turns them all.
        let kinds: Vec<Kind> = (0..4).map(|_| kind([190.0, 228.0, 109.0], true)).collect();
        let boxes = vec![box_type([250.0, 250.0, 400.0], 1.0)];
        let mut ctx = crate::testkit::context(&kinds, &boxes, Goal::LowestCost);
        ctx.rule.prefer_given = false;
        let order: Vec<UnitRef> = (0..4).map(|kind| UnitRef { kind, unit: 0 }).collect();
        let quantities = vec![1; 4];
        let fits = |ctx: &Context<'_>, depth: usize| {
            let mut refit = Refitter::new(ctx, &quantities, WORK, 7, depth);
            refit.fit_all(0, &order, &[0, 1, 2, 3], ctx).is_some()
        };
        assert!(fits(&ctx, 0));
        assert!(fits(&ctx, 1));
        ctx.rule.prefer_given = true;
        assert!(!fits(&ctx, 1));
    }

    #[test]
    fn a_known_attempt_gives_what_a_fresh_one_would() {
        // Random unit orders into two box types under both merits, many of
        // them repeated: each answer is the one a fresh attempt gives, and
        // the two merits do not share answers (they differ on some orders).
        let mut rng = Rng::new(11);
        let mut draw = |lo: f64, hi: f64| lo + (hi - lo) * rng.unit();
        let kinds: Vec<Kind> = (0..8)
            .map(|i| kind([draw(2.0, 7.0), draw(2.0, 7.0), draw(2.0, 7.0)], i % 2 == 0))
            .collect();
        let boxes = vec![
            box_type([10.0, 12.0, 9.0], 1.0),
            box_type([9.0, 9.0, 14.0], 2.0),
        ];
        let ctx = crate::testkit::context(&kinds, &boxes, Goal::LowestCost);
        let order: Vec<UnitRef> = (0..kinds.len())
            .map(|kind| UnitRef { kind, unit: 0 })
            .collect();
        let mut refit = Refitter::new(&ctx, &vec![1; kinds.len()], WORK, 7, 0);
        let mut pick = Rng::new(5);
        let mut merits_differ = false;
        for _ in 0..600 {
            let b = pick.below(2);
            let mut offer: Vec<usize> = (0..kinds.len()).filter(|_| pick.below(2) == 0).collect();
            // Few distinct orders, so that most of them repeat.
            if pick.below(2) == 0 {
                offer.reverse();
            }
            let fresh = |merit: Merit| {
                let rule = PlacementRule { merit, ..ctx.rule };
                let mut memory = BoxMemory::default();
                format!(
                    "{:?}",
                    attempt(&mut memory, b, &order, &offer, rule, &ctx, ctx.kinds)
                )
            };
            let (first, residual) = (fresh(Merit::FirstPoint), fresh(Merit::ResidualSpace));
            merits_differ |= first != residual;
            for (merit, expected) in [
                (Merit::FirstPoint, &first),
                (Merit::ResidualSpace, &residual),
            ] {
                let known = refit.attempt_plain(b, &order, &offer, merit, &ctx);
                assert_eq!(&format!("{known:?}"), expected, "{b} {offer:?} {merit:?}");
            }
        }
        assert!(
            merits_differ,
            "the merits never differ: the test proves nothing about them"
        );
        assert!(refit.known.len() < 1_200, "no attempt repeated");
    }

    #[test]
    fn necessary_conditions_refuse_what_cannot_fit() {
        // Two 6-cubes in a 10-cube: volume 432 of 1000 fits, but both are
        // longer than half the box along every axis.
        let kinds = vec![kind([6.0; 3], false), kind([6.0; 3], false)];
        let boxes = vec![box_type([10.0; 3], 1.0)];
        let ctx = crate::testkit::context(&kinds, &boxes, Goal::MostItems);
        let order: Vec<UnitRef> = (0..2).map(|kind| UnitRef { kind, unit: 0 }).collect();
        assert!(!could_hold(0, &order, &[0, 1], &ctx));
        assert!(could_hold(0, &order, &[0], &ctx));
    }
}
