"""A subset-DP oracle for small e-commerce orders: the cheapest partition of an order's
units into boxes, against the engine's answers.

Run from the repository root: ``python -m bench.oracle [--orders N] [--seed S]
[--max-units U] [--options JSON] [--verbose] [--processes P] [--json PATH]``.

For each of the seeded orders of ``bench.ecommerce`` (``orders(N, seed)``) with at most
U units, a dynamic programme over sub-multisets of its units (units of one SKU are
identical, so a sub-multiset is a quantity per item set) finds the cheapest partition
into boxes. A sub-multiset's single-box cost is that of its cheapest carton (by
``bench.common.box_cost`` at the gross weight) into which ``cartonize.pack``, with that
carton alone, ``boxesMax: 1`` and ``most-items``, packs it without leftovers; cartons
too small by volume, weight or any unit's sides are not tried. So the oracle is an
**upper bound built from the engine's own single-box fits, not a proof of optimality**:
a sub-multiset whose fit the single-box pack misses counts as not fitting, and then the
oracle can be dearer than the engine. Where it is cheaper, the engine missed a
partition whose every box it can itself pack.

The DP (``Oracle.best``) takes, for a multiset, the cheaper of its single box and every
split into a sub-multiset holding one unit of its first item set plus the best of the
rest (every partition has one part holding that unit); a part no cheaper than the best
found so far is skipped (prices are positive, so it cannot lead to a cheaper split).

The engine answers each order twice, with its defaults and with ``timeout: 1``, under
the same ``--options``; every engine response (single-box checks included) passes
``tests/validator.py`` or the run exits 1. The default options are
``{"itemInitialOrientationPreferred": false}``: with the default preferred-orientation
rule the engine keeps a unit as given wherever it fits, a procedure rather than a
constraint, so a partition of freely turned units is not one the engine's default could
be asked to match. Orders run in ``--processes`` worker processes, each pinned to one
core (``bench.common.run_parallel``): ``timeout: 1`` searches with one chain.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import math
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cartonize

from bench.common import (
    Wire,
    box_cost,
    default_processes,
    failed,
    response_cost,
    run_parallel,
    vec,
)
from bench.ecommerce import orders
from tests.validator import validate

DEFAULT_OPTIONS: Wire = {"itemInitialOrientationPreferred": False}

Multiset = tuple[int, ...]


def pack(request: Wire, problems: list[str], label: str) -> Wire:
    """`cartonize.pack` on a wire request; validator violations go to `problems`."""
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    problems += [f"{label}: {p}" for p in validate(request, response)]
    return response


@dataclass(frozen=True)
class Part:
    """One box of the oracle's partition: units per item set, the carton, its cost."""

    quantities: Multiset
    ref_id: Any
    cost: float


