"""Property-based fuzzing of the webhook's refusals (`GET /sync-api/{id}/webhook`, and the
run status `GET /sync-api/{id}/runs/{run_id}`), in process on a real store.

Every call accepted by the webhook starts a Dagster run (a process of its own), so none is
made: the secret is missing, mangled, another connection's, odd text (in the header, the
parameter, both, repeated), or the valid secret of a connection whose account may no
longer use connections; with odd public ids, query parameters, headers and bodies
(malformed, binary, above the body limit). No answer is a 5xx; each is a documented
refusal (401, 403, or 404 for a run) with `error` and `details`, the same `details`
whatever made a secret wrong; and nothing happened: no Dagster run, no connection log
entry, no resource, no request to the source. Derandomised but under `make fuzz`
(tests/api/test_pack_schema_fuzz.py), as tests/api/test_sync_write_fuzz.py.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import schemathesis
from cartonize.store import Store
from cartonize.sync.connections import read_log
from falcon import testing
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from schemathesis.generation.case import Case

from api.app import AppConfig, create_app
from tests.api.documented import assert_documented
from tests.api.library_setup import make_plan
from tests.api.schema_checks import FRESH
from tests.strategies import examples
from tests.sync.third_party import ThirdPartyServer

WEBHOOK = "/sync-api/{public_api_id}/webhook"
RUN = "/sync-api/{public_api_id}/runs/{run_id}"
SECRET_HEADER = "X-Service-API-Secret"
SECRET_PARAM = "service_api_secret"
#: A little above the limit the app is given below.
MAX_BODY = 64 * 1024

#: Text a header can carry (latin-1, no control characters).
_header_text = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"),
    max_size=80,
)
_header_name = st.from_regex(r"\AX-[A-Za-z0-9-]{1,20}\Z") | st.sampled_from(
    [
        "Content-Type",
        "Accept",
        "Authorization",
        "X-Service-Sync-Row-Key",
        "X-Service-Dim-Conv",
        "X-Forwarded-For",
        "Cookie",
        "Range",
        "If-None-Match",
        "x-service-api-secret",
    ]
)
_bodies = st.one_of(
    st.none(),
    st.binary(max_size=300),
    st.text(max_size=200).map(str.encode),
    st.sampled_from(
        [
            b"{",
            b'{"payload": [{"sku": "A", "sku": "B"}]}',
            b"[" * 5000,
            b"\xff\xfe\x00",
            b'{"secret": "x"}',
            b"x" * (MAX_BODY + 1),
        ]
    ),
)


#: One path segment: any text but a slash (sent percent-encoded).
_segment = st.text(
    st.characters(exclude_characters="/", exclude_categories=["Cs"]), min_size=1, max_size=40
)


def _mangled(secret: str) -> st.SearchStrategy[str]:
    """Near misses of a secret (never the secret itself)."""
    return st.one_of(
        st.just(secret[:-1]),
        st.just(secret[:10]),
        st.just(secret.upper()),
        st.just(secret[1:]),
        st.just(secret + "0"),
        st.just(secret[::-1]),
        _header_text,
    ).filter(lambda s: s.strip() != secret)  # HTTP drops whitespace around a header value


@pytest.fixture
def source() -> Any:
    with ThirdPartyServer() as server:
        yield server


def test_webhook_refusals_never_fail_and_start_nothing(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: ThirdPartyServer
) -> None:
    home = tmp_path / "dagster"
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.setenv("CARTONIZE_SYNC_ALLOW_NETWORKS", "127.0.0.0/8")
    plan = make_plan(store)
    fields = {"thirdPartyApiUrl": source.url("/records?n=3"), "schemaRootPath": ""}
    mine = plan.create_connection(name="mine", **fields)
    other = plan.create_connection(name="other", **fields)
    # A connection whose account lost its premium plan: its valid secret is a 403.
    lapsed_plan = make_plan(store, "lapsed")
    lapsed = lapsed_plan.create_connection(name="lapsed", **fields)
    store.set_tier("lapsed", "free")
    client = testing.TestClient(create_app(config=AppConfig(max_body_bytes=MAX_BODY), store=store))
    schema = schemathesis.openapi.from_wsgi("/openapi.json", client.app)
    operation = next(
        result.ok()
        for result in schema.get_all_operations()
        if result.ok().path == WEBHOOK and result.ok().method.upper() == "GET"
    )
    resources_before = plan.client.simulate_get("/resources", headers=plan.auth).json
    tally: Counter[str] = Counter()
    details: set[str] = set()

    secrets = st.one_of(
        st.none(),
        _mangled(mine["apiSecret"]),
        st.just(other["apiSecret"]),
        st.just(lapsed["apiSecret"]),
        st.text(max_size=60),
    )

    @given(
        case=operation.as_strategy(),
        target=st.sampled_from(["mine", "lapsed"]) | _segment,
        header_secret=secrets,
        param_secrets=st.lists(secrets.filter(lambda s: s is not None), max_size=2),
        extra_headers=st.lists(st.tuples(_header_name, _header_text), max_size=4),
        params=st.dictionaries(
            st.text(min_size=1, max_size=10).filter(lambda k: k != SECRET_PARAM),
            st.text(max_size=20),
            max_size=3,
        ),
        body=_bodies,
        run_id=st.none() | st.uuids().map(str) | _segment,
        lapsed_own=st.booleans(),
    )
    @settings(
        max_examples=examples(60),
        deadline=None,
        derandomize=not FRESH,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def refusals(
        case: Case,
        target: str,
        header_secret: str | None,
        param_secrets: list[str],
        extra_headers: list[tuple[str, str]],
        params: dict[str, str],
        body: bytes | None,
        run_id: str | None,
        lapsed_own: bool,
    ) -> None:
        if target == "lapsed" and lapsed_own:
            # Its own valid secret: the plan check (403) is reached.
            header_secret = lapsed["apiSecret"]
        public_id = {"mine": mine, "lapsed": lapsed}.get(target, {}).get("publicApiId", target)
        headers = [(k, v) for k, v in (case.headers or {}).items() if k != SECRET_HEADER]
        # The header wins when set; a header that falcon reads as empty leaves the parameter.
        headers += [(k, v) for k, v in extra_headers if k.lower() != SECRET_HEADER.lower()]
        if header_secret is not None:
            headers.append((SECRET_HEADER, header_secret))
        query: list[tuple[str, str]] = [(k, v) for k, v in params.items()]
        query += [(SECRET_PARAM, s) for s in param_secrets]
        # Never the call that would be accepted (it would start a run).
        sent = [s.strip() for s in [header_secret or "", *param_secrets]]
        assume(mine["apiSecret"] not in sent)
        path = f"/sync-api/{quote(public_id, safe='')}/webhook"
        template = WEBHOOK
        if run_id is not None:
            path = f"/sync-api/{quote(public_id, safe='')}/runs/{quote(run_id, safe='')}"
            template = RUN
        result = client.simulate_request(
            "GET", path, headers=headers, params=dict(query) or None, body=body
        )
        replay = f"\nGET {path} {headers!r} {query!r} body {str(body)[:200]}"
        assert result.status_code < 500, result.text + replay
        expected = (401, 403, 404) if template == RUN else (401, 403)
        assert result.status_code in expected, result.text + replay
        assert_documented(client, "GET", template, result)
        answer = result.json
        assert answer.get("error") and answer.get("details"), f"{answer}{replay}"
        if result.status_code == 401:
            details.add(answer["details"])
        tally[str(result.status_code)] += 1

    refusals()
    # Both refusals came up, a wrong secret always read the same, and nothing happened.
    assert tally["401"] and tally["403"], tally
    assert len(details) == 1, details
    assert not home.exists() or not any(home.iterdir()) or _no_runs(home)
    for connection in (mine, other, lapsed):
        assert read_log(store, connection["id"], limit=5, offset=0) == []
    assert plan.client.simulate_get("/resources", headers=plan.auth).json == resources_before
    assert source.seen == []


def _no_runs(home: Path) -> bool:
    from dagster import DagsterInstance

    with DagsterInstance.from_config(str(home)) as instance:
        return not instance.get_runs()


def test_the_refusals_are_described_in_the_openapi_document(store: Store) -> None:
    client = testing.TestClient(create_app(config=AppConfig(), store=store))
    document = json.loads(client.simulate_get("/openapi.json").text)
    responses = document["paths"][WEBHOOK]["get"]["responses"]
    assert {"401", "403"} <= set(responses)
