//! The strategies one pack tries (orderings × plans) and running them,
//! on several threads for large requests, with a result independent of timing.

use std::cmp::Ordering;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};

use crate::deadline::Deadline;
use crate::fill::Merit;
use crate::kinds::{BoxKind, Kind};
use crate::model::{Goal, ItemSort, Options};
use crate::select::{pack_order, Context, Mode, Packing, Plan, UnitRef};
use crate::sort::{candidates, order_kinds, order_kinds_extra, ExtraSort, COMBINED_SORTS};
use crate::{compare_packings, expand};

/// One way to pack the request: an ordering of the units and a plan.
pub struct Strategy {
    pub order: Vec<UnitRef>,
    pub plan: Plan,
    /// The sort reported when this strategy wins.
    pub sort: ItemSort,
    pub reverse: bool,
}

/// Extra strategies are tried, in priority order, while the work of all
/// strategies (units × box types each) stays within this. Requests whose
/// requested orderings alone exceed it get no extras, so big orders keep
/// their speed; MPV-sized ones (200 units, one box type) get all six.
const EXTRA_WORK: u64 = 4_800;

/// The plans a single requested sort is also tried under, most useful first.
const EXTRA_PLANS: [Plan; 3] = [
    Plan {
        mode: Mode::BestFit,
        merit: Merit::FirstPoint,
    },
    Plan {
        mode: Mode::BestFit,
        merit: Merit::ResidualSpace,
    },
    Plan {
        mode: Mode::Sequential,
        merit: Merit::ResidualSpace,
    },
];

/// An ordering the engine adds to `combined` and `all`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ExtraOrder {
    /// A wire sort, reported as such when it wins.
    Wire(ItemSort, bool),
    /// Not a wire sort: a win reports the requested sort.
    Extra(ExtraSort),
}

const BEST_FIT_RS: Plan = Plan {
    mode: Mode::BestFit,
    merit: Merit::ResidualSpace,
};

/// What `combined` and `all` add to their wire sorts, most useful first:
/// chosen greedily, for boxes saved per unit of work, among 120 orderings
/// and plans on generated instances of the Martello-Pisinger-Vigo classes
/// (not the benchmark's), where these six with the four `combined` sorts
/// find fewer boxes than the 28 extras used before, in a quarter of the
/// time (docs/mpv-results.md).
const EXTRAS: [(ExtraOrder, Plan); 6] = [
    (
        ExtraOrder::Wire(ItemSort::ShortestDimension, true),
        BEST_FIT_RS,
    ),
    (
        ExtraOrder::Wire(ItemSort::SetVolume, false),
        Plan {
            mode: Mode::BestFit,
            merit: Merit::FirstPoint,
        },
    ),
    (
        ExtraOrder::Extra(ExtraSort::ClusteredHeightArea(3)),
        BEST_FIT_RS,
    ),
    (
        ExtraOrder::Wire(ItemSort::LargestLengthPlusGirth, false),
        BEST_FIT_RS,
    ),
    (
        ExtraOrder::Extra(ExtraSort::ClusteredHeightArea(30)),
        BEST_FIT_RS,
    ),
    (
        ExtraOrder::Wire(ItemSort::ShortestDimension, true),
        Plan {
            mode: Mode::Sequential,
            merit: Merit::ResidualSpace,
        },
    ),
];

/// Every ordering the request asks for, with the base plan.
pub fn base_strategies(
    opts: &Options,
    kinds: &[Kind],
    quantities: &[u32],
    boxes: &[BoxKind],
) -> Vec<Strategy> {
    candidates(
        opts.item_sort,
        opts.item_sort_reverse,
        opts.item_sort_dual_direction,
    )
    .into_iter()
    .map(|(sort, reverse)| Strategy {
        order: expand(
            &order_kinds(sort, reverse, kinds, quantities, boxes),
            quantities,
        ),
        plan: Plan::BASE,
        sort,
        reverse,
    })
    .collect()
}

