"""Checks a real answer against `/openapi.json`: its status is documented for the operation,
and its body validates against the documented schema of its content type."""

from __future__ import annotations

import functools
import json
from typing import Any

import jsonschema_rs
from falcon import testing


@functools.cache
def _document(text: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(text)
    return document


def document_of(client: testing.TestClient) -> dict[str, Any]:
    """The app's OpenAPI document."""
    return _document(client.simulate_get("/openapi.json").text)


def assert_documented(
    client: testing.TestClient, method: str, template: str, result: testing.Result
) -> dict[str, Any]:
    """Fail unless `result` of `method template` is a documented answer; returns the
    documented response."""
    document = document_of(client)
    operation = document["paths"][template][method.lower()]
    status = str(result.status_code)
    assert status in operation["responses"], (
        f"{method} {template}: {status} is not documented ({result.text[:200]})"
    )
    response: dict[str, Any] = operation["responses"][status]
    content = response.get("content", {})
    if not content:
        assert result.text == "", f"{method} {template} {status}: no body documented"
        return response
    media = result.headers["content-type"].split(";")[0].strip()
    assert media in content, f"{method} {template} {status}: {media} is not documented"
    if media == "application/json":
        schema = {**content[media]["schema"], "components": document["components"]}
        errors = [
            f"{error.instance_path}: {error.message}"
            for error in jsonschema_rs.validator_for(schema).iter_errors(result.json)
        ]
        assert errors == [], f"{method} {template} {status}: {errors}"
    return response
