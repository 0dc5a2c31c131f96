"""Box type generators: cartesian sizes (lists, ranges, limits, price components,
sampling) and pack-as-is cartons, competing with the request's box types."""

from __future__ import annotations

from typing import Any

import cartonize
import pytest
from cartonize.errors import InvalidRequest
from cartonize.generators import Trim, generate_box_types, metric, trimmed_size
from cartonize.models import BoxTypeGenerator, ItemSet

from tests.validator import validate

Wire = dict[str, Any]


def pack(req: Wire) -> Wire:
    req = {"orderId": "generators", "includeImages": False, **req}
    response: Wire = cartonize.pack(req).model_dump(by_alias=True, exclude_none=True)
    assert validate(req, response) == []
    return response


def sizes(
    options: Wire, item_sets: list[Wire] | None = None, most: int = 0
) -> list[tuple[float, ...]]:
    gen = BoxTypeGenerator.model_validate({"operation": "cartesian", "options": options})
    sets = [ItemSet.model_validate(s) for s in item_sets or []]
    out = generate_box_types([gen], sets, None, most)
    return [(b.dimensions.x, b.dimensions.y, b.dimensions.z) for b in out.box_types]


def item(ref_id: int, x: float, y: float, z: float, quantity: int = 1, weight: float = 1) -> Wire:
    return {
        "refId": ref_id,
        "dimensions": {"x": x, "y": y, "z": z},
        "weight": weight,
        "quantity": quantity,
    }


def test_lists_give_the_cartesian_product() -> None:
    got = sizes({"xList": [1, 2], "yList": [3], "zList": [4, 5]})
    assert got == [(1, 3, 4), (1, 3, 5), (2, 3, 4), (2, 3, 5)]


def test_range_steps_by_increment_between_min_and_max() -> None:
    # The spec's example: min 5, max 59, increment 10.
    got = sizes({"xRange": {"min": 5, "max": 59, "increment": 10}, "yList": [1], "zList": [1]})
    assert [s[0] for s in got] == [5, 10, 20, 30, 40, 50, 59]


def test_range_derived_from_items_and_fit_for_first_item() -> None:
    items = [item(1, 3, 7, 12), item(2, 4, 4, 30)]
    derived = sizes(
        {"xRange": {"min": 2, "max": 10, "deriveFromItems": True}, "yList": [1], "zList": [1]},
        items,
    )
    # Item sides strictly inside 2..10: 3, 7, 4; plus min and max.
    assert [s[0] for s in derived] == [2, 3, 4, 7, 10]
    first = sizes(
        {
            "xRange": {"min": 2, "max": 10, "fitForFirstItem": True, "increment": 1},
            "yList": [1],
            "zList": [1],
        },
        items,
    )
    # One length per item set (x as given: 3 and 4), whichever unit comes first in a box.
    assert [s[0] for s in first] == [3, 4]
    wide = sizes(
        {"xRange": {"min": 2, "max": 10, "fitForFirstItem": True}, "yList": [1], "zList": [1]},
        [item(1, 3, 7, 12), item(2, 8, 4, 30), item(3, 12, 1, 1)],
    )
    assert [s[0] for s in wide] == [3, 8, 10]


def test_fit_for_first_item_makes_a_box_for_each_item_set() -> None:
    # The public schema: "select axis length based upon first item placed in each
    # generated box". With the 2-cube's length only, the 8-cube fitted no generated box.
    req = {
        "itemSets": [item(1, 2, 2, 2), item(2, 8, 8, 8)],
        "boxTypes": [],
        "boxTypeGenerators": [
            {
                "operation": "cartesian",
                "options": {
                    "xRange": {"min": 1, "max": 10, "fitForFirstItem": True},
                    "yList": [10],
                    "zList": [10],
                    "noTrimToMaxExtent": True,
                },
            }
        ],
        "includeImages": False,
    }
    response = cartonize.pack(req).model_dump(by_alias=True, exclude_none=True)
    assert validate(req, response) == []
    assert response["lenLeftovers"] == 0
    assert {b["box"]["dimensions"]["x"] for b in response["boxes"]} <= {2.0, 8.0}


