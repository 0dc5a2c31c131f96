"""The pack endpoint through falcon's test client: statuses, bodies and the error shape."""

from __future__ import annotations

import json
import logging
from collections import Counter
from typing import Any

import falcon
import pytest
from cartonize.errors import InvalidRequest, PayloadTooLarge
from cartonize.models import PackRequest, PackResponse
from cartonize.store import Store
from falcon import testing

from api.app import AppConfig, create_app
from api.resources import json_body, read_body

Wire = dict[str, Any]

BASIC_PACK: Wire = {
    "orderId": "A-1",
    "itemSets": [
        {"refId": 0, "dimensions": {"x": 4, "y": 7, "z": 8}, "weight": 4.5, "quantity": 3},
        {"refId": 1, "dimensions": {"x": 3, "y": 3, "z": 5}, "weight": 2, "quantity": 4},
    ],
    "boxTypes": [{"name": "M", "dimensions": {"x": 10, "y": 12, "z": 16}, "weightMax": 100}],
}


class RecordingPack:
    """A pack function that records its requests and returns an empty response."""

    def __init__(self) -> None:
        self.requests: list[PackRequest] = []

    def __call__(self, request: PackRequest) -> PackResponse:
        self.requests.append(request)
        return PackResponse(order_id=request.order_id, warnings=request.warnings_for_request())


def client_with(store: Store, pack_fn: Any = None, **config: Any) -> testing.TestClient:
    """A test client of the app built with `pack_fn` and `config` on `store`."""
    return testing.TestClient(
        create_app(pack_fn or RecordingPack(), AppConfig(**config), store=store)
    )


def post(client: testing.TestClient, body: bytes) -> testing.Result:
    """POST raw `body` to the pack endpoint."""
    return client.simulate_post("/", body=body, headers={"Content-Type": "application/json"})


def assert_error(result: testing.Result, status: int, message: str) -> Wire:
    """Check status, content type and the spec's error shape; return the body."""
    assert result.status_code == status
    assert result.headers["content-type"] == "application/json"
    body: Wire = result.json
    assert set(body) <= {"code", "message", "details"}
    assert (body["code"], body["message"]) == (status, message)
    return body


# ------------------------------------------------------------------------------ real engine


def test_basic_pack_places_every_item(store: Store) -> None:
    result = post(testing.TestClient(create_app(store=store)), json.dumps(BASIC_PACK).encode())
    assert result.status_code == 200
    assert result.headers["content-type"] == "application/json"
    response = PackResponse.model_validate(result.json)
    packed = [entry.item for box in response.boxes for entry in box.box.items]
    assert response.len_boxes == len(response.boxes) >= 1
    assert Counter(item.ref_id for item in packed) == {0: 3, 1: 4}
    assert response.leftovers == []
    assert response.order_id == "A-1"
    assert "null" not in result.text  # serialised with exclude_none


@pytest.mark.parametrize("body", [b"", b"{}"])
def test_empty_body_packs_nothing(body: bytes, store: Store) -> None:
    result = post(testing.TestClient(create_app(store=store)), body)
    assert result.status_code == 200
    response = PackResponse.model_validate(result.json)
    assert (response.boxes, response.leftovers, response.len_items) == ([], [], 0)


# ------------------------------------------------------------------------------ 400


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"itemSets": [', "malformed JSON"),
        (b"not json", "malformed JSON"),
        # No Unicode text: storing the pack raised UnicodeEncodeError (a 500).
        (b'{"orderId": "A\\ud800"}', "malformed JSON"),
        (b'[{"itemSets": []}]', "request body must be a JSON object"),
        (b"null", "request body must be a JSON object"),
    ],
)
def test_malformed_body_is_400(body: bytes, message: str, store: Store) -> None:
    pack = RecordingPack()
    assert_error(post(client_with(store, pack), body), 400, message)
    assert pack.requests == []


# ------------------------------------------------------------------------------ 422


def nested(levels: int) -> Wire:
    """An object `levels` objects deep, itself the first."""
    value: Wire = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def with_item(**fields: Any) -> Wire:
    """A pack request of one item set with `fields` overriding its valid values."""
    item = {"refId": 1, "dimensions": {"x": 1, "y": 2, "z": 3}, "weight": 1, "quantity": 2}
    return {"itemSets": [{**item, **fields}]}


