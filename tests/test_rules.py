"""Rules: matching, the operations resolved before packing, and their 422s and warnings."""

from collections.abc import Callable
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


@pytest.mark.parametrize(
    ("rule", "effect"),
    [
        (
            {"operation": "group-pack", "options": {"axisMultiplier": 2, "axes": [0]}},
            lambda r: any("groupPackParent" in i for i in _packed_items(r)),
        ),
        (
            {"operation": "bounded-fill", "itemRefId": 0},
            lambda r: any("shaped" in i.get("message", "") for i in _packed_items(r)),
        ),
        (
            {
                "operation": "internal-space",
                "options": {"boxType": {"dimensions": {"x": 0.5, "y": 0.5, "z": 0.5}}},
            },
            lambda r: r["lenBoxes"] >= 1,
        ),
        (
            {"operation": "pack-sequence", "options": {"reduce": "pack-as-is"}},
            lambda r: r["lenBoxes"] == 9,  # each of the 3 x 3 units ships as is
        ),
    ],
    ids=["group-pack", "bounded-fill", "internal-space", "pack-sequence"],
)
def test_rules_packing_in_parts_apply_to_random_items(
    rule: dict[str, Any], effect: Callable[[dict[str, Any]], bool]
) -> None:
    # The random items are drawn once, before the request is packed in parts.
    request = {
        "orderId": "random-parts",
        "includeImages": False,
        "random": True,
        "n": 3,
        "randomMaxDimension": 4,
        "boxTypes": [{"refId": 7, "dimensions": {"x": 20, "y": 20, "z": 20}, "weightMax": 0}],
        "rules": [rule if "itemRefId" in rule else {**rule, "itemMatch": {"all": True}}],
    }
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    assert validate(request, response) == []
    assert response["lenItems"] == 9 and response["lenLeftovers"] == 0
    assert effect(response)
    assert not any("random" in w for w in response["warnings"])


def _packed_items(response: dict[str, Any]) -> list[dict[str, Any]]:
    return [e["item"] for b in response["boxes"] for e in b["box"]["items"]]


# ------------------------------------------------------------------ matching and operations


def _pack(req: dict[str, Any]) -> dict[str, Any]:
    req = {"orderId": "rules", "includeImages": False, **req}
    response: dict[str, Any] = cartonize.pack(req).model_dump(by_alias=True, exclude_none=True)
    assert validate(req, response) == []
    return response


def _cube_set(ref_id: int, side: float = 1, quantity: int = 1, **extra: Any) -> dict[str, Any]:
    dims = {"x": side, "y": side, "z": side}
    return {"refId": ref_id, "dimensions": dims, "weight": 1, "quantity": quantity, **extra}


def _box_type(ref_id: int, side: float = 10, **extra: Any) -> dict[str, Any]:
    dims = {"x": side, "y": side, "z": side}
    return {"refId": ref_id, "dimensions": dims, "weightMax": 100, **extra}


def _contents(response: dict[str, Any]) -> list[tuple[int, list[int]]]:
    """(box refId, sorted item refIds) of each box, sorted."""
    return sorted(
        (b["box"].get("refId", -1), sorted(e["item"]["refId"] for e in b["box"]["items"]))
        for b in response["boxes"]
    )


def _names(*names: str) -> list[dict[str, Any]]:
    return [_cube_set(i + 1, name=n) for i, n in enumerate(names)]


@pytest.mark.parametrize(
    ("match", "selected"),
    [
        ({"all": True}, {1, 2, 3}),
        ({"property": "name", "expression": "glass"}, {1, 3}),
        ({"property": "name", "expressions": ["mug", "vase"]}, {2, 3}),
        ({"property": "name", "expression": "glass", "negate": True}, {2}),
        ({"property": "sequence", "expression": "11"}, {1}),
        ({"property": "hazmat", "expression": "yes"}, {2}),
        ({"property": "hazmat"}, {2, 3}),  # no expression: the property is set (non-empty)
    ],
)
def test_item_match_selects_by_substring(match: dict[str, Any], selected: set[int]) -> None:
    # set-properties marks the selected item sets, and the response echoes the marks.
    item_sets = [
        _cube_set(1, name="wine glass", sequence="1120"),
        _cube_set(2, name="mug", properties={"hazmat": "yes"}),
        _cube_set(3, name="glass vase", properties={"hazmat": 0}),
    ]
    rule = {
        "operation": "set-properties",
        "itemMatch": match,
        "options": {"properties": {"hit": 1}},
    }
    response = _pack({"itemSets": item_sets, "boxTypes": [_box_type(1)], "rules": [rule]})
    marked = {
        e["item"]["refId"]
        for b in response["boxes"]
        for e in b["box"]["items"]
        if (e["item"].get("properties") or {}).get("hit") == 1
    }
    assert marked == selected


