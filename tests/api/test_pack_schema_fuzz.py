"""Property-based fuzzing of `POST /` from the public schema (1.9.2), against the real app
in process (WSGI) and, briefly, under gunicorn on loopback.

Every answer must be documented by the public schema (status, content type, body), never
a 5xx; every 200 must pass the independent validator (tests/validator.py); every 400 and
422 carries `details`. Two generators drive it:

- the public schema as it is (schemathesis' positive and negative modes): mostly
  structural edge cases, which the service has to refuse in the documented shape;
- a bounded copy of it (`bounded_spec`): lengths, weights, counts and arrays small, the
  request's points whole, and the service's documented rules that the public schema does
  not spell (docs/decisions.md) written into it, so that most requests pack and the
  validator judges real packings. Only generation uses the copy; each answer is judged
  against the original schema.

A case is bounded by `MAX_ITEMS` units per request (more is a 422), `CARTONIZE_MAX_TIMEOUT`
and a hypothesis deadline, so the default run takes well under a minute on 2 cores.
Under `make fuzz` (HYPOTHESIS_PROFILE=fuzz) the examples are ten times as many and drawn
fresh from --hypothesis-seed; otherwise they are derandomised, so CI is repeatable.
"""

from __future__ import annotations

import copy
import json
import tempfile
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import falcon
import pytest
import schemathesis
from cartonize.serve import api_on_loopback
from cartonize.store import Store
from falcon import testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.core import NotSet
from schemathesis.generation import GenerationMode
from schemathesis.generation.case import Case

from api.app import AppConfig, create_app
from tests.api.schema_checks import CHECKS, FRESH
from tests.strategies import examples
from tests.validator import validate

Wire = dict[str, Any]

#: The public schema the pack API follows (a copy of ../shared/spec's).
PUBLIC_SCHEMA = Path(__file__).with_name("public-openapi-1.9.2.json")
MAX_ITEMS = 200
MAX_TIMEOUT = "1"
#: One request, however odd, answers within this (a hang is a failure, not a slow test).
DEADLINE = timedelta(seconds=10)


