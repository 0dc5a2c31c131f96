"""Rule group-pack: units bundled into groups along the axes the box types leave room on."""

from collections import defaultdict
from typing import Any

import cartonize
import pytest
from cartonize.errors import InvalidRequest

from tests.validator import validate


def _request(options: dict[str, Any], quantity: int = 20, **extra: Any) -> dict[str, Any]:
    return {
        "orderId": "group-pack",
        "includeImages": False,
        "itemSets": [
            {
                "refId": 1,
                "name": "cube",
                "dimensions": {"x": 1, "y": 1, "z": 1},
                "weight": 1,
                "quantity": quantity,
            },
            {"refId": 2, "dimensions": {"x": 3, "y": 4, "z": 5}, "weight": 1, "quantity": 2},
        ],
        "boxTypes": [{"refId": 7, "dimensions": {"x": 10, "y": 10, "z": 10}, "weightMax": 100}],
        "rules": [{"operation": "group-pack", "itemRefId": 1, "options": options}],
        **extra,
    }


def _pack(request: dict[str, Any]) -> dict[str, Any]:
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    assert validate(request, response) == []
    return response


def _groups(response: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for box in response["boxes"]:
        for entry in box["box"]["items"]:
            if "groupPackParent" in entry["item"]:
                groups[entry["item"]["groupPackParent"]].append(entry["item"])
    return groups


def test_units_come_back_in_groups_of_multiplier_cubed() -> None:
    response = _pack(_request({"axisMultiplier": 2, "nameSuffix": " x8"}))
    groups = _groups(response)
    # 20 units: two groups of 2 x 2 x 2, four single units.
    assert sorted(groups) == ["1-g0", "1-g1"]
    assert [len(units) for units in groups.values()] == [8, 8]
    assert all(u["name"] == "cube x8" for units in groups.values() for u in units)
    assert response["lenItems"] == 22
    unique = [e["item"]["uniqueId"] for b in response["boxes"] for e in b["box"]["items"]]
    assert sorted(unique) == sorted([f"1-{n}" for n in range(20)] + ["2-0", "2-1"])
    singles = [
        e["item"]
        for b in response["boxes"]
        for e in b["box"]["items"]
        if e["item"]["refId"] == 1 and "groupPackParent" not in e["item"]
    ]
    assert len(singles) == 4
    assert all(u["name"] == "cube" for u in singles)


def test_an_axis_scales_only_when_the_unit_is_threshold_times_smaller() -> None:
    request = _request({"axisMultiplier": 3, "scaleFactorThreshold": 3}, quantity=9)
    # y: 4 x 3 = 12 > 10, so the group is 3 x 1 x 3 units.
    request["itemSets"][0]["dimensions"] = {"x": 1, "y": 4, "z": 1}
    groups = _groups(_pack(request))
    assert [len(units) for units in groups.values()] == [9]
    ys = {u["dimensions"]["y"] for u in groups["1-g0"]} | {
        u["dimensions"]["x"] for u in groups["1-g0"]
    }
    assert 4.0 in ys


def test_axes_restrict_the_scaling() -> None:
    groups = _groups(_pack(_request({"axisMultiplier": 4, "axes": [2]}, quantity=9)))
    # Only z scales: groups of 4 in a row, two of them, one unit alone.
    assert [len(units) for units in groups.values()] == [4, 4]


def test_a_group_packs_as_one_item_for_items_per_box_max() -> None:
    request = _request({"axisMultiplier": 2}, quantity=16, itemsPerBoxMax=2)
    request["itemSets"].pop()
    response = _pack(request)
    # Two groups of eight: one box, as the group is one item (a case).
    assert response["lenBoxes"] == 1
    assert len(_groups(response)) == 2


def test_too_heavy_groups_are_not_made() -> None:
    request = _request({"axisMultiplier": 2}, quantity=8)
    request["boxTypes"][0]["weightMax"] = 5
    response = _pack(request)
    assert _groups(response) == {}
    assert any("more than any box type it may pack into carries" in w for w in response["warnings"])


@pytest.mark.parametrize("order", [1, -1])
def test_set_properties_acts_before_grouping(order: int) -> None:
    # Wherever the rule stands, the units carry lithium 1 each: a group of 8 holds 8, over
    # the box's 3, so none is made and the units go 3, 3 and 2 to a box.
    request = _request({"axisMultiplier": 2}, quantity=8)
    request["itemSets"].pop()
    request["boxTypes"][0]["propertyConstraints"] = [{"key": "lithium", "max": 3}]
    set_lithium = {"operation": "set-properties", "itemRefId": 1}
    set_lithium["options"] = {"properties": {"lithium": 1}}
    request["rules"] = [*request["rules"], set_lithium][::order]
    response = _pack(request)
    assert _groups(response) == {}
    values = sorted(b["box"]["propertyConstraints"][0]["value"] for b in response["boxes"])
    assert values == [2, 3, 3]


def test_fewer_units_than_a_group_are_not_grouped_with_a_warning() -> None:
    response = _pack(_request({"axisMultiplier": 2}, quantity=7))
    assert _groups(response) == {}
    assert any(
        w == "rules[0]: item refId 1 has 7 units, fewer than a group of 8; not grouped"
        for w in response["warnings"]
    )


def test_a_group_carries_the_constrained_amounts_of_its_units() -> None:
    request = _request({"axisMultiplier": 2}, quantity=8)
    request["itemSets"].pop()
    request["itemSets"][0]["properties"] = {"lithium": 1, "colour": "red"}
    request["boxTypes"][0]["propertyConstraints"] = [{"key": "lithium", "max": 4}]
    response = _pack(request)
    # A group of 8 holds 8 of lithium, over the box's 4: no group can ship, the
    # units pack alone, at most 4 to a box; each unit reports its own properties.
    assert _groups(response) == {}
    assert response["lenBoxes"] == 2
    for box in response["boxes"]:
        assert box["box"]["propertyConstraints"][0]["value"] == 4
    units = [e["item"] for b in response["boxes"] for e in b["box"]["items"]]
    assert all(u["properties"] == {"lithium": 1, "colour": "red"} for u in units)


def test_property_constraints_of_box_type_defaults_keep_groups_apart_too() -> None:
    # Regression (found by test_properties): the validator read the constraints of the
    # box types only, not those boxTypeDefaults give them, and expected a group here.
    request = _request({"axisMultiplier": 2}, quantity=8)
    request["itemSets"].pop()
    request["itemSets"][0]["properties"] = {"lithium": 1}
    request["boxTypeDefaults"] = {"propertyConstraints": [{"key": "lithium", "max": 4}]}
    response = _pack(request)
    assert _groups(response) == {} and response["lenBoxes"] == 2


def test_a_group_carries_the_amounts_set_properties_gives_its_units() -> None:
    # Regression (found by test_properties): the grouped pack applied set-properties
    # again, to the group item, and overwrote the amount it carries (8) with a unit's (1).
    request = _request({"axisMultiplier": 2}, quantity=8)
    request["itemSets"].pop()
    request["itemSets"][0]["properties"] = {"lithium": 0}
    request["boxTypes"][0]["propertyConstraints"] = [{"key": "lithium", "max": 8}]
    request["rules"].append(
        {
            "operation": "set-properties",
            "itemRefId": 1,
            "options": {"properties": {"lithium": 1}, "overwrite": True},
        }
    )
    response = _pack(request)
    assert len(_groups(response)) == 1
    assert response["boxes"][0]["box"]["propertyConstraints"][0]["value"] == 8


def test_grouped_units_report_their_own_properties() -> None:
    request = _request({"axisMultiplier": 2}, quantity=8)
    request["itemSets"].pop()
    request["itemSets"][0]["properties"] = {"lithium": 1}
    request["boxTypes"][0]["propertyConstraints"] = [{"key": "lithium", "max": 8}]
    response = _pack(request)
    assert [len(units) for units in _groups(response).values()] == [8]
    assert response["boxes"][0]["box"]["propertyConstraints"][0]["value"] == 8
    units = [e["item"] for b in response["boxes"] for e in b["box"]["items"]]
    assert all(u["properties"] == {"lithium": 1} for u in units)


def test_pack_as_is_wins_over_group_pack() -> None:
    request = _request({"axisMultiplier": 2}, quantity=8)
    request["rules"].append({"operation": "pack-as-is", "itemRefId": 1})
    response = _pack(request)
    assert _groups(response) == {}
    assert any("pack-as-is wins" in w for w in response["warnings"])


def test_leftover_groups_come_back_as_units() -> None:
    request = _request({"axisMultiplier": 2}, quantity=8, boxesMax=1)
    request["itemSets"][1]["dimensions"] = {"x": 10, "y": 10, "z": 10}
    request["itemSets"][1]["quantity"] = 1
    request["boxTypes"][0]["price"] = 1
    response = _pack(request)
    assert response["lenItems"] == 9
    assert response["lenLeftovers"] == 8
    assert {u["uniqueId"] for u in response["leftovers"]} == {f"1-{n}" for n in range(8)}


def test_units_of_a_refid_split_over_item_sets_keep_their_numbers() -> None:
    request = _request({"axisMultiplier": 2}, quantity=3)
    request["itemSets"].append(
        {
            "refId": 1,
            "name": "cube",
            "dimensions": {"x": 1, "y": 1, "z": 1},
            "weight": 1,
            "quantity": 9,
        }
    )
    response = _pack(request)
    assert [len(u) for u in _groups(response).values()] == [8]
    unique = [
        e["item"]["uniqueId"]
        for b in response["boxes"]
        for e in b["box"]["items"]
        if e["item"]["refId"] == 1
    ]
    assert sorted(unique) == sorted(f"1-{n}" for n in range(12))


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({}, "axisMultiplier"),
        ({"axisMultiplier": 0}, "axisMultiplier"),
        ({"axisMultiplier": 2, "type": "manual"}, "type"),
        ({"axisMultiplier": 2, "axes": [3]}, "axes"),
        ({"axisMultiplier": 2, "scaleFactorThreshold": -1}, "scaleFactorThreshold"),
        ({"axisMultiplier": 2, "nameSuffix": 5}, "nameSuffix"),
    ],
)
def test_malformed_options_are_a_422_naming_the_field(options: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidRequest) as info:
        cartonize.pack(_request(options))
    assert f"rules[0].options.{field}" in (info.value.details or "")


