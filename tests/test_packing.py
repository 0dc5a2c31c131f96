"""How pack() builds the response objects: the fields each unit sets, its numbering."""

from __future__ import annotations

import copy
import json
from typing import Any

import cartonize
import pytest
from cartonize import _core
from cartonize.models import Item, ItemSet
from cartonize.packing import (
    _ENGINE_JSON,
    _ITEM_DEFAULTS,
    _LEFTOVER_FIELDS,
    _PACKED_FIELDS,
    _UNIT_FIELDS,
    _engine_json,
    _Kind,
)

from tests.validator import validate


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


def _sides_packed(request: dict[str, object]) -> list[tuple[dict[str, float], dict[str, float]]]:
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    assert validate(request, response) == []
    return [
        (e["item"]["dimensions"], e["item"]["origin"])
        for b in response["boxes"]
        for e in b["box"]["items"]
    ]


def test_sides_finer_than_the_engine_grid_come_back_as_given() -> None:
    # 100 x 40 x 5 mm in inches. The engine works to 1/10,000 of the unit and reported
    # its rounded-up sides (3.9371 for 3.93701), which are no turn of the item's own.
    given = {"x": 3.93701, "y": 1.5748, "z": 0.19685}
    request = {
        "itemSets": [{"refId": 1, "dimensions": given, "weight": 1, "quantity": 12}],
        "boxTypes": [{"refId": 9, "dimensions": {"x": 4, "y": 4, "z": 4}, "weightMax": 0}],
        "itemInitialOrientationPreferred": False,
        "includeImages": False,
    }
    placed = _sides_packed(request)
    assert len(placed) == 12
    assert all(sorted(d.values()) == sorted(given.values()) for d, _ in placed)


def test_a_side_below_the_engine_grid_still_takes_room() -> None:
    # A side of 1e-40 rounded to no length at all, so every unit went to the same corner.
    tiny = {"x": 1e-40, "y": 2e-40, "z": 1e-40}
    request = {
        "itemSets": [{"refId": 1, "dimensions": tiny, "weight": 1, "quantity": 3}],
        "boxTypes": [{"refId": 9, "dimensions": {"x": 1, "y": 1, "z": 1}, "weightMax": 0}],
        "includeImages": False,
    }
    placed = _sides_packed(request)
    assert [d for d, _ in placed] == [tiny] * 3
    assert len({tuple(o.values()) for _, o in placed}) == 3


def test_a_unit_starts_from_its_kinds_fields_in_the_order_assemble_puts_them() -> None:
    item_set = ItemSet.model_validate(
        {"refId": 4, "name": "a", "dimensions": {"x": 1, "y": 1, "z": 1}, "weight": 2}
    )
    for quantity in (1, 3):  # kept per kind only with several units
        kind = _Kind(4, item_set.model_copy(update={"quantity": quantity}))
        first, second = kind.unit_fields(), kind.unit_fields()
        assert first == second and first is not second
        assert list(first.items()) == list({**_ITEM_DEFAULTS, **kind.echo}.items())


def _shared_rate_input(note: str) -> dict[str, Any]:
    rate = {"method": "breakpoints", "weights": [1.0, 2.0], "rates": [3.0, 4.5]}
    other = {"method": "breakpoints", "weights": [1.0], "rates": [9.0]}
    ratings = [rate, rate, None, other, rate]
    return {
        "boxTypes": [
            {"price": p, "rating": None if r is None else {"volume": 1.0 * p, "rate": r}}
            for p, r in enumerate(ratings)
        ],
        "note": note,
    }


def test_a_shared_rate_is_written_once_into_the_same_text() -> None:
    engine_input = _shared_rate_input("plain")
    assert _engine_json(copy.deepcopy(engine_input)) == _ENGINE_JSON.encode(engine_input)


def test_text_that_holds_the_placeholder_is_encoded_the_plain_way() -> None:
    # Any string equal to a placeholder, or ending as one, would take the rate's place.
    for note in ["\x00shared rate 0", 'x"\x00shared rate 1']:
        engine_input = _shared_rate_input(note)
        text = _engine_json(copy.deepcopy(engine_input))
        assert text == _ENGINE_JSON.encode(engine_input)
        assert json.loads(text)["note"] == note


