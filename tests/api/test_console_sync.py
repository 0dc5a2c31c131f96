"""Console pages for connections and resources, through falcon's test client on a real store."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest
from cartonize.store import Store
from cartonize.sync.connections import LogEntry, connection_by_public_id, record_log

from api.app import AppConfig
from tests.api.console_browser import Browser, hidden
from tests.api.library_setup import ITEM_MAP, Plan, item, make_plan


@pytest.fixture
def plan(store: Store) -> Plan:
    """A premium account with connections enabled."""
    return make_plan(store)


@pytest.fixture
def browser(store: Store, plan: Plan) -> Browser:
    """A browser signed in to the plan."""
    signed_in = Browser(store)
    assert signed_in.sign_in(plan.key).status_code == 303
    return signed_in


def base(plan: Plan) -> str:
    return f"/plans/{plan.plan_id}/console"


def form_of(browser: Browser, path: str, **fields: str) -> dict[str, str]:
    """A connection form with the page's CSRF token."""
    csrf = hidden(browser.get(path).text, "csrf_token")
    return {"csrf_token": csrf, "action": "save", **fields}


GOOD = {
    "name": "ERP items",
    "resourceType": "items",
    "thirdPartyApiUrl": "https://erp.example/api/items",
    "thirdPartyApiKey": "k-123",
    "apiHeadersTemplate": json.dumps({"X-Key": "{{ api_key }}"}),
    "schemaRootPath": "data.items",
    "schemaMap": json.dumps(ITEM_MAP),
    "syncFrequency": "Daily",
    "startAt": "2026-11-22T06:00",
    "timeZone": "Europe/Berlin",
    "dimConv": "mm_to_in",
}


def test_create_shows_the_secret_once_and_it_authenticates(browser: Browser, plan: Plan) -> None:
    created = browser.post(
        base(plan) + "/connections/new", form_of(browser, base(plan) + "/connections/new", **GOOD)
    )
    # Post/Redirect/Get: the new connection's editor shows the secret, once.
    assert created.status_code == 303, created.text
    assert re.fullmatch(rf"{base(plan)}/connections/\d+", created.headers["location"])
    result = browser.follow(created)
    assert result.status_code == 200 and "Connection created." in result.text
    secret = re.search(r'<p class="secret" id="api-secret">([^<]+)</p>', result.text)
    assert secret
    assert secret.group(1) not in created.headers["location"]
    public_id = re.search(r"/sync-api/([^/]+)/webhook", result.text)
    assert public_id
    connection = connection_by_public_id(plan.store, public_id.group(1))
    assert connection is not None
    assert connection.frequency == "Daily" and connection.time_zone == "Europe/Berlin"
    assert connection.api_key_encrypted and "k-123" not in connection.api_key_encrypted
    # The secret works for a REST write, and the editor never shows it again.
    write = plan.client.simulate_post(
        f"/sync-api/{public_id.group(1)}/rest",
        json={"payload": [item("A1")]},
        headers={"X-Service-API-Secret": secret.group(1)},
    )
    assert write.status_code == 200 and write.json["status"] == "success", write.text
    editor = browser.get(f"{base(plan)}/connections/{connection.id}")
    assert secret.group(1) not in editor.text and 'id="api-secret"' not in editor.text
    # The editor shows the webhook and REST URLs whole, as the API answers them.
    wire = plan.client.simulate_get(
        f"/plans/{plan.plan_id}/connections/{connection.id}", headers=plan.auth
    ).json
    assert wire["webhookUrl"].startswith("http://")
    assert f'<code id="webhook-url">{wire["webhookUrl"]}</code>' in editor.text
    assert f'<code id="rest-url">{wire["restUrl"]}</code>' in editor.text
    assert "k-123" not in editor.text
    listing = browser.get(base(plan) + "/connections")
    assert (
        "ERP items" in listing.text and "Daily from 2026-11-22 06:00 Europe/Berlin" in listing.text
    )
    assert "rest POST" in listing.text and "status-success" in listing.text