def test_limits_bound_every_metric() -> None:
    options = {
        "xList": [1, 2, 3],
        "yList": [1, 2, 3],
        "zList": [6],
        "limits": [{"metric": "volume", "min": 12}, {"metric": "y-to-x-ratio", "max": 1}],
    }
    # volume >= 12 (x*y >= 2) and y <= x.
    assert sizes(options) == [(2, 1, 6), (2, 2, 6), (3, 1, 6), (3, 2, 6), (3, 3, 6)]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("volume", 24),
        ("surface-area", 2 * (8 + 12 + 6)),
        ("surface-area-rsc", 2 * (4 + 3) * (3 + 2)),
        ("longest-dimension", 4),
        ("middle-dimension", 3),
        ("shortest-dimension", 2),
        ("length-plus-girth", 4 + 2 * (3 + 2)),
        ("girth", 10),
        ("x-dimension", 2),
        ("y-dimension", 4),
        ("z-dimension", 3),
        ("longest-to-middle-ratio", 4 / 3),
        ("longest-to-shortest-ratio", 2),
        ("middle-to-shortest-ratio", 1.5),
        ("z-to-y-ratio", 0.75),
        ("z-to-x-ratio", 1.5),
        ("y-to-x-ratio", 2),
    ],
)
def test_metrics(name: Any, value: float) -> None:
    assert metric(name, (2, 4, 3)) == pytest.approx(value)


@pytest.mark.parametrize(
    ("aggregator", "expected"),
    [
        # volume 24 exceeds 10 (price 5) and 20 (7); longest 4 exceeds 3 (price 2).
        ("max", 7),  # the largest triggered price across the key
        ("sum", 5 + 7 + 2),  # every triggered price
        ("product", 7 * 2),  # the highest triggered price of each component, multiplied
    ],
)
def test_price_components(aggregator: str, expected: int) -> None:
    components = [
        {
            "key": "k",
            "metric": "volume",
            "aggregator": aggregator,
            "thresholds": [10, 20, 30],
            "prices": [5, 7, 9],
        },
        {
            "key": "k",
            "metric": "longest-dimension",
            "aggregator": aggregator,
            "thresholds": [3],
            "prices": [2],
        },
    ]
    gen = BoxTypeGenerator.model_validate(
        {
            "operation": "cartesian",
            "options": {"xList": [2], "yList": [4], "zList": [3], "priceComponents": components},
        }
    )
    (box,) = generate_box_types([gen], [], None, 0).box_types
    assert box.price == expected


def test_price_components_with_different_keys_add_up() -> None:
    components = [
        {"key": "board", "metric": "surface-area", "thresholds": [0], "prices": [30]},
        {
            "key": "oversize",
            "metric": "longest-dimension",
            "thresholds": [3, 10],
            "prices": [100, 500],
        },
    ]
    gen = BoxTypeGenerator.model_validate(
        {
            "operation": "cartesian",
            "options": {"xList": [2], "yList": [4], "zList": [3], "priceComponents": components},
        }
    )
    (box,) = generate_box_types([gen], [], None, 0).box_types
    assert box.price == 130


@pytest.mark.parametrize(("outer_based", "price"), [(False, 10), (True, 20)])
def test_outer_based_cost_prices_components_on_the_outer_size(
    outer_based: bool, price: int
) -> None:
    # A 3x4x5 box (volume 60) with 1 added along each axis outside: 4x5x6 (120). The
    # component charges 10 above volume 0 and 20 above 100; outerBasedCost bases "price
    # component thresholds on outer dimensions" (service-spec.md).
    response = pack(
        {
            "itemSets": [item(0, 3, 4, 5)],
            "boxTypeGenerators": [
                {
                    "operation": "cartesian",
                    "boxTypeDefaults": {
                        "weightMax": 0,
                        "outerBasedCost": outer_based,
                        "outer": {"dimensionChange": {"x": 1, "y": 1, "z": 1}},
                    },
                    "options": {
                        "xList": [3],
                        "yList": [4],
                        "zList": [5],
                        "priceComponents": [
                            {"metric": "volume", "thresholds": [0, 100], "prices": [10, 20]}
                        ],
                    },
                }
            ],
        }
    )
    assert [b["box"]["price"] for b in response["boxes"]] == [price]


def test_a_trimmed_box_is_priced_on_its_outer_size_under_outer_based_cost() -> None:
    # A 2-cube: the range gives lengths 1 and 10 along x, so it goes into 10x2x2, trimmed
    # to 2x2x2 (volume 8), outer 4x4x4 (64). The component charges 5 above volume 0 and 50
    # above 60: 50 on the outer size (5 on the inner one).
    response = pack(
        {
            "itemSets": [item(0, 2, 2, 2)],
            "boxTypeGenerators": [
                {
                    "operation": "cartesian",
                    "boxTypeDefaults": {
                        "weightMax": 0,
                        "outerBasedCost": True,
                        "outer": {"dimensionChange": {"x": 2, "y": 2, "z": 2}},
                    },
                    "options": {
                        "xRange": {"min": 1, "max": 10},
                        "yList": [2],
                        "zList": [2],
                        "priceComponents": [
                            {"metric": "volume", "thresholds": [0, 60], "prices": [5, 50]}
                        ],
                    },
                }
            ],
        }
    )
    (box,) = [b["box"] for b in response["boxes"]]
    assert (box["dimensions"]["x"], box["price"]) == (2, 50)


