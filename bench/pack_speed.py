"""Pack speed and packing quality benchmark.

Run from the repository root: ``python -m bench.pack_speed [--json PATH]``.

Six workloads, all seeded so that every run packs the same requests:

- **small orders**: 20 units of 5 item sets into a catalogue of 10 cartons, default
  options (``boxTypeChoiceStyle`` actual, ``itemSort`` combined), many different orders.
  Reports the median and p90 of the engine's own ``packTime`` and the median wall time of
  ``cartonize.pack`` (conversion included). Target: median pack time < 5 ms.
- **deep small orders**: the same small orders with ``boxTypeChoiceLookahead: 1``,
  ``itemInitialOrientationPreferred: false`` and ``itemOrientationSearchDepth: 2`` (the
  search depth only acts with the preference off), as the issue asks; no target. Reports
  pack times and the boxes and cost against the default options on the same orders.
- **large order**: 1,000 distinct items with sides 50..350 into 3 carton sizes, goal
  ``most-items`` (fewest boxes), other options default. Reports
  pack time (target < 300 ms) and boxes used against the volume lower bound
  ceil(sum of item volumes / largest box volume) (target <= 1.08 x the bound).
- **order at the item limit**: 10,000 units (the service's default limit per request) of
  50 SKUs into a catalogue of 100 priced cartons, default options (lowest cost). Reports
  pack time, boxes and cost; no target (it took 30 s, the service's time limit, until the
  layers grouped units of one SKU).
- **10,000 distinct units**: 10,000 one-unit item sets (sides 1..9) into 100 box types
  (sides 10..40) priced at random, default options (``distinct_units``). Reports pack
  time, boxes and cost; no target (about 5 s until the layers kept their footprints in
  cells by width and length, branch layers-speed).
- **order against generated sizes**: 100 units of 20 SKUs, one stock carton and a
  cartesian generator of sizes on a 2-unit grid (37,584 sizes, sampled to 4,096 as
  ``generatedBoxTypesMax`` 0 does), priced by volume bands, default options: what a
  box-on-demand user sends. Reports pack time, boxes and cost, also with
  ``boxTypeChoiceLookahead: 1``; no target (it took 15 s until re-boxing skipped box types
  without the room, session 14; with lookahead it ran into the service's time limit).

Every response must pass ``tests.validator.validate``; an invalid response is reported as
a failure with its violations, never as a number, and makes the exit status 1. Missing a
target is reported in the table but is not an error.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import cartonize

from bench.common import box_on_demand
from tests.validator import validate

Wire = dict[str, Any]

SMALL_ORDER_TARGET_MS = 5.0
LARGE_ORDER_TARGET_MS = 300.0
LARGE_ORDER_TARGET_RATIO = 1.08

# Ten common shipping cartons in inches, as height (x) by width (y) by length (z).
CARTONS = [
    (4, 6, 8),
    (6, 6, 6),
    (6, 8, 10),
    (8, 8, 8),
    (8, 10, 12),
    (10, 12, 14),
    (12, 12, 12),
    (12, 14, 16),
    (14, 16, 18),
    (16, 18, 24),
]

# Large-order cartons in mm. Every item (sides <= 350) fits every carton in every
# orientation, so the result measures packing rather than feasibility; the volumes
# (1.0, 0.96 and 0.288 m^3) give the box choice a real decision, and the two large
# types are nearly equal so the bound (from the largest) stays honest.
LARGE_CARTONS = [(1000, 1000, 1000), (1200, 1000, 800), (800, 600, 600)]


@dataclass
class Workload:
    """Figures of one workload; ``violations`` non-empty means its figures are void."""

    name: str
    figures: dict[str, float] = field(default_factory=dict)
    targets: dict[str, tuple[float, str]] = field(default_factory=dict)  # figure: (limit, op)
    violations: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        """Whether every response of the workload passed the validator."""
        return not self.violations


def point(dims: Sequence[float]) -> dict[str, float]:
    """A wire Point from (x, y, z)."""
    x, y, z = dims
    return {"x": x, "y": y, "z": z}


def small_order(seed: int) -> Wire:
    """20 units of 5 item sets (sides 1..10 in, one decimal) into the 10 cartons."""
    rng = random.Random(seed)
    # Split 20 units over 5 sets, each at least one: 4 cut points in 1..19.
    cuts = sorted(rng.sample(range(1, 20), 4))
    quantities = [b - a for a, b in zip([0, *cuts], [*cuts, 20], strict=True)]
    item_sets = [
        {
            "refId": ref_id,
            "dimensions": point([rng.randint(10, 100) / 10 for _ in range(3)]),
            "weight": rng.randint(1, 30) / 10,
            "quantity": quantity,
        }
        for ref_id, quantity in enumerate(quantities)
    ]
    box_types = [
        {"refId": 100 + n, "dimensions": point(dims), "weightMax": 50, "weightTare": 0.5}
        for n, dims in enumerate(CARTONS)
    ]
    # Images are off: rendering is not packing, and the real service times it separately.
    return {"itemSets": item_sets, "boxTypes": box_types, "includeImages": False}


def large_order(seed: int) -> Wire:
    """1,000 distinct items with sides 50..350 mm into the 3 large cartons."""
    rng = random.Random(seed)
    item_sets = [
        {
            "refId": ref_id,
            "dimensions": point([rng.randint(50, 350) for _ in range(3)]),
            "weight": rng.randint(1, 150) / 10,
            "quantity": 1,
        }
        for ref_id in range(1000)
    ]
    # weightMax far above what fits by volume: this workload is about geometry.
    box_types = [
        {"refId": 200 + n, "dimensions": point(dims), "weightMax": 100_000, "weightTare": 5}
        for n, dims in enumerate(LARGE_CARTONS)
    ]
    # most-items: the figure is a box count, and lowest-cost (cost = volume here) would
    # trade more, smaller boxes for less total volume.
    return {
        "itemSets": item_sets,
        "boxTypes": box_types,
        "boxTypeChoiceGoal": "most-items",
        "includeImages": False,
    }


def order_at_the_limit(seed: int) -> Wire:
    """10,000 units of 50 SKUs (sides 20..180 mm) into 100 cartons (sides 200..800 mm)
    priced by board area."""
    rng = random.Random(seed)
    item_sets = [
        {
            "refId": ref_id,
            "dimensions": point([rng.randint(20, 180) for _ in range(3)]),
            "weight": rng.randint(1, 50) / 10,
            "quantity": 200,
        }
        for ref_id in range(50)
    ]
    box_types = []
    for n in range(100):
        dims = [rng.randint(200, 800) for _ in range(3)]
        board = 2 * (dims[0] * dims[1] + dims[1] * dims[2] + dims[0] * dims[2]) / 1e4
        box_types.append(
            {
                "refId": 300 + n,
                "dimensions": point(dims),
                "weightMax": 1000,
                "weightTare": 0.5,
                "price": 15 + round(0.8 * board),
            }
        )
    return {"itemSets": item_sets, "boxTypes": box_types, "includeImages": False}


def distinct_mm_units(seed: int, units: int = 10_000) -> Wire:
    """``units`` one-unit item sets of sides 20..180 mm (sizes that rarely repeat) into
    `order_at_the_limit`'s cartons: where the box-choice trial fills, not the layers, take
    the time (docs/benchmarks.md, "Trial fills of distinct mm units")."""
    rng = random.Random(seed)
    item_sets = [
        {
            "refId": ref_id,
            "dimensions": point([rng.randint(20, 180) for _ in range(3)]),
            "weight": rng.randint(1, 50) / 10,
            "quantity": 1,
        }
        for ref_id in range(units)
    ]
    cartons = order_at_the_limit(seed)["boxTypes"]
    return {"itemSets": item_sets, "boxTypes": cartons, "includeImages": False}


def distinct_units(seed: int, units: int = 10_000) -> Wire:
    """``units`` one-unit item sets (every unit a distinct item, sides 1..9) into 100 box
    types (sides 10..40) priced at random, default options: the shape of
    ``bench.layers_ab``'s ``distinct`` set."""
    rng = random.Random(seed)
    item_sets = [
        {
            "refId": ref_id,
            "dimensions": point([rng.randint(1, 9) for _ in range(3)]),
            "weight": rng.randint(1, 30) / 10,
            "quantity": 1,
        }
        for ref_id in range(units)
    ]
    box_types = [
        {
            "refId": 100_000 + n,
            "dimensions": point([rng.randint(10, 40) for _ in range(3)]),
            "weightMax": 0,
            "price": rng.randint(50, 500),
        }
        for n in range(100)
    ]
    return {"itemSets": item_sets, "boxTypes": box_types, "includeImages": False}


