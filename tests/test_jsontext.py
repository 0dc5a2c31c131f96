"""jsontext.loads: the ways Python's json failed on text from outside, each now a
ValueError the callers answer (see the module's docstring)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from cartonize import _core, jsontext
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import examples


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


# ------------------------------------------------------------------ repeated keys


def _reference_repeats(text: str) -> bool:
    """Whether an object of `text` names a key twice, by Python's own decoding."""
    found = False

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal found
        found = found or len({k for k, _ in pairs}) != len(pairs)
        return dict(pairs)

    json.loads(text, object_pairs_hook=hook)
    return found


_key = st.sampled_from(["a", "b", "\\u0061", "\\ud83d\\ude00", "\U0001f600", "a\\\\", 'a\\"', "é"])
_scalar = st.sampled_from(["1", "1.0", "true", "0", "null", '"a"', '"b"', "NaN", "-Infinity", "[]"])
_ws = st.sampled_from(["", " ", "\n\t "])


@st.composite
def _json_text(draw: st.DrawFn, depth: int = 0) -> str:
    """JSON text whose objects may repeat keys, spelled in several ways (escapes)."""
    kind = draw(st.sampled_from(["scalar", "array", "object"] if depth < 4 else ["scalar"]))
    if kind == "scalar":
        return draw(_scalar)
    items = draw(st.lists(_json_text(depth + 1), max_size=4))
    if kind == "array":
        return "[" + ",".join(draw(_ws) + item for item in items) + "]"
    members = [f'{draw(_ws)}"{draw(_key)}"{draw(_ws)}:{draw(_ws)}{item}' for item in items]
    return "{" + ",".join(members) + draw(_ws) + "}"


@given(_json_text())
@settings(max_examples=examples(400), deadline=None, derandomize=True, database=None)
def test_the_compiled_scan_tells_repeated_keys_as_python_decodes_them(text: str) -> None:
    """Keys are compared as Python decodes them ("a" is "\\u0061", a surrogate pair is
    its character): a wrong "no" would let a conflicting record through unmarked. NaN
    and Infinity, which serde_json does not read, leave the scan unable to tell unless
    it met a repeat before them."""
    expected = _reference_repeats(text)
    found = _core.json_repeats_a_key(text)
    if "NaN" in text or "Infinity" in text:
        assert found is None or found is expected is True, text
    else:
        assert found is expected, text


@pytest.mark.parametrize(
    "text", ['{"a": 1', "[1 2]", '{"a": 1,}', "", '{"a" 1}', "1 2", "{1: 2}", '["a]']
)
def test_the_compiled_scan_answers_none_for_text_it_does_not_expect(text: str) -> None:
    assert _core.json_repeats_a_key(text) is None


@pytest.mark.parametrize("scan", [True, False])
def test_mark_keeps_the_last_value_and_names_only_conflicting_repeats(
    scan: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not scan:
        # An engine build without the scan: every text takes the hooked path.
        monkeypatch.setattr(jsontext, "_may_repeat", lambda text: True)
    text = (
        '{"rows": [{"sku": "A", "sku": "B"}, {"n": 4, "n": 4.0, "t": [1, true], "t": [1, true]},'
        ' {"deep": [[{"f": false, "f": 0}]]}, {"x": NaN, "x": NaN}], "meta": {"v": 1}}'
    )
    for given_text in (text, text.encode("utf-16")):
        value = jsontext.loads(given_text, strict=False, repeats="mark")
        assert value["rows"][0] == {"sku": "B"}
        assert type(value["rows"][1]) is dict and type(value["meta"]) is dict
        assert type(value["rows"][3]) is dict
        assert jsontext.repeated_key_paths(value) == [
            ("rows[0].sku", ["A", "B"]),
            ("rows[2].deep[0][0].f", [False, 0]),
        ]
    plain = jsontext.loads('{"a": 1, "b": [{"c": 2}]}', repeats="mark")
    assert type(plain) is dict and jsontext.repeated_key_paths(plain) == []
    assert type(jsontext.loads('{"a": 1, "a": 2}')) is dict  # "last", the default


def test_keys_differing_only_in_lone_surrogates_are_one_key_named_twice() -> None:
    # Read leniently, both became U+FFFD and the dict kept the last value silently: a
    # repeat the hook never saw, since the keys differed while it ran.
    value = jsontext.loads('{"a": [{"k\\ud800": 1, "k\\ud801": 2}]}', strict=False, repeats="mark")
    assert value == {"a": [{"k\ufffd": 2}]}
    assert jsontext.repeated_key_paths(value) == [("a[0].k\ufffd", [1, 2])]
    details = jsontext.repeats_details(value)
    assert details is not None
    assert details.startswith('"a[0].k\\ufffd" is named more than once, with different values')
    assert "a lone surrogate in a key is read as U+FFFD" in details
    # A literal U+FFFD and a lone surrogate (UTF-8 encoded); a dropped value is replaced too.
    mixed = jsontext.loads(
        b'{"\\ufffd": "x", "\xed\xb0\x80": "y\\ud800"}', strict=False, repeats="mark"
    )
    assert jsontext.repeated_key_paths(mixed) == [("\ufffd", ["x", "y\ufffd"])]
    # One value: one key, as for any repeat of one value; "last" keeps the last.
    same = jsontext.loads('{"k\\ud800": [1], "k\\udc01": [1.0]}', strict=False, repeats="mark")
    assert type(same) is dict and same == {"k\ufffd": [1]}
    assert jsontext.loads('{"k\\ud800": 1, "k\\ud801": 2}', strict=False) == {"k\ufffd": 2}
    # Strict reading refuses them, as any lone surrogate.
    with pytest.raises(ValueError, match="lone surrogate"):
        jsontext.loads('{"k\\ud800": 1, "k\\ud801": 2}', repeats="mark")


def test_repeats_details_names_paths_and_withholds_secret_values() -> None:
    value = jsontext.loads(
        '{"key": "s1", "key": "s2", "rows": [{"n": 1, "n": 2}], "h": {"a": "t1", "a": "t2"}}',
        repeats="mark",
    )
    assert jsontext.repeats_details(value, withheld=frozenset({"key", "h"})) == (
        '"key" is named more than once, with different values; '
        '"rows[0].n" is named more than once, with different values (1, 2); '
        '"h.a" is named more than once, with different values'
    )
    assert jsontext.repeats_details(jsontext.loads('{"a": 1, "a": 1}', repeats="mark")) is None
    many = "{" + ", ".join(f'"k{i}": 1, "k{i}": 2' for i in range(7)) + "}"
    found = jsontext.repeats_details(jsontext.loads(many, repeats="mark"))
    assert found is not None and found.endswith(
        '"k4" is named more than once, with different values (1, 2); and 2 more'
    )
