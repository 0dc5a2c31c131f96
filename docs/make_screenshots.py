"""Screenshots of every console page for docs/console.md (`make screenshots`).

Starts the service under gunicorn on a scratch data directory, fills it with a demo account
(a connection, its items, cartons and an order) and drives Debian's Chromium through the
pages, saving one PNG per page to docs/images/console-*.png.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import httpx
from cartonize.serve import api_on_loopback
from cartonize.store import Store
from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "images"
CHROMIUM = os.environ.get("CARTONIZE_CHROMIUM", "/usr/bin/chromium")


def _shot(page: Page, name: str) -> None:
    path = OUT / f"console-{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"wrote {path.relative_to(ROOT)}")


def _write(base: str, public_id: str, secret: str, payload: list[dict[str, object]]) -> None:
    reply = httpx.post(
        f"{base}/sync-api/{public_id}/rest",
        json={"payload": payload},
        headers={"X-Service-API-Secret": secret},
        timeout=30,
    )
    reply.raise_for_status()


def main() -> None:
    """Make the screenshots."""
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        data_dir = Path(scratch) / "data"
        store = Store(data_dir)
        store.migrate()
        account = store.create_account("Acme Fulfilment", "premium")
        store.set_connections_enabled("Acme Fulfilment", True)
        key = store.create_key("Acme Fulfilment", "console")[1]
        log = Path(scratch) / "gunicorn.log"
        flush = {"CARTONIZE_PACK_FLUSH_SECONDS": "0"}
        with api_on_loopback(data_dir, log, env=flush) as base:
            auth = {"Authorization": f"apikey {key}"}
            plan = f"{base}/plans/{account.plan_id}"
            feeds = {
                "items": {
                    "refId": "sku",
                    "name": "title",
                    "dimensions_x": "l",
                    "dimensions_y": "w",
                    "dimensions_z": "h",
                    "weight": "kg",
                },
                "cartons": {
                    "refId": "code",
                    "name": "title",
                    "dimensions_x": "l",
                    "dimensions_y": "w",
                    "dimensions_z": "h",
                    "weightMax": "max",
                    "price": "cents",
                },
                "orders": {"orderId": "order", "refId": "sku", "quantity": "qty"},
            }
            made = {}
            for rtype, schema_map in feeds.items():
                reply = httpx.post(
                    f"{plan}/connections",
                    headers=auth,
                    timeout=30,
                    json={
                        "name": f"ERP {rtype}",
                        "resourceType": rtype,
                        "schemaMap": schema_map,
                        "thirdPartyApiUrl": f"https://erp.example.com/api/{rtype}",
                        "apiHeadersTemplate": {"Authorization": "Bearer {{ api_token }}"},
                        "schemaRootPath": "data",
                        "syncFrequency": "Daily",
                        "startAt": "2026-11-22T06:00:00",
                        "timeZone": "Europe/Berlin",
                    },
                )
                reply.raise_for_status()
                made[rtype] = reply.json()
            items = [
                {"sku": "MUG-01", "title": "Mug", "l": 4, "w": 4, "h": 5, "kg": 0.4},
                {"sku": "BOOK-02", "title": "Book", "l": 9, "w": 6, "h": 1.5, "kg": 0.7},
                {"sku": "LAMP-03", "title": "Desk lamp", "l": 12, "w": 6, "h": 6, "kg": 1.2},
            ]
            cartons = [
                {"code": "S", "title": "Small", "l": 10, "w": 8, "h": 6, "max": 20, "cents": 120},
                {
                    "code": "M",
                    "title": "Medium",
                    "l": 14,
                    "w": 12,
                    "h": 10,
                    "max": 30,
                    "cents": 180,
                },
            ]
            orders = [
                {"order": "SO-1001", "sku": "MUG-01", "qty": 4},
                {"order": "SO-1001", "sku": "BOOK-02", "qty": 2},
                {"order": "SO-1001", "sku": "LAMP-03", "qty": 1},
            ]
            for rtype, rows in (("items", items), ("cartons", cartons), ("orders", orders)):
                _write(base, made[rtype]["publicApiId"], made[rtype]["apiSecret"], rows)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=CHROMIUM, args=["--no-sandbox"]
                )
                page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
                page.goto(f"{base}/sign-in")
                _shot(page, "sign-in")
                page.get_by_label("Account API key").fill(key)
                page.get_by_role("button", name="Sign in").click()
                page.goto(f"{plan}/console/playground")
                page.get_by_role("button", name="Pack this order").click()
                page.wait_for_selector("#total-boxes")
                _shot(page, "playground")
                page.locator("#pack-link").click()
                _shot(page, "stored-pack")
                page.goto(f"{plan}/console/")
                _shot(page, "overview")
                page.goto(f"{plan}/console/connections")
                _shot(page, "connections")
                page.goto(f"{plan}/console/connections/new")
                page.get_by_role("textbox", name="Name", exact=True).fill("Shop items")
                page.get_by_label("API headers template").fill('{"X-Key": "{{ api_secret }}"}')
                _shot(page, "editor-validation")
                page.get_by_label("API headers template").fill('{"X-Key": "{{ api_key }}"}')
                page.get_by_label("Schema map").fill(json.dumps(feeds["items"]))
                page.get_by_role("button", name="Create connection").click()
                _shot(page, "editor-secret")
                page.goto(f"{plan}/console/connections/{made['items']['id']}")
                _shot(page, "editor-log")
                page.goto(f"{plan}/console/resources")
                _shot(page, "resources")
                page.get_by_role("link", name="ERP cartons").first.click()
                _shot(page, "resource-rows")
                browser.close()


if __name__ == "__main__":
    main()
