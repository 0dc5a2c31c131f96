"""cartonize next to its peers, py3dbp and packvium, on the same instances in one run.

Run from the repository root: ``python -m bench.peers [--quick]``.

Instances: the MPV instances with n = 50 of classes 1, 4-8 (orientation locked; the peers
are far slower on larger ones) and the seeded e-commerce orders of ``bench.ecommerce``
(15 priced cartons, carrier rate table). Each packer's placements are converted into the
wire response shape and checked by ``tests/validator.py`` (plus the orientation lock on
MPV); an invalid result is reported as invalid and not counted, and so is an incomplete
one (items left out). Cost is recomputed for every packer by the same function
(``bench.common.box_cost``: price plus the rate at max(gross, dimensional weight)).
Ratios are cartonize / peer over the instances both packed validly and completely: the
sum of pack times, of boxes and of cost (below 1 means cartonize is faster, uses fewer
boxes, costs less). Each ratio line also gives the speed of cartonize's engine alone
(its `packTime`, without the Python interface's validation and response models) against
the peer's whole run. Every packer's run starts after a full garbage collection, so no
packer pays for collections that another one's garbage set off.

How each peer is driven (read from their source, their best multi-bin use):

- **cartonize**: ``cartonize.pack`` with default options (no timeout): the real-time path;
  ``--cartonize-options`` adds request fields. On the orders a second row,
  **cartonize-free**, packs each order again with ``itemInitialOrientationPreferred``
  false: both peers turn items freely to save space, while cartonize's default keeps an
  item as given wherever it fits (the public API's documented behaviour), so that row is
  cartonize solving the same problem as the peers. Both rows are compared with the same
  peer answers (packvium's move with the load between runs).
- **py3dbp 1.1.2**: its multi-bin mode, ``Packer.pack(bigger_first=..., distribute_items=
  True)`` over enough copies of every carton; e-commerce runs both ``bigger_first`` values
  and keeps the better result (fewer leftovers, then lower cost), timing only that run.
  py3dbp has no orientation lock; on MPV its rotation list is cut to the identity
  (``RotationType.ALL = [RT_WHD]``, which ``Bin.put_item`` iterates), else it rotates.
- **packvium 1.8.0**: ``Packer(PackingConfig.balanced())`` (its default profile, a 1 s
  wall-clock limit), every carton type unlimited; MPV with ``allowed_rotations=(LWH,)`` and
  the default objective (fewest unpacked, then containers). E-commerce runs both its
  default objective (carton ``cost_minor`` = price) and ``lowest_landed_cost`` (divisor
  5000 cm3/kg, each carton's rate table with its price folded in, which is exactly this
  benchmark's cost) and keeps the better, timing only that run: the landed-cost search
  alone often leaves units out within its second. ``--packvium-profile quality`` gives it
  5 s and a beam over container plans.

Coordinates: cartonize's x is up; py3dbp's (width, height, depth) map to (x, y, z);
packvium's (length, width, height) to (z, y, x).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cartonize
import packvium
import py3dbp.constants  # type: ignore[import-untyped]
from packvium import Container, Dimensions, Item, PackingConfig, Rotation
from packvium.models import RateTable
from py3dbp import main as py3dbp_main

from bench import ecommerce
from bench.common import (
    MPV_CLASSES,
    Wire,
    box_cost,
    check_locked,
    default_processes,
    mpv_request,
    point,
    read_mpv,
    response_cost,
    run_parallel,
    vec,
)
from tests.validator import validate

PEERS = ("py3dbp", "packvium")
# The orders' items may turn freely for both peers; this cartonize variant is told so.
FREE: Wire = {"itemInitialOrientationPreferred": False}
TICKS = packvium.Length.TICKS_PER_MM


@dataclass
class Run:
    """One packer on one instance."""

    packer: str
    seconds: float
    boxes: int
    leftovers: int
    cost: float
    problems: list[str] = field(default_factory=list)
    #: cartonize only: the engine's own time (`packTime`), without the Python interface.
    engine_seconds: float | None = None

    @property
    def counted(self) -> bool:
        """Valid and complete: the only results that enter the ratios."""
        return not self.problems and not self.leftovers


@dataclass
class Placed:
    """A peer's placed unit, in cartonize axes."""

    ref_id: int
    origin: tuple[float, float, float]
    dims: tuple[float, float, float]
    weight: float


