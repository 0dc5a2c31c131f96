"""Helpers shared by the quality benchmarks (mpv, peers, container, ecommerce).

Everything here judges results from the wire JSON alone, next to `tests.validator`:
the checks the validator does not make yet (orientation locks, vertical-orientation
sets, a box limit) and the figures the benchmarks report (bottom support, cost from a
rate table). None of it imports the engine, so it can judge any packer's output.
"""

from __future__ import annotations

import gc
import math
import os
import statistics
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from multiprocessing import Pool, Queue
from pathlib import Path
from typing import Any, TypeVar

Wire = dict[str, Any]
T = TypeVar("T")
R = TypeVar("R")

MPV_DIR = Path(os.environ.get("CARTONIZE_MPV_DIR", "/work/shared/benchmarks/mpv2000"))
MPV_CLASSES = (1, 4, 5, 6, 7, 8)
MPV_SIZES = (50, 100, 150, 200)
#: L2 sums per (class, n) group of 10 instances, from the benchmark README.
MPV_L2 = {
    1: (125, 251, 347, 484),
    4: (287, 576, 852, 1163),
    5: (73, 129, 174, 244),
    6: (87, 175, 269, 350),
    7: (63, 109, 137, 210),
    8: (80, 175, 213, 267),
}
MPV_L2_TOTAL = 6840
MPV_EP_TOTAL = 7465  # Crainic, Perboli & Tadei 2008, best sorting rule
MPV_TARGET_TOTAL = 7200

AXES = ("x", "y", "z")
EPS = 1e-6


def point(dims: Sequence[float]) -> dict[str, float]:
    """A wire Point from (x, y, z)."""
    x, y, z = dims
    return {"x": x, "y": y, "z": z}


def box_on_demand() -> dict[str, Any]:
    """The box types of a box-on-demand request: one stock carton (60-cube, 500) and a
    cartesian generator of 37,584 sizes on a 2-unit grid (sampled to
    ``generatedBoxTypesMax``), priced by volume bands (100 / 150 / 200 above 0 / 50,000 /
    100,000). Shared by ``bench.pack_speed`` and ``bench.layers_ab``."""
    grid = {"increment": 2}
    bands = {"metric": "volume", "aggregator": "sum", "thresholds": [0, 50000, 100000]}
    return {
        "boxTypeDefaults": {"weightMax": 1000},
        "boxTypes": [{"refId": 0, "dimensions": point([60, 60, 60]), "price": 500}],
        "boxTypeGenerators": [
            {
                "operation": "cartesian",
                "options": {
                    "xRange": {"min": 10, "max": 80, **grid},
                    "yRange": {"min": 10, "max": 80, **grid},
                    "zRange": {"min": 5, "max": 60, **grid},
                    "priceComponents": [{"key": "band", **bands, "prices": [100, 150, 200]}],
                },
            }
        ],
    }


def vec(p: Mapping[str, Any]) -> tuple[float, float, float]:
    """(x, y, z) of a wire Point."""
    return (float(p["x"]), float(p["y"]), float(p["z"]))


# --- MPV instances ----------------------------------------------------------------------


@dataclass(frozen=True)
class MpvInstance:
    """One Martello-Pisinger-Vigo instance: the bin and the items as (w, h, d) -> (x, y, z)."""

    cls: int
    n: int
    k: int
    bin: tuple[int, int, int]
    items: tuple[tuple[int, int, int], ...]

    @property
    def name(self) -> str:
        """`class_n/k`, the instance's path under the benchmark directory."""
        return f"{self.cls}_{self.n}/{self.k}"


def read_mpv(cls: int, n: int, k: int, root: Path = MPV_DIR) -> MpvInstance:
    """Read `root/<cls>_<n>/<k>`: `W H D`, `n`, then n lines `w h d`."""
    nums = [int(v) for v in (root / f"{cls}_{n}" / str(k)).read_text().split()]
    count = nums[3]
    items = tuple((nums[4 + 3 * i], nums[5 + 3 * i], nums[6 + 3 * i]) for i in range(count))
    if len(items) != count or len(nums) != 4 + 3 * count:
        raise ValueError(f"{cls}_{n}/{k}: malformed instance")
    return MpvInstance(cls, n, k, (nums[0], nums[1], nums[2]), items)


def mpv_instances(quick: bool, sizes: Iterable[int] = MPV_SIZES) -> list[MpvInstance]:
    """Classes 1, 4-8 at the given sizes; instances 1..10, or 1..2 with `quick`."""
    ks = range(1, 3) if quick else range(1, 11)
    return [read_mpv(c, n, k) for c in MPV_CLASSES for n in sizes for k in ks]


