"""The OpenAPI paths of the resource library, connection management and the sync API.

`api.openapi` joins them with the pack routes. Bodies are the models the code validates
with (`ConnectionFields`) or the models in `api.answers` that describe what the handlers
answer; statuses are those the handlers raise (docs/sync.md).
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from cartonize.sync.connections import ConnectionFields
from cartonize.sync.mapping import DimConv, WeightConv
from pydantic import BaseModel

from api import answers
from api.library import MAX_ROWS_PAGE
from api.resources import CONTROL_BODY_BYTES
from api.sync import ROW_KEY_HEADER, SECRET_HEADER, SECRET_PARAM

__all__ = ["SECURITY_SCHEMES", "SYNC_MODELS", "connection_changes", "sync_paths"]

_REF = "#/components/schemas/{model}"

#: Models whose schemas the paths below refer to, with the JSON schema mode of each.
SYNC_MODELS: list[tuple[type[BaseModel], Literal["validation", "serialization"]]] = [
    (answers.ResourceList, "serialization"),
    (answers.ResourcePage, "serialization"),
    (answers.ResourceAnswer, "serialization"),
    (answers.ResourceChange, "validation"),
    (ConnectionFields, "validation"),
    (answers.ConnectionAnswer, "serialization"),
    (answers.ConnectionList, "serialization"),
    (answers.ConnectionLog, "serialization"),
    (answers.SyncWriteBody, "validation"),
    (answers.SyncWriteAnswer, "serialization"),
    (answers.PullRunAnswer, "serialization"),
    (answers.SyncError, "serialization"),
]

SECURITY_SCHEMES: dict[str, Any] = {
    "connectionSecret": {
        "type": "apiKey",
        "in": "header",
        "name": SECRET_HEADER,
        "description": "The connection's API secret (shown once, when the connection is "
        "created or its credentials regenerated); it must belong to the public_api_id of "
        "the URL",
    },
    "connectionSecretParam": {
        "type": "apiKey",
        "in": "query",
        "name": SECRET_PARAM,
        "description": f"The connection's API secret as a URL parameter; prefer {SECRET_HEADER}",
    },
}

_KEY: list[dict[str, list[str]]] = [{"apikey": []}]
_SECRET: list[dict[str, list[str]]] = [{"connectionSecret": []}, {"connectionSecretParam": []}]


def _body(description: str, model: str | None, media: str = "application/json") -> dict[str, Any]:
    schema = {"$ref": _REF.format(model=model)} if model else {"type": "string"}
    return {"description": description, "content": {media: {"schema": schema}}}


def _errors(model: str, **by_status: str) -> dict[str, Any]:
    """Error answers in `model`'s shape; 500 and 503 always come in the pack error body."""
    found = {status.lstrip("_"): _body(text, model) for status, text in by_status.items()}
    found["500"] = _body("Unexpected error; nothing internal is shown", "ErrorBody")
    found["503"] = _body("The store stayed busy; retry after the Retry-After header", "ErrorBody")
    found["503"]["headers"] = {
        "Retry-After": {"description": "Seconds to wait", "schema": {"type": "string"}}
    }
    return found


def _path(name: str, description: str, integer: bool = False) -> dict[str, Any]:
    schema = {"type": "integer"} if integer else {"type": "string"}
    return {
        "name": name,
        "in": "path",
        "required": True,
        "description": description,
        "schema": schema,
    }


def _page(default: int, maximum: int) -> list[dict[str, Any]]:
    return [
        {
            "name": "limit",
            "in": "query",
            "description": "Page size",
            "schema": {"type": "integer", "minimum": 1, "maximum": maximum, "default": default},
        },
        {
            "name": "offset",
            "in": "query",
            "description": "Entries to skip",
            "schema": {"type": "integer", "minimum": 0, "default": 0},
        },
    ]


