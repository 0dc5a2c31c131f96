"""Metamorphic relations over the e-commerce orders: request B should never be worse than
request A.

Run from the repository root: ``python -m bench.consistency [--orders N] [--seed S]
[--relations a,b,...] [--goals g,...] [--options JSON] [--processes P] [--json PATH]``
(``--options`` adds request fields to every order, A and B alike).

Each of the seeded orders of ``bench.ecommerce`` (``orders(N, seed)``) is packed under
both goals, ``lowest-cost`` and ``most-items``, as request A and as request B, and the two
answers compared by the goal's order (``key``): fewer leftovers first, then lower cost and
fewer boxes under ``lowest-cost``, fewer boxes and lower cost under ``most-items``. B is
never meant to be worse: it searches more (``dual``, ``all``, ``timeout``, ``lookahead``),
is less constrained (``free``, ``support``, ``catalogue``) or asks for what A found
(``limits``). The heuristics promise none of this, so a worse B is a finding to look at,
not a failure; the program reports figures and exits 0 (an invalid response, which the
validator catches, exits 1, as in every benchmark program). The relations:

- ``dual``: ``itemSortDualDirection: true`` against the default (false);
- ``all``: ``itemSort: "all"`` against the default (``combined``);
- ``limits``: ``boxesMax`` at the box count of the unlimited answer against the
  unlimited answer; and each box of the unlimited answer refitted alone (its units, its
  box type only, ``boxesMax: 1``), which must leave no unit over;
- ``catalogue``: the catalogue without one carton type the answer does not use against
  the whole catalogue (every removal tried; a better answer means the larger catalogue
  misled the search);
- ``timeout``: ``timeout: 0.3`` against no timeout;
- ``free``: ``itemInitialOrientationPreferred: false`` against the default (true);
- ``support``: the default ``allowableOverhang: -1`` (no support check) against 0 (full
  support): the stricter request should never be the better one;
- ``lookahead``: ``boxTypeChoiceLookahead: 1`` against the default 0.

Requests without a timeout are deterministic. Orders run in ``--processes`` worker
processes, each pinned to one core (``bench.common.run_parallel``), so ``timeout``'s
improvement search runs one chain, as in the other programs' timeout figures.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cartonize

from bench.common import Wire, default_processes, failed, goal_order, run_parallel
from bench.ecommerce import orders
from tests.validator import validate

GOALS = ("lowest-cost", "most-items")

#: Relations of two requests, name -> (what, A's fields, B's fields); B should never be
#: worse than A.
PAIRS: dict[str, tuple[str, Wire, Wire]] = {
    "dual": ("itemSortDualDirection true vs false", {}, {"itemSortDualDirection": True}),
    "all": ("itemSort all vs combined (default)", {}, {"itemSort": "all"}),
    "timeout": ("timeout 0.3 vs none", {}, {"timeout": 0.3}),
    "free": (
        "itemInitialOrientationPreferred false vs true (default)",
        {},
        {"itemInitialOrientationPreferred": False},
    ),
    "support": (
        "allowableOverhang -1 (default) vs 0; B is the less strict",
        {"allowableOverhang": 0},
        {},
    ),
    "lookahead": ("boxTypeChoiceLookahead 1 vs 0 (default)", {}, {"boxTypeChoiceLookahead": 1}),
}
RELATIONS = ("dual", "all", "limits", "catalogue", "timeout", "free", "support", "lookahead")
SHOWN = 3  # worse cases printed per relation and goal
SHOWN_ORDERS = 10  # orders with a better catalogue removal printed per goal

Key = tuple[float, float, float]


def key(response: Wire, goal: str) -> Key:
    """The goal's order of answers (lower is better): leftovers, then cost and boxes under
    lowest-cost, boxes and cost under most-items."""
    return goal_order(goal, response["lenLeftovers"], response["totalCost"], response["lenBoxes"])


def show_key(k: Sequence[float], goal: str) -> str:
    """A key as `left L, C cents, B boxes`."""
    left, cost, boxes = (k[0], k[1], k[2]) if goal == "lowest-cost" else (k[0], k[2], k[1])
    return f"left {left:g}, {cost:g} cents, {boxes:g} boxes"


class Packer:
    """`cartonize.pack` on wire requests, every response checked by the validator; the
    violations are collected with the request's label."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def __call__(self, request: Wire, label: str) -> Wire:
        response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
        self.problems += [f"{label}: {p}" for p in validate(request, response)]
        return response


