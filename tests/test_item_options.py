"""Item, sequence and time options change the packing the way the spec says: a request
with the option and one without differ as expected, and both pass the validator."""

from __future__ import annotations

from typing import Any

import cartonize
import pytest

from tests.test_render import face_polygons, hex_rgb
from tests.validator import validate

Wire = dict[str, Any]


def _pack(request: Wire) -> Wire:
    response: Wire = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    assert validate(request, response) == []
    return response


def _items(response: Wire) -> list[Wire]:
    return [e["item"] for b in response["boxes"] for e in b["box"]["items"]]


def _cube(ref_id: int, side: float, sequence: str | None = None, quantity: int = 1) -> Wire:
    item: Wire = {
        "refId": ref_id,
        "dimensions": {"x": side, "y": side, "z": side},
        "weight": 1,
        "quantity": quantity,
    }
    if sequence is not None:
        item["sequence"] = sequence
    return item


def _box(side: float) -> Wire:
    return {"refId": 99, "dimensions": {"x": side, "y": side, "z": side}, "weightMax": 0}


# --- sequenceSort ------------------------------------------------------------------------

# Sequence order (small, middle, big) is the reverse of volume order.
SEQUENCED: Wire = {
    "orderId": "sequence-sort",
    "itemSets": [_cube(3, 3, "0300"), _cube(1, 1, "0100"), _cube(2, 2, "0200")],
    "boxTypes": [_box(10)],
    "includeImages": False,
}


def _packed_order(response: Wire) -> list[int]:
    return [i["refId"] for i in sorted(_items(response), key=lambda i: i["packedIndex"])]


@pytest.mark.parametrize(
    ("options", "order", "sort_used"),
    [
        ({}, [3, 2, 1], "default"),  # combined: largest first
        ({"itemSort": "default"}, [3, 2, 1], "default"),
        ({"sequenceSort": True}, [1, 2, 3], "sequence"),
        ({"sequenceSort": True, "itemSortReverse": True}, [3, 2, 1], "sequence"),
        ({"sequenceSort": False}, [3, 2, 1], "default"),
    ],
)
def test_sequence_sort_packs_in_sequence_order(
    options: Wire, order: list[int], sort_used: str
) -> None:
    response = _pack({**SEQUENCED, **options})
    assert _packed_order(response) == order
    assert response["itemSortUsed"] == sort_used


def test_sequence_sort_over_an_explicit_item_sort_warns() -> None:
    response = _pack({**SEQUENCED, "sequenceSort": True, "itemSort": "weight"})
    assert _packed_order(response) == [1, 2, 3]
    assert any("itemSort 'weight' is not used" in w for w in response["warnings"])
    quiet = _pack({**SEQUENCED, "sequenceSort": True})
    assert not any("sequenceSort" in w for w in quiet["warnings"])


def test_sequence_sort_numbers_before_text_before_none() -> None:
    item_sets = [_cube(1, 1), _cube(2, 1, "B7"), _cube(3, 1, "12"), _cube(4, 1, "0009")]
    response = _pack({**SEQUENCED, "itemSets": item_sets, "sequenceSort": True})
    assert _packed_order(response) == [4, 3, 2, 1]


# --- maxSequenceDistance -----------------------------------------------------------------

# Three aisle-bin sequences that fit one box together: 0401 and 1228 differ by 827.
DISTANCED: Wire = {
    "orderId": "sequence-distance",
    "itemSets": [_cube(1, 2, "0401"), _cube(2, 2, "1228"), _cube(3, 2, "0450", quantity=2)],
    "boxTypes": [_box(10)],
    "includeImages": False,
}


def _sequences_per_box(response: Wire) -> list[set[str]]:
    return sorted(
        ({e["item"]["sequence"] for e in b["box"]["items"]} for b in response["boxes"]),
        key=sorted,
    )


@pytest.mark.parametrize(
    ("distance", "boxes"),
    [
        (None, [{"0401", "0450", "1228"}]),
        (827, [{"0401", "0450", "1228"}]),  # exactly the limit: allowed
        (826, [{"0401", "0450"}, {"1228"}]),
        (49, [{"0401", "0450"}, {"1228"}]),
        (48, [{"0401"}, {"0450"}, {"1228"}]),
        (0, [{"0401"}, {"0450"}, {"1228"}]),  # equal sequences still share a box
    ],
)
def test_max_sequence_distance_splits_far_sequences(
    distance: int | None, boxes: list[set[str]]
) -> None:
    request = dict(DISTANCED)
    if distance is not None:
        request["maxSequenceDistance"] = distance
    response = _pack(request)
    assert _sequences_per_box(response) == boxes
    assert response["lenLeftovers"] == 0


def test_max_sequence_distance_ignores_text_and_missing_sequences_with_a_warning() -> None:
    item_sets = [_cube(1, 2, "A-11"), _cube(2, 2, "B-40"), _cube(3, 2), _cube(4, 2, "0100")]
    response = _pack({**DISTANCED, "itemSets": item_sets, "maxSequenceDistance": 0})
    assert response["lenBoxes"] == 1
    assert any("'A-11', 'B-40' are not numbers" in w for w in response["warnings"])


def test_sequence_distance_and_sequence_sort_combine() -> None:
    response = _pack({**DISTANCED, "maxSequenceDistance": 49, "sequenceSort": True})
    assert _sequences_per_box(response) == [{"0401", "0450"}, {"1228"}]
    assert _packed_order(response) == [1, 3, 3, 2]


# --- sequenceHeatMap ---------------------------------------------------------------------

# Four green cubes in two boxes: the ramp runs over all boxes, lowest sequence darkest;
# numbers rank by value (950 below 1228, though not in text order), text above them, an
# item without a sequence is grey.
HEATED: Wire = {
    "orderId": "heat-map",
    "itemSets": [
        {**_cube(n, 1, seq), "color": "#00ff00"}
        for n, seq in enumerate(["1228", "0401", "B-7", "950", None])
    ],
    "boxTypes": [{"refId": 99, "dimensions": {"x": 1, "y": 1, "z": 3}, "weightMax": 0}],
}


def _top_fills(response: Wire) -> dict[str | None, tuple[int, int, int]]:
    """The top-face colour of each packed item, by its sequence."""
    fills: dict[str | None, tuple[int, int, int]] = {}
    for box in response["boxes"]:
        faces = face_polygons(box["box"]["svg"])
        for entry in box["box"]["items"]:
            item = entry["item"]
            fills[item.get("sequence")] = hex_rgb(faces[item["index"]][0][0])
    return fills


@pytest.mark.parametrize("heat_map", [None, False, True])
def test_sequence_heat_map_colours_by_sequence(heat_map: bool | None) -> None:
    request = dict(HEATED)
    if heat_map is not None:
        request["sequenceHeatMap"] = heat_map
    response = _pack(request)
    assert response["lenBoxes"] == 2
    fills = _top_fills(response)
    if not heat_map:
        # The items' own colour: every top face is the same lightened green.
        assert len(set(fills.values())) == 1
        return
    light = {s: sum(rgb) for s, rgb in fills.items()}
    assert light["0401"] < light["950"] < light["1228"] < light["B-7"]
    assert len(set(fills[None])) == 1  # grey
    assert all(rgb[1] < 255 for rgb in fills.values())  # no item keeps its green