# --- building a wire response from placements ------------------------------------------


def wire_response(
    request: Wire,
    boxes: Sequence[tuple[Wire, Sequence[Placed]]],
    leftovers: Sequence[int],
) -> Wire:
    """The response shape the validator checks, from (box type, placements) pairs and the
    refIds of leftover units. Totals are derived here, so what the validator judges is the
    geometry, the units, rotations, weights and box types of the peer's answer."""
    sets = {s["refId"]: s for s in request["itemSets"]}
    wire_boxes: list[Wire] = []
    index = 1
    for box_type, placed in boxes:
        dims = vec(box_type["dimensions"])
        tare = float(box_type.get("weightTare", 0))
        items = []
        for p in placed:
            items.append(
                {
                    "item": {
                        "refId": p.ref_id,
                        "index": index,
                        "dimensions": point(p.dims),
                        "origin": point(p.origin),
                        "weight": p.weight,
                        "quantity": 1,
                    }
                }
            )
            index += 1
        gross = tare + sum(p.weight for p in placed)
        wire_boxes.append(
            {
                "box": {
                    "refId": box_type.get("refId"),
                    "dimensions": point(dims),
                    "weightMax": float(box_type.get("weightMax", 0)),
                    "weightTare": tare,
                    "volumeMax": math.prod(dims),
                    "volumeNet": sum(math.prod(p.dims) for p in placed),
                    "weightUsed": gross,
                    "price": 0,
                    "items": items,
                }
            }
        )
    response: Wire = {
        "boxes": wire_boxes,
        "leftovers": [
            {
                "refId": r,
                "dimensions": sets[r]["dimensions"],
                "weight": sets[r].get("weight", 0),
                "quantity": 1,
            }
            for r in leftovers
        ],
    }
    for wrapper, (box_type, placed) in zip(wire_boxes, boxes, strict=True):
        gross = float(box_type.get("weightTare", 0)) + sum(p.weight for p in placed)
        wrapper["box"]["price"] = round(box_cost(box_type, gross))
    response.update(
        lenBoxes=len(wire_boxes),
        lenItems=sum(len(b["box"]["items"]) for b in wire_boxes) + len(leftovers),
        lenLeftovers=len(leftovers),
        totalCost=sum(b["box"]["price"] for b in wire_boxes),
        totalVolume=sum(b["box"]["volumeMax"] for b in wire_boxes),
        totalVolumeNet=sum(b["box"]["volumeNet"] for b in wire_boxes),
        totalWeight=sum(b["box"]["weightUsed"] for b in wire_boxes),
    )
    return response


def units_of(request: Wire) -> Iterator[tuple[int, Wire, int]]:
    """(refId, item set, unit number) of every requested unit."""
    for s in request["itemSets"]:
        for u in range(int(s.get("quantity", 1))):
            yield s["refId"], s, u


def copies_needed(request: Wire, box_type: Wire) -> int:
    """Copies of a box type a multi-bin peer needs at most: one per unit that fits it."""
    dims = sorted(vec(box_type["dimensions"]))
    return sum(
        1
        for _, s, _ in units_of(request)
        if all(a <= b for a, b in zip(sorted(vec(s["dimensions"])), dims, strict=True))
    )


# --- the packers -------------------------------------------------------------------------


def run_cartonize(request: Wire, locked: bool, options: Wire | None = None) -> tuple[Wire, float]:
    """cartonize through its public pack interface, with `options` added to the request."""
    if options:
        request = {**request, **options}
    start = time.perf_counter()
    response = cartonize.pack(request)
    seconds = time.perf_counter() - start
    return response.model_dump(by_alias=True, exclude_none=True), seconds


@contextmanager
def py3dbp_rotations(locked: bool) -> Iterator[None]:
    """py3dbp's rotation list, cut to the identity while `locked`."""
    saved = py3dbp.constants.RotationType.ALL
    if locked:
        py3dbp.constants.RotationType.ALL = [py3dbp.constants.RotationType.RT_WHD]
    try:
        yield
    finally:
        py3dbp.constants.RotationType.ALL = saved


