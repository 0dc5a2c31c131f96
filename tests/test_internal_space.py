"""Rule internal-space: items carry subspaces that other items fill before boxes open."""

from typing import Any

import cartonize
import pytest
from cartonize.errors import InvalidRequest

from tests.validator import validate


def _request(**options: Any) -> dict[str, Any]:
    space = {
        "type": "subspace",
        "boxType": {"name": "pot inside", "dimensions": {"x": 3, "y": 3, "z": 3}, "weightMax": 1},
        "origin": {"x": 1, "y": 0.5, "z": 0.5},
        **options,
    }
    return {
        "orderId": "internal-space",
        "includeImages": False,
        "itemSets": [
            {
                "refId": 1,
                "name": "pot",
                "dimensions": {"x": 4, "y": 4, "z": 4},
                "weight": 2,
                "quantity": 2,
            },
            {
                "refId": 2,
                "name": "pencil",
                "dimensions": {"x": 1, "y": 1, "z": 3},
                "weight": 0.5,
                "quantity": 5,
            },
        ],
        "boxTypes": [
            {"refId": 7, "dimensions": {"x": 5, "y": 5, "z": 10}, "weightMax": 100, "price": 100}
        ],
        "rules": [{"operation": "internal-space", "itemRefId": 1, "options": space}],
    }


def _pack(request: dict[str, Any]) -> dict[str, Any]:
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    assert validate(request, response) == []
    return response


def test_pencils_fill_the_pots_up_to_the_subspace_weight_limit() -> None:
    response = _pack(_request())
    boxes = [b["box"] for b in response["boxes"]]
    assert len(boxes) == 3
    outer, first, second = boxes
    assert "subspace" not in outer
    # weightMax 1: two pencils of 0.5 in each pot, the fifth beside them.
    assert [len(b["items"]) for b in boxes] == [3, 2, 2]
    pots = [e["item"] for e in outer["items"] if e["item"]["refId"] == 1]
    assert [p["weight"] for p in pots] == [3.0, 3.0]
    for pot, inner in zip(pots, (first, second), strict=True):
        assert inner["price"] == 0
        assert inner["subspace"]["parentBoxIndex"] == 0
        assert inner["subspace"]["parentItemIndex"] == pot["index"]
        o = pot["origin"]
        assert inner["subspace"]["originInParent"] == {
            "x": o["x"] + 1,
            "y": o["y"] + 0.5,
            "z": o["z"] + 0.5,
        }
    assert response["totalWeight"] == 6.5
    assert response["totalCost"] == 100
    assert response["lenItems"] == 7
    pencils = sorted(
        e["item"]["uniqueId"] for b in boxes for e in b["items"] if e["item"]["refId"] == 2
    )
    assert pencils == [f"2-{n}" for n in range(5)]


def test_items_an_exclusion_selects_may_fill_subspaces() -> None:
    # Exclusions hold through the pots (tests/test_nesting.py); one that keeps the pencils
    # from nothing here leaves them free to fill the pots.
    request = _request()
    request["rules"].append({"operation": "exclude", "itemRefId": 2, "targetBoxRefIds": [9]})
    response = _pack(request)
    assert [b["box"].get("name") for b in response["boxes"]] == [None, "pot inside", "pot inside"]


def test_the_item_packs_as_given_and_a_lock_on_it_says_so() -> None:
    request = _request()
    request["rules"].append(
        {"operation": "lock-orientation", "itemRefId": 1, "options": {"freeAxes": [0]}}
    )
    response = _pack(request)
    assert any(
        "rules[1]" in w and "rules[0] (internal-space: it packs as given)" in w
        for w in response["warnings"]
    )


def test_a_lock_of_the_request_on_another_item_keeps_its_name() -> None:
    # The pots pack as given by a lock standing for their internal space; the pencils'
    # own lock (standing upright, so layFlat cannot act) is the request's, not the space's.
    request = {**_request(), "layFlat": True}
    request["itemSets"][1]["dimensions"] = {"x": 3, "y": 1, "z": 1}
    request["rules"].append(
        {"operation": "lock-orientation", "itemRefId": 2, "options": {"freeAxes": []}}
    )
    warnings = _pack(request)["warnings"]
    assert (
        "layFlat has no effect on item refId 2: it may only turn as rules[1] says "
        "(lock-orientation), which wins"
    ) in warnings
    assert not any("refId 2" in w and "internal-space" in w for w in warnings)


def test_an_item_that_fits_no_box_unturned_has_no_subspace() -> None:
    request = _request()
    request["itemSets"][0]["dimensions"] = {"x": 6, "y": 4, "z": 4}
    request["boxTypes"][0]["dimensions"] = {"x": 4, "y": 6, "z": 10}
    request["rules"][0]["options"]["boxType"]["dimensions"] = {"x": 3, "y": 3, "z": 3}
    response = _pack(request)
    assert all("subspace" not in b["box"] for b in response["boxes"])
    assert any("fits no box type as given" in w for w in response["warnings"])


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"type": "tote"}, "type"),
        ({"boxType": None}, "boxType"),
        ({"boxType": {"dimensions": {"x": 3, "y": 3}}}, "boxType.dimensions"),
        ({"boxType": {"dimensions": {"x": 4, "y": 3, "z": 3}}}, "boxType.dimensions"),
        ({"origin": {"x": -1}}, "origin"),
        ({"blocking": "yes"}, "blocking"),
    ],
)
def test_malformed_options_are_a_422_naming_the_field(options: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidRequest) as info:
        cartonize.pack(_request(**options))
    assert f"rules[0].options.{field}:" in (info.value.details or "")


