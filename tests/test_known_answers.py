"""Known answers: small packs whose right result can be worked out by hand."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import cartonize
import pytest

from tests.validator import validate

Wire = dict[str, Any]


def pack_wire(request: Wire) -> Wire:
    """Pack ``request`` and return the response as wire JSON (camelCase, no nulls)."""
    response: Wire = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    return response


def cube(side: float) -> dict[str, float]:
    """A Point with all three axes equal."""
    return {"x": side, "y": side, "z": side}


def items(ref_id: int, dims: dict[str, float], quantity: int, weight: float = 1) -> Wire:
    """An ItemSet."""
    return {"refId": ref_id, "dimensions": dims, "weight": weight, "quantity": quantity}


def box(ref_id: int, dims: dict[str, float], weight_max: float = 1000, **extra: Any) -> Wire:
    """A BoxType; ``extra`` adds fields such as price or weightTare."""
    return {"refId": ref_id, "dimensions": dims, "weightMax": weight_max, **extra}


def request(item_sets: list[Wire], box_types: list[Wire], **options: Any) -> Wire:
    """A pack request without images (rendering is not under test here)."""
    return {"itemSets": item_sets, "boxTypes": box_types, "includeImages": False, **options}


@dataclass(frozen=True)
class KnownAnswer:
    """A request and the response fields it must produce."""

    request: Wire
    expected: dict[str, Any]
    box_ref_ids: list[int] | None = None  # refIds of the boxes used, sorted
    leftover_ref_ids: list[int] = field(default_factory=list)  # one entry per unit


# Eight cubes of side 5 and no cheaper box than the 1000-cost 10-cube: lowest-cost opens
# eight small boxes (8 x 10 = 80), most-items one big box.
CHEAP_SMALL_DEAR_BIG = (
    [items(1, cube(5), 8)],
    [box(1, cube(5), price=10), box(2, cube(10), price=1000)],
)

CASES = {
    "8 cubes of 5 fill a 10-cube": KnownAnswer(
        request([items(1, cube(5), 8)], [box(1, cube(10))]),
        {"lenBoxes": 1, "lenLeftovers": 0, "totalVolume": 1000, "totalVolumeNet": 1000},
    ),
    "27 unit cubes fill a 3-cube": KnownAnswer(
        request([items(1, cube(1), 27)], [box(1, cube(3))]),
        {"lenBoxes": 1, "lenLeftovers": 0, "totalVolume": 27, "totalVolumeNet": 27},
    ),
    "an item larger than every box is a leftover": KnownAnswer(
        request(
            [items(1, cube(2), 3), items(2, {"x": 1, "y": 1, "z": 12}, 1)],
            [box(1, cube(10)), box(2, cube(6))],
        ),
        {"lenBoxes": 1, "lenLeftovers": 1, "lenItems": 4, "totalVolumeNet": 24},
        leftover_ref_ids=[2],
    ),
    "lowest-cost takes the cheaper box, even when it is larger": KnownAnswer(
        request(
            [items(1, cube(4), 1)],
            [box(1, cube(6), price=500), box(2, cube(10), price=200)],
            boxTypeChoiceGoal="lowest-cost",
        ),
        {"lenBoxes": 1, "totalCost": 200},
        box_ref_ids=[2],
    ),
    "lowest-cost opens many cheap boxes": KnownAnswer(
        request(*CHEAP_SMALL_DEAR_BIG, boxTypeChoiceGoal="lowest-cost"),
        {"lenBoxes": 8, "totalCost": 80},
        box_ref_ids=[1] * 8,
    ),
    "most-items opens one dear box": KnownAnswer(
        request(*CHEAP_SMALL_DEAR_BIG, boxTypeChoiceGoal="most-items"),
        {"lenBoxes": 1, "totalCost": 1000},
        box_ref_ids=[2],
    ),
    "no price and no rate table: cost is the volume": KnownAnswer(
        request([items(1, cube(2), 1)], [box(1, {"x": 4, "y": 5, "z": 6})]),
        {"lenBoxes": 1, "totalCost": 120, "totalVolume": 120},
    ),
    "the tare counts: one 20-weight item per box": KnownAnswer(
        # Two items (40) fit 50 alone, but not with the 25 tare.
        request([items(1, cube(1), 3, weight=20)], [box(1, cube(10), 50, weightTare=25)]),
        {"lenBoxes": 3, "lenLeftovers": 0, "totalWeight": 3 * 45},
    ),
    "an item heavier than any box is a leftover": KnownAnswer(
        request(
            [items(1, cube(1), 2, weight=10), items(2, cube(1), 1, weight=60)],
            [box(1, cube(10), 50)],
        ),
        {"lenBoxes": 1, "lenLeftovers": 1, "totalWeight": 20},
        leftover_ref_ids=[2],
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_known_answer(name: str) -> None:
    case = CASES[name]
    response = pack_wire(case.request)
    assert validate(case.request, response) == []
    for key, value in case.expected.items():
        assert response[key] == pytest.approx(value), key
    if case.box_ref_ids is not None:
        assert sorted(b["box"]["refId"] for b in response["boxes"]) == case.box_ref_ids
    leftovers = sorted(
        left["refId"] for left in response["leftovers"] for _ in range(left.get("quantity", 1))
    )
    assert leftovers == case.leftover_ref_ids


def test_item_sets_sharing_a_ref_id_get_distinct_unique_ids() -> None:
    request = {
        "itemSets": [
            {"refId": 1, "dimensions": {"x": 1, "y": 1, "z": 1}, "weight": 1, "quantity": 2},
            {"refId": 1, "dimensions": {"x": 2, "y": 2, "z": 2}, "weight": 1, "quantity": 2},
        ],
        "boxTypes": [{"refId": 1, "dimensions": {"x": 5, "y": 5, "z": 5}, "weightMax": 0}],
    }
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    ids = [e["item"]["uniqueId"] for b in response["boxes"] for e in b["box"]["items"]]
    assert sorted(ids) == ["1-0", "1-1", "1-2", "1-3"]
    assert validate(request, response) == []
