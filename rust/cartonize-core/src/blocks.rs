//! Block building for one box (container loading): the box is filled with
//! blocks, each a full grid of identical units of one kind in one rotation,
//! placed at the back-bottom corner of a free space; the rest of that space
//! is cut into three (guillotine cuts): above the block, beside it and in front
//! of it. The space above a block is exactly the block's flat top, and the
//! others keep the floor of the space they come from, so every unit rests
//! fully on the floor or on the units below it (full support for any
//! `allowableOverhang`).
//!
//! Which space comes next (wall building along the box's depth, or floor
//! layers), how the rest of a space is cut, and how blocks are scored vary
//! between constructions; with a time budget the search also draws blocks at
//! random among the best (GRASP, as in Parreño et al. 2008, "A maximal-space
//! algorithm for the container loading problem") and refills the back half of
//! the best loading. Everything is deterministic for a given request and
//! number of constructions.

use std::cmp::Ordering;

use crate::compare_packings;
use crate::deadline::Deadline;
use crate::fill::PlacedUnit;
use crate::geometry::{len_to_f64, Cuboid, Len, Vec3};
use crate::improve::Rng;
use crate::kinds::Kind;
use crate::limits::boxes_max_reason;
use crate::model::Goal;
use crate::select::{Context, FilledBox, Packing, UnitRef};

/// Weight comparisons allow this much rounding in the caller's sums.
const WEIGHT_SLACK: f64 = 1e-9;

/// Most constructions one request runs, with or without a time budget.
const MAX_CONSTRUCTIONS: usize = 20_000;

/// A free cuboid of the box whose floor is fully supported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Space {
    origin: Vec3,
    size: Vec3,
}

/// A grid of `counts` units of `kind` in its rotation `shape`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Block {
    kind: usize,
    shape: usize,
    counts: [Len; 3],
    size: Vec3,
    units: usize,
    score: f64,
}

/// Which free space is filled next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    /// Lowest along the depth axis, then height, then width: walls, back to front.
    Walls,
    /// Lowest in height, then depth, then width: floor layers.
    Layers,
}

/// How the rest of a space beside and in front of a block is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// The space in front of the block spans the whole width.
    FrontWide,
    /// The space beside the block spans the whole depth.
    SideDeep,
    /// Whichever of the two leaves the larger single space.
    Larger,
}

/// One way of building.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Params {
    next: Next,
    cut: Cut,
    /// The horizontal axis walls advance along (1 or 2).
    depth: usize,
    /// Penalty on slivers of space too thin for any unit (0 = pure volume).
    waste: f64,
    /// Merge free spaces that share a floor (see [`add_space`]).
    merge: bool,
    /// 0: the best block; otherwise a random one among those scoring within
    /// this share of the best-to-worst range of the best.
    spread: f64,
}

/// A loading: units placed, their volume and weight.
#[derive(Debug, Clone, Default)]
struct Loading {
    units: Vec<PlacedUnit>,
    /// Blocks in placement order, with how many units each placed.
    blocks: Vec<Block>,
    volume: f64,
    payload: f64,
}

/// A loading under way: units left per kind, free spaces, what is placed,
/// and the smallest extents of the units left (`None` when none is).
#[derive(Debug, Clone)]
struct State {
    left: Vec<usize>,
    spaces: Vec<Space>,
    loading: Loading,
    reach: Option<Vec3>,
}

/// The request's units of one box type, grouped by kind.
struct Builder<'c, 'a> {
    ctx: &'c Context<'a>,
    bounds: Vec3,
    /// Slots of each kind's units, in offer order.
    slots: Vec<Vec<usize>>,
    payload_max: f64,
}

/// True when block building respects every constraint the request sets for
/// box type `b`: no fragile kinds, exclusions, alternate dimensions, per-box
/// caps or item-set limits, which the builder does not track.
pub fn applies(ctx: &Context<'_>, b: usize) -> bool {
    let caps = &ctx.boxes[b].caps;
    let extra = &ctx.boxes[b].extra;
    let limits = &ctx.limits;
    // Box types only (never a pre-packed box), and none of the per-box rules
    // blocks do not track: reserved space, property sums, cohorts, interlock.
    b < ctx.openable
        && extra.reserved_space <= 0.0
        && extra.properties.is_empty()
        && extra.cohort_max.is_none()
        && !ctx.kinds.iter().any(|k| !k.interlocking.is_empty())
        && caps.items_max.is_none()
        && caps.item_sets_max.is_none()
        && caps.inline_max == [0; 3]
        && limits.boxes_per_item_set_max.is_none()
        && limits.boxes_per_sequence_max.is_none()
        && ctx
            .kinds
            .iter()
            .all(|k| k.fragile.is_none() && !k.keeps_apart() && !k.varied)
}

