"""The console in a real headless Chromium against the service under gunicorn."""

from __future__ import annotations

import json
import re

import httpx
from cartonize.sync.connections import list_connections, read_log
from dagster import DagsterInstance
from playwright.sync_api import Page, expect

from tests.console.conftest import DAGSTER_UI_URL, PULL_MS, Service
from tests.sync.third_party import (
    API_KEY,
    API_TOKEN,
    HEADERS_TEMPLATE,
    SCHEMA_MAP,
    ThirdPartyServer,
)

ORDER = {
    "orderId": "E2E-1",
    "itemSets": [
        {
            "refId": 1,
            "name": "mug",
            "dimensions": {"x": 4, "y": 4, "z": 5},
            "weight": 1,
            "quantity": 5,
        },
    ],
    "boxTypes": [
        {"refId": 9, "name": "small", "dimensions": {"x": 8, "y": 8, "z": 6}, "weightMax": 10},
    ],
}


def sign_in(page: Page, service: Service, account: str) -> str:
    """Create `account` with a key, sign in through the form, and return its plan id."""
    plan = service.store.create_account(account, "premium").plan_id
    key = service.store.create_key(account, "browser")[1]
    page.goto(service.base_url + "/sign-in")
    page.get_by_label("Account API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(re.compile(rf"/plans/{plan}/console/$"))
    return plan


def test_the_service_address_points_a_browser_to_the_console_and_the_docs(
    page: Page, service: Service
) -> None:
    # Opening the address showed a JSON 405 (packing is POST /) and no way on.
    page.goto(service.base_url + "/")
    expect(page.get_by_role("heading", name="cartonize")).to_be_visible()
    page.get_by_role("link", name="Sign in to the console").click()
    expect(page).to_have_url(re.compile(r"/sign-in$"))
    expect(page.get_by_label("Account API key")).to_be_visible()
    page.go_back()
    page.get_by_role("link", name="API documentation").click()
    expect(page).to_have_url(re.compile(r"/docs$"))
    expect(page.get_by_role("heading", name=re.compile("^cartonize service"))).to_be_visible()


def test_sign_in_wrong_key_then_right_key_then_sign_out(page: Page, service: Service) -> None:
    page.goto(service.base_url + "/sign-in")
    page.get_by_label("Account API key").fill("wrong")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("unknown or revoked")
    plan = sign_in(page, service, "E2E-SIGNIN")
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()
    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(re.compile(r"/sign-in$"))
    page.goto(f"{service.base_url}/plans/{plan}/console/")
    expect(page).to_have_url(re.compile(r"/sign-in\?next="))


def test_playground_packs_and_shows_pictures(page: Page, service: Service) -> None:
    plan = sign_in(page, service, "E2E-PLAY")
    page.get_by_role("navigation").get_by_role("link", name="Pack playground").click()
    page.get_by_label(re.compile("Pack request")).fill(json.dumps(ORDER))
    page.get_by_role("button", name="Pack").click()
    expect(page.locator("#total-units")).to_have_text("5")
    pictures = page.locator("img.picture")
    expect(pictures.first).to_be_visible()
    # The picture really decoded: the browser knows its intrinsic size.
    width = pictures.first.evaluate("img => img.naturalWidth")
    assert width > 0
    fits = "() => document.documentElement.scrollWidth <= window.innerWidth"
    assert page.evaluate(fits), "the result is wider than the 1366 px screen"
    page.locator("#pack-link").click()
    expect(page).to_have_url(re.compile(rf"/plans/{plan}/console/packs/"))
    expect(page.get_by_text("E2E-1", exact=True)).to_be_visible()
    # The overview lists the pack by its 128-digit packUuid without scrolling sideways.
    page.get_by_role("navigation").get_by_role("link", name="Overview").click()
    expect(page.locator("a.uuid").first).to_be_visible()
    assert page.evaluate(fits), "the overview is wider than the 1366 px screen"


def test_a_reload_after_packing_packs_nothing_again_and_keeps_the_result(
    page: Page, service: Service
) -> None:
    # The playground answered its form's POST with the result, so reloading the result
    # (or coming back to it) posted the form again: another pack stored, another request
    # against the key's rate limit. The POST redirects now. Then the result showed once:
    # a second reload showed the sample request, and the user's request and answer were
    # lost. Now every reload shows them, until the user packs again or starts over.
    plan = sign_in(page, service, "E2E-RELOAD")
    account = service.store.account_by_id(service.store.list_keys("E2E-RELOAD")[0].account_id)
    assert account is not None
    page.goto(f"{service.base_url}/plans/{plan}/console/playground")
    sample = page.get_by_label(re.compile("Pack request")).input_value()
    typed = json.dumps({**ORDER, "orderId": "E2E-RELOAD-1"}, indent=1)
    page.get_by_label(re.compile("Pack request")).fill(typed)
    page.get_by_role("button", name="Pack", exact=True).click()
    expect(page.locator("#total-units")).to_have_text("5")
    expect(page.get_by_label(re.compile("Pack request"))).to_have_value(typed)

    def stored() -> int:
        found = service.store.find_packs(
            account.id, order_id="E2E-RELOAD-1", request_id=None, limit=10, offset=0
        )
        return len(found)

    assert stored() == 1
    for _ in range(2):
        page.reload()
        expect(page.get_by_role("heading", name="Pack playground")).to_be_visible()
        expect(page.locator("#total-units")).to_have_text("5")
        expect(page.get_by_label(re.compile("Pack request"))).to_have_value(typed)
    page.get_by_role("navigation").get_by_role("link", name="Overview").click()
    page.go_back()
    expect(page.get_by_label(re.compile("Pack request"))).to_have_value(typed)
    page.get_by_role("navigation").get_by_role("link", name="Pack playground").click()
    expect(page.locator("#total-units")).to_have_text("5")
    assert stored() == 1
    page.get_by_role("button", name="Start over").click()
    expect(page.get_by_label(re.compile("Pack request"))).to_have_value(sample)
    expect(page.locator("#total-units")).to_have_count(0)
    page.reload()
    expect(page.get_by_label(re.compile("Pack request"))).to_have_value(sample)
    expect(page.locator("#total-units")).to_have_count(0)
    assert stored() == 1


def test_keyboard_reaches_the_form_and_packs(page: Page, service: Service) -> None:
    sign_in(page, service, "E2E-KEYS")
    page.get_by_role("navigation").get_by_role("link", name="Pack playground").click()
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    page.get_by_label(re.compile("Pack request")).focus()
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Pack")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#total-boxes")).to_have_text(re.compile(r"\d+"))


