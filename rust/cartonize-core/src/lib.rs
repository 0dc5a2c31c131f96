//! cartonize-core: the packing engine behind cartonize.
//!
//! Pure Rust, no Python: geometry value types ([`geometry`]), extreme-point
//! bookkeeping ([`extreme_points`]), placement into one box ([`fill`]), the
//! selection loop across box types ([`select`]), item orderings ([`sort`]),
//! the portfolio of strategies a request tries (`portfolio`), layers of
//! units chosen to fit for orders of many units ([`layers`]), ruin and
//! recreate under a timeout or for a fixed amount of work ([`improve`]),
//! re-boxing of the answer ([`rebox`]) and the engine's input/output
//! ([`model`]).

pub mod blocks;
pub mod bounds;
mod choice;
pub mod cost;
pub mod deadline;
pub mod error;
pub mod exact;
pub mod extreme_points;
pub mod fill;
pub mod fragile;
pub mod geometry;
pub mod improve;
pub mod kinds;
pub mod layers;
pub mod limits;
pub mod model;
mod orient;
pub mod orientation;
pub mod placing;
mod portfolio;
pub mod prepacked;
pub mod rebox;
pub mod select;
pub mod sort;
pub mod spaces;
pub mod subsets;
pub mod support;
pub mod tally;
#[cfg(test)]
mod testkit;
mod uncapped;

use std::cmp::Ordering;
use std::time::Instant;

pub use error::CoreError;
pub use model::{PackInput, PackOutput};

use deadline::Deadline;
use fill::{Merit, PlacementRule};
use geometry::len_to_f64;
use kinds::{BoxKind, Kind};
use model::{Goal, Leftover, PackedBox, Placement, SupportReport};
use select::{Context, Packing, UnitRef};
use sort::{cmp_f64, sort_name};

/// Largest overhang allowance that matters (caller's units); larger ones act as it.
const MAX_ALLOWANCE: f64 = 1e9;

/// Engine version, reported as `version` in responses.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Packs `input`: tries each item ordering the options ask for and returns the
/// best packing (fewest leftovers, then the goal), deterministically; each of
/// `box_type_subsets` is packed alone too, and wins when strictly better.
pub fn pack(input: &PackInput) -> Result<PackOutput, CoreError> {
    let started = Instant::now();
    check(input)?;
    let deadline = Deadline::after(input.options.timeout);
    let mut best = pack_box_types(input, started, &deadline)?;
    if !input.options.corners && !best.timed_out {
        // `corners: false` allows more positions, it does not require them:
        // the corner-point packing wins when it is strictly better.
        let mut cornered = input.clone();
        cornered.options.corners = true;
        keep_better(&mut best, cornered, input, started, &deadline)?;
    }
    if input.options.lookahead > 0 && !best.timed_out {
        // Looking ahead judges a box by the cost per unit of the boxes that
        // follow it, which can end dearer than choosing box by box (against
        // thousands of generated sizes: 9 boxes for 1600 where box by box
        // packed 4 for 1450). The answer without it wins when strictly better.
        let mut plain = input.clone();
        plain.options.lookahead = 0;
        keep_better(&mut best, plain, input, started, &deadline)?;
    }
    for keep in &input.box_type_subsets {
        if best.timed_out {
            break;
        }
        let Some(mut sub) = subsets::restrict(input, keep) else {
            continue;
        };
        // The subset gets what is left of the request's time, not a new budget.
        if let Some(t) = input.options.timeout {
            let left = t - started.elapsed().as_secs_f64();
            if left <= 0.0 {
                mark_timed_out(&mut best, &input.options);
                break;
            }
            sub.options.timeout = Some(left);
        }
        let mut out = match pack_box_types(&sub, Instant::now(), &deadline) {
            Err(CoreError::Timeout { .. }) => {
                mark_timed_out(&mut best, &input.options);
                break;
            }
            other => other?,
        };
        subsets::widen(&mut out, keep);
        if subsets::compare_outputs(&out, &best, input.options.goal) == Ordering::Less {
            best = out;
        }
    }
    best.pack_time = started.elapsed().as_secs_f64();
    Ok(best)
}

