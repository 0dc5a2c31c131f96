"""Rule pack-sequence: cubes into cases, cases (as items of their outer size) onto
pallets; the cases are reported inside the pallet with `subspace`."""

from __future__ import annotations

from typing import Any

import cartonize
import pytest
from cartonize.errors import InvalidRequest

from tests.validator import validate

Wire = dict[str, Any]

CASE = {
    "refId": 10,
    "name": "case",
    "dimensions": {"x": 10, "y": 10, "z": 10},
    "outer": {"dimensionChange": {"x": 0.5, "y": 0.5, "z": 0.5}},
    "weightMax": 0,
    "weightTare": 0.5,
}
PALLET = {"refId": 20, "name": "pallet", "dimensions": {"x": 11, "y": 21, "z": 21}, "weightMax": 0}


def request(reduce: str = "box-to-item", pallet: Wire = PALLET, **options: Any) -> Wire:
    return {
        "orderId": "sequence",
        "includeImages": False,
        "itemSets": [
            {
                "refId": 1,
                "name": "cube",
                "dimensions": {"x": 5, "y": 5, "z": 5},
                "weight": 1,
                "quantity": 24,
            }
        ],
        "boxTypes": [CASE, pallet],
        "rules": [
            {
                "operation": "pack-sequence",
                "itemRefId": 1,
                "targetBoxRefIds": [10],
                "options": {"index": 0, "key": "ship", "reduce": reduce} | options,
            },
            {
                "operation": "pack-sequence",
                "targetBoxRefIds": [20],
                "options": {"index": 1, "key": "ship"},
            },
        ],
    }


def pack(req: Wire) -> Wire:
    response: Wire = cartonize.pack(req).model_dump(by_alias=True, exclude_none=True)
    assert validate(req, response) == []
    return response


def test_cases_go_onto_a_pallet_by_their_outer_dimensions() -> None:
    response = pack(request(reducedRefId=100))
    boxes = [b["box"] for b in response["boxes"]]
    assert [b["name"] for b in boxes] == ["case", "case", "case", "pallet"]
    pallet = boxes[3]
    assert [i["item"]["refId"] for i in pallet["items"]] == [100, 100, 100]
    for case in boxes[:3]:
        assert len(case["items"]) == 8
        subspace = case["subspace"]
        assert subspace["parentBoxIndex"] == 3
        carrier = next(
            i["item"] for i in pallet["items"] if i["item"]["index"] == subspace["parentItemIndex"]
        )
        assert carrier["dimensions"] == {"x": 10.5, "y": 10.5, "z": 10.5}
        assert carrier["weight"] == 8.5  # 8 cubes and the case's tare
        assert subspace["originInParent"] == carrier["origin"]
    assert response["lenItems"] == 24
    assert response["lenLeftovers"] == 0
    assert response["totalWeight"] == 3 * 8.5
    assert response["totalCost"] == 3 * 1000 + 11 * 21 * 21


def test_the_cases_contents_count_once_in_the_pallet_and_the_totals() -> None:
    response = pack(request(reducedRefId=100))
    *cases, pallet = (b["box"] for b in response["boxes"])
    assert [c["lenItems"] for c in cases] == [8, 8, 8]
    assert (pallet["lenItems"], pallet["lenUnits"]) == (24, 3)  # 24 cubes on 3 cases
    # A case on the pallet stands for its box: no unit, no net volume of its own.
    assert (response["lenItems"], response["lenUnits"]) == (24, 24)
    assert response["totalVolumeNet"] == response["totalVolumeUsed"] == 24 * 5**3


@pytest.mark.parametrize(
    ("reduce", "warns"), [("box-to-item", True), ("box-to-item-optional", False)]
)
def test_cases_that_fit_no_pallet_ship_as_they_are(reduce: str, warns: bool) -> None:
    small = PALLET | {"dimensions": {"x": 10, "y": 10, "z": 10}}
    response = pack(request(reduce, small))
    assert [b["box"]["name"] for b in response["boxes"]] == ["case"] * 3
    assert not any("subspace" in b["box"] for b in response["boxes"])
    assert response["lenLeftovers"] == 0
    assert any("fits no box of the next stage" in w for w in response["warnings"]) == warns


