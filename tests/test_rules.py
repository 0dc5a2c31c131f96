"""Rules implemented so far: lock-orientation, and warnings for the rest."""

from typing import Any

import cartonize
import pytest
from cartonize.errors import InvalidRequest

from tests.validator import validate


def _request(free_axes: Any, box: tuple[float, float, float]) -> dict[str, Any]:
    return {
        "orderId": "rules",
        "itemSets": [
            {"refId": 1, "dimensions": {"x": 1, "y": 2, "z": 9}, "weight": 1, "quantity": 1}
        ],
        "boxTypes": [
            {"refId": 7, "dimensions": dict(zip("xyz", box, strict=True)), "weightMax": 100}
        ],
        "rules": [
            {"operation": "lock-orientation", "itemRefId": 1, "options": {"freeAxes": free_axes}}
        ],
    }


@pytest.mark.parametrize(
    ("free_axes", "box", "packed"),
    [
        ([], (1, 2, 9), True),  # as given
        ([], (9, 2, 1), False),  # only fits standing up
        ([0], (1, 9, 2), True),  # spin about the vertical axis
        ([0], (9, 2, 1), False),  # tipping over is not a spin about x
        ([2], (2, 1, 9), True),  # spin about z swaps x and y
        ([0, 1], (9, 2, 1), True),  # two axes free every rotation
    ],
)
def test_lock_orientation_limits_rotations(
    free_axes: list[int], box: tuple[float, float, float], packed: bool
) -> None:
    request = _request(free_axes, box)
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    assert validate(request, response) == []
    assert response["lenLeftovers"] == (0 if packed else 1)


def test_unlocked_item_rotates_into_the_box() -> None:
    request = _request([], (9, 2, 1))
    request["rules"] = []
    assert cartonize.pack(request).len_leftovers == 0


def test_locked_items_keep_their_dimensions_as_given() -> None:
    request = _request([], (10, 10, 10))
    request["itemSets"][0]["quantity"] = 20
    response = cartonize.pack(request)
    dims = {
        (e.item.dimensions.x, e.item.dimensions.y, e.item.dimensions.z)
        for b in response.boxes
        for e in b.box.items
    }
    assert dims == {(1.0, 2.0, 9.0)}


def test_match_all_selects_every_item_set() -> None:
    request = _request([], (9, 2, 1))
    request["rules"][0].pop("itemRefId")
    request["rules"][0]["itemMatch"] = {"all": True}
    assert cartonize.pack(request).len_leftovers == 1


def test_bad_free_axes_is_a_422_naming_the_rule() -> None:
    with pytest.raises(InvalidRequest) as info:
        cartonize.pack(_request([3], (1, 2, 9)))
    assert "rules[0].options.freeAxes" in (info.value.details or "")


def test_operations_not_implemented_yet_are_named_in_warnings() -> None:
    request = _request([], (1, 2, 9))
    request["rules"].append({"operation": "fragile", "itemRefId": 1})
    warnings = cartonize.pack(request).warnings
    assert any("rules[1]" in w and "fragile" in w for w in warnings)
