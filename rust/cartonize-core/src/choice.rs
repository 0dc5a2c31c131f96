//! Box choice options beyond the plain trial fill: `boxTypeChoiceStyle:
//! estimated` (choose by an estimate of the fill from `usableSpace`, then
//! fill only the chosen type) and `boxTypeChoiceLookahead` (judge each
//! candidate with the boxes that would greedily follow it).

use std::cmp::Ordering;

use crate::fill::PlacementRule;
use crate::model::Goal;
use crate::select::{
    cheapest_box_for_rest, choose_actual, fill_box, slots_of, tiebreak, Context, Trial, UnitRef,
};
use crate::sort::cmp_f64;

/// The units a choice is made for and how boxes are filled.
pub(crate) struct Rest<'r> {
    pub order: &'r [UnitRef],
    pub remaining: &'r [usize],
    pub rule: PlacementRule,
    pub boxes_left: Option<usize>,
    pub stop: bool,
}

/// What a candidate box and the boxes greedily following it achieve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Ahead {
    pub cost: f64,
    pub units: usize,
}

impl Ahead {
    /// Best first: `lowest-cost` compares cost per unit packed (the
    /// public schema's example: 2 x $10 for 8 items beats $12 + $10), then
    /// more units; `most-items` more units, then lower cost.
    pub fn compare(&self, other: &Ahead, goal: Goal) -> Ordering {
        let per_unit = |a: &Ahead| a.cost / a.units.max(1) as f64;
        let more = other.units.cmp(&self.units);
        match goal {
            Goal::LowestCost => cmp_f64(per_unit(self), per_unit(other)).then(more),
            Goal::MostItems => more.then(cmp_f64(self.cost, other.cost)),
        }
    }
}

/// `t` followed by up to `n` boxes chosen greedily (lookahead 0) for the
/// units it leaves, within `boxesMax`: their total cost and units packed.
pub(crate) fn look_ahead(t: &Trial<'_>, rest: &Rest<'_>, ctx: &Context<'_>, n: u32) -> Ahead {
    let placed = slots_of(&t.fill);
    let mut left: Vec<usize> = rest
        .remaining
        .iter()
        .copied()
        .filter(|s| placed.binary_search(s).is_err())
        .collect();
    let mut ahead = Ahead {
        cost: t.cost,
        units: t.fill.units.len(),
    };
    let mut boxes_left = rest.boxes_left;
    for _ in 0..n {
        boxes_left = boxes_left.map(|b| b.saturating_sub(1));
        if left.is_empty() || boxes_left == Some(0) {
            break;
        }
        let Some(next) = choose_actual(rest.order, &left, ctx, rest.rule, boxes_left, rest.stop, 0)
        else {
            break;
        };
        ahead.cost += next.cost;
        ahead.units += next.fill.units.len();
        let taken = slots_of(&next.fill);
        left.retain(|s| taken.binary_search(s).is_err());
    }
    ahead
}

/// One box type's estimated fill.
struct Estimate {
    box_type: usize,
    units: usize,
    volume: f64,
    cost: f64,
    projected: f64,
    placed: Vec<usize>,
}

/// `estimated`: each box type is expected to take the units, in order, while
/// their volume stays within `usableSpace` x its volume (less reserved space)
/// and their weight within its limit (a unit that would pass either is
/// skipped, or ends the box under lookback; the first unit it can hold always
/// counts). The type whose estimate has the lowest projected cost (cost plus
/// a lower bound for what it leaves, as for trial fills; `most-items`: the
/// most units) is then filled for real; if that fill is empty the next best
/// estimate is filled. Only one real fill per new box in the usual case.
pub(crate) fn choose_estimated<'a>(
    order: &[UnitRef],
    remaining: &[usize],
    ctx: &Context<'a>,
    rule: PlacementRule,
    boxes_left: Option<usize>,
    stop: bool,
) -> Option<Trial<'a>> {
    let volume_of = |s: usize| ctx.kinds[order[s].kind].volume;
    let remaining_volume: f64 = remaining.iter().map(|&s| volume_of(s)).sum();
    let mut estimates = Vec::with_capacity(ctx.openable);
    for b in 0..ctx.openable {
        let bk = &ctx.boxes[b];
        let room = bk.volume * (1.0 - bk.extra.reserved_space) * ctx.choice.usable_space;
        let payload_max = bk.payload_max();
        let (mut volume, mut weight) = (0.0, 0.0);
        let mut placed = Vec::new();
        for &s in remaining {
            let kind = order[s].kind;
            let k = &ctx.kinds[kind];
            let over = volume + k.volume > room * (1.0 + 1e-12) || weight + k.weight > payload_max;
            if !ctx.holds[b][kind] || (over && !placed.is_empty()) {
                if stop {
                    break;
                }
                continue;
            }
            volume += k.volume;
            weight += k.weight;
            placed.push(s);
        }
        if placed.is_empty() {
            continue;
        }
        let cost = bk.cost(bk.weight_tare + weight);
        estimates.push(Estimate {
            box_type: b,
            units: placed.len(),
            volume,
            cost,
            projected: cost,
            placed,
        });
    }
    let best_rate = estimates
        .iter()
        .map(|e| e.cost / e.volume.max(f64::MIN_POSITIVE))
        .fold(f64::INFINITY, f64::min);
    for e in &mut estimates {
        if e.units < remaining.len() {
            e.placed.sort_unstable();
            let cheapest = cheapest_box_for_rest(&e.placed, order, remaining, ctx);
            e.projected = e.cost + ((remaining_volume - e.volume) * best_rate).max(cheapest);
        }
    }
    let largest = ctx.boxes[..ctx.openable]
        .iter()
        .map(|b| b.volume)
        .fold(0.0, f64::max);
    let room = |e: &Estimate| {
        boxes_left.is_none_or(|n| {
            remaining_volume - e.volume <= n.saturating_sub(1) as f64 * largest * (1.0 + 1e-9)
        })
    };
    estimates.sort_by(|a, b| {
        let count = b.units.cmp(&a.units);
        let projected = cmp_f64(a.projected, b.projected);
        let primary = match ctx.goal {
            Goal::LowestCost => projected.then(count),
            Goal::MostItems => count.then(projected),
        };
        room(b)
            .cmp(&room(a))
            .then(primary)
            .then_with(|| tiebreak(a.box_type, b.box_type, ctx))
    });
    estimates.iter().find_map(|e| {
        let b = e.box_type;
        let fill = fill_box(b, order, remaining, ctx, rule, stop);
        if fill.is_empty() {
            return None;
        }
        let cost = ctx.boxes[b].cost(ctx.boxes[b].weight_tare + fill.payload);
        Some(Trial {
            fill,
            box_type: b,
            cost,
            projected: e.projected,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookahead_compares_cost_per_unit() {
        // The public schema's example: 8 items; A takes 6 for 12, B 4 for 10.
        let a_then_b = Ahead {
            cost: 22.0,
            units: 8,
        };
        let b_then_b = Ahead {
            cost: 20.0,
            units: 8,
        };
        assert_eq!(
            b_then_b.compare(&a_then_b, Goal::LowestCost),
            Ordering::Less
        );
        let more = Ahead {
            cost: 30.0,
            units: 9,
        };
        assert_eq!(more.compare(&b_then_b, Goal::MostItems), Ordering::Less);
        assert_eq!(more.compare(&b_then_b, Goal::LowestCost), Ordering::Greater);
    }
}