def refit_request(order: Wire, box: Wire, goal: str) -> Wire:
    """One box's units alone, into its own box type only, `boxesMax: 1` (the order's other
    fields, `--options` among them, kept)."""
    counts = Counter(entry["item"]["refId"] for entry in box["items"])
    return {
        **order,
        "itemSets": [
            dict(s, quantity=counts[s["refId"]]) for s in order["itemSets"] if counts[s["refId"]]
        ],
        "boxTypes": [t for t in order["boxTypes"] if t["refId"] == box["refId"]],
        "boxTypeChoiceGoal": goal,
        "boxesMax": 1,
        "includeImages": False,
    }


def check_order(task: tuple[Wire, str], relations: Sequence[str]) -> dict[str, Any]:
    """The relations on one order under one goal: each pair relation's two keys, the
    limits' keys and refits, each catalogue removal's key, and any validator violations."""
    order, goal = task
    name = order["orderId"]
    base_request = {**order, "boxTypeChoiceGoal": goal}
    pack = Packer()
    answers: dict[str, Wire] = {}

    def answer(fields: Wire) -> Wire:
        tag = json.dumps(fields, sort_keys=True)
        if tag not in answers:
            answers[tag] = pack({**base_request, **fields}, f"{name} {goal} {tag}")
        return answers[tag]

    base = answer({})
    out: dict[str, Any] = {"order": name, "goal": goal, "pairs": {}}
    for rel in relations:
        if rel in PAIRS:
            _, a, b = PAIRS[rel]
            out["pairs"][rel] = (key(answer(a), goal), key(answer(b), goal))
        elif rel == "limits":
            capped = answer({"boxesMax": base["lenBoxes"]})
            out["pairs"][rel] = (key(base, goal), key(capped, goal))
            refits = []
            for n, wrapper in enumerate(base["boxes"]):
                box = wrapper["box"]
                refit = pack(refit_request(order, box, goal), f"{name} {goal} refit box {n}")
                refits.append((n, box["refId"], len(box["items"]), refit["lenLeftovers"]))
            out["refits"] = refits
        elif rel == "catalogue":
            used = {wrapper["box"]["refId"] for wrapper in base["boxes"]}
            removals = []
            for bt in order["boxTypes"]:
                if bt["refId"] in used:
                    continue
                fewer = [t for t in order["boxTypes"] if t is not bt]
                r = pack(
                    {**base_request, "boxTypes": fewer}, f"{name} {goal} without {bt['refId']}"
                )
                removals.append((bt["refId"], key(r, goal)))
            out["catalogue"] = (key(base, goal), removals)
    out["problems"] = pack.problems
    return out


def summarise(results: Sequence[dict[str, Any]], relations: Sequence[str]) -> dict[str, Any]:
    """Figures per relation and goal (JSON-ready)."""
    figures: dict[str, Any] = {}
    for rel in relations:
        per_goal: dict[str, Any] = {}
        for goal in GOALS:
            mine = [r for r in results if r["goal"] == goal]
            if not mine:
                continue
            if rel == "catalogue":
                better = [
                    {"order": r["order"], "removed": ref, "full": r["catalogue"][0], "without": k}
                    for r in mine
                    for ref, k in r["catalogue"][1]
                    if tuple(k) < tuple(r["catalogue"][0])
                ]
                per_goal[goal] = {
                    "orders": len(mine),
                    "removals": sum(len(r["catalogue"][1]) for r in mine),
                    "better": len(better),
                    "orders with a better removal": len({b["order"] for b in better}),
                    "cases": better,
                }
                continue
            pairs = [(r["order"], *r["pairs"][rel]) for r in mine]
            worse = [{"order": o, "a": a, "b": b} for o, a, b in pairs if tuple(b) > tuple(a)]
            entry: dict[str, Any] = {
                "pairs": len(pairs),
                "better": sum(1 for _, a, b in pairs if tuple(b) < tuple(a)),
                "worse": len(worse),
                "cases": worse,
            }
            if rel == "limits":
                refits = [(r["order"], *f) for r in mine for f in r["refits"]]
                entry["refits"] = len(refits)
                entry["refits with leftovers"] = [
                    {"order": o, "box": n, "refId": ref, "units": units, "leftovers": left}
                    for o, n, ref, units, left in refits
                    if left
                ]
            per_goal[goal] = entry
        figures[rel] = per_goal
    return figures


