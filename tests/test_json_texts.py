"""`_core.json_texts`: a pack answer's body and canonical texts in one pass, the same
texts as `json.dumps` writes (service.py `_answer`), or None for what it leaves to json."""

from __future__ import annotations

import enum
import json
import math
from typing import Any

import cartonize
from cartonize import _core
from cartonize.models import validate_request
from cartonize.service import (
    RESPONSE_VOLATILE_FIELDS,
    CanonicalRequest,
    PackService,
    canonical_json,
    response_fingerprint,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from bench import pack_speed

SKIP = sorted(RESPONSE_VOLATILE_FIELDS)


def _expected(value: Any, skip: list[str]) -> tuple[str, str]:
    kept = {k: v for k, v in value.items() if k not in skip} if isinstance(value, dict) else value
    return (
        json.dumps(value, ensure_ascii=False, separators=(",", ":")),
        canonical_json(kept).decode(),
    )


_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=8)
_leaf = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0.0, -0.0, 1e16, 1e-5, 1e-4, 123456789012345678.0, 5e-324, 1.7e308])
    | _text
)
_json = st.recursive(
    _leaf,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(_text | st.sampled_from(SKIP), inner, max_size=5)
    ),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(_json)
def test_the_texts_are_json_dumps_texts(value: Any) -> None:
    assert _core.json_texts(value, SKIP) == _expected(value, SKIP)


def test_control_characters_and_non_ascii_are_written_as_json_writes_them() -> None:
    value = {'k\u0001\u001f"\\\n\r\t\b\f\u007f': ["é ☃ 𝄞", "\u0000", "\u2028"], "a": 1}
    assert _core.json_texts(value, []) == _expected(value, [])


class _Size(enum.IntEnum):
    SMALL = 1


class _Text(str):
    pass


def test_what_json_writes_otherwise_is_left_to_it() -> None:
    for value in [
        {"x": math.nan},
        {"x": [math.inf]},
        {1: 2},
        {"x": _Size.SMALL},
        {"x": _Text("a")},
        {"x": object()},
        {"x": "\ud800"},
        {"x": 1.5, ("a",): 2},
    ]:
        assert _core.json_texts(value, []) is None


def test_a_pack_answers_text_is_the_one_json_dumps_wrote(tmp_path: Any) -> None:
    from cartonize.service import PackLog
    from cartonize.store import Store

    store = Store(tmp_path / "data")
    store.migrate()
    service = PackService(cartonize.pack, PackLog(store))
    for seed in (1, 2):
        request = validate_request({**pack_speed.small_order(seed), "orderId": "ørder ☃"})
        canonical = CanonicalRequest.of(request)
        response, text = service.pack(request, None, canonical)
        # What _answer wrote before json_texts: the dump, then the three keys appended.
        stamped = (response.request_fingerprint, response.response_fingerprint)
        uuid = response.pack_uuid
        response.request_fingerprint = response.response_fingerprint = None
        response.pack_uuid = None
        wire = response.model_dump(mode="json", by_alias=True, exclude_none=True)
        wire["requestFingerprint"] = canonical.fingerprint
        wire["responseFingerprint"] = response_fingerprint(wire)
        wire["packUuid"] = uuid
        assert text == json.dumps(wire, ensure_ascii=False, separators=(",", ":"))
        assert stamped == (canonical.fingerprint, wire["responseFingerprint"])
        assert "ørder ☃" in text