/// Within [`EXTRA_WORK`]: for `combined` and `all` the [`EXTRAS`], for a
/// single requested sort that sort under the other plans.
pub fn extra_strategies(
    opts: &Options,
    kinds: &[Kind],
    quantities: &[u32],
    boxes: &[BoxKind],
    base: &[Strategy],
) -> Vec<Strategy> {
    let units: u64 = quantities.iter().map(|q| u64::from(*q)).sum();
    let each = units.saturating_mul(boxes.len() as u64).max(1);
    // The orderings `itemSortDualDirection` and `all` add come on top:
    // asking for more orderings must not crowd out the extras (with them
    // counted, 40 units over 15 box types left no room for any, and dual
    // direction or `all` gave dearer answers than `combined`). So the room is
    // that of one direction, and `all` has `combined`'s.
    let requested = match opts.item_sort {
        ItemSort::All => COMBINED_SORTS.len(),
        _ => base
            .iter()
            .filter(|s| s.reverse == opts.item_sort_reverse)
            .count(),
    };
    let room = EXTRA_WORK.saturating_sub(each.saturating_mul(requested as u64)) / each;
    let Ok(room) = usize::try_from(room) else {
        return Vec::new();
    };
    if matches!(opts.item_sort, ItemSort::Combined | ItemSort::All) {
        return EXTRAS
            .into_iter()
            .take(room)
            .map(|(extra, plan)| {
                let (kind_order, sort, reverse) = match extra {
                    ExtraOrder::Wire(sort, reverse) => (
                        order_kinds(sort, reverse, kinds, quantities, boxes),
                        sort,
                        reverse,
                    ),
                    ExtraOrder::Extra(e) => (
                        order_kinds_extra(e, opts.coord_order[0], kinds, boxes),
                        opts.item_sort,
                        false,
                    ),
                };
                Strategy {
                    order: expand(&kind_order, quantities),
                    plan,
                    sort,
                    reverse,
                }
            })
            .collect();
    }
    let mut out = Vec::new();
    for plan in EXTRA_PLANS {
        for s in base {
            out.push(Strategy {
                order: s.order.clone(),
                plan,
                sort: s.sort,
                reverse: s.reverse,
            });
        }
    }
    out.truncate(room);
    out
}

/// What running a list of strategies found.
pub struct Found {
    /// The best packing and its strategy's index; earlier strategies win ties.
    pub best: Option<(Packing, usize)>,
    /// Some strategy was cut short by the deadline.
    pub timed_out: bool,
}

impl Found {
    /// Takes `other`'s best when strictly better (its strategies are numbered
    /// from `offset`), so earlier strategies still win ties.
    pub fn absorb(&mut self, other: Found, offset: usize, goal: Goal) {
        self.timed_out |= other.timed_out;
        if let Some((p, i)) = other.best {
            if self.is_beaten_by(&p, goal) {
                self.best = Some((p, offset + i));
            }
        }
    }

    fn is_beaten_by(&self, p: &Packing, goal: Goal) -> bool {
        self.best
            .as_ref()
            .is_none_or(|(b, _)| compare_packings(p, b, goal) == Ordering::Less)
    }
}

/// Below this much work (units × box types) one thread packs every ordering;
/// above it the orderings are shared among the machine's cores.
const PARALLEL_WORK: u64 = 2_000;

/// Packs every strategy; with `first_must_finish` the first always completes,
/// the others give up once the deadline has passed. The choice depends only on
/// the strategies' positions, never on thread timing.
pub fn run(
    strategies: &[Strategy],
    ctx: &Context<'_>,
    deadline: &Deadline,
    work: u64,
    first_must_finish: bool,
) -> Found {
    let results = run_all(strategies, ctx, deadline, work, first_must_finish);
    let mut found = Found {
        best: None,
        timed_out: results.iter().any(Option::is_none),
    };
    for (i, packing) in results.into_iter().enumerate() {
        let Some(packing) = packing else { continue };
        if found.is_beaten_by(&packing, ctx.goal) {
            found.best = Some((packing, i));
        }
    }
    found
}

