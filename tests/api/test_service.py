"""The pack service through falcon's test client on a real store: keys, limits, stored packs."""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import cartonize
import pytest
from cartonize.models import PackRequest, PackResponse
from cartonize.service import KeyRing, request_fingerprint
from cartonize.store import Store
from falcon import testing

from api.app import AppConfig, create_app

Wire = dict[str, Any]

SMALL_PACK: Wire = {
    "orderId": "S-1",
    "requestId": "R-1",
    "itemSets": [{"refId": 1, "dimensions": {"x": 1, "y": 2, "z": 3}, "weight": 1, "quantity": 3}],
    "boxTypes": [{"refId": 7, "dimensions": {"x": 5, "y": 5, "z": 5}, "weightMax": 10}],
    "includeImages": False,
}


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    """Noon UTC on a fixed day."""
    return Clock(datetime(2026, 11, 21, 12, 0, 0, tzinfo=UTC))


def client(
    store: Store,
    clock: Clock | None = None,
    pack_fn: Any = None,
    access_log: logging.Logger | None = None,
    **config: Any,
) -> testing.TestClient:
    """A test client of the real app (real engine unless `pack_fn`) on `store`."""
    app = create_app(
        pack_fn,
        AppConfig(**config),
        store=store,
        clock=clock or Clock(datetime.now(UTC)),
        access_log=access_log,
    )
    return testing.TestClient(app)


def post(
    c: testing.TestClient, body: Wire | bytes, key: str | None = None, addr: str = "10.0.0.1"
) -> testing.Result:
    """POST `body` to `/`, with `key` in the Authorization header when given."""
    headers = {"Content-Type": "application/json"}
    if key is not None:
        headers["Authorization"] = f"apikey {key}"
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return c.simulate_post("/", body=raw, headers=headers, remote_addr=addr)


def keyed(store: Store, account: str = "ACME") -> str:
    """A fresh key of `account` (created with the account if needed)."""
    if account not in {a.name for a in store.list_accounts()}:
        store.create_account(account, "premium")
    return store.create_key(account, "test")[1]


def assert_error(result: testing.Result, status: int) -> Wire:
    """Status and the spec's error shape; return the body."""
    assert result.status_code == status, result.text
    body: Wire = result.json
    assert set(body) <= {"code", "message", "details"} and body["code"] == status
    return body


# --------------------------------------------------------------------------- keys, 401


def test_key_in_header_is_used_and_only_its_stem_returned(store: Store) -> None:
    key = keyed(store)
    result = post(client(store), SMALL_PACK, key=key)
    assert result.status_code == 200
    assert result.json["usedKeyStem"] == key[:10]
    assert key not in result.text


def test_key_in_body_is_accepted_removed_and_never_echoed(store: Store) -> None:
    key = keyed(store)
    seen: list[PackRequest] = []

    def recording(request: PackRequest) -> PackResponse:
        seen.append(request)
        return PackResponse()

    c = client(store, pack_fn=recording)
    result = post(c, {**SMALL_PACK, "key": key})
    assert result.json["usedKeyStem"] == key[:10]
    assert seen[0].key is None
    assert key not in result.text
    stored = c.simulate_get(f"/packs/{result.json['packUuid']}", headers={"Authorization": key})
    assert_error(stored, 401)  # wrong scheme
    stored = c.simulate_get(
        f"/packs/{result.json['packUuid']}", headers={"Authorization": f"apikey {key}"}
    )
    assert stored.status_code == 200 and key not in stored.text


@pytest.mark.parametrize(
    "authorization", ["apikey wrong-key-0123456789", "Bearer abc", "apikey ", "apikey"]
)
def test_wrong_key_is_401(store: Store, authorization: str) -> None:
    keyed(store)
    result = client(store).simulate_post(
        "/", json=SMALL_PACK, headers={"Authorization": authorization}
    )
    assert_error(result, 401)


def test_an_empty_body_key_is_no_key(store: Store) -> None:
    # It was 401 "unknown or revoked API key"; a client's template sending "key": "" means
    # it has none, and the request packs as a keyless one.
    keyed(store)
    result = post(client(store), {**SMALL_PACK, "key": ""})
    assert result.status_code == 200 and "usedKeyStem" not in result.json