def test_warnings_of_the_grouped_pack_name_the_request_rules() -> None:
    request = _request({"axisMultiplier": 2}, quantity=8)
    request["rules"] += [
        {"operation": "lock-orientation", "itemRefId": 2},
        {"operation": "lock-orientation", "itemRefId": 2},
    ]
    warnings = _pack(request)["warnings"]
    # Without group-pack the locks would be rules[0] and rules[1] of the inner pack.
    assert any("rules[2]" in w and "locked by rules[1]" in w for w in warnings)


def test_a_group_needs_support_as_a_whole_not_each_unit() -> None:
    # Five cases of two 1 x 1 x 2 units (1 x 1 x 4) and a single 1 x 1 x 2, in a 5 x 5 x 5
    # box: four cases fill rows y 1..5 of the floor, the single unit takes y 0..1,
    # z 0..2, and the fifth case lies on it at height 1. Its unit at z 2..4 has nothing
    # under it, but the case rests on the single unit and sticks out 2 past it along z,
    # where the case beside it (y 1..2) is within 1 of every point: allowed with 1.
    request = {
        "includeImages": False,
        "itemSets": [
            {"refId": 1, "dimensions": {"x": 1, "y": 1, "z": 2}, "weight": 1, "quantity": 1},
            {"refId": 2, "dimensions": {"x": 1, "y": 1, "z": 2}, "weight": 1, "quantity": 10},
        ],
        "boxTypes": [{"dimensions": {"x": 5, "y": 5, "z": 5}, "weightMax": 0}],
        "itemSortReverse": True,
        "allowableOverhang": 1,
        "rules": [
            {
                "operation": "group-pack",
                "itemRefId": 2,
                "options": {"axisMultiplier": 2, "axes": [2]},
            }
        ],
    }
    response = _pack(request)  # the validator judges the case, not its units
    on_top = [
        (e["item"]["origin"]["z"], e["item"].get("groupPackParent"))
        for e in response["boxes"][0]["box"]["items"]
        if e["item"]["origin"]["x"] == 1
    ]
    assert sorted(on_top) == [(0, "2-g4"), (2, "2-g4")]
    # With no overhang allowed the case sticks out too far: the validator says so once,
    # for the case.
    problems = validate({**request, "allowableOverhang": 0}, response)
    assert [p for p in problems if p.startswith("support:")] == [
        "support: box 0 item 10 (refId 2) at (1, 0, 0) size (1, 1, 4): "
        "overhangs its support by more than allowableOverhang 0"
    ]


