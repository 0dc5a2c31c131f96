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

impl Strategy {
    /// The first of `strategies` (a requested ordering) under a plan of
    /// `mode` that chooses the units of each box itself (layers, maximal
    /// spaces), so the order only breaks ties; a win reports that ordering.
    pub fn first_under(strategies: &[Strategy], mode: Mode) -> Strategy {
        let first = &strategies[0];
        Strategy {
            order: first.order.clone(),
            plan: Plan {
                mode,
                merit: Merit::FirstPoint,
            },
            sort: first.sort,
            reverse: first.reverse,
        }
    }

    /// True when `self` and `other` pack the same units in the same order
    /// under the same plan, and so give the same packing.
    fn packs_like(&self, other: &Strategy) -> bool {
        self.plan == other.plan && self.order == other.order
    }
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

/// Packs one more strategy, `more`, offers its packing to `found` and
/// appends it to `strategies`, whose indices `found` refers to.
pub fn run_more(
    more: Strategy,
    strategies: &mut Vec<Strategy>,
    found: &mut Found,
    ctx: &Context<'_>,
    deadline: &Deadline,
    done: &Final<'_>,
) {
    let packed = run(std::slice::from_ref(&more), ctx, deadline, 0, false, done);
    found.absorb(packed, strategies.len(), ctx.goal);
    strategies.push(more);
}

/// Runs `main` on this thread while `ahead` runs on another, under a copy of
/// `deadline` that `main` can stop: `main` returns its result and whether
/// `ahead`'s is wanted. When it is not, `ahead` is stopped (its deadline
/// ends) and its result dropped; when it is, `ahead` runs to its end as it
/// would have alone, so what it returns does not depend on timing.
/// `None` when `ahead` was not wanted (or failed on a bug).
pub fn beside<T, U: Send>(
    ahead: impl FnOnce(&Deadline) -> U + Send,
    deadline: &Deadline,
    main: impl FnOnce() -> (T, bool),
) -> (T, Option<U>) {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let its_deadline = deadline.stoppable(stop.clone());
    std::thread::scope(|scope| {
        let handle = scope.spawn(move || ahead(&its_deadline));
        let (out, wanted) = main();
        if !wanted {
            stop.store(true, AtomicOrdering::Relaxed);
        }
        let result = handle.join().ok().filter(|_| wanted);
        (out, result)
    })
}

/// Distinct packings besides the best that [`Found`] keeps, best first:
/// re-boxing may take a runner-up below the best.
const RUNNERS_UP: usize = 1;

/// How much dearer than the best a runner-up may be and still be re-boxed
/// (a share of the best's cost): most runners-up that re-boxed below the
/// best on the e-commerce orders were within it, and farther ones cost
/// re-boxing work on every multi-box order.
const RUNNER_UP_GAP: f64 = 0.02;

/// True when runner-up `p` is close enough to `best` to be worth re-boxing:
/// as many leftovers, a cost within [`RUNNER_UP_GAP`] of the best's and,
/// under `most-items`, no more boxes.
pub fn close_to(p: &Packing, best: &Packing, goal: Goal) -> bool {
    p.leftovers.len() == best.leftovers.len()
        && p.cost <= best.cost + RUNNER_UP_GAP * best.cost.abs()
        && (goal == Goal::LowestCost || p.boxes.len() <= best.boxes.len())
}

/// What running a list of strategies found.
pub struct Found {
    /// The best packing and its strategy's index; earlier strategies win ties.
    pub best: Option<(Packing, usize)>,
    /// Up to [`RUNNERS_UP`] other packings with their strategies' indices,
    /// best first, none with the same boxes as the best or as each other.
    pub runners_up: Vec<(Packing, usize)>,
    /// Some strategy was cut short by the deadline.
    pub timed_out: bool,
}

impl Found {
    /// Takes `other`'s packings (its strategies are numbered from
    /// `offset`); earlier strategies still win ties.
    pub fn absorb(&mut self, other: Found, offset: usize, goal: Goal) {
        self.timed_out |= other.timed_out;
        for (p, i) in other.best.into_iter().chain(other.runners_up) {
            self.offer(p, offset + i, goal);
        }
    }

    /// Records strategy `i`'s packing: the best when strictly better than
    /// the best so far, else perhaps a runner-up.
    fn offer(&mut self, p: Packing, i: usize, goal: Goal) {
        let beaten = self.is_beaten_by(&p, goal);
        let other = match beaten {
            true => self.best.replace((p, i)),
            false => Some((p, i)),
        };
        if let Some((q, j)) = other {
            self.keep_runner_up(q, j, goal);
        }
    }