def test_exclude_keeps_matched_items_from_target_items() -> None:
    # Three 1-cubes fit one box; refId 1 may not share with 2, so 1 and 3 share one
    # box and 2 goes alone (or 2 and 3 share, 1 alone).
    response = _pack(
        {
            "itemSets": [_cube_set(1), _cube_set(2), _cube_set(3)],
            "boxTypes": [_box_type(1)],
            "rules": [{"operation": "exclude", "itemRefId": 1, "targetItemRefIds": [2]}],
        }
    )
    assert response["lenBoxes"] == 2
    assert all(not {1, 2} <= set(refs) for _, refs in _contents(response))


def test_exclude_by_sequence_and_target_match() -> None:
    item_sets = [
        _cube_set(1, sequence="A1"),
        _cube_set(2, name="bleach"),
        _cube_set(3, name="bread"),
    ]
    rule = {"operation": "exclude", "itemSequence": "A1", "targetItemMatch": {"expression": "bl"}}
    response = _pack({"itemSets": item_sets, "boxTypes": [_box_type(1)], "rules": [rule]})
    assert response["lenBoxes"] == 2
    assert all(not {1, 2} <= set(refs) for _, refs in _contents(response))


@pytest.mark.parametrize(
    "targets",
    [{"targetBoxRefIds": [1]}, {"targetBoxMatch": {"property": "name", "expression": "small"}}],
)
def test_exclude_keeps_matched_items_out_of_target_boxes(targets: dict[str, Any]) -> None:
    # The small box is cheaper and takes both, but refId 1 may not enter it: both take
    # the big box (50) rather than a small and a big one (51).
    boxes = [_box_type(1, 5, price=1, name="small"), _box_type(2, 10, price=50, name="big")]
    item_sets = [_cube_set(1), _cube_set(2)]
    assert _contents(_pack({"itemSets": item_sets, "boxTypes": boxes})) == [(1, [1, 2])]
    rule = {"operation": "exclude", "itemRefId": 1, **targets}
    response = _pack({"itemSets": item_sets, "boxTypes": boxes, "rules": [rule]})
    assert _contents(response) == [(2, [1, 2])]
    assert response["totalCost"] == 50


def test_exclude_from_every_fitting_box_is_a_leftover_with_the_reason() -> None:
    rule = {"operation": "exclude", "itemRefId": 1, "targetBoxRefIds": [1]}
    response = _pack({"itemSets": [_cube_set(1)], "boxTypes": [_box_type(1)], "rules": [rule]})
    assert response["lenLeftovers"] == 1
    assert "rules exclude" in response["leftovers"][0]["message"]


def test_exclude_without_targets_is_a_422() -> None:
    req = {"itemSets": [_cube_set(1)], "rules": [{"operation": "exclude", "itemRefId": 1}]}
    with pytest.raises(InvalidRequest) as info:
        cartonize.pack(req)
    assert (info.value.details or "").startswith("rules[0].targetItemRefIds: exclude needs targets")


def test_exclude_all_keeps_a_ref_id_to_itself() -> None:
    response = _pack(
        {
            "itemSets": [_cube_set(1, quantity=3), _cube_set(2), _cube_set(3)],
            "boxTypes": [_box_type(1)],
            "rules": [{"operation": "exclude-all", "itemRefId": 1}],
        }
    )
    assert _contents(response) == [(1, [1, 1, 1]), (1, [2, 3])]