def test_revoked_key_is_401_at_once(store: Store) -> None:
    key = keyed(store)
    c = client(store)
    assert post(c, SMALL_PACK, key=key).status_code == 200
    store.revoke_key(key[:10])
    assert_error(post(c, SMALL_PACK, key=key), 401)


def test_a_warmed_app_serves_keys_from_its_cache_and_still_revokes_at_once(
    store: Store,
) -> None:
    # The warm-up caches every active key (api/app.py, AppConfig.warm); a revocation must
    # still end a cached key at once, and a key made after the warm-up must still work.
    first, second = keyed(store), keyed(store)
    revoked_earlier = keyed(store)
    store.revoke_key(revoked_earlier[:10])
    c = client(store, warm=True)
    assert post(c, SMALL_PACK, key=revoked_earlier).status_code == 401
    assert post(c, SMALL_PACK, key=first).status_code == 200
    store.revoke_key(first[:10])
    assert_error(post(c, SMALL_PACK, key=first), 401)
    assert post(c, SMALL_PACK, key=second).status_code == 200
    assert post(c, SMALL_PACK, key=keyed(store)).status_code == 200
    # The warm-up pack was neither stored nor counted: only the three packs above are.
    stored = store.transaction(lambda con: con.execute("SELECT count(*) FROM packs").fetchone())
    assert stored == (3,)


