"""Box choice and box accounting options: a request with the option and one without differ
the way service-spec.md §A says, and both pass the independent validator."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cartonize
import pytest
from cartonize.errors import InvalidRequest

from tests.validator import validate

Wire = dict[str, Any]


def _cube(ref_id: int, side: float, quantity: int, weight: float = 1.0, **extra: Any) -> Wire:
    return {
        "refId": ref_id,
        "dimensions": {"x": side, "y": side, "z": side},
        "weight": weight,
        "quantity": quantity,
        **extra,
    }


def _item(ref_id: int, x: float, y: float, z: float, quantity: int) -> Wire:
    return {
        "refId": ref_id,
        "dimensions": {"x": x, "y": y, "z": z},
        "weight": 1,
        "quantity": quantity,
    }


def _box(ref_id: int, x: float, y: float, z: float, **extra: Any) -> Wire:
    return {
        "refId": ref_id,
        "dimensions": {"x": x, "y": y, "z": z},
        "weightMax": 1000,
        **extra,
    }


def _request(item_sets: list[Wire], box_types: list[Wire], **extra: Any) -> Wire:
    return {
        "orderId": "box-choice",
        "includeImages": False,
        "itemSets": item_sets,
        "boxTypes": box_types,
        **extra,
    }


def _pack(request: Wire) -> Wire:
    response = cartonize.pack(request).model_dump(mode="json", exclude_none=True)
    assert validate(request, response) == []
    return response


def _ref_ids(response: Wire) -> list[int]:
    return [b["box"]["refId"] for b in response["boxes"]]


def _items(response: Wire, box: int) -> list[Wire]:
    return [entry["item"] for entry in response["boxes"][box]["box"]["items"]]


def _slab(thickness: float, ref_id: int) -> Wire:
    return _item(ref_id, 10, 10, thickness, 1)


_LOCKED = [
    {"operation": "lock-orientation", "itemMatch": {"all": True}, "options": {"freeAxes": []}}
]

#: A pre-packed 10-cube holding one 5-cube at the origin and one to be placed.
_PREPACKED = {
    "dimensions": {"x": 10, "y": 10, "z": 10},
    "weightMax": 100,
    "items": [
        {"item": _cube(1, 5, 1) | {"origin": {"x": 0, "y": 0, "z": 0}}},
        {"item": _cube(7, 5, 1, weight=2)},
    ],
}


def _prepacked_filled_first(plain: Wire, tuned: Wire) -> None:
    assert plain["lenBoxes"] == tuned["lenBoxes"] == 1
    assert plain["lenItems"] == 4 and tuned["lenItems"] == 6
    items = _items(tuned, 0)
    assert items[0]["origin"] == {"x": 0, "y": 0, "z": 0} and items[0]["refId"] == 1
    assert items[1]["refId"] == 7 and "packedIndex" not in items[1]
    # New units of refId 1 continue the numbering after the request's own units.
    assert sorted(i["uniqueId"] for i in items if i["refId"] == 1) == [
        "1-0",
        "1-1",
        "1-2",
        "1-3",
        "1-4",
    ]


def _prepacked_count_toward_boxes_max(plain: Wire, tuned: Wire) -> None:
    assert plain["lenLeftovers"] == 0 and plain["lenBoxes"] == 1
    # The pre-packed box is full: no new box may open under boxesMax 1.
    assert tuned["lenBoxes"] == 1 and tuned["lenLeftovers"] == 4
    assert all(left["message"].startswith("boxesMax 1 reached") for left in tuned["leftovers"])


def _prepacked_never_removed(plain: Wire, tuned: Wire) -> None:
    assert _ref_ids(plain) == [9]
    # The pre-packed box is too small for the item but stays in the answer, empty.
    assert tuned["lenBoxes"] == 2 and tuned["boxes"][0]["box"]["items"] == []
    assert tuned["boxes"][1]["box"]["refId"] == 9


def _prepacked_preferred(plain: Wire, tuned: Wire) -> None:
    assert _ref_ids(plain) == [9] and plain["totalCost"] == 100
    # Filled first, although a new box would be cheaper.
    assert _ref_ids(tuned) == [5] and tuned["totalCost"] == 500


def _estimated_is_pessimistic(plain: Wire, tuned: Wire) -> None:
    # actual finds that the 6x6x18 box takes all three 6-cubes; the estimate
    # (0.85 x 648 holds two) sends units elsewhere first.
    assert plain["totalCost"] == 648 and plain["lenBoxes"] == 1
    assert tuned["totalCost"] > plain["totalCost"]


def _estimated_with_full_usable_space(plain: Wire, tuned: Wire) -> None:
    assert plain["totalCost"] > 648
    assert tuned["totalCost"] == 648 and _ref_ids(tuned) == [11]


def _lookahead_is_cheaper(plain: Wire, tuned: Wire) -> None:
    assert plain["lenLeftovers"] == tuned["lenLeftovers"] == 0
    assert tuned["totalCost"] < plain["totalCost"]


def _lookahead_schema_example(plain: Wire, tuned: Wire) -> None:
    # Schema's example: 8 items, A takes 6 for 1200, B takes 4 for 1000: two Bs (2000).
    assert _ref_ids(tuned) == [11, 11] and tuned["totalCost"] == 2000


def _lookback_zero_closes_boxes(plain: Wire, tuned: Wire) -> None:
    def depths(response: Wire) -> list[list[float]]:
        return [
            sorted(i["dimensions"]["z"] for i in _items(response, b))
            for b in range(response["lenBoxes"])
        ]

    # Unlimited: the 2 goes back into the first box. 0: each box closes when the next
    # slab does not fit, so the 2 follows the 6 and 3 into a box of its own.
    assert depths(plain) == [[2, 8], [3, 7], [6]]
    assert depths(tuned) == [[8], [7], [3, 6], [2]]


def _lookback_one_keeps_a_box_open(plain: Wire, tuned: Wire) -> None:
    assert plain["lenBoxes"] == 4
    assert tuned["lenBoxes"] == 3


def _reserved_space_caps_volume(plain: Wire, tuned: Wire) -> None:
    assert plain["lenBoxes"] == 1 and plain["boxes"][0]["box"]["volumeReserved"] == 0
    assert tuned["lenBoxes"] == 2
    for entry in tuned["boxes"]:
        box = entry["box"]
        assert box["volumeReserved"] == pytest.approx(200)
        assert box["volumeUsed"] == pytest.approx(box["volumeNet"] + 200)
    assert tuned["totalVolumeUsed"] == pytest.approx(tuned["totalVolumeNet"] + 400)


def _box_reserved_space_wins(plain: Wire, tuned: Wire) -> None:
    assert plain["lenBoxes"] == 2
    assert tuned["lenBoxes"] == 1 and tuned["boxes"][0]["box"]["volumeReserved"] == 0


def _property_sum_capped(plain: Wire, tuned: Wire) -> None:
    assert plain["lenBoxes"] == 1
    assert tuned["lenBoxes"] == 2
    values = [b["box"]["propertyConstraints"][0]["value"] for b in tuned["boxes"]]
    assert values == [4, 4]


def _property_initial_value(plain: Wire, tuned: Wire) -> None:
    assert plain["lenBoxes"] == 2
    assert tuned["lenBoxes"] == 4
    assert [b["box"]["propertyConstraints"][0]["value"] for b in tuned["boxes"]] == [5] * 4


def _cohorts_one_group(plain: Wire, tuned: Wire) -> None:
    from tests.validator import _parse, check_cohorts

    assert list(check_cohorts(_parse({"cohortPacking": True, "cohortMax": 1}, plain)))
    assert tuned["lenLeftovers"] == 0


def _outer_reported(plain: Wire, tuned: Wire) -> None:
    assert "outer" not in plain["boxes"][0]["box"]
    assert tuned["boxes"][0]["box"]["outer"]["dimensions"] == {"x": 12.0, "y": 12.0, "z": 12.0}
    assert tuned["totalCost"] == plain["totalCost"]


def _outer_based_cost(plain: Wire, tuned: Wire) -> None:
    # Rated on 12^3 / 100 = 17.28 instead of 10^3 / 100 = 10.
    assert plain["totalCost"] == 1000
    assert tuned["totalCost"] == 1728


def _tiebreak_by_weight(plain: Wire, tuned: Wire) -> None:
    # Both types cost 100: volume keeps the smaller 10-cube, weight the lighter 12-cube.
    assert _ref_ids(plain) == [20] and _ref_ids(tuned) == [21]
    assert plain["totalCost"] == tuned["totalCost"] == 100


def _defaults_merged_under_box_types(plain: Wire, tuned: Wire) -> None:
    # The defaults' itemsPerBoxMax 2 applies to box type 9, which sets none; box type 8
    # keeps its own 0 (no limit), so the cheaper 8 takes all four cubes.
    assert _ref_ids(plain) == [9]
    assert _ref_ids(tuned) == [8] and tuned["totalCost"] == 150
    assert tuned["boxes"][0]["box"]["weightTare"] == 1


_RATED = {"rateTable": {"basePrice": 0, "priceIncreaseRate": 100, "dimFactor": 100}}

CASES: list[tuple[str, Wire, Wire, Callable[[Wire, Wire], None]]] = [
    (
        "boxes: pre-packed box filled first, its items kept",
        _request([_cube(1, 5, 4)], [_box(9, 10, 10, 10)]),
        {"boxes": [_PREPACKED]},
        _prepacked_filled_first,
    ),
    (
        "boxes: count toward boxesMax",
        _request([_cube(1, 5, 4)], [_box(9, 10, 10, 10)], boxesMax=1),
        {"boxes": [{**_PREPACKED, "items": [{"item": _cube(3, 10, 1)}]}]},
        _prepacked_count_toward_boxes_max,
    ),
    (
        "boxes: never removed, even empty",
        _request([_cube(1, 5, 1)], [_box(9, 10, 10, 10)]),
        {"boxes": [{"boxType": _box(5, 2, 2, 2)}]},
        _prepacked_never_removed,
    ),
    (
        "boxes: used before a cheaper new box",
        _request([_cube(1, 5, 1)], [_box(9, 10, 10, 10, price=100)]),
        {"boxes": [{"boxType": _box(5, 10, 10, 10, price=500)}]},
        _prepacked_preferred,
    ),
    (
        "boxTypeChoiceStyle estimated",
        _request([_cube(1, 6, 3)], [_box(10, 10, 10, 10), _box(11, 6, 6, 18)]),
        {"boxTypeChoiceStyle": "estimated"},
        _estimated_is_pessimistic,
    ),
    (
        "usableSpace with estimated",
        _request(
            [_cube(1, 6, 3)],
            [_box(10, 10, 10, 10), _box(11, 6, 6, 18)],
            boxTypeChoiceStyle="estimated",
        ),
        {"usableSpace": 1.0},
        _estimated_with_full_usable_space,
    ),
    (
        "boxTypeChoiceLookahead 1 finds a cheaper sequence",
        _request(
            [_item(0, 5, 6, 6, 4), _item(1, 3, 5, 6, 5), _item(2, 7, 5, 2, 5)],
            [_box(10, 14, 10, 6, price=1700), _box(11, 7, 7, 7, price=800)],
            itemSort="default",
        ),
        {"boxTypeChoiceLookahead": 1},
        _lookahead_is_cheaper,
    ),
    (
        "boxTypeChoiceLookahead: the schema's example",
        _request(
            [_cube(1, 5, 8)],
            [_box(10, 10, 15, 5, price=1200), _box(11, 10, 10, 5, price=1000)],
        ),
        {"boxTypeChoiceLookahead": 1},
        _lookahead_schema_example,
    ),
    (
        "boxTypeChoiceLookback 0 against unlimited",
        _request(
            [_slab(8, 1), _slab(7, 2), _slab(6, 3), _slab(3, 4), _slab(2, 5)],
            [_box(10, 10, 10, 10)],
            itemSort="default",
            rules=_LOCKED,
        ),
        {"boxTypeChoiceLookback": 0},
        _lookback_zero_closes_boxes,
    ),
    (
        "boxTypeChoiceLookback 1 against 0",
        _request(
            [_slab(8, 1), _slab(7, 2), _slab(6, 3), _slab(3, 4), _slab(2, 5)],
            [_box(10, 10, 10, 10)],
            itemSort="default",
            rules=_LOCKED,
            boxTypeChoiceLookback=0,
        ),
        {"boxTypeChoiceLookback": 1},
        _lookback_one_keeps_a_box_open,
    ),
    (
        "reservedSpace caps each box's item volume",
        _request([_cube(1, 5, 8)], [_box(9, 10, 10, 10)]),
        {"reservedSpace": 0.2},
        _reserved_space_caps_volume,
    ),
    (
        "box reservedSpace overrides the request's",
        _request([_cube(1, 5, 8)], [_box(9, 10, 10, 10)], reservedSpace=0.2),
        {"boxTypes": [_box(9, 10, 10, 10, reservedSpace=0)]},
        _box_reserved_space_wins,
    ),
    (
        "propertyConstraints: sum per box at most max",
        _request([_cube(1, 5, 4, properties={"lithium": 2})], [_box(9, 10, 10, 10)]),
        {"boxTypes": [_box(9, 10, 10, 10, propertyConstraints=[{"key": "lithium", "max": 5}])]},
        _property_sum_capped,
    ),
    (
        "propertyConstraints: initial value counts",
        _request(
            [_cube(1, 5, 4, properties={"lithium": 2})],
            [_box(9, 10, 10, 10, propertyConstraints=[{"key": "lithium", "max": 5}])],
        ),
        {
            "boxTypes": [
                _box(9, 10, 10, 10, propertyConstraints=[{"key": "lithium", "max": 5, "value": 3}])
            ]
        },
        _property_initial_value,
    ),
    (
        "cohortPacking with cohortMax 1",
        _request(
            [_item(0, 5, 7, 3, 3), _item(1, 7, 3, 6, 5), _item(2, 7, 2, 7, 2)],
            [_box(10, 12, 12, 12)],
            itemSort="default",
        ),
        {"cohortPacking": True, "cohortMax": 1},
        _cohorts_one_group,
    ),
    (
        "valueTiebreaker weight: lighter tare among equal costs",
        _request(
            [_cube(1, 5, 1)],
            [_box(20, 10, 10, 10, price=100, weightTare=2), _box(21, 12, 12, 12, price=100)],
        ),
        {"valueTiebreaker": "weight"},
        _tiebreak_by_weight,
    ),
    (
        "boxTypeDefaults merged under each box type, box values win",
        _request(
            [_cube(1, 5, 4)],
            [_box(9, 10, 10, 10, price=100), _box(8, 10, 10, 10, price=150)],
        ),
        {
            "boxTypeDefaults": {"itemsPerBoxMax": 2, "weightTare": 1, "price": 999},
            "boxTypes": [
                _box(9, 10, 10, 10, price=100),
                _box(8, 10, 10, 10, price=150, itemsPerBoxMax=0),
            ],
        },
        _defaults_merged_under_box_types,
    ),
    (
        "outer dimensionChange reported",
        _request([_cube(1, 5, 1)], [_box(9, 10, 10, 10)]),
        {"boxTypes": [_box(9, 10, 10, 10, outer={"dimensionChange": {"x": 2, "y": 2, "z": 2}})]},
        _outer_reported,
    ),
    (
        "outerBasedCost rates on the outer volume",
        _request(
            [_cube(1, 5, 1)],
            [_box(9, 10, 10, 10, outer={"dimensionChange": {"x": 2, "y": 2, "z": 2}}, **_RATED)],
        ),
        {
            "boxTypes": [
                _box(
                    9,
                    10,
                    10,
                    10,
                    outer={"dimensionChange": {"x": 2, "y": 2, "z": 2}},
                    outerBasedCost=True,
                    **_RATED,
                )
            ]
        },
        _outer_based_cost,
    ),
]


@pytest.mark.parametrize(
    ("base", "option", "expect"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_option_changes_packing_as_specified(
    base: Wire, option: Wire, expect: Callable[[Wire, Wire], None]
) -> None:
    plain = _pack(base)
    tuned = _pack({**base, **option})
    expect(plain, tuned)


@pytest.mark.parametrize(
    "placement",
    [
        {"packOrigin": {"x": 0, "y": 3, "z": 41}, "itemsInlineMax": [0, 1, 2]},
        {"placementStyle": "mound"},
        {"corners": False},
    ],
    ids=["packOrigin", "mound", "corners-false"],
)
def test_cohorts_hold_under_every_placement(placement: Wire) -> None:
    # Placement beyond the first corner point (a reference point, faces and walls) keeps
    # each item set within cohortMax groups too; _pack validates the cohorts.
    request = _request(
        [_item(0, 2, 2, 1, 6), _item(1, 1, 3, 2, 4)],
        [_box(9, 5, 9, 13)],
        cohortPacking=True,
        cohortMax=1,
        **placement,
    )
    assert _pack(request)["lenLeftovers"] == 0


def test_cohort_max_never_keeps_out_a_pre_packed_boxs_given_items() -> None:
    # Found by the cohort fuzz (was a 422 "does not fit in its pre-packed box"): the
    # given cube in mid-box is refId 2's one cohort allowed, and no free place touches
    # it; the second given cube is the box's contents all the same, a cohort of its own.
    given = [
        {"item": _cube(2, 1, 1) | {"origin": {"x": 3, "y": 3, "z": 3}}},
        {"item": _cube(2, 1, 1)},
    ]
    request = _request(
        [_cube(1, 1, 1)],
        [_box(9, 4, 4, 4)],
        cohortPacking=True,
        cohortMax=1,
        boxes=[{"dimensions": {"x": 9, "y": 9, "z": 9}, "weightMax": 0, "items": given}],
    )
    items = _items(_pack(request), 0)
    assert [i["refId"] for i in items] == [2, 2, 1]


_BASE = _request([_cube(1, 5, 2)], [_box(9, 10, 10, 10)])


def _prepacked_with(item: Wire) -> Wire:
    return {**_BASE, "boxes": [{**_PREPACKED, "items": [_PREPACKED["items"][0], {"item": item}]}]}


@pytest.mark.parametrize(
    ("request_", "details"),
    [
        (
            {**_BASE, "boxTypeChoiceStyle": "estimated", "usableSpace": 0},
            "usableSpace: must be > 0 with boxTypeChoiceStyle 'estimated'",
        ),
        (
            _prepacked_with(_cube(2, 5, 1) | {"origin": {"x": 2, "y": 0, "z": 0}}),
            "boxes[0].items[1]: overlaps another item of its box",
        ),
        (
            _prepacked_with(_cube(2, 5, 1) | {"origin": {"x": 6, "y": 0, "z": 0}}),
            "boxes[0].items[1]: origin puts the item (partly) outside its box",
        ),
        (
            _prepacked_with(_cube(2, 5, 2) | {"origin": {"x": 5, "y": 0, "z": 0}}),
            "boxes[0].items[1].item.quantity: an item with an origin is one unit (got 2)",
        ),
        (
            _prepacked_with(_cube(2, 9, 1)),
            "boxes[0].items[1]: does not fit in its pre-packed box",
        ),
        (
            # It named itemSets[n], the item set the pre-packed item becomes inside.
            _prepacked_with(_cube(2, 5, 1) | {"centerOfMass": {"x": 6, "y": 0, "z": 0}}),
            "boxes[0].items[1].item.centerOfMass: must lie within the item, 0..5, 0..5, 0..5",
        ),
        (
            {**_BASE, "boxes": [{"weightMax": 10}]},
            "boxes[0].dimensions: required, on the box or in its boxType",
        ),
        (
            {
                **_BASE,
                "boxes": [{"boxType": _box(5, 10, 10, 10)}],
                "rules": [{"operation": "pack-sequence", "itemMatch": {"all": True}}],
            },
            "boxes: pre-packed boxes cannot be combined with pack-sequence rules",
        ),
    ],
    ids=[
        "usable-space-0",
        "overlap",
        "outside",
        "quantity",
        "no-room",
        "centre-of-mass",
        "no-dimensions",
        "pack-sequence",
    ],
)
def test_contradictions_that_cannot_pack_are_422(request_: Wire, details: str) -> None:
    with pytest.raises(InvalidRequest) as raised:
        cartonize.pack(request_)
    assert details in str(raised.value.details)


@pytest.mark.parametrize(
    ("extra", "warning"),
    [
        ({"usableSpace": 0.5}, "usableSpace only applies to boxTypeChoiceStyle 'estimated'"),
        (
            {"boxTypeChoiceStyle": "estimated", "boxTypeChoiceLookahead": 2},
            "boxTypeChoiceLookahead 2 applies to boxTypeChoiceStyle 'actual' only",
        ),
        ({"boxTypeChoiceLookback": -3}, "boxTypeChoiceLookback -3 is negative"),
        ({"cohortMax": 3}, "cohortMax has no effect without cohortPacking: true"),
        ({"boxTypeSets": ["customer"]}, "boxTypeSets has no effect: boxTypes given override it"),
        (
            {"boxTypeSets": ["customer"], "boxTypes": []},
            "boxTypeSets 'customer' names the account's cartons",
        ),
    ],
)
def test_contradictions_that_still_pack_warn(extra: Wire, warning: str) -> None:
    response = cartonize.pack({**_BASE, **extra})
    assert any(w.startswith(warning) for w in response.warnings), response.warnings


@pytest.mark.parametrize(
    ("extra", "warning"),
    [
        ({"n": 3, "seedValue": 2}, "n, seedValue: no effect without random: true"),
        (
            {"random": True, "seed": False, "seedValue": 2},
            "seedValue: no effect with seed: false (the items are unseeded)",
        ),
        (
            {"random": True, "seedFromOrderId": True, "orderId": " "},
            "seedFromOrderId: no orderId given; seeded with seedValue 1",
        ),
        ({"generatedBoxTypesMax": 64}, "generatedBoxTypesMax: no effect without boxTypeGenerators"),
        (
            {"sequenceHeatMap": True, "imageFormat": "png"},
            "imageFormat, sequenceHeatMap: no effect with includeImages: false",
        ),
        (
            {
                "layFlat": True,
                "rules": [{"operation": "lock-orientation", "itemRefId": 1, "options": {}}],
                "itemSets": [_item(1, 6, 2, 3, 1)],
            },
            "layFlat has no effect on item refId 1: it may only turn as rules[0] says "
            "(lock-orientation), which wins",
        ),
    ],
)
def test_options_that_cannot_act_warn(extra: Wire, warning: str) -> None:
    response = _pack({**_BASE, **extra})
    assert warning in response["warnings"]
    # Spelled out as the defaults, or where they act, they do not warn.
    assert not any("no effect" in w for w in _pack(_BASE)["warnings"])


def test_a_prepacked_box_echoed_from_a_response_keeps_its_type_price() -> None:
    rated = _box(9, 10, 10, 10, price=100, rateTable={"basePrice": 50, "priceIncreaseRate": 0})
    first = _pack(_request([_cube(1, 5, 1)], [rated]))
    echoed = first["boxes"][0]["box"]
    assert echoed["price"] == 150
    again = {**_request([_cube(2, 5, 1)], [rated]), "boxes": [echoed]}
    second = _pack(again)
    # The type's fixed price and rate, not the echoed cost plus the rate again.
    assert second["lenBoxes"] == 1 and second["totalCost"] == 150
    assert [i["item"]["refId"] for i in second["boxes"][0]["box"]["items"]] == [1, 2]


def test_a_box_echoed_from_a_response_packs_again_with_its_centres_of_mass() -> None:
    # A packed item's centerOfMass is box-local; an item with an origin in a pre-packed box
    # read it as an offset from its own corner, so the upper cube's (2.5, 2.5, 7.5) was "not
    # within the item" (a 422) and a lower off-centre one would have moved.
    heavy_low = {**_cube(1, 5, 1), "centerOfMass": {"x": 1, "y": 2.5, "z": 2.5}}
    first = _pack(_request([heavy_low, _cube(2, 5, 1)], [_box(9, 5, 5, 10)], itemSort="default"))
    echoed = first["boxes"][0]["box"]
    reported = [(i["item"]["origin"], i["item"]["centerOfMass"]) for i in echoed["items"]]
    assert [o["z"] for o, _ in reported] == [0, 5]
    second = _pack({**_request([], [_box(9, 5, 5, 10)]), "boxes": [echoed]})
    again = second["boxes"][0]["box"]
    assert [(i["item"]["origin"], i["item"]["centerOfMass"]) for i in again["items"]] == reported
    assert again["centerOfMass"] == echoed["centerOfMass"]


def test_a_placed_pre_packed_items_centre_of_mass_outside_it_names_the_box_range() -> None:
    placed = {**_cube(1, 5, 1), "origin": {"x": 0, "y": 0, "z": 5}}
    box = {
        **_box(9, 5, 5, 10),
        "items": [{"item": {**placed, "centerOfMass": {"x": 2.5, "y": 2.5, "z": 2.5}}}],
    }
    with pytest.raises(InvalidRequest) as caught:
        cartonize.pack({**_request([], []), "boxes": [box]})
    assert caught.value.details == (
        "boxes[0].items[0].item.centerOfMass: an item with an origin gives its centre of mass "
        "in the box's coordinates, as a response reports it: it must lie within the item, "
        "0..5, 0..5, 5..10 (got 2.5, 2.5, 2.5)"
    )


@pytest.mark.parametrize("style", ["corner", "wedge", "mound", "orb"])
def test_a_placement_style_leaves_pre_packed_items_where_they_are(style: str) -> None:
    # Styles re-fill each box toward their reference point; a pre-packed box's items
    # with an origin are the request's and must not move.
    prepacked = {
        "dimensions": {"x": 10, "y": 10, "z": 10},
        "weightMax": 100,
        "items": [{"item": _cube(1, 5, 1) | {"origin": {"x": 0, "y": 5, "z": 5}}}],
    }
    request = {
        "boxes": [prepacked],
        "itemSets": [_cube(2, 5, 2)],
        "boxTypes": [{"refId": 9, "dimensions": {"x": 10, "y": 10, "z": 10}, "weightMax": 100}],
        "placementStyle": style,
    }
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    validate(request, response)
    first = _items(response, 0)[0]
    assert (first["refId"], first["origin"]) == (1, {"x": 0, "y": 5, "z": 5})


@pytest.mark.parametrize(
    ("rule", "operation"),
    [
        (
            {
                "operation": "internal-space",
                "itemRefId": 1,
                "options": {
                    "type": "subspace",
                    "boxType": {"dimensions": {"x": 3, "y": 3, "z": 3}, "weightMax": 1},
                    "origin": {"x": 1, "y": 1, "z": 1},
                },
            },
            "internal-space",
        ),
        ({"operation": "bounded-fill", "itemRefId": 1}, "bounded-fill"),
        (
            {"operation": "group-pack", "itemRefId": 1, "options": {"axisMultiplier": 2}},
            "group-pack",
        ),
    ],
)
def test_rules_that_pack_in_parts_refuse_pre_packed_boxes(rule: Wire, operation: str) -> None:
    # Each part would get the pre-packed boxes again.
    request = {
        "boxes": [{"boxType": _box(5, 10, 10, 10)}],
        "itemSets": [_cube(1, 5, 2)],
        "boxTypes": [_box(6, 10, 10, 10)],
        "rules": [rule],
    }
    with pytest.raises(InvalidRequest) as raised:
        cartonize.pack(request)
    assert f"cannot be combined with {operation} rules" in str(raised.value.details)
    del request["boxes"]
    validate(request, cartonize.pack(request).model_dump(by_alias=True, exclude_none=True))


def test_pre_packed_items_are_placed_when_the_request_packs_nothing_new() -> None:
    # The engine prunes corner points narrower than the smallest item it places; the
    # pre-packed items must count among those even when no request item has a quantity.
    request = {
        "itemSets": [_cube(1, 1, 0)],
        "boxTypes": [_box(100, 5, 5, 5)],
        "boxes": [
            {
                "dimensions": {"x": 20, "y": 20, "z": 20},
                "weightMax": 0,
                "items": [
                    {"item": _cube(50, 1, 1) | {"origin": {"x": 0, "y": 0, "z": 0}}},
                    {"item": _cube(51, 1, 1)},
                ],
            }
        ],
    }
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    validate(request, response)
    assert sorted(i["refId"] for i in _items(response, 0)) == [50, 51]


@pytest.mark.parametrize(
    "limit",
    [
        {"itemsPerBoxMax": 1},
        {"itemSetsPerBoxMax": 1},
        {"reservedSpace": 0.9999},
        {"propertyConstraints": [{"key": "lithium", "max": 1}]},
    ],
)
def test_a_pre_packed_box_over_a_limit_keeps_its_items_and_takes_no_more(limit: Wire) -> None:
    # The box's two given items (the second without a position) already break the box's
    # limit: they stay (it is what the box holds), and the new unit goes to a new box.
    # The engine refused the unplaced one as "does not fit in its pre-packed box".
    lithium = {"properties": {"lithium": 1}}
    request = {
        "itemSets": [_cube(1, 1, 1, **lithium)],
        "boxTypes": [_box(100, 5, 5, 5)],
        "boxes": [
            {
                "dimensions": {"x": 20, "y": 20, "z": 20},
                "weightMax": 0,
                **limit,
                "items": [
                    {"item": _cube(50, 1, 1, **lithium) | {"origin": {"x": 0, "y": 0, "z": 0}}},
                    {"item": _cube(51, 1, 1, **lithium)},
                ],
            }
        ],
    }
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    assert validate(request, response) == []
    assert sorted(i["refId"] for i in _items(response, 0)) == [50, 51]
    assert [i["refId"] for i in _items(response, 1)] == [1]


def _spread_over_given_boxes(side: float, **limit: Any) -> Wire:
    """Two pre-packed boxes of ``side``, each given one 1-cube of refId 7, and two more
    units of refId 7 to pack."""
    given = {"item": _cube(7, 1, 1) | {"origin": {"x": 0, "y": 0, "z": 0}}}
    return {
        "itemSets": [_cube(7, 1, 2)],
        "boxTypes": [_box(100, 5, 5, 5)],
        "boxes": [
            {"dimensions": {"x": side, "y": side, "z": side}, "weightMax": 0, "items": [given]}
            for _ in range(2)
        ],
        **limit,
    }


def test_units_of_a_set_the_given_items_already_spread_go_where_it_is() -> None:
    # The given items spread refId 7 over two boxes against boxesPerItemSetMax 1: both
    # boxes keep them, and the new units join them there (no third box). The validator
    # flagged the given spread itself (make fuzz, seed 1202).
    request = _spread_over_given_boxes(20, boxesPerItemSetMax=1)
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    assert validate(request, response) == []
    assert (response["lenBoxes"], response["lenLeftovers"]) == (2, 0)
    # Boxes too small for more: a new box would spread the set further, so no unit moves.
    request = _spread_over_given_boxes(1, boxesPerItemSetMax=1)
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    assert validate(request, response) == []
    assert (response["lenBoxes"], response["lenLeftovers"]) == (2, 2)
    # Packed without the limit they take a third box, which the limit forbids.
    free = cartonize.pack(_spread_over_given_boxes(1)).model_dump(by_alias=True, exclude_none=True)
    assert free["lenBoxes"] == 3
    assert any(p.startswith("box-spread: 7 spans") for p in validate(request, free))


@pytest.mark.parametrize("side", [5e-324, 1e-120])
def test_a_box_whose_volume_underflows_reports_no_utilisation(side: float) -> None:
    # An empty pre-packed box of tiny (valid, positive) sides has a volume that rounds to
    # 0.0: its utilisation divided by it and the endpoint answered 500 (schemathesis on
    # POST /, then through a pack-as-is carton). It is 0, as for any empty box.
    request = {
        "itemSets": [_cube(1, 1, 1)],
        "boxTypes": [_box(100, 2, 2, 2)],
        "boxes": [{"dimensions": {"x": side, "y": side, "z": side}, "weightMax": 0, "items": []}],
    }
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    assert validate(request, response) == []
    tiny, other = (b["box"] for b in response["boxes"])
    assert (tiny["volumeMax"], tiny["volumeUtilization"], tiny["items"]) == (0.0, 0.0, [])
    assert [i["item"]["refId"] for i in other["items"]] == [1]


def test_lookahead_never_ends_dearer_than_choosing_box_by_box() -> None:
    # Looking ahead, the first box is judged by the cost per unit of it and the box after
    # it: 14x7x9 then 8x11x8 boxes (650) where three 14x7x9 boxes hold everything for 600.
    # The engine also packs without looking ahead and keeps the strictly better answer.
    request = _request(
        [_item(0, 6, 7, 7, 1), _item(1, 7, 3, 5, 4), _item(2, 8, 9, 7, 3)],
        [
            _box(100, 8, 11, 8, price=150),
            _box(101, 7, 9, 9, price=300),
            _box(102, 8, 4, 12, price=100),
            _box(103, 6, 10, 4, price=400),
            _box(104, 14, 7, 9, price=200),
        ],
    )
    plain = _pack(request)
    looked = _pack({**request, "boxTypeChoiceLookahead": 1})
    assert plain["totalCost"] == looked["totalCost"] == 600
    assert _ref_ids(looked) == [104, 104, 104]