def test_pack_as_is_ships_each_unit_in_its_own_carton() -> None:
    item = {"refId": 1, "name": "tv", "dimensions": {"x": 3, "y": 8, "z": 12}, "weight": 9}
    response = _pack(
        {
            "itemSets": [{**item, "quantity": 2}, _cube_set(2, quantity=4)],
            "boxTypes": [_box_type(1, 20, price=100)],
            "boxTypeDefaults": {"price": 7},
            "rules": [{"operation": "pack-as-is", "itemRefId": 1}],
        }
    )
    as_is = [b["box"] for b in response["boxes"] if b["box"]["items"][0]["item"]["refId"] == 1]
    assert len(as_is) == 2
    for box in as_is:
        assert box["dimensions"] == {"x": 3, "y": 8, "z": 12}
        assert box["name"] == "pack-as-is tv"
        assert box["price"] == 7  # priced by boxTypeDefaults
        assert [e["item"]["dimensions"] for e in box["items"]] == [box["dimensions"]]
    assert response["totalCost"] == 2 * 7 + 100


def test_pack_as_is_cartons_reserve_no_space() -> None:
    # reservedSpace 0.2 leaves 80 % of a box for items; the item's own carton is its
    # packaging, with no room kept for packing material, so the item still ships.
    rule = {"operation": "pack-as-is", "itemRefId": 1}
    request = {"itemSets": [_cube_set(1, 2)], "boxTypes": [_box_type(1)], "rules": [rule]}
    response = _pack({**request, "reservedSpace": 0.2})
    (box,) = [b["box"] for b in response["boxes"]]
    assert (box["volumeReserved"], response["lenLeftovers"]) == (0, 0)


def test_pack_as_is_wins_over_lock_orientation_with_a_warning() -> None:
    rules = [
        {"operation": "lock-orientation", "itemRefId": 1, "options": {"freeAxes": [0]}},
        {"operation": "pack-as-is", "itemRefId": 1},
    ]
    response = _pack({"itemSets": [_cube_set(1)], "boxTypes": [_box_type(1)], "rules": rules})
    assert any(
        w.startswith("rules[0] (lock-orientation) and rules[1] (pack-as-is)")
        and "pack-as-is wins" in w
        for w in response["warnings"]
    )
    assert response["boxes"][0]["box"]["name"] == "pack-as-is 1"


def test_set_properties_feeds_later_rules_and_the_response() -> None:
    item_sets = [
        _cube_set(1, name="polish", properties={"oz": 1}),
        _cube_set(2, name="polish remover"),
        _cube_set(3, name="cotton"),
    ]
    rules = [
        {
            "operation": "set-properties",
            "itemMatch": {"property": "name", "expression": "polish"},
            "options": {"properties": {"oz": 64, "class": "flammable"}},
        },
        {"operation": "exclude-all", "itemMatch": {"property": "class", "expression": "flam"}},
    ]
    response = _pack({"itemSets": item_sets, "boxTypes": [_box_type(1)], "rules": rules})
    props = {
        e["item"]["refId"]: e["item"].get("properties")
        for b in response["boxes"]
        for e in b["box"]["items"]
    }
    # overwrite defaults to false: refId 1 keeps oz 1.
    assert props[1] == {"oz": 1, "class": "flammable"}
    assert props[2] == {"oz": 64, "class": "flammable"}
    assert props[3] is None
    assert _contents(response) == [(1, [1]), (1, [2]), (1, [3])]


def test_set_properties_overwrite() -> None:
    rule = {
        "operation": "set-properties",
        "itemRefId": 1,
        "options": {"properties": {"oz": 64}, "overwrite": True},
    }
    response = _pack(
        {
            "itemSets": [_cube_set(1, properties={"oz": 1})],
            "boxTypes": [_box_type(1)],
            "rules": [rule],
        }
    )
    assert response["boxes"][0]["box"]["items"][0]["item"]["properties"] == {"oz": 64}


