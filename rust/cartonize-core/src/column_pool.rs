//! Set covering over a pool of single-box packings, between stretches of the
//! timed ruin-and-recreate chain (after ILS-SP, Subramanian, Uchoa & Ochi
//! 2013). Every box the chain builds is a column: a set of units with
//! placements already known to fit. The fewest columns covering every unit
//! are chosen by a Lagrangian heuristic (Caprara, Fischetti & Toth 1999);
//! a unit covered twice is taken out of all but one of its boxes, and the
//! chain restarts from the result.

use std::collections::HashMap;

use crate::deadline::Deadline;
use crate::fill::{BoxFill, PlacedUnit, PlacementRule};
use crate::improve::{
    better_of, chain, count_floor, open_boxes, reinsert, reorder, ChainBudget, Rng,
};
use crate::limits::BoxCaps;
use crate::model::Goal;
use crate::select::{Context, Packing, UnitRef};
use crate::sort::cmp_f64;

/// Iterations without a better box count after which a chain stretch ends
/// and the pool is solved.
const STRETCH_STALL: u32 = 3_000;

/// The pool is cut back to its [`POOL_KEEP`] fullest columns when it grows
/// past this.
const POOL_MAX: usize = 4_000;
const POOL_KEEP: usize = 3_000;

/// Subgradient iterations per covering, and how often the greedy cover
/// under the current multipliers is built.
const ITERATIONS: usize = 300;
const GREEDY_EVERY: usize = 10;

/// True when taking a unit out of a box can break no rule of the request,
/// so a covering turns into a valid packing: box count is the goal, no
/// support check, no per-box caps, property sums, cohorts, interlocking
/// layers, fragile units or exclusions. Orientation locks and weight
/// limits are kept by a subset of a valid box.
pub(crate) fn applies(ctx: &Context<'_>, rule: &PlacementRule) -> bool {
    ctx.goal == Goal::MostItems
        && rule.overhang.is_none()
        && !rule.placing.interlock
        && !ctx.limits.counts_boxes()
        && !ctx.order_bound()
        && ctx.boxes.iter().all(|b| {
            b.caps == BoxCaps::default()
                && b.extra.properties.is_empty()
                && b.extra.cohort_max.is_none()
        })
        && ctx
            .kinds
            .iter()
            .all(|k| k.fragile.is_none() && k.excludes.is_empty())
}

