"""Load benchmark of the pack service under gunicorn (2 workers) on loopback.

Run from the repository root: ``python -m bench.load [--seconds 15] [--connections 16]``.

Starts gunicorn on a free loopback port with a fresh store in a temporary directory,
issues an API key, and sends small keyed packs (5 items, 3 box types, includeImages false)
for a bounded time: with ``wrk`` when it is installed (Debian package ``wrk``), otherwise
with a bounded Python client. Prints requests/s and latency percentiles; target >= 400
req/s with p99 < 50 ms. Every response must be 200, or the run reports FAILED and exits 1.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from cartonize.serve import api_on_loopback
from cartonize.store import Store

SMALL_PACK = {
    "orderId": "LOAD-1",
    "includeImages": False,
    "itemSets": [
        {"refId": 1, "dimensions": {"x": 2, "y": 3, "z": 4}, "weight": 1, "quantity": 2},
        {"refId": 2, "dimensions": {"x": 1, "y": 1, "z": 5}, "weight": 0.5, "quantity": 2},
        {"refId": 3, "dimensions": {"x": 3, "y": 3, "z": 3}, "weight": 2, "quantity": 1},
    ],
    "boxTypes": [
        {"refId": 10, "dimensions": {"x": 4, "y": 4, "z": 6}, "weightMax": 20},
        {"refId": 11, "dimensions": {"x": 6, "y": 6, "z": 8}, "weightMax": 30},
        {"refId": 12, "dimensions": {"x": 10, "y": 10, "z": 10}, "weightMax": 50},
    ],
}

TARGET_RPS = 400.0
TARGET_P99_MS = 50.0


@dataclass
class Figures:
    """What one run measured."""

    tool: str
    requests: int
    errors: int
    seconds: float
    p50_ms: float
    p99_ms: float

    @property
    def rps(self) -> float:
        """Completed requests per second."""
        return self.requests / self.seconds


def _ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text.strip()).groups()  # type: ignore[union-attr]
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}[unit]


def run_wrk(url: str, key: str, seconds: int, connections: int, scratch: Path) -> Figures:
    """Drive the server with wrk (2 threads) and parse its latency distribution."""
    script = scratch / "pack.lua"
    script.write_text(
        'wrk.method = "POST"\n'
        f"wrk.body = {json.dumps(json.dumps(SMALL_PACK))}\n"
        'wrk.headers["Content-Type"] = "application/json"\n'
        f'wrk.headers["Authorization"] = "apikey {key}"\n'
    )
    command = ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", str(script)]
    out = subprocess.run(
        [*command, url], capture_output=True, text=True, timeout=seconds + 60, check=True
    ).stdout
    requests = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    duration = re.search(r"requests in ([\d.]+\w+),", out).group(1)  # type: ignore[union-attr]
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(r"Socket errors: (.*)", out)
    errors = int(non2xx.group(1)) if non2xx else 0
    if socket_errors:
        errors += sum(int(n) for n in re.findall(r"\d+", socket_errors.group(1)))
    p50 = re.search(r"50%\s+(\S+)", out).group(1)  # type: ignore[union-attr]
    p99 = re.search(r"99%\s+(\S+)", out).group(1)  # type: ignore[union-attr]
    return Figures("wrk", requests, errors, _ms(duration) / 1000, _ms(p50), _ms(p99))


def run_python(url: str, key: str, seconds: int, connections: int) -> Figures:
    """Drive the server with `connections` threads of keep-alive httpx clients."""
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    deadline = time.monotonic() + seconds
    body = json.dumps(SMALL_PACK).encode()
    headers = {"Content-Type": "application/json", "Authorization": f"apikey {key}"}

    def worker() -> None:
        with httpx.Client(timeout=10.0) as client:
            while time.monotonic() < deadline:
                started = time.perf_counter()
                reply = client.post(url, content=body, headers=headers)
                elapsed = (time.perf_counter() - started) * 1000
                with lock:
                    latencies.append(elapsed)
                    errors[0] += reply.status_code != 200

    started = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return Figures("python", len(ordered), errors[0], elapsed, statistics.median(ordered), p99)


def main() -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=15, help="measured duration (max 120)")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--python-client", action="store_true", help="do not use wrk")
    args = parser.parse_args()
    seconds = min(args.seconds, 120)
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        store = Store(scratch / "data")
        store.create_account("LOAD", "enterprise")
        _, key = store.create_key("LOAD", "bench")
        with api_on_loopback(scratch / "data", scratch / "gunicorn.log") as base_url:
            url = base_url + "/"
            for _ in range(50):  # warm both workers and the key caches
                httpx.post(url, json=SMALL_PACK, headers={"Authorization": f"apikey {key}"})
            use_wrk = shutil.which("wrk") is not None and not args.python_client
            figures = (
                run_wrk(url, key, seconds, args.connections, scratch)
                if use_wrk
                else run_python(url, key, seconds, args.connections)
            )
        stored = store.transaction(lambda con: con.execute("SELECT count(*) FROM packs").fetchone())
    print(
        f"tool={figures.tool} connections={args.connections} seconds={figures.seconds:.1f} "
        f"requests={figures.requests} errors={figures.errors} "
        f"rps={figures.rps:.0f} p50_ms={figures.p50_ms:.2f} p99_ms={figures.p99_ms:.2f} "
        f"packs_stored={stored[0] if stored else 0}"
    )
    if figures.errors:
        print("FAILED: some requests did not answer 200")
        return 1
    if figures.rps < TARGET_RPS or figures.p99_ms > TARGET_P99_MS:
        print(f"MISS: target >= {TARGET_RPS:.0f} req/s with p99 < {TARGET_P99_MS:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