@pytest.mark.parametrize(("overwrite", "value", "winner"), [(False, 1, 0), (True, 2, 1)])
def test_two_set_properties_rules_on_one_key_warn_which_wins(
    overwrite: bool, value: int, winner: int
) -> None:
    rules = [
        {"operation": "set-properties", "itemRefId": 1, "options": {"properties": {"oz": 1}}},
        {
            "operation": "set-properties",
            "itemRefId": 1,
            "options": {"properties": {"oz": 2}, "overwrite": overwrite},
        },
    ]
    response = _pack({"itemSets": [_cube_set(1)], "boxTypes": [_box_type(1)], "rules": rules})
    assert response["boxes"][0]["box"]["items"][0]["item"]["properties"] == {"oz": value}
    assert (
        f"rules[1] and rules[0] (set-properties) both set 'oz' on item refId 1; "
        f"rules[{winner}] wins"
    ) in response["warnings"]


@pytest.mark.parametrize(
    ("options", "preferred", "box_side", "placed_volume"),
    [
        # Folded in half along x (2 -> 1): replaces the original.
        ({"dimensionScaleChanges": [{"x": -0.5}], "replaceOriginal": True}, True, 10, 1 * 4 * 4),
        # Wrapped: one more on every side.
        ({"dimensionChanges": [{"x": 1, "y": 1, "z": 1}], "replaceOriginal": True}, True, 10, 75),
        # Without replaceOriginal the original stays while it fits and is preferred ...
        ({"dimensions": [{"x": 1, "y": 2, "z": 16}]}, True, 10, 32),
        # ... and the smallest candidate that fits wins when it is not preferred ...
        ({"dimensions": [{"x": 1, "y": 2, "z": 8}]}, False, 10, 16),
        # ... or when the original fits no box.
        ({"dimensions": [{"x": 1, "y": 3, "z": 3}]}, True, 3, 9),
    ],
)
def test_alternate_dimensions(
    options: dict[str, Any], preferred: bool, box_side: float, placed_volume: float
) -> None:
    item = {"refId": 1, "dimensions": {"x": 2, "y": 4, "z": 4}, "weight": 1, "quantity": 1}
    response = _pack(
        {
            "itemSets": [item],
            "boxTypes": [_box_type(1, box_side)],
            "itemInitialOrientationPreferred": preferred,
            "rules": [{"operation": "alternate-dimensions", "itemRefId": 1, "options": options}],
        }
    )
    assert response["lenLeftovers"] == 0
    assert response["totalVolumeNet"] == pytest.approx(placed_volume)


def test_the_validator_rejects_a_replaced_original() -> None:
    # replaceOriginal drops the item's own 2 x 4 x 4: a unit placed so is not valid.
    item = {"refId": 1, "dimensions": {"x": 2, "y": 4, "z": 4}, "weight": 1, "quantity": 1}
    rule = {
        "operation": "alternate-dimensions",
        "itemRefId": 1,
        "options": {"dimensionScaleChanges": [{"x": -0.5}], "replaceOriginal": True},
    }
    request = {"itemSets": [item], "boxTypes": [_box_type(1)], "rules": [rule]}
    response = _pack(request)
    placed = response["boxes"][0]["box"]["items"][0]["item"]
    assert placed["dimensions"] == {"x": 1, "y": 4, "z": 4}
    placed["dimensions"] = {"x": 2, "y": 4, "z": 4}
    assert any(p.startswith("rotation:") for p in validate(request, response))


_FOLDS = {"dimensionScaleChanges": [{"x": -0.5}]}  # a 2 x 4 x 4 unit folds to 1 x 4 x 4


@pytest.mark.parametrize(
    ("rules", "preferred", "boxes"),
    [
        ([], True, [[(2, 4, 4)]] * 3),  # one unit to a 3 x 4 x 4 box
        # Each unit as given first; one that no longer fits folds into the 1 left.
        ([_FOLDS], True, [[(2, 4, 4), (1, 4, 4)], [(2, 4, 4)]]),
        # Not preferring the given shape, every unit takes the flatter fold: one box.
        ([_FOLDS], False, [[(1, 4, 4)] * 3]),
    ],
)
def test_alternate_dimensions_are_chosen_unit_by_unit(
    rules: list[dict[str, Any]], preferred: bool, boxes: list[list[tuple[float, ...]]]
) -> None:
    item = {"refId": 1, "dimensions": {"x": 2, "y": 4, "z": 4}, "weight": 1, "quantity": 3}
    box = {"refId": 9, "dimensions": {"x": 3, "y": 4, "z": 4}, "weightMax": 0}
    response = _pack(
        {
            "itemSets": [item],
            "boxTypes": [box],
            "itemInitialOrientationPreferred": preferred,
            "rules": [
                {"operation": "alternate-dimensions", "itemRefId": 1, "options": o} for o in rules
            ],
        }
    )
    placed = sorted(
        sorted(tuple(e["item"]["dimensions"].values()) for e in b["box"]["items"])
        for b in response["boxes"]
    )
    assert placed == sorted(sorted(b) for b in boxes)


