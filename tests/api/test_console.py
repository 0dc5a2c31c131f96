"""The console's pages through falcon's test client: sessions, CSRF, playground, stored packs.

The browser-level proof (real Chromium) is tests/console/test_console_e2e.py; these tests
pin the security rules, which a browser test would only show indirectly.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest
from cartonize.store import Store

from api.console.session import SESSION_COOKIE, SIGN_IN_COOKIE, SessionSigner
from tests.api.console_browser import Browser, hidden

REQUEST: dict[str, Any] = {
    "orderId": "PLAY-1",
    "itemSets": [{"refId": 1, "dimensions": {"x": 2, "y": 2, "z": 2}, "weight": 1, "quantity": 3}],
    "boxTypes": [
        {"refId": 7, "name": "cube", "dimensions": {"x": 4, "y": 4, "z": 4}, "weightMax": 10}
    ],
}


@pytest.fixture
def account(store: Store) -> tuple[str, str]:
    """A premium account's plan id and one of its keys."""
    acct = store.create_account("ACME", "premium")
    return acct.plan_id, store.create_key("ACME", "console")[1]


def test_pages_need_a_session_and_redirect_to_sign_in(
    store: Store, account: tuple[str, str]
) -> None:
    plan, _ = account
    result = Browser(store).get(f"/plans/{plan}/console/playground")
    assert result.status_code == 303
    assert result.headers["location"] == f"/sign-in?next=/plans/{plan}/console/playground"


def test_sign_in_sets_a_hardened_session_cookie_and_lands_on_the_overview(
    store: Store, account: tuple[str, str]
) -> None:
    plan, key = account
    browser = Browser(store)
    result = browser.sign_in(key)
    assert result.status_code == 303
    assert result.headers["location"] == f"/plans/{plan}/console/"
    session = result.cookies[SESSION_COOKIE]
    assert session.http_only and session.same_site == "Lax"
    assert key not in session.value  # the cookie names the key's stem, never the key
    overview = browser.get(f"/plans/{plan}/console/")
    assert overview.status_code == 200
    assert "ACME" in overview.text and "text/html" in overview.headers["content-type"]


def test_secure_cookies_when_configured(store: Store, account: tuple[str, str]) -> None:
    _, key = account
    result = Browser(store, secure_cookies=True).sign_in(key)
    assert result.cookies[SESSION_COOKIE].secure


def test_a_wrong_key_is_refused_with_a_message(store: Store, account: tuple[str, str]) -> None:
    result = Browser(store).sign_in("not-a-key")
    assert result.status_code == 401
    assert "unknown or revoked" in result.text
    assert SESSION_COOKIE not in result.cookies


def test_sign_in_without_its_double_submit_token_is_refused(
    store: Store, account: tuple[str, str]
) -> None:
    _, key = account
    browser = Browser(store)
    browser.get("/sign-in")
    result = browser.post("/sign-in", {"sign_in_token": "forged", "api_key": key})
    assert result.status_code == 403
    assert SESSION_COOKIE not in browser.cookies


def test_a_forged_or_tampered_session_cookie_is_no_session(
    store: Store, account: tuple[str, str]
) -> None:
    plan, key = account
    browser = Browser(store)
    browser.sign_in(key)
    payload, mac = browser.cookies[SESSION_COOKIE].split(".")
    browser.cookies[SESSION_COOKIE] = payload + "." + mac[::-1]
    assert browser.get(f"/plans/{plan}/console/").status_code == 303
    other = SessionSigner(b"k" * 32)
    _, forged = other.issue(key_stem="x", account_id=1, account_name="ACME", plan_id=plan, now=0)
    browser.cookies[SESSION_COOKIE] = forged
    assert browser.get(f"/plans/{plan}/console/").status_code == 303


def test_revoking_the_key_ends_its_sessions(store: Store, account: tuple[str, str]) -> None:
    plan, key = account
    browser = Browser(store)
    browser.sign_in(key)
    assert browser.get(f"/plans/{plan}/console/").status_code == 200
    store.revoke_key(key[:10])
    assert browser.get(f"/plans/{plan}/console/").status_code == 303


