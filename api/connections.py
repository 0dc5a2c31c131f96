"""Connection management: `/plans/{plan_id}/connections[/{id}[/credentials|/log]]`.

Authenticated by an API key of the plan's account (`Authorization: apikey KEY`); another
plan's id answers 404. Connections exist only for premium and enterprise accounts whose
connections an operator enabled (`cartonize accounts enable-connections NAME`): others get
403. The API secret is in the body only of the answers to create and to credential
regeneration; third-party credentials are never returned, only whether they are set.
"""

from __future__ import annotations

import json
from typing import Any

import falcon
from cartonize.errors import Forbidden, InvalidRequest, NotFound
from cartonize.service import KeyRing
from cartonize.store import Account, Clock, Store
from cartonize.sync.connections import (
    Connection,
    LogEntry,
    connections_refusal,
    create_connection,
    delete_connection,
    get_connection,
    list_connections,
    parse_fields,
    read_log,
    regenerate_secret,
    update_connection,
)
from cartonize.sync.crypto import SecretBox

from api.library import require_key
from api.resources import int_param, json_body

__all__ = [
    "ConnectionCredentialsResource",
    "ConnectionItemResource",
    "ConnectionListResource",
    "ConnectionLogResource",
    "PlanAccess",
    "connection_wire",
]


class PlanAccess:
    """Checks that a request may manage the connections of a plan."""

    def __init__(self, store: Store, keys: KeyRing) -> None:
        self.store = store
        self._keys = keys

    def account(self, req: falcon.Request, plan_id: str) -> Account:
        """The plan's account when the caller's key belongs to it and connections are on."""
        key = require_key(req, self._keys)
        account = self.store.account_by_id(key.account_id)
        if account is None or account.plan_id != plan_id:
            raise NotFound(details="no such plan for this API key")
        refusal = connections_refusal(self.store, account)
        if refusal is not None:
            raise Forbidden(details=refusal)
        return account


def connection_wire(
    connection: Connection, secret: str | None = None, origin: str = ""
) -> dict[str, Any]:
    """A connection on the wire: every §G field, credentials only as `...Set` flags; its
    webhook and REST URLs absolute under `origin` (the service's scheme and host as the
    request reached it), since they are copied into third-party systems."""
    base = f"{origin}/sync-api/{connection.public_api_id}"
    body: dict[str, Any] = {
        "id": connection.id,
        "name": connection.name,
        "resourceType": connection.resource_type,
        "newResourceBaseName": connection.base_name,
        "resourceToUpdate": connection.resource_to_update,
        "thirdPartyApiUrl": connection.url,
        "thirdPartyApiKeySet": connection.api_key_encrypted is not None,
        "thirdPartyApiTokenSet": connection.api_token_encrypted is not None,
        "apiHeadersTemplate": connection.headers_template,
        "schemaRootPath": connection.schema_root_path,
        "schemaMap": connection.schema_map,
        "startAt": connection.start_at.isoformat() if connection.start_at else None,
        "timeZone": connection.time_zone,
        "syncFrequency": connection.frequency,
        "dimConv": connection.dim_conv,
        "weightConv": connection.weight_conv,
        "publicApiId": connection.public_api_id,
        "apiSecretStem": connection.secret_stem,
        "webhookUrl": f"{base}/webhook",
        "restUrl": f"{base}/rest",
        "createdAt": connection.created_at.isoformat(),
        "updatedAt": connection.updated_at.isoformat(),
    }
    if secret is not None:
        body["apiSecret"] = secret
    return body


def log_wire(entry: LogEntry) -> dict[str, Any]:
    """A connection log entry on the wire."""
    return {
        "at": entry.at.isoformat(),
        "trigger": entry.trigger,
        "status": entry.status,
        "resourceId": entry.resource_id,
        "received": entry.received,
        "inserted": entry.inserted,
        "updated": entry.updated,
        "unchanged": entry.unchanged,
        "rejected": entry.rejected,
        "messages": entry.messages,
        "durationS": entry.duration_s,
        "runId": entry.run_id,
    }


def _send(resp: falcon.Response, body: object, status: int = 200) -> None:
    resp.status = status
    resp.content_type = falcon.MEDIA_JSON
    resp.text = json.dumps(body)