def test_rolls_stay_out_of_subspaces() -> None:
    # The pencils fill the pots, as rolls they do not: a unit may wind into several rolls,
    # and subspaces are filled unit by unit.
    request = _request()
    assert any(b["box"].get("subspace") for b in _pack(request)["boxes"])
    request["rules"].append(
        {"operation": "irregular", "itemRefId": 2, "options": {"maxDiameter": 0.9}}
    )
    response = _pack(request)
    assert not any(b["box"].get("subspace") for b in response["boxes"])
    assert response["lenLeftovers"] == 0


def test_box_type_defaults_do_not_apply_to_an_internal_space() -> None:
    # The defaults (no item limit, half the space reserved) are the cartons'. The
    # subspace keeps the request's own options: one item (itemsPerBoxMax 1), nothing
    # reserved. The second cube goes in the carton, which the defaults leave unlimited.
    request = {
        "orderId": "internal-space",
        "includeImages": False,
        "itemSets": [
            {"refId": 3, "dimensions": {"x": 3, "y": 2, "z": 2}, "weight": 1, "quantity": 1},
            {"refId": 2, "dimensions": {"x": 1, "y": 1, "z": 1}, "weight": 1, "quantity": 2},
        ],
        "boxTypes": [{"refId": 100, "dimensions": {"x": 5, "y": 5, "z": 5}, "weightMax": 0}],
        "itemsPerBoxMax": 1,
        "boxTypeDefaults": {"itemsPerBoxMax": 0, "reservedSpace": 0.5},
        "rules": [
            {
                "operation": "internal-space",
                "itemRefId": 3,
                "options": {"boxType": {"dimensions": {"x": 2.4, "y": 1.6, "z": 1.6}}},
            }
        ],
    }
    boxes = [b["box"] for b in _pack(request)["boxes"]]
    assert [(b.get("subspace") is not None, len(b["items"])) for b in boxes] == [
        (False, 2),
        (True, 1),
    ]
    assert boxes[1]["volumeReserved"] == 0


def test_an_auto_id_unit_of_one_shape_with_a_ladder_elsewhere_may_go_inside() -> None:
    # Two auto-id item sets of one shape: the one with dimensionSets has no units, the
    # other one cube, which goes into the pot's space. The validator tells auto-id sets
    # apart by shape only, and took the cube for a unit of the ladder (kept out).
    cube = {"dimensions": {"x": 1, "y": 1, "z": 1}, "weight": 0, "quantity": 1}
    ladder = {
        **cube,
        "quantity": 0,
        "dimensionSets": [{}, {"axisMultipliers": {"x": 1, "y": 1, "z": 1}}],
    }
    request = {
        "orderId": "internal-space",
        "includeImages": False,
        "itemSets": [
            {"refId": 2, "dimensions": {"x": 2, "y": 2, "z": 2}, "weight": 0, "quantity": 1},
            cube,
            ladder,
        ],
        "boxTypes": [{"refId": 100, "dimensions": {"x": 5, "y": 5, "z": 5}, "weightMax": 0}],
        "rules": [
            {
                "operation": "internal-space",
                "itemRefId": 2,
                "options": {
                    "boxType": {"dimensions": {"x": 1.6, "y": 1.6, "z": 1.6}},
                    "origin": {"x": 0.2, "y": 0.2, "z": 0.2},
                },
            }
        ],
    }
    boxes = [b["box"] for b in _pack(request)["boxes"]]
    assert [(b.get("subspace") is not None, len(b["items"])) for b in boxes] == [
        (False, 1),
        (True, 1),
    ]


def test_group_pack_sizes_groups_by_the_request_not_by_a_subspace() -> None:
    # Groups of 2 x 2 x 2 cubes, scaled against the 5-cube box: two cubes make no group.
    # The pot's 1.6 x 1.6 x 2.4 space once sized its own groups (2 cubes along z, the
    # only axis it is twice as long on), so the two cubes went in as a case the request
    # never makes.
    request = {
        "orderId": "internal-space",
        "includeImages": False,
        "itemSets": [
            {"refId": 3, "dimensions": {"x": 2, "y": 2, "z": 3}, "weight": 0, "quantity": 1},
            {"refId": 4, "dimensions": {"x": 1, "y": 1, "z": 1}, "weight": 0, "quantity": 2},
        ],
        "boxTypes": [{"refId": 100, "dimensions": {"x": 5, "y": 5, "z": 5}, "weightMax": 0}],
        "rules": [
            {"operation": "group-pack", "itemRefId": 4, "options": {"axisMultiplier": 2}},
            {
                "operation": "internal-space",
                "itemRefId": 3,
                "options": {
                    "boxType": {"dimensions": {"x": 1.6, "y": 1.6, "z": 2.4}},
                    "origin": {"x": 0.2, "y": 0.2, "z": 0.3},
                },
            },
        ],
    }
    response = _pack(request)
    units = [
        e["item"] for b in response["boxes"] for e in b["box"]["items"] if e["item"]["refId"] == 4
    ]
    assert len(units) == 2
    assert not any("groupPackParent" in u for u in units)
