"""Large orders through the layer construction: CPU and a hash of each full response, so
two builds can be compared request by request (the same hashes: the same answers).

Run from the repository root:
``python -m bench.layers_ab [--baseline DIR] [--set large|random|distinct|all]``.
With ``--baseline``, DIR holds another copy of the ``cartonize`` package (another
``_core`` build copied in); it is imported in a separate process and both columns are
printed. Sets, all seeded:

- ``large``: eight orders of 800-4,000 units in 40-3,000 item sets, 8-100 box types;
- ``random``: 160 orders of 200-1,500 units in 5-300 item sets, 3-80 box types priced
  at random, by board area, by linear rate tables with dimensional weight, mixed or not
  at all, both goals;
- ``distinct``: one unit per item set, 2,000-10,000 units, 100-1,000 box types.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

Wire = dict[str, Any]
#: (label, CPU seconds, hash of the full response) of one request.
Row = tuple[str, float, str]

LARGE = [
    (1000, 1000, 20, "lowest-cost"),
    (1500, 50, 30, "lowest-cost"),
    (1200, 300, 10, "most-items"),
    (2000, 2000, 8, "lowest-cost"),
    (800, 40, 60, "most-items"),
    (3000, 100, 25, "lowest-cost"),
    (4000, 50, 100, "lowest-cost"),
    (3000, 3000, 60, "most-items"),
]
DISTINCT = [(4000, 100), (2000, 1000), (10000, 100)]


def _items(rng: random.Random, kinds: int, quantity: int, z: int = 12) -> list[Wire]:
    return [
        {
            "refId": i,
            "dimensions": {"x": rng.randint(1, 9), "y": rng.randint(1, 9), "z": rng.randint(1, z)},
            "weight": rng.uniform(0.1, 3),
            "quantity": quantity,
        }
        for i in range(kinds)
    ]


def _box(rng: random.Random, ref_id: int) -> Wire:
    d = [rng.randint(10, 40) for _ in range(3)]
    return {"refId": ref_id, "dimensions": {"x": d[0], "y": d[1], "z": d[2]}}


def large() -> Iterator[tuple[str, Wire]]:
    """The eight large orders."""
    for seed, (units, kinds, types, goal) in enumerate(LARGE):
        rng = random.Random(seed)
        items = _items(rng, kinds, max(1, units // kinds))
        boxes = [
            _box(rng, 100_000 + j)
            | {"weightMax": rng.choice([0, 200, 500]), "price": rng.randint(50, 500)}
            for j in range(types)
        ]
        yield (
            f"large {units}/{kinds}/{types} {goal}",
            {
                "includeImages": False,
                "boxTypeChoiceGoal": goal,
                "itemSets": items,
                "boxTypes": boxes,
            },
        )


def priced(seed: int) -> Wire:
    """One of the random orders: its catalogue priced one of five ways."""
    rng = random.Random(seed)
    kinds = rng.choice([5, 20, 60, 300])
    units = rng.choice([200, 600, 1500])
    types = rng.choice([3, 10, 30, 80])
    pricing = rng.choice(["random", "board", "rate", "mixed", "none"])
    boxes = []
    for j in range(types):
        b = _box(rng, 1000 + j) | {
            "weightMax": rng.choice([0, 300]),
            "weightTare": rng.choice([0, 0.5]),
        }
        d = [b["dimensions"][a] for a in "xyz"]
        board = 2 * (d[0] * d[1] + d[1] * d[2] + d[0] * d[2])
        if pricing == "random" or (pricing == "mixed" and j % 2):
            b["price"] = rng.randint(50, 500)
        if pricing == "board":
            b["price"] = 10 + board // 20
        if pricing in ("rate", "mixed"):
            b["rateTable"] = {
                "basePrice": rng.randint(0, 300),
                "priceIncreaseRate": rng.choice([0.5, 2, 5]),
                "dimFactor": rng.choice([-1, 139, 5000]),
            }
        boxes.append(b)
    goal = rng.choice(["lowest-cost", "lowest-cost", "most-items"])
    return {
        "includeImages": False,
        "boxTypeChoiceGoal": goal,
        "itemSets": _items(rng, kinds, max(1, units // kinds)),
        "boxTypes": boxes,
    }


def distinct() -> Iterator[tuple[str, Wire]]:
    """One unit per item set against many box types priced at random."""
    for units, types in DISTINCT:
        rng = random.Random(1)
        items = _items(rng, units, 1, z=9)
        boxes = [
            _box(rng, 100_000 + j) | {"weightMax": 0, "price": rng.randint(50, 500)}
            for j in range(types)
        ]
        yield (
            f"distinct {units}/{types}",
            {
                "includeImages": False,
                "itemSets": items,
                "boxTypes": boxes,
            },
        )


def requests(which: str) -> Iterator[tuple[str, Wire]]:
    """The named set's requests, labelled."""
    if which in ("large", "all"):
        yield from large()
    if which in ("random", "all"):
        for seed in range(160):
            yield f"random {seed}", priced(seed)
    if which in ("distinct", "all"):
        yield from distinct()


def run(which: str) -> list[Row]:
    """(label, CPU seconds, response hash) of each request, packed here."""
    import cartonize

    out = []
    for label, request in requests(which):
        started = time.process_time()
        wire = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
        cpu = time.process_time() - started
        for timing in ("packTime", "renderTime", "totalTime", "startedAt", "built"):
            wire.pop(timing, None)
        digest = hashlib.sha256(json.dumps(wire, sort_keys=True).encode()).hexdigest()[:16]
        out.append((f"{label}: {wire['lenBoxes']} boxes, {wire.get('totalCost')}", cpu, digest))
    return out


def report(here: list[Row], there: list[Row]) -> tuple[list[str], int]:
    """One line per request (with the baseline's CPU and whether its answer is the same,
    when there is a baseline) and a total; and how many answers differ."""
    lines = []
    differ = 0
    for n, (label, cpu, digest) in enumerate(here):
        line = f"{label:<48} {cpu:8.2f} s  {digest}"
        if there:
            _, base_cpu, base_digest = there[n]
            same = base_digest == digest
            differ += not same
            line += f"   baseline {base_cpu:8.2f} s  {'same' if same else 'DIFFERS'}"
        lines.append(line)
    total = f"CPU in all: {sum(c for _, c, _ in here):.2f} s"
    if there:
        total += f", baseline {sum(c for _, c, _ in there):.2f} s; {differ} answers differ"
    lines.append(total)
    return lines, differ


def main(argv: Sequence[str] | None = None) -> int:
    """Print CPU and hash per request (and the baseline's); 1 if an answer differs."""
    parser = argparse.ArgumentParser(prog="python -m bench.layers_ab", description=__doc__)
    parser.add_argument("--baseline", type=Path, help="a directory holding another cartonize")
    parser.add_argument("--set", default="all", choices=["large", "random", "distinct", "all"])
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(run(args.set)))
        return 0
    here = run(args.set)
    there: list[Row] = []
    if args.baseline is not None:
        code = (
            f"import sys; sys.path.insert(0, {str(args.baseline)!r}); "
            f"from bench.layers_ab import main; main(['--child', '--set', {args.set!r}])"
        )
        child = subprocess.run(
            [sys.executable, "-c", code], check=True, capture_output=True, text=True
        )
        there = [(str(r[0]), float(r[1]), str(r[2])) for r in json.loads(child.stdout)]
    lines, differ = report(here, there)
    print("\n".join(lines))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