    fn keep_runner_up(&mut self, p: Packing, i: usize, goal: Goal) {
        let known = |q: &Packing| same_boxes(&p, q);
        if self.best.as_ref().is_some_and(|(b, _)| known(b))
            || self.runners_up.iter().any(|(q, _)| known(q))
        {
            return;
        }
        // After every runner-up that is no worse: earlier strategies first.
        let at = self
            .runners_up
            .iter()
            .position(|(q, _)| compare_packings(&p, q, goal) == Ordering::Less)
            .unwrap_or(self.runners_up.len());
        if at < RUNNERS_UP {
            self.runners_up.insert(at, (p, i));
            self.runners_up.truncate(RUNNERS_UP);
        }
    }

    fn is_beaten_by(&self, p: &Packing, goal: Goal) -> bool {
        self.best
            .as_ref()
            .is_none_or(|(b, _)| compare_packings(p, b, goal) == Ordering::Less)
    }
}

/// True when `a` and `b` have the same leftovers and cost and boxes of the
/// same types holding the same kinds (in any order): polishing one would
/// repeat the other's work.
fn same_boxes(a: &Packing, b: &Packing) -> bool {
    let contents = |p: &Packing| {
        let mut boxes: Vec<(usize, Vec<usize>)> = p
            .boxes
            .iter()
            .map(|f| {
                let mut kinds: Vec<usize> = f.units.iter().map(|u| u.kind).collect();
                kinds.sort_unstable();
                (f.box_type, kinds)
            })
            .collect();
        boxes.sort_unstable();
        boxes
    };
    a.leftovers.len() == b.leftovers.len()
        && a.cost.to_bits() == b.cost.to_bits()
        && a.boxes.len() == b.boxes.len()
        && contents(a) == contents(b)
}

/// Below this much work (units × box types) one thread packs every ordering;
/// above it the orderings are shared among the machine's cores.
pub const PARALLEL_WORK: u64 = 2_000;

/// Packs every strategy; with `first_must_finish` the first always completes,
/// the others give up once the deadline has passed. The choice depends only on
/// the strategies' positions, never on thread timing. A strategy that packs
/// like an earlier one is not packed: its packing could neither beat the
/// earlier one's (ties go to the earlier strategy) nor join it as a runner-up
/// (runners-up differ from the best and from each other). Once `done`
/// holds for a strategy's packing (nothing can beat it), no later strategy
/// is packed: ties go to the earlier strategy, so that packing is the best.
pub fn run(
    strategies: &[Strategy],
    ctx: &Context<'_>,
    deadline: &Deadline,
    work: u64,
    first_must_finish: bool,
    done: &Final<'_>,
) -> Found {
    let results = run_all(strategies, ctx, deadline, work, first_must_finish, done);
    let mut found = Found {
        best: None,
        runners_up: Vec::new(),
        timed_out: results.iter().any(|(_, p)| p.is_none()),
    };
    for (i, packing) in results {
        if let Some(packing) = packing {
            found.offer(packing, i, ctx.goal);
        }
    }
    found
}

/// True of a packing nothing can beat (it has every unit in as few boxes, or
/// at as low a cost, as any packing could).
pub type Final<'a> = dyn Fn(&Packing) -> bool + Sync + 'a;

/// Each distinct strategy's index and packing (`None` when the deadline cut it
/// short), in strategy order, up to the first whose packing is `done`.
fn run_all(
    strategies: &[Strategy],
    ctx: &Context<'_>,
    deadline: &Deadline,
    work: u64,
    first_must_finish: bool,
    done: &Final<'_>,
) -> Vec<(usize, Option<Packing>)> {
    let mut distinct = distinct(strategies);
    let threads = if work > PARALLEL_WORK {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(distinct.len())
    } else {
        1
    };
    let must = |i: usize| first_must_finish && i == 0;
    let run = |i: usize| {
        let s = &strategies[i];
        pack_order(&s.order, ctx, s.plan, deadline, must(i))
    };
    let mut results: Vec<Option<Packing>> = vec![None; strategies.len()];
    // The first strategy whose packing is final; later ones are not packed,
    // or dropped when another thread packed them already.
    let last = AtomicUsize::new(usize::MAX);
    let finish = |i: usize, packing: &Option<Packing>| {
        if packing.as_ref().is_some_and(done) {
            last.fetch_min(i, AtomicOrdering::Relaxed);
        }
    };
    if threads <= 1 {
        for &i in &distinct {
            results[i] = run(i);
            finish(i, &results[i]);
            if last.load(AtomicOrdering::Relaxed) == i {
                break;
            }
        }
    } else {
        let next = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    scope.spawn(|| {
                        let mut packed = Vec::new();
                        loop {
                            let n = next.fetch_add(1, AtomicOrdering::Relaxed);
                            let Some(&i) = distinct.get(n) else {
                                break;
                            };
                            if i > last.load(AtomicOrdering::Relaxed) {
                                break;
                            }
                            let packing = run(i);
                            finish(i, &packing);
                            packed.push((i, packing));
                        }
                        packed
                    })
                })
                .collect();
            for handle in handles {
                // A worker only panics on a bug; its strategies then count as not finished.
                if let Ok(packed) = handle.join() {
                    for (i, packing) in packed {
                        results[i] = packing;
                    }
                }
            }
        });
        if first_must_finish && results.first().is_some_and(Option::is_none) {
            results[0] = run(0);
        }
    }
    let last = last.into_inner();
    distinct.retain(|&i| i <= last);
    distinct
        .into_iter()
        .map(|i| (i, results[i].take()))
        .collect()
}