def _py3dbp_once(request: Wire, bigger_first: bool) -> tuple[Wire, float]:
    packer = py3dbp_main.Packer()
    types = {}
    for t, box_type in enumerate(request["boxTypes"]):
        x, y, z = vec(box_type["dimensions"])
        capacity = float(box_type.get("weightMax") or 1e12) - float(box_type.get("weightTare", 0))
        for c in range(copies_needed(request, box_type)):
            name = f"{t}#{c}"
            types[name] = box_type
            packer.add_bin(py3dbp_main.Bin(name, x, y, z, capacity))
    for ref_id, s, u in units_of(request):
        x, y, z = vec(s["dimensions"])
        packer.add_item(py3dbp_main.Item(f"{ref_id}#{u}", x, y, z, float(s.get("weight", 0))))
    start = time.perf_counter()
    packer.pack(bigger_first=bigger_first, distribute_items=True)
    seconds = time.perf_counter() - start
    boxes = []
    packed: set[str] = set()
    for b in packer.bins:
        if not b.items:
            continue
        placed = []
        for item in b.items:
            packed.add(item.name)
            placed.append(
                Placed(
                    int(item.name.split("#")[0]),
                    (float(item.position[0]), float(item.position[1]), float(item.position[2])),
                    (
                        float(item.get_dimension()[0]),
                        float(item.get_dimension()[1]),
                        float(item.get_dimension()[2]),
                    ),
                    float(item.weight),
                )
            )
        boxes.append((types[b.name], placed))
    leftovers = [r for r, _, u in units_of(request) if f"{r}#{u}" not in packed]
    return wire_response(request, boxes, leftovers), seconds


def run_py3dbp(request: Wire, locked: bool) -> tuple[Wire, float]:
    """py3dbp's multi-bin mode; with several box types, the better of both sort orders."""
    with py3dbp_rotations(locked):
        if len(request["boxTypes"]) == 1:
            return _py3dbp_once(request, bigger_first=True)
        tried = [_py3dbp_once(request, bigger_first=b) for b in (False, True)]
    return min(tried, key=lambda r: (r[0]["lenLeftovers"], response_cost(request, r[0])))


def _pv_dims(dims: Sequence[float]) -> Dimensions:
    """cartonize (x up, y, z) -> packvium (length, width, height up), in mm."""
    x, y, z = dims
    return Dimensions.mm(str(z), str(y), str(x))


def _pv_rate_table(box_type: Wire) -> RateTable:
    """The carton's rate table with its price folded into every bracket, so packvium's
    landed cost is this benchmark's box cost."""
    table = box_type["rateTable"]
    price = int(box_type.get("price") or 0)
    # packvium's own dataclass wrapper hides the fields from mypy.
    return RateTable(  # type: ignore[call-arg]
        weight_brackets_g=tuple(int(w) for w in table["weights"]),
        prices_minor=tuple(int(r) + price for r in table["rates"]),
    )


def run_packvium(request: Wire, locked: bool, profile: str = "balanced") -> tuple[Wire, float]:
    """packvium with its default (or given) profile; with rate tables, the better of its
    default and its landed-cost objective (fewer leftovers, then lower cost)."""
    if not all(t.get("rateTable") for t in request["boxTypes"]):
        return _packvium_once(request, locked, profile, landed=False)
    tried = [_packvium_once(request, locked, profile, landed) for landed in (False, True)]
    return min(tried, key=lambda r: (r[0]["lenLeftovers"], response_cost(request, r[0])))