LOCK_ALL: Wire = {
    "operation": "lock-orientation",
    "itemMatch": {"all": True},
    "options": {"freeAxes": []},
}


def mpv_request(inst: MpvInstance, timeout: float | None) -> Wire:
    """The pack request the benchmark README prescribes: one box type of the bin's size, a
    large weightMax, `most-items`, every item locked as given."""
    request: Wire = {
        "itemSets": [
            {"refId": i, "dimensions": point(d), "weight": 1, "quantity": 1}
            for i, d in enumerate(inst.items)
        ],
        "boxTypes": [{"refId": 0, "dimensions": point(inst.bin), "weightMax": 1_000_000}],
        "boxTypeChoiceGoal": "most-items",
        "rules": [LOCK_ALL],
        "includeImages": False,
    }
    if timeout is not None:
        request["timeout"] = timeout
    return request


# --- checks the validator does not make (yet) -------------------------------------------


def _packed(response: Wire) -> Iterator[tuple[int, Wire]]:
    for b, wrapper in enumerate(response.get("boxes", [])):
        for entry in wrapper["box"].get("items", []):
            yield b, entry["item"]


def check_locked(request: Wire, response: Wire) -> list[str]:
    """Items of a request whose rules lock every item (`freeAxes: []`) keep their given
    dimensions on the given axes."""
    given = {s["refId"]: vec(s["dimensions"]) for s in request["itemSets"]}
    problems = []
    for b, item in _packed(response):
        want = given.get(item["refId"])
        got = vec(item["dimensions"])
        if want is None or any(
            abs(g - w) > EPS * max(1.0, w) for g, w in zip(got, want, strict=True)
        ):
            problems.append(
                f"lock: box {b} item refId {item['refId']} placed as {got}, locked as {want}"
            )
    return problems


def check_vertical(allowed: Mapping[int, Sequence[float]], response: Wire) -> list[str]:
    """Each packed item's vertical (x) side is one of the sides its type may stand on."""
    problems = []
    for b, item in _packed(response):
        sides = allowed[item["refId"]]
        up = float(item["dimensions"]["x"])
        if not any(abs(up - s) <= EPS * max(1.0, s) for s in sides):
            problems.append(
                f"vertical: box {b} item refId {item['refId']} stands on side {up:g}, "
                f"allowed {list(sides)}"
            )
    return problems


def check_boxes_max(limit: int, response: Wire) -> list[str]:
    """At most `limit` boxes (`boxesMax`)."""
    boxes = len(response.get("boxes", []))
    return [f"boxes-max: {boxes} boxes, boxesMax is {limit}"] if boxes > limit else []


# --- figures ----------------------------------------------------------------------------


def _rect(item: Wire) -> tuple[float, float, float, float, float, float]:
    """(bottom x, top x, y0, y1, z0, z1) of a placed item."""
    o, d = vec(item["origin"]), vec(item["dimensions"])
    return (o[0], o[0] + d[0], o[1], o[1] + d[1], o[2], o[2] + d[2])


def _covered_area(
    target: tuple[float, float, float, float], rects: Sequence[tuple[float, float, float, float]]
) -> float:
    """Area of `target` (y0, y1, z0, z1) covered by the union of `rects` (same shape),
    by coordinate compression (the supports under one item are few)."""
    y0, y1, z0, z1 = target
    clipped = [
        (max(y0, a), min(y1, b), max(z0, c), min(z1, d))
        for a, b, c, d in rects
        if min(y1, b) > max(y0, a) and min(z1, d) > max(z0, c)
    ]
    ys = sorted({v for r in clipped for v in r[:2]})
    zs = sorted({v for r in clipped for v in r[2:]})
    area = 0.0
    for ya, yb in pairwise(ys):
        for za, zb in pairwise(zs):
            if any(r[0] <= ya and yb <= r[1] and r[2] <= za and zb <= r[3] for r in clipped):
                area += (yb - ya) * (zb - za)
    return area