/// Alternates chain stretches and coverings of the pool until `until`;
/// returns the better of the result and `packing`. Requests where
/// [`applies`] fails get the plain chain.
pub fn improve_with_pool(
    packing: Packing,
    order: &[UnitRef],
    ctx: &Context<'_>,
    rule: PlacementRule,
    until: &Deadline,
    rng: &mut Rng,
) -> Packing {
    if packing.boxes.len() < 2 || !applies(ctx, &rule) {
        return crate::improve::improve(packing, order, ctx, rule, until, rng, usize::MAX);
    }
    let mut best = open_boxes(&packing, ctx, rule);
    let floor = count_floor(&best, ctx);
    let box_type = best[0].0;
    let mut pool = Pool::default();
    let mut budget = ChainBudget {
        work: usize::MAX,
        stall: crate::improve::STALL_LIMIT,
    };
    let mut by_volume: Vec<usize> = best
        .iter()
        .flat_map(|(_, f)| f.units.iter().map(|u| u.slot))
        .collect();
    by_volume.sort_by(|&a, &b| {
        cmp_f64(
            ctx.kinds[order[b].kind].volume,
            ctx.kinds[order[a].kind].volume,
        )
        .then(a.cmp(&b))
    });
    let grow = Extender {
        ctx,
        order,
        by_volume,
    };
    let mut restart_from_best = true;
    loop {
        let start = match restart_from_best {
            true => best.clone(),
            false => fresh(&best, box_type, order, ctx, rule, rng),
        };
        let first = budget.stall == crate::improve::STALL_LIMIT;
        let mut record = |boxes: &[(usize, BoxFill<'_>)], changed: &[usize]| {
            if first {
                return;
            }
            for &i in changed {
                pool.add(boxes[i].0, &boxes[i].1, &grow);
            }
        };
        let end = chain(start, order, ctx, rule, until, rng, budget, &mut record);
        budget.stall = STRETCH_STALL;
        if end.len() < best.len() {
            best = end;
        } else if !restart_from_best {
            for (b, f) in &end {
                pool.add(*b, f, &grow);
            }
        }
        if until.expired() || best.len() <= floor {
            break;
        }
        pool.trim();
        let current: Vec<usize> = best.iter().map(|(b, f)| pool.add(*b, f, &grow)).collect();
        let before = current.len();
        if let Some(path) = std::env::var_os("POOL_DUMP") {
            use std::io::Write;
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
            {
                let cols: Vec<String> = pool
                    .columns
                    .iter()
                    .map(|c| format!("{:?}", c.slots))
                    .collect();
                let _ = writeln!(
                    f,
                    "{{\"current\": {}, \"cols\": [{}]}}",
                    current.len(),
                    cols.join(",")
                );
            }
        }
        let chosen = cover(&pool, order.len(), current, until);
        if std::env::var_os("POOL_DEBUG").is_some() {
            eprintln!(
                "cover: pool {} current {} -> {}",
                pool.columns.len(),
                before,
                chosen.len()
            );
        }
        restart_from_best = chosen.len() < before;
        if restart_from_best {
            best = pool.boxes(&chosen, order.len(), ctx, rule);
        }
    }
    better_of(best, packing, order, ctx, rule)
}

/// A new packing of `best`'s units from scratch: best-fit in a jittered
/// volume order, for a chain stretch away from where the others went.
fn fresh<'a>(
    best: &[(usize, BoxFill<'a>)],
    box_type: usize,
    order: &[UnitRef],
    ctx: &Context<'a>,
    rule: PlacementRule,
    rng: &mut Rng,
) -> Vec<(usize, BoxFill<'a>)> {
    let mut slots: Vec<usize> = best
        .iter()
        .flat_map(|(_, f)| f.units.iter().map(|u| u.slot))
        .collect();
    reorder(&mut slots, order, ctx, rng);
    let mut open = Vec::new();
    let mut backups = Vec::new();
    let complete = reinsert(
        &mut open,
        0,
        &mut backups,
        (order, &slots),
        Some(box_type),
        ctx,
        rule,
    );
    match complete {
        true => open,
        false => best.to_vec(),
    }
}

/// One column: a box type and units placed in it.
struct Column {
    box_type: usize,
    units: Vec<PlacedUnit>,
    /// Item volume over box volume.
    fill: f64,
    /// The units' slots, sorted.
    slots: Vec<usize>,
}

/// Distinct columns, each unit set once.
#[derive(Default)]
struct Pool {
    columns: Vec<Column>,
    index: HashMap<(usize, Vec<usize>), usize>,
    /// Unit sets as the chain built them, to the column they grew into.
    raw: HashMap<(usize, Vec<usize>), usize>,
}

/// Grows a box into a maximal column: every other unit that still fits,
/// largest first. Covering needs a unit in one column only, so a column
/// that holds more covers more at the same cost.
struct Extender<'c, 'a> {
    ctx: &'c Context<'a>,
    order: &'c [UnitRef],
    by_volume: Vec<usize>,
}

impl<'a> Extender<'_, 'a> {
    fn extend(&self, fill: &BoxFill<'a>) -> BoxFill<'a> {
        let mut f = fill.clone();
        for &slot in &self.by_volume {
            let kind = self.order[slot].kind;
            if self.ctx.kinds[kind].volume > f.box_kind.volume - f.volume_used()
                || f.units.iter().any(|u| u.slot == slot)
            {
                continue;
            }
            f.try_add(slot, kind, self.ctx.kinds);
        }
        f
    }
}

fn key_of(box_type: usize, fill: &BoxFill<'_>) -> (usize, Vec<usize>) {
    let mut slots: Vec<usize> = fill.units.iter().map(|u| u.slot).collect();
    slots.sort_unstable();
    (box_type, slots)
}

impl Pool {
    /// Adds a box grown by `grow` (unless pooled already) and returns its column.
    fn add<'a>(&mut self, box_type: usize, fill: &BoxFill<'a>, grow: &Extender<'_, 'a>) -> usize {
        let raw = key_of(box_type, fill);
        if let Some(&i) = self.raw.get(&raw) {
            return i;
        }
        let grown = grow.extend(fill);
        let key = key_of(box_type, &grown);
        let i = match self.index.get(&key) {
            Some(&i) => i,
            None => {
                let i = self.columns.len();
                self.columns.push(Column {
                    box_type,
                    units: grown.units.clone(),
                    fill: grown.volume_used() / grown.box_kind.volume.max(f64::MIN_POSITIVE),
                    slots: key.1.clone(),
                });
                self.index.insert(key, i);
                i
            }
        };
        self.raw.insert(raw, i);
        i
    }

    /// Keeps the [`POOL_KEEP`] fullest columns once the pool passes [`POOL_MAX`].
    fn trim(&mut self) {
        if self.columns.len() <= POOL_MAX {
            return;
        }
        let mut ranked: Vec<usize> = (0..self.columns.len()).collect();
        ranked
            .sort_by(|&a, &b| cmp_f64(self.columns[b].fill, self.columns[a].fill).then(a.cmp(&b)));
        ranked.truncate(POOL_KEEP);
        ranked.sort_unstable();
        let mut old: Vec<Option<Column>> = std::mem::take(&mut self.columns)
            .into_iter()
            .map(Some)
            .collect();
        self.index.clear();
        self.raw.clear();
        for i in ranked {
            if let Some(c) = old[i].take() {
                self.index
                    .insert((c.box_type, c.slots.clone()), self.columns.len());
                self.columns.push(c);
            }
        }
    }

    /// The boxes of a covering: fullest column first, each unit kept in the
    /// first column holding it and taken out of the others.
    fn boxes<'a>(
        &self,
        chosen: &[usize],
        slots: usize,
        ctx: &Context<'a>,
        rule: PlacementRule,
    ) -> Vec<(usize, BoxFill<'a>)> {
        let mut ranked = chosen.to_vec();
        ranked
            .sort_by(|&a, &b| cmp_f64(self.columns[b].fill, self.columns[a].fill).then(a.cmp(&b)));
        let mut taken = vec![false; slots];
        let mut out = Vec::with_capacity(ranked.len());
        for j in ranked {
            let c = &self.columns[j];
            let units: Vec<PlacedUnit> = c
                .units
                .iter()
                .filter(|u| !std::mem::replace(&mut taken[u.slot], true))
                .copied()
                .collect();
            if !units.is_empty() {
                let fill = BoxFill::rebuild(&ctx.boxes[c.box_type], rule, &units, ctx.kinds);
                out.push((c.box_type, fill));
            }
        }
        out
    }
}

