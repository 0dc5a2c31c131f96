"""`/openapi.json` against the app itself: every route the app serves is documented (the
browser console and the documentation routes aside), and real answers of every documented
operation have a documented status and validate against the documented schema."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import falcon.inspect
import pytest
from cartonize.store import Store
from falcon import testing

import api.console
from api.app import AppConfig, create_app
from tests.api.documented import assert_documented, document_of
from tests.api.library_setup import ITEM_MAP, Plan, item, make_plan

CONSOLE = Path(api.console.__file__).resolve().parent
#: What Chromium sends when it opens a page.
BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/webp,*/*;q=0.8"
#: Served but not documented: the documentation itself.
UNDOCUMENTED = {"/openapi.json", "/docs"}


def _shape(path: str) -> str:
    """A path with its parameters blanked: falcon's `{id:int}` and OpenAPI's `{id}` agree."""
    return re.sub(r"\{[^}]*\}", "{}", path)


def served_operations(app: falcon.App[Any, Any]) -> set[tuple[str, str]]:
    """(METHOD, path shape) of every route added to `app`, except console pages."""
    found = set()
    for route in falcon.inspect.inspect_routes(app):
        source = Path(route.source_info.rsplit(":", 1)[0]).resolve()
        if source.is_relative_to(CONSOLE) or route.path in UNDOCUMENTED:
            continue
        for method in route.methods:
            if not method.internal:
                found.add((method.method, _shape(route.path)))
    return found


def documented_operations(document: dict[str, Any]) -> set[tuple[str, str]]:
    """(METHOD, path shape) of every operation of the document."""
    return {
        (method.upper(), _shape(path))
        for path, operations in document["paths"].items()
        for method in operations
    }


def test_every_served_route_is_documented(store: Store) -> None:
    app = create_app(config=AppConfig(), store=store)
    served = served_operations(app)
    # The walk sees the routes of each part of the app, not just a few.
    assert {("GET", "/resources/{}/csv"), ("PATCH", "/sync-api/{}/rest")} <= served
    assert ("GET", "/plans/{}/console/resources") not in served
    document = document_of(testing.TestClient(app))
    assert documented_operations(document) == served


def test_console_routes_are_left_out_by_where_they_are_defined(store: Store) -> None:
    app = create_app(config=AppConfig(), store=store)
    every = {
        (m.method, route.path)
        for route in falcon.inspect.inspect_routes(app)
        for m in route.methods
        if not m.internal
    }
    left_out = {
        (method, path)
        for method, path in every
        if (method, _shape(path)) not in served_operations(app)
    }
    assert left_out, "the console adds routes"
    assert all(
        path in UNDOCUMENTED or path in ("/sign-in", "/sign-out") or "/console/" in path
        for _, path in left_out
    ), left_out


class Exercise:
    """Calls the app and checks each answer against the document, remembering which
    operations were called."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.called: set[tuple[str, str]] = set()

    def __call__(
        self, method: str, template: str, path: str, expect: int, **kw: Any
    ) -> testing.Result:
        result = self.plan.client.simulate_request(method, path, **kw)
        assert result.status_code == expect, f"{method} {path}: {result.text[:300]}"
        assert_documented(self.plan.client, method, template, result)
        self.called.add((method, _shape(template)))
        return result


@pytest.fixture
def plan(store: Store) -> Plan:
    return make_plan(store)


