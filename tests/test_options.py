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


# --- count limits ----------------------------------------------------------------------


def _cubes(side: float, box: tuple[float, float, float], *counts: int, **extra: Any) -> Wire:
    """Item sets of ``side``-cubes (refIds 1, 2, ...) into one box type (refId 9)."""
    return {
        "orderId": "limits",
        "itemSets": [
            {
                "refId": r,
                "dimensions": {"x": side, "y": side, "z": side},
                "weight": 1,
                "quantity": q,
            }
            for r, q in enumerate(counts, start=1)
        ],
        "boxTypes": [
            {"refId": 9, "dimensions": dict(zip("xyz", box, strict=True)), "weightMax": 0}
        ],
        "includeImages": False,
        **extra,
    }


def _per_box(response: Wire) -> list[int]:
    return [len(b["box"]["items"]) for b in response["boxes"]]


@pytest.mark.parametrize(
    ("request_", "per_box", "leftover_message"),
    [
        # Ten 5-cubes: eight fill a 10-cube, two need a second box.
        (_cubes(5, (10, 10, 10), 10), [8, 2], None),
        (_cubes(5, (10, 10, 10), 10, boxesMax=0), [8, 2], None),
        (_cubes(5, (10, 10, 10), 10, boxesMax=1), [8], "boxesMax 1 reached"),
        (_cubes(5, (10, 10, 10), 10, boxesMax=2), [8, 2], None),
        # One item set may spread across one box only.
        (_cubes(5, (10, 10, 10), 10, boxesPerItemSetMax=1), [8], "boxesPerItemSetMax 1"),
        # Two sets: each goes whole into a box rather than being split at its last box.
        (_cubes(5, (10, 10, 10), 6, 4, boxesPerItemSetMax=1), [6, 4], None),
        (_cubes(5, (10, 10, 10), 10, boxesPerSequenceMax=1), [8, 2], None),  # no sequences
    ],
)
def test_box_count_limits_turn_excess_items_into_leftovers(
    request_: Wire, per_box: list[int], leftover_message: str | None
) -> None:
    response = _pack(request_)
    assert _per_box(response) == per_box
    messages = [left["message"] for left in response["leftovers"]]
    if leftover_message is None:
        assert messages == []
    else:
        assert messages and all(leftover_message in m for m in messages), messages


def test_boxes_per_sequence_max_counts_items_sharing_a_sequence() -> None:
    request = _cubes(5, (10, 10, 10), 6, 6, boxesPerSequenceMax=1)
    for item_set in request["itemSets"]:
        item_set["sequence"] = "0101"
    response = _pack(request)
    assert _per_box(response) == [8]
    assert len(response["leftovers"]) == 4
    assert all("boxesPerSequenceMax 1" in left["message"] for left in response["leftovers"])
    request["itemSets"][1]["sequence"] = "0102"  # two sequences: one box each is enough
    response = _pack(request)
    assert (_per_box(response), response["lenLeftovers"]) == ([6, 6], 0)


def test_a_box_count_limit_never_leaves_over_what_the_unlimited_request_fits() -> None:
    # 15 units that one 100 x 150 x 200 carton holds only after the search merges a
    # first fill's two boxes: "does this order fit in one carton?" must say yes.
    request: Wire = {
        "itemSets": [
            {"refId": 74, "dimensions": {"x": 22, "y": 159, "z": 34}, "weight": 12, "quantity": 9},
            {
                "refId": 155,
                "dimensions": {"x": 42, "y": 36, "z": 120},
                "weight": 136,
                "quantity": 6,
            },
        ],
        "boxTypes": [
            {
                "refId": 100,
                "dimensions": {"x": 100, "y": 150, "z": 200},
                "price": 25,
                "weightTare": 60,
                "weightMax": 30000,
            }
        ],
        "itemInitialOrientationPreferred": False,
        "includeImages": False,
    }
    unlimited = _pack(request)
    assert (unlimited["lenBoxes"], unlimited["lenLeftovers"]) == (1, 0)
    for limits in ({"boxesMax": 1}, {"boxesPerItemSetMax": 1}, {"boxesMax": 1, "timeout": 1}):
        limited = _pack({**request, **limits})
        assert (limited["lenBoxes"], limited["lenLeftovers"]) == (1, 0), limits
        assert limited["totalCost"] == unlimited["totalCost"]