def test_an_alternate_shape_keeps_its_centre_of_mass_in_proportion() -> None:
    item = {
        "refId": 1,
        "dimensions": {"x": 2, "y": 4, "z": 4},
        "centerOfMass": {"x": 0.5, "y": 1, "z": 2},
        "weight": 1,
        "quantity": 2,
    }
    box = {"refId": 9, "dimensions": {"x": 3, "y": 4, "z": 4}, "weightMax": 0}
    rule = {"operation": "alternate-dimensions", "itemRefId": 1, "options": _FOLDS}
    response = _pack({"itemSets": [item], "boxTypes": [box], "rules": [rule]})
    given, folded = (e["item"] for e in response["boxes"][0]["box"]["items"])
    assert given["centerOfMass"] == {"x": 0.5, "y": 1, "z": 2}
    # Folded at x = 2: the offset's x halves with the side (0.5 -> 0.25).
    assert folded["origin"]["x"] == 2
    assert folded["centerOfMass"] == {"x": 2.25, "y": 1, "z": 2}


@pytest.mark.parametrize("staged", [False, True])
def test_a_folded_unit_of_an_auto_id_item_set_is_counted(staged: bool) -> None:
    # The item set's refId is assigned (0), so the validator knows the unit only by its
    # shape: folded, that is an alternate shape of the set's, not the set's own.
    stage = {"operation": "pack-sequence", "itemMatch": {"all": True}}
    request = {
        "itemSets": [{"dimensions": {"x": 1, "y": 1, "z": 1}, "weight": 0}],
        "boxTypes": [{"dimensions": {"x": 5, "y": 5, "z": 5}, "weightMax": 0}],
        "itemInitialOrientationPreferred": False,
        "rules": [
            {"operation": "alternate-dimensions", "itemRefId": 0, "options": {**_FOLDS}},
            *([stage] if staged else []),
        ],
    }
    response = _pack(request)  # which validates it
    (entry,) = response["boxes"][0]["box"]["items"]
    assert entry["item"]["dimensions"] == {"x": 0.5, "y": 1, "z": 1}
    response["boxes"][0]["box"]["items"] = []
    assert any(p.startswith("units:") and "1 missing" in p for p in validate(request, response))


@pytest.mark.parametrize(
    ("winner", "name"),
    [
        ({"operation": "pack-as-is", "itemRefId": 1}, "pack-as-is"),
        (
            {
                "operation": "internal-space",
                "itemRefId": 1,
                "options": {"boxType": {"dimensions": {"x": 1, "y": 1, "z": 1}}},
            },
            "internal-space: it packs as given",
        ),
        ({"operation": "group-pack", "itemRefId": 1, "options": {"axisMultiplier": 2}}, None),
        ({"operation": "bounded-fill", "itemRefId": 1}, None),
    ],
)
def test_rules_that_ship_as_given_and_alternate_dimensions_warn_which_wins(
    winner: dict[str, Any], name: str | None
) -> None:
    item = {"refId": 1, "dimensions": {"x": 2, "y": 4, "z": 4}, "weight": 1, "quantity": 2}
    box = {"refId": 9, "dimensions": {"x": 3, "y": 4, "z": 4}, "weightMax": 0}
    alternate = {"operation": "alternate-dimensions", "itemRefId": 1, "options": _FOLDS}
    response = _pack({"itemSets": [item], "boxTypes": [box], "rules": [alternate, winner]})
    if name is None:
        # group-pack and bounded-fill yield to alternate-dimensions: the units fold.
        assert any("alternate-dimensions wins" in w for w in response["warnings"])
        assert {
            e["item"]["dimensions"]["x"] for b in response["boxes"] for e in b["box"]["items"]
        } == {1, 2}
    else:
        assert (
            f"rules[0] (alternate-dimensions) and rules[1] ({name}) both select item refId 1; "
            f"{name.split(':')[0]} wins: the item keeps its own dimensions"
        ) in response["warnings"]
        assert {
            e["item"]["dimensions"]["x"]
            for b in response["boxes"]
            for e in b["box"]["items"]
            if e["item"]["refId"] == 1
        } == {2}