def test_real_answers_of_every_operation_match_the_document(plan: Plan) -> None:
    call = Exercise(plan)
    key = {"headers": plan.auth}
    wrong_key = {"headers": {"Authorization": "apikey nope"}}
    # Packs.
    pack_body = {
        "itemSets": [
            {"refId": 1, "dimensions": {"x": 1, "y": 2, "z": 3}, "weight": 1, "quantity": 2}
        ],
        "boxTypes": [{"refId": 7, "dimensions": {"x": 5, "y": 5, "z": 5}, "weightMax": 10}],
        "orderId": "O-1",
        "includeImages": False,
    }
    packed = call("POST", "/", "/", 200, json=pack_body, **key).json
    call("GET", "/", "/", 200, headers={"Accept": BROWSER_ACCEPT})
    call("GET", "/", "/", 405, headers={"Accept": "application/json"})
    call("POST", "/", "/", 422, json={"itemSets": 3}, **key)
    call("GET", "/packs", "/packs", 200, params={"orderId": "O-1"}, **key)
    call("GET", "/packs", "/packs", 401, **wrong_key)
    call("GET", "/packs/{packUuid}", f"/packs/{packed['packUuid']}", 200, **key)
    call("GET", "/packs/{packUuid}", "/packs/" + "0" * 128, 404, **key)
    call("GET", "/healthz", "/healthz", 200)
    call("HEAD", "/healthz", "/healthz", 200)
    call("GET", "/readyz", "/readyz", 200)
    call("HEAD", "/readyz", "/readyz", 200)

    # Connections.
    plans = f"/plans/{plan.plan_id}/connections"
    one = plans + "/{connection_id}"
    template = "/plans/{plan_id}/connections"
    body = {"name": "feed", "resourceType": "items", "schemaMap": ITEM_MAP}
    created = call("POST", template, plans, 201, json=body, **key).json
    assert "apiSecret" in created
    call("POST", template, plans, 422, json={**body, "syncFrequency": "Yearly"}, **key)
    call("POST", template, plans, 400, body=b"{nope", **key)
    call("POST", template, plans, 401, json=body)
    call("GET", template, "/plans/elsewhere/connections", 404, **key)
    call("GET", template, plans, 200, **key)
    mine = one.replace("{connection_id}", str(created["id"]))
    call("GET", template + "/{connection_id}", mine, 200, **key)
    call("GET", template + "/{connection_id}", plans + "/999", 404, **key)
    patched = call(
        "PATCH",
        template + "/{connection_id}",
        mine,
        200,
        json={"syncFrequency": "Daily", "startAt": "2026-12-01T06:30:00"},
        **key,
    ).json
    assert patched["startAt"] == "2026-12-01T06:30:00"
    call("PATCH", template + "/{connection_id}", mine, 422, json={"bogus": 1}, **key)
    regenerated = call(
        "POST", template + "/{connection_id}/credentials", mine + "/credentials", 200, **key
    ).json
    call("GET", template + "/{connection_id}/log", mine + "/log", 400, params={"limit": "0"}, **key)

    # The sync REST API.
    rest = "/sync-api/{public_api_id}/rest"
    url = f"/sync-api/{regenerated['publicApiId']}/rest"
    secret = {"headers": {"X-Service-API-Secret": regenerated["apiSecret"]}}
    records = {"payload": [item("A-1"), item("A-2", title="second")], "row_key": "refId"}
    written = call("POST", rest, url, 200, json=records, **secret).json
    assert written["status"] == "success"
    resource_id = written["packResourceId"]
    call("POST", rest, url, 401, json=records, headers={"X-Service-API-Secret": "x" * 48})
    call(
        "POST",
        rest,
        url,
        200,
        json=records,
        params={"service_api_secret": regenerated["apiSecret"], "dim_conv": "cubits"},
    )
    call("PATCH", rest, url, 400, body=b"[1, 2]", **secret)
    call("PATCH", rest, url, 400, json={**records, "row_key": 5}, **secret)
    # The connection now updates its resource: PUT and PATCH have somewhere to write.
    call(
        "PATCH",
        template + "/{connection_id}",
        mine,
        200,
        json={"resourceToUpdate": resource_id},
        **key,
    )
    call("PUT", rest, url, 200, json={"payload": [item("B-1")]}, **secret)
    failed = call("PUT", rest, url, 200, json={"payload": item("B-2")}, **secret).json
    assert failed["status"] == "failure" and failed["message"]
    refused = call("PUT", rest, url, 200, json={"payload": [item("B-3", mass="heavy")]}, **secret)
    assert refused.json["status"] == "failure" and refused.json["rejected"] == 1
    call("PATCH", rest, url, 200, json=records, **secret)
    log = call("GET", template + "/{connection_id}/log", mine + "/log", 200, **key).json["log"]
    assert {entry["trigger"] for entry in log} == {"rest POST", "rest PUT", "rest PATCH"}

    # The webhook and its runs: the answers that start no Dagster run (the runs themselves
    # are checked against the document in tests/api/test_webhook.py).
    hook = f"/sync-api/{regenerated['publicApiId']}"
    call("GET", "/sync-api/{public_api_id}/webhook", hook + "/webhook", 401)
    call("GET", "/sync-api/{public_api_id}/runs/{run_id}", hook + "/runs/x", 401)
    call("GET", "/sync-api/{public_api_id}/runs/{run_id}", hook + "/runs/not-a-run", 404, **secret)

    # The library.
    item_path = f"/resources/{resource_id}"
    call("GET", "/resources", "/resources", 200, params={"type": "items"}, **key)
    call("GET", "/resources", "/resources", 400, params={"type": "boxes"}, **key)
    call("GET", "/resources", "/resources", 401)
    page = call("GET", "/resources/{resource_id}", item_path, 200, params={"limit": "1"}, **key)
    assert page.json["nextOffset"] == 1
    call("GET", "/resources/{resource_id}", "/resources/999", 404, **key)
    csv = call("GET", "/resources/{resource_id}/csv", item_path + "/csv", 200, **key)
    assert csv.text.startswith("refId")
    call("PATCH", "/resources/{resource_id}", item_path, 200, json={"isDefault": True}, **key)
    call("PATCH", "/resources/{resource_id}", item_path, 422, json={"isDefault": False}, **key)
    call("DELETE", "/resources/{resource_id}", item_path, 409, **key)
    call("DELETE", template + "/{connection_id}", mine, 204, **key)
    call("DELETE", "/resources/{resource_id}", item_path, 204, **key)

    assert call.called == documented_operations(document_of(plan.client))


def test_docs_page_shows_every_operation(store: Store) -> None:
    client = testing.TestClient(create_app(config=AppConfig(), store=store))
    page = client.simulate_get("/docs").text
    for method, shape in documented_operations(document_of(client)):
        path = re.escape(shape).replace(re.escape("{}"), r"\{[a-zA-Z_]+\}")
        assert re.search(f"<h3><code>{method} {path}</code>", page), (method, shape)
    assert "X-Service-API-Secret (header) or service_api_secret (query)" in page
    assert "<a href='#ConnectionFields'>ConnectionFields</a>" in page
    assert "/sign-in" in page  # the console is named in the introduction