def _packvium_once(request: Wire, locked: bool, profile: str, landed: bool) -> tuple[Wire, float]:
    """One packvium run, every carton type unlimited."""
    sets = {s["refId"]: s for s in request["itemSets"]}
    items = [
        Item.create(
            str(s["refId"]),
            _pv_dims(vec(s["dimensions"])),
            f"{s.get('weight', 0)} g",
            quantity=int(s.get("quantity", 1)),
            **({"allowed_rotations": (Rotation.LWH,)} if locked else {}),
        )
        for s in request["itemSets"]
    ]
    rated = landed
    containers = []
    by_id = {}
    for t, box_type in enumerate(request["boxTypes"]):
        tare = float(box_type.get("weightTare", 0))
        limit = box_type.get("weightMax")
        containers.append(
            Container.create(
                str(t),
                _pv_dims(vec(box_type["dimensions"])),
                tare_weight=f"{tare:g} g",
                max_payload=f"{float(limit) - tare:g} g" if limit else None,
                cost_minor=int(box_type.get("price") or 0),
                rate_table=_pv_rate_table(box_type) if rated else None,
            )
        )
        by_id[str(t)] = box_type
    extra: dict[str, Any] = {}
    if rated:
        extra = {
            "objective": "lowest_landed_cost",
            "dimensional_weight_divisor": 5000,
            "dimensional_weight_length_unit": "cm",
            "dimensional_weight_weight_unit": "kg",
        }
    config = getattr(PackingConfig, profile)(**extra)
    start = time.perf_counter()
    result = packvium.Packer(config).pack(items, containers)
    seconds = time.perf_counter() - start
    boxes = []
    for c in result.containers:
        placements = c.expand_placements() if c.lattice_summary is not None else c.placements
        placed = []
        for p in placements:
            d = p.dimensions
            placed.append(
                Placed(
                    int(p.instance.item.id),
                    (p.position.z / TICKS, p.position.y / TICKS, p.position.x / TICKS),
                    (d.height.ticks / TICKS, d.width.ticks / TICKS, d.length.ticks / TICKS),
                    float(sets[int(p.instance.item.id)].get("weight", 0)),
                )
            )
        boxes.append((by_id[c.container.id], placed))
    leftovers = [int(u.instance.item.id) for u in result.unpacked]
    response = wire_response(request, boxes, leftovers)
    if result.status is packvium.PackingStatus.INVALID_RESULT:
        response["_own_validator"] = list(result.warnings)
    return response, seconds


# --- running -----------------------------------------------------------------------------


def judge(packer: str, request: Wire, locked: bool, run: Callable[..., tuple[Wire, float]]) -> Run:
    """Run one packer on one request and check its answer. The garbage collector runs
    first, so a packer's time holds its own collections, not ones the garbage of the
    packer before it set off (a full collection in these processes takes 20-30 ms)."""
    gc.collect()
    try:
        response, seconds = run(request, locked)
    except Exception as exc:  # a peer refusing a request is a result, not a crash
        return Run(packer, 0.0, 0, 0, 0.0, [f"error: {type(exc).__name__}: {exc}"])
    problems = validate(request, response)
    if locked:
        problems += check_locked(request, response)
    return Run(
        packer,
        seconds,
        response["lenBoxes"],
        response["lenLeftovers"],
        response_cost(request, response),
        problems,
        response.get("packTime"),
    )


def compare(task: tuple[str, Wire, bool, str, dict[str, Wire]]) -> tuple[str, list[Run]]:
    """Every cartonize variant (name -> request fields it adds), then both peers, on one
    instance."""
    name, request, locked, profile, variants = task
    runs = [
        judge(variant, request, locked, lambda r, lk, o=options: run_cartonize(r, lk, o))
        for variant, options in variants.items()
    ]
    runs.append(judge("py3dbp", request, locked, run_py3dbp))
    runs.append(judge("packvium", request, locked, lambda r, lk: run_packvium(r, lk, profile)))
    return name, runs