def test_another_plans_pages_are_not_found(store: Store, account: tuple[str, str]) -> None:
    _, key = account
    other = store.create_account("OTHER", "premium")
    browser = Browser(store)
    browser.sign_in(key)
    result = browser.get(f"/plans/{other.plan_id}/console/")
    assert result.status_code == 404
    assert "text/html" in result.headers["content-type"]


def test_posts_without_the_csrf_token_are_refused(store: Store, account: tuple[str, str]) -> None:
    plan, key = account
    browser = Browser(store)
    browser.sign_in(key)
    result = browser.post(
        f"/plans/{plan}/console/playground", {"request": json.dumps(REQUEST), "csrf_token": "x"}
    )
    assert result.status_code == 403
    assert store.find_packs(1, order_id="PLAY-1", request_id=None, limit=5, offset=0) == []


def test_playground_packs_stores_and_shows_pictures(store: Store, account: tuple[str, str]) -> None:
    plan, key = account
    browser = Browser(store)
    browser.sign_in(key)
    page = browser.get(f"/plans/{plan}/console/playground")
    csrf = hidden(page.text, "csrf_token")
    posted = browser.post(
        f"/plans/{plan}/console/playground", {"request": json.dumps(REQUEST), "csrf_token": csrf}
    )
    assert posted.status_code == 303, posted.text
    assert posted.headers["location"] == f"/plans/{plan}/console/playground"
    result = browser.follow(posted)
    assert result.status_code == 200, result.text
    assert re.search(r'id="total-boxes">1<', result.text)
    assert re.search(r'id="total-units">3<', result.text)
    assert result.text.count('src="data:image/svg+xml;base64,') == 1
    uuid = re.search(r'id="pack-link" href="([^"]+)"', result.text)
    assert uuid
    stored = browser.get(uuid.group(1))
    assert stored.status_code == 200
    assert "PLAY-1" in stored.text and "data:image/svg+xml;base64," in stored.text
    # The pack is the account's, made under the session's key.
    packs = store.find_packs(1, order_id="PLAY-1", request_id=None, limit=5, offset=0)
    assert [p.key_stem for p in packs] == [key[:10]]


def test_a_png_pack_shows_its_pictures(store: Store, account: tuple[str, str]) -> None:
    # Only SVG pictures were shown: a pack asking for PNG showed none.
    plan, key = account
    browser = Browser(store)
    browser.sign_in(key)
    csrf = hidden(browser.get(f"/plans/{plan}/console/playground").text, "csrf_token")
    png = {**REQUEST, "imageFormat": "png"}
    result = browser.follow(
        browser.post(
            f"/plans/{plan}/console/playground", {"request": json.dumps(png), "csrf_token": csrf}
        )
    )
    assert result.status_code == 200, result.text
    assert result.text.count('src="data:image/png;base64,') == 1
    assert "data:image/svg+xml" not in result.text


def editor_text(page: str) -> str:
    """What the playground's request editor holds."""
    found = re.search(r'<textarea id="request"[^>]*>(.*?)</textarea>', page, re.S)
    assert found, page[:300]
    return html.unescape(found.group(1))


