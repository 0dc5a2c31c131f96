"""Resources of the pack service: packing, stored packs, health.

Order of checks on `POST /`: body size (413), JSON and fields (400, 422), key (401), item
count (422), rate limits (429), then the pack. A request that fails early is not counted
against the caller's limits, nor is one that the pack refuses (4xx other than 429) or that
fails on our side (5xx): `RateLimiter.admitted` hands those admissions back.
"""

from __future__ import annotations

import html
import json
import string
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import cartonize
import falcon
from cartonize import jsontext
from cartonize.errors import BadRequest, InvalidRequest, NotFound, PayloadTooLarge, Unauthorized
from cartonize.models import PackRequest, PackResponse, ResponseModel, validate_request
from cartonize.service import CanonicalRequest, KeyRing, PackLog, PackService, RateLimiter
from cartonize.store import ApiKey, Store
from cartonize.sync.library import needs_account, needs_library, resolve_library
from falcon.util.mediatypes import quality
from pydantic import Field

__all__ = [
    "HealthResource",
    "Limits",
    "PackListResource",
    "PackResource",
    "ReadyResource",
    "StoredPack",
    "StoredPackList",
    "StoredPackResource",
    "StoredPackSummary",
    "authenticate",
    "body_too_large",
    "decode_body",
    "int_param",
    "prefers_html",
    "read_body",
    "read_limited",
    "refuse_repeats",
]

MAX_PAGE_SIZE = 100


@dataclass(frozen=True)
class Limits:
    """Per-request limits of the pack endpoint."""

    max_body_bytes: int
    max_items: int


def authenticate(req: falcon.Request, keys: KeyRing, body_key: str | None) -> ApiKey | None:
    """The caller's key from `Authorization: apikey <KEY>` or the body's `key`; 401 if wrong."""
    header = req.get_header("Authorization")
    header_key: str | None = None
    if header is not None:
        scheme, _, value = header.strip().partition(" ")
        if scheme.lower() != "apikey" or not value.strip():
            raise Unauthorized(details="send the key as 'Authorization: apikey <KEY>'")
        header_key = value.strip()
    if header_key and body_key and header_key != body_key:
        raise Unauthorized(details="the Authorization header and the body carry different keys")
    # An empty body key is no key: a client template's "key": "" means none was set.
    secret = header_key or body_key or None
    if secret is None:
        return None
    key = keys.verify(secret)
    if key is None:
        raise Unauthorized(details="unknown or revoked API key")
    req.context.key_stem = key.stem
    return key


#: Top-level keys of a body (a pack's API key; a connection's credentials and headers
#: template) whose values a repeated-key answer leaves out.
_SECRET_PATHS = frozenset({"key", "thirdPartyApiKey", "thirdPartyApiToken", "apiHeadersTemplate"})


def decode_body(raw: bytes) -> object:
    """The JSON of a request body (empty means `{}`); 400 when it is not JSON, 422 when
    an object names a key twice with different values (`refuse_repeats`)."""
    if not raw.strip():
        return {}
    try:
        data = jsontext.loads(raw, repeats="mark")
    except ValueError as exc:
        raise BadRequest("malformed JSON", details=str(exc)) from exc
    refuse_repeats(data)
    return data


def refuse_repeats(data: object, root: str = "") -> None:
    """422 (`invalid request`, as every 422 of the pack error body) when an object of
    `data` (decoded with repeats="mark") names a key more than once with different
    values, naming each key path: Python's json kept the last value silently, so
    `{"quantity": 1, "quantity": 100}` packed 100. A key repeated with one value passes.
    Values of secrets (`_SECRET_PATHS`) are not shown."""
    found = jsontext.repeats_details(data, root, withheld=_SECRET_PATHS)
    if found is not None:
        raise InvalidRequest(
            details=f"{found}: which value is meant is not clear; send each key once in an object",
        )


def prefers_html(req: falcon.Request) -> bool:
    """Whether the Accept header ranks text/html above application/json (a browser's
    does; `*/*`, none, or one that cannot be parsed does not)."""
    try:
        return quality(falcon.MEDIA_HTML, req.accept) > quality(falcon.MEDIA_JSON, req.accept)
    except ValueError:
        return False