/// Packs `other` (`input` with one option changed) in what is left of the
/// request's time and keeps it in `best` when strictly better; running out
/// of time marks `best` as cut short.
fn keep_better(
    best: &mut PackOutput,
    mut other: PackInput,
    input: &PackInput,
    started: Instant,
    deadline: &Deadline,
) -> Result<(), CoreError> {
    if let Some(t) = input.options.timeout {
        other.options.timeout = Some((t - started.elapsed().as_secs_f64()).max(0.0));
    }
    match pack_box_types(&other, Instant::now(), deadline) {
        Ok(out) => {
            if subsets::compare_outputs(&out, best, input.options.goal) == Ordering::Less {
                *best = out;
            }
            Ok(())
        }
        Err(CoreError::Timeout { .. }) => {
            mark_timed_out(best, &input.options);
            Ok(())
        }
        Err(other) => Err(other),
    }
}

/// Records that the timeout cut the search short, with the warning, once.
fn mark_timed_out(out: &mut PackOutput, opts: &model::Options) {
    if !out.timed_out {
        out.timed_out = true;
        out.warnings.push(match opts.service_limit {
            None => "timeout reached: returning the best complete packing found so far".into(),
            Some(limit) => format!(
                "the service's time limit of {limit} s was reached: returning the best \
                 complete packing found so far"
            ),
        });
    }
}

/// [`pack`] with the input's own box types only; a small request under
/// box-count limits is packed without them first (`uncapped`).
fn pack_box_types(
    input: &PackInput,
    started: Instant,
    deadline: &Deadline,
) -> Result<PackOutput, CoreError> {
    let mut out = uncapped::pack_limited(input, started, deadline, pack_box_types_once)?;
    out.pack_time = started.elapsed().as_secs_f64();
    Ok(out)
}

