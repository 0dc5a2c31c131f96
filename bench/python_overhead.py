"""Python time of `cartonize.pack` around the engine, and a byte-identity check of its
responses (issue 3: a change to the Python layer must not change one byte of output).

Run from the repository root:

- ``python -m bench.python_overhead record OUT.jsonl --corpus CORPUS.json``: pack every
  request of the corpus (MPV n=50 and n=100, e-commerce orders, also against 30, 60 and
  100 generated cartons, two full containers, pack_speed small, deep and large orders,
  orders with pictures, the tests' hypothesis strategies, unusual and invalid bodies)
  and write, per request, `pack()`'s `model_dump(by_alias=True, exclude_none=True)` and
  the HTTP API's status and body (falcon test client), timings and uuids masked. The
  requests are saved to CORPUS.json on first use and read from it afterwards.
- ``python -m bench.python_overhead compare A.jsonl B.jsonl``: the requests whose records
  differ (exit status 1 if any).
- ``python -m bench.python_overhead texts [--rounds N]``: CPU ms per answer of the pack
  service's body and fingerprint texts, by `json.dumps` as before and by
  `_core.json_texts`, alternating (the texts checked equal first).
- ``python -m bench.python_overhead time [--baseline DIR]``: CPU ms per request of
  `pack()` on MPV n=50, the small orders and `bench.peers`' 100 e-commerce orders,
  Python (with the engine's answers replayed) and engine (`_core.pack_json`, once per
  request); with `--baseline`, a directory
  holding another copy of the `cartonize` package (e.g. main's, with the same `_core`
  build copied in) timed in alternation with this one.

CPU time (`time.process_time`), not wall time: the machine is shared.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

Wire = dict[str, Any]

#: Response fields that differ from run to run (HTTP bodies also carry the uuid and the
#: response fingerprint, which hashes the fields without timings), and from build to
#: build (``built``, the engine's build time).
_VOLATILE = ("startedAt", "packTime", "renderTime", "totalTime", "packUuid", "built")


# --------------------------------------------------------------------------- corpus


def _drawn(strategy: Any, count: int) -> list[Wire]:
    """`count` examples of a hypothesis strategy, the same ones on every run."""
    from hypothesis import HealthCheck, given, settings

    drawn: list[Wire] = []

    @settings(
        max_examples=count,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(request: Wire) -> None:
        drawn.append(json.loads(json.dumps(request)))

    collect()
    return drawn[:count]


def corpus() -> Iterator[tuple[str, Any]]:
    """(name, request) pairs; a request is a wire dict or, for a malformed body, bytes."""
    from bench import container, ecommerce, pack_speed
    from bench.common import mpv_instances, mpv_request
    from tests import strategies

    for inst in mpv_instances(False, sizes=[50]):
        yield f"mpv {inst.name}", mpv_request(inst, None)
    for inst in mpv_instances(True, sizes=[100]):
        yield f"mpv {inst.name}", mpv_request(inst, None)
    for n, order in enumerate(ecommerce.orders(120, 1)):
        yield f"ecommerce {n}", order
    for seed in range(1, 101):
        yield f"small order {seed}", pack_speed.small_order(seed)
    for seed in range(1, 21):
        yield (
            f"deep small order {seed}",
            {**pack_speed.small_order(seed), **pack_speed.DEEP_OPTIONS},
        )
    # Large catalogues (box choice over many types) and full containers (boxes of
    # many items).
    for cartons in (30, 60, 100):
        for n, order in enumerate(ecommerce.orders(20, 5, ecommerce.generated_cartons(cartons))):
            yield f"ecommerce {cartons} cartons {n}", order
    for types, seed in [(5, 1), (12, 2)]:
        yield f"container {types} types {seed}", container.instance(types, seed)[0]
    yield "large order 1", pack_speed.large_order(1)
    for seed in range(1, 16):
        yield f"svg order {seed}", {**pack_speed.small_order(seed), "includeImages": True}
    for seed in range(1, 4):
        order = {**pack_speed.small_order(seed), "includeImages": True, "imageFormat": "png"}
        yield f"png order {seed}", order
    for name, count in [
        ("pack_requests", 120),
        ("tuned_pack_requests", 120),
        ("nested_pack_requests", 60),
        ("subspace_pack_requests", 60),
    ]:
        for n, request in enumerate(_drawn(getattr(strategies, name)(), count)):
            yield f"{name} {n}", request
    yield from _unusual()


def _unusual() -> Iterator[tuple[str, Any]]:
    """Requests off the common path: snake_case and unknown keys, nulls, invalid values,
    malformed bodies."""
    from tests.api.test_pack_endpoint import BASIC_PACK

    base: Wire = {**copy.deepcopy(BASIC_PACK), "includeImages": False}
    yield "basic", base
    yield "empty", {}
    yield "snake case", {**base, "item_sets": base["itemSets"], "itemSets": None}
    yield "unknown keys", {**base, "colour": 1, "itemSets": [{**base["itemSets"][0], "x": 1}]}
    yield "nulls", {**base, "usableSpace": None, "eye": None, "itemSortReverse": None}
    yield "item null", {**base, "itemSets": [{**base["itemSets"][0], "name": None}]}
    yield (
        "box snake",
        {**base, "boxTypes": [{"dimensions": {"x": 9, "y": 9, "z": 9}, "weight_max": 5}]},
    )
    yield "depth 9", {**base, "itemOrientationSearchDepth": 9}
    yield "negative weight", {**base, "itemSets": [{**base["itemSets"][0], "weight": -1}]}
    yield "no dimensions", {**base, "itemSets": [{"weight": 1}]}
    yield "bad sort", {**base, "itemSort": "sideways"}
    yield "bad coord", {**base, "coordOrder": [0, 0, 1]}
    yield "no weightMax", {**base, "boxTypes": [{"dimensions": {"x": 9, "y": 9, "z": 9}}]}
    yield "array body", [1, 2]
    yield "malformed", b'{"itemSets": ['
    yield "nan", b'{"usableSpace": NaN}'


# --------------------------------------------------------------------------- record


def _masked(wire: Wire) -> Wire:
    return {k: ("*" if k in _VOLATILE else v) for k, v in wire.items()}


def _pack_record(request: Any) -> Wire:
    import cartonize
    from cartonize.errors import BadRequest, InvalidRequest

    if isinstance(request, bytes):
        return {}
    try:
        response = cartonize.pack(request)
    except (InvalidRequest, BadRequest) as exc:
        return {"error": type(exc).__name__, "detail": str(exc), **vars(exc)}
    return _masked(response.model_dump(by_alias=True, exclude_none=True))


def _http_record(client: Any, request: Any) -> Wire:
    body = request if isinstance(request, bytes) else json.dumps(request).encode()
    result = client.simulate_post("/", body=body, headers={"Content-Type": "application/json"})
    data = result.json
    if isinstance(data, dict):
        data = _masked(data)
        if "responseFingerprint" in data:
            data["responseFingerprint"] = "*"  # hashes the masked fields too
    return {"status": result.status_code, "body": data}


def _saved_corpus(path: Path | None) -> list[tuple[str, Any]]:
    """The corpus, read from `path` when it exists, else drawn (and written there): the
    hypothesis draws are not the same from one process to the next, so two records to
    compare must read one saved corpus."""
    if path is not None and path.exists():
        saved = json.loads(path.read_text())
        return [(name, r.encode() if isinstance(r, str) else r) for name, r in saved]
    drawn = list(corpus())
    if path is not None:
        encoded = [(name, r.decode() if isinstance(r, bytes) else r) for name, r in drawn]
        path.write_text(json.dumps(encoded))
    return drawn


def record(out: Path, corpus_path: Path | None) -> int:
    """Write one JSON line per corpus request: its pack() and HTTP records."""
    from cartonize.store import Store
    from falcon import testing

    from api.app import create_app

    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "data")
        store.migrate()
        client = testing.TestClient(create_app(store=store))
        count = 0
        with out.open("w") as f:
            for name, request in _saved_corpus(corpus_path):
                line = {
                    "name": name,
                    "pack": _pack_record(request),
                    "http": _http_record(client, request),
                }
                f.write(json.dumps(line, sort_keys=True) + "\n")
                count += 1
    print(f"{count} requests recorded to {out}")
    return 0


def _comparable(line: str) -> Wire:
    """A record with ``built`` masked, for records made before it was (it changes with
    every build of the engine, so two builds of one commit differed)."""
    record: Wire = json.loads(line)
    pack, body = record.get("pack"), record.get("http", {}).get("body")
    for wire in (pack, body):
        if isinstance(wire, dict) and "built" in wire:
            wire["built"] = "*"
    return record


def compare(a: Path, b: Path) -> int:
    """Print the requests whose records differ; 1 if any does."""
    left = a.read_text().splitlines()
    right = b.read_text().splitlines()
    differ = [
        json.loads(x)["name"]
        for x, y in zip(left, right, strict=False)
        if x != y and _comparable(x) != _comparable(y)
    ]
    if len(left) != len(right):
        print(f"{a}: {len(left)} records, {b}: {len(right)}")
    for name in differ[:20]:
        print(f"differs: {name}")
    same = len(left) == len(right) and not differ
    print(f"{len(left)} records compared: {'identical' if same else f'{len(differ)} differ'}")
    return 0 if same else 1


# --------------------------------------------------------------------------- time


def _workloads() -> dict[str, list[Wire]]:
    from bench import ecommerce, pack_speed
    from bench.common import mpv_instances, mpv_request

    return {
        "MPV n=50": [mpv_request(inst, None) for inst in mpv_instances(False, sizes=[50])],
        "small orders": [pack_speed.small_order(seed) for seed in range(1, 61)],
        # bench.peers' orders: 15 cartons sharing a carrier rate table.
        "e-commerce": ecommerce.orders(100, seed=1),
    }


def _cpu_ms(requests: list[Wire], repeats: int) -> tuple[float, float]:
    """(Python, engine) CPU ms per request of `pack()`. The engine (`_core.pack_json`) runs
    once per request; the timed passes replay its answers, so Python's time is measured
    alone, without the engine's wake on the caches or the load around it."""
    import cartonize
    from cartonize import _core

    pack_json: Callable[[str], str] = _core.pack_json
    answers: dict[str, str] = {}
    engine = 0.0

    def recorded(text: str) -> str:
        nonlocal engine
        start = time.process_time()
        answers[text] = pack_json(text)
        engine += time.process_time() - start
        return answers[text]

    _core.pack_json = recorded  # type: ignore[assignment]
    for request in requests:
        cartonize.pack(request)
    _core.pack_json = answers.__getitem__  # type: ignore[assignment]
    start = time.process_time()
    for _ in range(repeats):
        for request in requests:
            cartonize.pack(request)
    python = time.process_time() - start
    _core.pack_json = pack_json  # type: ignore[assignment]
    return python / (repeats * len(requests)) * 1000, engine / len(requests) * 1000


