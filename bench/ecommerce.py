"""E-commerce orders against a priced carton catalogue with a carrier rate table.

Run from the repository root: ``python -m bench.ecommerce [--orders N] [--seed S]
[--cartons N] [--options JSON]`` (``--options`` adds request fields to every order).

Seeded orders of 1-40 units of 1-10 SKUs (drawn from a catalogue of 300 SKUs, sides 20 to
400 mm, weights from a density of 0.1-0.9 g/cm3) go through ``cartonize.pack`` with the
default goal (``lowest-cost``) against 15 cartons, each with a material price in cents and
the same carrier rate table: breakpoints in grams, ``dimFactor`` 5000 (mm3 per g, i.e.
5000 cm3/kg), so a light bulky parcel pays for its volume. Units are mm, g and cents.

``--cartons N`` replaces the 15 cartons with a seeded catalogue of N (a warehouse often
stocks 30-100): sides log-uniform over the range of the 15 (100-600 mm, the largest
carton always included so every SKU fits), the price growing with the carton's surface
(board used) as the 15's does, and the same rate table (``generated_cartons``).

Every response passes ``tests/validator.py``; an invalid one fails the run. The report
gives boxes and total cost, twice: the engine's ``totalCost`` and the cost recomputed here
from the rate table (``bench.common.box_cost``), which is the figure that compares with
the peers (``bench.peers``). The engine prices boxes by the rate table, so the two agree;
a difference is a pricing bug in one of them.

Order ``i`` of a run with ``--seed S`` is drawn with seed ``S + i``, so runs with nearby
seeds share most of their orders: compare seeds far apart (the recorded figures use 1).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cartonize

from bench.common import Wire, default_processes, median, point, response_cost, run_parallel
from tests.validator import validate

#: Carrier rate in cents by billed weight (g): the first breakpoint at or above it.
RATE_TABLE: Wire = {
    "weights": [500, 1000, 2000, 3000, 5000, 10000, 15000, 20000, 30000, 70000],
    "rates": [650, 780, 920, 1050, 1290, 1740, 2190, 2600, 3350, 5900],
    "dimFactor": 5000,
}

#: 15 cartons (mm, as x = height, y, z), price in cents of the carton itself, tare in g.
CARTONS: tuple[tuple[tuple[int, int, int], int, int], ...] = (
    ((100, 150, 200), 25, 60),
    ((150, 150, 150), 28, 70),
    ((100, 200, 300), 32, 90),
    ((150, 200, 250), 36, 110),
    ((200, 200, 200), 38, 120),
    ((150, 250, 350), 45, 150),
    ((200, 300, 300), 52, 190),
    ((250, 250, 400), 58, 220),
    ((200, 300, 450), 62, 240),
    ((300, 300, 300), 64, 250),
    ((250, 350, 450), 75, 310),
    ((300, 400, 500), 90, 400),
    ((350, 400, 600), 110, 500),
    ((400, 400, 400), 98, 450),
    ((400, 500, 600), 130, 650),
)
WEIGHT_MAX = 30000  # g, a parcel carrier's limit

Carton = tuple[tuple[int, int, int], int, int]

SKU_COUNT = 300


@dataclass(frozen=True)
class Sku:
    """One stock-keeping unit: dimensions (mm) and weight (g)."""

    ref_id: int
    dims: tuple[int, int, int]
    weight: int


def sku_catalogue(seed: int = 7) -> list[Sku]:
    """SKUs whose sides are mostly small (log-uniform 20..400 mm), the longest side
    capped so every SKU fits the largest carton; weight from a density of 0.1-0.9 g/cm3."""
    rng = random.Random(seed)
    skus = []
    for ref_id in range(SKU_COUNT):
        sides = sorted(int(20 * (20 ** rng.random())) for _ in range(3))
        sides = [min(sides[0], 380), min(sides[1], 480), min(sides[2], 580)]
        rng.shuffle(sides)
        density = rng.uniform(0.1, 0.9) / 1000  # g per mm3
        weight = max(5, round(sides[0] * sides[1] * sides[2] * density))
        weight = min(weight, 12000)
        skus.append(Sku(ref_id, (sides[0], sides[1], sides[2]), weight))
    return skus


def generated_cartons(count: int, seed: int = 11) -> tuple[Carton, ...]:
    """`count` seeded cartons: sides log-uniform 100..600 mm (x the smallest), the largest
    of the 15 first; price 15 cents plus 0.8 per dm2 of board, tare 4.4 g per dm2 of
    board, about what the 15 cost and weigh for their size."""
    rng = random.Random(seed)
    cartons: list[Carton] = [CARTONS[-1]]
    seen = {CARTONS[-1][0]}
    while len(cartons) < count:
        sides = sorted(10 * round(10 * (6 ** rng.random())) for _ in range(3))
        dims = (sides[0], sides[1], sides[2])
        if dims in seen:
            continue
        seen.add(dims)
        x, y, z = dims
        board = 2 * (x * y + y * z + x * z) / 10_000  # dm2
        cartons.append((dims, round(15 + 0.8 * board), round(4.4 * board)))
    return tuple(cartons)


def box_types(cartons: Sequence[Carton] = CARTONS) -> list[Wire]:
    """The carton catalogue as request box types, each with the carrier rate table."""
    return [
        {
            "refId": 100 + n,
            "dimensions": point(dims),
            "price": price,
            "weightTare": tare,
            "weightMax": WEIGHT_MAX,
            "rateTable": RATE_TABLE,
        }
        for n, (dims, price, tare) in enumerate(cartons)
    ]


def order(seed: int, skus: Sequence[Sku], cartons: Sequence[Carton] = CARTONS) -> Wire:
    """One order: 1-10 distinct SKUs, 1-40 units in all (at least one of each SKU)."""
    rng = random.Random(seed)
    kinds = rng.randint(1, 10)
    units = rng.randint(kinds, 40) if kinds < 40 else kinds
    chosen = rng.sample(list(skus), kinds)
    quantities = [1] * kinds
    for _ in range(units - kinds):
        quantities[rng.randrange(kinds)] += 1
    return {
        "orderId": f"order-{seed}",
        "itemSets": [
            {"refId": s.ref_id, "dimensions": point(s.dims), "weight": s.weight, "quantity": q}
            for s, q in zip(chosen, quantities, strict=True)
        ],
        "boxTypes": box_types(cartons),
        "includeImages": False,
    }


def orders(count: int, seed: int, cartons: Sequence[Carton] = CARTONS) -> list[Wire]:
    """`count` seeded orders from the seeded SKU catalogue, against `cartons`."""
    skus = sku_catalogue()
    return [order(seed + n, skus, cartons) for n in range(count)]


def pack_one(request: Wire) -> dict[str, Any]:
    """Pack one order; its figures and any validator violations."""
    start = time.perf_counter()
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    wall_ms = (time.perf_counter() - start) * 1000
    return {
        "boxes": response["lenBoxes"],
        "leftovers": response["lenLeftovers"],
        "engine_cost": response["totalCost"],
        "rated_cost": response_cost(request, response),
        "wall_ms": wall_ms,
        "problems": validate(request, response),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Pack the orders, print the summary, optionally write JSON; 1 if any is invalid."""
    parser = argparse.ArgumentParser(prog="python -m bench.ecommerce", description=__doc__)
    parser.add_argument("--orders", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--cartons", type=int, help="a generated catalogue of this many cartons instead of 15"
    )
    parser.add_argument(
        "--options",
        type=json.loads,
        default={},
        help="request fields added to every order, as JSON, e.g. "
        "'{\"itemInitialOrientationPreferred\": false}'",
    )
    parser.add_argument("--processes", type=int, default=default_processes())
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)

    cartons = generated_cartons(args.cartons) if args.cartons else CARTONS
    requests = [{**r, **args.options} for r in orders(args.orders, args.seed, cartons)]
    results = run_parallel(pack_one, requests, args.processes)
    invalid = [(n, r) for n, r in enumerate(results) if r["problems"]]
    catalogue = f"{len(cartons)} generated" if args.cartons else f"{len(cartons)}"
    shown = f", options {json.dumps(args.options)}" if args.options else ""
    print(f"e-commerce: {len(results)} orders (seed {args.seed}), {catalogue} cartons{shown}")
    if invalid:
        print(f"  FAILED: {len(invalid)} invalid results, no figures")
        for n, r in invalid[:10]:
            print(f"    order seed {args.seed + n}: {r['problems'][:3]}")
        return 1
    times = [r["wall_ms"] for r in results]
    figures = {
        "orders": len(results),
        "boxes": sum(r["boxes"] for r in results),
        "leftovers": sum(r["leftovers"] for r in results),
        "total cost, engine (cents)": sum(r["engine_cost"] for r in results),
        "total cost, rated here (cents)": round(sum(r["rated_cost"] for r in results)),
        "median wall ms": median(times),
        "max wall ms": max(times),
    }
    for name, value in figures.items():
        shown = f"{value:>12.2f}" if isinstance(value, float) else f"{value:>12}"
        print(f"  {name:<32}{shown}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