def test_default_reduce_ships_each_stage_in_its_own_boxes() -> None:
    req = request("default")
    req["itemSets"].append(
        {
            "refId": 2,
            "name": "drum",
            "dimensions": {"x": 11, "y": 20, "z": 20},
            "weight": 5,
            "quantity": 1,
        }
    )
    req["rules"][1]["itemRefId"] = 2
    response = pack(req)
    names = sorted(
        (b["box"]["name"], b["box"]["items"][0]["item"]["name"]) for b in response["boxes"]
    )
    assert names == [("case", "cube")] * 3 + [("pallet", "drum")]


def test_pack_as_is_reduce_ships_each_unit_alone() -> None:
    req = request("pack-as-is")
    req["itemSets"][0]["quantity"] = 2
    response = pack(req)
    assert [b["box"]["name"] for b in response["boxes"]] == ["pack-as-is cube"] * 2


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"index": -1}, "options.index"),
        ({"reduce": "flatten"}, "options.reduce"),
        ({"key": 3}, "options.key"),
        ({"reducedRefId": 1}, "options.reducedRefId"),
    ],
)
def test_malformed_sequence_options_are_a_422(options: Wire, field: str) -> None:
    with pytest.raises(InvalidRequest) as info:
        cartonize.pack(request(**options))
    assert f"rules[0].{field}" in (info.value.details or "")


@pytest.mark.parametrize(
    ("change", "case_x", "weight", "details"),
    [
        (1e9, 10, 1, "box case becomes an item of the next stage measuring 1000000010 x 10.5"),
        (-20, 10, 1, "box case becomes an item of the next stage measuring -10 x 10.5"),
        (0.5, 10, 1e12, "10.5 x 10.5 x 10.5 and weighing 8e+12; an item's sides must be"),
        (1e300, 10, 1, "boxTypes[0].outer.dimensionChange.x: must be a number <= 2000000000"),
    ],
)
def test_a_case_that_cannot_be_an_item_of_the_next_stage_is_a_422(
    change: float, case_x: float, weight: float, details: str
) -> None:
    # Its outer size or gross weight past an item's bounds: ItemSet refused it between the
    # stages (a 500).
    req = request()
    req["boxTypes"][0] = CASE | {
        "dimensions": {"x": case_x, "y": 10, "z": 10},
        "outer": {"dimensionChange": {"x": change, "y": 0.5, "z": 0.5}},
    }
    req["itemSets"][0]["weight"] = weight
    with pytest.raises(InvalidRequest) as info:
        cartonize.pack(req)
    assert details in (info.value.details or "")


def test_an_outer_based_cost_stays_finite_at_the_bounds() -> None:
    # A change of 1e300 made the outer volume infinite, which reached the engine as
    # Infinity (a 500); the largest change allowed still rates finitely.
    box = CASE | {
        "outer": {"dimensionChange": {"x": 2e9, "y": 2e9, "z": 2e9}},
        "outerBasedCost": True,
        "rateTable": {"dimFactor": 1, "basePrice": 1, "priceIncreaseRate": 1},
    }
    req = {"itemSets": request()["itemSets"], "boxTypes": [box], "includeImages": False}
    response = pack(req)
    assert response["totalCost"] > 8e27
    box["outer"] = {"dimensionChange": {"x": 1e300, "y": 1, "z": 1}}
    with pytest.raises(InvalidRequest) as info:
        cartonize.pack(req)
    assert info.value.details == (
        "boxTypes[0].outer.dimensionChange.x: must be a number <= 2000000000 (got 1e+300)"
    )


def test_the_validator_checks_the_boxes_inside_items() -> None:
    req = request(reducedRefId=100)
    response = pack(req)
    case = response["boxes"][0]["box"]
    case["subspace"]["originInParent"] = {"x": 3, "y": 3, "z": 3}
    case["weightUsed"] = 99
    problems = validate(req, response)
    assert any("originInParent" in p for p in problems)
    assert any(p.startswith("pack-sequence: box 0") and "weighs" in p for p in problems)