@pytest.mark.parametrize(
    ("rule", "details"),
    [
        (
            {"operation": "set-properties", "itemRefId": 1, "options": {"properties": [1]}},
            "rules[0].options.properties: must be an object",
        ),
        (
            {
                "operation": "alternate-dimensions",
                "itemRefId": 1,
                "options": {"dimensions": [{"x": "a"}]},
            },
            "rules[0].options.dimensions: must be a list of points",
        ),
        (
            {"operation": "alternate-dimensions", "itemRefId": 1, "options": {}},
            "rules[0].options: alternate-dimensions needs dimensions",
        ),
        (
            {
                "operation": "alternate-dimensions",
                "itemRefId": 1,
                "options": {"dimensionChanges": [{"x": -5}]},
            },
            "rules[0].options.dimensions: every alternate side must come out > 0",
        ),
    ],
)
def test_malformed_rule_options_are_422_naming_rule_and_field(
    rule: dict[str, Any], details: str
) -> None:
    with pytest.raises(InvalidRequest) as info:
        cartonize.pack({"itemSets": [_cube_set(1, 2)], "rules": [rule]})
    assert (info.value.details or "").startswith(details)


@pytest.mark.parametrize(
    ("rule", "details"),
    [
        ({"operation": "lock-orientation", "options": {"freeAxes": "x"}}, "freeAxes"),
        ({"operation": "fragile", "options": {"maxWeight": -1}}, "maxWeight"),
        ({"operation": "set-properties", "options": {"overwrite": 1}}, "properties"),
        (
            {
                "operation": "alternate-dimensions",
                "options": {"dimensionScaleChanges": [{"x": -1}]},
            },
            "dimensions",
        ),
        (
            {"operation": "irregular", "options": {"maxDiameter": 2, "innerDiameter": 3}},
            "maxDiameter",
        ),
        ({"operation": "group-pack", "options": {"axisMultiplier": 0}}, "axisMultiplier"),
        ({"operation": "pack-sequence", "options": {"reduce": "fold"}}, "reduce"),
    ],
)
def test_malformed_options_are_a_422_even_when_the_rule_selects_nothing(
    rule: dict[str, Any], details: str
) -> None:
    request = {"itemSets": [_cube_set(1)], "boxTypes": [_box_type(1)]}
    for selector in ({"itemRefId": 99}, {}):
        with pytest.raises(InvalidRequest) as info:
            cartonize.pack({**request, "rules": [{**rule, **selector}]})
        assert (info.value.details or "").startswith(f"rules[0].options.{details}"), info.value


@pytest.mark.parametrize(
    ("rules", "warning"),
    [
        (
            [{"operation": "lock-orientation", "itemRefId": 1, "options": {"freeAxis": [0]}}],
            "unknown field 'rules[0].options.freeAxis' ignored (operation lock-orientation)",
        ),
        (
            [
                {"operation": "group-pack", "itemRefId": 1, "options": {"axisMultiplier": 2}},
                {"operation": "exclude-all", "itemRefId": 1, "options": {"strict": True}},
            ],
            "unknown field 'rules[1].options.strict' ignored (operation exclude-all)",
        ),
    ],
)
def test_unknown_option_keys_warn_naming_rule_and_key(
    rules: list[dict[str, Any]], warning: str
) -> None:
    request = {"itemSets": [_cube_set(1, quantity=8)], "boxTypes": [_box_type(1)], "rules": rules}
    assert _pack(request)["warnings"].count(warning) == 1


def test_unknown_operation_is_a_422_naming_the_rule() -> None:
    with pytest.raises(InvalidRequest) as info:
        cartonize.pack({"rules": [{"operation": "teleport", "itemRefId": 1}]})
    assert "rules[0].operation" in (info.value.details or "")