def test_the_new_secret_is_shown_once_only_to_its_session_and_never_in_a_url(
    store: Store, browser: Browser, plan: Plan
) -> None:
    path = base(plan) + "/connections/new"
    created = browser.post(path, form_of(browser, path, **GOOD))
    editor = created.headers["location"]
    flash = browser.cookies["cartonize_flash"]
    assert "cartonize_flash" in created.headers["set-cookie"]
    assert f"Path={editor}" in created.headers["set-cookie"]
    # Another session of the same account that got hold of the cookie sees nothing.
    other = Browser(store)
    other.sign_in(plan.key)
    other.cookies["cartonize_flash"] = flash
    assert 'id="api-secret"' not in other.get(editor).text
    # Its own session sees it once; a reload shows the editor without it.
    first = browser.follow(created)
    secret = re.search(r'id="api-secret">([^<]+)<', first.text)
    assert secret and secret.group(1) not in flash
    assert "cartonize_flash" not in browser.cookies
    assert 'id="api-secret"' not in browser.get(editor).text
    # Sent again (a copied cookie), it is not shown twice: the server kept "once".
    browser.cookies["cartonize_flash"] = flash
    again = browser.get(editor)
    assert again.status_code == 200 and 'id="api-secret"' not in again.text
    assert "Connection created." not in again.text


def test_a_frequency_without_a_start_is_shown_as_manual(browser: Browser, plan: Plan) -> None:
    # It read "Daily from now", but only a start and a frequency schedule pulls: none came.
    form = form_of(browser, base(plan) + "/connections/new", **{**GOOD, "startAt": ""})
    assert browser.post(base(plan) + "/connections/new", form).status_code == 303
    listing = browser.get(base(plan) + "/connections")
    assert "manual only (Daily needs a start date)" in listing.text
    assert "from now" not in listing.text


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("apiHeadersTemplate", json.dumps({"X-Key": "{{ password }}"}), "api_key"),
        ("apiHeadersTemplate", "{not json", "not valid JSON"),
        ("schemaMap", json.dumps({"colour": "c"}), "colour"),
        ("timeZone", "Mars/Olympus", "unknown time zone"),
        ("thirdPartyApiUrl", "ftp://x", "http"),
        # Kept as their last value before; the JSON API answers 422 for them too.
        (
            "schemaMap",
            '{"refId": "sku", "refId": "id", "dimensions_x": "h", "dimensions_y": "w",'
            ' "dimensions_z": "l", "weight": "m"}',
            "refId&#34; is named more than once, with different values (&#34;sku&#34;, "
            "&#34;id&#34;): which value is meant is not clear; name each key once",
        ),
        (
            "apiHeadersTemplate",
            '{"X-Key": "{{ api_key }}", "X-Key": "token-t2"}',
            "X-Key&#34; is named more than once, with different values: which value",
        ),
    ],
)
def test_invalid_fields_show_inline_next_to_the_field_and_nothing_is_saved(
    browser: Browser, plan: Plan, field: str, value: str, message: str
) -> None:
    path = base(plan) + "/connections/new"
    result = browser.post(path, form_of(browser, path, **{**GOOD, field: value}))
    assert result.status_code == 422
    error = re.search(rf'<p class="field-error" id="e-{field}"[^>]*>([^<]*)</p>', result.text)
    assert error and message in error.group(1), result.text
    assert re.search(rf'id="f-{field}"[^>]*aria-invalid="true"', result.text, re.S)
    assert (
        plan.store.transaction(
            lambda con: con.execute("SELECT count(*) FROM connections").fetchall()
        )[0][0]
        == 0
    )


def test_an_edit_repeating_a_schema_map_key_is_refused_and_changes_nothing(
    browser: Browser, plan: Plan
) -> None:
    # The editor read the schema map's text keeping the last of a repeated key, so the
    # connection was saved mapping refId from "id" while the text also said "sku".
    created = plan.create_connection()
    path = f"{base(plan)}/connections/{created['id']}"
    text = json.dumps(ITEM_MAP)[:-1] + ', "refId": "id"}'
    result = browser.post(path, form_of(browser, path, **{**GOOD, "schemaMap": text}))
    assert result.status_code == 422
    error = re.search(r'<p class="field-error" id="e-schemaMap"[^>]*>([^<]*)</p>', result.text)
    assert error and error.group(1).startswith("&#34;refId&#34; is named more than once"), (
        result.text
    )
    connection = connection_by_public_id(plan.store, created["publicApiId"])
    assert connection is not None and connection.schema_map == ITEM_MAP
    assert connection.name == "feed" and connection.url is None
    # The same value twice is one key, as before.
    same = json.dumps(ITEM_MAP)[:-1] + ', "refId": "sku"}'
    saved = browser.post(path, form_of(browser, path, **{**GOOD, "schemaMap": same}))
    assert saved.status_code == 303, saved.text


