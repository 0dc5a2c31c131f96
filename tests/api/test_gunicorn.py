"""The real app under gunicorn with two workers, spoken to over HTTP."""

from __future__ import annotations

import json
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import filelock
import httpx
from cartonize.serve import api_on_loopback
from cartonize.store import Store

from tests.api.library_setup import ITEM_MAP, item

PACK = {
    "orderId": "G-1",
    "itemSets": [{"refId": 0, "dimensions": {"x": 2, "y": 3, "z": 4}, "weight": 1, "quantity": 6}],
    "boxTypes": [{"name": "M", "dimensions": {"x": 6, "y": 6, "z": 8}, "weightMax": 50}],
}
CONNECTION = {"name": "feed", "resourceType": "items", "schemaMap": ITEM_MAP}


def test_pack_under_gunicorn() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / "gunicorn.log"
        with api_on_loopback(Path(scratch) / "data", log, workers=2) as served:
            base_url = served + "/"
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
        lines = log.read_text().splitlines()
        # Each worker froze what the app loaded (api/gunicorn.conf.py, post_worker_init).
        frozen = [int(line.split("froze ")[1].split()[0]) for line in lines if "froze " in line]
        assert len(frozen) == 2 and min(frozen) > 10_000, lines
        assert not [line for line in lines if "leaked" in line]
        access = [json.loads(line) for line in lines if '"path"' in line]
        assert {(line["method"], line["status"]) for line in access} >= {
            ("POST", 200),
            ("POST", 400),
            ("GET", 200),
        }


def chunks(body: bytes) -> Iterator[bytes]:
    """`body` in two pieces: httpx sends a generator with `Transfer-Encoding: chunked`."""
    yield body[:50]
    yield body[50:]


def test_chunked_bodies_are_read_and_bounded_under_gunicorn() -> None:
    # Falcon's bounded stream is empty without a Content-Length: a chunked pack came back 200
    # as an empty pack, a chunked control body was a no-op, a chunked sync write a 400.
    with tempfile.TemporaryDirectory() as scratch:
        store = Store(Path(scratch) / "data")
        store.migrate()
        plan_id = store.create_account("ACME", "premium").plan_id
        store.set_connections_enabled("ACME", True)
        auth = {"Authorization": f"apikey {store.create_key('ACME', 'test')[1]}"}
        env = {"CARTONIZE_MAX_BODY_BYTES": "4096"}
        with api_on_loopback(store.data_dir, Path(scratch) / "log", workers=1, env=env) as url:
            body = json.dumps({**PACK, "orderId": "CHUNKED"}).encode()
            packed = httpx.post(url + "/", content=chunks(body), headers=auth, timeout=30.0)
            assert packed.status_code == 200, packed.text
            assert (packed.json()["lenItems"], packed.json()["orderId"]) == (6, "CHUNKED")

            big = body + b" " * 4096
            refused = httpx.post(url + "/", content=chunks(big), headers=auth, timeout=30.0)
            assert (refused.status_code, refused.json()["code"]) == (413, 413)

            made = httpx.post(
                f"{url}/plans/{plan_id}/connections",
                content=chunks(json.dumps(CONNECTION).encode()),
                headers=auth,
                timeout=30.0,
            )
            assert made.status_code == 201, made.text
            write = httpx.post(
                f"{url}/sync-api/{made.json()['publicApiId']}/rest",
                content=chunks(json.dumps({"payload": [item("A")]}).encode()),
                headers={"X-Service-API-Secret": made.json()["apiSecret"]},
                timeout=30.0,
            )
            assert (write.status_code, write.json()["inserted"]) == (200, 1), write.text


def raw_exchange(url: str, request: bytes) -> tuple[bytes, bytes]:
    """Send `request` as is; the status line and the Content-Type line of the answer."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(request)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head = answer.partition(b"\r\n\r\n")[0].split(b"\r\n")
    return head[0], next(line for line in head if line.lower().startswith(b"content-type"))


def test_gunicorn_answers_requests_it_cannot_parse_itself_in_html() -> None:
    # The documented exception to the error shape (docs/operations.md, "Errors gunicorn
    # answers"): these never reach the app. If gunicorn ever passes them on, or the limits
    # change, this fails and the documentation must change with it.
    cases = [
        (b"GET /packs?orderId=" + b"a" * 5000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", b"414"),
        (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}", b"400"),
        (b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n", b"431"),
    ]
    with (
        tempfile.TemporaryDirectory() as scratch,
        api_on_loopback(Path(scratch) / "data", Path(scratch) / "log", workers=1) as url,
    ):
        for request, status in cases:
            status_line, content_type = raw_exchange(url, request)
            assert status_line.split()[1] == status, status_line
            assert content_type.endswith(b"text/html"), content_type


def first_pack_with_the_store_locked(warm: str) -> tuple[int | None, list[str]]:
    """A fresh one-worker gunicorn's first keyed pack while another process holds the
    store's lock: its status (None: no answer in 5 s, waiting for the store), and the log."""
    with tempfile.TemporaryDirectory() as scratch:
        store = Store(Path(scratch) / "data")
        store.migrate()
        store.create_account("WARM", "enterprise")
        auth = {"Authorization": f"apikey {store.create_key('WARM', 'first')[1]}"}
        log = Path(scratch) / "gunicorn.log"
        # Packs are batched (written a minute later): the request itself needs no store.
        env = {"CARTONIZE_WARM_WORKERS": warm, "CARTONIZE_PACK_FLUSH_SECONDS": "60"}
        locked = filelock.FileLock(str(store.path) + ".lock", timeout=5)
        with api_on_loopback(store.data_dir, log, workers=1, env=env) as url, locked:
            try:
                status: int | None = httpx.post(
                    url + "/", json=PACK, headers=auth, timeout=5.0
                ).status_code
            except httpx.ReadTimeout:
                status = None
        return status, log.read_text().splitlines()


def test_a_worker_caches_the_keys_before_it_serves() -> None:
    # A worker's first request with a key opened the store to look the key up (50-60 ms,
    # most of "the cold first request": docs/benchmarks.md). Each worker now caches every
    # active key, and runs one pack, before it serves: that request needs no store.
    status, lines = first_pack_with_the_store_locked("1")
    assert status == 200, lines
    assert [line for line in lines if "warmed: 1 API keys cached, one pack run" in line]
    # Not warmed, the same request waits for the store (the proof that this one needs it).
    cold_status, cold_lines = first_pack_with_the_store_locked("0")
    assert cold_status is None, cold_lines
    assert not [line for line in cold_lines if "warmed" in line]