def test_the_playground_redirects_after_packing_and_a_reload_packs_nothing(
    store: Store, account: tuple[str, str]
) -> None:
    # The playground answered its POST with the result: a reload (or the back button)
    # sent the form again and packed again, a second stored pack and another request
    # against the key's rate limit. It redirects now (303) to the editor, which shows the
    # request as typed and its result; they wait on the server, not in a cookie.
    plan, key = account
    browser = Browser(store)
    browser.sign_in(key)
    csrf = hidden(browser.get(f"/plans/{plan}/console/playground").text, "csrf_token")
    # 40 boxes of pictures: a result of hundreds of kilobytes, far past a cookie's 4 KB.
    big = {**REQUEST, "itemSets": [{**REQUEST["itemSets"][0], "quantity": 320}]}
    typed = json.dumps(big, indent=3)
    posted = browser.post(
        f"/plans/{plan}/console/playground", {"request": typed, "csrf_token": csrf}
    )
    assert posted.status_code == 303, posted.text
    assert all(len(c.value) < 1000 for c in posted.cookies.values())
    # They wait in the session's file, encrypted: neither the request nor the result in clear.
    (kept,) = (store.data_dir / "console-playground").iterdir()
    assert kept.stat().st_size > 100_000
    assert b"PLAY-1" not in kept.read_bytes() and b"lenBoxes" not in kept.read_bytes()
    shown = browser.follow(posted)
    assert shown.status_code == 200
    assert len(shown.text) > 100_000
    assert re.search(r'id="total-boxes">40<', shown.text)
    assert editor_text(shown.text) == typed
    assert len(store.find_packs(1, order_id="PLAY-1", request_id=None, limit=5, offset=0)) == 1


def test_the_playground_shows_the_last_pack_on_every_reload_until_packing_or_starting_over(
    store: Store, account: tuple[str, str]
) -> None:
    # The result showed once: a second reload showed the sample request, and the user's
    # request and answer were gone. Now the session's last pack shows on every reload.
    plan, key = account
    url = f"/plans/{plan}/console/playground"
    browser = Browser(store)
    browser.sign_in(key)
    csrf = hidden(browser.get(url).text, "csrf_token")
    sample = editor_text(browser.get(url).text)
    first = json.dumps(REQUEST, indent=1)
    browser.follow(browser.post(url, {"request": first, "csrf_token": csrf}))
    for _ in range(3):
        reloaded = browser.get(url)
        assert editor_text(reloaded.text) == first
        assert re.search(r'id="total-units">3<', reloaded.text)
    # Another browser (another session) of the same key sees its own sample.
    other = Browser(store)
    other.sign_in(key)
    assert editor_text(other.get(url).text) == sample
    # A refused request shows its problem and keeps the last pack for the next reload.
    refused = browser.post(url, {"request": "{", "csrf_token": csrf})
    assert refused.status_code == 400
    assert editor_text(browser.get(url).text) == first
    # Packing again replaces it: one file per session.
    second = json.dumps({**REQUEST, "orderId": "PLAY-2"}, indent=2)
    browser.follow(browser.post(url, {"request": second, "csrf_token": csrf}))
    assert editor_text(browser.get(url).text) == second
    assert len(list((store.data_dir / "console-playground").iterdir())) == 1
    assert len(store.find_packs(1, order_id="PLAY-1", request_id=None, limit=5, offset=0)) == 1
    # Start over: the sample again, on this and every later reload; the file is gone.
    started = browser.post(url, {"action": "start-over", "csrf_token": csrf})
    assert started.status_code == 303 and started.headers["location"] == url
    assert editor_text(browser.follow(started).text) == sample
    assert 'id="total-units"' not in browser.get(url).text
    assert list((store.data_dir / "console-playground").iterdir()) == []
    # Signing out forgets it too.
    browser.follow(browser.post(url, {"request": first, "csrf_token": csrf}))
    assert len(list((store.data_dir / "console-playground").iterdir())) == 1
    assert browser.post("/sign-out", {"csrf_token": csrf}).status_code == 303
    assert list((store.data_dir / "console-playground").iterdir()) == []


def test_playground_shows_a_bad_request_with_its_details_and_keeps_the_text(
    store: Store, account: tuple[str, str]
) -> None:
    plan, key = account
    browser = Browser(store)
    browser.sign_in(key)
    csrf = hidden(browser.get(f"/plans/{plan}/console/playground").text, "csrf_token")
    bad = json.dumps({"itemSets": [{"refId": 1, "dimensions": {"x": -1, "y": 1, "z": 1}}]})
    result = browser.post(f"/plans/{plan}/console/playground", {"request": bad, "csrf_token": csrf})
    assert result.status_code == 422
    assert 'role="alert"' in result.text and "itemSets" in result.text
    assert "&#34;x&#34;: -1" in result.text or "&quot;x&quot;: -1" in result.text