/// The fullest single box of type `b` block building finds for the units at
/// `slots` of `order`: deterministic constructions first, then, until
/// `until` (never without a time budget), random ones and refills of the
/// best. `None` when no unit fits.
pub fn fill_one_box(
    b: usize,
    order: &[UnitRef],
    slots: &[usize],
    ctx: &Context<'_>,
    until: Option<&Deadline>,
    seed: u64,
) -> Option<FilledBox> {
    let builder = Builder::new(b, order, slots, ctx);
    let mut best: Option<Loading> = None;
    let keep = |l: Loading, best: &mut Option<Loading>| {
        if best
            .as_ref()
            .is_none_or(|x| l.volume > x.volume * (1.0 + 1e-12))
        {
            *best = Some(l);
        }
    };
    let mut rng = Rng::new(seed);
    let mut variants = deterministic_params(&builder.bounds);
    // Many kinds make each step dear: fewer variants keep a request without
    // a time budget fast (the first ones are the likeliest winners).
    let shapes: usize = (0..ctx.kinds.len())
        .filter(|&k| !builder.slots[k].is_empty())
        .map(|k| ctx.kinds[k].shapes.len())
        .sum();
    variants.truncate(match shapes {
        0..=200 => variants.len(),
        201..=1_000 => 12,
        1_001..=5_000 => 4,
        _ => 1,
    });
    let mut ranked: Vec<(f64, Params)> = Vec::with_capacity(variants.len());
    for &params in &variants {
        if !ranked.is_empty() && until.is_some_and(Deadline::expired) {
            break;
        }
        let l = builder.construct(params, &[], &mut rng);
        ranked.push((l.volume, params));
        keep(l, &mut best);
    }
    let Some(until) = until else {
        return into_box(b, best);
    };
    // Lookahead on the variants that did best greedily, widening as time allows.
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (breadth, tops) in LOOKAHEAD {
        for &(_, params) in ranked.iter().take(tops) {
            if until.expired() {
                return into_box(b, best);
            }
            keep(
                builder.look_ahead(params, breadth, until, &mut rng),
                &mut best,
            );
        }
    }
    let mut runs = 0usize;
    while runs < MAX_CONSTRUCTIONS && !until.expired() {
        let base = ranked[runs % ranked.len().min(SEEDED_BASES)].1;
        let l = builder.seeded(base, runs, best.as_ref(), &mut rng);
        keep(l, &mut best);
        runs += 1;
    }
    into_box(b, best)
}

/// Seeded constructions cycle through this many of the best deterministic ones.
const SEEDED_BASES: usize = 8;

/// Seeded constructions that try to place every unit of a set in one box,
/// one construction per [`RandomFit::attempt`] (re-boxing's seeded attempts).
pub struct RandomFit<'c, 'a> {
    builder: Builder<'c, 'a>,
    bases: Vec<Params>,
    best: Option<Loading>,
    runs: usize,
    units: usize,
}

impl<'c, 'a> RandomFit<'c, 'a> {
    /// For the units at `slots` of `order` in a box of type `b`; `None`
    /// when some unit cannot enter that box type at all.
    pub fn new(b: usize, order: &[UnitRef], slots: &[usize], ctx: &'c Context<'a>) -> Option<Self> {
        let builder = Builder::new(b, order, slots, ctx);
        let units = builder.slots.iter().map(Vec::len).sum::<usize>();
        let mut bases = deterministic_params(&builder.bounds);
        bases.truncate(SEEDED_BASES);
        (units == slots.len()).then_some(RandomFit {
            builder,
            bases,
            best: None,
            runs: 0,
            units,
        })
    }

    /// One seeded construction (a random block among the best at each step,
    /// or every fourth time a refill of the back part of the fullest loading
    /// so far); the box when it places every unit.
    pub fn attempt(&mut self, b: usize, rng: &mut Rng) -> Option<FilledBox> {
        let base = self.bases[self.runs % self.bases.len()];
        let l = self
            .builder
            .seeded(base, self.runs, self.best.as_ref(), rng);
        self.runs += 1;
        if l.units.len() == self.units {
            return into_box(b, Some(l));
        }
        if self
            .best
            .as_ref()
            .is_none_or(|x| l.volume > x.volume * (1.0 + 1e-12))
        {
            self.best = Some(l);
        }
        None
    }
}