def test_edit_keeps_the_stored_key_unless_replaced_and_regenerate_replaces_the_secret(
    browser: Browser, plan: Plan
) -> None:
    created = plan.create_connection(thirdPartyApiKey="old-key")
    path = f"{base(plan)}/connections/{created['id']}"
    edit = {**GOOD, "name": "renamed", "thirdPartyApiKey": ""}
    result = browser.follow(browser.post(path, form_of(browser, path, **edit)))
    assert result.status_code == 200 and "Saved." in result.text
    assert "Saved." not in browser.get(path).text  # shown once
    connection = connection_by_public_id(plan.store, created["publicApiId"])
    assert connection is not None and connection.name == "renamed"
    assert connection.api_key_encrypted is not None  # blank kept the stored key
    confirm = browser.get(path + "/credentials")
    assert "stops working at once" in confirm.text
    posted = browser.post(path + "/credentials", {"csrf_token": hidden(confirm.text, "csrf_token")})
    assert posted.headers["location"] == path
    regenerated = browser.follow(posted)
    new_secret = re.search(r'id="api-secret">([^<]+)<', regenerated.text)
    assert new_secret and new_secret.group(1) != created["apiSecret"]
    old = plan.write("POST", created, {"payload": [item("A")]})
    assert old.status_code == 401
    new = plan.write(
        "POST", {**created, "apiSecret": new_secret.group(1)}, {"payload": [item("A")]}
    )
    assert new.status_code == 200


RUN_ID = "3f2b8c1e-5d4a-4e6f-9a7b-0c1d2e3f4a5b"


def _log_a_scheduled_pull(plan: Plan, connection_id: int) -> None:
    entry = LogEntry("schedule", "success", datetime.now(UTC), received=2, run_id=RUN_ID)
    plan.store.transaction(lambda con: record_log(con, connection_id, entry))


def test_the_log_links_a_pull_to_its_dagster_run_page(store: Store, plan: Plan) -> None:
    # The log said nothing of the run, and Dagster's UI listed scheduled pulls under an
    # anonymous job: nothing led from an entry to its run's logs.
    created = plan.create_connection()
    _log_a_scheduled_pull(plan, created["id"])
    linked = Browser(store, dagster_ui_url="http://127.0.0.1:3000")
    linked.sign_in(plan.key)
    page = linked.get(f"{base(plan)}/connections/{created['id']}").text
    assert f'href="http://127.0.0.1:3000/runs/{RUN_ID}"' in page
    assert f">{RUN_ID[:8]}</a>" in page


def test_without_the_dagster_ui_address_the_run_id_shows_unlinked(
    browser: Browser, plan: Plan
) -> None:
    created = plan.create_connection()
    _log_a_scheduled_pull(plan, created["id"])
    page = browser.get(f"{base(plan)}/connections/{created['id']}").text
    assert f'<code class="run" title="Dagster run {RUN_ID}">{RUN_ID[:8]}</code>' in page
    assert "/runs/" not in page


def test_a_dagster_ui_address_must_be_a_web_address() -> None:
    config = AppConfig.from_env({"CARTONIZE_DAGSTER_UI_URL": "http://10.1.2.3:3000/"})
    assert config.dagster_ui_url == "http://10.1.2.3:3000"
    with pytest.raises(ValueError, match="http:// or https://"):
        AppConfig.from_env({"CARTONIZE_DAGSTER_UI_URL": "localhost:3000"})


def test_delete_needs_the_confirmation(browser: Browser, plan: Plan) -> None:
    created = plan.create_connection()
    path = f"{base(plan)}/connections/{created['id']}"
    csrf = hidden(browser.get(path).text, "csrf_token")
    refused = browser.post(path, {"csrf_token": csrf, "action": "delete"})
    assert refused.status_code == 400
    assert connection_by_public_id(plan.store, created["publicApiId"]) is not None
    done = browser.post(path, {"csrf_token": csrf, "action": "delete", "confirm": "yes"})
    assert done.status_code == 303
    assert connection_by_public_id(plan.store, created["publicApiId"]) is None