def test_every_stage_box_gets_a_picture() -> None:
    req = request() | {"includeImages": True}
    response = cartonize.pack(req)
    assert response.svgs is not None and len(response.svgs) == 4


@pytest.mark.parametrize(
    ("target", "names"),
    [
        # The generator's boxes are no stage's targets: cases, then a pallet, as without it.
        ({}, ["case", "case", "case", "pallet"]),
        # Targeted by name, they compete in the first stage: one 10 x 10 x 40 for 1 takes
        # all 24 cubes (cases cost their volume), too long for the pallet, so it ships.
        ({"targetBoxMatch": {"expression": "generated"}}, ["generated 10x10x40"]),
    ],
)
def test_generated_box_types_follow_the_stage_targets(target: Wire, names: list[str]) -> None:
    req = request()
    req["rules"][0] |= target
    req["boxTypeGenerators"] = [
        {
            "operation": "cartesian",
            "boxTypeDefaults": {"price": 1},
            "options": {"xList": [10], "yList": [10], "zList": [20, 40]},
        }
    ]
    response = pack(req)
    assert sorted(b["box"].get("name", "") for b in response["boxes"]) == sorted(names)


def test_boxes_max_bounds_the_boxes_that_ship_across_stages() -> None:
    # 24 cubes make 3 cases carried on 1 pallet: the cases do not ship on their own, so
    # boxesMax 1 allows the pallet; a 2-cube item no stage takes needs a box of its own.
    req = request()
    req["boxesMax"] = 1
    response = pack(req)
    assert sorted(b["box"]["name"] for b in response["boxes"]) == ["case"] * 3 + ["pallet"]
    assert response["lenLeftovers"] == 0
    req["itemSets"].append(
        {"refId": 2, "dimensions": {"x": 2, "y": 2, "z": 2}, "weight": 1, "quantity": 1}
    )
    response = pack(req)
    # The unstaged cube packs first and takes the one box: the stages ship nothing.
    assert [b["box"]["name"] for b in response["boxes"]] == ["case"]
    assert response["lenLeftovers"] == 24
    assert {left["message"] for left in response["leftovers"]} == {
        "boxesMax 1 reached: no further box may be opened"
    }


def test_boxes_max_leaves_cases_no_pallet_takes_behind() -> None:
    # Pallets that take one case each (11 x 11 x 11): boxesMax 2 ships two; the third
    # case's cubes are leftovers instead of a case shipping on its own.
    req = request(pallet={**PALLET, "dimensions": {"x": 11, "y": 11, "z": 11}})
    req["boxesMax"] = 2
    response = pack(req)
    shipped = [b for b in response["boxes"] if "subspace" not in b["box"]]
    assert [b["box"]["name"] for b in shipped] == ["pallet", "pallet"]
    assert response["lenLeftovers"] == 8


def test_a_box_the_size_of_its_item_is_not_counted_as_the_item() -> None:
    # An item without refId exactly the size of its case: the case as an item of the next
    # stage has the item's shape, yet is no unit of it (the validator must tell them apart).
    req: Wire = {
        "orderId": "sequence",
        "includeImages": False,
        "itemSets": [{"dimensions": {"x": 4, "y": 4, "z": 4}, "weight": 1, "quantity": 2}],
        "boxTypes": [
            {"refId": 10, "dimensions": {"x": 4, "y": 4, "z": 4}, "weightMax": 0},
            {"refId": 20, "dimensions": {"x": 4, "y": 8, "z": 4}, "weightMax": 0},
        ],
        "rules": request()["rules"],
    }
    req["rules"][0] = {k: v for k, v in req["rules"][0].items() if k != "itemRefId"}
    req["rules"][0]["itemMatch"] = {"all": True}
    response = pack(req)
    assert [len(b["box"]["items"]) for b in response["boxes"]] == [1, 1, 2]
    assert response["lenItems"] == 2