def _six_cubes_in_generated_boxes(generator: Wire) -> Wire:
    """Six 2-cubes, lowest cost, in boxes of 2 or 4 along each axis from `generator`."""
    options = {"xList": [2, 4], "yList": [2, 4], "zList": [2, 4]} | generator.pop("options", {})
    return pack(
        {
            "itemSets": [item(0, 2, 2, 2, quantity=6)],
            "boxTypeChoiceGoal": "lowest-cost",
            "boxTypeGenerators": [
                {
                    "operation": "cartesian",
                    "boxTypeDefaults": {"weightMax": 100},
                    "options": options,
                }
                | generator
            ],
        }
    )


def test_a_generated_box_is_never_priced_below_zero() -> None:
    # A discount larger than the base price made every size cost -5, and the cheapest
    # answer opened one box per unit (six boxes, -30). Now they cost 0, and one 4-cube
    # holds all six.
    discount = [
        {"key": "base", "metric": "volume", "thresholds": [0], "prices": [5]},
        {"key": "promo", "metric": "volume", "thresholds": [0], "prices": [-10]},
    ]
    response = _six_cubes_in_generated_boxes({"options": {"priceComponents": discount}})
    assert (response["lenBoxes"], response["totalCost"]) == (1, 0)
    (warning,) = [w for w in response["warnings"] if "priceComponents" in w]
    assert warning.startswith(
        "boxTypeGenerators[0].options.priceComponents: 8 of the 8 sizes come out below 0 "
        "(lowest -5, for 2x2x2)"
    )


def test_a_price_of_minus_one_is_for_pack_as_is_generators_only() -> None:
    # -1 in a generator's defaults favours as-is cartons (the public API's meaning); on a
    # cartesian generator it made every extra box lower the cost.
    response = _six_cubes_in_generated_boxes({"boxTypeDefaults": {"weightMax": 100, "price": -1}})
    assert (response["lenBoxes"], response["totalCost"]) == (1, 0)
    assert any(
        w.startswith("boxTypeGenerators[0].boxTypeDefaults.price: -1") for w in response["warnings"]
    )


def test_generated_box_types_max_samples_deterministically() -> None:
    options = {
        "xRange": {"min": 1, "max": 20, "increment": 1},
        "yList": [1, 2, 3, 4],
        "zList": [5, 6],
    }
    everything = sizes(options)
    assert len(everything) == 20 * 4 * 2
    picked = sizes(options, most=16)
    assert len(picked) == 16
    assert picked == sizes(options, most=16)  # the same every time
    assert set(picked) <= set(everything)
    assert picked == sorted(picked)  # in product order


def test_axis_without_list_or_range_is_a_422() -> None:
    with pytest.raises(InvalidRequest) as info:
        pack(
            {
                "itemSets": [item(1, 1, 1, 1)],
                "boxTypeGenerators": [
                    {"operation": "cartesian", "options": {"xList": [1], "yList": [1]}}
                ],
            }
        )
    assert (info.value.details or "").startswith(
        "boxTypeGenerators[0].options.zList: cartesian needs zList or zRange"
    )


def test_axes_combining_into_too_many_sizes_are_a_422() -> None:
    # Every size is checked against the limits before sampling: three lists of 1,000
    # lengths (a 12 kB body) made a billion sizes and held a worker for minutes.
    lengths = list(range(1, 101))
    options = {"xList": lengths, "yList": lengths, "zRange": {"min": 1, "max": 102, "increment": 1}}
    with pytest.raises(InvalidRequest) as info:
        pack(
            {
                "itemSets": [item(1, 1, 1, 1)],
                "boxTypeGenerators": [{"operation": "cartesian", "options": options}],
            }
        )
    assert info.value.details == (
        "boxTypeGenerators[0].options: the axes give 1020000 sizes (100 x 100 x 102 lengths), "
        "more than the 1000000 a request may search; give fewer lengths or larger increments"
    )
    # The bound holds for all the generators together: each is searched in turn.
    half = {"xList": lengths, "yList": lengths, "zList": lengths[:60]}
    with pytest.raises(InvalidRequest) as info:
        pack(
            {
                "itemSets": [item(1, 1, 1, 1)],
                "boxTypeGenerators": [{"operation": "cartesian", "options": half}] * 2,
            }
        )
    assert (info.value.details or "").startswith(
        "boxTypeGenerators[1].options: the axes give 600000 sizes (100 x 100 x 60 lengths) "
        "after 600000 of the generators before it, more than the 1000000"
    )