@pytest.mark.parametrize(
    ("request_body", "details"),
    [
        (
            with_item(dimensions={"x": -1, "y": 2, "z": 3}),
            "itemSets[0].dimensions.x: must be greater than 0 (got -1)",
        ),
        (
            with_item(dimensions={"x": 1, "y": 2, "z": 0}),
            "itemSets[0].dimensions.z: must be greater than 0 (got 0)",
        ),
        ({"usableSpace": 1.5}, "usableSpace: must be a number <= 1 (got 1.5)"),
        (
            {"boxTypeChoiceGoal": "cheapest"},
            "boxTypeChoiceGoal: must be one of 'lowest-cost', 'most-items' (got 'cheapest')",
        ),
        (with_item(quantity=-1), "itemSets[0].quantity: must be an integer >= 0 (got -1)"),
        (with_item(weight="heavy"), "itemSets[0].weight: must be a number (got 'heavy')"),
        # 500 levels: pydantic refused to serialise it when the request was fingerprinted,
        # and the endpoint answered 500.
        (
            with_item(properties=nested(500)),
            "itemSets[0].properties: must not nest objects or arrays more than 64 levels deep",
        ),
    ],
)
def test_invalid_parameters_are_422_naming_the_field(
    request_body: Wire, details: str, store: Store
) -> None:
    pack = RecordingPack()
    body = assert_error(
        post(client_with(store, pack), json.dumps(request_body).encode()), 422, "invalid request"
    )
    assert body["details"] == details
    assert pack.requests == []


ITEM = '"refId": 1, "dimensions": {"x": 1, "y": 2, "z": 3}, "weight": 1'


@pytest.mark.parametrize(
    ("body", "details"),
    [
        (
            '{"itemSets": [{' + ITEM + ', "quantity": 2, "quantity": 200}]}',
            '"itemSets[0].quantity" is named more than once, with different values (2, 200)',
        ),
        (
            '{"itemSets": [{' + ITEM + ', "quantity": 2}], "boxTypes": [{"refId": 1,'
            ' "dimensions": {"x": 9, "y": 9, "z": 9, "x": 1}}], "orderId": "a", "orderId": "b"}',
            # An object's own repeats first, then those inside it.
            '"orderId" is named more than once, with different values ("a", "b"); '
            '"boxTypes[0].dimensions.x" is named more than once, with different values (9, 1)',
        ),
        # An API key's values are not echoed.
        (
            '{"key": "k-one", "key": "k-two"}',
            '"key" is named more than once, with different values',
        ),
    ],
)
def test_a_key_repeated_with_different_values_is_422_naming_its_path(
    body: str, details: str, store: Store
) -> None:
    """Python's json kept the last value silently: `"quantity": 2, "quantity": 200`
    packed 200 units. The sync REST writes already answered 422 for the same thing."""
    pack = RecordingPack()
    answer = assert_error(post(client_with(store, pack), body.encode()), 422, "invalid request")
    assert answer["details"] == (
        f"{details}: which value is meant is not clear; send each key once in an object"
    )
    assert pack.requests == []


def test_a_key_repeated_with_the_same_value_packs_as_before(store: Store) -> None:
    pack = RecordingPack()
    client = client_with(store, pack)
    once = '{"itemSets": [{' + ITEM + ', "quantity": 2}], "orderId": "a"}'
    twice = (
        '{"itemSets": [{' + ITEM + ', "quantity": 2, "quantity": 2.0}], "orderId": "a",'
        ' "itemSets": [{' + ITEM + ', "quantity": 2}]}'
    )
    for body in (once, twice):
        assert post(client, body.encode()).status_code == 200
    assert pack.requests[0] == pack.requests[1]


def test_contradiction_raised_by_pack_is_422(store: Store) -> None:
    def contradicting(request: PackRequest) -> PackResponse:
        raise InvalidRequest(details="boxesMax: 1 box cannot hold the pre-packed 2")

    body = assert_error(post(client_with(store, contradicting), b"{}"), 422, "invalid request")
    assert body["details"] == "boxesMax: 1 box cannot hold the pre-packed 2"


# ------------------------------------------------------------------------------ 413, 404, 405


