"""A real third-party JSON source on loopback, for pull tests and the pull benchmark.

A small WSGI app served by the standard library's wsgiref in a thread (one thread per
request, so a slow answer does not block the next). It checks the auth headers a connection
template would send, serves N nested records (up to 100,000) under any root path, and on
demand misbehaves: scripted 429 (with Retry-After) or 5xx answers, slow or trickling
responses, oversized bodies, JSON that is not a list, non-JSON, and redirects.

Routes (all GET):
    /records?n=N&root=data.items   N records, wrapped so that `root` leads to the array
    /slow?delay=S                  waits S seconds before answering, then records
    /trickle?chunks=K&pause=S      records sent in K chunks with S seconds between them
    /large?bytes=B&declare=0|1     a JSON array of about B bytes (Content-Length if declare)
    /not-a-list                    {"data": {"items": {...an object...}}}
    /not-json                      an HTML page
    /deep?levels=N                 a JSON array nested N levels deep
    /redirect?to=URL               302 to URL (to itself without `to`)
    /echo?status=S                 answers S with the request line and headers as text, as
                                   some APIs' error pages do (before any credential check)
    /bad-gzip                      200, Content-Encoding gzip, a body that is not gzip
    /latin1?declare=0|1            one record with "Größe" in ISO-8859-1 (charset declared)
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from socketserver import ThreadingMixIn
from typing import Any
from urllib.parse import parse_qs
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from cartonize.store import Store
from cartonize.sync.connections import Connection, ConnectionFields, create_connection
from cartonize.sync.crypto import SecretBox

StartResponse = Callable[[str, list[tuple[str, str]]], Any]

API_KEY = "key-3a7f9c"
API_TOKEN = "tok-81d2e4"
#: The headers template a connection to this server uses.
HEADERS_TEMPLATE = json.dumps(
    {"X-Api-Key": "{{ api_key }}", "Authorization": "Bearer {{api_token}}"}
)
#: The schema map of an items connection to this server (see `make_record`).
SCHEMA_MAP = {
    "refId": "sku",
    "dimensions_x": "dimensions.length",
    "dimensions_y": "dimensions.width",
    "dimensions_z": "dimensions.height",
    "weight": "weight.value",
}
MAX_RECORDS = 100_000
#: When `connect` creates a connection (a fixed time: tests compare logs and schedules).
CREATED = datetime(2026, 11, 2, 10, 0, tzinfo=UTC)


def connect(
    store: Store, account_id: int, source: ThirdPartyServer, n: int = 40, **fields: Any
) -> tuple[Connection, str]:
    """An items connection of `account_id` pulling `n` records from `source` (with this
    module's headers, credentials and schema map; `fields` override them), and its
    secret."""
    box = SecretBox.for_data_dir(store.data_dir)
    values: dict[str, Any] = {
        "name": "wms",
        "resource_type": "items",
        "new_resource_base_name": "WMS items",
        "third_party_api_url": source.url(f"/records?n={n}&root=data.items"),
        "schema_root_path": "data.items",
        "api_headers_template": HEADERS_TEMPLATE,
        "third_party_api_key": API_KEY,
        "third_party_api_token": API_TOKEN,
        "schema_map": SCHEMA_MAP,
        **fields,
    }
    return create_connection(store, box, account_id, ConnectionFields(**values), CREATED)


def make_record(i: int) -> dict[str, Any]:
    """Record `i` of the source: nested like a typical WMS answer, with a dotted key."""
    return {
        "id": i,
        "sku": f"SKU-{i:06d}",
        "description": f"Item number {i}",
        "dimensions": {"length": 10 + i % 7, "width": 5 + i % 5, "height": 2.5 + i % 3},
        "weight": {"value": round(0.25 + (i % 11) * 0.125, 3), "unit": "kg"},
        "attributes": {"color": ("red", "green", "blue")[i % 3], "fragile": i % 4 == 0},
        "ean.code": f"40{i:011d}",
    }


@lru_cache(maxsize=8)
def records_body(n: int, root: str) -> bytes:
    """The JSON body holding records 0..n-1 at `root` (blank: a top-level array)."""
    document: Any = [make_record(i) for i in range(n)]
    for segment in reversed([s for s in root.split(".") if s]):
        document = {segment: document}
    if isinstance(document, dict):
        document["meta"] = {"count": n, "generated": "2026-11-02T10:00:00Z"}
    return json.dumps(document, separators=(",", ":")).encode()


def _record_text(i: int, *members: str) -> str:
    """Record `i` as JSON text, with `members` (JSON text, repeats allowed) spliced in."""
    text = json.dumps(make_record(i), separators=(",", ":"))
    return text[:-1] + "".join("," + m for m in members) + "}"


#: Records 0-5 under data.items, as JSON text (a dict cannot hold a key twice): 1 repeats
#: "sku" with another value, 2 repeats "weight" with the same one, 3 repeats a nested key
#: ("dimensions.length") with another value, 4 repeats "id" as 4 and 4.0 (one number),
#: 5 repeats "sku" as the same text and "attributes.fragile" as false and 0 (not the same).
REPEATED_KEYS_BODY = (
    '{"data":{"items":['
    + ",".join(
        [
            _record_text(0),
            _record_text(1, '"sku":"SKU-OTHER"'),
            _record_text(2, '"weight":' + json.dumps(make_record(2)["weight"])),
            _record_text(3).replace('"length":13', '"length":13,"length":99'),
            _record_text(4, '"id":4.0'),
            _record_text(5, '"sku":"SKU-000005"').replace(
                '"fragile":false}', '"fragile":false,"fragile":0}'
            ),
        ]
    )
    + "]}}"
).encode()
#: An envelope naming "data" twice, with different records.
REPEATED_ROOT_BODY = (
    '{"data":{"items":[' + _record_text(0) + ']},"data":{"items":[' + _record_text(1) + "]}}"
).encode()


@dataclass(frozen=True)
class SeenRequest:
    """One request as the server received it."""

    path: str
    query: str
    headers: dict[str, str]


@dataclass
class Scripted:
    """An answer given instead of the route's own, `times` times."""

    status: int
    times: int = 1
    retry_after: str | None = None


@dataclass
class ThirdPartyApp:
    """The WSGI app; tests script failures and read `seen` through `ThirdPartyServer`."""

    api_key: str = API_KEY
    api_token: str = API_TOKEN
    seen: list[SeenRequest] = field(default_factory=list)
    script: list[Scripted] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: Reads of `/versioned` so far.
    reads: int = 0

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        query = environ.get("QUERY_STRING", "")
        headers = {
            key[5:].replace("_", "-").title(): str(value)
            for key, value in environ.items()
            if key.startswith("HTTP_")
        }
        with self.lock:
            self.seen.append(SeenRequest(path, query, headers))
            scripted = self._next_scripted()
        if path == "/echo":
            return self._echo(environ, headers, start_response)
        if scripted is not None:
            extra = [("Retry-After", scripted.retry_after)] if scripted.retry_after else []
            return _send(start_response, scripted.status, {"error": "scripted"}, extra)
        if (
            headers.get("X-Api-Key") != self.api_key
            or headers.get("Authorization") != f"Bearer {self.api_token}"
        ):
            return _send(start_response, 401, {"error": "bad credentials"})
        params = {k: v[-1] for k, v in parse_qs(query).items()}
        route = {
            "/records": self._records,
            "/slow": self._slow,
            "/versioned": self._versioned,
            "/trickle": self._trickle,
            "/large": self._large,
            "/not-a-list": self._not_a_list,
            "/not-json": self._not_json,
            "/deep": self._deep,
            "/redirect": self._redirect,
            "/bad-gzip": self._bad_gzip,
            "/latin1": self._latin1,
            "/repeated-keys": self._repeated_keys,
        }.get(path)
        if route is None:
            return _send(start_response, 404, {"error": f"no route {path}"})
        return route(params, start_response)

    def _next_scripted(self) -> Scripted | None:
        if not self.script:
            return None
        head = self.script[0]
        head.times -= 1
        if head.times <= 0:
            self.script.pop(0)
        return head

    def _records(self, params: dict[str, str], start_response: StartResponse) -> Iterable[bytes]:
        n = min(int(params.get("n", "10")), MAX_RECORDS)
        body = records_body(n, params.get("root", ""))
        start_response(
            "200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
        )
        return [body]

    def _slow(self, params: dict[str, str], start_response: StartResponse) -> Iterable[bytes]:
        time.sleep(float(params.get("delay", "1")))
        return self._records(params, start_response)

    def _versioned(self, params: dict[str, str], start_response: StartResponse) -> Iterable[bytes]:
        """A source whose data changes with every read: the records of read k have skus
        `v<k>-<i>`; the first read answers after `delay` seconds (an older, slower pull)."""
        with self.lock:
            self.reads += 1
            read = self.reads
        if read == 1:
            time.sleep(float(params.get("delay", "1")))
        records = [
            {**make_record(i), "sku": f"v{read}-{i}"} for i in range(int(params.get("n", "3")))
        ]
        return _send(start_response, 200, records)

    def _trickle(self, params: dict[str, str], start_response: StartResponse) -> Iterable[bytes]:
        body = records_body(min(int(params.get("n", "10")), MAX_RECORDS), "")
        chunks = int(params.get("chunks", "5"))
        pause = float(params.get("pause", "0.1"))
        size = -(-len(body) // chunks)
        start_response("200 OK", [("Content-Type", "application/json")])

        def parts() -> Iterator[bytes]:
            for start in range(0, len(body), size):
                yield body[start : start + size]
                time.sleep(pause)

        return parts()

    def _large(self, params: dict[str, str], start_response: StartResponse) -> Iterable[bytes]:
        target = int(params.get("bytes", "1000000"))
        piece = b'{"pad":"' + b"x" * 1000 + b'"},'
        count = max(1, target // len(piece))
        headers = [("Content-Type", "application/json")]
        size = 1 + count * len(piece)  # "[" + pieces, the last comma becoming "]"
        if params.get("declare") == "1":
            headers.append(("Content-Length", str(size)))
        start_response("200 OK", headers)

        def parts() -> Iterator[bytes]:
            yield b"["
            for i in range(count):
                yield piece if i < count - 1 else piece[:-1] + b"]"

        return parts()

    def _not_a_list(self, params: dict[str, str], start_response: StartResponse) -> Iterable[bytes]:
        return _send(start_response, 200, {"data": {"items": {"id": 1, "sku": "A"}}, "count": 1})

    def _not_json(self, params: dict[str, str], start_response: StartResponse) -> Iterable[bytes]:
        body = b"<html><body>Maintenance</body></html>"
        start_response(
            "200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(body)))]
        )
        return [body]

    def _deep(self, params: dict[str, str], start_response: StartResponse) -> Iterable[bytes]:
        levels = int(params.get("levels", "100000"))
        body = b"[" * levels + b"]" * levels
        start_response(
            "200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
        )
        return [body]

    def _repeated_keys(
        self, params: dict[str, str], start_response: StartResponse
    ) -> Iterable[bytes]:
        """`REPEATED_KEYS_BODY`, or with `root=twice` an envelope naming `data` twice."""
        body = REPEATED_ROOT_BODY if params.get("root") == "twice" else REPEATED_KEYS_BODY
        start_response(
            "200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
        )
        return [body]

    def _echo(
        self, environ: dict[str, Any], headers: dict[str, str], start_response: StartResponse
    ) -> Iterable[bytes]:
        params = {k: v[-1] for k, v in parse_qs(environ.get("QUERY_STRING", "")).items()}
        status = int(params.get("status", "401"))
        line = f"GET {environ.get('PATH_INFO', '')}?{environ.get('QUERY_STRING', '')}"
        text = "\n".join([f"invalid request: {line}", *(f"{k}: {v}" for k, v in headers.items())])
        body = text.encode()
        start_response(
            f"{status} Echo", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))]
        )
        return [body]

    def _bad_gzip(self, params: dict[str, str], start_response: StartResponse) -> Iterable[bytes]:
        body = b"this is not gzip data"
        start_response(
            "200 OK",
            [
                ("Content-Type", "application/json"),
                ("Content-Encoding", "gzip"),
                ("Content-Length", str(len(body))),
            ],
        )
        return [body]

    def _latin1(self, params: dict[str, str], start_response: StartResponse) -> Iterable[bytes]:
        body = json.dumps([{"sku": "Größe-1"}], ensure_ascii=False).encode("iso-8859-1")
        kind = "application/json"
        if params.get("declare") == "1":
            kind += "; charset=ISO-8859-1"
        start_response("200 OK", [("Content-Type", kind), ("Content-Length", str(len(body)))])
        return [body]

    def _redirect(self, params: dict[str, str], start_response: StartResponse) -> Iterable[bytes]:
        start_response(
            "302 Found", [("Location", params.get("to", "/redirect")), ("Content-Length", "0")]
        )
        return [b""]