def test_generated_sizes_compete_with_fixed_box_types() -> None:
    # A 4x4x4 item. Fixed box 10-cube at 500; the generator offers 4..6 cubes priced by a
    # volume component: 64 -> 100, 125 -> 100 + 50, 216 -> 100 + 50 + 50 (sum). The
    # 4-cube at 100 wins.
    components = [
        {
            "key": "v",
            "metric": "volume",
            "aggregator": "sum",
            "thresholds": [0, 100, 200],
            "prices": [100, 50, 50],
        }
    ]
    generator = {
        "operation": "cartesian",
        "boxTypeDefaults": {"weightMax": 50},
        "options": {
            "xList": [4, 5, 6],
            "yList": [4, 5, 6],
            "zList": [4, 5, 6],
            "priceComponents": components,
            "noTrimToMaxExtent": True,
        },
    }
    response = pack(
        {
            "itemSets": [item(1, 4, 4, 4)],
            "boxTypes": [
                {
                    "refId": 1,
                    "dimensions": {"x": 10, "y": 10, "z": 10},
                    "weightMax": 50,
                    "price": 500,
                }
            ],
            "boxTypeGenerators": [generator],
        }
    )
    (box,) = [b["box"] for b in response["boxes"]]
    assert box["dimensions"] == {"x": 4, "y": 4, "z": 4}
    assert box["name"] == "generated 4x4x4"
    assert response["totalCost"] == 100
    assert not any("boxTypeGenerators" in w for w in response["warnings"])


def test_generated_boxes_use_rate_tables_from_defaults() -> None:
    # Two generated sizes, both 0 price; rate 100/lb with dimFactor 100. A 2 lb 5x5x5
    # item: 5x5x5 rates at max(2, 1.25) = 2 lb -> 200; 10x10x10 at 10 lb -> 1000.
    generator = {
        "operation": "cartesian",
        "boxTypeDefaults": {
            "price": 0,
            "rateTable": {"basePrice": 0, "priceIncreaseRate": 100, "dimFactor": 100},
        },
        "options": {
            "xList": [5, 10],
            "yList": [5, 10],
            "zList": [5, 10],
            "limits": [{"metric": "longest-to-shortest-ratio", "max": 1}],
            "noTrimToMaxExtent": True,
        },
    }
    response = pack({"itemSets": [item(1, 5, 5, 5, weight=2)], "boxTypeGenerators": [generator]})
    assert response["totalCost"] == 200
    assert response["boxes"][0]["box"]["dimensionalWeight"] == pytest.approx(1.25)


@pytest.mark.parametrize(("as_is_price", "as_is_wins"), [(-1, True), (0, False)])
def test_pack_as_is_generator_weighs_shipping_as_is_against_overboxing(
    as_is_price: int, as_is_wins: bool
) -> None:
    # One 4x4x4 item. A 5-cube box at 64 + the same rate; the item's own carton (64
    # volume, priced at as_is_price + rate) ties at 0 and wins by the -1. The -1 only
    # decides the tie: the carton is reported at 0 + its rate (a price is >= 0).
    rate = {"basePrice": 64, "priceIncreaseRate": 0}
    response = pack(
        {
            "itemSets": [{**item(1, 4, 4, 4), "name": "kettle"}],
            "boxTypes": [
                {
                    "refId": 9,
                    "dimensions": {"x": 5, "y": 5, "z": 5},
                    "weightMax": 50,
                    "price": 0,
                    "rateTable": rate,
                }
            ],
            "boxTypeGenerators": [
                {
                    "operation": "pack-as-is",
                    "boxTypeDefaults": {"price": as_is_price, "rateTable": rate},
                }
            ],
            "valueTiebreaker": "volume",
        }
    )
    (box,) = [b["box"] for b in response["boxes"]]
    if as_is_wins:
        assert box["name"] == "as-is kettle"
        assert box["dimensions"] == {"x": 4, "y": 4, "z": 4}
    assert box["price"] == response["totalCost"] == 64


def test_a_pack_as_is_carton_priced_minus_one_is_reported_at_zero() -> None:
    # -1 favours shipping as is by the smallest amount (the spec); it is no price of its
    # own: the response's price was -1 (totalCost -1), which the schema's price >= 0 does
    # not allow, and the box could not be sent back as a pre-packed box.
    response = pack(
        {
            "itemSets": [{**item(0, 2, 2, 2), "name": "w"}],
            "boxTypes": [{"dimensions": {"x": 10, "y": 10, "z": 10}, "weightMax": 100, "price": 5}],
            "boxTypeGenerators": [
                {"operation": "pack-as-is", "boxTypeDefaults": {"price": -1, "weightMax": 0}}
            ],
        }
    )
    (box,) = [b["box"] for b in response["boxes"]]
    assert (box["name"], box["price"], response["totalCost"]) == ("as-is w", 0, 0)
    box["items"] = [
        {"item": {k: v for k, v in e["item"].items() if k != "centerOfMass"}} for e in box["items"]
    ]
    again = pack({"boxes": [box]})
    assert again["lenItems"] == 1