@pytest.mark.parametrize(
    ("request_", "box_caps", "per_box"),
    [
        (_cubes(1, (10, 10, 10), 8), {}, [8]),
        (_cubes(1, (10, 10, 10), 8, itemsPerBoxMax=3), {}, [3, 3, 2]),
        (_cubes(1, (10, 10, 10), 8, itemsPerBoxMax=-1), {}, [8]),
        (_cubes(1, (10, 10, 10), 8, itemsPerBoxMax=3), {"itemsPerBoxMax": 4}, [4, 4]),
        # The box type's 0 (no limit) wins over the request's 3.
        (_cubes(1, (10, 10, 10), 8, itemsPerBoxMax=3), {"itemsPerBoxMax": 0}, [8]),
        (_cubes(1, (10, 10, 10), 1, 1, 1), {}, [3]),
        (_cubes(1, (10, 10, 10), 1, 1, 1, itemSetsPerBoxMax=1), {}, [1, 1, 1]),
        (_cubes(1, (10, 10, 10), 2, 1, 1, itemSetsPerBoxMax=2), {}, [3, 1]),
        (_cubes(1, (10, 10, 10), 1, 1, 1, itemSetsPerBoxMax=1), {"itemSetsPerBoxMax": 3}, [3]),
    ],
)
def test_per_box_caps_with_box_level_overrides(
    request_: Wire, box_caps: Wire, per_box: list[int]
) -> None:
    request_["boxTypes"][0].update(box_caps)
    response = _pack(request_)
    assert sorted(_per_box(response), reverse=True) == per_box
    assert response["lenLeftovers"] == 0


@pytest.mark.parametrize(
    ("box", "count", "inline", "box_inline", "boxes"),
    [
        ((2, 1, 1), 2, None, None, 1),  # two cubes stack in a 2-high box
        ((2, 1, 1), 2, [1, 0, 0], None, 2),  # one high: no stacking
        ((2, 1, 1), 2, [2, 0, 0], None, 1),
        ((2, 1, 1), 2, [1, 0, 0], [0, 0, 0], 1),  # the box type's list wins
        ((1, 3, 1), 3, [0, 2, 0], None, 2),  # two wide
        ((1, 1, 3), 3, [0, 0, 1], None, 3),  # one deep
        ((1, 1, 3), 3, [1, 1, 0], None, 1),  # limits on other axes do not matter
    ],
)
def test_items_inline_max_limits_items_on_a_line(
    box: tuple[float, float, float],
    count: int,
    inline: list[int] | None,
    box_inline: list[int] | None,
    boxes: int,
) -> None:
    request = _cubes(1, box, count)
    if inline is not None:
        request["itemsInlineMax"] = inline
    if box_inline is not None:
        request["boxTypes"][0]["itemsInlineMax"] = box_inline
    response = _pack(request)
    assert (response["lenBoxes"], response["lenLeftovers"]) == (boxes, 0)


def test_validator_catches_broken_limits() -> None:
    # A pack made without the limits, judged against a request that has them.
    request = _cubes(5, (10, 10, 10), 10)
    response = _pack(request)
    limited = {
        **request,
        "boxesMax": 1,
        "itemsPerBoxMax": 4,
        "itemsInlineMax": [1, 0, 0],
        "boxesPerItemSetMax": 1,
    }
    rules = {p.split(":")[0] for p in validate(limited, response)}
    assert {"box-spread", "box-caps", "inline"} <= rules