/// The first of the deterministic constructions that places every unit at
/// `slots` of `order` in one box of type `b` (re-boxing asks this); `None`
/// when none does.
pub fn fit_all(
    b: usize,
    order: &[UnitRef],
    slots: &[usize],
    ctx: &Context<'_>,
    seed: u64,
) -> Option<FilledBox> {
    let builder = Builder::new(b, order, slots, ctx);
    if builder.slots.iter().map(Vec::len).sum::<usize>() < slots.len() {
        return None;
    }
    let mut rng = Rng::new(seed);
    deterministic_params(&builder.bounds)
        .into_iter()
        .take(FIT_ALL_VARIANTS)
        .map(|params| builder.construct(params, &[], &mut rng))
        .find(|l| l.units.len() == slots.len())
        .and_then(|l| into_box(b, Some(l)))
}

/// Constructions [`fit_all`] tries: the first few variants find nearly all
/// complete loadings that any of them finds.
pub const FIT_ALL_VARIANTS: usize = 6;

/// Lookahead rounds under a time budget: (breadth, how many of the best
/// greedy variants get it).
const LOOKAHEAD: [(usize, usize); 3] = [(3, 4), (6, 2), (12, 1)];

/// The loading as a box of type `b`; `None` when it holds nothing.
fn into_box(b: usize, best: Option<Loading>) -> Option<FilledBox> {
    let best = best.filter(|l| !l.units.is_empty())?;
    Some(FilledBox {
        box_type: b,
        units: best.units,
        payload: best.payload,
    })
}

/// Under `boxesMax: 1`: the better of `packing` and the fullest box block
/// building finds for each box type (fewer leftovers, then the goal, then
/// more packed volume); the
/// units it leaves out keep their reason or become `boxesMax` leftovers.
pub fn improve_capped(
    packing: Packing,
    order: &[UnitRef],
    ctx: &Context<'_>,
    until: Option<&Deadline>,
    seed: u64,
) -> Packing {
    // Pre-packed boxes are kept as they are; blocks would replace them.
    if ctx.limits.boxes_max != Some(1) || packing.boxes.len() > 1 || ctx.openable < ctx.boxes.len()
    {
        return packing;
    }
    // Everything already fits one box: only a cheaper box type could do better.
    let single_measure = ctx.goal == Goal::MostItems || ctx.boxes.len() == 1;
    if packing.leftovers.is_empty() && single_measure {
        return packing;
    }
    let mut slots: Vec<usize> = packing
        .boxes
        .iter()
        .flat_map(|b| b.units.iter().map(|u| u.slot))
        .chain(packing.leftovers.iter().map(|(s, _)| *s))
        .collect();
    slots.sort_unstable();
    let mut best = packing;
    for b in (0..ctx.boxes.len()).filter(|&b| applies(ctx, b)) {
        let Some(filled) = fill_one_box(b, order, &slots, ctx, until, seed) else {
            continue;
        };
        let mut placed: Vec<usize> = filled.units.iter().map(|u| u.slot).collect();
        placed.sort_unstable();
        let leftovers = slots
            .iter()
            .filter(|s| placed.binary_search(s).is_err())
            .map(|&s| {
                let earlier = best.leftovers.iter().find(|(l, _)| *l == s);
                let reason = earlier.map_or_else(|| boxes_max_reason(1), |(_, r)| r.clone());
                (s, reason)
            })
            .collect();
        let candidate = Packing {
            cost: filled.cost(ctx),
            boxes: vec![filled],
            leftovers,
        };
        // On a tie the fuller box wins: it is what loading one box is for.
        let better = match compare_packings(&candidate, &best, ctx.goal) {
            Ordering::Less => true,
            Ordering::Equal => packed_volume(&candidate, ctx) > packed_volume(&best, ctx),
            Ordering::Greater => false,
        };
        if better {
            best = candidate;
        }
    }
    best
}

/// Item volume in the boxes of `packing`.
fn packed_volume(packing: &Packing, ctx: &Context<'_>) -> f64 {
    packing
        .boxes
        .iter()
        .flat_map(|b| b.units.iter())
        .map(|u| ctx.kinds[u.kind].volume)
        .sum()
}