def test_create_a_connection_see_the_secret_once_and_view_its_resource(
    page: Page, service: Service
) -> None:
    sign_in(page, service, "E2E-SYNC")
    service.store.set_connections_enabled("E2E-SYNC", True)
    page.get_by_role("navigation", name="Console").get_by_role("link", name="Connections").click()
    page.get_by_role("link", name="New connection").click()
    expect(page.get_by_role("heading", name="New connection")).to_be_visible()
    page.get_by_role("textbox", name="Name", exact=True).fill("Warehouse items")
    page.get_by_label("Resource type").select_option("items")
    headers = page.get_by_label("API headers template")
    headers.fill('{"X-Key": "{{ password }}"}')
    expect(page.locator("#e-apiHeadersTemplate")).to_contain_text("only {{ api_key }}")
    headers.fill('{"X-Key": "{{ api_key }}"}')
    expect(page.locator("#e-apiHeadersTemplate")).to_be_hidden()
    page.get_by_label("Schema map").fill(
        json.dumps({"refId": "sku", "dimensions_x": "l", "dimensions_y": "w", "dimensions_z": "h"})
    )
    page.get_by_role("button", name="Create connection").click()
    secret = page.locator("#api-secret").inner_text().strip()
    assert len(secret) >= 20
    # The URLs are shown whole, ready to paste into another system (they were paths).
    webhook = page.locator("#webhook-url").inner_text().strip()
    rest = page.locator("#rest-url").inner_text().strip()
    assert re.fullmatch(re.escape(service.base_url) + r"/sync-api/[^/]+/webhook", webhook)
    assert rest == webhook.removesuffix("/webhook") + "/rest"
    # A REST write with the secret to the URL as shown lands in a resource and in the log.
    reply = httpx.post(
        rest,
        json={
            "payload": [
                {"sku": "A-1", "l": 3, "w": 2, "h": 1},
                {"sku": "A-2", "l": 4, "w": 4, "h": 4},
            ]
        },
        headers={"X-Service-API-Secret": secret},
    )
    assert reply.status_code == 200 and reply.json()["status"] == "success", reply.text
    page.get_by_role("navigation", name="Console").get_by_role("link", name="Connections").click()
    page.get_by_role("link", name="Warehouse items").click()
    expect(page.locator("#api-secret")).to_have_count(0)
    expect(page.get_by_text(secret)).to_have_count(0)
    log = page.locator("#connection-log")
    expect(log).to_contain_text("rest POST")
    log.get_by_role("link").first.click()
    expect(page.locator("#resource-rows")).to_contain_text("A-2")
    expect(page.get_by_role("link", name="Download CSV")).to_be_visible()