class ConnectionListResource:
    """`GET|POST /plans/{plan_id}/connections`."""

    def __init__(self, access: PlanAccess, box: SecretBox, clock: Clock) -> None:
        self._access = access
        self._box = box
        self._clock = clock

    def on_get(self, req: falcon.Request, resp: falcon.Response, plan_id: str) -> None:
        """The plan's connections."""
        account = self._access.account(req, plan_id)
        found = list_connections(self._access.store, account.id)
        _send(resp, {"connections": [connection_wire(c, origin=req.prefix) for c in found]})

    def on_post(self, req: falcon.Request, resp: falcon.Response, plan_id: str) -> None:
        """Create a connection; the answer carries its API secret, shown this once."""
        account = self._access.account(req, plan_id)
        fields = parse_fields(json_body(req))
        connection, secret = create_connection(
            self._access.store, self._box, account.id, fields, self._clock()
        )
        _send(resp, connection_wire(connection, secret, req.prefix), status=201)


class ConnectionItemResource:
    """`GET|PATCH|DELETE /plans/{plan_id}/connections/{connection_id}`."""

    def __init__(self, access: PlanAccess, box: SecretBox, clock: Clock) -> None:
        self._access = access
        self._box = box
        self._clock = clock

    def _get(self, req: falcon.Request, plan_id: str, connection_id: int) -> Connection:
        account = self._access.account(req, plan_id)
        found = get_connection(self._access.store, account.id, connection_id)
        if found is None:
            raise NotFound(details=f"no connection {connection_id} in this plan")
        return found

    def on_get(
        self, req: falcon.Request, resp: falcon.Response, plan_id: str, connection_id: int
    ) -> None:
        """One connection (no secret, no credentials)."""
        _send(resp, connection_wire(self._get(req, plan_id, connection_id), origin=req.prefix))

    def on_patch(
        self, req: falcon.Request, resp: falcon.Response, plan_id: str, connection_id: int
    ) -> None:
        """Change the given fields; `thirdPartyApiKey`/`Token` null clears them."""
        current = self._get(req, plan_id, connection_id)
        changes = json_body(req)
        if not isinstance(changes, dict):
            raise InvalidRequest(details="the body must be a JSON object of connection fields")
        updated = update_connection(
            self._access.store,
            self._box,
            current.account_id,
            connection_id,
            changes,
            self._clock(),
        )
        if updated is None:
            raise NotFound(details=f"no connection {connection_id} in this plan")
        _send(resp, connection_wire(updated, origin=req.prefix))

    def on_delete(
        self, req: falcon.Request, resp: falcon.Response, plan_id: str, connection_id: int
    ) -> None:
        """Delete the connection and its log; its resources stay in the library."""
        current = self._get(req, plan_id, connection_id)
        if not delete_connection(self._access.store, current.account_id, connection_id):
            raise NotFound(details=f"no connection {connection_id} in this plan")
        resp.status = 204


class ConnectionCredentialsResource:
    """`POST /plans/{plan_id}/connections/{connection_id}/credentials`: a new API secret."""

    def __init__(self, access: PlanAccess, box: SecretBox, clock: Clock) -> None:
        self._access = access
        self._box = box
        self._clock = clock

    def on_post(
        self, req: falcon.Request, resp: falcon.Response, plan_id: str, connection_id: int
    ) -> None:
        """Regenerate the API secret; the previous one stops working at once."""
        account = self._access.account(req, plan_id)
        done = regenerate_secret(
            self._access.store, self._box, account.id, connection_id, self._clock()
        )
        if done is None:
            raise NotFound(details=f"no connection {connection_id} in this plan")
        _send(resp, connection_wire(*done, origin=req.prefix))


class ConnectionLogResource:
    """`GET /plans/{plan_id}/connections/{connection_id}/log?limit=&offset=`: newest first."""

    def __init__(self, access: PlanAccess) -> None:
        self._access = access

    def on_get(
        self, req: falcon.Request, resp: falcon.Response, plan_id: str, connection_id: int
    ) -> None:
        """A page of the connection's log."""
        account = self._access.account(req, plan_id)
        if get_connection(self._access.store, account.id, connection_id) is None:
            raise NotFound(details=f"no connection {connection_id} in this plan")
        limit = int_param(req, "limit", 50, 1, 500)
        offset = int_param(req, "offset", 0, 0, None)
        entries = read_log(self._access.store, connection_id, limit=limit, offset=offset)
        _send(resp, {"log": [log_wire(e) for e in entries]})