#: What a browser opening the service's address sees (`GET /` preferring HTML); `$root`
#: is the path prefix the service is mounted under (see `landing_page`).
LANDING_PAGE = string.Template("""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>cartonize</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em}
code{font-size:90%}</style>
</head>
<body>
<main>
<h1>cartonize</h1>
<p>This address is the cartonize pack API: clients send pack requests as JSON with
<code>POST /</code>.</p>
<ul>
<li><a href="$root/sign-in">Sign in to the console</a>: connections, the resource library and a
pack playground, with an account API key.</li>
<li><a href="$root/docs">API documentation</a> (machine-readable:
<a href="$root/openapi.json">/openapi.json</a>).</li>
</ul>
</main>
</body>
</html>
""")


def landing_page(req: falcon.Request) -> str:
    """The landing page with its links under the request's path prefix (WSGI
    `SCRIPT_NAME`: the service mounted at `/cartonize` behind a proxy links
    `/cartonize/sign-in`, not the proxy's own `/sign-in`)."""
    return LANDING_PAGE.substitute(root=html.escape(req.root_path))


#: What a worker packs before it serves (`PackResource.warm`): two item sets into two box
#: types, with the pictures a request gets by default.
WARM_REQUEST = json.dumps(
    {
        "itemSets": [
            {"refId": 1, "dimensions": {"x": 2, "y": 3, "z": 4}, "weight": 1, "quantity": 3},
            {"refId": 2, "dimensions": {"x": 1, "y": 1, "z": 5}, "weight": 0.5, "quantity": 2},
        ],
        "boxTypes": [
            {"refId": 10, "dimensions": {"x": 4, "y": 4, "z": 6}, "weightMax": 20},
            {"refId": 11, "dimensions": {"x": 6, "y": 6, "z": 8}, "weightMax": 30},
        ],
    }
).encode()


def item_count(request: PackRequest) -> int:
    """Units the engine would have to handle: item set quantities, the random items, and
    the units given in pre-packed boxes (one unit each, or `quantity` without an origin:
    a quantity of a million in a body of a few hundred bytes took 2 s and 500 MB before
    this count held it to the limit)."""
    units = sum(item_set.quantity for item_set in request.item_sets)
    if request.random:
        units += request.n * (request.random_max_quantity or request.n)
    for box in request.boxes:
        units += sum(max(entry.item.quantity or 1, 1) for entry in box.items)
    return units


