"""The cold first request: how much longer a fresh gunicorn worker takes over its first pack
than over the ones after it, through the real server.

Run from the repository root: ``python -m bench.cold_start [--runs 6] [--requests 20]``.

Each run starts gunicorn with one worker on a free loopback port over a fresh store with an
API key (``cartonize.serve.api_on_loopback``, which waits until ``/healthz`` answers: the
time to that answer is the run's "ready" figure), then sends ``--requests`` keyed packs one
after another (gunicorn's sync workers close each connection): the small pack of
``bench.load`` with its pictures (``includeImages`` at its default, true), as a client
sends it. It prints, per run, the first pack's time, the second's and the median of the
rest (and the worker's own warm-up time from its log, when it warmed), then the medians
over the runs. Times are wall clock on a shared machine: compare runs alternated in the
same period (``--env NAME=VALUE`` passes a setting to gunicorn, e.g.
``CARTONIZE_WARM_WORKERS=0``).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from cartonize.serve import api_on_loopback
from cartonize.store import Store

from bench.load import SMALL_PACK

#: The load benchmark's pack, with its pictures as a client gets them by default.
PACK = {k: v for k, v in SMALL_PACK.items() if k != "includeImages"}


def one_run(requests: int, env: dict[str, str]) -> dict[str, float]:
    """Start a one-worker gunicorn, send `requests` packs; times in ms."""
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        store = Store(scratch / "data")
        store.migrate()
        store.create_account("COLD", "enterprise")
        _, key = store.create_key("COLD", "bench")
        del store
        body = json.dumps(PACK).encode()
        headers = {"Authorization": f"apikey {key}", "Content-Type": "application/json"}
        started = time.perf_counter()
        with api_on_loopback(
            scratch / "data",
            scratch / "gunicorn.log",
            workers=1,
            env={"CARTONIZE_PACK_FLUSH_SECONDS": "0.5", **env},
        ) as base_url:
            ready = time.perf_counter() - started
            times = []
            with httpx.Client(base_url=base_url, timeout=60) as client:
                for _ in range(requests):
                    t0 = time.perf_counter()
                    reply = client.post("/", content=body, headers=headers)
                    times.append((time.perf_counter() - t0) * 1000)
                    if reply.status_code != 200:
                        raise SystemExit(f"FAILED: {reply.status_code} {reply.text[:300]}")
        warmed = re.search(r"warmed: .* in (\d+) ms", (scratch / "gunicorn.log").read_text())
    return {
        "warm_ms": float(warmed.group(1)) if warmed else 0.0,
        "ready_ms": ready * 1000,
        "first_ms": times[0],
        "second_ms": times[1],
        "rest_ms": statistics.median(times[2:]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args()
    env = dict(item.split("=", 1) for item in args.env)
    runs = []
    print("run  ready ms  (warm-up ms)  first ms  second ms  rest (median) ms")
    for index in range(args.runs):
        figures = one_run(args.requests, env)
        runs.append(figures)
        print(
            f"{index + 1:>3}  {figures['ready_ms']:>8.0f}  {figures['warm_ms']:>12.0f}  "
            f"{figures['first_ms']:>8.1f}  "
            f"{figures['second_ms']:>9.1f}  {figures['rest_ms']:>16.1f}"
        )
    med = {name: statistics.median(r[name] for r in runs) for name in runs[0]}
    print(
        f"median  {med['ready_ms']:>5.0f}  {med['warm_ms']:>12.0f}  {med['first_ms']:>8.1f}  "
        f"{med['second_ms']:>9.1f}  {med['rest_ms']:>16.1f}"
    )


if __name__ == "__main__":
    main()