def order_with_generated_sizes(seed: int) -> Wire:
    """100 units of 20 SKUs, one stock carton and 4,096 of 37,584 generated sizes."""
    rng = random.Random(seed)
    item_sets = [
        {
            "refId": ref_id,
            "dimensions": point([rng.randint(5, 40), rng.randint(5, 40), rng.randint(2, 30)]),
            "weight": rng.randint(1, 50),
            "quantity": 5,
        }
        for ref_id in range(20)
    ]
    return {"itemSets": item_sets, **box_on_demand(), "includeImages": False}


def timed_pack(request: Wire) -> tuple[Wire, float]:
    """Pack and return the wire response and the wall time in ms."""
    start = time.perf_counter()
    response = cartonize.pack(request)
    wall_ms = (time.perf_counter() - start) * 1000
    return response.model_dump(by_alias=True, exclude_none=True), wall_ms


def median_render_ms(requests: Sequence[Wire]) -> float:
    """Median ``renderTime`` (SVG pictures) of the same requests with images on, so render
    time can be read next to pack time."""
    return statistics.median(
        float(cartonize.pack({**r, "includeImages": True}).render_time) * 1000 for r in requests
    )


def percentile(values: Sequence[float], q: int) -> float:
    """The q-th percentile (inclusive method, so small samples stay within their range)."""
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def run_small_orders(orders: int, seed: int) -> Workload:
    """Pack ``orders`` different small orders and summarise their times."""
    workload = Workload(
        "small orders (20 units, 10 box types)",
        targets={"median pack ms": (SMALL_ORDER_TARGET_MS, "<")},
    )
    pack_ms, wall_ms = [], []
    for n in range(orders):
        request = small_order(seed + n)
        response, wall = timed_pack(request)
        problems = validate(request, response)
        if problems:
            workload.violations += [f"order seed {seed + n}: {p}" for p in problems]
            continue
        pack_ms.append(float(response["packTime"]) * 1000)
        wall_ms.append(wall)
    if workload.valid:
        workload.figures = {
            "orders": orders,
            "median pack ms": statistics.median(pack_ms),
            "p90 pack ms": percentile(pack_ms, 90),
            "median wall ms": statistics.median(wall_ms),
            "median render ms (svg)": median_render_ms(
                [small_order(seed + n) for n in range(min(orders, 50))]
            ),
        }
    return workload


