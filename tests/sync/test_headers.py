"""The API Headers Template: what a save accepts, what it refuses, how a pull renders it."""

from __future__ import annotations

import pytest
from cartonize.sync.headers import HeadersTemplateError, parse_headers_template, render_headers


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (None, {}),
        ("  ", {}),
        ("{}", {}),
        (
            '{"Authorization": "Bearer {{ api_token }}"}',
            {"Authorization": "Bearer {{ api_token }}"},
        ),
        (
            '{"X-Key": "{{api_key}}", "Accept": "application/json"}',
            {"X-Key": "{{api_key}}", "Accept": "application/json"},
        ),
        (
            '{"X-Both": "{{ api_key }}:{{  api_token  }}"}',
            {"X-Both": "{{ api_key }}:{{  api_token  }}"},
        ),
        ('{"X-Tab": "a\\tb"}', {"X-Tab": "a\tb"}),
    ],
)
def test_accepted_templates(text: str | None, expected: dict[str, str]) -> None:
    assert parse_headers_template(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"X": "a"', "not valid JSON (Expecting ',' delimiter at line 1 column 10)"),
        ('["X"]', "must be a JSON object of header names to strings, not an array"),
        ('{"X": 5}', "header 'X' must be a string, not a number; quote it"),
        ('{"X": null}', "header 'X' must be a string, not null"),
        ('{"X": "{{ api_secret }}"}', "unknown placeholder '{{ api_secret }}'"),
        ('{"X": "{{ api_key.upper() }}"}', "unknown placeholder"),
        ('{"X": "{{ api_key }"}', "unclosed or stray"),
        ('{"X": "}} {{"}', "unclosed or stray"),
        ('{"X": "a\\r\\nSet-Cookie: x=1"}', "header 'X' contains a line break"),
        ('{"X": "a\\nb"}', "line break"),
        ('{"X": "a\\u0000b"}', "control character"),
        ('{"X": "Grüße {{ api_key }}"}', "header 'X' contains 'ü', which is not ASCII"),
        ('{"X-Evil\\r\\nHost": "a"}', "is not a valid HTTP header name"),
        ('{"Bad Name": "a"}', "is not a valid HTTP header name"),
        ('{"Bad:Name": "a"}', "is not a valid HTTP header name"),
        ('{"": "a"}', "is not a valid HTTP header name"),
        ('{"X-Key": "a", "x-key": "b"}', "header 'x-key' appears twice (also as 'X-Key')"),
    ],
)
def test_refused_templates(text: str, message: str) -> None:
    with pytest.raises(HeadersTemplateError) as failure:
        parse_headers_template(text)
    assert message in failure.value.message
    assert failure.value.field == "API Headers Template"


def test_render_fills_both_credentials() -> None:
    template = '{"X-Key": "{{api_key}}", "Authorization": "Bearer {{ api_token }}", "A": "b"}'
    assert render_headers(template, "k1", "t1") == {
        "X-Key": "k1",
        "Authorization": "Bearer t1",
        "A": "b",
    }


def test_render_does_not_expand_placeholders_inside_credentials() -> None:
    # A credential that looks like a placeholder is sent as it is, not substituted again.
    assert render_headers('{"X": "{{ api_key }}"}', "{{ api_token }}", "t") == {
        "X": "{{ api_token }}"
    }


@pytest.mark.parametrize(
    ("key", "token", "message", "field"),
    [
        (
            None,
            "t",
            "uses {{ api_key }} but the connection has no Third-Party API Key",
            "Third-Party API Key",
        ),
        ("", "t", "has no Third-Party API Key", "Third-Party API Key"),
        (
            "k\r\nX-Injected: 1",
            "t",
            "Third-Party API Key contains a line break",
            "Third-Party API Key",
        ),
        ("k", "t\n", "Third-Party API Token contains a line break", "Third-Party API Token"),
        # Stored before saving refused it: the pull fails naming the field, not in httpx.
        (
            "ключ-123",
            "t",
            "Third-Party API Key contains 'к', which is not ASCII",
            "Third-Party API Key",
        ),
        ("k", "tökén", "Third-Party API Token contains 'ö'", "Third-Party API Token"),
    ],
)
def test_render_refuses_missing_or_unsafe_credentials(
    key: str | None, token: str, message: str, field: str
) -> None:
    with pytest.raises(HeadersTemplateError) as failure:
        render_headers('{"K": "{{ api_key }}", "T": "{{ api_token }}"}', key, token)
    assert message in failure.value.message and failure.value.field == field


def test_unused_credential_may_be_blank() -> None:
    assert render_headers('{"T": "{{ api_token }}"}', None, "t") == {"T": "t"}