/// [`pack_box_types`] under the input's limits as given.
fn pack_box_types_once(
    input: &PackInput,
    started: Instant,
    deadline: &Deadline,
) -> Result<PackOutput, CoreError> {
    let opts = &input.options;
    let limits = &opts.limits;
    let mut kinds: Vec<Kind> = input
        .items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let mut k = Kind::new(item);
            k.item_set = limits.item_set_of(i, input.items.len());
            k.sequence = limits.sequences.get(i).copied().flatten();
            k.amounts = limits.amounts.get(i).cloned().unwrap_or_default();
            k
        })
        .collect();
    kinds::apply_exclusions(&mut kinds, &input.exclusions);
    kinds::apply_fragile(&mut kinds, &input.fragile);
    kinds::apply_alternates(&mut kinds, &input.items, &input.alternates);
    orient::apply_lay_flat(&mut kinds, opts);
    let mut boxes: Vec<BoxKind> = input
        .box_types
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let mut bk = BoxKind::new(b);
            bk.caps = limits.box_caps.get(i).copied().unwrap_or_default();
            bk.extra = limits.box_extras.get(i).cloned().unwrap_or_default();
            bk
        })
        .collect();
    let openable = boxes.len();
    // Pre-packed boxes follow the box types; they are never opened anew.
    boxes.extend(input.boxes.iter().map(|p| {
        let mut bk = BoxKind::new(&p.box_type);
        bk.caps = p.caps;
        bk.extra = p.extra.clone();
        bk
    }));
    for bk in &mut boxes {
        bk.extra.cohort_max = opts.cohort_max.filter(|m| *m > 0);
    }
    let quantities: Vec<u32> = input.items.iter().map(|i| i.quantity).collect();
    let mut min_reach = [i64::MAX; 3];
    // Kinds to pack, and the kinds of pre-packed items the engine places.
    let mut placed: Vec<bool> = quantities.iter().map(|q| *q > 0).collect();
    for fixed in input.boxes.iter().flat_map(|p| &p.items) {
        if let Some(slot) = placed.get_mut(fixed.item) {
            *slot = true;
        }
    }
    for (k, _) in kinds.iter().zip(&placed).filter(|(_, p)| **p) {
        for (shape, _) in &k.shapes {
            for a in 0..3 {
                min_reach[a] = min_reach[a].min(shape[a]);
            }
        }
    }
    let rule = PlacementRule {
        priority: opts.coord_order,
        prefer_given: opts.orientation_preferred,
        min_reach,
        merit: Merit::FirstPoint,
        overhang: opts
            .allowable_overhang
            .filter(|a| *a >= 0.0)
            // Beyond any box side an allowance changes nothing; the cap keeps sums in range.
            .map(|a| geometry::len_floor(a.min(MAX_ALLOWANCE))),
        placing: placing::Placing::from_options(opts),
    };
    let total_units: u64 = quantities.iter().map(|q| u64::from(*q)).sum();
    if total_units == 0 && input.boxes.is_empty() {
        return Ok(PackOutput {
            item_sort_used: "none".to_string(),
            pack_time: started.elapsed().as_secs_f64(),
            ..PackOutput::default()
        });
    }
    // The requested orderings; unit orders depend on the kinds' sides, not
    // on which shape the orientation search pins first.
    let mut base = portfolio::base_strategies(opts, &kinds, &quantities, &boxes[..openable]);
    let fragile_limits: Vec<_> = kinds.iter().map(|k| k.fragile).collect();
    base.iter_mut()
        .for_each(|s| fragile::offer_last(&mut s.order, &fragile_limits));
    let work = total_units.saturating_mul(boxes.len() as u64);
    // The fixed-work search and re-boxing: small requests that choose
    // boxes by trial fills (`estimated` chooses by the caller's estimate).
    let polish =
        total_units <= POLISH_UNITS_MAX && opts.box_type_choice_style == model::ChoiceStyle::Actual;
    let reboxed = polish && opts.lookback.is_none() && input.boxes.is_empty();
    // Under `most-items` with one box type of fixed cost, a packing of
    // every unit at the lower bound cannot be beaten, not even in cost. The
    // request's own shapes count: re-boxing may turn units that the
    // orientation search pins.
    let fewest = match (opts.goal, &boxes[..]) {
        (Goal::MostItems, [only]) if only.rating.is_none() => {
            bounds::fixed_shapes(&kinds, &quantities).map(|s| bounds::box_count(&s, &only.dims))
        }
        _ => None,
    };
    // A one-box packing of every unit at the least cost any packing could
    // have cannot be beaten either, under either goal.
    let cheapest = match input.boxes.is_empty() {
        true => bounds::CostBound::new(&kinds, &quantities, &boxes[..openable]),
        false => None,
    };
    let unbeatable = |p: &select::Packing| {
        p.leftovers.is_empty()
            && (fewest.is_some_and(|f| p.boxes.len() <= f)
                || (p.boxes.len() == 1 && cheapest.as_ref().is_some_and(|c| c.is_least(p.cost))))
    };
    let pack_base = |ks: &[Kind], must_finish: bool| -> Result<portfolio::Found, CoreError> {
        let prepacked = prepacked::fixed_contents(&input.boxes, &boxes[openable..], ks, rule)?;
        let ctx = context(ks, &boxes, rule, opts, openable, prepacked);
        Ok(portfolio::run(
            &base,
            &ctx,
            deadline,
            work,
            must_finish,
            &unbeatable,
        ))
    };
    let first_order = base.first().map_or(&[][..], |s| &s.order[..]);
    // Extra strategies only pay off when several boxes are needed; a
    // one-box answer keeps the speed of the requested orderings.
    // Under a box limit a one-box answer with leftovers can improve too.
    let several_in = |found: &portfolio::Found| {
        found.best.as_ref().is_some_and(|(p, _)| {
            (p.boxes.len() > 1 || (limits.counts_boxes() && !p.leftovers.is_empty()))
                && !unbeatable(p)
        })
    };
    let boxes_in = |found: &portfolio::Found| found.best.as_ref().map_or(0, |(p, _)| p.boxes.len());
    // Layers built from units chosen to fit, for orders of many units.
    let layered = portfolio::Strategy::first_under(&base, select::Mode::Layers);
    let wants_layers = |found: &portfolio::Found, ctx: &select::Context<'_>| {
        several_in(found)
            && !deadline.expired()
            && layers::applies(ctx, &quantities, boxes_in(found))
    };
    // On large requests that may want them, the layers are packed on another
    // thread during the orientation search and the requested orderings (the
    // layers would otherwise run alone afterwards, one core idle). They use
    // the kinds as given: when the search pins some, or the layers are not
    // wanted after all, that packing is stopped and dropped.
    let ahead_ctx = match work > portfolio::PARALLEL_WORK && !deadline.expired() {
        true => prepacked::fixed_contents(&input.boxes, &boxes[openable..], &kinds, rule)
            .ok()
            .map(|prepacked| context(&kinds, &boxes, rule, opts, openable, prepacked))
            .filter(|ctx| layers::applies(ctx, &quantities, 0)),
        false => None,
    };
    let search = || orient::search(&kinds, first_order, opts, deadline, reboxed, &pack_base);
    let (searched, ahead) = match &ahead_ctx {
        Some(ahead_ctx) => portfolio::beside(
            |its_deadline: &Deadline| {
                let one = std::slice::from_ref(&layered);
                portfolio::run(one, ahead_ctx, its_deadline, 0, false, &unbeatable)
            },
            deadline,
            || {
                let searched = search().map(|mut searched| {
                    // Not searched: the kinds as given, packed here as below.
                    if searched.found.is_none() {
                        let found =
                            portfolio::run(&base, ahead_ctx, deadline, work, true, &unbeatable);
                        searched.found = Some(found);
                    }
                    searched
                });
                let wanted = searched.as_ref().is_ok_and(|s| {
                    s.kinds.is_none()
                        && s.found.as_ref().is_some_and(|f| wants_layers(f, ahead_ctx))
                });
                (searched, wanted)
            },
        ),
        None => (search(), None),
    };
    drop(ahead_ctx);
    let searched = searched?;
    if let Some(pinned) = searched.kinds {
        kinds = pinned;
    }
    let prepacked = prepacked::fixed_contents(&input.boxes, &boxes[openable..], &kinds, rule)?;
    let ctx = context(&kinds, &boxes, rule, opts, openable, prepacked);
    // The orientation search packed the requested orderings already.
    let mut found = match searched.found {
        Some(found) => found,
        None => portfolio::run(&base, &ctx, deadline, work, true, &unbeatable),
    };
    let mut strategies = base;
    let several = several_in(&found);
    // Strategies the deadline leaves untried cut the search short too.
    found.timed_out |= several && deadline.expired();
    let requested = strategies.len();
    if wants_layers(&found, &ctx) {
        // Packed ahead with the same kinds (none pinned), else here.
        match ahead {
            Some(packed) => {
                found.absorb(packed, strategies.len(), opts.goal);
                strategies.push(layered);
            }
            None => portfolio::run_more(
                layered,
                &mut strategies,
                &mut found,
                &ctx,
                deadline,
                &unbeatable,
            ),
        }
    }
    if several && !deadline.expired() {
        let mut extra = portfolio::extra_strategies(
            opts,
            &kinds,
            &quantities,
            &boxes[..openable],
            &strategies[..requested],
        );
        extra
            .iter_mut()
            .for_each(|s| fragile::offer_last(&mut s.order, &fragile_limits));
        // An extra that packs like a strategy already packed changes nothing.
        portfolio::drop_known(&mut extra, &strategies);
        let more = portfolio::run(&extra, &ctx, deadline, work, false, &unbeatable);
        found.absorb(more, strategies.len(), opts.goal);
        strategies.extend(extra);
    }
    if several && !deadline.expired() && spaces::applies(&ctx, total_units) {
        // Boxes filled over maximal spaces: other units share a box.
        let more = portfolio::Strategy::first_under(&strategies, select::Mode::Spaces);
        portfolio::run_more(
            more,
            &mut strategies,
            &mut found,
            &ctx,
            deadline,
            &unbeatable,
        );
    }
    let timed_out = found.timed_out;
    // The search after the portfolio on strategy `i`'s packing; a runner-up
    // is only re-boxed, with less work (`runner_up`).
    let polish_one = |packing: Packing, i: usize, runner_up: bool| {
        let s = &strategies[i];
        // Improvement reshuffles whole boxes and knows no box-count limits.
        let free = !limits.counts_boxes() && !ctx.order_bound();
        let wanted = opts.improve.unwrap_or(opts.timeout.is_some()) && free;
        let until = improvement_deadline(opts.timeout, started).filter(|_| wanted);
        let rule = PlacementRule {
            merit: s.plan.merit,
            ..ctx.rule
        };
        let seed = seed_of(input);
        let packing = match until {
            Some(until) => {
                improve::improve_on_all_cores(packing, &s.order, &ctx, rule, &until, seed)
            }
            // Without a time budget: a short search of fixed work, on small requests.
            None if free && polish && !unbeatable(&packing) && !runner_up => {
                let mut rng = improve::Rng::new(seed);
                let work = match fewest {
                    Some(_) => improve::BOUNDED_WORK,
                    None => improve::DEFAULT_WORK,
                };
                improve::improve(packing, &s.order, &ctx, rule, deadline, &mut rng, work)
            }
            None => packing,
        };
        // Under `boxesMax: 1` the box is loaded by block building as well.
        let capped_until = improvement_deadline(opts.timeout, started)
            .filter(|_| opts.improve.unwrap_or(opts.timeout.is_some()));
        let packing = blocks::improve_capped(packing, &s.order, &ctx, capped_until.as_ref(), seed);
        // A few units left over under `boxesMax: 1`: an exact search may fit them all.
        let packing = exact_one_box(packing, &s.order, &ctx, deadline);
        // Cheaper box types, merged and emptied boxes, which box-by-box choice misses.
        let packing = match reboxed && !unbeatable(&packing) {
            true => {
                let depth = opts.orientation_search_depth.min(orient::MAX_DEPTH) as usize;
                let work = match runner_up {
                    true => rebox::RUNNER_UP_WORK,
                    false => rebox::WORK,
                };
                let mut refit = rebox::Refitter::new(&ctx, &quantities, work, seed, depth);
                rebox::rebox(packing, &s.order, &ctx, &mut refit, deadline)
            }
            false => packing,
        };
        // A box that re-boxing emptied under boxesMax is room for what was left over.
        select::top_up(packing, &s.order, &ctx, rule, deadline)
    };
    // Re-boxing chooses cartons again for the boxes of one packing, and
    // which packing it starts from matters: a runner-up of about the best's
    // cost may re-box below it (the box-by-box choice of both was off).
    // Only where there are box types to choose between. A timed search
    // does it too (after improving the best), so a `timeout` never loses
    // what the default finds this way.
    let runner_up = found.runners_up.into_iter().next().filter(|(p, _)| {
        let close = found
            .best
            .as_ref()
            .is_some_and(|(b, _)| portfolio::close_to(p, b, opts.goal));
        several && reboxed && openable > 1 && close
    });
    let best = found
        .best
        .map(|(packing, i)| (polish_one(packing, i, false), i))
        .map(|best| match runner_up {
            Some((packing, i)) => {
                let other = (polish_one(packing, i, true), i);
                match compare_packings(&other.0, &best.0, opts.goal) {
                    Ordering::Less => other,
                    _ => best,
                }
            }
            None => best,
        })
        .map(|(packing, i)| {
            let s = &strategies[i];
            (packing, &s.order, s.sort, s.reverse)
        });
    let Some((mut packing, order, sort, reverse)) = best else {
        if let Some(timeout) = opts.timeout.filter(|_| deadline.hard_expired()) {
            let grace = deadline::grace(timeout);
            return Err(CoreError::Timeout {
                timeout,
                grace,
                service_limit: opts.service_limit,
            });
        }
        return Ok(PackOutput::default());
    };
    placing::restyle(&mut packing, &ctx);
    let mut out = render(&packing, order, &ctx);
    out.item_sort_used = sort_name(sort).to_string();
    out.item_sort_reverse_used = reverse;
    if let Some((left, total)) = searched.cut_short {
        let limit = match opts.service_limit {
            None => "timeout",
            Some(_) => "the service's time limit",
        };
        out.warnings.push(format!(
            "itemOrientationSearchDepth: {limit} reached after {} of {total} orientation \
             combinations",
            total - left
        ));
    }
    if timed_out {
        mark_timed_out(&mut out, opts);
    }
    out.pack_time = started.elapsed().as_secs_f64();
    Ok(out)
}

