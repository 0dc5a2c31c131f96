"""Each pack request option changes the packing the way the spec says: a request with
the option and one without differ as expected, and both pass the validator."""

from __future__ import annotations

from typing import Any

import cartonize
import pytest

from tests.validator import validate

Wire = dict[str, Any]


def _pack(request: Wire) -> Wire:
    response: Wire = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    assert validate(request, response) == []
    return response


def _locked(*item_sets: Wire) -> list[Wire]:
    return [
        {"operation": "lock-orientation", "itemRefId": s["refId"], "options": {"freeAxes": []}}
        for s in item_sets
    ]


def _items(response: Wire) -> list[Wire]:
    return [e["item"] for b in response["boxes"] for e in b["box"]["items"]]


# --- allowableOverhang -----------------------------------------------------------------

# Two 5-high slabs, 10x6 and 6x10 across, locked: they cannot share the floor of a 10-cube,
# and either one on top of the other sticks out 4 past it.
_WIDE = {"refId": 1, "dimensions": {"x": 5, "y": 10, "z": 6}, "weight": 1}
_LONG = {"refId": 2, "dimensions": {"x": 5, "y": 6, "z": 10}, "weight": 1}
OVERHANG_REQUEST: Wire = {
    "orderId": "overhang",
    "itemSets": [_WIDE, _LONG],
    "boxTypes": [{"refId": 9, "dimensions": {"x": 10, "y": 10, "z": 10}, "weightMax": 0}],
    "rules": _locked(_WIDE, _LONG),
    "includeImages": False,
}


@pytest.mark.parametrize(
    ("allowance", "boxes"),
    [
        (None, 1),  # default -1: no support check, one stacked box
        (-1, 1),
        (0, 2),  # full support: the slabs need a box each
        (3.9, 2),
        (4, 1),  # 4 of overhang allowed: stacked again
        (10, 1),
    ],
)
def test_allowable_overhang_limits_what_sticks_out(allowance: float | None, boxes: int) -> None:
    request = dict(OVERHANG_REQUEST)
    if allowance is not None:
        request["allowableOverhang"] = allowance
    response = _pack(request)
    assert response["lenBoxes"] == boxes
    assert response["lenLeftovers"] == 0
    messages = [i.get("message") for i in _items(response)]
    if allowance is None or allowance < 0:
        assert messages == [None] * len(messages)
    elif boxes == 1:
        assert sorted(messages) == [
            "support: 100% of base on the box floor",
            "support: 60% of base on 1 item",
        ]
    else:
        assert messages == ["support: 100% of base on the box floor"] * 2


def test_full_support_packs_many_mixed_items_validly() -> None:
    # Mixed sizes force stacking on uneven tops; every item must still rest fully.
    item_sets = [
        {"refId": r, "dimensions": {"x": x, "y": y, "z": z}, "weight": 1, "quantity": q}
        for r, (x, y, z, q) in enumerate(
            [(3, 4, 5, 12), (2, 7, 3, 10), (5, 5, 5, 6), (1.5, 9, 4, 8), (4, 2, 2, 20)], start=1
        )
    ]
    request: Wire = {
        "orderId": "support",
        "itemSets": item_sets,
        "boxTypes": [{"refId": 9, "dimensions": {"x": 12, "y": 14, "z": 16}, "weightMax": 0}],
        "allowableOverhang": 0,
        "includeImages": False,
    }
    with_check = _pack(request)
    without = _pack({**request, "allowableOverhang": -1})
    assert with_check["lenLeftovers"] == without["lenLeftovers"] == 0
    messages = [i["message"] for i in _items(with_check)]
    assert all(m.startswith("support: 100% of base") for m in messages), messages
    # Without the check the validator, asked about full support, finds overhangs.
    strict = {**request, "allowableOverhang": 0}
    assert any(p.startswith("support:") for p in validate(strict, without))


def test_a_negative_allowance_other_than_minus_one_is_a_warning() -> None:
    response = cartonize.pack({**OVERHANG_REQUEST, "allowableOverhang": -0.5})
    assert response.len_boxes == 1
    assert any("allowableOverhang -0.5" in w for w in response.warnings)