def report(figures: dict[str, Any]) -> None:
    """Print the figures: one line per relation and goal, then the first few cases."""
    for rel, per_goal in figures.items():
        what = (
            "without one unused carton type vs the whole catalogue"
            if rel == "catalogue"
            else "boxesMax at the unlimited answer's count vs unlimited"
            if rel == "limits"
            else PAIRS[rel][0]
        )
        print(f"{rel}: {what}")
        for goal, f in per_goal.items():
            if rel == "catalogue":
                print(
                    f"  {goal:<12} {f['removals']} removals tried ({f['orders']} orders), "
                    f"{f['better']} gave a better answer, "
                    f"{f['orders with a better removal']} distinct orders"
                )
                by_order: dict[str, list[dict[str, Any]]] = {}
                for c in f["cases"]:
                    by_order.setdefault(c["order"], []).append(c)
                for cases in list(by_order.values())[:SHOWN_ORDERS]:
                    c = min(cases, key=lambda c: tuple(c["without"]))
                    print(
                        f"    better: {c['order']} ({len(cases)} removals), best without "
                        f"{c['removed']}: {show_key(c['full'], goal)} -> "
                        f"{show_key(c['without'], goal)}"
                    )
                continue
            print(f"  {goal:<12} {f['pairs']} pairs, B better {f['better']}, B worse {f['worse']}")
            for c in f["cases"][:SHOWN]:
                print(
                    f"    worse: {c['order']}: A {show_key(c['a'], goal)}; "
                    f"B {show_key(c['b'], goal)}"
                )
            if rel == "limits":
                left = f["refits with leftovers"]
                print(
                    f"  {goal:<12} refit alone, boxesMax 1: {f['refits']} boxes checked, "
                    f"{len(left)} with leftovers"
                )
                for c in left[:SHOWN]:
                    print(
                        f"    leftovers: {c['order']} box {c['box']} (carton {c['refId']}, "
                        f"{c['units']} units): {c['leftovers']} left over"
                    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the relations, print the figures, optionally write JSON; 1 if any response is
    invalid."""
    parser = argparse.ArgumentParser(prog="python -m bench.consistency", description=__doc__)
    parser.add_argument("--orders", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--relations",
        default=",".join(RELATIONS),
        help=f"comma-separated, of {','.join(RELATIONS)} (default all)",
    )
    parser.add_argument("--goals", default=",".join(GOALS), help="comma-separated")
    parser.add_argument(
        "--options",
        type=json.loads,
        default={},
        help="request fields added to every order (A, B, refits and removals), as JSON, e.g. "
        "'{\"itemInitialOrientationPreferred\": false}'",
    )
    parser.add_argument("--processes", type=int, default=default_processes())
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)

    relations = [r for r in args.relations.split(",") if r]
    goals = [g for g in args.goals.split(",") if g]
    unknown = [r for r in relations if r not in RELATIONS] + [g for g in goals if g not in GOALS]
    if unknown:
        parser.error(f"unknown relations or goals: {', '.join(unknown)}")
    requests = [{**o, **args.options} for o in orders(args.orders, args.seed)]
    tasks = [(o, goal) for goal in goals for o in requests]
    shown = f", options {json.dumps(args.options)}" if args.options else ""
    results = run_parallel(
        functools.partial(check_order, relations=relations), tasks, args.processes
    )
    print(
        f"consistency: {args.orders} e-commerce orders (seed {args.seed}), "
        f"goals {', '.join(goals)}{shown}; B should never be worse than A"
    )
    if failed([p for r in results for p in r["problems"]]):
        return 1
    figures = summarise(results, relations)
    report(figures)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        meta = {"orders": args.orders, "seed": args.seed, "goals": goals, "options": args.options}
        args.json.write_text(json.dumps({**meta, "relations": figures}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