/// Under `boxesMax: 1`, a packing that leaves some of at most
/// [`exact::UNITS_MAX`] units over is replaced by a fit of them all into the
/// cheapest box type an exact search fills ([`exact`]), when there is one.
fn exact_one_box(
    packing: Packing,
    order: &[UnitRef],
    ctx: &Context<'_>,
    deadline: &Deadline,
) -> Packing {
    if ctx.limits.boxes_max != Some(1)
        || packing.leftovers.is_empty()
        || packing.boxes.len() > 1
        || ctx.openable < ctx.boxes.len()
        || order.len() > exact::UNITS_MAX
    {
        return packing;
    }
    let units: Vec<(usize, usize)> = order.iter().enumerate().map(|(s, u)| (s, u.kind)).collect();
    let payload: f64 = units.iter().map(|(_, k)| ctx.kinds[*k].weight).sum();
    let mut types: Vec<usize> = (0..ctx.openable)
        .filter(|&b| units.iter().all(|(_, k)| ctx.holds[b][*k]))
        .collect();
    select::by_cost_at(&mut types, payload, ctx);
    let mut budget = exact::PLACEMENTS;
    for b in types {
        let empty = fill::BoxFill::new(&ctx.boxes[b], ctx.rule);
        let Some(full) = exact::fit_all(&empty, &units, ctx.kinds, &mut budget, deadline) else {
            continue;
        };
        let boxes = vec![select::FilledBox {
            box_type: b,
            units: full.units,
            payload: full.payload,
        }];
        let candidate = Packing {
            cost: boxes.iter().map(|f| f.cost(ctx)).sum(),
            boxes,
            leftovers: Vec::new(),
        };
        return match compare_packings(&candidate, &packing, ctx.goal) {
            Ordering::Less => candidate,
            _ => packing,
        };
    }
    packing
}