def time_once(repeats: int) -> int:
    """Print one JSON line: per workload, (Python, engine) CPU ms per request."""
    print(json.dumps({name: _cpu_ms(r, repeats) for name, r in _workloads().items()}))
    return 0


def time_texts(rounds: int) -> int:
    """CPU ms per answer of `PackService`'s body and fingerprint texts, the two ways: the
    `json.dumps` lines it had (`response_fingerprint`, then the body) and `_core.json_texts`
    (one pass, then SHA-512 and the appended keys), alternating in this process over 40
    answers per workload; the texts are checked equal first."""
    import hashlib

    import cartonize
    from cartonize import _core
    from cartonize.service import _VOLATILE_KEYS, response_fingerprint

    uuid = "0" * 128

    def dumped(wire: Wire) -> str:
        wire = dict(wire)
        wire["responseFingerprint"] = response_fingerprint(wire)
        wire["packUuid"] = uuid
        return json.dumps(wire, ensure_ascii=False, separators=(",", ":"))

    def one_pass(wire: Wire) -> str:
        texts = _core.json_texts(wire, _VOLATILE_KEYS)
        assert texts is not None
        body, canonical = texts
        keys = {"responseFingerprint": hashlib.sha512(canonical.encode()).hexdigest()}
        tail = json.dumps({**keys, "packUuid": uuid}, ensure_ascii=False, separators=(",", ":"))
        return f"{body[:-1]},{tail[1:]}"

    print(f"CPU ms per answer, median of {rounds} alternating rounds")
    for name, requests in _workloads().items():
        wires = []
        for request in requests[:40]:
            wire = cartonize.pack(request).model_dump(mode="json", by_alias=True, exclude_none=True)
            wire["requestFingerprint"] = "0" * 128
            wires.append(wire)
        assert all(dumped(w) == one_pass(w) for w in wires)
        times: dict[str, list[float]] = {"json.dumps": [], "json_texts": []}
        for _ in range(rounds):
            for label, write in (("json.dumps", dumped), ("json_texts", one_pass)):
                start = time.process_time()
                for wire in wires:
                    write(wire)
                times[label].append((time.process_time() - start) / len(wires) * 1000)
        medians = "  ".join(f"{k} {statistics.median(v):6.3f}" for k, v in times.items())
        print(f"  {name:<14} {medians}")
    return 0