def test_a_stage_shipping_as_is_keeps_an_item_whose_original_a_rule_replaces() -> None:
    # reduce pack-as-is wins over alternate-dimensions, as a pack-as-is rule does: the
    # cube ships as given although replaceOriginal would make it 2 x 3 x 4.
    request = {
        "itemSets": [
            {"refId": 0, "dimensions": {"x": 1, "y": 1, "z": 1}, "weight": 0, "quantity": 1}
        ],
        "boxTypes": [{"refId": 100, "dimensions": {"x": 5, "y": 5, "z": 5}, "weightMax": 0}],
        "rules": [
            {
                "operation": "alternate-dimensions",
                "itemRefId": 0,
                "options": {"dimensions": [{"x": 2, "y": 3, "z": 4}], "replaceOriginal": True},
            },
            {"operation": "pack-sequence", "itemRefId": 0, "options": {"reduce": "pack-as-is"}},
        ],
    }
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    assert validate(request, response) == []
    (box,) = [b["box"] for b in response["boxes"]]
    assert box["items"][0]["item"]["dimensions"] == {"x": 1, "y": 1, "z": 1}


def test_a_fresh_reduced_ref_id_is_one_no_rule_names() -> None:
    # Item sets 0 and 1; a bounded-fill rule names refId 2, which no item set has. The
    # boxes stage 0 reduces take a fresh refId: not 2 (the rule would reshape the box as
    # a soft fill unit), but 3.
    def cube(ref_id: int, z: float) -> dict[str, Any]:
        return {"refId": ref_id, "dimensions": {"x": 1, "y": 1, "z": z}, "weight": 0, "quantity": 1}

    request = {
        "itemSets": [cube(0, 1), cube(1, 6)],
        "boxTypes": [
            {"refId": 100, "dimensions": {"x": 5, "y": 5, "z": 5}, "weightMax": 0},
            {"refId": 102, "dimensions": {"x": 5, "y": 5, "z": 7}, "weightMax": 0},
        ],
        "rules": [
            {"operation": "bounded-fill", "itemRefId": 2},
            {"operation": "pack-sequence", "itemRefId": 0, "options": {"reduce": "box-to-item"}},
            {"operation": "pack-sequence", "itemRefId": 1, "options": {"index": 1}},
        ],
    }
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    assert validate(request, response) == []
    reduced = [
        e["item"] for b in response["boxes"] for e in b["box"]["items"] if e["item"]["refId"] > 1
    ]
    assert [(i["refId"], i["dimensions"]) for i in reduced] == [(3, {"x": 5, "y": 5, "z": 5})]


# --- keys: groups packed apart at one index combine at the next --------------------------


def _boxes_by_name(response: Wire) -> dict[str, list[Wire]]:
    out: dict[str, list[Wire]] = {}
    for entry in response["boxes"]:
        out.setdefault(entry["box"]["name"], []).append(entry["box"])
    return out


def test_the_public_schema_example_kits_the_vas_items_then_cases_everything() -> None:
    # The schema's own example: VAS items into inner boxes (index 0, key "inner-step",
    # reduced to refId 90909), then everything into cases (index 1, key "case-step").
    # Different keys: the inner boxes must still go into the cases with the other items.
    req: Wire = {
        "orderId": "kitting",
        "includeImages": False,
        "itemSets": [
            {
                "refId": 1,
                "name": "vas",
                "sequence": "VAS",
                "quantity": 4,
                "weight": 1,
                "dimensions": {"x": 2, "y": 2, "z": 2},
            },
            {
                "refId": 2,
                "name": "plain",
                "quantity": 2,
                "weight": 1,
                "dimensions": {"x": 3, "y": 3, "z": 3},
            },
        ],
        "boxTypes": [
            {"refId": 10, "name": "inner", "dimensions": {"x": 4, "y": 4, "z": 4}, "weightMax": 0},
            {
                "refId": 11,
                "name": "case",
                "dimensions": {"x": 10, "y": 10, "z": 10},
                "weightMax": 0,
            },
        ],
        "rules": [
            {
                "operation": "pack-sequence",
                "targetBoxRefIds": [10],
                "itemMatch": {"property": "sequence", "expression": "VAS"},
                "options": {
                    "index": 0,
                    "key": "inner-step",
                    "reduce": "box-to-item",
                    "reducedRefId": 90909,
                },
            },
            {
                "operation": "pack-sequence",
                "targetBoxRefIds": [11],
                "itemMatch": {"all": True},
                "options": {"index": 1, "key": "case-step", "reduce": "box-to-item"},
            },
        ],
    }
    response = pack(req)
    boxes = _boxes_by_name(response)
    (inner,) = boxes["inner"]
    (case,) = boxes["case"]
    assert sorted(e["item"]["refId"] for e in inner["items"]) == [1, 1, 1, 1]
    assert sorted(e["item"]["refId"] for e in case["items"]) == [2, 2, 90909]
    assert inner["subspace"]["parentBoxIndex"] == case["id"]
    # Only the last stage reduces with nowhere to go.
    assert not any("rules[0]" in w and "ship as they are" in w for w in response["warnings"])
    assert any("rules[1]" in w and "no stage comes after" in w for w in response["warnings"])