#: The tuning the deep workload adds to each small order.
DEEP_OPTIONS: Wire = {
    "boxTypeChoiceLookahead": 1,
    "itemInitialOrientationPreferred": False,
    "itemOrientationSearchDepth": 2,
}


def run_deep_small_orders(orders: int, seed: int) -> Workload:
    """Pack ``orders`` small orders with ``DEEP_OPTIONS`` and with defaults; summarise the
    deep packs' times and both totals."""
    workload = Workload("small orders, lookahead 1 + orientation search depth 2")
    pack_ms: list[float] = []
    boxes = [0, 0]  # deep, default
    cost = [0, 0]
    for n in range(orders):
        plain = small_order(seed + n)
        request = {**plain, **DEEP_OPTIONS}
        for i, req in enumerate((request, plain)):
            response, _ = timed_pack(req)
            problems = validate(req, response)
            if problems:
                workload.violations += [f"order seed {seed + n}: {p}" for p in problems]
                continue
            if i == 0:
                pack_ms.append(float(response["packTime"]) * 1000)
            boxes[i] += response["lenBoxes"]
            cost[i] += response["totalCost"]
    if workload.valid:
        workload.figures = {
            "orders": orders,
            "median pack ms": statistics.median(pack_ms),
            "p90 pack ms": percentile(pack_ms, 90),
            "boxes (deep)": boxes[0],
            "boxes (default)": boxes[1],
            "total cost (deep)": cost[0],
            "total cost (default)": cost[1],
        }
    return workload


def repeated_pack(
    request: Wire, repeats: int, workload: Workload
) -> tuple[Wire, list[float], list[float]] | None:
    """Pack ``request`` ``repeats`` times: the last response, pack and wall ms of each;
    None (the violations added to ``workload``) when a response fails the validator."""
    pack_ms: list[float] = []
    wall_ms: list[float] = []
    response: Wire = {}
    for _ in range(repeats):
        response, wall = timed_pack(request)
        problems = validate(request, response)
        if problems:
            workload.violations += problems
            return None
        pack_ms.append(float(response["packTime"]) * 1000)
        wall_ms.append(wall)
    return response, pack_ms, wall_ms


def run_large_order(repeats: int, seed: int) -> Workload:
    """Pack the large order ``repeats`` times; report median times and box count."""
    workload = Workload(
        "large order (1,000 items, 3 box types)",
        targets={
            "median pack ms": (LARGE_ORDER_TARGET_MS, "<"),
            "boxes / bound": (LARGE_ORDER_TARGET_RATIO, "<="),
        },
    )
    request = large_order(seed)
    packed = repeated_pack(request, repeats, workload)
    if packed is None:
        return workload
    response, pack_ms, wall_ms = packed
    item_volume = sum(math.prod(s["dimensions"].values()) for s in request["itemSets"])
    bound = math.ceil(item_volume / max(math.prod(dims) for dims in LARGE_CARTONS))
    workload.figures = {
        "median pack ms": statistics.median(pack_ms),
        "median wall ms": statistics.median(wall_ms),
        "boxes": response["lenBoxes"],
        "leftovers": response["lenLeftovers"],
        "volume bound": bound,
        "boxes / bound": response["lenBoxes"] / bound,
        "render ms (svg)": median_render_ms([request]),
        "utilisation": response["totalVolumeNet"] / response["totalVolume"],
    }
    return workload


