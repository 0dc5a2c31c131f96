"""The console in a real headless Chromium against the service under gunicorn."""

from __future__ import annotations

import json
import re

from playwright.sync_api import Page, expect

from tests.console.conftest import Service

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
    page.locator("#pack-link").click()
    expect(page).to_have_url(re.compile(rf"/plans/{plan}/console/packs/"))
    expect(page.get_by_text("E2E-1", exact=True)).to_be_visible()


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