/// The constructions every request tries, best first on typical loads.
fn deterministic_params(bounds: &Vec3) -> Vec<Params> {
    let deep = if bounds[2] >= bounds[1] { 2 } else { 1 };
    let mut out = Vec::new();
    for depth in [deep, 3 - deep] {
        for next in [Next::Walls, Next::Layers] {
            for cut in [Cut::FrontWide, Cut::Larger, Cut::SideDeep] {
                for waste in [1.0, 0.0] {
                    out.push(Params {
                        next,
                        cut,
                        depth,
                        waste,
                        merge: true,
                        spread: 0.0,
                    });
                }
            }
        }
    }
    out
}

impl<'c, 'a> Builder<'c, 'a> {
    fn new(b: usize, order: &[UnitRef], slots: &[usize], ctx: &'c Context<'a>) -> Self {
        let mut by_kind = vec![Vec::new(); ctx.kinds.len()];
        for &s in slots {
            let k = order[s].kind;
            if ctx.holds[b][k] {
                by_kind[k].push(s);
            }
        }
        Builder {
            ctx,
            bounds: ctx.boxes[b].dims,
            slots: by_kind,
            payload_max: ctx.boxes[b].payload_max(),
        }
    }

    /// An empty box with all units left.
    fn start(&self) -> State {
        let left: Vec<usize> = self.slots.iter().map(Vec::len).collect();
        let reach = min_reach(self.ctx.kinds, &left, &self.slots);
        State {
            left,
            spaces: vec![Space {
                origin: [0; 3],
                size: self.bounds,
            }],
            loading: Loading::default(),
            reach,
        }
    }

    /// The next space under `params` that some unit left could fit, taken
    /// out of `st` (spaces too small for every unit are dropped), with the
    /// smallest extents of the units left.
    fn next_space(&self, st: &mut State, params: Params) -> Option<(Space, Vec3)> {
        loop {
            let i = pick_space(&st.spaces, params)?;
            let space = st.spaces.swap_remove(i);
            let r = st.reach?;
            if (0..3).all(|a| space.size[a] >= r[a]) {
                return Some((space, r));
            }
        }
    }

    /// Places `block` in `space` and cuts the rest of the space.
    fn apply(&self, st: &mut State, block: &Block, space: &Space, params: Params) {
        self.place(block, space, &mut st.left, &mut st.loading);
        cut(space, block, params, &mut st.spaces);
        if st.left[block.kind] == 0 {
            st.reach = min_reach(self.ctx.kinds, &st.left, &self.slots);
        }
    }

    /// The `runs`-th seeded construction after `base`: a block drawn at
    /// random among the best at each step; every fourth run keeps a random
    /// number of the first blocks of `best` and builds the rest anew.
    fn seeded(&self, base: Params, runs: usize, best: Option<&Loading>, rng: &mut Rng) -> Loading {
        let spread = [0.05, 0.1, 0.2, 0.3, 0.5][rng.below(5)];
        let params = Params { spread, ..base };
        let prefix: Vec<Block> = match (best, runs % 4) {
            (Some(l), 0) if l.blocks.len() > 1 => {
                let keep_blocks = rng.below(l.blocks.len());
                l.blocks[..keep_blocks].to_vec()
            }
            _ => Vec::new(),
        };
        self.construct(params, &prefix, rng)
    }

    /// One loading: the blocks of `prefix` first (each in the space the
    /// rules pick, while it still fits), then blocks chosen under `params`.
    fn construct(&self, params: Params, prefix: &[Block], rng: &mut Rng) -> Loading {
        self.complete(self.start(), params, prefix, rng)
    }

    /// Completes `st` as [`Builder::construct`] does.
    fn complete(&self, mut st: State, params: Params, prefix: &[Block], rng: &mut Rng) -> Loading {
        let mut candidates: Vec<Block> = Vec::new();
        let mut forced = prefix.iter();
        while let Some((space, r)) = self.next_space(&mut st, params) {
            let weight_left = self.payload_max - st.loading.payload;
            let chosen = forced
                .next()
                .and_then(|f| self.refit(f, &space, &st.left, weight_left));
            let chosen = chosen.or_else(|| {
                self.candidates(&space, &st.left, weight_left, &r, params, &mut candidates);
                choose(&candidates, params.spread, rng)
            });
            if let Some(block) = chosen {
                self.apply(&mut st, &block, &space, params);
            }
        }
        st.loading
    }

