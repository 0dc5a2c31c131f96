"""schemathesis against the library, connection and sync operations, in process (WSGI) on
a real store, authenticated as a premium account with connections enabled: no 500, no
answer that breaks the documented schema. test_openapi_fuzz.py covers the pack routes
under gunicorn; without an account these routes only ever answer 401, so they are driven
here with the account's key, the connection's secret and, most of the time, the ids of a
real plan, connection and resource in the path. The webhook is left out: each call that
passes starts a Dagster run (tests/api/test_webhook.py)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from cartonize.store import Store
from hypothesis import HealthCheck, given, settings
from schemathesis import checks
from schemathesis.generation.case import Case

from tests.api.library_setup import item, make_plan

MAX_EXAMPLES = 40
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
]
# Writes first and removals last, so the real connection and resource stay for the rest.
OPERATIONS = [
    "POST /sync-api/{public_api_id}/rest",
    "PUT /sync-api/{public_api_id}/rest",
    "PATCH /sync-api/{public_api_id}/rest",
    "GET /sync-api/{public_api_id}/runs/{run_id}",
    "GET /resources",
    "GET /resources/{resource_id}",
    "GET /resources/{resource_id}/csv",
    "PATCH /resources/{resource_id}",
    "GET /packs",
    "GET /plans/{plan_id}/connections",
    "POST /plans/{plan_id}/connections",
    "GET /plans/{plan_id}/connections/{connection_id}",
    "PATCH /plans/{plan_id}/connections/{connection_id}",
    "GET /plans/{plan_id}/connections/{connection_id}/log",
    "POST /plans/{plan_id}/connections/{connection_id}/credentials",
    "DELETE /resources/{resource_id}",
    "DELETE /plans/{plan_id}/connections/{connection_id}",
]


def test_every_library_and_sync_answer_matches_the_schema(tmp_path: Path) -> None:
    store = Store(tmp_path / "data")
    store.migrate()
    plan = make_plan(store)
    connection = plan.create_connection()
    written = plan.write("POST", connection, {"payload": [item("a"), item("b", 2, 3, 4)]})
    assert written.status_code in (200, 201), written.text
    real: dict[str, Any] = {
        "plan_id": plan.plan_id,
        "connection_id": connection["id"],
        "public_api_id": connection["publicApiId"],
        "resource_id": written.json["packResourceId"],
    }
    app = plan.client.app
    schema = schemathesis.openapi.from_wsgi("/openapi.json", app)
    operations = {}
    for result in schema.get_all_operations():
        operation = result.ok()
        operations[f"{operation.method.upper()} {operation.path}"] = operation
    assert set(OPERATIONS) <= set(operations)
    headers = {
        "Authorization": f"apikey {plan.key}",
        "X-Service-API-Secret": connection["apiSecret"],
    }
    for label in OPERATIONS:
        try:
            _answers_match(operations[label], app, headers, real, random.Random(label))
        except BaseException as failure:
            pytest.fail(f"{label}: {failure}")


def _answers_match(
    operation: Any, app: Any, headers: dict[str, str], real: dict[str, Any], pick: random.Random
) -> None:
    """Every generated call of `operation` with the account's `headers`, its path ids
    replaced by the `real` ones seven times in ten (`pick`, seeded by the operation, so a
    failure replays), answers as documented."""

    @given(case=operation.as_strategy())
    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    def answers_match(case: Case) -> None:
        case.headers = {**(case.headers or {}), **headers}
        if case.path_parameters:
            case.path_parameters = {
                name: real[name] if name in real and pick.random() < 0.7 else value
                for name, value in case.path_parameters.items()
            }
        case.validate_response(case.call(app=app), checks=CHECKS)

    answers_match()
