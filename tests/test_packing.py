"""How pack() builds the response objects: the fields each unit sets, its numbering."""

from __future__ import annotations

import cartonize
from cartonize.models import Item, ItemSet
from cartonize.packing import _LEFTOVER_FIELDS, _PACKED_FIELDS, _UNIT_FIELDS, _Kind


def test_unit_fields_are_those_a_kind_repeats_and_its_unique_id() -> None:
    kind = _Kind(3, ItemSet.model_validate({"dimensions": {"x": 1, "y": 1, "z": 1}, "weight": 1}))
    assert {*kind.echo, "unique_id"} == _UNIT_FIELDS
    assert Item.model_fields.keys() >= _PACKED_FIELDS | _LEFTOVER_FIELDS


def test_units_set_their_fields_and_are_numbered_across_boxes() -> None:
    cube = {"dimensions": {"x": 2, "y": 2, "z": 2}, "weight": 1.0}
    response = cartonize.pack(
        {
            "orderId": "numbering",
            "includeImages": False,
            "itemSets": [{"refId": 1, **cube, "quantity": 3}, {"refId": 2, **cube, "quantity": 2}],
            "boxTypes": [{"refId": 9, "dimensions": {"x": 2, "y": 2, "z": 4}, "weightMax": 10}],
            "boxesMax": 2,
        }
    )
    items = [e.item for b in response.boxes for e in b.box.items]
    assert [i.index for i in items] == [i.global_id for i in items] == [1, 2, 3, 4]
    assert all(i.model_fields_set == _PACKED_FIELDS for i in items)
    assert len(response.leftovers) == 1
    assert response.leftovers[0].model_fields_set == _LEFTOVER_FIELDS
    assert sorted(i.unique_id or "" for i in [*items, *response.leftovers]) == [
        "1-0",
        "1-1",
        "1-2",
        "2-0",
        "2-1",
    ]


def test_points_share_one_fields_set_that_nothing_changes() -> None:
    # pack() gives the points it builds one fields set (models.XYZ); that is only safe while
    # assignment adds nothing new to it and copies take their own.
    cube = {"dimensions": {"x": 2, "y": 2, "z": 2}, "weight": 1.0}
    response = cartonize.pack(
        {
            "orderId": "shared",
            "includeImages": False,
            "itemSets": [{"refId": 1, **cube, "quantity": 2}],
            "boxTypes": [{"refId": 9, "dimensions": {"x": 2, "y": 2, "z": 4}, "weightMax": 10}],
        }
    )
    first, second = (e.item for e in response.boxes[0].box.items)
    assert first.origin is not None and second.origin is not None
    copied = first.origin.model_copy(update={"y": 1.0})
    first.origin.x = 5.0
    assert copied.model_fields_set is not first.origin.model_fields_set
    assert second.origin.model_fields_set == {"x", "y", "z"}
    assert second.origin.x == 0.0