    /// A loading built with lookahead: at each step the `breadth` best
    /// scoring blocks are each placed and the loading completed greedily; the
    /// block whose completion loads the most volume is placed (Fanslau &
    /// Bortfeldt's tree search in its simplest form). Returns the fullest
    /// loading seen, which may be one of the completions. After `until` the
    /// rest is greedy.
    fn look_ahead(
        &self,
        params: Params,
        breadth: usize,
        until: &Deadline,
        rng: &mut Rng,
    ) -> Loading {
        let greedy = Params {
            spread: 0.0,
            ..params
        };
        let mut st = self.start();
        let mut best = Loading::default();
        let mut candidates: Vec<Block> = Vec::new();
        while let Some((space, r)) = self.next_space(&mut st, params) {
            let weight_left = self.payload_max - st.loading.payload;
            self.candidates(&space, &st.left, weight_left, &r, params, &mut candidates);
            if candidates.is_empty() {
                continue;
            }
            candidates.sort_by(|a, b| b.score.total_cmp(&a.score));
            candidates.truncate(breadth);
            let mut chosen = candidates[0];
            if candidates.len() > 1 && !until.expired() {
                let mut most = f64::NEG_INFINITY;
                for c in &candidates {
                    if until.expired() {
                        break;
                    }
                    let mut trial = st.clone();
                    self.apply(&mut trial, c, &space, params);
                    let done = self.complete(trial, greedy, &[], rng);
                    if done.volume > most {
                        most = done.volume;
                        chosen = *c;
                    }
                    if done.volume > best.volume {
                        best = done;
                    }
                }
            }
            self.apply(&mut st, &chosen, &space, params);
        }
        if st.loading.volume > best.volume {
            best = st.loading;
        }
        best
    }

    /// `block` again, if it still fits `space` with the units and weight left.
    fn refit(
        &self,
        block: &Block,
        space: &Space,
        left: &[usize],
        weight_left: f64,
    ) -> Option<Block> {
        let fits = (0..3).all(|a| block.size[a] <= space.size[a]);
        let k = &self.ctx.kinds[block.kind];
        let heavy = k.weight * block.units as f64 > weight_left + WEIGHT_SLACK;
        (fits && block.units <= left[block.kind] && !heavy).then_some(*block)
    }

    /// The blocks that fit `space`: for every kind and rotation, the grids
    /// that fill the space greedily along each order of the axes.
    fn candidates(
        &self,
        space: &Space,
        left: &[usize],
        weight_left: f64,
        reach: &Vec3,
        params: Params,
        out: &mut Vec<Block>,
    ) {
        out.clear();
        for (kind, k) in self.ctx.kinds.iter().enumerate() {
            let mut n = left[kind];
            if n == 0 {
                continue;
            }
            if k.weight > 0.0 {
                let by_weight = ((weight_left + WEIGHT_SLACK) / k.weight).floor();
                n = n.min(by_weight.max(0.0) as usize);
            }
            if n == 0 {
                continue;
            }
            for (shape, (dims, _)) in k.shapes.iter().enumerate() {
                if (0..3).any(|a| dims[a] > space.size[a]) {
                    continue;
                }
                let most: [Len; 3] = std::array::from_fn(|a| space.size[a] / dims[a]);
                let first = out.len();
                for axes in AXIS_ORDERS {
                    let mut counts = [1 as Len; 3];
                    let mut budget = n as Len;
                    for a in axes {
                        counts[a] = most[a].min(budget).max(1);
                        budget /= counts[a];
                    }
                    if out[first..].iter().any(|b| b.counts == counts) {
                        continue;
                    }
                    let size: Vec3 = std::array::from_fn(|a| counts[a] * dims[a]);
                    let units = (counts[0] * counts[1] * counts[2]) as usize;
                    let score = score(k, units, &size, space, reach, params.waste);
                    out.push(Block {
                        kind,
                        shape,
                        counts,
                        size,
                        units,
                        score,
                    });
                }
            }
        }
    }

    /// Puts `block` at the back-bottom corner of `space`, bottom layer first.
    fn place(&self, block: &Block, space: &Space, left: &mut [usize], loading: &mut Loading) {
        let k = &self.ctx.kinds[block.kind];
        let (dims, perm) = k.shapes[block.shape];
        let slots = &self.slots[block.kind];
        for i in 0..block.counts[0] {
            for j in 0..block.counts[1] {
                for l in 0..block.counts[2] {
                    let used = slots.len() - left[block.kind];
                    left[block.kind] -= 1;
                    let step = [i, j, l];
                    loading.units.push(PlacedUnit {
                        slot: slots[used],
                        kind: block.kind,
                        cuboid: Cuboid {
                            origin: std::array::from_fn(|a| space.origin[a] + step[a] * dims[a]),
                            size: dims,
                        },
                        perm,
                    });
                }
            }
        }
        loading.volume += k.volume * block.units as f64;
        loading.payload += k.weight * block.units as f64;
        loading.blocks.push(*block);
    }
}