class Oracle:
    """The subset DP of one order (see the module docstring)."""

    def __init__(self, order: Wire, options: Wire) -> None:
        self.sets: list[Wire] = order["itemSets"]
        self.box_types: list[Wire] = order["boxTypes"]
        self.options = options
        self.quantities: Multiset = tuple(int(s["quantity"]) for s in self.sets)
        self.dims = [sorted(vec(s["dimensions"])) for s in self.sets]
        self.volumes = [math.prod(d) for d in self.dims]
        self.weights = [float(s.get("weight", 0)) for s in self.sets]
        self.calls = 0  # single-box packs
        self.problems: list[str] = []
        self._single: dict[Multiset, tuple[float, Any]] = {}
        self._best: dict[Multiset, tuple[float, Multiset | None]] = {}

    def single(self, ms: Multiset) -> tuple[float, Any]:
        """(cost, carton refId) of the cheapest carton the engine packs `ms` into alone
        with `boxesMax: 1`; (inf, None) if none."""
        if ms in self._single:
            return self._single[ms]
        volume = sum(m * v for m, v in zip(ms, self.volumes, strict=True))
        weight = sum(m * w for m, w in zip(ms, self.weights, strict=True))
        candidates = []
        for n, bt in enumerate(self.box_types):
            sides = sorted(vec(bt["dimensions"]))
            gross = weight + float(bt.get("weightTare", 0))
            if math.prod(sides) < volume or gross > float(bt["weightMax"]):
                continue
            if any(
                m and any(a > b for a, b in zip(d, sides, strict=True))
                for m, d in zip(ms, self.dims, strict=True)
            ):
                continue
            candidates.append((box_cost(bt, gross), n, bt))
        candidates.sort(key=lambda c: (c[0], c[1]))
        found: tuple[float, Any] = (math.inf, None)
        for cost, _, bt in candidates:
            request = {
                "itemSets": [dict(s, quantity=m) for s, m in zip(self.sets, ms, strict=True) if m],
                "boxTypes": [bt],
                "includeImages": False,
                "boxesMax": 1,
                "boxTypeChoiceGoal": "most-items",
                **self.options,
            }
            self.calls += 1
            r = pack(request, self.problems, f"single box {ms} in {bt['refId']}")
            if r["lenLeftovers"] == 0 and r["lenBoxes"] == 1:
                found = (cost, bt["refId"])
                break
        self._single[ms] = found
        return found

    def best(self, ms: Multiset) -> float:
        """Cost of the cheapest partition of `ms` into single boxes (inf if none)."""
        if not any(ms):
            return 0.0
        if ms in self._best:
            return self._best[ms][0]
        b, choice = self.single(ms)[0], None
        first = next(i for i, m in enumerate(ms) if m)
        ranges = [range(1 if i == first else 0, m + 1) for i, m in enumerate(ms)]
        for part in itertools.product(*ranges):
            if part == ms:
                continue
            cost = self.single(part)[0]
            if cost >= b:
                continue
            rest = tuple(a - c for a, c in zip(ms, part, strict=True))
            total = cost + self.best(rest)
            if total < b:
                b, choice = total, part
        self._best[ms] = (b, choice)
        return b

    def partition(self) -> list[Part]:
        """The boxes of the cheapest partition of the whole order (empty if none)."""
        if math.isinf(self.best(self.quantities)):
            return []
        parts = []
        ms = self.quantities
        while any(ms):
            choice = self._best[ms][1]
            part = ms if choice is None else choice
            cost, ref_id = self.single(part)
            parts.append(Part(part, ref_id, cost))
            ms = tuple(a - c for a, c in zip(ms, part, strict=True))
        return parts


def engine_parts(order: Wire, response: Wire) -> list[Multiset]:
    """The engine's boxes as multisets over the order's item sets."""
    index = {s["refId"]: n for n, s in enumerate(order["itemSets"])}
    parts = []
    for wrapper in response["boxes"]:
        counts = Counter(index[e["item"]["refId"]] for e in wrapper["box"]["items"])
        parts.append(tuple(counts[n] for n in range(len(order["itemSets"]))))
    return parts