def summarise(title: str, results: Sequence[tuple[str, list[Run]]]) -> dict[str, Any]:
    """Print per-packer totals and, for every cartonize variant, its ratios to each peer;
    return them."""
    print(f"\n{title}: {len(results)} instances")
    print(
        f"  {'packer':<15} {'valid':>6} {'complete':>9} {'boxes':>7} {'cost':>10} "
        f"{'time s':>8} {'median ms':>10}"
    )
    out: dict[str, Any] = {"instances": len(results), "packers": {}, "ratios": {}}
    names = [r.packer for r in results[0][1]] if results else []
    ours = [(p, n) for p, n in enumerate(names) if n not in PEERS]
    for p, packer in enumerate(names):
        runs = [r[p] for _, r in results]
        valid = [r for r in runs if not r.problems]
        complete = [r for r in valid if not r.leftovers]
        times = sorted(r.seconds for r in valid)
        med = times[len(times) // 2] * 1000 if times else 0.0
        print(
            f"  {packer:<15} {len(valid):>6} {len(complete):>9} "
            f"{sum(r.boxes for r in complete):>7} {sum(r.cost for r in complete):>10.0f} "
            f"{sum(r.seconds for r in valid):>8.2f} {med:>10.1f}"
        )
        out["packers"][packer] = {
            "valid": len(valid),
            "complete": len(complete),
            "invalid_examples": [(name, r[p].problems[:2]) for name, r in results if r[p].problems][
                :3
            ],
        }
    for o, variant in ours:
        for p, peer in ((p, n) for p, n in enumerate(names) if n in PEERS):
            pairs = [(name, r[o], r[p]) for name, r in results if r[o].counted and r[p].counted]
            if not pairs:
                print(f"  {variant} / {peer}: no instance both packed validly and completely")
                continue
            ratio = {
                "instances": len(pairs),
                "time": sum(a.seconds for _, a, _ in pairs)
                / max(sum(b.seconds for _, _, b in pairs), 1e-9),
                "boxes": sum(a.boxes for _, a, _ in pairs) / sum(b.boxes for _, _, b in pairs),
                "cost": sum(a.cost for _, a, _ in pairs)
                / max(sum(b.cost for _, _, b in pairs), 1e-9),
                "engine_time": sum(a.engine_seconds or 0.0 for _, a, _ in pairs)
                / max(sum(b.seconds for _, _, b in pairs), 1e-9),
                "more_boxes": sum(1 for _, a, b in pairs if a.boxes > b.boxes),
                "more_cost": sum(1 for _, a, b in pairs if a.cost > b.cost + 1e-6),
            }
            out["ratios"][peer if variant == "cartonize" else f"{variant}/{peer}"] = ratio
            speed = (
                f"{1 / max(ratio['time'], 1e-12):.0f}x faster"
                if ratio["time"] <= 1
                else f"{ratio['time']:.1f}x slower"
            )
            engine = ratio["engine_time"]
            print(
                f"  {variant} / {peer:<9} on {ratio['instances']:>3}: time {ratio['time']:.4f} "
                f"({speed}; engine alone {1 / max(engine, 1e-12):.1f}x faster), "
                f"boxes {ratio['boxes']:.3f}, "
                f"cost {ratio['cost']:.3f}; instances with more boxes {ratio['more_boxes']}, "
                f"more cost {ratio['more_cost']}"
            )
            for name, a, b in pairs:
                if a.boxes > b.boxes or a.cost > b.cost + 1e-6:
                    print(
                        f"    worse than {peer} on {name}: boxes {a.boxes} vs {b.boxes}, "
                        f"cost {a.cost:.0f} vs {b.cost:.0f}"
                    )
    for packer, figures in out["packers"].items():
        for name, problems in figures["invalid_examples"]:
            print(f"  invalid {packer} {name}: {problems}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Run the comparisons; 1 if a cartonize result is invalid (peers may be)."""
    parser = argparse.ArgumentParser(prog="python -m bench.peers", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer instances and orders")
    parser.add_argument("--orders", type=int, help="e-commerce orders (default 100, quick 20)")
    parser.add_argument("--packvium-profile", default="balanced", choices=["balanced", "quality"])
    parser.add_argument("--processes", type=int, default=default_processes())
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument(
        "--cartonize-options",
        type=json.loads,
        default={},
        help="request fields added to cartonize's requests only, as JSON, e.g. "
        "'{\"itemInitialOrientationPreferred\": false}'",
    )
    args = parser.parse_args(argv)

    ks = range(1, 3) if args.quick else range(1, 11)
    extra = args.cartonize_options
    # MPV items are locked, so the orientation option changes nothing there.
    mpv = [
        (inst.name, mpv_request(inst, None), True, args.packvium_profile, {"cartonize": extra})
        for inst in (read_mpv(c, 50, k) for c in MPV_CLASSES for k in ks)
    ]
    count = args.orders or (20 if args.quick else 100)
    variants = {"cartonize": extra, "cartonize-free": {**extra, **FREE}}
    shop = [
        (r["orderId"], r, False, args.packvium_profile, variants)
        for r in ecommerce.orders(count, seed=1)
    ]
    figures = {
        "mpv n=50": summarise(
            "MPV n=50, classes 1, 4-8", run_parallel(compare, mpv, args.processes)
        ),
        "e-commerce": summarise("e-commerce orders", run_parallel(compare, shop, args.processes)),
    }
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    ours_valid = all(f["packers"]["cartonize"]["valid"] == f["instances"] for f in figures.values())
    return 0 if ours_valid else 1


if __name__ == "__main__":
    sys.exit(main())
