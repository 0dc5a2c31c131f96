"""Single-container loading, with instances generated as the container-loading literature
does (Bischoff & Ratcliff 1995, the BR classes).

Run from the repository root: ``python -m bench.container [--quick] [--timeout S]``.

One container of 587 x 233 x 220 (length, width, height; here x = 220 up, y = 233,
z = 587), one box type with ``boxesMax: 1`` and ``allowableOverhang: 0`` (every item fully
supported), and more cargo than fits: box types are drawn, then boxes of random types
until their volume reaches the container's. The goal is the packed volume.

- **weakly heterogeneous**: 3, 5, 8, 10, 12, 15 or 20 box types (BR1-BR7);
- **strongly heterogeneous**: 30, 40, ..., 100 box types (BR8-BR15);

sides drawn uniformly from 30-120 (length), 25-100 (width) and 20-80 (height). Each
type has vertical-orientation flags, as in BR: each side may stand vertical with
probability 2/3, at least one may. They become ``lock-orientation`` rules, per type:
all three allowed, no rule; one side allowed, that side on x with ``freeAxes: [0]`` (spin
about the vertical axis only); two sides allowed, those two on x and z with ``freeAxes:
[1]`` (turn about y, which swaps them), a subset of what BR allows: the third side stays
along y, so those types lose the orientations with it along z.

Every response passes ``tests/validator.py``, and each item's vertical side must be one its
type allows (``bench.common.check_vertical``). Reported per class: mean volume
utilisation of the container and the share of items whose whole bottom face rests on the
floor or on other items' tops (computed here from the placements). Target: weakly
heterogeneous, full support, mean utilisation >= 90 % within 1 s per instance.

``boxesMax`` and ``allowableOverhang`` are requested but not yet honoured by the engine
(issue 4); until they are, a response uses more than one box, the run says so, and the
figures are those of the first box, marked provisional.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cartonize

from bench.common import (
    Wire,
    check_boxes_max,
    check_vertical,
    default_processes,
    median,
    point,
    run_parallel,
    support_shares,
    vec,
)
from tests.validator import validate

CONTAINER = (220, 233, 587)  # x = height (up), y = width, z = length
WEAK = (3, 5, 8, 10, 12, 15, 20)
STRONG = (30, 40, 50, 60, 70, 80, 90, 100)
TARGET_UTILISATION = 0.90


def instance(types: int, seed: int) -> tuple[Wire, dict[int, list[int]]]:
    """A request with `types` box types and the sides each type may stand on."""
    rng = random.Random(seed * 1000 + types)
    item_sets: list[Wire] = []
    rules: list[Wire] = []
    allowed: dict[int, list[int]] = {}
    for ref_id in range(types):
        length, width, height = rng.randint(30, 120), rng.randint(25, 100), rng.randint(20, 80)
        sides = (length, width, height)
        flags = [rng.random() < 2 / 3 for _ in sides]
        if not any(flags):
            flags[rng.randrange(3)] = True
        up = [s for s, f in zip(sides, flags, strict=True) if f]
        down = [s for s, f in zip(sides, flags, strict=True) if not f]
        if len(up) == 3:
            dims = (height, width, length)
        elif len(up) == 1:
            dims = (up[0], down[0], down[1])
            rules.append(_lock(ref_id, [0]))
        else:
            dims = (up[0], down[0], up[1])
            rules.append(_lock(ref_id, [1]))
        allowed[ref_id] = up
        item_sets.append({"refId": ref_id, "dimensions": point(dims), "weight": 1, "quantity": 0})
    capacity = math.prod(CONTAINER)
    volume: float = 0
    while volume < capacity:
        chosen = item_sets[rng.randrange(types)]
        chosen["quantity"] += 1
        volume += math.prod(vec(chosen["dimensions"]))
    request: Wire = {
        "itemSets": [s for s in item_sets if s["quantity"] > 0],
        "boxTypes": [{"refId": 0, "dimensions": point(CONTAINER), "weightMax": 1_000_000}],
        "boxesMax": 1,
        "allowableOverhang": 0,
        "boxTypeChoiceGoal": "most-items",
        "rules": rules,
        "includeImages": False,
    }
    return request, allowed


def _lock(ref_id: int, free_axes: list[int]) -> Wire:
    return {
        "operation": "lock-orientation",
        "itemRefId": ref_id,
        "options": {"freeAxes": free_axes},
    }


def pack_one(task: tuple[int, int, float | None]) -> dict[str, Any]:
    """Pack one instance; its figures and problems."""
    types, seed, timeout = task
    request, allowed = instance(types, seed)
    if timeout is not None:
        request["timeout"] = timeout
    start = time.perf_counter()
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    wall_ms = (time.perf_counter() - start) * 1000
    problems = validate(request, response) + check_vertical(allowed, response)
    first: Wire = {"boxes": response["boxes"][:1]}
    full, total = support_shares(first)
    box = response["boxes"][0]["box"] if response["boxes"] else None
    return {
        "types": types,
        "seed": seed,
        "wall_ms": wall_ms,
        "problems": problems,
        "boxes_max": check_boxes_max(1, response),
        "boxes": response["lenBoxes"],
        "utilisation": box["volumeNet"] / box["volumeMax"] if box else 0.0,
        "supported": full,
        "items": total,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Pack the instances, print per-class figures; 1 if any result is invalid."""
    parser = argparse.ArgumentParser(prog="python -m bench.container", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="2 instances per class, not 10")
    parser.add_argument("--timeout", type=float, default=1.0, help="request timeout (s)")
    parser.add_argument("--no-timeout", action="store_true", help="default options")
    parser.add_argument("--processes", type=int, default=default_processes())
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)

    timeout = None if args.no_timeout else args.timeout
    per_class = 2 if args.quick else 10
    tasks = [(t, s, timeout) for t in (*WEAK, *STRONG) for s in range(1, per_class + 1)]
    results = run_parallel(pack_one, tasks, args.processes)
    invalid = [r for r in results if r["problems"]]
    label = "default options" if timeout is None else f"timeout {timeout:g}"
    print(f"single container 587x233x220, {len(results)} instances, {label}")
    if invalid:
        print(f"  FAILED: {len(invalid)} invalid results, no figures")
        for r in invalid[:10]:
            print(f"    {r['types']} types seed {r['seed']}: {r['problems'][:3]}")
        return 1
    over = [r for r in results if r["boxes_max"]]
    if over:
        print(
            f"  boxesMax 1 NOT HONOURED: {len(over)} of {len(results)} responses use more than"
            f" one box (up to {max(r['boxes'] for r in over)}); figures below are of the first"
            " box (provisional)"
        )
    by_class: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        by_class[r["types"]].append(r)
    print(
        f"  {'types':>5} {'utilisation':>12} {'full support':>13} {'median ms':>10} {'max ms':>8}"
    )
    figures: dict[str, Any] = {"label": label, "boxes_max_violations": len(over), "classes": {}}

    def row(name: str, rs: list[dict[str, Any]]) -> dict[str, float]:
        util = sum(r["utilisation"] for r in rs) / len(rs)
        support = sum(r["supported"] for r in rs) / max(1, sum(r["items"] for r in rs))
        times = [r["wall_ms"] for r in rs]
        print(
            f"  {name:>5} {util:>12.1%} {support:>13.1%} {median(times):>10.0f} {max(times):>8.0f}"
        )
        return {"utilisation": util, "full_support": support, "median_ms": median(times)}

    for types, rs in sorted(by_class.items()):
        figures["classes"][types] = row(str(types), rs)
    weak = row("weak", [r for r in results if r["types"] in WEAK])
    strong = row("strong", [r for r in results if r["types"] in STRONG])
    figures.update(weak=weak, strong=strong)
    verdict = "met" if weak["utilisation"] >= TARGET_UTILISATION and not over else "MISSED"
    print(
        f"  target: weakly heterogeneous, full support, mean utilisation >= 90 % "
        f"within 1 s: {verdict}"
    )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
