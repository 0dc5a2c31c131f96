"""`GET /openapi.json` (OpenAPI 3.1 built from the pydantic models) and `GET /docs`.

The pack schemas come from the models the endpoint validates and serialises with; the
library, connection and sync paths (`api.openapi_sync`) from `ConnectionFields` and the
answer models of `api.answers`, which tests/api/test_openapi_routes.py holds to the real
answers. The console's pages are a browser UI and stay out. `/docs` renders the same
document as plain HTML on the server: no script and no CDN, so it works offline and behind
strict proxies.
"""

from __future__ import annotations

import functools
import html
import json
from typing import Any

import cartonize
import falcon
from cartonize.models import ErrorBody, PackRequest, PackResponse
from pydantic.json_schema import models_json_schema

from api.field_docs import FIELD_DOCS, SCHEMA_SECTIONS
from api.openapi_sync import SECURITY_SCHEMES, SYNC_MODELS, connection_changes, sync_paths
from api.resources import Limits, StoredPack, StoredPackList

__all__ = ["INTERFACE_VERSION", "DocsResource", "OpenApiResource", "openapi_document"]

_REF = "#/components/schemas/{model}"

#: Version of the interface the document describes (service spec, "Versioning"). It is not
#: the engine's version, which every pack response carries in `version`.
INTERFACE_VERSION = "1.9.2"

_ERRORS = {
    400: "Malformed request: not JSON, not an object, or a bad query parameter",
    401: "Wrong, revoked or missing API key (where one is needed)",
    404: "Unknown pack (never made, expired, or another account's)",
    413: "Request body above the size limit",
    405: "Method not allowed: see the Allow header",
    422: "Well-formed request with invalid or contradictory parameters; `details` names them",
    429: "Rate limited: see the Retry-After header",
    500: "Unexpected error; nothing internal is shown",
    503: "The store stayed busy; retry after the Retry-After header",
}


def _error(status: int) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": _ERRORS[status],
        "content": {"application/json": {"schema": {"$ref": _REF.format(model="ErrorBody")}}},
    }
    if status in (429, 503):
        response.update(_retry_after())
    return response


def _retry_after() -> dict[str, Any]:
    return {
        "headers": {
            "Retry-After": {
                "description": "Seconds until the request may succeed",
                "schema": {"type": "string"},
            }
        }
    }


def _ok(description: str, model: str | None) -> dict[str, Any]:
    schema = {"$ref": _REF.format(model=model)} if model else {"type": "object"}
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _operation(summary: str, ok: dict[str, Any], errors: list[int], **extra: Any) -> dict[str, Any]:
    responses = {"200": ok} | {str(status): _error(status) for status in errors}
    return {"summary": summary, **extra, "responses": responses}


_KEYED: list[dict[str, list[str]]] = [{}, {"apikey": []}]


