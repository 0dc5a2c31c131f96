"""The API Headers Template of a connection: validate it on save, render it on each pull.

The template is a JSON object of header names to string values. A value may contain the
placeholders `{{ api_key }}` and `{{ api_token }}` (spaces inside the braces optional) and
nothing else that looks like a placeholder: this is substitution of two names, not a
template engine. CR, LF and other control characters are refused in names, values and the
substituted credentials, so a stored value can never add a header or split a request; so
is any character outside ASCII, which the HTTP client cannot send in a header (it raised
UnicodeEncodeError inside every pull).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from cartonize import jsontext

__all__ = [
    "PLACEHOLDERS",
    "HeadersTemplateError",
    "header_value_problem",
    "parse_headers_template",
    "render_headers",
]

#: The template variables and the connection field each one is filled from.
PLACEHOLDERS: Mapping[str, str] = {
    "api_key": "Third-Party API Key",
    "api_token": "Third-Party API Token",
}

# RFC 9110 field-name: a token of visible ASCII without separators.
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
# Control characters other than horizontal tab, which RFC 9110 allows inside a value.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def header_value_problem(value: str) -> str | None:
    """Why `value` cannot be sent as (part of) an HTTP header value, or None when it can."""
    if _CONTROL.search(value):
        return "contains a line break or control character"
    if not value.isascii():
        # httpx encodes header values as ASCII; RFC 9110 calls other bytes obsolete.
        bad = next(c for c in value if not c.isascii())
        return f"contains {bad!r}, which is not ASCII"
    return None


class HeadersTemplateError(ValueError):
    """The headers template (or a credential put into it) cannot make valid headers."""

    def __init__(self, message: str, field: str = "API Headers Template") -> None:
        super().__init__(message)
        self.message = message
        #: The connection field the caller should fix (for a 422 `details`).
        self.field = field


def parse_headers_template(text: str | None) -> dict[str, str]:
    """Validate a headers template and return it as a name -> value mapping (unrendered).

    Blank or None is an empty template. Raises HeadersTemplateError saying what to fix.
    """
    if text is None or not text.strip():
        return {}
    try:
        parsed = jsontext.loads(text, strict=False, repeats="mark")
    except json.JSONDecodeError as exc:
        raise HeadersTemplateError(
            f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    if not isinstance(parsed, dict):
        raise HeadersTemplateError(
            f"must be a JSON object of header names to strings, not {_json_kind(parsed)}"
        )
    if isinstance(parsed, jsontext.RepeatedKeys) and parsed.own:
        # json kept the last value silently; the values may be credentials: not shown.
        name = next(iter(parsed.own))
        raise HeadersTemplateError(
            f"header {name!r} is named more than once, with different values; name each header once"
        )
    template: dict[str, str] = {}
    seen: dict[str, str] = {}
    for name, value in parsed.items():
        if not _HEADER_NAME.fullmatch(name):
            raise HeadersTemplateError(
                f"header name {name!r} is not a valid HTTP header name "
                "(letters, digits and !#$%&'*+-.^_`|~ only; no spaces, colons or line breaks)"
            )
        if name.lower() in seen:
            raise HeadersTemplateError(
                f"header {name!r} appears twice (also as {seen[name.lower()]!r}); "
                "header names are case-insensitive"
            )
        seen[name.lower()] = name
        if not isinstance(value, str):
            raise HeadersTemplateError(
                f'header {name!r} must be a string, not {_json_kind(value)}; quote it, e.g. "42"'
            )
        problem = header_value_problem(value)
        if problem is not None:
            raise HeadersTemplateError(
                f"header {name!r} {problem}; header values must be printable ASCII"
            )
        _check_placeholders(name, value)
        template[name] = value
    return template


def render_headers(
    template: str | Mapping[str, str] | None,
    api_key: str | None,
    api_token: str | None,
) -> dict[str, str]:
    """Fill `{{ api_key }}` and `{{ api_token }}` into a template and return the headers.

    A placeholder whose credential is empty is an error (the source would reject us anyway,
    and an empty credential is easier to diagnose here than as a 401 from the source).
    """
    parsed = (
        parse_headers_template(template)
        if template is None or isinstance(template, str)
        else template
    )
    values = {"api_key": api_key, "api_token": api_token}
    headers: dict[str, str] = {}
    for name, value in parsed.items():
        _check_placeholders(name, value)

        def fill(match: re.Match[str], header: str = name) -> str:
            variable = match.group(1)
            credential = values[variable]
            if not credential:
                raise HeadersTemplateError(
                    f"header {header!r} uses {{{{ {variable} }}}} but the connection has no "
                    f"{PLACEHOLDERS[variable]}",
                    field=PLACEHOLDERS[variable],
                )
            problem = header_value_problem(credential)
            if problem is not None:
                raise HeadersTemplateError(
                    f"the {PLACEHOLDERS[variable]} {problem}; it is sent in an HTTP header, "
                    "so it must be printable ASCII",
                    field=PLACEHOLDERS[variable],
                )
            return credential

        headers[name] = _PLACEHOLDER.sub(fill, value)
    return headers


def _check_placeholders(name: str, value: str) -> None:
    for match in _PLACEHOLDER.finditer(value):
        if match.group(1) not in PLACEHOLDERS:
            raise HeadersTemplateError(
                f"header {name!r} uses the unknown placeholder {match.group(0)!r}; "
                "only {{ api_key }} and {{ api_token }} are available"
            )
    rest = _PLACEHOLDER.sub("", value)
    if "{{" in rest or "}}" in rest:
        raise HeadersTemplateError(
            f"header {name!r} has an unclosed or stray '{{{{' or '}}}}'; "
            "write placeholders as {{ api_key }} or {{ api_token }}"
        )


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"