def _temperature_request() -> Wire:
    item = {"quantity": 4, "weight": 1, "dimensions": {"x": 5, "y": 5, "z": 5}}
    stage = {"operation": "pack-sequence", "targetBoxRefIds": [10]}
    return {
        "orderId": "pallet",
        "includeImages": False,
        "itemSets": [
            item | {"refId": 1, "name": "chilled", "properties": {"zone": "cold"}},
            item | {"refId": 2, "name": "ambient", "properties": {"zone": "room"}},
        ],
        "boxTypes": [CASE, PALLET | {"dimensions": {"x": 11, "y": 32, "z": 32}}],
        "rules": [
            stage
            | {
                "itemMatch": {"property": "zone", "expression": "cold"},
                "options": {"index": 0, "key": "refrigerated", "reduce": "box-to-item"},
            },
            stage
            | {
                "itemMatch": {"property": "zone", "expression": "room"},
                "options": {"index": 0, "key": "room-temperature", "reduce": "box-to-item"},
            },
            {
                "operation": "pack-sequence",
                "targetBoxRefIds": [20],
                "options": {"index": 1, "key": "mixed-pallet"},
            },
        ],
    }


def test_groups_packed_apart_at_one_index_combine_on_the_next() -> None:
    # The schema's description of `key`: (index 0, "refrigerated") and (index 0,
    # "room-temperature") pack separately, then both combine on a mixed pallet (index 1).
    response = pack(_temperature_request())
    boxes = _boxes_by_name(response)
    cases, (pallet,) = boxes["case"], boxes["pallet"]
    groups = sorted(sorted({e["item"]["refId"] for e in c["items"]}) for c in cases)
    assert groups == [[1], [2]]  # each group in its own case
    assert len(pallet["items"]) == 2  # one case of each group
    assert all(c["subspace"]["parentBoxIndex"] == pallet["id"] for c in cases)
    assert not any("ship as they are" in w for w in response["warnings"])


def test_a_key_with_a_later_stage_of_its_own_keeps_its_boxes() -> None:
    # Key "a" has stages 0 and 2, key "b" stage 1: a's cases skip b's stage for a's own.
    req = _temperature_request()
    req["rules"] = [
        {
            "operation": "pack-sequence",
            "targetBoxRefIds": [10],
            "itemMatch": {"property": "zone", "expression": "cold"},
            "options": {"index": 0, "key": "a", "reduce": "box-to-item"},
        },
        {
            "operation": "pack-sequence",
            "targetBoxRefIds": [10],
            "itemMatch": {"property": "zone", "expression": "room"},
            "options": {"index": 1, "key": "b"},
        },
        {
            "operation": "pack-sequence",
            "targetBoxRefIds": [20],
            "options": {"index": 2, "key": "a"},
        },
    ]
    response = pack(req)
    boxes = _boxes_by_name(response)
    (pallet,) = boxes["pallet"]
    assert len(pallet["items"]) == 1  # the chilled case only
    ambient_case = next(c for c in boxes["case"] if c["items"][0]["item"]["refId"] == 2)
    assert "subspace" not in ambient_case