@functools.cache
def openapi_document(limits: Limits) -> dict[str, Any]:
    """The OpenAPI 3.1 document of the service with these limits."""
    _, top = models_json_schema(
        [
            (PackRequest, "validation"),
            (PackResponse, "serialization"),
            (ErrorBody, "serialization"),
            (StoredPack, "serialization"),
            (StoredPackList, "serialization"),
            *SYNC_MODELS,
        ],
        by_alias=True,
        ref_template=_REF,
    )
    schemas: dict[str, Any] = top["$defs"]
    schemas["ConnectionChanges"] = connection_changes(schemas["ConnectionFields"])
    _describe_fields(schemas)
    pack = _operation(
        "Pack items into boxes",
        _ok("The pack response", "PackResponse"),
        [400, 401, 413, 422, 429, 500, 503],
        description=(
            "Packs the request body. Without an API key a client address may send "
            "10 unique requests a day (identical requests count once). "
            f"Bodies above {limits.max_body_bytes} bytes are refused with 413 and requests of "
            f"more than {limits.max_items} items (pre-packed ones included) with 422, as "
            "are bodies in which an object names a key twice with different values "
            "(`details` names each key path; a key repeated with the same value is read "
            "once). The key may also be sent as `key` in the body; it is never echoed or "
            "stored."
        ),
        security=_KEYED,
        requestBody={
            "required": False,
            "content": {"application/json": {"schema": {"$ref": _REF.format(model="PackRequest")}}},
        },
    )
    search = _operation(
        "Find the caller's packs by orderId and requestId",
        _ok("A page of packs, newest first", "StoredPackList"),
        [400, 401, 500, 503],
        security=[{"apikey": []}],
        parameters=[
            {"name": "orderId", "in": "query", "schema": {"type": "string"}},
            {"name": "requestId", "in": "query", "schema": {"type": "string"}},
            {
                "name": "limit",
                "in": "query",
                "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
            },
            {
                "name": "offset",
                "in": "query",
                "schema": {"type": "integer", "minimum": 0, "default": 0},
            },
        ],
    )
    fetch = _operation(
        "A stored pack; a pack made with a key needs a key of the same account",
        _ok("The stored pack", "StoredPack"),
        [401, 404, 500, 503],
        security=_KEYED,
        parameters=[
            {"name": "packUuid", "in": "path", "required": True, "schema": {"type": "string"}}
        ],
    )
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "cartonize service",
            "version": INTERFACE_VERSION,
            "description": (
                "Cartonization: which boxes to use, and where every item goes; a resource "
                "library of items, cartons and orders, kept in step with other systems by "
                "sync connections. Not described here: the browser console (sign in at "
                "/sign-in; pages under /plans/{plan_id}/console/), which drives these same "
                "operations. The version above is the interface's; the engine's is in each "
                "pack response's `version` (this server: "
                f"{cartonize.__version__})."
            ),
        },
        "paths": {
            "/": {
                "post": pack,
                "get": {
                    "summary": "For browsers: a page pointing to the console and these docs",
                    "description": (
                        "Answers 200 with a small HTML page only when the Accept header ranks "
                        "text/html above application/json, as browsers send it. Any other "
                        "client (no Accept, `*/*`, JSON) gets 405 with `Allow: POST, OPTIONS`, "
                        "as before: packing is `POST /`."
                    ),
                    "responses": {
                        "200": {
                            "description": "The page (Accept prefers text/html)",
                            "content": {"text/html": {"schema": {"type": "string"}}},
                        },
                        "405": _error(405),
                    },
                },
            },
            "/packs": {"get": search},
            "/packs/{packUuid}": {"get": fetch},
            "/healthz": {
                "get": _operation("The process is up", _ok("Up", None), [500]),
                "head": _operation("As GET, without a body", {"description": "Up"}, []),
            },
            "/readyz": {
                "get": _operation(
                    "The store opens and the engine is loaded", _ok("Ready", None), [500, 503]
                ),
                "head": {
                    "summary": "As GET, without a body",
                    "responses": {
                        "200": {"description": "Ready"},
                        "500": {"description": _ERRORS[500]},
                        "503": {"description": _ERRORS[503], **_retry_after()},
                    },
                },
            },
            **sync_paths(),
        },
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "apikey": {
                    "type": "apiKey",
                    "in": "header",
                    "name": "Authorization",
                    "description": "`Authorization: apikey <KEY>`",
                },
                **SECURITY_SCHEMES,
            },
        },
    }