/// The six orders in which a block grows along the axes.
const AXIS_ORDERS: [[usize; 3]; 6] = [
    [0, 1, 2],
    [0, 2, 1],
    [1, 0, 2],
    [1, 2, 0],
    [2, 0, 1],
    [2, 1, 0],
];

/// A block's volume less, with weight `waste`, the slivers it leaves in its
/// space that no unit left could use.
fn score(k: &Kind, units: usize, size: &Vec3, space: &Space, reach: &Vec3, waste: f64) -> f64 {
    let volume = k.volume * units as f64;
    if waste == 0.0 {
        return volume;
    }
    let mut lost = 0.0;
    for a in 0..3 {
        let rest = space.size[a] - size[a];
        if rest > 0 && rest < reach[a] {
            let face: f64 = (0..3)
                .filter(|&b| b != a)
                .map(|b| len_to_f64(size[b]))
                .product();
            lost += len_to_f64(rest) * face;
        }
    }
    volume - waste * lost
}

/// The best block, or with `spread` a random one among the best.
fn choose(candidates: &[Block], spread: f64, rng: &mut Rng) -> Option<Block> {
    let best = candidates
        .iter()
        .fold(None::<&Block>, |b, c| match b {
            Some(b) if b.score >= c.score => Some(b),
            _ => Some(c),
        })
        .copied()?;
    if spread <= 0.0 {
        return Some(best);
    }
    let worst = candidates
        .iter()
        .map(|c| c.score)
        .fold(f64::INFINITY, f64::min);
    let bar = best.score - spread * (best.score - worst);
    let good: Vec<&Block> = candidates.iter().filter(|c| c.score >= bar).collect();
    Some(*good[rng.below(good.len())])
}

/// The smallest extent along each axis of any unit left; `None` when none is.
fn min_reach(kinds: &[Kind], left: &[usize], slots: &[Vec<usize>]) -> Option<Vec3> {
    let mut reach: Option<Vec3> = None;
    for (k, kind) in kinds.iter().enumerate() {
        if left[k] == 0 || slots[k].is_empty() {
            continue;
        }
        for (dims, _) in &kind.shapes {
            let r = reach.get_or_insert(*dims);
            for a in 0..3 {
                r[a] = r[a].min(dims[a]);
            }
        }
    }
    reach
}

/// Adds `space`, first merged (with `merge`) with every space that has the
/// same floor and height and shares a whole side face with it: the union of
/// two fully supported floors at one height is fully supported.
fn add_space(spaces: &mut Vec<Space>, mut space: Space, merge: bool) {
    while let Some(j) = spaces.iter().position(|o| merge && joinable(o, &space)) {
        let other = spaces.swap_remove(j);
        for a in 0..3 {
            let lo = other.origin[a].min(space.origin[a]);
            let hi = (other.origin[a] + other.size[a]).max(space.origin[a] + space.size[a]);
            space.origin[a] = lo;
            space.size[a] = hi - lo;
        }
    }
    spaces.push(space);
}

/// True when `a` and `b` share floor and height and meet face to face along
/// one horizontal axis with the same extent on the other.
fn joinable(a: &Space, b: &Space) -> bool {
    if a.origin[0] != b.origin[0] || a.size[0] != b.size[0] {
        return false;
    }
    (1..3).any(|ax| {
        let other = 3 - ax;
        let touch =
            a.origin[ax] + a.size[ax] == b.origin[ax] || b.origin[ax] + b.size[ax] == a.origin[ax];
        touch && a.origin[other] == b.origin[other] && a.size[other] == b.size[other]
    })
}

/// The index of the space to fill next under `params`.
fn pick_space(spaces: &[Space], params: Params) -> Option<usize> {
    let (d, w) = (params.depth, 3 - params.depth);
    (0..spaces.len()).min_by_key(|&i| {
        let o = &spaces[i].origin;
        match params.next {
            Next::Walls => (o[d], o[0], o[w], i),
            Next::Layers => (o[0], o[d], o[w], i),
        }
    })
}