def time_alternating(baseline: Path | None, rounds: int, repeats: int) -> int:
    """Time this package (and `baseline`'s, alternating) in fresh processes; print medians."""
    here = Path(__file__).resolve().parent.parent
    sides: list[tuple[str, str]] = [("this", str(here / "python"))]
    if baseline is not None:
        sides.insert(0, ("baseline", str(baseline)))
    runs: dict[str, list[dict[str, list[float]]]] = {label: [] for label, _ in sides}
    for _ in range(rounds):
        for label, path in sides:
            env = {**os.environ, "PYTHONPATH": os.pathsep.join([path, str(here)])}
            out = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "bench.python_overhead",
                    "time-once",
                    "--repeats",
                    str(repeats),
                ],
                env=env,
                cwd=here,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            runs[label].append(json.loads(out.splitlines()[-1]))
    print(f"CPU ms per request, median of {rounds} alternating rounds of {repeats} repeats")
    for label, results in runs.items():
        for name in results[0]:
            python = statistics.median(r[name][0] for r in results)
            engine = statistics.median(r[name][1] for r in results)
            print(f"  {label:<9}{name:<14} python {python:6.3f}  engine {engine:6.3f}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: record, compare, time."""
    parser = argparse.ArgumentParser(prog="python -m bench.python_overhead", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("out", type=Path)
    rec.add_argument("--corpus", type=Path, help="the requests, saved on first use")
    cmp = sub.add_parser("compare")
    cmp.add_argument("a", type=Path)
    cmp.add_argument("b", type=Path)
    timing = sub.add_parser("time")
    timing.add_argument("--baseline", type=Path)
    timing.add_argument("--rounds", type=int, default=5)
    timing.add_argument("--repeats", type=int, default=5)
    texts = sub.add_parser("texts")
    texts.add_argument("--rounds", type=int, default=15)
    once = sub.add_parser("time-once")
    once.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    if args.command == "record":
        return record(args.out, args.corpus)
    if args.command == "compare":
        return compare(args.a, args.b)
    if args.command == "time":
        return time_alternating(args.baseline, args.rounds, args.repeats)
    if args.command == "texts":
        return time_texts(args.rounds)
    return time_once(args.repeats)


if __name__ == "__main__":
    sys.exit(main())
