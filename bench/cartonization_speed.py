"""Cartonization speed: one order with every issue-5 feature at once.

Run from the repository root: ``python -m bench.cartonization_speed [--repeats N]``.

The order: 30 units (10 item sets of 3) into 15 fixed carton types, each rated by a
breakpoint table with ``dimFactor`` 139, plus one cartesian generator sampled to
``generatedBoxTypesMax`` 64 (so 79 box types in all), and 3 rules (an exclusion, an
orientation lock and a set-properties). Reports the median and p90 of the engine's
``packTime`` and of ``cartonize.pack`` wall time (generation, rules, rating and the
response model included; images off). Target: median wall time < 50 ms.

Every response must pass ``tests.validator.validate``; an invalid one makes the exit
status 1 and no figure is printed.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from typing import Any

import cartonize

from tests.validator import validate

TARGET_MS = 50.0

Wire = dict[str, Any]


def order() -> Wire:
    """The benchmark request; seeded, so every run packs the same order."""
    rng = random.Random(5)
    item_sets = [
        {
            "refId": i + 1,
            "name": f"{'glass' if i % 4 == 0 else 'item'} {i + 1}",
            "dimensions": {a: rng.randint(2, 9) for a in "xyz"},
            "weight": round(rng.uniform(0.2, 4.0), 1),
            "quantity": 3,
        }
        for i in range(10)
    ]
    rate = {
        "weights": [1, 2, 3, 5, 8, 12, 20, 30, 50],
        "rates": [800, 900, 1000, 1200, 1500, 1900, 2600, 3500, 5000],
        "dimFactor": 139,
    }
    box_types = [
        {
            "refId": 100 + b,
            "name": f"carton {b}",
            "dimensions": {"x": 4 + b, "y": 6 + b, "z": 8 + 2 * b},
            "weightMax": 70,
            "price": 50 + 10 * b,
            "rateTable": rate,
        }
        for b in range(15)
    ]
    generator = {
        "operation": "cartesian",
        "boxTypeDefaults": {"weightMax": 70, "rateTable": rate},
        "options": {
            "xRange": {"min": 4, "max": 24, "increment": 2},
            "yRange": {"min": 6, "max": 24, "increment": 2},
            "zRange": {"min": 8, "max": 36, "increment": 4},
            "limits": [{"metric": "length-plus-girth", "max": 108}],
            "priceComponents": [
                {
                    "key": "board",
                    "metric": "surface-area-rsc",
                    "aggregator": "max",
                    "thresholds": [0, 500, 1000, 2000],
                    "prices": [40, 70, 110, 180],
                }
            ],
            "noTrimToMaxExtent": True,
        },
    }
    rules = [
        {"operation": "exclude", "itemRefId": 1, "targetItemRefIds": [2, 3]},
        {
            "operation": "lock-orientation",
            "itemMatch": {"property": "name", "expression": "glass"},
            "options": {"freeAxes": [0]},
        },
        {
            "operation": "set-properties",
            "itemMatch": {"all": True},
            "options": {"properties": {"site": "A"}},
        },
    ]
    return {
        "orderId": "bench-cartonization",
        "itemSets": item_sets,
        "boxTypes": box_types,
        "boxTypeGenerators": [generator],
        "generatedBoxTypesMax": 64,
        "rules": rules,
        "includeImages": False,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args(argv)
    request = order()
    wall: list[float] = []
    engine: list[float] = []
    response: Wire = {}
    for _ in range(args.repeats):
        started = time.perf_counter()
        result = cartonize.pack(request)
        wall.append((time.perf_counter() - started) * 1000)
        engine.append(result.pack_time * 1000)
        response = result.model_dump(by_alias=True, exclude_none=True)
    problems = validate(request, response)
    if problems:
        print("FAILED: invalid response")
        for p in problems[:20]:
            print("  ", p)
        return 1

    def p90(xs: list[float]) -> float:
        return statistics.quantiles(xs, n=10)[-1] if len(xs) > 1 else xs[0]

    median = statistics.median(wall)
    verdict = "ok" if median < TARGET_MS else "MISS"
    boxes, cost = response["lenBoxes"], response["totalCost"]
    print(f"boxes {boxes}, leftovers {response['lenLeftovers']}, totalCost {cost}")
    print(f"packTime  median {statistics.median(engine):.2f} ms  p90 {p90(engine):.2f} ms")
    print(f"wall      median {median:.2f} ms  p90 {p90(wall):.2f} ms")
    print(f"target    wall median < {TARGET_MS:g} ms: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
