"""Packing quality on the Martello-Pisinger-Vigo 3D bin packing instances.

Run from the repository root: ``python -m bench.mpv [--quick] [--timeout S ...]``.

Classes 1, 4-8 (240 instances, /work/shared/benchmarks/mpv2000) go through the public pack
interface, ``cartonize.pack(request dict)`` (the path the HTTP API takes): one box type of
the bin's size, ``most-items``, and a ``lock-orientation`` rule with ``freeAxes: []`` for
all items. Every response is checked by ``tests/validator.py`` plus the orientation lock
(``bench/common.py``); an invalid response fails the run (exit status 1) and its figures
are not printed. Bins are summed per (class, n) group and in total, next to the L2 lower
bound (6840) and the extreme-point heuristic of Crainic, Perboli & Tadei (about 7465).

By default two passes: default options (no timeout: the real-time figure) and
``timeout: 1`` (the target: at most 7,200 bins). Instances run on every core in worker
processes, each pinned to one core, so with a timeout each request improves on one core.
``--quick`` packs instances 1 and 2 of each group (48), against the L2 of those instances.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import cartonize

from bench.common import (
    MPV_CLASSES,
    MPV_DIR,
    MPV_EP_TOTAL,
    MPV_L2,
    MPV_L2_TOTAL,
    MPV_SIZES,
    MPV_TARGET_TOTAL,
    MpvInstance,
    check_locked,
    default_processes,
    median,
    mpv_instances,
    mpv_request,
    run_parallel,
)
from tests.validator import validate


@dataclass
class Outcome:
    """One packed instance."""

    name: str
    cls: int
    n: int
    k: int
    bins: int
    wall_ms: float
    problems: list[str]


def pack_one(task: tuple[MpvInstance, float | None]) -> Outcome:
    """Pack one instance through `cartonize.pack` and check the response."""
    inst, timeout = task
    request = mpv_request(inst, timeout)
    start = time.perf_counter()
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    wall_ms = (time.perf_counter() - start) * 1000
    problems = validate(request, response) + check_locked(request, response)
    if response["lenLeftovers"]:
        problems.append(f"leftovers: {response['lenLeftovers']} items not packed")
    return Outcome(inst.name, inst.cls, inst.n, inst.k, response["lenBoxes"], wall_ms, problems)


def bounds() -> dict[tuple[int, int, int], dict[str, str]]:
    """The bounds file's row of every instance, by (class, n, k): L2, the exact code's
    lower and upper bounds after 2 s, and whether that proved the optimum."""
    with (MPV_DIR.parent / "mpv2000_bounds.csv").open() as f:
        return {
            (int(row["class"]), int(row["n"]), int(row["instance"])): row
            for row in csv.DictReader(f)
        }


def l2_of(instances: Sequence[MpvInstance]) -> dict[tuple[int, int], int]:
    """L2 per (class, n) over the given instances (the bounds file has each instance)."""
    rows = bounds()
    sums: dict[tuple[int, int], int] = defaultdict(int)
    for i in instances:
        sums[(i.cls, i.n)] += int(rows[(i.cls, i.n, i.k)]["L2"])
    return sums


def against_exact(outcomes: Sequence[Outcome]) -> dict[str, int]:
    """The packings against the authors' exact code run 2 s per instance (the bounds
    file): how many of the optima it proved are reached, the bins above them, and its
    lower and upper bounds summed over the same instances."""
    rows = bounds()
    proven = [
        (o.bins, int(row["lb_after_2s"]))
        for o in outcomes
        if (row := rows[(o.cls, o.n, o.k)])["proved_optimal"] == "1"
    ]
    return {
        "proven": len(proven),
        "reached": sum(bins == optimum for bins, optimum in proven),
        "above": sum(bins - optimum for bins, optimum in proven),
        "lb_2s": sum(int(rows[(o.cls, o.n, o.k)]["lb_after_2s"]) for o in outcomes),
        "ub_2s": sum(int(rows[(o.cls, o.n, o.k)]["ub_after_2s"]) for o in outcomes),
    }


def run(
    instances: Sequence[MpvInstance], timeout: float | None, processes: int
) -> dict[str, object]:
    """Pack every instance once with `timeout`; print the table; return the figures."""
    label = "default options" if timeout is None else f"timeout {timeout:g}"
    started = time.perf_counter()
    outcomes = run_parallel(pack_one, [(i, timeout) for i in instances], processes)
    elapsed = time.perf_counter() - started
    invalid = [o for o in outcomes if o.problems]
    print(f"\n{label}: {len(outcomes)} instances, {processes} processes, {elapsed:.1f} s")
    if invalid:
        print(f"  FAILED: {len(invalid)} invalid results, no figures")
        for o in invalid[:10]:
            print(f"    {o.name}: {o.problems[:3]}")
        return {"label": label, "valid": False, "invalid": [asdict(o) for o in invalid]}
    full = len(instances) == len(MPV_CLASSES) * len(MPV_SIZES) * 10
    l2 = (
        {(c, n): MPV_L2[c][j] for c in MPV_CLASSES for j, n in enumerate(MPV_SIZES)}
        if full
        else l2_of(instances)
    )
    groups: dict[tuple[int, int], list[Outcome]] = defaultdict(list)
    for o in outcomes:
        groups[(o.cls, o.n)].append(o)
    print(f"  {'class':>5} {'n':>4} {'bins':>6} {'L2':>6} {'median ms':>10} {'max ms':>8}")
    for (c, n), group in sorted(groups.items()):
        times = [o.wall_ms for o in group]
        bins = sum(o.bins for o in group)
        print(
            f"  {c:>5} {n:>4} {bins:>6} {l2[(c, n)]:>6} {median(times):>10.1f} {max(times):>8.1f}"
        )
    total = sum(o.bins for o in outcomes)
    total_l2 = sum(l2.values())
    times = [o.wall_ms for o in outcomes]
    print(
        f"  total      {total:>6} {total_l2:>6} {median(times):>10.1f} {max(times):>8.1f}"
        f"   total / L2 = {total / total_l2:.3f}"
    )
    exact = against_exact(outcomes)
    print(
        f"  proven optima (exact code, 2 s): {exact['reached']} of {exact['proven']} reached, "
        f"{exact['above']} bins above them; its bounds after 2 s: lower {exact['lb_2s']}, "
        f"upper {exact['ub_2s']}"
    )
    if full:
        verdict = ""
        if timeout == 1.0:
            met = "met" if total <= MPV_TARGET_TOTAL else "MISSED"
            verdict = f"; target <= {MPV_TARGET_TOTAL}: {met}"
        print(f"  references: L2 {MPV_L2_TOTAL}, extreme-point heuristic ~{MPV_EP_TOTAL}{verdict}")
    return {
        "label": label,
        "valid": True,
        "instances": len(outcomes),
        "total": total,
        "l2": total_l2,
        "median_ms": median(times),
        "max_ms": max(times),
        "groups": {f"{c}_{n}": sum(o.bins for o in g) for (c, n), g in sorted(groups.items())},
        "exact_code": exact,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the passes, print the tables, optionally write JSON; 1 if any result is invalid."""
    parser = argparse.ArgumentParser(prog="python -m bench.mpv", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="instances 1-2 of each group")
    parser.add_argument(
        "--timeout",
        type=float,
        action="append",
        help="pack with this timeout (repeatable); default: one pass without and one with 1",
    )
    parser.add_argument("--no-default", action="store_true", help="skip the no-timeout pass")
    parser.add_argument("--processes", type=int, default=default_processes())
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)

    instances = mpv_instances(args.quick)
    passes: list[float | None] = [] if args.no_default else [None]
    passes += args.timeout if args.timeout else [1.0]
    results = [run(instances, t, args.processes) for t in passes]
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0 if all(r["valid"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