def _settings(count: int) -> settings:
    return settings(
        max_examples=examples(count),
        deadline=DEADLINE,
        derandomize=not FRESH,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


# --------------------------------------------------------------------------- schemas


def public_spec() -> Wire:
    spec: Wire = json.loads(PUBLIC_SCHEMA.read_text())
    return spec


#: Bounds of the numbers of the bounded copy, by property name (others: integers -1..12,
#: numbers -1..40, so zero and negatives still come up).
NUMBER_BOUNDS: dict[str, tuple[float, float]] = {
    "quantity": (1, 12),
    "n": (0, 8),
    "randomMaxQuantity": (1, 4),
    "randomMaxDimension": (1, 20),
    "randomMaxWeight": (1, 50),
    "imgSize": (1, 64),
    # The service's own rules the schema leaves out: > 0 and >= 1 (docs/decisions.md).
    "timeout": (0.01, 0.3),
    "quantityDivisor": (1, 6),
    "cohortMax": (1, 4),
    "weight": (0, 20),
    "weightMax": (0, 300),
    "weightTare": (0, 5),
}
SIDE = {"type": "number", "minimum": 0.5, "maximum": 30}
#: Item and box extents: every axis, above 0 (the service's rule, not the schema's).
DIMENSIONS = {
    "type": "object",
    "required": ["x", "y", "z"],
    "properties": {"x": SIDE, "y": SIDE, "z": SIDE},
}
#: Rules the service keeps that the schema does not say (each a 422 otherwise).
SHAPES: dict[str, Wire] = {
    # Three counts, one per axis.
    "itemsInlineMax": {
        "type": "array",
        "minItems": 3,
        "maxItems": 3,
        "items": {"type": "integer", "minimum": 0, "maximum": 4},
    },
    # A permutation of the axes.
    "coordOrder": {
        "type": "array",
        "minItems": 3,
        "maxItems": 3,
        "uniqueItems": True,
        "items": {"type": "integer", "enum": [0, 1, 2]},
    },
}


def _bounded(node: Any, name: str | None = None) -> Any:
    if isinstance(node, list):
        return [_bounded(value) for value in node]
    if not isinstance(node, dict):
        return node
    if name == "dimensions":
        return copy.deepcopy(DIMENSIONS)
    if name in SHAPES:
        return copy.deepcopy(SHAPES[name])
    out: Wire = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {field: _bounded(schema, field) for field, schema in value.items()}
        elif key in ("example", "default", "enum"):
            out[key] = value
        else:
            out[key] = _bounded(value)
    kind = out.get("type")
    if kind in ("integer", "number"):
        low, high = NUMBER_BOUNDS.get(name or "", (-1, 12) if kind == "integer" else (-1, 40))
        out["minimum"] = max(out.get("minimum", low), low)
        out["maximum"] = max(min(out.get("maximum", high), high), out["minimum"])
    elif kind == "array":
        out["maxItems"] = min(out.get("maxItems", 3), 3)
        if name in ("itemSets", "boxTypes"):
            out["minItems"] = 1
    elif kind == "string" and "enum" not in out:
        out["maxLength"] = min(out.get("maxLength", 12), 12)
    return out


def bounded_spec() -> Wire:
    """The public schema's pack request, bounded so that a case packs fast and most cases
    are valid: see the module docstring. Only `POST /`'s request is generated from it."""
    spec = public_spec()
    operation = spec["paths"]["/"]["post"]
    operation["requestBody"] = {**_bounded(operation["requestBody"]), "required": True}
    schemas = {name: _bounded(schema) for name, schema in spec["components"]["schemas"].items()}
    schemas["Pack"]["required"] = ["itemSets", "boxTypes"]
    schemas["BoxTypeGenerator"]["required"] = ["operation"]
    constraint = schemas["BoxProperties"]["properties"]["propertyConstraints"]["items"]
    constraint["required"] = ["key"]
    constraint["properties"]["aggregate"]["enum"] = ["sum"]
    spec["components"]["schemas"] = schemas
    return spec


def pack_operation(schema: Any) -> Any:
    """The `POST /` operation of a loaded schemathesis schema."""
    for result in schema.get_all_operations():
        operation = result.ok()
        if operation.method.upper() == "POST" and operation.path == "/":
            return operation
    raise AssertionError("the schema has no POST /")


PUBLIC = pack_operation(schemathesis.openapi.from_dict(public_spec()))


def public_case(body: Any) -> Case:
    """`body` as a case of the public schema's operation, so its answer is judged by it."""
    case: Case = PUBLIC.Case(body=body, media_type="application/json")
    return case


# --------------------------------------------------------------------------- checks


def check_answer(case: Case, response: Any, tally: Counter[str] | None = None) -> None:
    """The answer to `case` is documented, never a 5xx; a 200 passes the validator; a 400
    or 422 says what is wrong."""
    body = None if isinstance(case.body, NotSet) else case.body  # no body: packs nothing
    replay = f"\nrequest: {json.dumps(body)[:4000]}"
    assert response.status_code < 500, f"{response.status_code} {response.text[:500]}{replay}"
    case.validate_response(response, checks=CHECKS)
    answer = response.json()
    if response.status_code == 200:
        problems = validate(body if isinstance(body, dict) else {}, answer)
        assert problems == [], f"{problems}{replay}"
        if tally is not None:
            tally["packed" if answer.get("lenBoxes") else "empty"] += 1
    else:
        assert answer["code"] == response.status_code, answer
        if response.status_code in (400, 422):
            assert isinstance(answer.get("details"), str) and answer["details"], answer
        if tally is not None:
            tally[str(response.status_code)] += 1


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[falcon.App[Any, Any]]:
    """The app on a fresh store, anonymous, with the bounds of the module docstring."""
    store = Store(tmp_path_factory.mktemp("fuzz") / "data")
    store.migrate()
    config = AppConfig(max_items=MAX_ITEMS, anonymous_daily_limit=10**9)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CARTONIZE_MAX_TIMEOUT", MAX_TIMEOUT)
        yield create_app(config=config, store=store)


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_requests_of_the_public_schema_answer_as_documented(
    app: falcon.App[Any, Any], mode: GenerationMode
) -> None:
    schema = schemathesis.openapi.from_dict(public_spec())
    schema.config.generation.update(modes=[mode])

    @given(case=pack_operation(schema).as_strategy())
    @_settings(60)
    def answers(case: Case) -> None:
        check_answer(case, case.call(app=app))

    answers()


def test_bounded_requests_pack_validly(app: falcon.App[Any, Any]) -> None:
    tally: Counter[str] = Counter()

    @given(case=pack_operation(schemathesis.openapi.from_dict(bounded_spec())).as_strategy())
    @_settings(200)
    def packs(case: Case) -> None:
        judged = public_case(case.body)
        check_answer(judged, judged.call(app=app), tally)

    packs()
    # The bounded schema is only worth its run while it makes real packings.
    assert tally["packed"] >= sum(tally.values()) // 5, tally


@st.composite
def malformed_bodies(draw: st.DrawFn) -> bytes:
    """A pack request's JSON cut short, or with one byte put in that breaks it."""
    request = draw(
        pack_operation(schemathesis.openapi.from_dict(bounded_spec()))
        .as_strategy()
        .map(lambda case: case.body)
    )
    text = json.dumps(request, ensure_ascii=draw(st.booleans())).encode()
    if draw(st.booleans()):
        return text[: draw(st.integers(1, len(text) - 1))]
    at = draw(st.integers(0, len(text)))
    return (
        text[:at]
        + draw(st.sampled_from([b"{", b"}", b"]", b",", b":", b'"', b"\\", b"\xff"]))
        + text[at:]
    )


def test_malformed_json_is_a_400(app: falcon.App[Any, Any]) -> None:
    client = testing.TestClient(app)

    @given(raw=malformed_bodies())
    @_settings(80)
    def refused(raw: bytes) -> None:
        try:
            json.loads(raw)
        except ValueError:
            malformed = True
        else:
            malformed = False
        result = client.simulate_post("/", body=raw, headers={"Content-Type": "application/json"})
        assert result.status_code < 500, f"{result.status_code} {result.text[:300]}\n{raw!r}"
        if malformed:
            assert result.status_code == 400, f"{result.text[:300]}\n{raw!r}"
            assert result.json["details"], result.json

    refused()


def test_bounded_requests_under_gunicorn() -> None:
    """A short run against gunicorn on loopback: the same answers through a real server
    (the socket, the worker's environment, the batched pack log)."""
    env = {
        "CARTONIZE_MAX_ITEMS": str(MAX_ITEMS),
        "CARTONIZE_MAX_TIMEOUT": MAX_TIMEOUT,
        "CARTONIZE_ANONYMOUS_DAILY_LIMIT": "1000000000",
    }
    with tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / "gunicorn.log"
        with api_on_loopback(Path(scratch) / "data", log, env=env) as base_url:

            @given(
                case=pack_operation(schemathesis.openapi.from_dict(bounded_spec())).as_strategy()
            )
            @_settings(25)
            def packs(case: Case) -> None:
                judged = public_case(case.body)
                check_answer(judged, judged.call(base_url=base_url, timeout=30))

            packs()