def test_connections_pages_are_refused_when_not_enabled(store: Store) -> None:
    plan = make_plan(store, name="basic", tier="free", enable=False)
    browser = Browser(store)
    browser.sign_in(plan.key)
    result = browser.get(base(plan) + "/connections")
    assert result.status_code == 403 and "premium or enterprise" in result.text


def resource_with_rows(plan: Plan, count: int) -> int:
    created = plan.create_connection()
    result = plan.write(
        "POST", created, {"payload": [item(f"S{i:03}", mass=i) for i in range(count)]}
    )
    assert result.status_code == 200, result.text
    resource_id: int = result.json["packResourceId"]
    return resource_id


def test_resource_pages_page_download_default_and_delete(browser: Browser, plan: Plan) -> None:
    resource_id = resource_with_rows(plan, 120)
    listing = browser.get(base(plan) + "/resources", type="items")
    assert f"/resources/{resource_id}" in listing.text
    page = browser.get(f"{base(plan)}/resources/{resource_id}")
    assert "Rows 1\u201350 of 120" in page.text and "S000" in page.text and "S050" not in page.text
    second = browser.get(f"{base(plan)}/resources/{resource_id}", offset="100")
    assert "Rows 101\u2013120 of 120" in second.text and "S119" in second.text
    csv = browser.get(f"{base(plan)}/resources/{resource_id}/csv")
    assert csv.headers["content-type"].startswith("text/csv")
    assert "attachment" in csv.headers["content-disposition"]
    assert len(csv.text.strip().splitlines()) == 121
    csrf = hidden(page.text, "csrf_token")
    marked = browser.post(
        f"{base(plan)}/resources/{resource_id}", {"csrf_token": csrf, "action": "default"}
    )
    assert "Marked as the default" in browser.follow(marked).text
    assert "Marked as the default" not in browser.get(f"{base(plan)}/resources/{resource_id}").text
    deleted = browser.post(
        f"{base(plan)}/resources/{resource_id}",
        {"csrf_token": csrf, "action": "delete", "confirm": "yes"},
    )
    assert deleted.status_code == 303
    assert browser.get(f"{base(plan)}/resources/{resource_id}").status_code == 404


def test_another_accounts_resource_is_not_found(store: Store, browser: Browser, plan: Plan) -> None:
    other = make_plan(store, name="other")
    resource_id = resource_with_rows(other, 3)
    assert browser.get(f"{base(plan)}/resources/{resource_id}").status_code == 404
    assert browser.get(f"{base(plan)}/resources/{resource_id}/csv").status_code == 404


def test_playground_packs_an_order_picked_from_the_library(browser: Browser, plan: Plan) -> None:
    items = plan.create_connection(name="items")
    plan.write(
        "POST", items, {"payload": [item("MUG", h=4, w=4, l=5), item("BOOK", h=1, w=6, l=9)]}
    )
    cartons = plan.create_connection(
        name="cartons",
        resourceType="cartons",
        schemaMap={
            "refId": "id",
            "dimensions_x": "x",
            "dimensions_y": "y",
            "dimensions_z": "z",
            "weightMax": "max",
        },
    )
    plan.write(
        "POST", cartons, {"payload": [{"id": "BOX-M", "x": 10, "y": 10, "z": 10, "max": 50}]}
    )
    orders = plan.create_connection(
        name="orders",
        resourceType="orders",
        schemaMap={"orderId": "order", "refId": "sku", "quantity": "qty"},
    )
    written = plan.write(
        "POST",
        orders,
        {
            "payload": [
                {"order": "SO-7", "sku": "MUG", "qty": 3},
                {"order": "SO-7", "sku": "BOOK", "qty": 2},
                {"order": "SO-8", "sku": "MUG", "qty": 1},
            ]
        },
    )
    assert written.json["status"] == "success", written.text
    page = browser.get(base(plan) + "/playground")
    assert '<option value="SO-7">' in page.text and '<option value="SO-8">' in page.text
    result = browser.follow(
        browser.post(
            base(plan) + "/playground",
            {
                "csrf_token": hidden(page.text, "csrf_token"),
                "action": "pack-order",
                "orderId": "SO-7",
            },
        )
    )
    assert result.status_code == 200, result.text
    assert re.search(r'id="total-units">5<', result.text)
    assert "BOX-M" in result.text