/// The fewest columns of `pool` covering every slot `current` covers (a
/// cover itself, returned when nothing as small is found): subgradient
/// optimisation of the Lagrangian bound with a greedy cover under the
/// multipliers every [`GREEDY_EVERY`] iterations, until the bound proves
/// the best cover optimal, [`ITERATIONS`] or `until`.
fn cover(pool: &Pool, slots: usize, current: Vec<usize>, until: &Deadline) -> Vec<usize> {
    let cols: Vec<&[usize]> = pool.columns.iter().map(|c| &c.slots[..]).collect();
    let mut needed = vec![false; slots];
    for &j in &current {
        for &i in cols[j] {
            needed[i] = true;
        }
    }
    let mut rows_cols: Vec<Vec<usize>> = vec![Vec::new(); slots];
    for (j, c) in cols.iter().enumerate() {
        for &i in c.iter() {
            rows_cols[i].push(j);
        }
    }
    let mut u: Vec<f64> = (0..slots)
        .map(|i| {
            rows_cols[i]
                .iter()
                .map(|&j| 1.0 / cols[j].len() as f64)
                .fold(f64::INFINITY, f64::min)
        })
        .map(|v| if v.is_finite() { v } else { 0.0 })
        .collect();
    let mut best = current;
    let mut found: Option<Vec<usize>> = None;
    let mut lambda = 0.1;
    let mut window: Vec<f64> = Vec::new();
    let mut rc = vec![0.0; cols.len()];
    let mut best_lb = f64::NEG_INFINITY;
    for it in 0..ITERATIONS {
        if until.expired() {
            break;
        }
        for (j, c) in cols.iter().enumerate() {
            rc[j] = 1.0 - c.iter().map(|&i| u[i]).sum::<f64>();
        }
        let lb: f64 = u.iter().sum::<f64>() + rc.iter().map(|r| r.min(0.0)).sum::<f64>();
        best_lb = best_lb.max(lb);
        let upper = found.as_ref().map_or(best.len(), Vec::len);
        if (best_lb - 1e-6).ceil() >= upper as f64 {
            break;
        }
        if it % GREEDY_EVERY == 0 {
            let g = greedy(&cols, &rows_cols, &u, &needed);
            if g.len() <= upper && found.as_ref().is_none_or(|f| g.len() < f.len()) {
                found = Some(g);
            }
        }
        let upper = found.as_ref().map_or(best.len(), Vec::len) as f64;
        let mut s: Vec<f64> = needed.iter().map(|&n| f64::from(u8::from(n))).collect();
        for (j, c) in cols.iter().enumerate() {
            if rc[j] < 0.0 {
                for &i in c.iter() {
                    s[i] -= 1.0;
                }
            }
        }
        let norm: f64 = s.iter().map(|v| v * v).sum();
        if norm <= 0.0 {
            break;
        }
        let step = lambda * (upper - lb).max(0.01) / norm;
        for i in 0..slots {
            u[i] = (u[i] + step * s[i]).max(0.0);
        }
        window.push(lb);
        if window.len() == 20 {
            let hi = window.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let lo = window.iter().copied().fold(f64::INFINITY, f64::min);
            if hi - lo > 0.01 * hi.abs().max(1.0) {
                lambda /= 2.0;
            } else if hi - lo < 0.001 * hi.abs().max(1.0) {
                lambda *= 1.5;
            }
            window.clear();
        }
    }
    if std::env::var_os("POOL_DEBUG").is_some() {
        eprintln!("  lb {best_lb:.3} found {:?}", found.as_ref().map(Vec::len));
    }
    if let Some(f) = found {
        if f.len() <= best.len() {
            best = f;
        }
    }
    best
}

