"""Shared set-up of the library and sync API tests: an app on a real store, a premium
account with connections enabled, its key, and helpers to create connections."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cartonize.store import Store
from falcon import testing

from api.app import AppConfig, create_app

ITEM_MAP = {
    "refId": "sku",
    "dimensions_x": "size.h",
    "dimensions_y": "size.w",
    "dimensions_z": "size.l",
    "weight": "mass",
    "name": "title",
    "properties.color": "look.colour",
}


def item(sku: Any, h: float = 1, w: float = 2, l: float = 3, mass: float = 1, **more: Any) -> Any:  # noqa: E741
    """A source record in the third party's naming."""
    return {"sku": sku, "size": {"h": h, "w": w, "l": l}, "mass": mass, **more}


@dataclass
class Plan:
    """An account ready to use connections: client, key header and plan id."""

    client: testing.TestClient
    store: Store
    plan_id: str
    key: str

    @property
    def auth(self) -> dict[str, str]:
        """The account's key header."""
        return {"Authorization": f"apikey {self.key}"}

    def create_connection(self, **fields: Any) -> dict[str, Any]:
        """Create a connection through the API; the body includes `apiSecret`."""
        body = {"name": "feed", "resourceType": "items", "schemaMap": ITEM_MAP, **fields}
        result = self.client.simulate_post(
            f"/plans/{self.plan_id}/connections", json=body, headers=self.auth
        )
        assert result.status_code == 201, result.text
        created: dict[str, Any] = result.json
        return created

    def write(
        self,
        method: str,
        connection: dict[str, Any],
        body: Any,
        *,
        params: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> testing.Result:
        """A sync REST write authenticated by the secret header."""
        return self.client.simulate_request(
            method,
            f"/sync-api/{connection['publicApiId']}/rest",
            json=body,
            params=params,
            headers={"X-Service-API-Secret": connection["apiSecret"], **(headers or {})},
        )

    def rows(self, resource_id: int) -> list[dict[str, Any]]:
        """Every row of a resource through the library API."""
        result = self.client.simulate_get(
            f"/resources/{resource_id}", params={"limit": "1000"}, headers=self.auth
        )
        assert result.status_code == 200, result.text
        rows: list[dict[str, Any]] = result.json["rows"]
        return rows

    def log(self, connection: dict[str, Any]) -> list[dict[str, Any]]:
        """The connection's log, newest first."""
        result = self.client.simulate_get(
            f"/plans/{self.plan_id}/connections/{connection['id']}/log", headers=self.auth
        )
        assert result.status_code == 200, result.text
        entries: list[dict[str, Any]] = result.json["log"]
        return entries


def make_plan(store: Store, name: str = "acme", tier: Any = "premium", enable: bool = True) -> Plan:
    """A client on `store` and an account of `tier` (connections enabled when `enable`)."""
    account = store.create_account(name, tier)
    if enable:
        store.set_connections_enabled(name, True)
    _, key = store.create_key(name, "test")
    client = testing.TestClient(create_app(config=AppConfig(), store=store))
    return Plan(client, store, account.plan_id, key)