def _case_into_a_pot_request(**item: Any) -> Wire:
    """Cubes with a unit ladder (an each and a double) into 4-unit cases (stage 0,
    box-to-item under reducedRefId 900); the cases, in stage 1, into the hollow of pots
    (an internal space) that pack onto a pallet."""
    ladder = [{}, {"axisMultipliers": {"x": 2, "y": 1, "z": 1}, "weight": 3}]
    return {
        "orderId": "cases into pots",
        "includeImages": False,
        "itemSets": [
            {"refId": 1, "dimensions": {"x": 2, "y": 2, "z": 2}, "weight": 1, "quantity": 5}
            | {"dimensionSets": ladder},
            {"refId": 2, "dimensions": {"x": 20, "y": 20, "z": 20}, "weight": 2, "quantity": 2}
            | item,
        ],
        "boxTypes": [
            {"refId": 100, "dimensions": {"x": 4, "y": 4, "z": 4}, "weightMax": 0},
            {"refId": 101, "dimensions": {"x": 40, "y": 40, "z": 40}, "weightMax": 0},
        ],
        "rules": [
            {
                "operation": "pack-sequence",
                "itemRefId": 1,
                "targetBoxRefIds": [100],
                "options": {"index": 0, "key": "k", "reduce": "box-to-item", "reducedRefId": 900},
            },
            {
                "operation": "pack-sequence",
                "itemRefId": 2,
                "targetBoxRefIds": [101],
                "options": {"index": 1, "key": "k"},
            },
            {
                "operation": "internal-space",
                "itemRefId": 2,
                "options": {
                    "boxType": {"dimensions": {"x": 16, "y": 16, "z": 16}},
                    "origin": {"x": 2, "y": 2, "z": 2},
                },
            },
        ],
    }


@pytest.mark.parametrize("item", [{}, {"dimensionSets": [{}, {"axisMultipliers": {"x": 1}}]}])
def test_a_case_of_unit_ladders_inside_a_pot_counts_in_the_pallet(item: Wire) -> None:
    # A case (of cubes with dimensionSets: the units themselves never enter a subspace)
    # goes as an item into a pot's hollow: valid, every unit once, and the pallet's
    # lenItems counts the case's five eaches, not the one item standing for it (it
    # counted 3: the pots and the case as one).
    req = _case_into_a_pot_request(**item)
    response = pack(req)
    assert validate(req, response) == []
    boxes = [e["box"] for e in response["boxes"]]
    case = next(b for b in boxes if b["items"][0]["item"]["refId"] == 1)
    space = next(b for b in boxes if b["items"][0]["item"]["refId"] == 900)
    pallet = next(b for b in boxes if "subspace" not in b)
    assert case["subspace"]["parentBoxIndex"] == space["id"]
    assert space["subspace"]["parentBoxIndex"] == pallet["id"]
    assert sorted(i["item"]["uniqueId"] for i in case["items"]) == ["1-0", "1-1", "1-2"]
    assert (case["lenItems"], space["lenItems"], pallet["lenItems"]) == (5, 5, 7)
    assert response["lenItems"] == 7


def test_a_case_standing_in_as_an_item_gets_no_internal_space() -> None:
    # An internal-space rule selecting the cases (reducedRefId 900) gave each an empty
    # 3 x 3 x 3 hollow at its origin, and stage 1 put its cubes there, over the case's
    # own contents. The case's inside is its contents: no space, and a warning.
    req = _case_into_a_pot_request()
    req["itemSets"].append(
        {"refId": 3, "dimensions": {"x": 1, "y": 1, "z": 1}, "weight": 1, "quantity": 2}
    )
    req["rules"][1] = {"operation": "pack-sequence", "itemMatch": {"all": True}}
    req["rules"][1]["options"] = {"index": 1, "key": "k"}
    req["rules"][2] = {
        "operation": "internal-space",
        "itemRefId": 900,
        "options": {"boxType": {"dimensions": {"x": 3, "y": 3, "z": 3}}},
    }
    response = pack(req)
    assert validate(req, response) == []
    inside = [e["box"] for e in response["boxes"] if "subspace" in e["box"]]
    assert [b["items"][0]["item"]["refId"] for b in inside] == [1]
    assert (
        "rules[2]: item refId 900 is a box of an earlier pack-sequence stage, full of its "
        "contents; it gets no internal space" in response["warnings"]
    )