def run_order_at_the_limit(repeats: int, seed: int) -> Workload:
    """Pack the order at the item limit ``repeats`` times; median times, boxes, cost."""
    workload = Workload("order at the item limit (10,000 units of 50 SKUs, 100 box types)")
    request = order_at_the_limit(seed)
    packed = repeated_pack(request, repeats, workload)
    if packed is None:
        return workload
    workload.figures = _order_figures(*packed)
    return workload


def _order_figures(response: Wire, pack_ms: list[float], wall_ms: list[float]) -> dict[str, Any]:
    """Median times, boxes, leftovers, cost and utilisation of one order packed repeatedly."""
    return {
        "median pack ms": statistics.median(pack_ms),
        "median wall ms": statistics.median(wall_ms),
        "boxes": response["lenBoxes"],
        "leftovers": response["lenLeftovers"],
        "total cost": response["totalCost"],
        "utilisation": response["totalVolumeNet"] / response["totalVolume"],
    }


def run_distinct_units(repeats: int, seed: int) -> Workload:
    """Pack the 10,000 distinct units ``repeats`` times; median times, boxes, cost."""
    workload = Workload("10,000 distinct units (one unit per item set, 100 box types)")
    packed = repeated_pack(distinct_units(seed), repeats, workload)
    if packed is None:
        return workload
    workload.figures = _order_figures(*packed)
    return workload


def run_generated_sizes(repeats: int, seed: int) -> Workload:
    """Pack the order against generated sizes ``repeats`` times; median times, boxes, cost."""
    workload = Workload("order against generated sizes (100 units of 20 SKUs, 4,097 box types)")
    request = order_with_generated_sizes(seed)
    packed = repeated_pack(request, repeats, workload)
    if packed is None:
        return workload
    ahead = repeated_pack({**request, "boxTypeChoiceLookahead": 1}, 1, workload)
    if ahead is None:
        return workload
    workload.figures = {
        **_order_figures(*packed),
        "lookahead 1 pack ms": ahead[1][0],
        "lookahead 1 cost": ahead[0]["totalCost"],
    }
    return workload


def verdict(workload: Workload, name: str) -> str:
    """'ok' or 'MISS' for a figure with a target, '' for one without."""
    if name not in workload.targets:
        return ""
    limit, op = workload.targets[name]
    value = workload.figures[name]
    met = value < limit if op == "<" else value <= limit
    return f"{'ok' if met else 'MISS'} (target {op} {limit:g})"


def print_table(workloads: Sequence[Workload]) -> None:
    """Print one row per figure, or the violations of an invalid workload."""
    for workload in workloads:
        print(f"\n{workload.name}")
        if not workload.valid:
            print(f"  FAILED: {len(workload.violations)} validator violations, no figures")
            for problem in workload.violations[:10]:
                print(f"    {problem}")
            continue
        for name, value in workload.figures.items():
            shown = f"{value:>10.3f}" if isinstance(value, float) else f"{value:>10}"
            print(f"  {name:<16} {shown}  {verdict(workload, name)}".rstrip())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the workloads, print the table, optionally write JSON; 1 if any is invalid."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.pack_speed", description="Pack speed and packing quality."
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--orders", type=int, default=200, help="small orders to pack")
    parser.add_argument(
        "--deep-orders", type=int, default=100, help="small orders packed with deep options"
    )
    parser.add_argument("--repeats", type=int, default=5, help="packs of the large order")
    parser.add_argument(
        "--limit-repeats",
        type=int,
        default=1,
        help="packs of the order at the item limit, the distinct units and the order against "
        "generated sizes",
    )
    parser.add_argument("--seed", type=int, default=1, help="first seed of the workloads")
    args = parser.parse_args(argv)

    workloads = [
        run_small_orders(args.orders, args.seed),
        run_deep_small_orders(args.deep_orders, args.seed),
        run_large_order(args.repeats, args.seed),
        run_order_at_the_limit(args.limit_repeats, args.seed),
        run_distinct_units(args.limit_repeats, args.seed),
        run_generated_sizes(args.limit_repeats, args.seed),
    ]
    print_table(workloads)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps([asdict(w) for w in workloads], indent=2) + "\n")
    return 0 if all(w.valid for w in workloads) else 1


if __name__ == "__main__":
    sys.exit(main())
