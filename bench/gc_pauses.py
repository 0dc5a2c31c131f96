"""Garbage-collection pauses in an API worker, with and without the gunicorn config's
``post_worker_init`` (``gc.freeze()`` of what loading the app left alive).

Run from the repository root: ``python -m bench.gc_pauses [--requests 1600] [--runs 2]``.

Each run is a fresh process that builds the app as a gunicorn worker does
(``api.app.get_app()`` over a scratch store with an API key), optionally calls the
config's ``post_worker_init``, then sends the seeded e-commerce orders of
``bench.ecommerce`` (seed 1) through Falcon's in-process client with the key. It counts
the collections of each generation and their pause time (``gc.callbacks``) and the
request latencies. Runs alternate between the two settings, so both see the same load.
Pauses are wall time; the collection counts do not depend on the machine's load.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import runpy
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def measure(requests: int, freeze: bool) -> dict[str, Any]:
    """One worker's figures (run in a child process: the app is built once per process)."""
    import gc

    import falcon.testing

    from bench import ecommerce
    from tests.validator import validate

    scratch = tempfile.mkdtemp()
    os.environ["CARTONIZE_DATA_DIR"] = scratch
    from cartonize.store import Store

    store = Store(scratch)
    store.migrate()
    store.create_account("GC", "enterprise")
    _, key = store.create_key("GC", "bench")
    del store
    from api.app import ACCESS_LOGGER, get_app

    app = get_app()
    logging.getLogger(ACCESS_LOGGER).disabled = True
    if freeze:
        hooks = runpy.run_path(str(ROOT / "api" / "gunicorn.conf.py"))
        hooks["post_worker_init"](SimpleNamespace(log=logging.getLogger("gc_pauses")))
    client = falcon.testing.TestClient(app, headers={"Authorization": f"apikey {key}"})
    # Requests and replies are kept as text, which the collector does not track: a worker
    # holds neither, and thousands of dicts would lengthen every full collection.
    orders = [json.dumps(order) for order in ecommerce.orders(requests, 1)]
    pauses: dict[int, list[float]] = {0: [], 1: [], 2: []}
    started: list[float] = [0.0]

    def timer(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            pauses[info["generation"]].append((time.perf_counter() - started[0]) * 1e3)

    latencies = []
    bodies: list[str] = []
    gc.callbacks.append(timer)
    for order in orders:
        start = time.perf_counter()
        reply = client.simulate_post("/", body=order, content_type="application/json")
        latencies.append((time.perf_counter() - start) * 1e3)
        if reply.status_code != 200:
            raise RuntimeError(f"{reply.status_code}: {reply.text[:300]}")
        bodies.append(reply.text)
    gc.callbacks.remove(timer)
    frozen = gc.get_freeze_count()
    gc.unfreeze()
    for text, body in zip(orders, bodies, strict=True):
        order = json.loads(text)
        problems = validate(order, json.loads(body))
        if problems:
            raise RuntimeError(f"invalid response to {order['orderId']}: {problems[:3]}")
    latencies.sort()
    return {
        "freeze": freeze,
        "frozen": frozen,
        "collections": {g: len(p) for g, p in pauses.items()},
        "pause_ms": {g: sum(p) for g, p in pauses.items()},
        "max_pause_ms": {g: max(p, default=0.0) for g, p in pauses.items()},
        "p50_ms": latencies[len(latencies) // 2],
        "p99_ms": latencies[int(len(latencies) * 0.99)],
        "max_ms": latencies[-1],
    }


def child(requests: int, freeze: bool) -> dict[str, Any]:
    """`measure` in a fresh interpreter; its JSON line back."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "python"), str(ROOT)])}
    command = [sys.executable, "-m", "bench.gc_pauses", "--child", "--requests", str(requests)]
    if freeze:
        command.append("--freeze")
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"child failed ({done.returncode}):\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    """Alternate runs without and with the freeze; print a line per run and the medians."""
    parser = argparse.ArgumentParser(prog="python -m bench.gc_pauses", description=__doc__)
    parser.add_argument("--requests", type=int, default=1600)
    parser.add_argument("--runs", type=int, default=2, help="runs of each setting")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--freeze", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.requests, args.freeze)))
        return 0
    print(f"{args.requests} e-commerce orders (seed 1) through the API in process, per run")
    print("setting       frozen  gen-2 collections  gen-2 pause ms (max)  p99 ms  max ms")
    results: dict[bool, list[dict[str, Any]]] = {False: [], True: []}
    for _ in range(args.runs):
        for freeze in (False, True):
            r = child(args.requests, freeze)
            results[freeze].append(r)
            name = "gc.freeze()" if freeze else "as loaded"
            print(
                f"{name:<12} {r['frozen']:>7} {r['collections']['2']:>18} "
                f"{r['pause_ms']['2']:>12.1f} ({r['max_pause_ms']['2']:.1f}) "
                f"{r['p99_ms']:>9.2f} {r['max_ms']:>7.2f}"
            )
    for freeze, runs in results.items():
        name = "gc.freeze()" if freeze else "as loaded"
        pause = statistics.median(r["pause_ms"]["2"] for r in runs)
        worst = statistics.median(r["max_ms"] for r in runs)
        print(
            f"median of {name}: gen-2 pause {pause:.1f} ms per run, slowest request {worst:.1f} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