/// The context every packing of the request shares, for `kinds` (the
/// orientation search pins shapes in copies of them).
fn context<'a>(
    kinds: &'a [Kind],
    boxes: &'a [BoxKind],
    rule: PlacementRule,
    opts: &model::Options,
    openable: usize,
    prepacked: prepacked::FixedContents,
) -> Context<'a> {
    let mut ctx = Context::new(kinds, boxes, rule, opts.goal, opts.value_tiebreaker);
    ctx.limits = opts.limits.clone();
    ctx.openable = openable;
    ctx.prepacked = prepacked;
    ctx.choice = select::Choice {
        style: opts.box_type_choice_style,
        usable_space: opts.usable_space,
        lookahead: opts.lookahead,
        lookback: opts.lookback,
        lookahead_candidates: select::LOOKAHEAD_CANDIDATES,
    };
    ctx
}

/// Requests of at most this many units get the fixed-work search and
/// re-boxing after the portfolio (larger ones keep the speed of the
/// portfolio alone: both are about a millisecond or two on small requests).
const POLISH_UNITS_MAX: u64 = 400;

/// Share of the request's `timeout` the improvement phase may use; the rest
/// is left for the orderings already run, re-boxing, rendering and the
/// service around (about 30 ms for 200 units under load).
const IMPROVE_SHARE: f64 = 0.8;