def _engine_input_of(request: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> str:
    """The engine input text pack() sends for `request`."""
    seen: list[str] = []
    pack_json = _core.pack_json

    def recorded(text: str) -> str:
        seen.append(text)
        return pack_json(text)

    with monkeypatch.context() as patch:
        patch.setattr(_core, "pack_json", recorded)
        cartonize.pack(request)
    (text,) = seen
    return text


def test_the_engine_reads_shared_rates_as_it_reads_them_written_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    box = {"dimensions": {"x": 10, "y": 10, "z": 10}, "weightMax": 100, "price": 5}
    table = {"weights": [1, 5, 10], "rates": [100, 200, 400], "dimFactor": 139}
    request = {
        "itemSets": [{"refId": 1, "dimensions": {"x": 4, "y": 5, "z": 6}, "weight": 3}],
        "boxTypes": [{**box, "refId": n, "rateTable": dict(table)} for n in range(3)],
        "includeImages": False,
    }
    text = _engine_input_of(request, monkeypatch)
    response = cartonize.pack(request)
    assert "shared rate" not in text
    rates = [b["rating"]["rate"] for b in json.loads(text)["boxTypes"]]
    assert rates == [rates[0]] * 3 and rates[0]["method"] == "breakpoints"
    assert text == _ENGINE_JSON.encode(json.loads(text))  # as if written out each time
    # Dimensional weight 1000 / 139 = 7.2 (over the 3 it weighs): the 10 breakpoint.
    assert response.total_cost == 5 + 400


def test_limits_that_limit_nothing_are_sent_empty_and_pack_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    box = {"dimensions": {"x": 10, "y": 10, "z": 10}, "weightMax": 100}
    request = {
        "itemSets": [
            {"refId": n, "dimensions": {"x": 4 + n, "y": 5, "z": 6}, "weight": 3, "quantity": 4}
            for n in range(3)
        ],
        "boxTypes": [{**box, "refId": 7}, {**box, "refId": 8, "price": 5}],
        "includeImages": False,
    }
    text = _engine_input_of(request, monkeypatch)
    engine_input = json.loads(text)
    limits = engine_input["options"]["limits"]
    assert [limits[k] for k in ("itemSets", "sequences", "boxCaps", "boxExtras")] == [[]] * 4
    # Written out in full, as pack() sent them before: the same answer.
    limits["itemSets"] = [0, 1, 2]
    limits["sequences"] = [None] * 3
    limits["boxCaps"] = [{"itemsMax": None, "itemSetsMax": None, "inlineMax": [0, 0, 0]}] * 2
    limits["boxExtras"] = [{"reservedSpace": 0.0, "properties": []}] * 2
    answers = [json.loads(_core.pack_json(t)) for t in (text, json.dumps(engine_input))]
    for answer in answers:
        answer.pop("packTime")
    assert answers[0] == answers[1] and answers[0]["boxes"]


def test_limits_that_limit_something_are_sent_in_full(monkeypatch: pytest.MonkeyPatch) -> None:
    box = {"dimensions": {"x": 10, "y": 10, "z": 10}, "weightMax": 100}
    request = {
        "itemSets": [
            {"refId": 1, "dimensions": {"x": 4, "y": 5, "z": 6}, "weight": 3, "sequence": "a"},
            {"refId": 1, "dimensions": {"x": 3, "y": 5, "z": 6}, "weight": 3},
        ],
        "boxTypes": [{**box, "refId": 7, "itemsPerBoxMax": 1}, {**box, "refId": 8}],
        "reservedSpace": 0.1,
        "includeImages": False,
    }
    limits = json.loads(_engine_input_of(request, monkeypatch))["options"]["limits"]
    assert limits["itemSets"] == [0, 0]
    assert limits["sequences"] == [0, None]
    assert [c["itemsMax"] for c in limits["boxCaps"]] == [1, None]
    assert [e["reservedSpace"] for e in limits["boxExtras"]] == [0.1, 0.1]