def test_pack_as_is_generator_cartons_hold_only_their_own_item() -> None:
    # The kettle's own carton (4x4x6, price 1) has room for the 1-cube too, and one box
    # would beat two at the same cost, but it is the kettle's packaging: the cube takes
    # the free 5-cube box.
    response = pack(
        {
            "itemSets": [item(1, 4, 4, 6), item(2, 1, 1, 1)],
            "boxTypes": [
                {"refId": 9, "dimensions": {"x": 5, "y": 5, "z": 5}, "weightMax": 50, "price": 0}
            ],
            "boxTypeGenerators": [{"operation": "pack-as-is", "boxTypeDefaults": {"price": 1}}],
        }
    )
    contents = sorted(
        (b["box"].get("name", ""), [e["item"]["refId"] for e in b["box"]["items"]])
        for b in response["boxes"]
    )
    assert contents == [("", [2]), ("as-is 0", [1])]
    assert response["totalCost"] == 1


@pytest.mark.parametrize(
    "reserved", [{"reservedSpace": 0.2}, {"boxTypeDefaults": {"reservedSpace": 0.2}}]
)
def test_pack_as_is_cartons_reserve_no_space(reserved: Wire) -> None:
    # The item's own packaging holds no packing material: it ships, though reservedSpace
    # would leave 80 % of a carton of its size (the request's or the defaults').
    response = pack(
        {
            "itemSets": [item(1, 4, 4, 4)],
            "boxTypeGenerators": [{"operation": "pack-as-is", "boxTypeDefaults": {"price": 5}}],
            **reserved,
        }
    )
    (box,) = [b["box"] for b in response["boxes"]]
    assert (box["name"], box["volumeReserved"], response["lenLeftovers"]) == ("as-is 0", 0, 0)


@pytest.mark.parametrize(("replace", "own"), [(False, (2, 4, 6)), (True, (1, 4, 6))])
def test_a_unit_ships_in_its_own_carton_as_given_not_folded(
    replace: bool, own: tuple[float, float, float]
) -> None:
    # Two 2 x 4 x 6 units that fold to 1 x 4 x 6, and only their own cartons to ship in.
    # Both folded units fit one 2 x 4 x 6 carton, but it is one unit's own packaging: each
    # ships alone in its own shape. With replaceOriginal the fold is the item's own shape,
    # and so its carton's.
    fold: Wire = {"dimensionScaleChanges": [{"x": -0.5}]}
    if replace:
        fold["replaceOriginal"] = True
    response = pack(
        {
            "itemSets": [item(1, 2, 4, 6, quantity=2)],
            "boxTypeGenerators": [{"operation": "pack-as-is", "boxTypeDefaults": {"price": 1}}],
            "itemInitialOrientationPreferred": False,
            "reservedSpace": 0.1,
            "rules": [{"operation": "alternate-dimensions", "itemRefId": 1, "options": fold}],
        }
    )
    x, y, z = own
    dims = {"x": x, "y": y, "z": z}
    assert [
        (
            b["box"]["dimensions"],
            [(e["item"]["dimensions"], e["item"]["origin"]) for e in b["box"]["items"]],
        )
        for b in response["boxes"]
    ] == [(dims, [(dims, {"x": 0, "y": 0, "z": 0})])] * 2
    assert [b["box"]["volumeReserved"] for b in response["boxes"]] == [0, 0]


def test_a_box_reduced_to_an_item_ships_in_its_own_carton() -> None:
    # Stage 0 ships the 1 x 7 x 7 item in its own carton (it fits no 5-cube); stage 1
    # takes that box as item refId 9, whose own carton is of the box's size. The
    # validator knows refId 9's own dimensions from the box it stands for.
    response = pack(
        {
            "itemSets": [item(1, 1, 7, 7)],
            "boxTypes": [{"refId": 100, "dimensions": {"x": 5, "y": 5, "z": 5}, "weightMax": 0}],
            "boxTypeGenerators": [{"operation": "pack-as-is", "boxTypeDefaults": {"price": 1}}],
            "rules": [
                {
                    "operation": "pack-sequence",
                    "itemRefId": 1,
                    "options": {"index": 0, "reduce": "box-to-item", "reducedRefId": 9},
                },
                {"operation": "pack-sequence", "options": {"index": 1}},
            ],
        }
    )
    assert [
        (b["box"]["dimensions"], [e["item"]["refId"] for e in b["box"]["items"]])
        for b in response["boxes"]
    ] == [({"x": 1, "y": 7, "z": 7}, [1]), ({"x": 1, "y": 7, "z": 7}, [9])]