def test_body_above_limit_is_413(store: Store) -> None:
    body = assert_error(
        post(client_with(store, max_body_bytes=64), json.dumps(BASIC_PACK).encode()),
        413,
        "payload too large",
    )
    assert "64 bytes" in body["details"]


def chunked_request(body: bytes, *, terminated: bool = True) -> falcon.Request:
    """A request as a WSGI server passes a chunked body: no Content-Length, the body in
    `wsgi.input`, which gunicorn de-chunks and ends (`wsgi.input_terminated`)."""
    env = testing.create_environ(
        method="POST", path="/", body=body, headers={"Transfer-Encoding": "chunked"}
    )
    env.pop("CONTENT_LENGTH", None)
    env["wsgi.input_terminated"] = terminated
    return falcon.Request(env)


@pytest.mark.parametrize(
    ("body", "expected"),
    [(b"", b""), (b"{}", b"{}"), (b"x" * 64, b"x" * 64), (b"x" * 65, 413), (b"x" * 10_000, 413)],
)
def test_chunked_bodies_are_read_up_to_the_limit(body: bytes, expected: bytes | int) -> None:
    # `bounded_stream` is empty without a Content-Length: chunked bodies were read as empty.
    if isinstance(expected, int):
        with pytest.raises(PayloadTooLarge):
            read_body(chunked_request(body), 64)
    else:
        assert read_body(chunked_request(body), 64) == expected
        assert json_body(chunked_request(b'{"a": 1}')) == {"a": 1}


def test_a_chunked_body_the_server_cannot_end_is_411() -> None:
    with pytest.raises(falcon.HTTPLengthRequired):
        read_body(chunked_request(b"{}", terminated=False), 64)


@pytest.mark.parametrize(
    ("method", "path", "status"), [("GET", "/", 405), ("POST", "/pack/extra", 404)]
)
def test_routing_errors_use_the_error_shape(
    method: str, path: str, status: int, store: Store
) -> None:
    result = client_with(store).simulate_request(method, path, body=b"{}")
    assert result.status_code == status
    assert result.json["code"] == status
    assert isinstance(result.json["message"], str)


# ------------------------------------------------------------------------------ 500


def test_unexpected_error_is_500_without_traceback(
    caplog: pytest.LogCaptureFixture, store: Store
) -> None:
    def broken(request: PackRequest) -> PackResponse:
        raise RuntimeError("secret internal state 0xdeadbeef")

    with caplog.at_level(logging.ERROR, logger="api.app"):
        result = post(client_with(store, broken), b"{}")
    assert result.json == {"code": 500, "message": "internal error"}
    assert result.status_code == 500
    assert "deadbeef" not in result.text and "Traceback" not in result.text
    logged = [r for r in caplog.records if r.exc_info and "deadbeef" in str(r.exc_info[1])]
    assert len(logged) == 1


def test_validation_error_inside_pack_is_500_not_422(store: Store) -> None:
    # A response the engine builds wrongly is our bug, not the client's.
    def builds_bad_response(request: PackRequest) -> PackResponse:
        return PackResponse.model_validate({"lenBoxes": "many"})

    assert_error(post(client_with(store, builds_bad_response), b"{}"), 500, "internal error")


# ------------------------------------------------------------------------------ request handling


def test_request_warnings_reach_the_response(store: Store) -> None:
    body = {**BASIC_PACK, "itemz": [], "itemOrientationSearchDepth": 9}
    result = post(testing.TestClient(create_app(store=store)), json.dumps(body).encode())
    assert result.status_code == 200
    warnings = result.json["warnings"]
    assert "unknown field 'itemz' ignored" in warnings
    assert any("itemOrientationSearchDepth 9" in warning for warning in warnings)


def test_the_no_ids_warning_holds_for_a_keyless_caller(store: Store) -> None:
    # A keyless pack cannot be searched for by orderId (GET /packs needs a key).
    body = {k: v for k, v in BASIC_PACK.items() if k != "orderId"}
    result = post(testing.TestClient(create_app(store=store)), json.dumps(body).encode())
    (warning,) = [w for w in result.json["warnings"] if "no orderId or requestId" in w]
    assert "with an API key" in warning and "packUuid" in warning