/// Cuts what `block` leaves of `space` into the space above it, beside it
/// (across the width) and in front of it (along the depth).
fn cut(space: &Space, block: &Block, params: Params, spaces: &mut Vec<Space>) {
    let (d, w) = (params.depth, 3 - params.depth);
    let (o, s, b) = (space.origin, space.size, block.size);
    let mut push = |origin: Vec3, size: Vec3| {
        if size.iter().all(|&x| x > 0) {
            add_space(spaces, Space { origin, size }, params.merge);
        }
    };
    let mut above_origin = o;
    above_origin[0] += b[0];
    let mut above_size = b;
    above_size[0] = s[0] - b[0];
    push(above_origin, above_size);
    let area = |x: Len, y: Len| (x as f64) * (y as f64);
    let front_wide = match params.cut {
        Cut::FrontWide => true,
        Cut::SideDeep => false,
        Cut::Larger => {
            let wide = area(s[w], s[d] - b[d]).max(area(s[w] - b[w], b[d]));
            let deep = area(s[w] - b[w], s[d]).max(area(b[w], s[d] - b[d]));
            wide >= deep
        }
    };
    let mut side_origin = o;
    side_origin[w] += b[w];
    let mut side_size = s;
    side_size[w] = s[w] - b[w];
    let mut front_origin = o;
    front_origin[d] += b[d];
    let mut front_size = s;
    front_size[d] = s[d] - b[d];
    if front_wide {
        side_size[d] = b[d];
    } else {
        front_size[w] = b[w];
    }
    push(side_origin, side_size);
    push(front_origin, front_size);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Goal, ItemKindInput};
    use crate::support::is_supported;

    fn kind(d: [f64; 3], free_axes: Option<Vec<usize>>) -> Kind {
        Kind::new(&ItemKindInput {
            dimensions: d,
            weight: 1.0,
            quantity: 1,
            free_axes,
        })
    }

    fn check(filled: &FilledBox, bounds: Vec3) {
        let cuboids: Vec<Cuboid> = filled.units.iter().map(|u| u.cuboid).collect();
        for (i, c) in cuboids.iter().enumerate() {
            assert!((0..3).all(|a| c.origin[a] >= 0 && c.end(a) <= bounds[a]));
            assert!(
                cuboids[..i].iter().all(|o| !o.overlaps(c)),
                "overlap at {i}"
            );
            // Placement order is loading order: each unit rests on earlier ones.
            assert!(is_supported(c, &cuboids[..i], 0), "unsupported unit {i}");
        }
        let mut slots: Vec<usize> = filled.units.iter().map(|u| u.slot).collect();
        slots.sort_unstable();
        slots.dedup();
        assert_eq!(slots.len(), filled.units.len());
    }

    #[test]
    fn identical_units_fill_the_box_exactly() {
        // 4×5×5 units into a 20×10×10 box: 5 × 2 × 2 = 20 of the 30 offered.
        let kinds = vec![kind([4.0, 5.0, 5.0], Some(vec![]))];
        let boxes = vec![crate::kinds::BoxKind::new(&crate::model::BoxTypeInput {
            dimensions: [20.0, 10.0, 10.0],
            weight_max: 0.0,
            weight_tare: 0.0,
            price: None,
            rating: None,
        })];
        let ctx = crate::testkit::context(&kinds, &boxes, Goal::MostItems);
        let order: Vec<UnitRef> = (0..30).map(|unit| UnitRef { kind: 0, unit }).collect();
        let slots: Vec<usize> = (0..30).collect();
        let filled = fill_one_box(0, &order, &slots, &ctx, None, 1);
        let filled = filled.as_ref();
        assert_eq!(filled.map(|f| f.units.len()), Some(20));
        if let Some(f) = filled {
            check(f, boxes[0].dims);
        }
    }

    #[test]
    fn mixed_units_are_fully_supported_and_disjoint() {
        let mut rng = Rng::new(3);
        let kinds: Vec<Kind> = (0..6)
            .map(|i| {
                let side = |rng: &mut Rng, lo: usize, hi: usize| (lo + rng.below(hi - lo)) as f64;
                let d = [
                    side(&mut rng, 2, 8),
                    side(&mut rng, 3, 10),
                    side(&mut rng, 3, 12),
                ];
                kind(d, if i % 2 == 0 { None } else { Some(vec![0]) })
            })
            .collect();
        let boxes = vec![crate::kinds::BoxKind::new(&crate::model::BoxTypeInput {
            dimensions: [22.0, 23.0, 58.0],
            weight_max: 0.0,
            weight_tare: 0.0,
            price: None,
            rating: None,
        })];
        let ctx = crate::testkit::context(&kinds, &boxes, Goal::MostItems);
        let order: Vec<UnitRef> = (0..600)
            .map(|i| UnitRef {
                kind: i % 6,
                unit: (i / 6) as u32,
            })
            .collect();
        let slots: Vec<usize> = (0..600).collect();
        let until = Deadline::after(Some(0.05));
        let quick = fill_one_box(0, &order, &slots, &ctx, None, 1);
        let searched = fill_one_box(0, &order, &slots, &ctx, Some(&until), 1);
        let volume = |f: &Option<FilledBox>| {
            f.as_ref().map_or(0.0, |f| {
                f.units
                    .iter()
                    .map(|u| ctx.kinds[u.kind].volume)
                    .sum::<f64>()
            })
        };
        for f in [&quick, &searched].into_iter().flatten() {
            check(f, boxes[0].dims);
        }
        assert!(volume(&quick) > 0.8 * boxes[0].volume, "{}", volume(&quick));
        assert!(volume(&searched) >= volume(&quick));
        // Without a time budget the answer is the same every time.
        let again = fill_one_box(0, &order, &slots, &ctx, None, 1);
        assert_eq!(quick.map(|f| f.units), again.map(|f| f.units),);
    }
}

