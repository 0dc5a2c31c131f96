"""The service mounted under a path prefix (gunicorn's SCRIPT_NAME, as behind a proxy that
forwards `/cartonize/...`), in a real headless Chromium: every link, form, redirect and
cookie of the landing page and the console stays under the prefix."""

from __future__ import annotations

import json
import re
from urllib.parse import urlsplit

import httpx
from playwright.sync_api import Page, Request, expect

from tests.console.conftest import DAGSTER_UI_URL, PULL_MS, ROOT_PATH, Service
from tests.console.test_console_e2e import ORDER
from tests.sync.third_party import (
    API_KEY,
    API_TOKEN,
    HEADERS_TEMPLATE,
    SCHEMA_MAP,
    ThirdPartyServer,
)


def outside_the_prefix(page: Page) -> list[str]:
    """Collects every request the page makes to the service outside ROOT_PATH."""
    stray: list[str] = []

    def seen(request: Request) -> None:
        url = urlsplit(request.url)
        inside = url.path == ROOT_PATH or url.path.startswith(ROOT_PATH + "/")
        if url.hostname == "127.0.0.1" and not inside:
            stray.append(request.url)

    page.on("request", seen)
    return stray


def test_the_landing_page_links_under_the_prefix(page: Page, prefixed_service: Service) -> None:
    # GET / linked /sign-in and /docs from the site's root: behind a proxy mounting the
    # service at /cartonize they led to the proxy's own pages (here gunicorn's 400).
    stray = outside_the_prefix(page)
    page.goto(prefixed_service.base_url)
    expect(page.get_by_role("heading", name="cartonize")).to_be_visible()
    page.get_by_role("link", name="Sign in to the console").click()
    expect(page).to_have_url(f"{prefixed_service.base_url}/sign-in")
    expect(page.get_by_label("Account API key")).to_be_visible()
    page.go_back()
    page.get_by_role("link", name="API documentation").click()
    expect(page).to_have_url(f"{prefixed_service.base_url}/docs")
    page.get_by_role("link", name="/openapi.json").first.click()
    expect(page).to_have_url(f"{prefixed_service.base_url}/openapi.json")
    page.go_back()
    page.go_back()
    page.get_by_role("link", name="/openapi.json").click()
    expect(page).to_have_url(f"{prefixed_service.base_url}/openapi.json")
    assert stray == []


def test_the_console_keeps_to_the_prefix(
    page: Page, prefixed_service: Service, third_party: ThirdPartyServer
) -> None:
    base = prefixed_service.base_url
    store = prefixed_service.store
    plan = store.create_account("PREFIX", "premium").plan_id
    key = store.create_key("PREFIX", "browser")[1]
    store.set_connections_enabled("PREFIX", True)
    stray = outside_the_prefix(page)
    # A page needing a session sends to sign-in and, signed in, back to itself.
    page.goto(f"{base}/plans/{plan}/console/resources")
    expect(page).to_have_url(re.compile(rf"^{re.escape(base)}/sign-in\?next="))
    page.get_by_label("Account API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(f"{base}/plans/{plan}/console/resources")
    # The stylesheet loaded: the skip link is off screen, not the page's first line.
    skip = page.get_by_role("link", name="Skip to content")
    assert (skip.bounding_box() or {"x": 0})["x"] < 0
    nav = page.get_by_role("navigation", name="Console")
    nav.get_by_role("link", name="Pack playground").click()
    expect(page).to_have_url(f"{base}/plans/{plan}/console/playground")
    page.get_by_label(re.compile("Pack request")).fill(json.dumps(ORDER))
    page.get_by_role("button", name="Pack").click()
    expect(page.locator("#total-units")).to_have_text("5")
    page.locator("#pack-link").click()
    expect(page).to_have_url(re.compile(rf"^{re.escape(base)}/plans/{plan}/console/packs/"))
    nav.get_by_role("link", name="Connections").click()
    page.get_by_role("link", name="New connection").click()
    page.get_by_role("textbox", name="Name", exact=True).fill("Slow pull")
    page.get_by_label("Third-party API URL").fill(
        third_party.url("/slow?delay=3&n=4&root=data.items")
    )
    page.get_by_label("Third-party API key").fill(API_KEY)
    page.get_by_label("Third-party API token").fill(API_TOKEN)
    page.get_by_label("API headers template").fill(HEADERS_TEMPLATE)
    page.get_by_label("Schema root path").fill("data.items")
    page.get_by_label("Schema map").fill(json.dumps(SCHEMA_MAP))
    page.get_by_role("button", name="Create connection").click()
    # The new secret shows once: the flash cookie reached the page under the prefix.
    expect(page.locator("#api-secret")).to_be_visible()
    editor = page.url
    assert editor.startswith(f"{base}/plans/{plan}/console/connections/")
    webhook = page.locator("#webhook-url").inner_text().strip()
    assert webhook.startswith(f"{base}/sync-api/")
    page.get_by_role("button", name="Trigger Webhook").click()
    expect(page.locator("#run-running")).to_contain_text("is still running")
    # The page follows the run (its status URL under the prefix) and reloads when done.
    expect(page.locator("#connection-log")).to_contain_text("success", timeout=PULL_MS)
    expect(page).to_have_url(editor)
    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(f"{base}/sign-in")
    page.goto(f"{base}/plans/{plan}/console/")
    expect(page).to_have_url(re.compile(rf"^{re.escape(base)}/sign-in\?next="))
    assert stray == []


def test_the_still_running_notice_links_the_run_to_dagster(
    page: Page, prefixed_service: Service, third_party: ThirdPartyServer
) -> None:
    # A pull longer than the webhook wait showed "Pull <run id> is still running" with the
    # id unlinked, while the connection log links each run to its page in Dagster's UI.
    base = prefixed_service.base_url
    store = prefixed_service.store
    plan = store.create_account("PREFIX-RUN", "premium").plan_id
    key = store.create_key("PREFIX-RUN", "browser")[1]
    store.set_connections_enabled("PREFIX-RUN", True)
    page.goto(f"{base}/sign-in")
    page.get_by_label("Account API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    page.goto(f"{base}/plans/{plan}/console/connections/new")
    page.get_by_role("textbox", name="Name", exact=True).fill("Slow pull")
    page.get_by_label("Third-party API URL").fill(
        third_party.url("/slow?delay=4&n=2&root=data.items")
    )
    page.get_by_label("Third-party API key").fill(API_KEY)
    page.get_by_label("Third-party API token").fill(API_TOKEN)
    page.get_by_label("API headers template").fill(HEADERS_TEMPLATE)
    page.get_by_label("Schema root path").fill("data.items")
    page.get_by_label("Schema map").fill(json.dumps(SCHEMA_MAP))
    page.get_by_role("button", name="Create connection").click()
    page.get_by_role("button", name="Trigger Webhook").click()
    notice = page.get_by_role("status").filter(has_text="is still running")
    expect(notice).to_be_visible()
    link = notice.get_by_role("link")
    href = link.get_attribute("href") or ""
    assert href.startswith(DAGSTER_UI_URL + "/runs/"), href
    run_id = href.rsplit("/", 1)[1]
    expect(link).to_have_text(run_id)
    # The same run the log links once the pull is done.
    log = page.locator("#connection-log")
    expect(log).to_contain_text("success", timeout=PULL_MS)
    expect(log.locator("a.run").first).to_have_attribute("href", href)
    assert httpx.get(base + "/healthz").status_code == 200
