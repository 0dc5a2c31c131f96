"""`GET /sync-api/{id}/webhook` and `GET /sync-api/{id}/runs/{run_id}`: a pull started at once
as a real Dagster run (a process of its own, on an instance in the test's DAGSTER_HOME),
against the loopback third-party source and the real store."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cartonize.store import Store
from cartonize.sync.connections import read_log
from dagster import DagsterInstance, DagsterRunStatus
from falcon import testing

from api.app import AppConfig, create_app
from tests.api.documented import assert_documented
from tests.api.library_setup import Plan, make_plan
from tests.sync.third_party import (
    API_KEY,
    API_TOKEN,
    HEADERS_TEMPLATE,
    SCHEMA_MAP,
    ThirdPartyServer,
)


@pytest.fixture(scope="module")
def source() -> Iterator[ThirdPartyServer]:
    with ThirdPartyServer() as server:
        yield server


@pytest.fixture
def plan(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: ThirdPartyServer
) -> Plan:
    source.reset()
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    monkeypatch.setenv("CARTONIZE_SYNC_ALLOW_NETWORKS", "127.0.0.0/8")
    monkeypatch.setenv("CARTONIZE_SYNC_MAX_ATTEMPTS", "1")
    return make_plan(store)


def connect(plan: Plan, source: ThirdPartyServer, path: str, **fields: Any) -> dict[str, Any]:
    return plan.create_connection(
        thirdPartyApiUrl=source.url(path),
        schemaRootPath="data.items",
        apiHeadersTemplate=HEADERS_TEMPLATE,
        thirdPartyApiKey=API_KEY,
        thirdPartyApiToken=API_TOKEN,
        schemaMap={**SCHEMA_MAP, "properties.color": "attributes.color"},
        **fields,
    )


WEBHOOK = "/sync-api/{public_api_id}/webhook"
RUN = "/sync-api/{public_api_id}/runs/{run_id}"


def webhook(client: testing.TestClient, connection: dict[str, Any], **kw: Any) -> testing.Result:
    return client.simulate_get(
        f"/sync-api/{connection['publicApiId']}/webhook",
        headers={"X-Service-API-Secret": connection["apiSecret"]},
        **kw,
    )


def test_webhook_pulls_now_and_answers_the_run(
    plan: Plan, source: ThirdPartyServer, tmp_path: Path
) -> None:
    connection = connect(plan, source, "/records?n=40&root=data.items")
    answer = webhook(plan.client, connection)
    assert answer.status_code == 200, answer.text
    assert_documented(plan.client, "GET", WEBHOOK, answer)
    body = answer.json
    assert body["status"] == "success"
    assert (body["received"], body["inserted"], body["rejected"]) == (40, 40, 0)
    rows = plan.rows(body["packResourceId"])
    assert len(rows) == 40 and rows[3]["refId"] == "SKU-000003"
    assert rows[3]["dimensions_x"] == 13 and rows[3]["properties"] == {"color": "red"}
    # The source saw the rendered auth headers.
    assert source.seen[0].headers["X-Api-Key"] == API_KEY
    # The run is a real run of the instance at DAGSTER_HOME, with its logs.
    with DagsterInstance.from_config(str(tmp_path / "dagster")) as instance:
        run = instance.get_run_by_id(body["run_id"])
        assert run is not None and run.status == DagsterRunStatus.SUCCESS
        assert run.job_name == "pull_connection"
        assert run.tags["dagster/partition"] == str(connection["id"])
        assert run.tags["cartonize/trigger"] == "webhook"
        messages = [e.user_message for e in instance.all_logs(body["run_id"])]
        assert any("fetched 40 records" in m for m in messages)
    (entry,) = read_log(plan.store, connection["id"], limit=5, offset=0)
    assert entry.trigger == "webhook" and entry.status == "success"
    assert entry.run_id == body["run_id"] and entry.duration_s is not None
    # The status URL answers the same figures.
    status = plan.client.simulate_get(
        body["status_url"].split("falconframework.org", 1)[-1],
        params={"service_api_secret": connection["apiSecret"]},
    )
    assert status.status_code == 200 and status.json["inserted"] == 40
    assert_documented(plan.client, "GET", RUN, status)
    assert status.json["status"] == "success"


def test_a_long_pull_answers_202_with_a_status_url(
    store: Store, plan: Plan, source: ThirdPartyServer
) -> None:
    connection = connect(plan, source, "/slow?delay=3&n=5&root=data.items")
    client = testing.TestClient(create_app(config=AppConfig(webhook_wait=0.2), store=store))
    answer = webhook(client, connection)
    assert answer.status_code == 202, answer.text
    assert_documented(client, "GET", WEBHOOK, answer)
    assert answer.json["status"] in ("queued", "running")
    path = f"/sync-api/{connection['publicApiId']}/runs/{answer.json['run_id']}"
    assert answer.json["status_url"].endswith(path)
    secret = {"X-Service-API-Secret": connection["apiSecret"]}
    deadline = time.monotonic() + 60
    while True:
        status = client.simulate_get(path, headers=secret)
        assert status.status_code == 200
        assert_documented(client, "GET", RUN, status)
        if status.json["status"] in ("success", "failure") or time.monotonic() > deadline:
            break
        time.sleep(0.25)
    assert status.json["status"] == "success", status.json
    assert status.json["inserted"] == 5


def test_a_failed_pull_is_200_failure_with_the_reason(plan: Plan, source: ThirdPartyServer) -> None:
    connection = connect(plan, source, "/records?n=5&root=data.items")
    source.fail_next(500, times=3)
    answer = webhook(plan.client, connection)
    assert answer.status_code == 200, answer.text
    assert_documented(plan.client, "GET", WEBHOOK, answer)
    assert answer.json["status"] == "failure"
    assert "answered 500" in answer.json["message"]
    assert answer.json["packResourceId"] is None
    (entry,) = read_log(plan.store, connection["id"], limit=5, offset=0)
    assert entry.status == "failure" and entry.run_id == answer.json["run_id"]


def test_secret_and_run_ownership_are_checked(plan: Plan, source: ThirdPartyServer) -> None:
    connection = connect(plan, source, "/records?n=5&root=data.items")
    other = connect(plan, source, "/records?n=5&root=data.items")
    base = f"/sync-api/{connection['publicApiId']}"
    for headers in ({}, {"X-Service-API-Secret": other["apiSecret"]}):
        refused = plan.client.simulate_get(f"{base}/webhook", headers=headers)
        assert refused.status_code == 401 and refused.json["error"] == "Unauthorized"
    assert source.seen == []
    ran = plan.client.simulate_get(
        f"{base}/webhook", params={"service_api_secret": connection["apiSecret"]}
    )
    assert ran.status_code == 200 and ran.json["status"] == "success"
    run_id = ran.json["run_id"]
    mine = {"X-Service-API-Secret": connection["apiSecret"]}
    theirs = {"X-Service-API-Secret": other["apiSecret"]}
    assert plan.client.simulate_get(f"{base}/runs/{run_id}", headers=mine).status_code == 200
    other_base = f"/sync-api/{other['publicApiId']}"
    assert (
        plan.client.simulate_get(f"{other_base}/runs/{run_id}", headers=theirs).status_code == 404
    )
    unknown = "00000000-0000-0000-0000-000000000000"
    assert plan.client.simulate_get(f"{base}/runs/{unknown}", headers=mine).status_code == 404
    assert plan.client.simulate_get(f"{base}/runs/not-a-run", headers=mine).status_code == 404
    assert plan.client.simulate_get(f"{base}/runs/{run_id}").status_code == 401