def support_shares(response: Wire) -> tuple[int, int]:
    """(items whose whole bottom face rests on the floor or on tops of other items, all
    packed items); x is up."""
    full = total = 0
    for wrapper in response.get("boxes", []):
        items = [entry["item"] for entry in wrapper["box"].get("items", [])]
        rects = [_rect(i) for i in items]
        scale = max(vec(wrapper["box"]["dimensions"]))
        tol = EPS * scale
        for r in rects:
            total += 1
            bottom = r[0]
            if bottom <= tol:
                full += 1
                continue
            under = [(s[2], s[3], s[4], s[5]) for s in rects if abs(s[1] - bottom) <= tol]
            need = (r[3] - r[2]) * (r[5] - r[4])
            if _covered_area((r[2], r[3], r[4], r[5]), under) >= need * (1 - 1e-9):
                full += 1
    return full, total


def rate(table: Mapping[str, Any], weight: float) -> float:
    """Rate of a breakpoint table (`weights[]` + `rates[]`) at a rating weight: the rate
    of the first breakpoint at or above it; above the last, the last rate."""
    for w, r in zip(table["weights"], table["rates"], strict=True):
        if weight <= w:
            return float(r)
    return float(table["rates"][-1])


def box_cost(box_type: Mapping[str, Any], gross_weight: float) -> float:
    """Cost of one box (reference.md, "Cost"): fixed price plus the rate at the rating
    weight max(gross, volume / dimFactor), the dimensional weight rounded up as a carrier
    reads a scale. With neither price nor table, its volume."""
    table = box_type.get("rateTable")
    dims = vec(box_type["dimensions"])
    if not table and box_type.get("price") is None:
        return math.prod(dims)
    cost = float(box_type.get("price") or 0)
    if table:
        factor = table.get("dimFactor", -1)
        dim_weight = math.ceil(math.prod(dims) / factor) if factor and factor > 0 else 0
        cost += rate(table, max(gross_weight, dim_weight))
    return cost


def response_cost(request: Wire, response: Wire) -> float:
    """Total cost of a response's boxes by `box_cost`, each box matched to its box type
    by refId and dimensions."""
    total = 0.0
    for wrapper in response.get("boxes", []):
        box = wrapper["box"]
        dims = vec(box["dimensions"])
        box_type = next(
            t
            for t in request["boxTypes"]
            if t.get("refId") == box.get("refId") and vec(t["dimensions"]) == dims
        )
        gross = float(box_type.get("weightTare", 0)) + sum(
            float(e["item"].get("weight", 0)) for e in box.get("items", [])
        )
        total += box_cost(box_type, gross)
    return total


# --- running ----------------------------------------------------------------------------


def _pin_to_one_core(cores: Any) -> None:
    """Pool initializer: each worker on a core of its own (taken from the `cores` queue),
    so the engine, which starts one improvement chain per core it may use, runs one chain
    and the workers do not compete for a core. Then, as the service's workers do after
    loading (`api/gunicorn.conf.py`), a full collection and the survivors frozen: a full
    collection in a request walks only what requests keep, so the timings are the
    service's (without it, `bench.ecommerce`'s slowest order took 30-40 ms where it takes
    8-9: a full collection inside it)."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {cores.get()})
    gc.collect()
    gc.freeze()


def run_parallel(fn: Callable[[T], R], tasks: Sequence[T], processes: int) -> list[R]:
    """`fn` over `tasks` in order on `processes` worker processes (1: in this process)."""
    if processes <= 1:
        return [fn(t) for t in tasks]
    available = sorted(os.sched_getaffinity(0))
    cores: Any = Queue()
    for n in range(processes):
        cores.put(available[n % len(available)])
    with Pool(processes, initializer=_pin_to_one_core, initargs=(cores,)) as pool:
        return pool.map(fn, tasks, chunksize=1)


def default_processes() -> int:
    """Cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1


def median(values: Sequence[float]) -> float:
    """Median, 0 for no values."""
    return statistics.median(values) if values else 0.0


def failed(problems: Sequence[str]) -> bool:
    """Prints a run's validator problems (the first 10) under a FAILED line; True when
    there are any, so the caller prints no figures and exits 1."""
    if problems:
        print(f"  FAILED: {len(problems)} invalid responses, no figures")
        for p in problems[:10]:
            print(f"    {p}")
    return bool(problems)


def goal_order(
    goal: str, leftovers: float, cost: float, boxes: float
) -> tuple[float, float, float]:
    """An answer as the goal ranks it, smaller better: fewer leftovers first, then lower
    cost and fewer boxes under ``lowest-cost``, fewer boxes and lower cost under
    ``most-items`` (the engine's own order of complete answers)."""
    if goal == "most-items":
        return (leftovers, boxes, cost)
    return (leftovers, cost, boxes)
