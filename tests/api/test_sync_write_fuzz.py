"""Property-based fuzzing of the sync REST writes (`POST|PUT|PATCH /sync-api/{id}/rest`)
from `/openapi.json`, in process on a real store, with the connection's valid secret.

No write answers a 5xx or breaks its documented schema; a write that is refused (4xx) or
fails (`status: failure`) leaves the Resource to Update exactly as it was (its rows, row
count and update time) and creates no resource; a success accounts for every record
(received = inserted + updated + unchanged + rejected). Payloads are schemathesis'
(anything the body schema allows) or, half the time, records in the connection's source
naming, each castable or with one value of another kind (text, null, nested JSON), so
that some records land and some are rejected. tests/api/test_openapi_fuzz_library.py
checks the answers of these and the other library operations against the schema; this
adds what a write must leave behind. Derandomised but under `make fuzz`
(tests/api/test_pack_schema_fuzz.py).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
import schemathesis
from cartonize.store import Store
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.generation.case import Case

from tests.api.library_setup import Plan, item, make_plan
from tests.api.schema_checks import CHECKS, FRESH
from tests.strategies import examples

OPERATIONS = ["POST", "PUT", "PATCH"]

_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)  # JSON has neither
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
_side = st.floats(0.1, 100)
#: A record in the source's naming (tests.api.library_setup.ITEM_MAP): castable, or with
#: one value of any other kind.
_record = st.builds(
    lambda sku, h, w, l, mass, spoil: {**item(sku, h, w, l, mass), **spoil},  # noqa: E741
    st.text(min_size=1, max_size=6) | st.integers(0, 20),
    _side,
    _side,
    _side,
    _side,
    st.just({}) | st.dictionaries(st.sampled_from(["sku", "size", "mass"]), _json, max_size=1),
)
_records = st.lists(_record, max_size=3)


@pytest.mark.parametrize("method", OPERATIONS)
def test_a_refused_write_leaves_the_resource_unchanged(store: Store, method: str) -> None:
    plan = make_plan(store)
    creator = plan.create_connection(name="creator")
    made = plan.write("POST", creator, {"payload": [item("a"), item("b", 2, 3, 4)]})
    resource_id = made.json["packResourceId"]
    connection = plan.create_connection(resourceToUpdate=resource_id)
    app = plan.client.app
    schema = schemathesis.openapi.from_wsgi("/openapi.json", app)
    operation = next(
        result.ok()
        for result in schema.get_all_operations()
        if result.ok().path == "/sync-api/{public_api_id}/rest"
        and result.ok().method.upper() == method
    )
    headers = {"X-Service-API-Secret": connection["apiSecret"]}
    tally: Counter[str] = Counter()

    @given(
        case=operation.as_strategy(),
        records=st.none() | _records,
        row_key=st.sampled_from([None, "refId"]),
    )
    @settings(
        max_examples=examples(20),
        deadline=None,
        derandomize=not FRESH,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def writes(case: Case, records: list[Any] | None, row_key: str | None) -> None:
        case.headers = {**(case.headers or {}), **headers}
        case.path_parameters = {"public_api_id": connection["publicApiId"]}
        if records is not None:
            # Records that can land, under no row_key or the mapped refId.
            case.body = {"payload": records, "row_key": row_key}
            case.query = {k: v for k, v in (case.query or {}).items() if k != "row_key"}
            case.headers.pop("X-Service-Sync-Row-Key", None)
        before = _state(plan, resource_id)
        response = case.call(app=app)
        case.validate_response(response, checks=CHECKS)
        answer = response.json()
        replay = f"\n{method} {json.dumps(case.query)} {json.dumps(case.body)[:2000]}"
        if response.status_code != 200 or answer["status"] == "failure":
            assert _state(plan, resource_id) == before, f"{answer}{replay}"
            tally["refused"] += 1
        else:
            tally["written" if answer["inserted"] + answer["updated"] else "no change"] += 1
            counted = sum(answer[k] for k in ("inserted", "updated", "unchanged", "rejected"))
            assert answer["received"] == counted, f"{answer}{replay}"

    writes()
    # Both sides of the property come up (a run of refusals alone would prove little).
    assert tally["refused"] and tally["written"], tally


def _state(plan: Plan, resource_id: int) -> tuple[Any, ...]:
    """What a write may change: the resource's rows (first 1000), row count and update
    time, and the account's list of resources."""
    page = plan.client.simulate_get(
        f"/resources/{resource_id}", params={"limit": "1000"}, headers=plan.auth
    ).json
    listed = plan.client.simulate_get("/resources", headers=plan.auth).json
    return page["rows"], page["rowCount"], page["updatedAt"], listed
