"""Requests under box-count limits: how many units they leave over and what they cost,
recorded so that two builds can be compared request by request.

Run from the repository root:

- ``python -m bench.limited [--orders N] [--random R] [--record FILE]``: packs two sets
  and prints, per set, the requests, the requests with units left over, the units left
  over and the total cost; ``--record`` writes each request's (leftovers, cost, boxes).
- ``python -m bench.limited --compare FILE`` (with the same ``--orders`` / ``--random``):
  the same, and per request better / worse / same than the recorded run by the goal's
  order (fewer leftovers first, then cost and boxes under ``lowest-cost``, boxes and cost
  under ``most-items``).

The sets (docs/decisions.md, "A box-count limit never loses to the unlimited answer" and
"`boxesMax: 1` with a dozen units or fewer"):

- ``orders``: the first N ``bench.ecommerce`` orders (seed 1) under both goals, each with
  ``boxesMax`` 1, k - 1, k and k + 1 for the box count k of its unlimited answer, and with
  ``boxesPerItemSetMax: 1``; then 1,500 seeded small orders (1-5 item sets of sides 1-9,
  1-8 units each, 1-3 priced carton types of sides 9-16) under ``boxesMax`` 1-3,
  ``boxesPerItemSetMax`` 1-2 or both;
- ``tight``: R seeded requests of at most 12 units (1-4 item sets of sides 2-9) into one
  carton of 70-95 % more volume than the units', each side scaled by 0.8-1.25, under
  ``boxesMax: 1``, items free to turn in half of them: most cannot fit, the rest test
  the fit.

To A/B two builds: ``--record`` on one, ``--compare`` on the other (``make develop`` in
between). Every response passes ``tests/validator.py``; an invalid one exits 1.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import cartonize

from bench.common import Wire, failed, goal_order
from bench.ecommerce import orders
from tests.validator import validate

Result = tuple[int, float, int]  # leftovers, cost, boxes


def _pack(req: Wire) -> tuple[Result, list[str]]:
    response = cartonize.pack(req).model_dump(by_alias=True, exclude_none=True)
    result = (response["lenLeftovers"], response["totalCost"], response["lenBoxes"])
    return result, validate(req, response)


def order_requests(count: int) -> Iterator[Wire]:
    """The ``orders`` set (see the module docstring)."""
    for o in orders(count, 1):
        for goal in ("lowest-cost", "most-items"):
            req = o | {"boxTypeChoiceGoal": goal}
            k = cartonize.pack(req).len_boxes
            for limit in sorted({1, max(1, k - 1), k, k + 1}):
                yield req | {"boxesMax": limit}
            yield req | {"boxesPerItemSetMax": 1}
    rng = random.Random(5)
    for _ in range(1500):
        item_sets = [
            {
                "refId": i + 1,
                "dimensions": {a: rng.randint(1, 9) for a in "xyz"},
                "weight": rng.randint(1, 40) / 10,
                "quantity": rng.randint(1, 8),
            }
            for i in range(rng.randint(1, 5))
        ]
        box_types = [
            {
                "refId": 100 + b,
                "dimensions": {a: rng.randint(9, 16) for a in "xyz"},
                "weightMax": rng.choice([0, 30]),
                "price": rng.randint(1, 300),
            }
            for b in range(rng.randint(1, 3))
        ]
        limits: Wire = rng.choice(
            [
                {"boxesMax": rng.randint(1, 3)},
                {"boxesPerItemSetMax": rng.randint(1, 2)},
                {"boxesMax": 1, "boxesPerItemSetMax": 1},
            ]
        )
        yield {
            "itemSets": item_sets,
            "boxTypes": box_types,
            "boxTypeChoiceGoal": rng.choice(["lowest-cost", "most-items"]),
            "itemInitialOrientationPreferred": rng.random() < 0.5,
            "includeImages": False,
            "orderId": "limited",
            **limits,
        }


def tight_requests(count: int) -> Iterator[Wire]:
    """The ``tight`` set (see the module docstring)."""
    rng = random.Random(1)
    for _ in range(count):
        kinds = [
            ([rng.randint(2, 9) for _ in "xyz"], rng.randint(1, 4))
            for _ in range(rng.randint(1, 4))
        ]
        item_sets: list[Wire] = [
            {
                "refId": i + 1,
                "dimensions": dict(zip("xyz", sides, strict=True)),
                "weight": 1,
                "quantity": quantity,
            }
            for i, (sides, quantity) in enumerate(kinds)
        ]
        units = sum(quantity for _, quantity in kinds)
        volume = sum(math.prod(sides) * quantity for sides, quantity in kinds)
        side = (volume / rng.uniform(0.7, 0.95)) ** (1 / 3)
        box = {a: round(side * rng.uniform(0.8, 1.25), 1) for a in "xyz"}
        free = rng.random() < 0.5
        if units > 12:
            continue
        yield {
            "itemSets": item_sets,
            "boxTypes": [{"refId": 1, "dimensions": box, "weightMax": 0}],
            "boxesMax": 1,
            "includeImages": False,
            "orderId": "tight",
            "itemInitialOrientationPreferred": not free,
        }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--orders", type=int, default=300)
    parser.add_argument("--random", type=int, default=3000, help="tight requests to draw")
    parser.add_argument("--record", type=Path, help="write each request's result here")
    parser.add_argument("--compare", type=Path, help="compare with a recorded run")
    args = parser.parse_args(argv)
    sets = {
        "orders": list(order_requests(args.orders)),
        "tight": list(tight_requests(args.random)),
    }
    recorded = json.loads(args.compare.read_text()) if args.compare else None
    out: dict[str, list[Result]] = {}
    problems: list[str] = []
    for name, requests in sets.items():
        results = []
        for n, req in enumerate(requests):
            result, found = _pack(req)
            results.append(result)
            problems += [f"{name} #{n}: {p}" for p in found[:3]]
        out[name] = results
    if failed(problems):
        return 1
    for name, results in out.items():
        over = [r for r in results if r[0]]
        print(
            f"{name}: {len(results)} requests, {len(over)} with units left over "
            f"({sum(r[0] for r in results)} units), total cost {sum(r[1] for r in results):g}"
        )
        if recorded is None:
            continue
        before: list[Result] = [(int(r[0]), float(r[1]), int(r[2])) for r in recorded[name]]
        if len(before) != len(results):
            print(f"  the recorded run has {len(before)} {name} requests: not comparable")
            return 1
        goals = [req.get("boxTypeChoiceGoal", "lowest-cost") for req in sets[name]]
        pairs = list(zip(goals, results, before, strict=True))
        better = sum(goal_order(g, *r) < goal_order(g, *b) for g, r, b in pairs)
        worse = sum(goal_order(g, *r) > goal_order(g, *b) for g, r, b in pairs)
        print(f"  against {args.compare}: {better} better, {worse} worse")
    if args.record:
        args.record.parent.mkdir(parents=True, exist_ok=True)
        args.record.write_text(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