def _json_request(model: str, required: bool = True) -> dict[str, Any]:
    return {
        "required": required,
        "content": {"application/json": {"schema": {"$ref": _REF.format(model=model)}}},
    }


_KEY_401 = "Missing, wrong or revoked API key"
_CONTROL_413 = f"Body above {CONTROL_BODY_BYTES} bytes"
_NO_RESOURCE = "No resource with this id in the key's account"
_PLAN_403 = (
    "The account is not premium or enterprise, or no operator enabled its connections "
    "(`cartonize accounts enable-connections NAME`)"
)
_PLAN_404 = "The plan is not the key's, or no such connection in it"


def _library() -> dict[str, Any]:
    resource_id = _path("resource_id", "Resource id", integer=True)
    return {
        "/resources": {
            "get": {
                "summary": "The account's resources, newest first",
                "security": _KEY,
                "parameters": [
                    {
                        "name": "type",
                        "in": "query",
                        "description": "Only resources of this type",
                        "schema": {"type": "string", "enum": ["items", "cartons", "orders"]},
                    }
                ],
                "responses": {
                    "200": _body("The resources", "ResourceList"),
                    **_errors("ErrorBody", _400="Unknown type", _401=_KEY_401),
                },
            }
        },
        "/resources/{resource_id}": {
            "parameters": [resource_id],
            "get": {
                "summary": "A resource and one page of its rows",
                "security": _KEY,
                "parameters": _page(100, MAX_ROWS_PAGE),
                "responses": {
                    "200": _body("The resource and its rows", "ResourcePage"),
                    **_errors(
                        "ErrorBody", _400="Bad limit or offset", _401=_KEY_401, _404=_NO_RESOURCE
                    ),
                },
            },
            "patch": {
                "summary": "Make the resource the account's default of its type",
                "security": _KEY,
                "requestBody": _json_request("ResourceChange"),
                "responses": {
                    "200": _body("The changed resource", "ResourceAnswer"),
                    **_errors(
                        "ErrorBody",
                        _400="Malformed JSON",
                        _401=_KEY_401,
                        _404=_NO_RESOURCE,
                        _413=_CONTROL_413,
                        _422='The body is not {"isDefault": true} (or names a key twice '
                        "with different values)",
                    ),
                },
            },
            "delete": {
                "summary": "Delete the resource and its rows",
                "security": _KEY,
                "responses": {
                    "204": {"description": "Deleted"},
                    **_errors(
                        "ErrorBody",
                        _401=_KEY_401,
                        _404=_NO_RESOURCE,
                        _409="A connection has it as Resource to Update",
                    ),
                },
            },
        },
        "/resources/{resource_id}/csv": {
            "parameters": [resource_id],
            "get": {
                "summary": "Every row as CSV, one column per property",
                "description": "`properties` is a JSON text column. A text cell starting "
                "with =, +, -, @, a tab or a carriage return gets a leading ' so a "
                "spreadsheet shows it as text instead of running it as a formula.",
                "security": _KEY,
                "responses": {
                    "200": {
                        **_body("The rows", None, "text/csv"),
                        "headers": {
                            "Content-Disposition": {
                                "description": "attachment; filename=<resource name>.csv",
                                "schema": {"type": "string"},
                            }
                        },
                    },
                    **_errors("ErrorBody", _401=_KEY_401, _404=_NO_RESOURCE),
                },
            },
        },
    }