def solve_order(order: Wire, options: Wire) -> dict[str, Any]:
    """The engine's default and `timeout: 1` costs and the oracle's, for one order."""
    problems: list[str] = []
    request = {**order, **options}
    default = pack(request, problems, f"{order['orderId']} default")
    timed = pack({**request, "timeout": 1}, problems, f"{order['orderId']} timeout 1")
    oracle = Oracle(order, options)
    cost = oracle.best(oracle.quantities)
    return {
        "order": order["orderId"],
        "units": sum(oracle.quantities),
        "engine": response_cost(request, default),
        "engine boxes": default["lenBoxes"],
        "engine leftovers": default["lenLeftovers"],
        "timeout 1": response_cost(request, timed),
        "timeout 1 leftovers": timed["lenLeftovers"],
        "oracle": cost if math.isfinite(cost) else None,
        "oracle boxes": len(oracle.partition()),
        "single-box packs": oracle.calls,
        "problems": problems + oracle.problems,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Solve the small orders, print the figures, optionally write JSON; 1 if any
    response is invalid."""
    parser = argparse.ArgumentParser(prog="python -m bench.oracle", description=__doc__)
    parser.add_argument("--orders", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-units", type=int, default=16)
    parser.add_argument(
        "--options",
        type=json.loads,
        default=DEFAULT_OPTIONS,
        help=f"request fields for the engine's requests and the single-box checks, as JSON "
        f"(default {json.dumps(DEFAULT_OPTIONS)})",
    )
    parser.add_argument("--verbose", action="store_true", help="one line per order")
    parser.add_argument("--processes", type=int, default=default_processes())
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)

    small = [
        o
        for o in orders(args.orders, args.seed)
        if sum(s["quantity"] for s in o["itemSets"]) <= args.max_units
    ]
    results = run_parallel(
        functools.partial(solve_order, options=args.options), small, args.processes
    )
    print(
        f"oracle: {len(results)} of {args.orders} e-commerce orders (seed {args.seed}) with at "
        f"most {args.max_units} units, options {json.dumps(args.options)}"
    )
    if failed([p for r in results for p in r["problems"]]):
        return 1
    if args.verbose:
        print(
            f"  {'order':<10} {'units':>5} {'engine':>8} {'timeout 1':>9} {'oracle':>8} "
            f"{'boxes e/o':>9} {'packs':>6}"
        )
        for r in results:
            oracle = "none" if r["oracle"] is None else f"{r['oracle']:.0f}"
            print(
                f"  {r['order']:<10} {r['units']:>5} {r['engine']:>8.0f} {r['timeout 1']:>9.0f} "
                f"{oracle:>8} {r['engine boxes']:>4}/{r['oracle boxes']:<4} "
                f"{r['single-box packs']:>6}"
            )
    solved = [r for r in results if r["oracle"] is not None]
    engine = sum(r["engine"] for r in solved)
    timed = sum(r["timeout 1"] for r in solved)
    oracle = sum(r["oracle"] for r in solved)
    eps = 1e-6
    cheaper = [r for r in solved if r["oracle"] < min(r["engine"], r["timeout 1"]) - eps]
    figures: dict[str, Any] = {
        "orders": len(results),
        "orders without an oracle partition": len(results) - len(solved),
        "engine leftovers": sum(r["engine leftovers"] + r["timeout 1 leftovers"] for r in results),
        "engine, default (cents)": round(engine),
        "engine, timeout 1 (cents)": round(timed),
        "oracle (cents)": round(oracle),
        "gap default vs oracle %": 100 * (engine / oracle - 1) if oracle else 0.0,
        "gap timeout 1 vs oracle %": 100 * (timed / oracle - 1) if oracle else 0.0,
        "oracle cheaper than default": sum(1 for r in solved if r["oracle"] < r["engine"] - eps),
        "oracle cheaper than timeout 1": sum(
            1 for r in solved if r["oracle"] < r["timeout 1"] - eps
        ),
        "oracle cheaper than both": len(cheaper),
        "oracle dearer than default": sum(1 for r in solved if r["oracle"] > r["engine"] + eps),
        "single-box packs": sum(r["single-box packs"] for r in results),
    }
    for name, value in figures.items():
        shown = f"{value:>12.3f}" if isinstance(value, float) else f"{value:>12}"
        print(f"  {name:<38}{shown}")
    for r in cheaper:
        print(
            f"    oracle cheaper: {r['order']} ({r['units']} units): engine {r['engine']:.0f}, "
            f"timeout 1 {r['timeout 1']:.0f}, oracle {r['oracle']:.0f}"
        )
    for r in solved:
        if r["oracle"] > r["engine"] + eps:
            print(
                f"    oracle dearer (its single-box check missed a fit): {r['order']} "
                f"({r['units']} units): engine {r['engine']:.0f}, oracle {r['oracle']:.0f}"
            )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        per_order = [{k: v for k, v in r.items() if k != "problems"} for r in results]
        args.json.write_text(json.dumps({**figures, "per order": per_order}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