def test_ignore_subspaces_is_accepted_without_effect_when_there_are_no_subspaces() -> None:
    rule = {
        "operation": "exclude",
        "itemRefId": 1,
        "targetItemRefIds": [2],
        "ignoreSubspaces": True,
    }
    response = _pack(
        {"itemSets": [_cube_set(1), _cube_set(2)], "boxTypes": [_box_type(1)], "rules": [rule]}
    )
    assert response["lenBoxes"] == 2


_PREPACKED_BOX = {
    "refId": 55,
    "dimensions": {"x": 20, "y": 20, "z": 20},
    "weightMax": 0,
    "items": [{"item": _cube_set(3)}],
}


@pytest.mark.parametrize(
    "rule",
    [
        {"operation": "exclude", "itemRefId": 1, "targetItemRefIds": [3]},
        {"operation": "exclude", "itemRefId": 3, "targetItemRefIds": [1]},
        {"operation": "exclude", "itemRefId": 1, "targetBoxRefIds": [55]},
        {"operation": "exclude-all", "itemRefId": 1},
        {"operation": "exclude-all", "itemRefId": 3},
        {"operation": "pack-as-is", "itemRefId": 1},
    ],
)
@pytest.mark.parametrize(
    "generators",
    [
        [],
        [{"operation": "pack-as-is"}],
        # With generated types the engine also packs without them (boxTypeSubsets); that
        # pack lost the exclusions from pre-packed boxes, numbered after the box types.
        [{"operation": "cartesian", "options": {"xList": [30], "yList": [30], "zList": [30]}}],
    ],
)
def test_exclusions_and_pack_as_is_keep_new_units_out_of_pre_packed_boxes(
    rule: dict[str, Any], generators: list[dict[str, Any]]
) -> None:
    # With generated box types the engine also packs with the request's own types alone
    # (boxTypeSubsets); regression (found by test_properties): that pack lost the
    # exclusions from pre-packed boxes, numbered after the box types.
    request = {"itemSets": [_cube_set(1, 2)], "boxTypes": [_box_type(7, 20)]}
    request["boxes"] = [_PREPACKED_BOX]
    request["boxTypeGenerators"] = generators
    # Without the rule the new unit joins the pre-packed box, with it a box of its own.
    assert _contents(_pack(request)) == [(55, [1, 3])]
    tuned = _pack({**request, "rules": [rule]})
    assert tuned["boxes"][0]["box"]["refId"] == 55
    assert [e["item"]["refId"] for e in tuned["boxes"][0]["box"]["items"]] == [3]
    assert tuned["lenBoxes"] == 2 and tuned["lenLeftovers"] == 0


def test_rules_leave_pre_packed_items_as_given() -> None:
    request = {
        "itemSets": [_cube_set(1, 2)],
        "boxTypes": [_box_type(7, 20)],
        "boxes": [_PREPACKED_BOX],
        "rules": [
            {"operation": "lock-orientation", "itemRefId": 3, "options": {"freeAxes": []}},
            {"operation": "pack-as-is", "itemRefId": 3},
            {"operation": "set-properties", "itemRefId": 3, "options": {"properties": {"a": 1}}},
        ],
    }
    box = _pack(request)["boxes"][0]["box"]
    assert box["refId"] == 55 and len(box["items"]) == 2
    assert all("properties" not in e["item"] for e in box["items"])


@pytest.mark.parametrize(
    "rule",
    [
        {"operation": "irregular", "itemRefId": 1, "options": {"maxDiameter": 5}},
        {"operation": "alternate-dimensions", "itemRefId": 1, "options": {"dimensions": [{}]}},
    ],
)
def test_a_unit_of_measure_ladder_wins_over_reshaping_rules(rule: dict[str, Any]) -> None:
    if rule["operation"] == "alternate-dimensions":
        rule["options"] = {"dimensions": [{"x": 1, "y": 1, "z": 1}], "replaceOriginal": True}
    ladder = [{}, {"axisMultipliers": {"x": 2, "y": 1, "z": 1}}]
    item = _cube_set(1, 2, quantity=3, dimensionSets=ladder)
    response = _pack({"itemSets": [item], "boxTypes": [_box_type(7, 20)], "rules": [rule]})
    # A case of two and an each, as without the rule.
    shapes = sorted(sorted(i["dimensions"].values(), reverse=True) for i in _packed_items(response))
    assert shapes == [[2, 2, 2], [4, 2, 2]]
    assert f"rules[0] ({rule['operation']}): item refId 1 packs as the units of its " in " ".join(
        response["warnings"]
    )