def _connections() -> dict[str, Any]:
    plan = "/plans/{plan_id}/connections"
    plan_id = _path("plan_id", "The plan of the key's account")
    both = [plan_id, _path("connection_id", "Connection id", integer=True)]
    common = {"_401": _KEY_401, "_403": _PLAN_403, "_404": _PLAN_404}
    invalid = (
        "Invalid fields; `details` names each one and why (also a key named twice with "
        "different values in the body, the schema map or the headers template, by its "
        "key path; credential and header values are not shown)"
    )
    return {
        plan: {
            "parameters": [plan_id],
            "get": {
                "summary": "The plan's connections",
                "security": _KEY,
                "responses": {
                    "200": _body("The connections", "ConnectionList"),
                    **_errors("ErrorBody", **common),
                },
            },
            "post": {
                "summary": "Create a connection",
                "description": "The answer carries `apiSecret`, shown this once.",
                "security": _KEY,
                "requestBody": _json_request("ConnectionFields"),
                "responses": {
                    "201": _body("The connection with its API secret", "ConnectionAnswer"),
                    **_errors(
                        "ErrorBody",
                        _400="Malformed JSON",
                        **common,
                        _413=_CONTROL_413,
                        _422=invalid,
                    ),
                },
            },
        },
        plan + "/{connection_id}": {
            "parameters": both,
            "get": {
                "summary": "One connection (no secret, no third-party credentials)",
                "security": _KEY,
                "responses": {
                    "200": _body("The connection", "ConnectionAnswer"),
                    **_errors("ErrorBody", **common),
                },
            },
            "patch": {
                "summary": "Change the given fields",
                "description": "Fields not sent keep their values; `thirdPartyApiKey` and "
                "`thirdPartyApiToken` change only when sent (null clears them).",
                "security": _KEY,
                "requestBody": _json_request("ConnectionChanges"),
                "responses": {
                    "200": _body("The changed connection", "ConnectionAnswer"),
                    **_errors(
                        "ErrorBody",
                        _400="Malformed JSON",
                        **common,
                        _413=_CONTROL_413,
                        _422=invalid,
                    ),
                },
            },
            "delete": {
                "summary": "Delete the connection and its log; its resources stay",
                "security": _KEY,
                "responses": {"204": {"description": "Deleted"}, **_errors("ErrorBody", **common)},
            },
        },
        plan + "/{connection_id}/credentials": {
            "parameters": both,
            "post": {
                "summary": "Regenerate the API secret; the previous one stops working at once",
                "description": "The public API id stays, so configured URLs keep working.",
                "security": _KEY,
                "responses": {
                    "200": _body("The connection with its new API secret", "ConnectionAnswer"),
                    **_errors("ErrorBody", **common),
                },
            },
        },
        plan + "/{connection_id}/log": {
            "parameters": both,
            "get": {
                "summary": "The connection's log, newest first",
                "security": _KEY,
                "parameters": _page(50, 500),
                "responses": {
                    "200": _body("A page of the log", "ConnectionLog"),
                    **_errors("ErrorBody", _400="Bad limit or offset", **common),
                },
            },
        },
    }


_SECRET_401 = "Secret missing, wrong, or not this public_api_id's"
_SECRET_403 = "The account may no longer use connections"


def _conversion(name: str, header: str, values: tuple[str, ...], what: str) -> list[Any]:
    schema = {"type": "string", "enum": list(values)}
    return [
        {
            "name": name,
            "in": "query",
            "description": f"Converts {what} after mapping; wins over {header}. Default: "
            "the connection's own setting",
            "schema": schema,
        },
        {"name": header, "in": "header", "description": f"As `{name}`", "schema": schema},
    ]