def test_trigger_webhook_pulls_from_the_third_party_and_logs_it(
    page: Page, service: Service, third_party: ThirdPartyServer
) -> None:
    plan = sign_in(page, service, "E2E-PULL")
    service.store.set_connections_enabled("E2E-PULL", True)
    page.goto(f"{service.base_url}/plans/{plan}/console/connections/new")
    page.get_by_role("textbox", name="Name", exact=True).fill("WMS pull")
    page.get_by_label("Third-party API URL").fill(third_party.url("/records?n=25&root=data.items"))
    page.get_by_label("Third-party API key").fill(API_KEY)
    page.get_by_label("Third-party API token").fill(API_TOKEN)
    page.get_by_label("API headers template").fill(HEADERS_TEMPLATE)
    page.get_by_label("Schema root path").fill("data.items")
    page.get_by_label("Schema map").fill(json.dumps({**SCHEMA_MAP, "name": "description"}))
    page.get_by_role("button", name="Create connection").click()
    expect(page.locator("#api-secret")).to_be_visible()
    # The click waits for the answer, which waits at most the webhook wait (20 s) for the
    # pull, then says it still runs and the page follows it. A worker's first pull runs in
    # a new interpreter (2.3-4.8 s on a quieter machine, up to 18 s at a load of 8 on 2
    # cores; later ones fork from a preloaded server: 1.1-1.7 s, 2-4.6 s), past the 15 s
    # default.
    page.get_by_role("button", name="Trigger Webhook").click(timeout=PULL_MS)
    expect(page.get_by_role("status").first).to_contain_text("25 received", timeout=PULL_MS)
    log = page.locator("#connection-log")
    expect(log).to_contain_text("webhook")
    expect(log).to_contain_text("success")
    # The entry links its Dagster run's page, a run of the named pull job.
    run_link = log.locator("a.run").first
    href = run_link.get_attribute("href") or ""
    assert href.startswith(DAGSTER_UI_URL + "/runs/"), href
    run_id = href.rsplit("/", 1)[1]
    expect(run_link).to_have_text(run_id[:8])
    with DagsterInstance.from_config(str(service.dagster_home)) as instance:
        run = instance.get_run_by_id(run_id)
    assert run is not None and run.job_name == "pull_connection"
    log.get_by_role("link", name=re.compile(r"^\d+$")).first.click()
    expect(page.locator("#resource-rows")).to_contain_text("SKU-000024")
    # The source saw the credentials rendered into the template.
    assert any(r.headers.get("X-Api-Key") == API_KEY for r in third_party.seen)


def test_forms_redirect_so_a_reload_shows_the_editor_and_resubmits_nothing(
    page: Page, service: Service, third_party: ThirdPartyServer
) -> None:
    # Create, regenerate and trigger answered on their POST URL: a reload posted again
    # (another connection, another secret, another pull). They redirect (303) now, and the
    # editor shows their outcome once.
    plan = sign_in(page, service, "E2E-PRG")
    service.store.set_connections_enabled("E2E-PRG", True)
    account = service.store.account_by_id(service.store.list_keys("E2E-PRG")[0].account_id)
    assert account is not None
    page.goto(f"{service.base_url}/plans/{plan}/console/connections/new")
    page.get_by_role("textbox", name="Name", exact=True).fill("PRG pull")
    page.get_by_label("Third-party API URL").fill(third_party.url("/records?n=3&root=data.items"))
    page.get_by_label("Third-party API key").fill(API_KEY)
    page.get_by_label("Third-party API token").fill(API_TOKEN)
    page.get_by_label("API headers template").fill(HEADERS_TEMPLATE)
    page.get_by_label("Schema root path").fill("data.items")
    page.get_by_label("Schema map").fill(json.dumps(SCHEMA_MAP))
    page.get_by_role("button", name="Create connection").click()
    expect(page).to_have_url(re.compile(rf"/plans/{plan}/console/connections/\d+$"))
    editor = page.url
    first_secret = page.locator("#api-secret").inner_text().strip()
    assert first_secret not in editor
    page.reload()
    expect(page.get_by_role("heading", name="Connection: PRG pull")).to_be_visible()
    expect(page.locator("#api-secret")).to_have_count(0)
    assert len(list_connections(service.store, account.id)) == 1

    page.get_by_role("link", name="Regenerate Credentials").click()
    page.get_by_role("button", name="Regenerate credentials").click()
    expect(page).to_have_url(editor)
    secret = page.locator("#api-secret").inner_text().strip()
    assert secret != first_secret
    page.reload()
    expect(page.locator("#api-secret")).to_have_count(0)
    # The reload regenerated nothing: the secret shown still works.
    rest = page.locator("#rest-url").inner_text().strip()
    reply = httpx.post(
        rest, json={"payload": []}, headers={"X-Service-API-Secret": secret}, timeout=30
    )
    assert reply.status_code == 200, reply.text

    page.get_by_role("button", name="Trigger Webhook").click(timeout=PULL_MS)
    expect(page.get_by_role("status").first).to_contain_text("3 received", timeout=PULL_MS)
    expect(page).to_have_url(editor)
    page.reload()
    expect(page.get_by_text("3 received")).to_have_count(0)
    connection = list_connections(service.store, account.id)[0]
    triggers = [e.trigger for e in read_log(service.store, connection.id, limit=20, offset=0)]
    assert triggers.count("webhook") == 1, triggers