def test_pack_as_is_generator_is_restricted_by_an_exclude_rule() -> None:
    # Both items would ship as is for 63 rather than in the 5-cube for 64, but an exclude
    # rule keeps the glass out of the as-is cartons: it is not fit to ship as is.
    rate = {"basePrice": 64, "priceIncreaseRate": 0}
    response = pack(
        {
            "itemSets": [
                {**item(1, 4, 4, 4), "name": "kettle"},
                {**item(2, 4, 4, 4), "name": "glass"},
            ],
            "boxTypes": [
                {"dimensions": {"x": 5, "y": 5, "z": 5}, "weightMax": 50, "rateTable": rate}
            ],
            "boxTypeGenerators": [
                {"operation": "pack-as-is", "boxTypeDefaults": {"price": -1, "rateTable": rate}}
            ],
            "rules": [
                {
                    "operation": "exclude",
                    "itemMatch": {"expression": "glass"},
                    "targetBoxMatch": {"expression": "as-is"},
                }
            ],
        }
    )
    contents = sorted(
        (b["box"].get("name", ""), [e["item"]["name"] for e in b["box"]["items"]])
        for b in response["boxes"]
    )
    assert contents == [("", ["glass"]), ("as-is kettle", ["kettle"])]
    # The kettle's carton is reported at 0 + its rate (its -1 only decided the choice).
    assert response["totalCost"] == 64 + 64


def test_largest_box_type_includes_generated_types() -> None:
    generator = {
        "operation": "cartesian",
        "options": {"xList": [3, 30], "yList": [3], "zList": [3], "noTrimToMaxExtent": True},
    }
    response = cartonize.pack(
        {
            "itemSets": [item(1, 1, 1, 1)],
            "boxTypes": [{"dimensions": {"x": 5, "y": 5, "z": 5}, "weightMax": 0}],
            "boxTypeGenerators": [generator],
            "imageScaleStyle": "largest-box-type",
        }
    )
    assert response.image_scale is not None
    assert (response.image_scale.x, response.image_scale.y, response.image_scale.z) == (30, 5, 5)


def trimmed(options: Wire, **request: Any) -> Wire:
    """The one box a locked 3.25 x 3 x 3 item gets from an x range (2 or 10: no increment,
    so trimmed to tenths) and y, z lists of 4."""
    generator = {
        "operation": "cartesian",
        "options": {"xRange": {"min": 2, "max": 10}, "yList": [4], "zList": [4]} | options,
    } | request.pop("generator", {})
    response = pack(
        {
            "itemSets": [item(1, 3.25, 3, 3)],
            "rules": [{"operation": "lock-orientation", "itemRefId": 1}],
            "boxTypeGenerators": [generator],
        }
        | request
    )
    assert response["lenBoxes"] == 1
    box: Wire = response["boxes"][0]["box"]
    return box


def dims(box: Wire) -> tuple[float, float, float]:
    d = box["dimensions"]
    return (d["x"], d["y"], d["z"])


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        # x: the item's 3.25 rounded up to tenths; y and z come from lists: never trimmed.
        ({}, (3.3, 4, 4)),
        ({"noTrimToMaxExtent": True}, (10, 4, 4)),
        # The range's min is the floor, and so is an x-dimension limit's min.
        ({"xRange": {"min": 3.5, "max": 10, "increment": 2}}, (3.5, 4, 4)),
        ({"limits": [{"metric": "x-dimension", "min": 3.6}]}, (3.6, 4, 4)),
        # A trimmed size that breaks a limit (volume 52.8 < 60) keeps the generated size.
        ({"limits": [{"metric": "volume", "min": 60}]}, (10, 4, 4)),
    ],
)
def test_generated_boxes_are_trimmed_to_the_items_extent(
    options: Wire, expected: tuple[float, float, float]
) -> None:
    box = trimmed(options)
    assert dims(box) == pytest.approx(expected)
    assert box["name"] == "generated {:g}x{:g}x{:g}".format(*expected)


