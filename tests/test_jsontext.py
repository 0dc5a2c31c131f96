"""jsontext.loads: the ways Python's json failed on text from outside, each now a
ValueError the callers answer (see the module's docstring)."""

from __future__ import annotations

import json
import math

import pytest
from cartonize import jsontext


def test_nesting_past_the_recursion_limit_is_a_decode_error() -> None:
    with pytest.raises(json.JSONDecodeError) as failure:
        jsontext.loads("[" * 100_000 + "]" * 100_000)
    assert str(failure.value) == "nested too deeply"


def test_integers_too_long_for_python_read_as_infinite() -> None:
    assert jsontext.loads("[1" + "0" * 4299 + "]") == [10**4299]
    assert jsontext.loads("[-1" + "0" * 5000 + ", 1" + "0" * 5000 + "]") == [-math.inf, math.inf]


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_constants_are_refused_unless_lenient(constant: str) -> None:
    with pytest.raises(ValueError, match=f"{constant} is not valid JSON"):
        jsontext.loads(f"[{constant}]")
    (value,) = jsontext.loads(f"[{constant}]", strict=False)
    assert math.isnan(value) or math.isinf(value)


@pytest.mark.parametrize(
    "text",
    [
        b'{"a": ["x\\udc00"]}',  # escaped, low half alone
        b'{"a": ["\\ud83d x"]}',  # high half, then something else
        b'{"a": ["\xed\xa0\x80"]}',  # encoded as UTF-8, which json decodes with surrogatepass
        '{"a\\ud800": 1}',  # in a key, given as str
    ],
)
def test_lone_surrogates_are_refused_or_replaced(text: bytes | str) -> None:
    with pytest.raises(ValueError, match="lone surrogate"):
        jsontext.loads(text)
    lenient = json.dumps(jsontext.loads(text, strict=False), ensure_ascii=False)
    assert "\ufffd" in lenient
    lenient.encode("utf-8")  # no surrogate left


def test_lone_surrogates_are_replaced_at_any_depth() -> None:
    deep = "[" * 900 + '{"k\\ud800": ["v\\udfff"]}' + "]" * 900
    value = jsontext.loads(deep, strict=False)
    for _ in range(900):
        (value,) = value
    assert value == {"k\ufffd": ["v\ufffd"]}


def test_pairs_and_plain_text_pass_unchanged() -> None:
    text = '{"box \\ud83d\\udce6": ["caf\\u00e9", "\U0001f4e6", 1.5, true, null]}'
    assert jsontext.loads(text) == json.loads(text)
    assert jsontext.loads(text.encode()) == json.loads(text)