def test_a_case_ships_in_its_own_carton_as_one_item() -> None:
    # Two cubes make one 2 x 1 x 1 case; the pack-as-is generator's free carton of the
    # case's size beats the 5-cube. The carton holds one item, the case, as its two units.
    request = {
        "includeImages": False,
        "itemSets": [
            {"refId": 4, "dimensions": {"x": 1, "y": 1, "z": 1}, "weight": 0, "quantity": 2}
        ],
        "boxTypes": [{"refId": 100, "dimensions": {"x": 5, "y": 5, "z": 5}, "weightMax": 0}],
        "boxTypeDefaults": {"price": 1},
        "boxTypeGenerators": [{"operation": "pack-as-is", "boxTypeDefaults": {"price": 0}}],
        "rules": [
            {
                "operation": "group-pack",
                "itemRefId": 4,
                "options": {"axisMultiplier": 2, "axes": [0]},
            }
        ],
    }
    (box,) = [b["box"] for b in _pack(request)["boxes"]]  # the validator takes the case as one
    assert box["dimensions"] == {"x": 2, "y": 1, "z": 1}
    assert [e["item"]["groupPackParent"] for e in box["items"]] == ["4-g0", "4-g0"]


def test_units_of_a_turned_case_turn_as_their_lock_allows() -> None:
    # Four 3 x 2 x 1 units spinning only about y, two along x and two along z: a 6 x 2 x 2
    # case, which a 5 x 5 x 6 box takes only spun about y, as 2 x 2 x 6. Its units are
    # then 1 x 2 x 3. The case's sides y and z are both 2, so a turn about all three axes
    # (units 2 x 1 x 3) fits its size too, but the lock forbids it.
    request = {
        "includeImages": False,
        "itemSets": [
            {"refId": 2, "dimensions": {"x": 3, "y": 2, "z": 1}, "weight": 0, "quantity": 4}
        ],
        "boxTypes": [{"refId": 100, "dimensions": {"x": 5, "y": 5, "z": 6}, "weightMax": 0}],
        "rules": [
            {"operation": "lock-orientation", "itemRefId": 2, "options": {"freeAxes": [1]}},
            {
                "operation": "group-pack",
                "itemRefId": 2,
                "options": {"axisMultiplier": 2, "axes": [0, 2], "scaleFactorThreshold": 1},
            },
        ],
    }
    (box,) = [b["box"] for b in _pack(request)["boxes"]]
    assert len(_groups({"boxes": [{"box": box}]})["2-g0"]) == 4
    assert {tuple(e["item"]["dimensions"].values()) for e in box["items"]} == {(1, 2, 3)}