def _write(summary: str, description: str, post: bool, put: bool = False) -> dict[str, Any]:
    ok = "Authenticated: `status` says whether the write completed" + (
        " (`packResourceId` names the resource)" if post else ""
    )
    dims, weights = get_args(DimConv), get_args(WeightConv)
    return {
        "summary": summary,
        "description": description + " 200 does not mean success: check `status`.",
        "security": _SECRET,
        "parameters": [
            {
                "name": "row_key",
                "in": "query",
                "description": "Property name, or JSON array text of names, rows are "
                "matched on (when the body has no row_key)",
                "schema": {"type": "string"},
            },
            {
                "name": ROW_KEY_HEADER,
                "in": "header",
                "description": "As the row_key parameter (used when neither body nor URL has one)",
                "schema": {"type": "string"},
            },
            *_conversion("dim_conv", "X-Service-Dim-Conv", dims, "every length"),
            *_conversion("weight_conv", "X-Service-Weight-Conv", weights, "every weight"),
        ],
        "requestBody": _json_request("SyncWriteBody"),
        "responses": {
            "200": _body(ok, "SyncWriteAnswer"),
            **_errors(
                "SyncError",
                _400="Invalid JSON payload, or Invalid row_key format",
                _401=_SECRET_401 + " (also when the secret was regenerated, or the "
                "connection deleted, while the write was being prepared: nothing written)",
                _403=_SECRET_403,
                _409="Connection changed: the connection was edited (Resource Type, "
                "Resource to Update, Schema Map, or the Unit Conversion the write used) "
                "between the secret check and the write's transaction; nothing was "
                "written (`details` names the settings; logged). Sent again, the write "
                "uses the new settings",
                _413="Payload too large",
                _422="Repeated JSON key: an object of the body names a key more than once "
                "with different values (`details` gives each key path and its values); "
                "nothing was written",
            ),
        },
    }


def _sync() -> dict[str, Any]:
    public_id = _path("public_api_id", "The connection's public API id")
    run = {
        "summary": "Pull from the connection's source now, as a Dagster run",
        "description": "Imports into the connection's resource exactly as a scheduled pull "
        "(Resource to Update blank: a new resource; set: it is overwritten in one "
        "transaction). Waits up to CARTONIZE_WEBHOOK_WAIT seconds for the run.",
        "security": _SECRET,
        "responses": {
            "200": _body("The run finished (success or failure: check `status`)", "PullRunAnswer"),
            "202": _body("Still queued or running: ask `status_url`", "PullRunAnswer"),
            **_errors("SyncError", _401=_SECRET_401, _403=_SECRET_403),
        },
    }
    status = {
        "summary": "State and figures of a pull run of this connection",
        "security": _SECRET,
        "responses": {
            "200": _body("The run", "PullRunAnswer"),
            **_errors(
                "SyncError",
                _401=_SECRET_401,
                _403=_SECRET_403,
                _404="Not a run of this connection",
            ),
        },
    }
    return {
        "/sync-api/{public_api_id}/rest": {
            "parameters": [public_id],
            "post": _write(
                "Create a resource, or upsert into the Resource to Update",
                "Resource to Update blank: a new resource from the payload; set: as PATCH.",
                post=True,
            ),
            "put": _write(
                "Overwrite the Resource to Update",
                "The payload must be an array of complete rows; all rows are replaced in one "
                "transaction. Every record rejected: a failure, and the old rows stay.",
                post=False,
                put=True,
            ),
            "patch": _write(
                "Upsert by row_key, or append",
                "With a row_key matched rows are merged and others inserted (complete); "
                "without, rows are appended.",
                post=False,
            ),
        },
        "/sync-api/{public_api_id}/webhook": {"parameters": [public_id], "get": run},
        "/sync-api/{public_api_id}/runs/{run_id}": {
            "parameters": [public_id, _path("run_id", "The run id a webhook answered")],
            "get": status,
        },
    }


def sync_paths() -> dict[str, Any]:
    """Paths of the library, connection management and sync API."""
    paths = _library() | _connections() | _sync()
    # Each operation lists its path parameters itself, so a reader of one operation (the
    # /docs page, a client generator) needs nothing from the path item.
    for item in paths.values():
        shared = item.pop("parameters", [])
        for operation in item.values():
            operation["parameters"] = [*shared, *operation.get("parameters", [])]
    return paths


def connection_changes(fields: dict[str, Any]) -> dict[str, Any]:
    """The PATCH body schema: ConnectionFields' schema with every field optional."""
    changes = {key: value for key, value in fields.items() if key != "required"}
    changes["title"] = "ConnectionChanges"
    changes["description"] = "Any subset of the connection fields; the others keep their values"
    return changes
