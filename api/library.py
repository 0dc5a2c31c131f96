"""The resource library over REST: list the account's resources, read one (paged JSON or
CSV), mark one as the account's default of its type, delete one. Every route needs an API
key (`Authorization: apikey KEY`) and sees only its account's resources."""

from __future__ import annotations

import json
from typing import Any

import falcon
from cartonize.errors import BadRequest, Conflict, InvalidRequest, NotFound, Unauthorized
from cartonize.service import KeyRing
from cartonize.store import ApiKey, Store
from cartonize.sync.resources import (
    RESOURCE_TYPES,
    Resource,
    ResourceInUse,
    delete_resource,
    get_resource,
    list_resources,
    read_rows,
    resource_type,
    rows_csv,
    set_default,
)

from api.resources import authenticate, int_param, json_body

__all__ = ["LibraryCsvResource", "LibraryItemResource", "LibraryListResource", "resource_wire"]

MAX_ROWS_PAGE = 1000


def require_key(req: falcon.Request, keys: KeyRing) -> ApiKey:
    """The caller's API key; 401 when there is none."""
    key = authenticate(req, keys, None)
    if key is None:
        raise Unauthorized(details="send the account's key as 'Authorization: apikey <KEY>'")
    return key


def resource_wire(resource: Resource) -> dict[str, Any]:
    """A resource's metadata on the wire."""
    return {
        "id": resource.id,
        "name": resource.name,
        "type": resource.type,
        "isDefault": resource.is_default,
        "rowCount": resource.row_count,
        "createdAt": resource.created_at.isoformat(),
        "updatedAt": resource.updated_at.isoformat(),
    }


def _send(resp: falcon.Response, body: object, status: int = 200) -> None:
    resp.status = status
    resp.content_type = falcon.MEDIA_JSON
    resp.text = json.dumps(body)


class LibraryListResource:
    """`GET /resources?type=`: the account's resources, newest first."""

    def __init__(self, store: Store, keys: KeyRing) -> None:
        self._store = store
        self._keys = keys

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """List resources, optionally of one type (items, cartons, orders)."""
        key = require_key(req, self._keys)
        raw = req.get_param("type")
        try:
            rtype = resource_type(raw) if raw else None
        except ValueError:
            raise BadRequest(details=f"type: must be one of {', '.join(RESOURCE_TYPES)}") from None
        found = list_resources(self._store, key.account_id, rtype)
        _send(resp, {"resources": [resource_wire(r) for r in found]})


class LibraryItemResource:
    """`GET|PATCH|DELETE /resources/{id}`: one resource with a page of its rows."""

    def __init__(self, store: Store, keys: KeyRing) -> None:
        self._store = store
        self._keys = keys

    def _find(self, req: falcon.Request, resource_id: int) -> tuple[ApiKey, Resource]:
        key = require_key(req, self._keys)
        found = get_resource(self._store, key.account_id, resource_id)
        if found is None:
            raise NotFound(details=f"no resource {resource_id} in this account")
        return key, found

    def on_get(self, req: falcon.Request, resp: falcon.Response, resource_id: int) -> None:
        """The resource and rows `offset` .. `offset + limit` (default 100, at most 1000)."""
        _, found = self._find(req, resource_id)
        limit = int_param(req, "limit", 100, 1, MAX_ROWS_PAGE)
        offset = int_param(req, "offset", 0, 0, None)
        rows = self._store.transaction(
            lambda con: read_rows(con, found.type, found.id, limit=limit, offset=offset)
        )
        body = resource_wire(found)
        body["rows"] = rows
        if offset + len(rows) < found.row_count:
            body["nextOffset"] = offset + len(rows)
        _send(resp, body)

    def on_patch(self, req: falcon.Request, resp: falcon.Response, resource_id: int) -> None:
        """`{"isDefault": true}` makes it the account's default of its type."""
        key, _ = self._find(req, resource_id)
        body = json_body(req)
        if not isinstance(body, dict) or body.get("isDefault") is not True or len(body) != 1:
            raise InvalidRequest(details='send {"isDefault": true} to make this the default')
        updated = set_default(self._store, key.account_id, resource_id)
        if updated is None:
            raise NotFound(details=f"no resource {resource_id} in this account")
        _send(resp, resource_wire(updated))

    def on_delete(self, req: falcon.Request, resp: falcon.Response, resource_id: int) -> None:
        """Delete the resource and its rows; 409 while a connection updates it."""
        key, _ = self._find(req, resource_id)
        try:
            deleted = delete_resource(self._store, key.account_id, resource_id)
        except ResourceInUse as exc:
            raise Conflict(details=str(exc)) from None
        if not deleted:
            raise NotFound(details=f"no resource {resource_id} in this account")
        resp.status = 204


class LibraryCsvResource:
    """`GET /resources/{id}/csv`: every row as CSV, one column per property."""

    def __init__(self, store: Store, keys: KeyRing) -> None:
        self._store = store
        self._keys = keys

    def on_get(self, req: falcon.Request, resp: falcon.Response, resource_id: int) -> None:
        """Download the rows; `properties` is a JSON text column."""
        key = require_key(req, self._keys)
        found = get_resource(self._store, key.account_id, resource_id)
        if found is None:
            raise NotFound(details=f"no resource {resource_id} in this account")
        resp.content_type = "text/csv; charset=utf-8"
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in found.name)[:80]
        resp.set_header("Content-Disposition", f'attachment; filename="{safe or found.id}.csv"')
        resp.text = rows_csv(self._store, found)