def test_sign_out_clears_the_session(store: Store, account: tuple[str, str]) -> None:
    plan, key = account
    browser = Browser(store)
    browser.sign_in(key)
    csrf = hidden(browser.get(f"/plans/{plan}/console/").text, "csrf_token")
    result = browser.post("/sign-out", {"csrf_token": csrf})
    assert result.status_code == 303 and result.headers["location"] == "/sign-in"
    assert SESSION_COOKIE not in browser.cookies
    assert browser.get(f"/plans/{plan}/console/").status_code == 303


def test_next_never_leaves_the_site(store: Store, account: tuple[str, str]) -> None:
    _, key = account
    browser = Browser(store)
    page = browser.get("/sign-in", next="//evil.example/")
    assert 'name="next" value=""' in page.text
    token = browser.cookies[SIGN_IN_COOKIE]
    result = browser.post(
        "/sign-in", {"sign_in_token": token, "api_key": key, "next": "https://evil.example/"}
    )
    assert result.headers["location"].startswith("/plans/")


def test_form_bodies_are_bounded_before_they_are_parsed(
    store: Store, account: tuple[str, str]
) -> None:
    # Falcon's form handler read /sign-in's body whole, whatever its size, without a key:
    # 200 MB raised a worker's memory by 800 MB. Every console form now reads at most
    # 1 MiB (the playground: its request's limit, percent-encoded) and answers 413 past it.
    plan, key = account
    browser = Browser(store, max_body_bytes=1000)
    huge = {"sign_in_token": "x", "api_key": "a" * (1 << 20)}
    refused = browser.post("/sign-in", huge)
    assert (refused.status_code, "text/html" in refused.headers["content-type"]) == (413, True)
    assert "1,048,576 bytes" in refused.text
    store.set_connections_enabled("ACME", True)
    browser.sign_in(key)
    csrf = hidden(browser.get(f"/plans/{plan}/console/").text, "csrf_token")
    form = {"csrf_token": csrf, "name": "n" * (3 * 1000 + (1 << 20))}
    for path in ("/plans/{plan}/console/connections/new", "/plans/{plan}/console/playground"):
        assert browser.post(path.format(plan=plan), form).status_code == 413
    assert browser.post("/sign-out", form).status_code == 413
    # Within its limit the playground still takes a request three times its size encoded.
    request = json.dumps({**REQUEST, "orderId": '"' * 300})
    playground = {"request": request, "csrf_token": csrf}
    assert browser.post(f"/plans/{plan}/console/playground", playground).status_code == 303


def test_the_playground_goes_through_the_pack_endpoints_checks(
    store: Store, account: tuple[str, str]
) -> None:
    # The playground packed and stored what POST / refuses: 14,400 units past the item
    # limit, packs past CARTONIZE_KEY_RATE_LIMIT. It now packs through POST /'s checks.
    plan, key = account
    browser = Browser(store, max_items=5, key_rate_limit=1, max_body_bytes=2000)
    browser.sign_in(key)
    csrf = hidden(browser.get(f"/plans/{plan}/console/playground").text, "csrf_token")

    def play(request: dict[str, Any]) -> Any:
        form = {"request": json.dumps(request), "csrf_token": csrf}
        return browser.post(f"/plans/{plan}/console/playground", form)

    many = {**REQUEST, "itemSets": [{**REQUEST["itemSets"][0], "quantity": 6}]}
    too_many = play(many)
    assert too_many.status_code == 422 and "exceed the limit of 5 items" in too_many.text
    too_long = play({**REQUEST, "requestId": "r" * 2000})
    assert too_long.status_code == 413 and "2000 bytes" in too_long.text
    assert play(REQUEST).status_code == 303
    limited = play(REQUEST)
    assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
    packs = store.find_packs(1, order_id="PLAY-1", request_id=None, limit=5, offset=0)
    assert len(packs) == 1