def test_groups_are_judged_against_box_types_completed_by_the_defaults() -> None:
    # The defaults cap lithium at 3.5 in every box type: a case of two 3.5 units fits
    # none, so no case is made (the validator too reads the caps from the defaults).
    request = _request({"axisMultiplier": 2, "axes": [0]}, quantity=2)
    request["itemSets"][0]["properties"] = {"lithium": 3.5}
    request["boxTypeDefaults"] = {"propertyConstraints": [{"key": "lithium", "max": 3.5}]}
    response = _pack(request)
    assert _groups(response) == {}
    assert any("constrained property" in w for w in response["warnings"])


@pytest.mark.parametrize(("weight_max", "groups"), [(50, 0), (60, 1)])
def test_a_group_in_a_stage_ships_in_the_stage_box_types(weight_max: int, groups: int) -> None:
    # Found by the property tests: a pack-sequence stage packs refId 4 into box type 102
    # only. A 3 x 3 x 1 case of its units weighs 54, which 102 carries at weightMax 60 and
    # not at 50, even though box type 100 (no weight limit) would carry it.
    request = {
        "includeImages": False,
        "itemSets": [
            {"refId": 4, "dimensions": {"x": 1, "y": 1, "z": 1}, "weight": 6, "quantity": 9}
        ],
        "boxTypes": [
            {"refId": 100, "dimensions": {"x": 5, "y": 5, "z": 5}, "weightMax": 0},
            {"refId": 102, "dimensions": {"x": 5, "y": 5, "z": 5}, "weightMax": weight_max},
        ],
        "rules": [
            {
                "operation": "group-pack",
                "itemRefId": 4,
                "options": {"axisMultiplier": 3, "axes": [0, 1]},
            },
            {
                "operation": "pack-sequence",
                "itemRefId": 4,
                "options": {"index": 0, "key": "a"},
                "targetBoxRefIds": [102],
            },
        ],
    }
    response = _pack(request)
    assert {b["box"]["refId"] for b in response["boxes"]} == {102}
    assert len(_groups(response)) == groups
    too_heavy = "weighs 54, more than any box type it may pack into carries"
    assert any(too_heavy in w for w in response["warnings"]) == (groups == 0)