/// When improvement must stop, or `None` when the request has no timeout
/// (then there is no improvement phase) or its share is already spent.
fn improvement_deadline(timeout: Option<f64>, started: Instant) -> Option<Deadline> {
    let budget = timeout.filter(|t| t.is_finite() && *t > 0.0)? * IMPROVE_SHARE;
    let left = budget - started.elapsed().as_secs_f64();
    (left > 0.0).then(|| Deadline::after(Some(left)))
}

/// A seed that depends only on the input, so a search with a given amount of
/// time behaves the same on every run.
fn seed_of(input: &PackInput) -> u64 {
    // FNV-1a over the numbers that shape the packing.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut mix = |v: u64| {
        h ^= v;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    };
    for item in &input.items {
        item.dimensions.iter().for_each(|d| mix(d.to_bits()));
        mix(u64::from(item.quantity));
    }
    for b in &input.box_types {
        b.dimensions.iter().for_each(|d| mix(d.to_bits()));
    }
    h
}

/// Decodes a JSON [`PackInput`], packs it and encodes the [`PackOutput`].
pub fn pack_json(input: &str) -> Result<String, CoreError> {
    let parsed: PackInput = serde_json::from_str(input)?;
    let out = pack(&parsed)?;
    Ok(serde_json::to_string(&out)?)
}

