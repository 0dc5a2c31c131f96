"""schemathesis against `/openapi.json` of the real app under gunicorn: no 500, no response
that breaks the documented schema. Bounded: a few dozen examples per operation."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from cartonize.serve import api_on_loopback
from hypothesis import HealthCheck, given, settings
from schemathesis import checks
from schemathesis.generation.case import Case

MAX_EXAMPLES = 30


@pytest.fixture(scope="module")
def live_url() -> Iterator[str]:
    """Base URL of gunicorn (2 workers) serving the app on loopback with a fresh store."""
    with tempfile.TemporaryDirectory() as scratch:
        env = {
            # Small bounds keep each generated pack fast; the limits themselves are tested
            # elsewhere, and here the point is that every documented answer is what it says.
            "CARTONIZE_MAX_ITEMS": "200",
            "CARTONIZE_MAX_TIMEOUT": "2",
            "CARTONIZE_ANONYMOUS_DAILY_LIMIT": "1000000",
        }
        log = Path(scratch) / "gunicorn.log"
        with api_on_loopback(Path(scratch) / "data", log, env=env) as base_url:
            yield base_url


# Only the pack routes are fuzzed here. The library, connection and sync operations need
# an account with connections enabled, a connection and its secret before an answer other
# than 401 comes back: tests/api/test_openapi_fuzz_library.py fuzzes them with those, in
# process. The webhook starts a Dagster run per call (seconds each), so it is fuzzed
# nowhere; the real answers of every operation are checked against the same document in
# tests/api/test_openapi_routes.py.
OPERATIONS = ["POST /", "GET /packs", "GET /packs/{packUuid}", "GET /healthz", "GET /readyz"]
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
    checks.response_headers_conformance,
]


# schemathesis' own pytest plugin does not run under pytest 9 yet, so each operation's
# strategy is driven by hypothesis directly.
@pytest.mark.parametrize("label", OPERATIONS)
def test_every_answer_matches_the_schema(live_url: str, label: str) -> None:
    schema = schemathesis.openapi.from_url(live_url + "/openapi.json")
    operations = {}
    for result in schema.get_all_operations():
        operation = result.ok()
        operations[f"{operation.method.upper()} {operation.path}"] = operation
    assert set(OPERATIONS) <= set(operations)

    @given(case=operations[label].as_strategy())
    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    def answers_match(case: Case) -> None:
        case.call_and_validate(base_url=live_url, checks=CHECKS, timeout=30)

    answers_match()
