"""The real app under gunicorn with two workers, spoken to over HTTP."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
GUNICORN = Path(sys.executable).with_name("gunicorn")
STARTUP_SECONDS = 30.0

PACK = {
    "orderId": "G-1",
    "itemSets": [{"refId": 0, "dimensions": {"x": 2, "y": 3, "z": 4}, "weight": 1, "quantity": 6}],
    "boxTypes": [{"name": "M", "dimensions": {"x": 6, "y": 6, "z": 8}, "weightMax": 50}],
}


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_until_serving(base_url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    """Poll until the server answers HTTP; fail with its log if it dies or never answers."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"gunicorn exited with {server.returncode}:\n{log.read_text()}")
        try:
            httpx.get(base_url, timeout=1.0)  # any answer (405) means a worker is up
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError(f"gunicorn did not answer in {STARTUP_SECONDS} s:\n{log.read_text()}")


def test_pack_under_gunicorn() -> None:
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/"
    command = [
        str(GUNICORN),
        "-c",
        "api/gunicorn.conf.py",
        "--workers",
        "2",
        "--bind",
        f"127.0.0.1:{port}",
        "api.app:get_app()",
    ]
    with tempfile.TemporaryDirectory() as scratch:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT / "python"), str(ROOT)]),
            "CARTONIZE_DATA_DIR": str(Path(scratch) / "data"),
        }
        log = Path(scratch) / "gunicorn.log"
        with log.open("wb") as log_file:
            server = subprocess.Popen(
                command, cwd=ROOT, env=env, stdout=log_file, stderr=subprocess.STDOUT
            )
        try:
            wait_until_serving(base_url, server, log)
            reply = httpx.post(base_url, json=PACK, timeout=30.0)
            assert reply.status_code == 200, reply.text
            assert reply.headers["content-type"] == "application/json"
            body = reply.json()
            assert body["lenBoxes"] >= 1
            packed = sum(len(entry["box"]["items"]) for entry in body["boxes"])
            assert (packed, body["leftovers"], body["orderId"]) == (6, [], "G-1")

            bad = httpx.post(base_url, content=b"[1, 2]", timeout=10.0)
            assert (bad.status_code, bad.json()["code"]) == (400, 400)

            # Packs are batched per worker; the next GET may reach the other worker.
            for n in range(4):
                made = httpx.post(base_url, json={**PACK, "orderId": f"G-{n}"}, timeout=30.0)
                stored = httpx.get(f"{base_url}packs/{made.json()['packUuid']}", timeout=30.0)
                assert stored.status_code == 200, stored.text
                assert stored.json()["response"]["orderId"] == f"G-{n}"
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        access = [json.loads(line) for line in log.read_text().splitlines() if '"path"' in line]
        assert {(line["method"], line["status"]) for line in access} >= {
            ("POST", 200),
            ("POST", 400),
            ("GET", 200),
        }
