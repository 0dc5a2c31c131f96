"""`random: true` creates n item sets of quantity n, the same ones for the same seed."""

from typing import Any

import cartonize
import pytest
from cartonize.errors import InvalidRequest

from tests.validator import validate

BOX = {"refId": 1, "dimensions": {"x": 20, "y": 20, "z": 20}, "weightMax": 0}


def _placed(request: dict[str, Any]) -> list[tuple[str, tuple[float, ...], tuple[float, ...]]]:
    response = cartonize.pack(request)
    return [
        (
            e.item.unique_id or "",
            (e.item.dimensions.x, e.item.dimensions.y, e.item.dimensions.z),
            (e.item.origin.x, e.item.origin.y, e.item.origin.z) if e.item.origin else (),
        )
        for b in response.boxes
        for e in b.box.items
    ]


def test_n_item_sets_of_quantity_n() -> None:
    request = {"random": True, "n": 4, "boxTypes": [BOX]}
    response = cartonize.pack(request)
    assert response.len_items == 16
    ref_ids = {e.item.ref_id for b in response.boxes for e in b.box.items}
    ref_ids |= {i.ref_id for i in response.leftovers}
    assert ref_ids == {0, 1, 2, 3}
    sides = [
        s
        for b in response.boxes
        for e in b.box.items
        for s in (e.item.dimensions.x, e.item.dimensions.y, e.item.dimensions.z)
    ]
    assert max(sides) <= 10  # randomMaxDimension defaults to 10
    assert validate(request, response.model_dump(by_alias=True, exclude_none=True)) == []


def test_same_seed_same_items_other_seed_other_items() -> None:
    base = {"random": True, "n": 6, "boxTypes": [BOX]}
    assert _placed(base) == _placed(dict(base))
    assert _placed({**base, "seedValue": 2}) != _placed(base)


def test_seed_from_order_id() -> None:
    base = {"random": True, "n": 6, "boxTypes": [BOX], "seedFromOrderId": True}
    a = _placed({**base, "orderId": "A-1"})
    assert a == _placed({**base, "orderId": "A-1"})
    assert a != _placed({**base, "orderId": "B-2"})


def test_limits_bound_the_random_items() -> None:
    request = {
        "random": True,
        "n": 5,
        "randomMaxDimension": 3,
        "randomMaxWeight": 2,
        "randomMaxQuantity": 2,
        "boxTypes": [BOX],
    }
    response = cartonize.pack(request)
    items = [e.item for b in response.boxes for e in b.box.items]
    assert all(max(i.dimensions.x, i.dimensions.y, i.dimensions.z) <= 3 for i in items)
    assert all(1 <= i.weight <= 2 for i in items)
    assert 5 <= response.len_items <= 10


def test_bounds_that_would_draw_items_no_model_takes_are_refused() -> None:
    # Sides above the longest length and weights above the heaviest weight were drawn,
    # then refused as items: a 500 on POST / (schemathesis). They are a 422 on the field.
    box = {"refId": 1, "dimensions": {"x": 10, "y": 10, "z": 10}, "weightMax": 0}
    for field, value in (("randomMaxDimension", 10**10), ("randomMaxWeight", 10**400)):
        request = {"random": True, "n": 2, "boxTypes": [box], field: value}
        with pytest.raises(InvalidRequest) as refused:
            cartonize.pack(request)
        assert field in str(refused.value.details)
    at_most = {"random": True, "n": 2, "boxTypes": [box], "randomMaxWeight": 10**12}
    assert cartonize.pack({**at_most, "includeImages": False}).len_leftovers == 0