def _send(
    start_response: StartResponse,
    status: int,
    document: Any,
    extra: list[tuple[str, str]] | None = None,
) -> Iterable[bytes]:
    from http import HTTPStatus

    body = json.dumps(document).encode()
    headers = [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
    start_response(f"{status} {HTTPStatus(status).phrase}", headers + (extra or []))
    return [body]


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class ThirdPartyServer:
    """Runs `ThirdPartyApp` on 127.0.0.1 in a thread; use as a context manager."""

    def __init__(self, app: ThirdPartyApp | None = None) -> None:
        self.app = app or ThirdPartyApp()
        self._server = make_server(
            "127.0.0.1", 0, self.app, server_class=_ThreadingWSGIServer, handler_class=_QuietHandler
        )
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> ThirdPartyServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        """The address of `path` (with its query) on this server, under `host`."""
        return f"http://{host}:{self.port}{path}"

    def fail_next(self, status: int, times: int = 1, retry_after: str | None = None) -> None:
        """Answer the next `times` requests with `status` (and Retry-After if given)."""
        with self.app.lock:
            self.app.script.append(Scripted(status, times, retry_after))

    def reset(self) -> None:
        """Forget seen requests and pending scripted answers."""
        with self.app.lock:
            self.app.seen.clear()
            self.app.script.clear()
            self.app.reads = 0

    @property
    def seen(self) -> list[SeenRequest]:
        """Requests received so far, oldest first."""
        with self.app.lock:
            return list(self.app.seen)