/// Refuses input the engine cannot place; the Python layer reports these
/// earlier with the public field names, so this guards direct callers.
fn check(input: &PackInput) -> Result<(), CoreError> {
    let positive = |v: &[f64; 3]| v.iter().all(|x| x.is_finite() && *x > 0.0);
    for (i, item) in input.items.iter().enumerate() {
        if !positive(&item.dimensions) {
            return Err(invalid(
                format!("items[{i}].dimensions"),
                "every side must be > 0",
            ));
        }
        if !item.weight.is_finite() || item.weight < 0.0 {
            return Err(invalid(format!("items[{i}].weight"), "must be >= 0"));
        }
    }
    for (i, b) in input.box_types.iter().enumerate() {
        if !positive(&b.dimensions) {
            return Err(invalid(
                format!("boxTypes[{i}].dimensions"),
                "every side must be > 0",
            ));
        }
    }
    for (i, b) in input.boxes.iter().enumerate() {
        if !positive(&b.box_type.dimensions) {
            return Err(invalid(
                format!("boxes[{i}].dimensions"),
                "every side must be > 0",
            ));
        }
    }
    let mut axes = input.options.coord_order;
    axes.sort_unstable();
    if axes != [0, 1, 2] {
        return Err(invalid(
            "coordOrder".to_string(),
            "must be a permutation of 0, 1, 2",
        ));
    }
    Ok(())
}

fn invalid(field: String, message: &str) -> CoreError {
    CoreError::Invalid {
        field,
        message: message.to_string(),
    }
}

/// Units in kind order, each kind's units together.
pub(crate) fn expand(kind_order: &[usize], quantities: &[u32]) -> Vec<UnitRef> {
    kind_order
        .iter()
        .flat_map(|&k| (0..quantities[k]).map(move |unit| UnitRef { kind: k, unit }))
        .collect()
}

/// Fewer leftovers first; then the goal; then fewer boxes.
pub(crate) fn compare_packings(a: &Packing, b: &Packing, goal: Goal) -> Ordering {
    let left = a.leftovers.len().cmp(&b.leftovers.len());
    let cost = cmp_f64(a.cost, b.cost);
    let count = a.boxes.len().cmp(&b.boxes.len());
    match goal {
        Goal::LowestCost => left.then(cost).then(count),
        Goal::MostItems => left.then(count).then(cost),
    }
}