#: Meanings of fields the contract's tables leave out, by schema ("*": any schema).
_MORE_DOCS: dict[str, dict[str, str]] = {
    "*": {
        "dimensions": "Extents along x (height), y (width) and z (length)",
        "centerOfMass": "Center of mass, relative to the object's origin corner",
        "properties": "Free-form properties, returned unchanged",
        "virtual": "A virtual item blocks space (a subspace, a loading rule) but is not a real "
        "item: it is not counted in lenItems",
        "quantity": "Number of identical units",
        "origin": "Corner of the item (or box) nearest the box origin",
        "x": "Height axis (up)",
        "y": "Width axis",
        "z": "Length axis",
    },
    "ErrorBody": {
        "code": "The HTTP status of the answer",
        "message": "What went wrong, in a few words",
        "details": "Which field or limit, and why",
    },
    "ItemSet": {"dimensionSets": "Unit-of-measure ladder (each, 6-pack, case)"},
    "Item": {
        "index": "Position in the response, from 1; 0 is the box outline in pictures",
        "uniqueId": "<refId>-<n>, n the unit's number within its item set",
        "deltaCost": "Increase of the box's cost caused by this item",
        "message": "Why a leftover was not packed",
        "globalId": "Response-wide number of this unit assigned by the engine",
        "packedIndex": "Position of the item in the winning item sort",
        "groupPackParent": "uniqueId of the group-pack parent item this unit belongs to, if any",
        "quantity": "Eaches of the base item this unit holds (more than 1 for a dimension set)",
        "unitOfMeasure": "Unit of measure (each, 6-pack, case), if dimensionSets were used",
        "dimensionSet": "The dimension set this unit was packed as, if dimensionSets were used",
    },
    "ItemEntry": {"item": "The packed item"},
    "BoxEntry": {"box": "The packed box"},
    "StoredPack": {
        "packUuid": "Identifier of the pack transaction",
        "createdAt": "When the pack started (UTC)",
        "usedKeyStem": "Stem of the key the pack was made with",
    },
    "StoredPackList": {"packs": "Packs on this page, newest first"},
    "StoredPackSummary": {
        "orderId": "orderId of the request",
        "requestId": "requestId of the request",
        "usedKeyStem": "Stem of the key the pack was made with",
    },
}

#: Fields the contract does not describe, or describes for this service differently.
_OWN_DOCS = {
    "key": "API key of older clients; prefer the Authorization header. Removed before the "
    "request is fingerprinted or stored, and never echoed",
    "timeout": "Seconds of compute allowed; reduced to the endpoint maximum when larger",
    "requestFingerprint": "SHA-512 hex of the request's canonical JSON (defaults filled in, "
    "key excluded)",
    "responseFingerprint": "SHA-512 hex of the response's canonical JSON without timings, "
    "packUuid and fingerprints",
    "packUuid": "128 hex characters; GET /packs/{packUuid} returns the stored pack",
}


def _describe_fields(schemas: dict[str, Any]) -> None:
    # Descriptions are added where a model has none: the pydantic models carry types,
    # defaults and bounds, the contract carries what each field means.
    for name, schema in schemas.items():
        sections = [FIELD_DOCS[section] for section in SCHEMA_SECTIONS.get(name, ())]
        for field, spec in schema.get("properties", {}).items():
            if "description" in spec:
                continue
            if name in ("PackRequest", "PackResponse") and field in _OWN_DOCS:
                spec["description"] = _OWN_DOCS[field]
                continue
            for docs in [*sections, _MORE_DOCS.get(name, {}), _MORE_DOCS["*"]]:
                if field in docs:
                    spec["description"] = docs[field]
                    break


class OpenApiResource:
    """`GET /openapi.json`."""

    def __init__(self, limits: Limits) -> None:
        self._text = json.dumps(openapi_document(limits))

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """The OpenAPI document."""
        resp.content_type = falcon.MEDIA_JSON
        resp.text = self._text


class DocsResource:
    """`GET /docs`: the OpenAPI document as a self-contained HTML page."""

    def __init__(self, limits: Limits) -> None:
        self._page = render_docs(openapi_document(limits))

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """The documentation page."""
        resp.content_type = falcon.MEDIA_HTML
        resp.text = self._page