fn run_all(
    strategies: &[Strategy],
    ctx: &Context<'_>,
    deadline: &Deadline,
    work: u64,
    first_must_finish: bool,
) -> Vec<Option<Packing>> {
    let threads = if work > PARALLEL_WORK {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(strategies.len())
    } else {
        1
    };
    let must = |i: usize| first_must_finish && i == 0;
    let run = |i: usize| {
        let s = &strategies[i];
        pack_order(&s.order, ctx, s.plan, deadline, must(i))
    };
    if threads <= 1 {
        return (0..strategies.len()).map(run).collect();
    }
    let next = AtomicUsize::new(0);
    let mut results: Vec<Option<Packing>> = vec![None; strategies.len()];
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, AtomicOrdering::Relaxed);
                        if i >= strategies.len() {
                            break;
                        }
                        done.push((i, run(i)));
                    }
                    done
                })
            })
            .collect();
        for handle in handles {
            // A worker only panics on a bug; its strategies then count as not finished.
            if let Ok(done) = handle.join() {
                for (i, packing) in done {
                    results[i] = packing;
                }
            }
        }
    });
    if first_must_finish && results.first().is_some_and(Option::is_none) {
        results[0] = run(0);
    }
    results
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BoxTypeInput, ItemKindInput};

    fn setup(units: u32, box_types: usize) -> (Vec<Kind>, Vec<u32>, Vec<BoxKind>) {
        let kinds = vec![Kind::new(&ItemKindInput {
            dimensions: [1.0, 2.0, 3.0],
            weight: 0.0,
            quantity: units,
            free_axes: None,
        })];
        let boxes = (0..box_types)
            .map(|i| {
                BoxKind::new(&BoxTypeInput {
                    dimensions: [10.0 + i as f64, 10.0, 10.0],
                    weight_max: 0.0,
                    weight_tare: 0.0,
                    price: None,
                    rating: None,
                })
            })
            .collect();
        (kinds, vec![units], boxes)
    }

    #[test]
    fn extra_strategies_stay_within_the_work_budget() {
        let opts = Options::default();
        let cases = [
            (200, 1, 6),
            (100, 1, 6),
            (1000, 1, 0),
            (1000, 3, 0),
            (400, 3, 0),
        ];
        for (units, box_types, expected) in cases {
            let (kinds, q, boxes) = setup(units, box_types);
            let base = base_strategies(&opts, &kinds, &q, &boxes);
            assert_eq!(base.len(), 4);
            let extra = extra_strategies(&opts, &kinds, &q, &boxes, &base);
            assert_eq!(extra.len(), expected, "{units} units, {box_types} types");
        }
    }

    #[test]
    fn more_orderings_do_not_crowd_out_the_extras() {
        // 40 units over 15 box types: 600 units of work per ordering, so
        // combined's 4 orderings leave room for 4 extras within 4,800.
        let (kinds, q, boxes) = setup(40, 15);
        let extras = |opts: &Options| {
            let base = base_strategies(opts, &kinds, &q, &boxes);
            let extra = extra_strategies(opts, &kinds, &q, &boxes, &base);
            (
                base.len(),
                // Orders and plans: an extra's sort label is the request's.
                extra
                    .iter()
                    .map(|s| (s.order.clone(), s.plan))
                    .collect::<Vec<_>>(),
            )
        };
        let (base, combined) = extras(&Options::default());
        assert_eq!((base, combined.len()), (4, 4));
        let dual = Options {
            item_sort_dual_direction: true,
            ..Options::default()
        };
        assert_eq!(extras(&dual), (8, combined.clone()));
        let all = Options {
            item_sort: ItemSort::All,
            ..Options::default()
        };
        assert_eq!(extras(&all), (20, combined));
        // A single sort in both directions keeps the room of one direction.
        let single = |dual| Options {
            item_sort: ItemSort::Weight,
            item_sort_dual_direction: dual,
            ..Options::default()
        };
        assert_eq!(
            extras(&single(true)).1.len(),
            extras(&single(false)).1.len() * 2
        );
    }
}
