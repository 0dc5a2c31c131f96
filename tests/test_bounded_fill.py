"""Rule bounded-fill: soft units keep their volume and take the shape of the free space."""

from typing import Any

import cartonize
import pytest
from cartonize.errors import InvalidRequest

from tests.validator import validate


def _request(
    pillow: tuple[float, float, float], quantity: int = 1, **options: Any
) -> dict[str, Any]:
    return {
        "orderId": "bounded-fill",
        "includeImages": False,
        "itemSets": [
            {"refId": 1, "name": "block", "dimensions": {"x": 6, "y": 10, "z": 10}, "weight": 5},
            {
                "refId": 2,
                "name": "pillow",
                "dimensions": dict(zip("xyz", pillow, strict=True)),
                "weight": 1,
                "quantity": quantity,
            },
        ],
        "boxTypes": [
            {"refId": 7, "dimensions": {"x": 10, "y": 10, "z": 10}, "weightMax": 100, "price": 100}
        ],
        "rules": [{"operation": "bounded-fill", "itemRefId": 2, "options": options}],
    }


def _pack(request: dict[str, Any]) -> dict[str, Any]:
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    assert validate(request, response) == []
    return response


def _pillows(response: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        e["item"] for b in response["boxes"] for e in b["box"]["items"] if e["item"]["refId"] == 2
    ]


def test_a_pillow_too_tall_for_the_gap_lies_flat_in_it() -> None:
    # 5 x 5 x 5 does not fit the 4-high gap above the block; flattened it is 1.25 high.
    response = _pack(_request((5, 5, 5)))
    assert response["lenBoxes"] == 1
    (pillow,) = _pillows(response)
    assert pillow["origin"] == {"x": 6.0, "y": 0.0, "z": 0.0}
    assert pillow["dimensions"] == {"x": 1.25, "y": 10.0, "z": 10.0}
    assert response["boxes"][0]["box"]["volumeNet"] == 725.0
    assert response["boxes"][0]["box"]["weightUsed"] == 6.0


def test_without_the_rule_the_pillow_needs_a_second_box() -> None:
    request = _request((5, 5, 5))
    request["rules"] = []
    assert _pack(request)["lenBoxes"] == 2


@pytest.mark.parametrize(("distance", "boxes"), [(None, 1), (5, 1), (4, 2)])
def test_max_sequence_distance_keeps_soft_units_apart(distance: int | None, boxes: int) -> None:
    # Regression (found by test_properties): the pillow (sequence 105) went into the
    # block's box (100) whatever maxSequenceDistance said.
    request = _request((5, 5, 5))
    request["itemSets"][0]["sequence"] = "100"
    request["itemSets"][1]["sequence"] = "105"
    if distance is not None:
        request["maxSequenceDistance"] = distance
    assert _pack(request)["lenBoxes"] == boxes


def test_the_critical_axis_keeps_its_dimension() -> None:
    response = _pack(_request((4, 4, 5), quantity=2, criticalAxis=1))
    pillows = _pillows(response)
    assert response["lenBoxes"] == 1
    # y stays 4; z fills the box's 10, so x is 80 / 40 = 2.
    assert [p["dimensions"] for p in pillows] == [{"x": 2.0, "y": 4.0, "z": 10.0}] * 2
    assert sorted(p["uniqueId"] for p in pillows) == ["2-0", "2-1"]


def test_units_no_space_takes_pack_on_their_own_as_given() -> None:
    # Volume 500 each: the 400 left above the block takes none of them.
    response = _pack(_request((5, 10, 10), quantity=2))
    assert response["lenBoxes"] == 2
    pillows = _pillows(response)
    assert sorted(p["uniqueId"] for p in pillows) == ["2-0", "2-1"]
    assert all(p["dimensions"] in ({"x": 5.0, "y": 10.0, "z": 10.0},) for p in pillows)


def test_the_box_weight_limit_holds() -> None:
    request = _request((5, 5, 5))
    request["boxTypes"][0]["weightMax"] = 5.5
    response = _pack(request)
    assert response["lenBoxes"] == 2