class PackResource:
    """`POST /`: a JSON pack request in, a JSON pack response out."""

    def __init__(
        self,
        service: PackService,
        keys: KeyRing,
        limiter: RateLimiter,
        limits: Limits,
        store: Store | None = None,
    ) -> None:
        # With a store, requests may draw on the caller's resource library.
        self._store = store
        self._service = service
        self._keys = keys
        self._limiter = limiter
        self._limits = limits

    @property
    def max_body_bytes(self) -> int:
        """The largest pack request body, in bytes."""
        return self._limits.max_body_bytes

    def warm(self) -> int:
        """Build, before the first request, what the first request would otherwise build:
        every active key in the key cache (a key's first request opened the store, 50-60
        ms), and one pack through the steps of `pack` after the key (request parsing,
        engine, response models, fingerprints), neither stored nor counted. Returns the
        number of keys cached (docs/benchmarks.md, "The cold first request")."""
        keys = self._keys.preload()
        request = validate_request(decode_body(WARM_REQUEST))
        item_count(request)
        self._service.warm(request, CanonicalRequest.of(request))
        return keys

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Pack the request body; an empty body packs nothing."""
        _, resp.text = self.pack(req, read_body(req, self._limits.max_body_bytes))
        resp.content_type = falcon.MEDIA_JSON

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """A browser (Accept prefers text/html to JSON) gets a page pointing to the console
        and the API docs; any other client keeps the 405 it always got (`Allow: POST,
        OPTIONS`, the error shape): the pack endpoint is `POST /`."""
        resp.vary = ("Accept",)
        if not prefers_html(req):
            raise falcon.HTTPMethodNotAllowed(["POST", "OPTIONS"], headers={"Vary": "Accept"})
        resp.content_type = falcon.MEDIA_HTML
        resp.text = landing_page(req)

    def pack(
        self, req: falcon.Request, raw: bytes, session_key: ApiKey | None = None
    ) -> tuple[PackResponse, str]:
        """Every check of `POST /` on the request `raw`, in order, then the pack: the
        endpoint's path, and the console playground's with its session's key as
        `session_key` (which stands for the caller's key, so headers and body keys are
        ignored). Returns the response and its JSON text."""
        if len(raw) > self._limits.max_body_bytes:
            raise body_too_large(self._limits.max_body_bytes)
        data = decode_body(raw)
        if self._store is not None and isinstance(data, dict) and needs_library(data):
            data = self._from_library(req, data, self._store, session_key)
        request = validate_request(data)
        # The body key leaves the request before anything else can see, log or store it.
        body_key = request.key.get_secret_value() if request.key is not None else None
        request.key = None
        key = session_key or authenticate(req, self._keys, body_key)
        units = item_count(request)
        if units > self._limits.max_items:
            raise InvalidRequest(
                details=(
                    f"{'itemSets and boxes' if request.boxes else 'itemSets'}: {units} items "
                    f"exceed the limit of {self._limits.max_items} items per request"
                )
            )
        canonical = CanonicalRequest.of(request)
        with self._limiter.admitted(req.remote_addr, canonical.fingerprint, key):
            packed = self._service.pack(request, key, canonical)
        return packed

    def _from_library(
        self, req: falcon.Request, data: dict[str, Any], store: Store, session_key: ApiKey | None
    ) -> dict[str, Any]:
        # The library belongs to an account, so the key is needed before validation.
        body_key = data.get("key") if isinstance(data.get("key"), str) else None
        key = session_key or authenticate(req, self._keys, body_key)
        if key is None and not needs_account(data):
            return data  # an orderId without a key only labels the request
        if key is None:
            raise InvalidRequest(
                details=(
                    "boxTypeSets customer and itemSets given by refId only use the "
                    "account's resource library: send an API key"
                )
            )
        return resolve_library(data, key.account_id, store)


class StoredPackSummary(ResponseModel):
    """One pack in a search result."""

    pack_uuid: str = Field(description="Identifier to fetch the pack with GET /packs/{packUuid}")
    created_at: datetime = Field(description="When the pack started (UTC)")
    order_id: str | None = None
    request_id: str | None = None
    used_key_stem: str | None = Field(default=None, max_length=10)


class StoredPackList(ResponseModel):
    """A page of pack search results, newest first."""

    packs: list[StoredPackSummary]
    next_offset: int | None = Field(
        default=None, description="Offset of the next page; absent on the last page"
    )


class StoredPack(ResponseModel):
    """A stored pack transaction: the request as packed (defaults filled in) and the response."""

    pack_uuid: str
    created_at: datetime
    used_key_stem: str | None = Field(default=None, max_length=10)
    pack_time: float = Field(description="Seconds spent packing")
    total_time: float = Field(description="Seconds spent on the whole response")
    request: dict[str, Any] = Field(description="The pack request, without its key")
    response: dict[str, Any] = Field(description="The pack response as it was sent")


class StoredPackResource:
    """`GET /packs/{packUuid}`: a stored pack; a keyed pack needs a key of its account."""

    def __init__(self, log: PackLog, keys: KeyRing) -> None:
        self._log = log
        self._keys = keys

    def on_get(self, req: falcon.Request, resp: falcon.Response, pack_uuid: str) -> None:
        """Return the pack, or 404 when it is unknown, expired, or another account's."""
        key = authenticate(req, self._keys, None)
        record = self._log.get(pack_uuid)
        if record is None:
            raise NotFound(details="no pack with this packUuid (packs are kept for a while)")
        if record.account_id is not None:
            if key is None:
                raise Unauthorized(details="this pack was made with an API key; send a key")
            if key.account_id != record.account_id:
                # Not 403: whether another account's pack exists is not the caller's business.
                raise NotFound(details="no pack with this packUuid (packs are kept for a while)")
        stored = StoredPack(
            pack_uuid=record.pack_uuid,
            created_at=record.created_at,
            used_key_stem=record.key_stem,
            pack_time=record.pack_time,
            total_time=record.total_time,
            request=json.loads(record.request_json),
            response=json.loads(record.response_json),
        )
        resp.content_type = falcon.MEDIA_JSON
        resp.text = stored.model_dump_json(by_alias=True, exclude_none=True)


