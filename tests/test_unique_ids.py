"""uniqueIds stay unique and stable when rules pack a request in parts or change counts."""

from typing import Any

import cartonize

from tests.validator import validate

_BOX = {"refId": 7, "dimensions": {"x": 10, "y": 10, "z": 10}, "weightMax": 0}


def _unique_ids(request: dict[str, Any]) -> list[str]:
    request = {"orderId": "unique-ids", "includeImages": False, **request}
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    assert validate(request, response) == []
    ids = [e["item"]["uniqueId"] for b in response["boxes"] for e in b["box"]["items"]]
    return sorted([*ids, *(i["uniqueId"] for i in response["leftovers"])])


def _cubes(quantity: int, **extra: Any) -> dict[str, Any]:
    dims = {"x": 1, "y": 1, "z": 1}
    return {"refId": 1, "dimensions": dims, "weight": 1, "quantity": quantity, **extra}


def test_rolls_of_one_refid_number_on_past_the_rolls() -> None:
    fabric = {"refId": 1, "dimensions": {"x": 0.1, "y": 5, "z": 200}, "weight": 1, "quantity": 1}
    ids = _unique_ids(
        {
            "itemSets": [fabric, _cubes(1)],
            "boxTypes": [_BOX],
            "rules": [{"operation": "irregular", "itemRefId": 1, "options": {"maxDiameter": 3}}],
        }
    )
    # The fabric winds into 3 rolls (1-0..1-2); the cube sharing refId 1 is 1-3.
    assert ids == ["1-0", "1-1", "1-2", "1-3"]


def test_one_refid_in_a_stage_and_outside_keeps_distinct_numbers() -> None:
    ids = _unique_ids(
        {
            "itemSets": [_cubes(2, sequence="A"), _cubes(2)],
            "boxTypes": [_BOX],
            "rules": [{"operation": "pack-sequence", "itemSequence": "A", "options": {"index": 0}}],
        }
    )
    assert ids == ["1-0", "1-1", "1-2", "1-3"]


def test_a_reduced_refid_shared_by_two_sequences_numbers_on() -> None:
    small = {"refId": 7, "dimensions": {"x": 3, "y": 3, "z": 3}, "weightMax": 0}
    big = {"refId": 8, "dimensions": {"x": 10, "y": 10, "z": 10}, "weightMax": 0}

    def stage(selector: dict[str, Any], key: str, index: int, box: int, **options: Any) -> Any:
        return {
            "operation": "pack-sequence",
            **selector,
            "targetBoxRefIds": [box],
            "options": {"index": index, "key": key, **options},
        }

    reduce = {"reduce": "box-to-item", "reducedRefId": 50}
    ids = _unique_ids(
        {
            "itemSets": [
                {**_cubes(2, sequence="A")},
                {**_cubes(2, sequence="B"), "refId": 2},
            ],
            "boxTypes": [small, big],
            "rules": [
                stage({"itemSequence": "A"}, "a", 0, 7, **reduce),
                stage({"itemSequence": "B"}, "b", 0, 7, **reduce),
                stage({"itemRefId": 99}, "a", 1, 8),
                stage({"itemRefId": 99}, "b", 1, 8),
            ],
        }
    )
    assert ids == ["1-0", "1-1", "2-0", "2-1", "50-0", "50-1"]


def _ids_by_shape(request: dict[str, Any]) -> dict[str, tuple[float, ...]]:
    request = {"orderId": "unique-ids", "includeImages": False, **request}
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    assert validate(request, response) == []
    items = [e["item"] for b in response["boxes"] for e in b["box"]["items"]]
    return {i["uniqueId"]: tuple(sorted(i["dimensions"].values())) for i in items}


def test_sequence_sort_keeps_the_unit_numbers_of_request_order() -> None:
    # Two item sets of refId 4: the cube first, then the 1 x 1 x 2 brick. sequenceSort
    # packs the brick first (the larger, with no sequences), but numbers stay those of
    # the request: the cube is 4-0. They were 4-0 for the brick, which also linked a
    # pack-sequence stage's boxes to the wrong items standing for them.
    cube = {"refId": 4, "dimensions": {"x": 1, "y": 1, "z": 1}, "weight": 0, "quantity": 1}
    brick = {**cube, "dimensions": {"x": 1, "y": 1, "z": 2}}
    request = {"itemSets": [cube, brick], "boxTypes": [_BOX], "sequenceSort": True}
    assert _ids_by_shape(request) == {"4-0": (1, 1, 1), "4-1": (1, 1, 2)}


def test_boxes_reduced_under_sequence_sort_point_at_their_own_items() -> None:
    # Stage 0 ships three cube units, one alone and two as a 1 x 1 x 2 case, in their
    # own cartons; stage 1 takes both boxes as items of refId 9 (in a 1 x 1 x 2 and a
    # 1 x 1 x 1 carton). Each box's subspace names the item of its own size.
    request = {
        "orderId": "unique-ids",
        "includeImages": False,
        "itemSets": [
            {
                "refId": 1,
                "dimensions": {"x": 1, "y": 1, "z": 1},
                "weight": 0,
                "quantity": 3,
                "dimensionSets": [{}, {"axisMultipliers": {"x": 1, "y": 1, "z": 2}}],
            }
        ],
        "boxTypes": [{"refId": 100, "dimensions": {"x": 5, "y": 5, "z": 5}, "weightMax": 0}],
        "sequenceSort": True,
        "boxTypeGenerators": [{"operation": "pack-as-is", "boxTypeDefaults": {"price": 0}}],
        "rules": [
            {
                "operation": "pack-sequence",
                "itemRefId": 1,
                "options": {"index": 0, "reduce": "box-to-item", "reducedRefId": 9},
            },
            {"operation": "pack-sequence", "options": {"index": 1}},
        ],
    }
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    assert validate(request, response) == []
    boxes = [b["box"] for b in response["boxes"]]
    linked = [b for b in boxes if "subspace" in b]
    assert len(linked) == 2
    for box in linked:
        parent = boxes[box["subspace"]["parentBoxIndex"]]
        (item,) = [
            e["item"]
            for e in parent["items"]
            if e["item"]["index"] == box["subspace"]["parentItemIndex"]
        ]
        assert item["dimensions"] == box["dimensions"]