/// Turns a packing into the engine's output, in the caller's units.
fn render(packing: &Packing, order: &[UnitRef], ctx: &Context<'_>) -> PackOutput {
    let boxes = packing
        .boxes
        .iter()
        .map(|filled| {
            let bk = &ctx.boxes[filled.box_type];
            let mirror = ctx.rule.placing.anchor.resolve(bk.dims).mirror;
            let mut payload = 0.0;
            let mut previous = 0.0;
            let prepacked = filled.box_type.checked_sub(ctx.openable);
            let contents = prepacked
                .and_then(|i| ctx.prepacked.get(i))
                .map_or(&[][..], |c| &c[..]);
            let cuboids: Vec<_> = match ctx.rule.overhang {
                Some(_) => contents
                    .iter()
                    .map(|(c, _)| *c)
                    .chain(filled.units.iter().map(|u| u.cuboid))
                    .collect(),
                None => Vec::new(),
            };
            let fixed = contents
                .iter()
                .enumerate()
                .map(|(n, (c, kind))| {
                    payload += ctx.kinds[*kind].weight;
                    let cost = bk.cost(bk.weight_tare + payload);
                    let delta = cost - previous;
                    previous = cost;
                    Placement {
                        item: *kind,
                        unit: n as u32,
                        packed_index: 0,
                        origin: c.origin.map(len_to_f64),
                        dimensions: c.size.map(len_to_f64),
                        delta_cost: delta,
                        support: None,
                    }
                })
                .collect();
            let items = filled
                .units
                .iter()
                .map(|u| {
                    payload += ctx.kinds[u.kind].weight;
                    let cost = bk.cost(bk.weight_tare + payload);
                    let delta = cost - previous;
                    previous = cost;
                    Placement {
                        item: u.kind,
                        unit: order[u.slot].unit,
                        packed_index: u.slot,
                        origin: std::array::from_fn(|a| {
                            len_to_f64(match mirror[a] {
                                true => bk.dims[a] - u.cuboid.end(a),
                                false => u.cuboid.origin[a],
                            })
                        }),
                        dimensions: u.cuboid.size.map(len_to_f64),
                        delta_cost: delta,
                        support: ctx.rule.overhang.map(|_| {
                            let s = support::support_of(&u.cuboid, &cuboids);
                            SupportReport {
                                share: s.share,
                                on_floor: s.on_floor,
                                items: s.items,
                            }
                        }),
                    }
                })
                .collect();
            let rating = bk.rating.as_ref();
            PackedBox {
                box_type: prepacked.unwrap_or(filled.box_type),
                prepacked,
                fixed,
                cost: filled.cost(ctx),
                dimensional_weight: rating.and_then(|r| r.dimensional_weight()),
                dimensional_weight_used: rating
                    .is_some_and(|r| r.rating_weight(bk.weight_tare + filled.payload).1),
                items,
            }
        })
        .collect();
    let leftovers = packing
        .leftovers
        .iter()
        .map(|(slot, reason)| Leftover {
            item: order[*slot].kind,
            unit: order[*slot].unit,
            reason: reason.clone(),
        })
        .collect();
    PackOutput {
        boxes,
        leftovers,
        ..PackOutput::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::{BoxTypeInput, ItemKindInput, Options};

    /// 80 locked items of pseudo-random sides 2..=7 into 10-cubes.
    fn scattered(timeout: Option<f64>, improve: Option<bool>) -> PackInput {
        // Seed 2 is one where the orderings, layers, the short fixed-work
        // search and re-boxing need 9 boxes and 8 suffice.
        let mut rng = improve::Rng::new(2);
        let items = (0..80)
            .map(|_| ItemKindInput {
                dimensions: [0, 1, 2].map(|_| 2.0 + rng.below(6) as f64),
                weight: 0.0,
                quantity: 1,
                free_axes: Some(vec![]),
            })
            .collect();
        PackInput {
            items,
            box_types: vec![BoxTypeInput {
                dimensions: [10.0, 10.0, 10.0],
                weight_max: 0.0,
                weight_tare: 0.0,
                price: None,
                rating: None,
            }],
            options: Options {
                goal: Goal::MostItems,
                timeout,
                improve,
                ..Options::default()
            },
            ..PackInput::default()
        }
    }

    #[test]
    fn a_timeout_buys_improvement_unless_switched_off() -> Result<(), CoreError> {
        // A generous budget: the search stops at the volume bound (8) long before it
        // (0.5 s in a release build, about 5 s in the debug build `cargo test` makes;
        // 4 s was too little there under load).
        let plain = pack(&scattered(None, None))?.boxes.len();
        let improved = pack(&scattered(Some(30.0), None))?.boxes.len();
        let capped = pack(&scattered(Some(30.0), Some(false)))?.boxes.len();
        assert!(improved < plain);
        assert_eq!(capped, plain);
        Ok(())
    }

    #[test]
    fn the_service_limit_is_named_where_the_request_gave_no_timeout() -> Result<(), CoreError> {
        // A microsecond cuts the orderings short after the first packing.
        let own = pack(&scattered(Some(1e-6), Some(false)))?;
        let mut input = scattered(Some(1e-6), Some(false));
        input.options.service_limit = Some(1e-6);
        let service = pack(&input)?;
        assert!(own
            .warnings
            .iter()
            .any(|w| w.starts_with("timeout reached")));
        assert!(!service.warnings.iter().any(|w| w.contains("timeout")));
        assert!(service.warnings.iter().any(|w| w
            == "the service's time limit of 0.000001 s was reached: returning the best \
                complete packing found so far"));
        let refused = |service_limit| {
            CoreError::Timeout {
                timeout: 30.0,
                grace: 4.0,
                service_limit,
            }
            .to_string()
        };
        assert!(refused(None).ends_with("give a larger timeout or fewer items"));
        assert_eq!(
            refused(Some(30.0)),
            "no complete packing was found within the service's time limit of 30 s (and 4.0 s \
             of grace); send fewer items or box types"
        );
        Ok(())
    }
}