def render_docs(document: dict[str, Any]) -> str:
    """Render paths and schemas (every field with its type, default and bounds) as HTML."""
    e = html.escape
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{e(document['info']['title'])}</title>",
        "<style>body{font:15px/1.4 system-ui,sans-serif;max-width:70em;margin:2em auto;"
        "padding:0 1em}table{border-collapse:collapse;width:100%}td,th{border:1px solid #ccc;"
        "padding:.2em .4em;text-align:left;vertical-align:top}code{font-size:90%}</style>",
        "</head><body>",
        f"<h1>{e(document['info']['title'])} {e(document['info']['version'])}</h1>",
        f"<p>{e(document['info']['description'])} Machine-readable: "
        # Relative: under a path prefix (/cartonize/docs) it is /cartonize/openapi.json.
        "<a href='openapi.json'>/openapi.json</a>.</p><h2>Endpoints</h2>",
    ]
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            parts.append(f"<h3><code>{e(method.upper())} {e(path)}</code></h3>")
            parts.append(f"<p>{e(operation['summary'])}</p>")
            if "description" in operation:
                parts.append(f"<p>{e(operation['description'])}</p>")
            parts += _operation_details(document, operation)
    parts.append("<h2>Schemas</h2>")
    for name, schema in sorted(document["components"]["schemas"].items()):
        parts.append(f"<h3 id='{e(name)}'>{e(name)}</h3>")
        if "description" in schema:
            parts.append(f"<p>{e(schema['description'])}</p>")
        properties = schema.get("properties", {})
        if not properties:
            parts.append(f"<pre>{e(json.dumps(schema, indent=1))}</pre>")
            continue
        required = set(schema.get("required", []))
        parts.append(
            "<table><tr><th>field</th><th>type</th><th>default</th><th>bounds</th>"
            "<th>meaning</th></tr>"
        )
        for field, spec in properties.items():
            mark = " (required)" if field in required else ""
            parts.append(
                f"<tr><td><code>{e(field)}</code>{mark}</td><td>{e(_type_of(spec))}</td>"
                f"<td>{e(json.dumps(spec['default'])) if 'default' in spec else ''}</td>"
                f"<td>{e(_bounds_of(spec))}</td><td>{e(spec.get('description', ''))}</td></tr>"
            )
        parts.append("</table>")
    parts.append("</body></html>")
    return "".join(parts)


def _operation_details(document: dict[str, Any], operation: dict[str, Any]) -> list[str]:
    """Authentication, parameters, request body and answers of one operation, as HTML."""
    e = html.escape
    schemes = document["components"]["securitySchemes"]
    parts = ["<ul>"]
    if "security" in operation:
        ways = [
            " and ".join(f"{schemes[name]['name']} ({schemes[name]['in']})" for name in way)
            for way in operation["security"]
            if way
        ]
        optional = " (optional)" if {} in operation["security"] else ""
        parts.append(f"<li>Authentication{optional}: {e(' or '.join(ways))}</li>")
    for parameter in operation.get("parameters", []):
        parts.append(
            f"<li>{e(parameter['in'])} parameter <code>{e(parameter['name'])}</code> "
            f"({e(_type_of(parameter['schema']))}): {e(parameter.get('description', ''))}</li>"
        )
    if "requestBody" in operation:
        for media, content in operation["requestBody"]["content"].items():
            name = _type_of(content["schema"])
            parts.append(f"<li>Body ({e(media)}): <a href='#{e(name)}'>{e(name)}</a></li>")
    parts.append("</ul><ul>")
    for status, response in operation["responses"].items():
        shapes = [_type_of(content["schema"]) for content in response.get("content", {}).values()]
        links = "".join(f" <a href='#{e(shape)}'>{e(shape)}</a>" for shape in shapes)
        parts.append(f"<li><b>{e(status)}</b> {e(response['description'])}{links}</li>")
    parts.append("</ul>")
    return parts


def _type_of(spec: dict[str, Any]) -> str:
    if "$ref" in spec:
        return str(spec["$ref"]).rsplit("/", 1)[-1]
    if "enum" in spec:
        return " | ".join(json.dumps(v) for v in spec["enum"])
    if "const" in spec:
        return json.dumps(spec["const"])
    if "anyOf" in spec:
        return " | ".join(_type_of(option) for option in spec["anyOf"])
    if spec.get("type") == "array":
        return f"array of {_type_of(spec.get('items', {}))}"
    return str(spec.get("type", "any"))


def _bounds_of(spec: dict[str, Any]) -> str:
    words = {
        "minimum": ">=",
        "exclusiveMinimum": ">",
        "maximum": "<=",
        "exclusiveMaximum": "<",
        "maxLength": "length <=",
        "minLength": "length >=",
    }
    found = [f"{word} {spec[key]}" for key, word in words.items() if key in spec]
    for option in spec.get("anyOf", []):
        found += [f"{word} {option[key]}" for key, word in words.items() if key in option]
    return ", ".join(found)
