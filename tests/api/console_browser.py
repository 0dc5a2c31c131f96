"""A falcon test client that keeps cookies like a browser, for the console's page tests."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode, urlsplit

from cartonize.store import Store
from falcon import testing

from api.app import AppConfig, create_app


class Browser:
    """A test client that keeps cookies between requests, like a browser."""

    def __init__(self, store: Store, **config: Any) -> None:
        self.client = testing.TestClient(create_app(None, AppConfig(**config), store=store))
        self.cookies: dict[str, str] = {}

    def _headers(self) -> dict[str, str]:
        jar = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        return {"Cookie": jar} if jar else {}

    def _keep(self, result: testing.Result) -> testing.Result:
        for name, cookie in result.cookies.items():
            expired = cookie.expires is not None and cookie.expires.year < 2000
            if expired or cookie.max_age == 0 or cookie.value == "":
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = cookie.value
        return result

    def get(self, path: str, **params: str) -> testing.Result:
        return self._keep(self.client.simulate_get(path, params=params, headers=self._headers()))

    def post(self, path: str, form: dict[str, str]) -> testing.Result:
        headers = {"Content-Type": "application/x-www-form-urlencoded", **self._headers()}
        return self._keep(self.client.simulate_post(path, body=urlencode(form), headers=headers))

    def follow(self, result: testing.Result) -> testing.Result:
        """The page a 303 (Post/Redirect/Get) sends the browser to."""
        assert result.status_code == 303, (result.status_code, result.text[:300])
        target = urlsplit(result.headers["location"])
        return self._keep(
            self.client.simulate_get(
                target.path, query_string=target.query, headers=self._headers()
            )
        )

    def sign_in(self, key: str) -> testing.Result:
        page = self.get("/sign-in")
        token = hidden(page.text, "sign_in_token")
        return self.post("/sign-in", {"sign_in_token": token, "api_key": key, "next": ""})


def hidden(html: str, name: str) -> str:
    """The value of the hidden form field `name` (the first one on the page)."""
    match = re.search(rf'name="{name}" value="([^"]*)"', html)
    assert match, f"no hidden field {name}"
    return match.group(1)