class PackListResource:
    """`GET /packs?orderId=&requestId=&limit=&offset=`: the caller's account's packs."""

    def __init__(self, log: PackLog, keys: KeyRing) -> None:
        self._log = log
        self._keys = keys

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Search packs by orderId and/or requestId; a key is required (packs are private)."""
        key = authenticate(req, self._keys, None)
        if key is None:
            raise Unauthorized(details="searching packs needs an API key")
        limit = int_param(req, "limit", 20, 1, MAX_PAGE_SIZE)
        offset = int_param(req, "offset", 0, 0, None)
        rows = self._log.find(
            key.account_id,
            order_id=req.get_param("orderId"),
            request_id=req.get_param("requestId"),
            limit=limit + 1,
            offset=offset,
        )
        page = StoredPackList(
            packs=[
                StoredPackSummary(
                    pack_uuid=row.pack_uuid,
                    created_at=row.created_at,
                    order_id=row.order_id,
                    request_id=row.request_id,
                    used_key_stem=row.key_stem,
                )
                for row in rows[:limit]
            ],
            next_offset=offset + limit if len(rows) > limit else None,
        )
        resp.content_type = falcon.MEDIA_JSON
        resp.text = page.model_dump_json(by_alias=True, exclude_none=True)


def int_param(req: falcon.Request, name: str, default: int, low: int, high: int | None) -> int:
    """An integer query parameter within bounds; 400 naming it otherwise."""
    raw = req.get_param(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadRequest(details=f"{name}: must be an integer (got {raw[:40]!r})") from None
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f">= {low}"
        raise BadRequest(details=f"{name}: must be {bound} (got {value})")
    return value


class HealthResource:
    """`GET /healthz`: the process answers."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Always 200 while the worker runs."""
        resp.content_type = falcon.MEDIA_JSON
        resp.text = '{"status":"ok"}'

    def on_head(self, req: falcon.Request, resp: falcon.Response) -> None:
        """As GET without the body (Falcon drops it): health checkers often send HEAD."""
        self.on_get(req, resp)


class ReadyResource:
    """`GET /readyz`: the store opens and the engine is loaded."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """200 when ready; 503 in the error shape otherwise."""
        self._store.ping()
        body = {"status": "ready", "engine": cartonize.__version__}
        resp.content_type = falcon.MEDIA_JSON
        resp.text = json.dumps(body)

    def on_head(self, req: falcon.Request, resp: falcon.Response) -> None:
        """As GET without the body (Falcon drops it), 503 included: load balancers and
        orchestrators often probe readiness with HEAD."""
        self.on_get(req, resp)


#: Largest body of the small control requests (connection fields, resource changes).
CONTROL_BODY_BYTES = 1024 * 1024


def read_limited(req: falcon.Request, limit: int) -> bytes:
    """At most `limit` + 1 bytes of the request body: a longer answer means it is too long.

    Without a Content-Length (`Transfer-Encoding: chunked`) Falcon's bounded stream is empty,
    so the body is read from the server's stream, which gunicorn de-chunks and ends
    (`wsgi.input_terminated`); a chunked body a server cannot end is refused with 411."""
    if req.content_length is not None:
        body: bytes = req.bounded_stream.read(limit + 1)
        return body
    if req.env.get("wsgi.input_terminated"):
        body = req.stream.read(limit + 1)
        return body
    if req.get_header("Transfer-Encoding"):
        raise falcon.HTTPLengthRequired(
            description="this server cannot read a chunked body; send a Content-Length"
        )
    return b""


def body_too_large(limit: int) -> PayloadTooLarge:
    """The 413 of a body longer than `limit` bytes."""
    return PayloadTooLarge(details=f"the request body limit is {limit} bytes")


def read_body(req: falcon.Request, limit: int) -> bytes:
    """The request body, or 413 when it is longer than `limit` bytes."""
    too_large = body_too_large(limit)
    if req.content_length is not None and req.content_length > limit:
        raise too_large
    body = read_limited(req, limit)
    if len(body) > limit:
        raise too_large
    return body


def json_body(req: falcon.Request, limit: int = CONTROL_BODY_BYTES) -> Any:
    """The body of a control request as JSON (`{}` when empty): 413 above `limit`,
    400 when it is not JSON, 422 when it repeats a key with different values."""
    raw = read_body(req, limit)
    try:
        data = jsontext.loads(raw or b"{}", repeats="mark")
    except ValueError as exc:
        raise BadRequest("malformed JSON", details=str(exc)) from None
    refuse_repeats(data)
    return data