#[cfg(test)]
mod merge_tests {
    use super::*;

    #[test]
    fn spaces_on_one_floor_merge_across_a_shared_face() {
        let mut spaces = Vec::new();
        let s = |origin: Vec3, size: Vec3| Space { origin, size };
        add_space(&mut spaces, s([5, 0, 0], [5, 10, 4]), true);
        add_space(&mut spaces, s([5, 0, 4], [5, 10, 6]), true);
        assert_eq!(spaces, vec![s([5, 0, 0], [5, 10, 10])]);
        // Another floor height, or a face not shared whole: kept apart.
        add_space(&mut spaces, s([6, 0, 10], [4, 10, 3]), true);
        add_space(&mut spaces, s([5, 0, 10], [5, 9, 3]), true);
        assert_eq!(spaces.len(), 3);
    }
}

#[cfg(test)]
mod pack_tests {
    use crate::limits::Limits;
    use crate::model::{BoxTypeInput, Goal, ItemKindInput, Options, PackInput};

    #[test]
    fn boxes_max_one_loads_the_container_by_blocks() -> Result<(), crate::CoreError> {
        // Three kinds of one volume (so fewest leftovers is fullest box), more
        // than fits: 10×12×15, 8×15×15 (spin about x only), 6×12×25 (locked).
        let item =
            |dimensions: [f64; 3], quantity: u32, free_axes: Option<Vec<usize>>| ItemKindInput {
                dimensions,
                weight: 1.0,
                quantity,
                free_axes,
            };
        let input = PackInput {
            items: vec![
                item([10.0, 12.0, 15.0], 60, None),
                item([8.0, 15.0, 15.0], 60, Some(vec![0])),
                item([6.0, 12.0, 25.0], 80, Some(vec![])),
            ],
            box_types: vec![BoxTypeInput {
                dimensions: [40.0, 43.0, 107.0],
                weight_max: 0.0,
                weight_tare: 0.0,
                price: None,
                rating: None,
            }],
            options: Options {
                goal: Goal::MostItems,
                allowable_overhang: Some(0.0),
                limits: Limits {
                    boxes_max: Some(1),
                    ..Limits::default()
                },
                ..Options::default()
            },
            ..PackInput::default()
        };
        let out = crate::pack(&input)?;
        assert_eq!(out.boxes.len(), 1);
        let packed: f64 = out.boxes[0]
            .items
            .iter()
            .map(|p| p.dimensions.iter().product::<f64>())
            .sum();
        let utilisation = packed / (40.0 * 43.0 * 107.0);
        assert!(utilisation > 0.85, "{utilisation}");
        assert!(out.boxes[0]
            .items
            .iter()
            .all(|p| p.support.is_some_and(|s| s.share >= 1.0 - 1e-9)));
        assert_eq!(out.boxes[0].items.len() + out.leftovers.len(), 200);
        assert!(out
            .leftovers
            .iter()
            .all(|l| l.reason.starts_with("boxesMax 1")));
        Ok(())
    }
}