def test_lock_orientation_wins_over_bounded_fill() -> None:
    request = _request((5, 5, 5))
    request["rules"].append({"operation": "lock-orientation", "itemRefId": 2})
    response = _pack(request)
    assert response["lenBoxes"] == 2
    assert any("lock-orientation wins" in w for w in response["warnings"])


def test_rated_box_cost_follows_the_added_weight() -> None:
    request = _request((5, 5, 5))
    request["boxTypes"][0]["rateTable"] = {"weights": [5, 10], "rates": [100, 200]}
    response = _pack(request)
    box = response["boxes"][0]["box"]
    # 6 in all: the 10 breakpoint's rate plus the price.
    assert box["price"] == 300
    assert response["totalCost"] == 300
    assert _pillows(response)[0]["deltaCost"] == 100


@pytest.mark.parametrize("axis", [3, -1, "y", True])
def test_malformed_critical_axis_is_a_422(axis: object) -> None:
    with pytest.raises(InvalidRequest) as info:
        cartonize.pack(_request((5, 5, 5), criticalAxis=axis))
    assert "rules[0].options.criticalAxis" in (info.value.details or "")


def test_soft_units_keep_cohort_max() -> None:
    # Soft units placed after the engine's pack keep their item set within cohortMax
    # face-connected groups per box (found by the property tests: three groups of two).
    request = {
        "orderId": "fill-cohorts",
        "includeImages": False,
        "itemSets": [
            {"refId": 0, "dimensions": {"x": 2, "y": 7, "z": 1}, "weight": 0, "quantity": 4},
            {"refId": 4, "dimensions": {"x": 4, "y": 4, "z": 8}, "weight": 0, "quantity": 10},
        ],
        "boxTypes": [
            {"refId": 1, "dimensions": {"x": 5, "y": 5, "z": 5}, "weightMax": 0},
            {"refId": 2, "dimensions": {"x": 28, "y": 7, "z": 32}, "weightMax": 0},
        ],
        "packOrigin": {"x": 4, "y": 8, "z": 0},
        "cohortPacking": True,
        "rules": [{"operation": "bounded-fill", "itemRefId": 4}],
    }
    response = _pack(request)
    assert response["lenLeftovers"] == 0


@pytest.mark.parametrize(("distance", "boxes"), [(1, 1), (0, 2)])
def test_a_fill_unit_keeps_the_sequence_distance(distance: int, boxes: int) -> None:
    # The block is sequence 0101, the pillow 0102: with a distance of 1 the pillow fills
    # the block's box, with 0 it may not share it and packs on its own.
    request = {**_request((2, 5, 5)), "maxSequenceDistance": distance}
    request["itemSets"][0]["sequence"] = "0101"
    request["itemSets"][1]["sequence"] = "0102"
    assert _pack(request)["lenBoxes"] == boxes


def test_a_soft_unit_has_its_centre_of_mass_in_the_middle_of_its_shape() -> None:
    # Found by make fuzz (seed 306): a 1 x 1 x 23 unit with its centre of mass at a corner
    # fills the space beside a post as 1 x 23 x 1. The shape is the space's, so the centre
    # is its middle; the given corner does not follow it (the validator agrees).
    request = {
        "includeImages": False,
        "itemSets": [
            {"refId": 1, "dimensions": {"x": 1, "y": 6, "z": 1}, "weight": 0},
            {
                "refId": 2,
                "dimensions": {"x": 1, "y": 1, "z": 23},
                "weight": 0,
                "centerOfMass": {"x": 0, "y": 0, "z": 0},
            },
        ],
        "boxTypes": [{"refId": 7, "dimensions": {"x": 5, "y": 23, "z": 5}, "weightMax": 0}],
        "rules": [{"operation": "bounded-fill", "itemRefId": 2, "options": {"criticalAxis": 0}}],
    }
    (soft,) = _pillows(_pack(request))
    assert soft["dimensions"] == {"x": 1, "y": 23, "z": 1}
    assert soft["centerOfMass"] == {"x": 0.5, "y": 11.5, "z": 1.5}