@pytest.mark.parametrize(
    ("x_range", "extent", "expected"),
    [
        # The schema: "the desired increment for box dimension rounding. E.g., 0.25 for a
        # box in inches would round up to the quarter inch"; min and max as they are.
        ({"min": 2, "max": 10, "increment": 2}, 3.25, 4),
        ({"min": 2, "max": 10, "increment": 0.25}, 3.3, 3.5),
        ({"min": 2, "max": 10, "increment": 0.25}, 3.25, 3.25),
        ({"min": 2.5, "max": 10, "increment": 2}, 1.0, 2.5),
        ({"min": 2, "max": 9.5, "increment": 4}, 8.5, 9.5),
        # Contents beyond the range's max (the size came from a list): tenths, never
        # below the contents (found by the property test: z from zList 5, zRange 1..2).
        ({"min": 1, "max": 2, "increment": 2.5}, 4.2, 4.2),
        # Without an increment, or with lengths derived from the items: tenths.
        ({"min": 2, "max": 10}, 3.25, 3.3),
        ({"min": 2, "max": 10, "increment": 2, "deriveFromItems": True}, 3.25, 3.3),
    ],
)
def test_trimmed_sides_round_up_to_the_increment(
    x_range: Wire, extent: float, expected: float
) -> None:
    gen = BoxTypeGenerator.model_validate(
        {"operation": "cartesian", "options": {"xRange": x_range, "yList": [4], "zList": [4]}}
    )
    trim = Trim(
        axes=(True, False, False), floor=(x_range["min"], 0, 0), generator=gen, auto_name=True
    )
    assert trimmed_size(trim, (10, 4, 4), (extent, 3, 3)) == (expected, 4, 4)


def test_trimmed_boxes_are_priced_anew() -> None:
    # Volume 160 triggers the 200 price; trimmed to 3.3 x 4 x 4 = 52.8 only the 100 one.
    components = [{"metric": "volume", "thresholds": [0, 60], "prices": [100, 200]}]
    box = trimmed({"priceComponents": components})
    assert dims(box) == pytest.approx((3.3, 4, 4))
    assert box["price"] == 100
    assert sum(i["item"]["deltaCost"] for i in box["items"]) == 100


def test_trimmed_boxes_are_rated_on_their_trimmed_volume() -> None:
    # Linear 10 per lb at max(1 lb, 52.8 / 10 = 5.28 lb) = 52.8, plus the price 7.
    defaults = {
        "price": 7,
        "rateTable": {"basePrice": 0, "priceIncreaseRate": 10, "dimFactor": 10},
    }
    box = trimmed({}, generator={"boxTypeDefaults": defaults})
    assert dims(box) == pytest.approx((3.3, 4, 4))
    assert box["dimensionalWeight"] == pytest.approx(5.28)
    assert box["dimensionalWeightUsed"] is True
    assert box["price"] == round(7 + 52.8)
    assert box["items"][0]["item"]["deltaCost"] == box["price"]


def test_outer_dimensions_in_generator_defaults_are_ignored_with_one_warning() -> None:
    # One outer size cannot be every generated (or trimmed) size's: it is dropped, and the
    # generated boxes are rated on their own inner size, warning once, not once per size.
    generator = {
        "operation": "cartesian",
        "boxTypeDefaults": {
            "outer": {"dimensions": {"x": 40, "y": 40, "z": 40}},
            "outerBasedCost": True,
            "rateTable": {"basePrice": 0, "priceIncreaseRate": 1, "dimFactor": 10},
        },
        "options": {
            a: {"min": 5, "max": 30, "increment": 1} for a in ("xRange", "yRange", "zRange")
        },
    }
    response = pack({"itemSets": [item(1, 4, 4, 4, quantity=2)], "boxTypeGenerators": [generator]})
    (box,) = [b["box"] for b in response["boxes"]]
    # 5 x 5 x 8 (200 / 10 = 20 over a weight of 2), not rated on 40^3 / 10.
    assert (sorted(box["dimensions"].values()), box["price"]) == ([5, 5, 8], 20)
    assert "outer" not in box
    ignored = [w for w in response["warnings"] if "outer.dimensions" in w]
    assert ignored == [
        "boxTypeGenerators[0]: outer.dimensions in the defaults cannot fit every generated "
        "size; ignored (give outer.dimensionChange instead)"
    ]
    assert len(response["warnings"]) == len(set(response["warnings"]))


def test_a_dimension_change_follows_the_generated_size() -> None:
    generator = {
        "operation": "cartesian",
        "boxTypeDefaults": {
            "outer": {"dimensionChange": {"x": 1, "y": 1, "z": 1}},
            "outerBasedCost": True,
            "rateTable": {"basePrice": 0, "priceIncreaseRate": 1, "dimFactor": 10},
        },
        "options": {
            a: {"min": 5, "max": 30, "increment": 1} for a in ("xRange", "yRange", "zRange")
        },
    }
    response = pack({"itemSets": [item(1, 4, 4, 4, quantity=2)], "boxTypeGenerators": [generator]})
    (box,) = [b["box"] for b in response["boxes"]]
    assert sorted(box["outer"]["dimensions"].values()) == [6, 6, 9]
    assert box["price"] == 32  # 6 * 6 * 9 / 10 = 32.4