# ------------------------------------------------------------------ the validator's rule checks


def _problems_after(req: dict[str, Any], corrupt: Any) -> list[str]:
    req = {"orderId": "rules", "includeImages": False, **req}
    response = cartonize.pack(req).model_dump(by_alias=True, exclude_none=True)
    assert validate(req, response) == []
    corrupt(response)
    return validate(req, response)


def test_validator_catches_a_turn_about_a_locked_axis() -> None:
    def tip_over(response: dict[str, Any]) -> None:
        response["boxes"][0]["box"]["items"][0]["item"]["dimensions"] = {"x": 9, "y": 2, "z": 1}

    problems = _problems_after(_request([0], (10, 10, 10)), tip_over)
    assert any(p.startswith("orientation: box 0 item 1 (refId 1)") for p in problems), problems


def test_a_lock_on_a_service_assigned_ref_id_holds() -> None:
    # Item sets without a refId get max(refId) + 1, ... in order; a rule may name one.
    req = {
        "itemSets": [
            {"dimensions": {"x": 13, "y": 16, "z": 15}, "weight": 1},
            {"dimensions": {"x": 15, "y": 1, "z": 12}, "weight": 1},
        ],
        "boxTypes": [{"refId": 9, "dimensions": {"x": 20, "y": 20, "z": 30}, "weightMax": 0}],
        "rules": [{"operation": "lock-orientation", "itemRefId": 1, "options": {"freeAxes": []}}],
    }
    locked = [
        e["item"] for b in _pack(req)["boxes"] for e in b["box"]["items"] if e["item"]["refId"] == 1
    ]
    assert [i["dimensions"] for i in locked] == [{"x": 15, "y": 1, "z": 12}]


def test_a_lock_holds_for_a_pre_packed_item_the_engine_places() -> None:
    req = {
        "itemSets": [_cube_set(1)],
        "boxTypes": [_box_type(1)],
        "boxes": [
            {
                "dimensions": {"x": 20, "y": 20, "z": 20},
                "weightMax": 0,
                "items": [
                    {"item": {"refId": 3, "dimensions": {"x": 1, "y": 8, "z": 1}, "weight": 1}}
                ],
            }
        ],
        "rules": [{"operation": "lock-orientation", "itemRefId": 3, "options": {"freeAxes": []}}],
    }
    placed = [e["item"] for e in _pack(req)["boxes"][0]["box"]["items"] if e["item"]["refId"] == 3]
    assert [i["dimensions"] for i in placed] == [{"x": 1, "y": 8, "z": 1}]


def test_validator_catches_excluded_items_sharing_a_box() -> None:
    def merge(response: dict[str, Any]) -> None:
        second = response["boxes"].pop(1)["box"]["items"][0]
        second["item"]["origin"] = {"x": 5, "y": 5, "z": 5}
        response["boxes"][0]["box"]["items"].append(second)

    req = {
        "itemSets": [_cube_set(1), _cube_set(2)],
        "boxTypes": [_box_type(1)],
        "rules": [{"operation": "exclude", "itemRefId": 1, "targetItemRefIds": [2]}],
    }
    problems = _problems_after(req, merge)
    assert any(p.startswith("exclusion:") and "shares box 0" in p for p in problems), problems


def test_validator_catches_a_pack_as_is_item_in_a_bigger_box() -> None:
    def overbox(response: dict[str, Any]) -> None:
        response["boxes"][0]["box"]["dimensions"] = {"x": 5, "y": 5, "z": 5}

    req = {
        "itemSets": [_cube_set(1, 2)],
        "boxTypes": [_box_type(1)],
        "rules": [{"operation": "pack-as-is", "itemRefId": 1}],
    }
    problems = _problems_after(req, overbox)
    assert any(p.startswith("pack-as-is:") for p in problems), problems