def test_a_preloaded_key_ring_loads_every_key_again_after_a_revocation(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A revocation emptied the cache, and then every other key's first lookup in every
    # worker opened the store again, one key at a time, until the worker restarted.
    first, second, third = keyed(store), keyed(store), keyed(store)
    ring = KeyRing(store)
    assert ring.preload() == 3
    store.revoke_key(first[:10])
    assert ring.verify(first) is None
    single_lookups: list[str] = []
    monkeypatch.setattr(store, "find_key", lambda secret: single_lookups.append(secret))
    second_key, third_key = ring.verify(second), ring.verify(third)
    assert second_key is not None and second_key.stem == second[:10]
    assert third_key is not None and third_key.stem == third[:10]
    assert single_lookups == []


def test_header_and_body_keys_must_agree(store: Store) -> None:
    key, other = keyed(store), keyed(store)
    assert_error(post(client(store), {**SMALL_PACK, "key": other}, key=key), 401)


# --------------------------------------------------------------------------- limits, 422, 429


def test_item_count_above_limit_is_422_naming_the_limit(store: Store) -> None:
    c = client(store, max_items=5)
    body = assert_error(
        post(c, {**SMALL_PACK, "itemSets": [{**SMALL_PACK["itemSets"][0], "quantity": 6}]}), 422
    )
    assert "limit of 5 items" in body["details"]
    assert post(c, SMALL_PACK).status_code == 200


def test_units_in_pre_packed_boxes_count_toward_the_limit(store: Store) -> None:
    # A pre-packed item without an origin may stand for many units: a quantity of a
    # million in a body of a few hundred bytes took 2 s and 500 MB before it was refused.
    c = client(store, max_items=5)
    given = {"refId": 9, "dimensions": {"x": 1, "y": 1, "z": 1}, "weight": 1, "quantity": 4}
    box = {"dimensions": {"x": 5, "y": 5, "z": 5}, "weightMax": 0, "items": [{"item": given}]}
    body = assert_error(post(c, {**SMALL_PACK, "boxes": [box]}), 422)
    units = sum(s["quantity"] for s in SMALL_PACK["itemSets"]) + 4
    assert body["details"] == (
        f"itemSets and boxes: {units} items exceed the limit of 5 items per request"
    )
    box["items"] = [{"item": {**given, "quantity": 1}}]
    assert (
        post(c, {**SMALL_PACK, "itemSets": SMALL_PACK["itemSets"][:1], "boxes": [box]}).status_code
        == 200
    )


def test_anonymous_limit_counts_unique_requests_per_address(store: Store, clock: Clock) -> None:
    c = client(store, clock, anonymous_daily_limit=3)
    for n in range(3):
        request = {**SMALL_PACK, "orderId": f"O-{n}"}
        assert post(c, request).status_code == 200
        # The same request again is not a new unique request.
        assert post(c, request).status_code == 200
    limited = post(c, {**SMALL_PACK, "orderId": "O-3"})
    body = assert_error(limited, 429)
    assert "3 unique requests per day" in body["details"]
    assert limited.headers["Retry-After"] == str(12 * 3600)  # until midnight UTC
    # Old requests still pass, other addresses and keyed callers are not affected.
    assert post(c, {**SMALL_PACK, "orderId": "O-0"}).status_code == 200
    assert post(c, {**SMALL_PACK, "orderId": "O-3"}, addr="10.0.0.2").status_code == 200
    assert post(c, {**SMALL_PACK, "orderId": "O-3"}, key=keyed(store)).status_code == 200
    clock.now += timedelta(days=1)
    assert post(c, {**SMALL_PACK, "orderId": "O-3"}).status_code == 200


def test_default_anonymous_limit_is_ten_and_repeated_random_pack_counts_once(
    store: Store,
) -> None:
    c = client(store)
    random_pack = {"random": True, "n": 2, "includeImages": False}
    for _ in range(3):
        assert post(c, random_pack).status_code == 200
    for n in range(9):
        assert post(c, {**SMALL_PACK, "orderId": f"O-{n}"}).status_code == 200
    assert_error(post(c, {**SMALL_PACK, "orderId": "O-9"}), 429)


def test_per_key_rate_limit(store: Store, clock: Clock) -> None:
    key = keyed(store)
    c = client(store, clock, key_rate_limit=2)
    assert [post(c, SMALL_PACK, key=key).status_code for _ in range(3)] == [200, 200, 429]
    clock.now += timedelta(minutes=1)
    assert post(c, SMALL_PACK, key=key).status_code == 200


def test_requests_refused_inside_pack_do_not_count(store: Store, clock: Clock) -> None:
    # Field-validation 422s were not counted, but 422s of checks inside pack() (generator
    # options) were: ten of them used up an address's day, and its first valid request got
    # 429. Any refusal but 429 now hands its admission back, keyed or not.
    key = keyed(store)
    c = client(store, clock, anonymous_daily_limit=2, key_rate_limit=1)
    bad_generator = {
        "itemSets": SMALL_PACK["itemSets"],
        "boxTypeGenerators": [{"operation": "cartesian", "options": {}}],
    }
    for n in range(3):
        assert_error(post(c, {**bad_generator, "requestId": f"G-{n}"}), 422)
        assert_error(post(c, {**bad_generator, "requestId": f"G-{n}"}, key=key), 422)
    assert post(c, SMALL_PACK, key=key).status_code == 200
    assert_error(post(c, SMALL_PACK, key=key), 429)
    assert [post(c, {**SMALL_PACK, "orderId": f"O-{n}"}).status_code for n in range(3)] == [
        200,
        200,
        429,
    ]


# --------------------------------------------------------------------------- 500


def test_failing_pack_is_500_logged_not_leaked(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(request: PackRequest) -> PackResponse:
        raise RuntimeError("engine state 0xfeedface")

    with caplog.at_level(logging.ERROR, logger="api.app"):
        result = post(client(store, pack_fn=broken), SMALL_PACK)
    assert result.json == {"code": 500, "message": "internal error"}
    assert "feedface" not in result.text
    assert any(r.exc_info and "feedface" in str(r.exc_info[1]) for r in caplog.records)


class FailingFor:
    """The real engine, except that packing an order in `failing` raises an internal error."""

    def __init__(self) -> None:
        self.failing: set[str] = set()

    def __call__(self, request: PackRequest) -> PackResponse:
        if request.order_id in self.failing:
            raise RuntimeError("engine state 0xfeedface")
        return cartonize.pack(request)


def test_requests_that_fail_with_500_do_not_count(store: Store, clock: Clock) -> None:
    # A 500 used up a keyless address's unique request of the day and a key's request of
    # its minute, though the caller got no pack; they are handed back like 4xx refusals.
    key = keyed(store)
    engine = FailingFor()
    engine.failing.add("BOOM")
    c = client(store, clock, pack_fn=engine, anonymous_daily_limit=1, key_rate_limit=1)
    for n in range(3):
        assert_error(post(c, {**SMALL_PACK, "orderId": "BOOM", "requestId": f"B-{n}"}), 500)
        assert_error(post(c, {**SMALL_PACK, "orderId": "BOOM"}, key=key), 500)
    assert post(c, SMALL_PACK).status_code == 200
    assert_error(post(c, {**SMALL_PACK, "orderId": "other"}), 429)
    assert post(c, SMALL_PACK, key=key).status_code == 200
    assert_error(post(c, SMALL_PACK, key=key), 429)


def test_a_failed_repeat_keeps_the_slot_its_packed_request_took(store: Store, clock: Clock) -> None:
    # Only the admission that recorded a fingerprint hands it back: a repeat that fails
    # after the request was packed must not free that pack's place in the day's limit.
    engine = FailingFor()
    c = client(store, clock, pack_fn=engine, anonymous_daily_limit=1)
    assert post(c, SMALL_PACK).status_code == 200
    engine.failing.add(SMALL_PACK["orderId"])
    assert_error(post(c, SMALL_PACK), 500)
    engine.failing.clear()
    assert_error(post(c, {**SMALL_PACK, "orderId": "other"}), 429)
    assert post(c, SMALL_PACK).status_code == 200  # still a repeat


# --------------------------------------------------------------------------- fingerprints


def test_fingerprints_ignore_key_order_whitespace_and_key(store: Store) -> None:
    key = keyed(store)
    c = client(store)
    compact = json.dumps(SMALL_PACK, separators=(",", ":")).encode()
    reordered = json.dumps(dict(reversed(list(SMALL_PACK.items()))), indent=4).encode()
    first = post(c, compact).json
    second = post(c, {**json.loads(reordered), "key": key}).json
    assert first["requestFingerprint"] == second["requestFingerprint"]
    assert first["responseFingerprint"] != second["responseFingerprint"]  # usedKeyStem differs
    third = post(c, reordered).json
    assert first["responseFingerprint"] == third["responseFingerprint"]
    assert first["packUuid"] != third["packUuid"]
    assert len(first["requestFingerprint"]) == 128 and len(first["packUuid"]) == 128


def test_fingerprints_differ_for_different_content(store: Store) -> None:
    c = client(store)
    first = post(c, SMALL_PACK).json
    other = {**SMALL_PACK, "itemSets": [{**SMALL_PACK["itemSets"][0], "quantity": 4}]}
    second = post(c, other).json
    assert first["requestFingerprint"] != second["requestFingerprint"]
    assert first["responseFingerprint"] != second["responseFingerprint"]


def test_request_fingerprint_fills_defaults() -> None:
    assert request_fingerprint(PackRequest()) == request_fingerprint(
        PackRequest.model_validate({"usableSpace": 0.85})
    )


# --------------------------------------------------------------------------- stored packs


def test_keyless_pack_is_retrievable_by_uuid(store: Store) -> None:
    c = client(store)
    packed = post(c, SMALL_PACK).json
    stored = c.simulate_get(f"/packs/{packed['packUuid']}")
    assert stored.status_code == 200
    assert stored.json["response"]["responseFingerprint"] == packed["responseFingerprint"]
    assert stored.json["response"] == packed  # what was sent is what was stored
    assert stored.json["request"]["orderId"] == "S-1"


def test_keyed_pack_needs_a_key_of_its_account(store: Store) -> None:
    owner, colleague, stranger = keyed(store), keyed(store), keyed(store, "OTHER")
    c = client(store)
    uuid = post(c, SMALL_PACK, key=owner).json["packUuid"]
    path = f"/packs/{uuid}"
    assert_error(c.simulate_get(path), 401)
    assert_error(c.simulate_get(path, headers={"Authorization": f"apikey {stranger}"}), 404)
    found = c.simulate_get(path, headers={"Authorization": f"apikey {colleague}"})
    assert found.status_code == 200 and found.json["usedKeyStem"] == owner[:10]


def test_unknown_pack_is_404(store: Store) -> None:
    assert_error(client(store).simulate_get("/packs/" + "0" * 128), 404)


def test_retention_removes_old_packs_on_write(store: Store, clock: Clock) -> None:
    c = client(store, clock, retention_days=30)
    old = post(c, SMALL_PACK).json["packUuid"]
    clock.now += timedelta(days=29)
    assert c.simulate_get(f"/packs/{old}").status_code == 200
    recent = post(c, {**SMALL_PACK, "orderId": "later"}).json["packUuid"]
    clock.now += timedelta(days=2)
    post(c, {**SMALL_PACK, "orderId": "latest"})
    assert_error(c.simulate_get(f"/packs/{old}"), 404)
    assert store.get_pack(old) is None  # deleted from the file, not only hidden
    assert c.simulate_get(f"/packs/{recent}").status_code == 200


def test_pack_search_hides_expired_packs_before_they_are_pruned(store: Store, clock: Clock) -> None:
    key = keyed(store)
    auth = {"Authorization": f"apikey {key}"}
    c = client(store, clock, retention_days=30)
    old = post(c, SMALL_PACK, key=key).json["packUuid"]
    clock.now += timedelta(days=29)
    recent = post(c, SMALL_PACK, key=key).json["packUuid"]
    clock.now += timedelta(days=2)  # no pack written since, so nothing pruned the old one
    listed = c.simulate_get("/packs", params={"orderId": "S-1"}, headers=auth).json["packs"]
    assert [p["packUuid"] for p in listed] == [recent]
    assert_error(c.simulate_get(f"/packs/{old}", headers=auth), 404)
    assert store.get_pack(old) is not None  # hidden, as GET /packs/{packUuid} hides it


def _found(c: testing.TestClient, key: str, order_id: str) -> list[str]:
    auth = {"Authorization": f"apikey {key}"}
    result = c.simulate_get("/packs", params={"orderId": order_id}, headers=auth)
    return [p["packUuid"] for p in result.json["packs"]]


def test_pack_search_writes_the_workers_own_queue_without_waiting(store: Store) -> None:
    # Two apps on one store stand for two gunicorn workers, each writing every 5 s.
    key, stranger = keyed(store), keyed(store, "OTHER")
    a, b = (client(store, pack_flush_seconds=5.0) for _ in range(2))
    made = post(a, SMALL_PACK, key=key).json["packUuid"]
    started = datetime.now(UTC)
    assert _found(a, key, "S-1") == [made]
    assert _found(b, stranger, "S-1") == []  # another account's fresh pack: no wait
    assert datetime.now(UTC) - started < timedelta(seconds=2)


def test_pack_search_finds_a_pack_still_queued_in_another_worker(store: Store) -> None:
    key = keyed(store)
    a, b = (client(store, pack_flush_seconds=0.3) for _ in range(2))
    made = post(b, SMALL_PACK, key=key).json["packUuid"]
    assert _found(a, key, "S-1") == [made]


def test_pack_search_by_order_and_request_id_is_paged(store: Store, clock: Clock) -> None:
    key, stranger = keyed(store), keyed(store, "OTHER")
    c = client(store, clock)
    auth = {"Authorization": f"apikey {key}"}
    uuids = []
    for n in range(5):
        clock.now += timedelta(seconds=1)
        uuids.append(post(c, {**SMALL_PACK, "requestId": f"R-{n % 2}"}, key=key).json["packUuid"])
    post(c, SMALL_PACK, key=stranger)
    post(c, SMALL_PACK)
    first = c.simulate_get("/packs", params={"orderId": "S-1", "limit": "2"}, headers=auth).json
    assert [p["packUuid"] for p in first["packs"]] == uuids[::-1][:2]
    assert first["nextOffset"] == 2
    last = c.simulate_get(
        "/packs", params={"orderId": "S-1", "limit": "2", "offset": "4"}, headers=auth
    ).json
    assert [p["packUuid"] for p in last["packs"]] == [uuids[0]] and "nextOffset" not in last
    by_request = c.simulate_get("/packs", params={"requestId": "R-1"}, headers=auth).json
    assert {p["packUuid"] for p in by_request["packs"]} == {uuids[1], uuids[3]}
    assert_error(c.simulate_get("/packs", params={"orderId": "S-1"}), 401)
    assert_error(c.simulate_get("/packs", params={"limit": "0"}, headers=auth), 400)


# --------------------------------------------------------------------------- ops endpoints


def test_health_and_readiness(store: Store) -> None:
    c = client(store)
    assert c.simulate_get("/healthz").json == {"status": "ok"}
    ready = c.simulate_get("/readyz")
    assert ready.status_code == 200 and ready.json["status"] == "ready"


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_health_and_readiness_answer_head_like_get_without_a_body(store: Store, path: str) -> None:
    # Health checkers and load balancers often probe with HEAD; /readyz answered 405.
    c = client(store)
    get, head = c.simulate_get(path), c.simulate_head(path)
    assert (head.status_code, head.text) == (200, "")
    assert head.headers["content-length"] == get.headers["content-length"] != "0"


@pytest.mark.parametrize(
    ("path", "allow"), [("/", "GET, POST"), ("/healthz", "GET, HEAD"), ("/readyz", "GET, HEAD")]
)
def test_options_answers_no_content_with_the_allowed_methods(
    store: Store, path: str, allow: str
) -> None:
    answer = client(store).simulate_options(path)
    assert (answer.status_code, answer.text, answer.headers["allow"]) == (204, "", allow)
    assert "content-type" not in answer.headers and "content-length" not in answer.headers


def test_readiness_fails_when_the_store_cannot_open(tmp_path: Any) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    c = client(Store(blocked / "data"))
    result = c.simulate_get("/readyz")
    assert_error(result, 503)
    assert result.headers["Retry-After"] == "1"
    head = c.simulate_head("/readyz")
    assert (head.status_code, head.text, head.headers["Retry-After"]) == (503, "", "1")


def test_openapi_documents_models_routes_and_errors(store: Store) -> None:
    c = client(store, max_items=77)
    document = c.simulate_get("/openapi.json").json
    assert document["openapi"].startswith("3.1")
    schemas = document["components"]["schemas"]
    usable = schemas["PackRequest"]["properties"]["usableSpace"]
    assert (usable["default"], usable["minimum"], usable["maximum"]) == (0.85, 0.0, 1.0)
    pack = document["paths"]["/"]["post"]
    assert {"200", "400", "401", "413", "422", "429", "500"} <= set(pack["responses"])
    assert "77 items" in pack["description"]
    assert {"/packs", "/packs/{packUuid}", "/healthz", "/readyz"} <= set(document["paths"])
    page = c.simulate_get("/docs")
    assert page.headers["content-type"].startswith("text/html")
    assert "usableSpace" in page.text and "<script" not in page.text
    # Self-contained: nothing is loaded from elsewhere (field descriptions may say "http").
    assert re.search(r"""(?:src|href)\s*=\s*['"]?(?:[a-z]+:)?//""", page.text) is None
    assert "<link" not in page.text and "@import" not in page.text


def _undocumented(document: Wire) -> list[str]:
    """Properties without a non-empty description, as `Schema.field.nested` paths, found by
    walking every component schema and every schema of the paths, following each `$ref`."""
    schemas = document["components"]["schemas"]
    found: list[str] = []
    seen: set[str] = set()

    def walk(node: Any, where: str) -> None:
        if isinstance(node, list):
            for entry in node:
                walk(entry, where)
            return
        if not isinstance(node, dict):
            return
        ref = node.get("$ref")
        if isinstance(ref, str):
            name = ref.rsplit("/", 1)[-1]
            assert name in schemas, f"{where}: dangling $ref {ref}"
            if name not in seen:
                seen.add(name)
                walk(schemas[name], name)
        for field, spec in node.get("properties", {}).items():
            description = spec.get("description")
            if not (isinstance(description, str) and description.strip()):
                found.append(f"{where}.{field}")
            walk(spec, f"{where}.{field}")
        for key in ("items", "additionalProperties", "anyOf", "oneOf", "allOf", "schema"):
            if key in node:
                walk(node[key], where)
        for key in ("content", "requestBody", "parameters"):
            if key in node:
                walk(node[key], where)
        if "application/json" in node:
            walk(node["application/json"], where)

    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            walk(operation, f"{method.upper()} {path}")
            for status, response in operation["responses"].items():
                walk(response, f"{method.upper()} {path} {status}")
    for name in schemas:
        if name not in seen:
            seen.add(name)
            walk(schemas[name], name)
    return sorted(found)


def test_openapi_carries_the_interface_version_and_packs_the_engines(store: Store) -> None:
    # info.version was the package's (0.1.0); the spec: "The interface description carries
    # version 1.9.2". The engine's version stays in each pack response.
    c = client(store)
    document = c.simulate_get("/openapi.json").json
    assert document["info"]["version"] == "1.9.2"
    assert "<h1>cartonize service 1.9.2</h1>" in c.simulate_get("/docs").text
    assert post(c, SMALL_PACK).json["version"] == cartonize.__version__ != "1.9.2"


def test_openapi_describes_every_schema_field(store: Store) -> None:
    document = client(store).simulate_get("/openapi.json").json
    schemas = document["components"]["schemas"]
    # The walk reaches the nested types, not just the top-level bodies.
    for name in ("Rule", "ItemMatch", "GeneratorPriceComponent", "RateTable", "Subspace", "Image"):
        assert schemas[name]["properties"], name
    assert _undocumented(document) == []


def test_undocumented_fields_are_named_with_their_path() -> None:
    document: Wire = {
        "paths": {},
        "components": {
            "schemas": {
                "Outer": {
                    "properties": {
                        "inner": {"$ref": "#/components/schemas/Inner", "description": "x"},
                        "blank": {"type": "string", "description": " "},
                    }
                },
                "Inner": {
                    "properties": {
                        "nested": {
                            "type": "object",
                            "description": "y",
                            "properties": {"deep": {"type": "integer"}},
                        }
                    }
                },
            }
        },
    }
    assert _undocumented(document) == ["Inner.nested.deep", "Outer.blank"]


# --------------------------------------------------------------------------- access log


def test_access_log_is_json_without_keys_or_query_strings(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    key = keyed(store)
    access = logging.getLogger("test.access")
    c = client(store, access_log=access)
    with caplog.at_level(logging.INFO, logger="test.access"):
        post(c, {**SMALL_PACK, "key": key})
        c.simulate_get(
            "/packs", query_string=f"orderId=S-1&key={key}", headers={"X-Request-Id": "abc-1"}
        )
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "test.access"]
    assert [(line["method"], line["path"], line["status"]) for line in lines] == [
        ("POST", "/", 200),
        ("GET", "/packs", 401),
    ]
    assert lines[0]["key_stem"] == key[:10] and lines[1]["request_id"] == "abc-1"
    assert all(isinstance(line["duration_ms"], float) for line in lines)
    assert key not in caplog.text and "orderId" not in caplog.text


# --------------------------------------------------------------------------- store traffic


class CountingStore(Store):
    """The real store, counting the rate-limit transactions it runs."""

    admissions = 0

    def record_unique(self, scope: str, fingerprint: str, day: Any, limit: int) -> Any:
        self.admissions += 1
        return super().record_unique(scope, fingerprint, day, limit)

    def unique_requests(self, scope: str, day: Any) -> frozenset[str]:
        self.admissions += 1
        return super().unique_requests(scope, day)


def test_repeats_and_exhausted_addresses_skip_the_store(tmp_path: Any, clock: Clock) -> None:
    store = CountingStore(tmp_path / "data")
    c = client(store, clock, anonymous_daily_limit=2)
    for _ in range(5):
        assert post(c, SMALL_PACK).status_code == 200
    assert store.admissions == 1
    assert post(c, {**SMALL_PACK, "orderId": "2"}).status_code == 200
    for n in range(5):
        assert post(c, {**SMALL_PACK, "orderId": f"new-{n}"}).status_code == 429
    assert store.admissions == 4  # the first refusal asks the store twice; later ones do not
    clock.now += timedelta(days=1)
    assert post(c, {**SMALL_PACK, "orderId": "new-0"}).status_code == 200
    assert store.admissions == 5


def test_repeats_are_admitted_by_every_worker_once_the_limit_is_reached(
    tmp_path: Any, clock: Clock
) -> None:
    # Two apps on one store: two gunicorn workers, or one worker before and after a restart.
    store = CountingStore(tmp_path / "data")
    a, b = (client(store, clock, anonymous_daily_limit=3) for _ in range(2))
    admitted = [{**SMALL_PACK, "orderId": f"ok-{n}"} for n in range(3)]
    assert [post(a, body).status_code for body in admitted] == [200, 200, 200]
    assert post(b, {**SMALL_PACK, "orderId": "new-0"}).status_code == 429
    assert post(a, {**SMALL_PACK, "orderId": "new-1"}).status_code == 429
    before = store.admissions
    for _ in range(2):
        for c in (a, b):
            assert [post(c, body).status_code for body in admitted] == [200, 200, 200]
            assert post(c, {**SMALL_PACK, "orderId": "new-2"}).status_code == 429
    assert store.admissions == before  # known repeats and refusals stay off the store
    assert post(b, admitted[0], addr="10.0.0.2").status_code == 200  # another address


def test_malformed_pack_uuid_is_404_without_waiting_for_a_flush(store: Store) -> None:
    c = client(store, pack_flush_seconds=5.0)
    started = datetime.now(UTC)
    assert_error(c.simulate_get("/packs/not-a-uuid"), 404)
    assert datetime.now(UTC) - started < timedelta(seconds=2)