/// The strategies that pack like no earlier one (same units in the same
/// order under the same plan give the same packing). Sorts often agree on
/// small orders: one or two of the four requested orderings, up to half the
/// extras.
fn distinct(strategies: &[Strategy]) -> Vec<usize> {
    (0..strategies.len())
        .filter(|&i| !strategies[..i].iter().any(|s| s.packs_like(&strategies[i])))
        .collect()
}

/// Removes from `extra` the strategies that pack like one of `known`.
pub fn drop_known(extra: &mut Vec<Strategy>, known: &[Strategy]) {
    extra.retain(|e| !known.iter().any(|k| k.packs_like(e)));
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

    fn packing(cost: f64, box_types: &[usize]) -> Packing {
        Packing {
            boxes: box_types
                .iter()
                .map(|&box_type| crate::select::FilledBox {
                    box_type,
                    units: Vec::new(),
                    payload: 0.0,
                })
                .collect(),
            leftovers: Vec::new(),
            cost,
        }
    }

    #[test]
    fn a_packing_ahead_is_kept_when_wanted_and_stopped_when_not() {
        let never = Deadline::after(None);
        // Wanted: `ahead` runs to its end, under a deadline that never ended.
        let (main, ahead) = beside(
            |d: &Deadline| (0..1000).all(|_| !d.expired()),
            &never,
            || (7, true),
        );
        assert_eq!((main, ahead), (7, Some(true)));
        // Not wanted: `ahead`, which runs until its deadline ends, is stopped.
        let (main, ahead) = beside(
            |d: &Deadline| {
                while !d.expired() {
                    std::thread::yield_now();
                }
                1
            },
            &never,
            || (8, false),
        );
        assert_eq!((main, ahead), (8, None));
        assert!(!never.expired());
    }

    #[test]
    fn strategies_alike_are_packed_once() {
        // Three kinds; strategy 2 repeats strategy 0's order and plan under
        // another sort's name, strategy 3 the same order under another plan.
        let kind = |d, quantity| crate::testkit::free_kind(d, 0.0, quantity);
        let kinds = vec![
            kind([4.0, 5.0, 6.0], 6),
            kind([2.0, 7.0, 3.0], 5),
            kind([9.0, 1.0, 2.0], 4),
        ];
        let quantities = [6, 5, 4];
        let boxes = setup(1, 3).2;
        let ctx = crate::testkit::context(&kinds, &boxes, Goal::LowestCost);
        let strategy = |kind_order: &[usize], plan: Plan, sort: ItemSort| Strategy {
            order: expand(kind_order, &quantities),
            plan,
            sort,
            reverse: false,
        };
        let best_fit = Plan {
            mode: Mode::BestFit,
            merit: Merit::FirstPoint,
        };
        let strategies = [
            strategy(&[0, 1, 2], Plan::BASE, ItemSort::SetVolume),
            strategy(&[2, 1, 0], Plan::BASE, ItemSort::SetVolume),
            strategy(&[0, 1, 2], Plan::BASE, ItemSort::Weight),
            strategy(&[0, 1, 2], best_fit, ItemSort::SetVolume),
        ];
        assert_eq!(distinct(&strategies), vec![0, 1, 3]);
        let deadline = Deadline::after(None);
        let alone = |s: &Strategy| {
            let p = pack_order(&s.order, &ctx, s.plan, &deadline, true);
            format!("{:?}", p.map(|p| p.boxes))
        };
        // One thread and, above PARALLEL_WORK, the machine's threads.
        for work in [0, PARALLEL_WORK + 1] {
            let results = run_all(&strategies, &ctx, &deadline, work, true, &|_| false);
            let packed: Vec<usize> = results.iter().map(|(i, _)| *i).collect();
            assert_eq!(packed, vec![0, 1, 3], "work {work}");
            for (i, r) in &results {
                assert_eq!(
                    format!("{:?}", r.as_ref().map(|p| &p.boxes)),
                    alone(&strategies[*i]),
                    "work {work}"
                );
            }
        }
        let mut extra: Vec<Strategy> = strategies[1..]
            .iter()
            .map(|s| Strategy {
                order: s.order.clone(),
                ..*s
            })
            .collect();
        drop_known(&mut extra, &strategies[..1]);
        let left: Vec<ItemSort> = extra.iter().map(|s| s.sort).collect();
        assert_eq!(left, vec![ItemSort::SetVolume, ItemSort::SetVolume]);
        assert!(extra[1].plan == best_fit);
    }

    #[test]
    fn no_strategy_is_packed_after_a_final_packing() {
        let kind = |d, quantity| crate::testkit::free_kind(d, 0.0, quantity);
        let kinds = vec![kind([4.0, 5.0, 6.0], 6), kind([2.0, 7.0, 3.0], 5)];
        let quantities = [6, 5];
        let boxes = setup(1, 3).2;
        let ctx = crate::testkit::context(&kinds, &boxes, Goal::LowestCost);
        let best_fit = Plan {
            mode: Mode::BestFit,
            merit: Merit::FirstPoint,
        };
        let strategies: Vec<Strategy> = [[0, 1], [1, 0], [0, 1], [1, 0]]
            .iter()
            .zip([Plan::BASE, Plan::BASE, best_fit, best_fit])
            .map(|(kind_order, plan)| Strategy {
                order: expand(kind_order, &quantities),
                plan,
                sort: ItemSort::SetVolume,
                reverse: false,
            })
            .collect();
        let deadline = Deadline::after(None);
        let boxes_of = |p: Option<&Packing>| format!("{:?}", p.map(|p| &p.boxes));
        let alone: Vec<String> = strategies
            .iter()
            .map(|s| boxes_of(pack_order(&s.order, &ctx, s.plan, &deadline, true).as_ref()))
            .collect();
        let everything = run(&strategies, &ctx, &deadline, 0, true, &|_| false);
        let best = everything.best.map(|(p, i)| (boxes_of(Some(&p)), i));
        assert!(best.is_some());
        for work in [0, PARALLEL_WORK + 1] {
            // Final: the best packing of them all, then the second strategy's.
            let best_boxes = best.as_ref().map(|(b, _)| b.clone());
            let done = |p: &Packing| Some(boxes_of(Some(p))) == best_boxes;
            let stopped = run(&strategies, &ctx, &deadline, work, true, &done);
            let found = stopped.best.map(|(p, i)| (boxes_of(Some(&p)), i));
            assert_eq!(found, best, "work {work}");
            let done = |p: &Packing| boxes_of(Some(p)) == alone[1];
            let packed: Vec<usize> = run_all(&strategies, &ctx, &deadline, work, true, &done)
                .into_iter()
                .map(|(i, _)| i)
                .collect();
            let first_final = alone.iter().position(|b| *b == alone[1]).unwrap_or(1);
            assert_eq!(packed, (0..=first_final).collect::<Vec<_>>(), "work {work}");
        }
    }

    #[test]
    fn found_keeps_the_best_and_a_distinct_runner_up() {
        // Packings offered in strategy order (cost, box types), the best's
        // strategy, the runner-up's.
        type Offered<'a> = &'a [(f64, &'a [usize])];
        let cases: [(Offered<'_>, usize, Option<usize>); 5] = [
            (&[(10.0, &[0])], 0, None),
            (&[(10.0, &[0]), (12.0, &[1])], 0, Some(1)),
            // A better packing later: the old best becomes the runner-up.
            (&[(12.0, &[1]), (10.0, &[0])], 1, Some(0)),
            // Ties: the earlier strategy wins, the later one is runner-up.
            (&[(10.0, &[0]), (10.0, &[1]), (10.0, &[2])], 0, Some(1)),
            // The same boxes again are no runner-up.
            (
                &[(10.0, &[0, 1]), (10.0, &[1, 0]), (11.0, &[2])],
                0,
                Some(2),
            ),
        ];
        for (offered, best, runner_up) in cases {
            let mut found = Found {
                best: None,
                runners_up: Vec::new(),
                timed_out: false,
            };
            for (i, (cost, types)) in offered.iter().enumerate() {
                found.offer(packing(*cost, types), i, Goal::LowestCost);
            }
            assert_eq!(found.best.map(|(_, i)| i), Some(best), "{offered:?}");
            assert_eq!(found.runners_up.first().map(|(_, i)| *i), runner_up);
        }
    }

    #[test]
    fn a_runner_up_is_close_within_the_gap() {
        let best = packing(100.0, &[0, 1]);
        assert!(close_to(&packing(101.0, &[2, 2]), &best, Goal::LowestCost));
        assert!(!close_to(&packing(103.0, &[2, 2]), &best, Goal::LowestCost));
        assert!(!close_to(
            &packing(101.0, &[2, 2, 2]),
            &best,
            Goal::MostItems
        ));
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