def test_a_generator_fits_its_boxes_to_a_group_as_the_first_item() -> None:
    # Found by the property tests: eight cubes make one 2 x 2 x 2 case, the only item the
    # packer sees, so a fitForFirstItem range makes its boxes 2 high, not the cube's 1.
    request = {
        "includeImages": False,
        "itemSets": [
            {"refId": 0, "dimensions": {"x": 1, "y": 1, "z": 1}, "weight": 0, "quantity": 8}
        ],
        "rules": [
            {"operation": "group-pack", "itemRefId": 0, "options": {"axisMultiplier": 2}},
        ],
        "boxTypes": [{"refId": 100, "dimensions": {"x": 5, "y": 5, "z": 5}, "weightMax": 0}],
        "boxTypeDefaults": {"price": 1},
        "boxTypeGenerators": [
            {
                "operation": "cartesian",
                "boxTypeDefaults": {"price": 0},
                "options": {
                    "xList": [5],
                    "yList": [5],
                    "zRange": {"min": 1, "max": 2, "fitForFirstItem": True},
                },
            }
        ],
    }
    response = _pack(request)
    assert [b["box"]["dimensions"] for b in response["boxes"]] == [{"x": 5, "y": 5, "z": 2}]
    assert len(_groups(response)) == 1


def test_a_group_after_a_unit_ladder_of_its_ref_id_comes_back_as_its_units() -> None:
    # Found by the cohort fuzz: the ladder's 5 eaches pack as 3 units (2 cases, an each),
    # numbered 2-0..2-2, so the group of the next item set of refId 2 is 2-3; numbered by
    # eaches it was taken for the ladder's and shipped as one item, 3 units lost.
    each = {"refId": 2, "dimensions": {"x": 1, "y": 1, "z": 1}, "weight": 0}
    request = {
        "includeImages": False,
        "itemSets": [
            each
            | {"quantity": 5, "dimensionSets": [{}, {"axisMultipliers": {"x": 1, "y": 1, "z": 2}}]},
            each | {"quantity": 4},
        ],
        "boxTypes": [{"refId": 100, "dimensions": {"x": 8, "y": 8, "z": 8}, "weightMax": 0}],
        "rules": [
            {
                "operation": "group-pack",
                "itemRefId": 2,
                "options": {"axisMultiplier": 2, "axes": [1, 2]},
            }
        ],
    }
    response = _pack(request)
    assert [len(units) for units in _groups(response).values()] == [4]
    assert (
        response["lenItems"]
        == 9
        == sum(e["item"]["quantity"] for b in response["boxes"] for e in b["box"]["items"])
    )