def test_trimming_keeps_the_reserved_space() -> None:
    # Four 1 x 4 x 6 items (96) would trim a 5 x 11 x 10 box to 5 x 5 x 6 (150), where
    # reservedSpace 0.4 leaves room for 90 only: the box keeps a size that holds them.
    generator = {
        "operation": "cartesian",
        "options": {
            "xList": [5],
            "yRange": {"min": 5, "max": 11},
            "zRange": {"min": 5, "max": 10},
        },
    }
    request = {"itemSets": [item(1, 1, 4, 6, quantity=4)], "boxTypeGenerators": [generator]}
    (plain,) = [b["box"] for b in pack(request)["boxes"]]
    (reserved,) = [b["box"] for b in pack({**request, "reservedSpace": 0.4})["boxes"]]
    assert plain["volumeMax"] == 150
    assert reserved["volumeNet"] <= 0.6 * reserved["volumeMax"]


def test_the_strategies_draw_every_metric() -> None:
    # tests/strategies.py lists the metrics again to give each a scale; a metric added to
    # the model must be drawn there too.
    from typing import get_args

    from cartonize.models import Metric

    from tests.strategies import METRIC_SCALES

    assert set(METRIC_SCALES) == set(get_args(Metric))


def test_a_side_from_a_list_beyond_the_range_trims_to_its_contents() -> None:
    # Found by the generator property test: z is 5 (zList) or 1..2 by 2.5 (zRange); eleven
    # 1 x 2 x 2.1 units stand 4.2 high in the 5-high box, which trims to them, not to the
    # range's max.
    req = {
        "itemSets": [{"dimensions": {"x": 1, "y": 2, "z": 2.1}, "weight": 0.0, "quantity": 11}],
        "boxTypes": [],
        "boxTypeChoiceGoal": "most-items",
        "includeImages": False,
        "boxTypeGenerators": [
            {
                "operation": "cartesian",
                "options": {
                    "xList": [5],
                    "yList": [5],
                    "zList": [5],
                    "zRange": {"min": 1, "max": 2, "increment": 2.5},
                },
            }
        ],
    }
    response = cartonize.pack(req).model_dump(by_alias=True, exclude_none=True)
    assert validate(req, response) == []
    assert [dims(b["box"]) for b in response["boxes"]] == [(5, 5, 4.2)]


def test_a_box_that_costs_the_same_up_to_rounding_is_trimmed() -> None:
    # Found by the generator property test: the box's rate is 0.1 per weight unit over a
    # 0.1 tare and 0.9 of units. The engine's cost is 0.09999999999999999; the trimmed
    # box's, the same weights summed in Python, 0.1. Equal up to rounding: no dearer.
    generator = {
        "operation": "cartesian",
        "boxTypeDefaults": {
            "rateTable": {"basePrice": 0, "priceIncreaseRate": 0.1},
            "weightTare": 0.1,
        },
        "options": {
            "xList": [1],
            "yRange": {"min": 1, "max": 3, "deriveFromItems": True},
            "zList": [5],
        },
    }
    items = [item(1, 1, 1, 1, quantity=3, weight=0.3), item(2, 1, 1, 1, quantity=3, weight=0)]
    response = pack({"itemSets": items, "boxTypeGenerators": [generator]})
    assert [dims(b["box"]) for b in response["boxes"]] == [(1, 2, 5)]


def test_two_generators_of_one_size_are_both_valid_makers_of_its_box() -> None:
    # make fuzz seed 1241: the second generator's 5-cube (no dimFactor, free) was chosen,
    # and the validator judged its dimensional weight by the first one's table (dimFactor
    # 139). A box either generator could have made is judged against each.
    defaults = [
        {"weightMax": 0, "rateTable": {"weights": [5, 20], "rates": [300, 700], "dimFactor": 139}},
        {"weightMax": 0, "rateTable": {"basePrice": 0, "priceIncreaseRate": 0.0}},
    ]
    response = pack(
        {
            "itemSets": [item(0, 1, 1, 1, weight=0)],
            "boxTypeGenerators": [
                {
                    "operation": "cartesian",
                    "boxTypeDefaults": d,
                    "options": {"xList": [5], "yList": [5], "zList": [5]},
                }
                for d in defaults
            ],
        }
    )
    assert response["totalCost"] == 0
