"""The engine input (JSON) ``cartonize.pack`` hands ``_core.pack_json`` for one benchmark
order, to run the engine alone: ``cargo run --release --example pack_file FILE
[REPEATS]`` times it, ``valgrind --tool=callgrind target/release/examples/pack_file FILE
1`` counts its instructions. One file serves builds of other commits as long as the input
format stays the same.

Run from the repository root: ``python -m bench.engine_input WORKLOAD FILE [--seed S]``,
WORKLOAD one of

- ``large-order``: ``bench.pack_speed``'s large order (1,000 items, 3 box types);
- ``small-order``: ``bench.pack_speed``'s small order of that seed (its run packs seeds
  1 to 200);
- ``cartonization``: ``bench.cartonization_speed``'s order (no seed);
- ``ecommerce``: order S (``order-S``, 1 to 100 are ``bench.peers``' orders) of
  ``bench.ecommerce``'s seed-1 orders;
- ``one-box-type``: a random request of seed S with one cubic box type: 5-60 item sets of
  1-3 units, sides up to 70 % of the box's, free to turn, ``most-items`` (the requests the
  maximal-space construction serves; docs/benchmarks.md, session 12);
- ``distinct-units``, ``distinct-units-2000``: ``bench.pack_speed``'s 10,000 distinct
  units of seed S (one unit per item set, 100 box types), and 2,000 of them.

To compare two builds on many of them, write seeds 0-399 and run each build's
``pack_file`` on every file (docs/benchmarks.md gives the loop).
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import cartonize
from cartonize import _core

from bench import cartonization_speed, ecommerce, pack_speed
from bench.common import Wire


def one_box_type(seed: int) -> Wire:
    """A random request with one cubic box type (see the module notes)."""
    rng = random.Random(seed)
    kinds = rng.randint(5, 60)
    side = rng.choice([20, 30, 40, 50])
    item_sets = [
        {
            "refId": i,
            "dimensions": {a: round(rng.uniform(2, side * 0.7), 1) for a in "xyz"},
            "weight": round(rng.uniform(0, 5), 2),
            "quantity": rng.randint(1, 3),
        }
        for i in range(kinds)
    ]
    return {
        "itemSets": item_sets,
        "boxTypes": [{"refId": 0, "dimensions": {a: side for a in "xyz"}, "weightMax": 0}],
        "boxTypeChoiceGoal": "most-items",
        "includeImages": False,
    }


WORKLOADS: dict[str, Callable[[int], Wire]] = {
    "large-order": pack_speed.large_order,
    "small-order": pack_speed.small_order,
    "cartonization": lambda _seed: cartonization_speed.order(),
    "ecommerce": lambda seed: ecommerce.orders(seed, seed=1)[seed - 1],
    "one-box-type": one_box_type,
    "distinct-units": pack_speed.distinct_units,
    "distinct-units-2000": lambda seed: pack_speed.distinct_units(seed, 2000),
    "distinct-mm-units": pack_speed.distinct_mm_units,
    "distinct-mm-units-2000": lambda seed: pack_speed.distinct_mm_units(seed, 2000),
}


def engine_input(request: Wire) -> str:
    """What ``cartonize.pack(request)`` passes the engine (one call: a request packed in
    parts makes several, and is refused here)."""
    pack_json = _core.pack_json
    seen: list[str] = []

    def recorded(text: str) -> str:
        seen.append(text)
        return pack_json(text)

    _core.pack_json = recorded  # type: ignore[assignment]
    try:
        cartonize.pack(request)
    finally:
        _core.pack_json = pack_json
    if len(seen) != 1:
        raise ValueError(f"the request made {len(seen)} engine calls, not one")
    return seen[0]


def main(argv: Sequence[str] | None = None) -> int:
    """Write the chosen workload's engine input to FILE."""
    parser = argparse.ArgumentParser(prog="python -m bench.engine_input", description=__doc__)
    parser.add_argument("workload", choices=sorted(WORKLOADS))
    parser.add_argument("file", type=Path)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    args.file.write_text(engine_input(WORKLOADS[args.workload](args.seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