/// A greedy cover under multipliers `u` (Caprara, Fischetti & Toth's
/// score: reduced cost over new rows covered), redundant columns dropped.
fn greedy(cols: &[&[usize]], rows_cols: &[Vec<usize>], u: &[f64], needed: &[bool]) -> Vec<usize> {
    let mut mu: Vec<usize> = cols
        .iter()
        .map(|c| c.iter().filter(|&&i| needed[i]).count())
        .collect();
    let mut gamma: Vec<f64> = cols
        .iter()
        .map(|c| 1.0 - c.iter().filter(|&&i| needed[i]).map(|&i| u[i]).sum::<f64>())
        .collect();
    let mut covered: Vec<bool> = needed.iter().map(|&n| !n).collect();
    let mut left = needed.iter().filter(|&&n| n).count();
    let mut chosen = Vec::new();
    while left > 0 {
        let score = |j: usize| {
            let m = mu[j] as f64;
            if gamma[j] > 0.0 {
                gamma[j] / m
            } else {
                gamma[j] * m
            }
        };
        let Some(j) = (0..cols.len())
            .filter(|&j| mu[j] > 0)
            .min_by(|&a, &b| cmp_f64(score(a), score(b)).then(a.cmp(&b)))
        else {
            break;
        };
        chosen.push(j);
        for &i in cols[j] {
            if !covered[i] {
                covered[i] = true;
                left -= 1;
                for &k in &rows_cols[i] {
                    mu[k] -= 1;
                    gamma[k] += u[i];
                }
            }
        }
    }
    // Drop columns whose every row another chosen column covers, latest first.
    let mut times = vec![0u32; needed.len()];
    for &j in &chosen {
        for &i in cols[j] {
            times[i] += 1;
        }
    }
    let mut kept = Vec::with_capacity(chosen.len());
    for &j in chosen.iter().rev() {
        if cols[j].iter().all(|&i| times[i] >= 2) {
            for &i in cols[j] {
                times[i] -= 1;
            }
        } else {
            kept.push(j);
        }
    }
    kept.reverse();
    kept
}
