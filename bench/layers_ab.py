"""Large requests: CPU and a hash of each response (all but timings and warnings, whose
wording changes between builds), so two builds can be compared request by request (the
same hashes: the same answers). Made for the layer construction
(session 13); the ``catalogue`` set is session 14's large catalogues and option costs.

Run from the repository root:
``python -m bench.layers_ab [--baseline DIR] [--set large|random|distinct|catalogue|all]``.
With ``--baseline``, DIR holds another copy of the ``cartonize`` package (another
``_core`` build copied in); it is imported in a separate process and both columns are
printed. Sets, all seeded:

- ``large``: eight orders of 800-4,000 units in 40-3,000 item sets, 8-100 box types;
- ``random``: 160 orders of 200-1,500 units in 5-300 item sets, 3-80 box types priced
  at random, by board area, by linear rate tables with dimensional weight, mixed or not
  at all, both goals;
- ``distinct``: one unit per item set, 2,000-10,000 units, 100-1,000 box types;
- ``catalogue`` (not in ``all``): orders against a cartesian generator's 4,096 or 1,000
  sampled sizes, with and without ``boxTypeChoiceLookahead: 1``; lookahead 1 against
  1,000 priced box types; ``maxSequenceDistance: 0`` over 5,000 distinct sequences
  (``timeout: 5``); 500 one-unit boxes drawn as PNG at ``imgSize`` 4096. Lookahead's
  answers differ from a build before session 14 by design (docs/benchmarks.md).
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

from bench.common import box_on_demand

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


def _generated(units: int, skus: int, most: int, **extra: Any) -> Wire:
    """`units` units of `skus` SKUs, one stock carton and a cartesian generator of
    37,584 sizes on a 2-unit grid sampled to `most` (0: 4,096), priced by volume bands."""
    rng = random.Random(units * 7 + skus)
    sides = [(5, 40), (5, 40), (2, 30)]
    items = [
        {
            "refId": i,
            "dimensions": dict(zip("xyz", [rng.randint(*r) for r in sides], strict=True)),
            "weight": rng.randint(1, 50),
            "quantity": max(1, units // skus),
        }
        for i in range(skus)
    ]
    return {
        "includeImages": False,
        "itemSets": items,
        **box_on_demand(),
        "generatedBoxTypesMax": most,
        **extra,
    }


def _priced_catalogue(units: int, skus: int, types: int, **extra: Any) -> Wire:
    """`units` units of `skus` SKUs against `types` random cartons priced by volume."""
    rng = random.Random(1)
    items = [
        {
            "refId": i,
            "dimensions": {
                "x": rng.randint(5, 40),
                "y": rng.randint(5, 40),
                "z": rng.randint(2, 30),
            },
            "weight": rng.randint(1, 50),
            "quantity": max(1, units // skus),
        }
        for i in range(skus)
    ]
    boxes = []
    for n in range(types):
        d = [rng.randint(10, 80), rng.randint(10, 80), rng.randint(5, 60)]
        boxes.append(
            {
                "refId": 1000 + n,
                "dimensions": dict(zip("xyz", d, strict=True)),
                "weightMax": 1000,
                "price": 50 + d[0] * d[1] * d[2] // 1000,
            }
        )
    return {"includeImages": False, "itemSets": items, "boxTypes": boxes, **extra}


def catalogue() -> Iterator[tuple[str, Wire]]:
    """Session 14's requests: large catalogues, lookahead, sequence windows, PNGs."""
    yield "generated 100/20, 4,096 sizes", _generated(100, 20, 0)
    yield "generated 40/10, 4,096 sizes", _generated(40, 10, 0)
    yield "generated 40/10, 1,000 sizes", _generated(40, 10, 1000)
    yield (
        "generated 100/20, 4,096 sizes, lookahead 1",
        _generated(100, 20, 0, boxTypeChoiceLookahead=1),
    )
    yield (
        "priced 100/20, 1,000 types, lookahead 1",
        _priced_catalogue(100, 20, 1000, boxTypeChoiceLookahead=1),
    )
    cube = {"x": 1, "y": 1, "z": 1}
    yield (
        "maxSequenceDistance 0, 5,000 sequences",
        {
            "includeImages": False,
            "maxSequenceDistance": 0,
            "timeout": 5,
            "itemSets": [
                {"refId": i, "sequence": str(i), "dimensions": cube, "weight": 1, "quantity": 1}
                for i in range(5000)
            ],
            "boxTypes": [{"refId": 1, "dimensions": {"x": 50, "y": 50, "z": 50}, "weightMax": 1e6}],
        },
    )
    yield (
        "500 boxes as PNG at imgSize 4096",
        {
            "includeImages": True,
            "imageFormat": "png",
            "imgSize": 4096,
            "itemSets": [{"refId": 1, "dimensions": cube, "weight": 1, "quantity": 500}],
            "boxTypes": [{"refId": 1, "dimensions": cube, "weightMax": 9}],
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
    if which == "catalogue":
        yield from catalogue()


def run(which: str) -> list[Row]:
    """(label, CPU seconds, response hash) of each request, packed here."""
    import cartonize
    from cartonize.errors import InvalidRequest

    out = []
    for label, request in requests(which):
        started = time.process_time()
        try:
            wire = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
        except InvalidRequest as refused:
            # A build may refuse what another packs (e.g. past the service's time limit).
            cpu = time.process_time() - started
            digest = hashlib.sha256(str(refused).encode()).hexdigest()[:16]
            out.append((f"{label}: refused ({refused.status})", cpu, digest))
            continue
        cpu = time.process_time() - started
        # Timings vary; warnings are worded anew between builds (the packing is compared).
        for varying in ("packTime", "renderTime", "totalTime", "startedAt", "built", "warnings"):
            wire.pop(varying, None)
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
    parser.add_argument(
        "--set", default="all", choices=["large", "random", "distinct", "catalogue", "all"]
    )
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
