"""Box cost: fixed price plus a rate table's rate at the rating weight (reference.md
"Cost"). Every expected figure is worked out by hand in the comment beside it."""

from __future__ import annotations

from typing import Any

import cartonize
import pytest
from cartonize.errors import InvalidRequest
from cartonize.rates import builtin_rate_tables

from tests.validator import validate

Wire = dict[str, Any]


def point(x: float, y: float, z: float) -> dict[str, float]:
    return {"x": x, "y": y, "z": z}


def box(ref_id: int, dims: dict[str, float], **extra: Any) -> Wire:
    return {"refId": ref_id, "dimensions": dims, "weightMax": 1000, **extra}


def pack(item_sets: list[Wire], box_types: list[Wire], **options: Any) -> Wire:
    request = {
        "orderId": "cost",
        "itemSets": item_sets,
        "boxTypes": box_types,
        "includeImages": False,
        **options,
    }
    response: Wire = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    assert validate(request, response) == []
    return response


def one_cube(side: float = 10, weight: float = 5, quantity: int = 1) -> list[Wire]:
    return [
        {
            "refId": 1,
            "dimensions": point(side, side, side),
            "weight": weight,
            "quantity": quantity,
        }
    ]


def used(response: Wire) -> list[tuple[int, int]]:
    """(refId, price) of each box, sorted."""
    return sorted((b["box"]["refId"], b["box"]["price"]) for b in response["boxes"])


# 100 cents per pound, nothing at 0 lb.
PER_POUND = {"basePrice": 0, "priceIncreaseRate": 100}


def test_dimensional_weight_decides_the_box() -> None:
    # A 10-cube of 5 lb. Big box 10x10x20 (price 0), small 10x10x10 (price 300).
    # By gross weight: big 0 + 5 x 100 = 500, small 300 + 500 = 800: big wins.
    boxes = [
        box(1, point(10, 10, 20), price=0, rateTable=PER_POUND),
        box(2, point(10, 10, 10), price=300, rateTable=PER_POUND),
    ]
    plain = pack(one_cube(), boxes)
    assert used(plain) == [(1, 500)]
    assert plain["totalCost"] == 500
    assert "dimensionalWeight" not in plain["boxes"][0]["box"]
    assert plain["boxes"][0]["box"]["dimensionalWeightUsed"] is False
    # dimFactor 139: big 2000 / 139 = 14.388 lb -> 1438.8 = 1439;
    # small 1000 / 139 = 7.194 lb -> 300 + 719.4 = 1019: the small box wins.
    for b in boxes:
        b["rateTable"] = {**PER_POUND, "dimFactor": 139}
    dim = pack(one_cube(), boxes)
    assert used(dim) == [(2, 1019)]
    assert dim["totalCost"] == 1019
    chosen = dim["boxes"][0]["box"]
    assert chosen["dimensionalWeight"] == pytest.approx(1000 / 139)
    assert chosen["dimensionalWeightUsed"] is True
    assert chosen["items"][0]["item"]["deltaCost"] == 1019


def test_two_cheap_boxes_beat_one_dear_box() -> None:
    # Two 10-cubes of 10 lb. Both boxes cost 100 plus a steep breakpoint rate:
    # up to 10 lb 500, up to 20 lb 1500. One 10x10x20 box: 100 + 1500 = 1600;
    # two 10-cubes: 2 x (100 + 500) = 1200.
    steep = {"weights": [10, 20], "rates": [500, 1500]}
    boxes = [
        box(1, point(10, 10, 20), price=100, rateTable=steep),
        box(2, point(10, 10, 10), price=100, rateTable=steep),
    ]
    response = pack(one_cube(weight=10, quantity=2), boxes)
    assert used(response) == [(2, 600), (2, 600)]
    assert response["totalCost"] == 1200
    # Without the rate table fewer boxes are cheaper: one big box at 100.
    for b in boxes:
        del b["rateTable"]
    assert used(pack(one_cube(weight=10, quantity=2), boxes)) == [(1, 100)]


@pytest.mark.parametrize(
    ("weight", "quantity", "expected"),
    [
        (0.5, 1, 10 + 200),  # below the first breakpoint: the first rate
        (1.0, 1, 10 + 200),  # at a breakpoint: that breakpoint's rate
        (1.5, 1, 10 + 350),  # between: the next breakpoint's rate
        (3.0, 2, 10 + 500),  # 6 lb, above the last breakpoint (3): the last rate
    ],
)
def test_breakpoint_rates(weight: float, quantity: int, expected: int) -> None:
    table = {"weights": [1, 2, 3], "rates": [200, 350, 500]}
    response = pack(
        one_cube(side=1, weight=weight, quantity=quantity),
        [box(1, point(10, 10, 10), price=10, rateTable=table)],
    )
    assert response["totalCost"] == expected


def test_linear_rate_and_tare() -> None:
    # 3 units of 2 lb in a box of tare 1.5: gross 7.5 lb; 250 + 40 x 7.5 = 550, no price.
    response = pack(
        one_cube(side=1, weight=2, quantity=3),
        [
            box(
                1,
                point(5, 5, 5),
                weightTare=1.5,
                rateTable={"basePrice": 250, "priceIncreaseRate": 40},
            )
        ],
    )
    assert response["totalCost"] == 550
    # deltaCost: the first unit carries the base and the tare, each further one 80.
    deltas = [e["item"]["deltaCost"] for e in response["boxes"][0]["box"]["items"]]
    assert deltas == [250 + 40 * 3.5, 80, 80]


def test_outer_based_cost_rates_the_outer_volume() -> None:
    # Inner 10-cube: 1000 / 139 = 7.19 lb -> first breakpoint (8 lb) -> 100.
    # Outer 11-cube (change 1 per axis): 1331 / 139 = 9.58 lb -> 10 lb breakpoint -> 200.
    table = {"weights": [8, 10], "rates": [100, 200], "dimFactor": 139}
    outer = {"dimensionChange": point(1, 1, 1)}
    inner_based = pack(one_cube(weight=1), [box(1, point(10, 10, 10), rateTable=table)])
    assert inner_based["totalCost"] == 100
    outer_based = pack(
        one_cube(weight=1),
        [box(1, point(10, 10, 10), rateTable=table, outer=outer, outerBasedCost=True)],
    )
    assert outer_based["totalCost"] == 200
    b = outer_based["boxes"][0]["box"]
    assert b["dimensionalWeight"] == pytest.approx(1331 / 139)
    assert b["outer"]["dimensions"] == point(11, 11, 11)


def test_built_in_carrier_table() -> None:
    # sample / retail-ground has dimFactor 166. A 10-cube box: 1000 / 166 = 6.02 lb,
    # more than the 3 lb gross, so the 7 lb breakpoint; zone 5 charges 2020 there.
    zone5 = builtin_rate_tables()["sample"]["services"]["retail-ground"]["zones"]["5"]
    assert zone5[6] == 2020  # the data file's 7 lb rate, read independently of packing
    table = {"carrier": "sample", "service": "retail-ground", "zone": "5"}
    response = pack(
        one_cube(side=5, weight=3), [box(1, point(10, 10, 10), price=25, rateTable=table)]
    )
    assert response["totalCost"] == 25 + 2020
    assert response["boxes"][0]["box"]["dimensionalWeightUsed"] is True
    # dimFactor -1 disables dimensional weight: 3 lb rates at 1340 in zone 5.
    table["dimFactor"] = -1
    response = pack(
        one_cube(side=5, weight=3), [box(1, point(10, 10, 10), price=25, rateTable=table)]
    )
    assert response["totalCost"] == 25 + 1340
    assert "dimensionalWeight" not in response["boxes"][0]["box"]


def test_carrier_names_are_case_insensitive_and_zones_may_be_numbers() -> None:
    table = {"carrier": "Sample", "service": "RETAIL-GROUND", "zone": 1, "dimFactor": -1}
    response = pack(one_cube(side=1, weight=1), [box(1, point(10, 10, 10), rateTable=table)])
    assert response["totalCost"] == 800


@pytest.mark.parametrize(
    ("table", "details"),
    [
        (
            {"carrier": "acme", "service": "retail-ground", "zone": "1"},
            "boxTypes[0].rateTable.carrier: unknown carrier 'acme'; known: sample",
        ),
        (
            {"carrier": "sample", "service": "overnight", "zone": "1"},
            "boxTypes[0].rateTable.service: unknown service 'overnight'; known: retail-ground",
        ),
        (
            {"carrier": "sample", "service": "retail-ground", "zone": "9"},
            "boxTypes[0].rateTable.zone: unknown zone '9'; known: 1, 2, 3, 4, 5, 6, 7, 8",
        ),
        (
            {"carrier": "sample", "service": "retail-ground"},
            "boxTypes[0].rateTable.zone: a built-in rate table needs carrier, service and zone",
        ),
        (
            {"weights": [2, 1], "rates": [1, 2]},
            "boxTypes[0].rateTable.weights: breakpoints must be >= 0 and strictly ascending",
        ),
        ({"weights": [1]}, "boxTypes[0].rateTable.rates: give weights and rates"),
        (
            {"weights": [1], "rates": [5], "basePrice": 3},
            "boxTypes[0].rateTable: give one rating method, not weights and rates and also "
            "basePrice and priceIncreaseRate",
        ),
    ],
)
def test_bad_rate_tables_are_422_naming_the_field(table: Wire, details: str) -> None:
    with pytest.raises(InvalidRequest) as info:
        pack(one_cube(), [box(1, point(10, 10, 10), rateTable=table)])
    assert (info.value.details or "").startswith(details)


UNORDERED = {"weights": [2, 1], "rates": [1, 2]}
GENERATOR = {"operation": "cartesian", "options": {"xList": [10], "yList": [10], "zList": [10]}}
PREPACKED = box(3, point(10, 10, 10), items=[{"item": {"dimensions": point(1, 1, 1), "weight": 1}}])


@pytest.mark.parametrize(
    ("fields", "details"),
    [
        ({"boxTypeDefaults": {"rateTable": UNORDERED}}, "boxTypeDefaults.rateTable.weights:"),
        (
            {
                "boxTypes": [box(1, point(10, 10, 10), rateTable={"service": "retail-ground"})],
                "boxTypeDefaults": {"rateTable": {"carrier": "sample", "zone": 42}},
            },
            "boxTypeDefaults.rateTable.zone: unknown zone '42'",
        ),
        (
            {
                "boxTypes": [box(1, point(10, 10, 10), rateTable={"zone": 42})],
                "boxTypeDefaults": {"rateTable": {"carrier": "sample", "service": "retail-ground"}},
            },
            "boxTypes[0].rateTable.zone: unknown zone '42'",
        ),
        (
            {"boxTypes": [], "boxTypeGenerators": [GENERATOR]}
            | {"boxTypeDefaults": {"rateTable": UNORDERED}},
            "boxTypeDefaults.rateTable.weights:",
        ),
        (
            {"boxTypes": []}
            | {"boxTypeGenerators": [GENERATOR | {"boxTypeDefaults": {"rateTable": UNORDERED}}]},
            "boxTypeGenerators[0].boxTypeDefaults.rateTable.weights:",
        ),
        (
            {"boxes": [PREPACKED], "boxTypeDefaults": {"rateTable": UNORDERED}}
            | {"boxTypes": [box(1, point(10, 10, 10), rateTable={"weights": [1], "rates": [1]})]},
            "boxTypeDefaults.rateTable.weights:",
        ),
        (
            {"boxes": [PREPACKED | {"boxType": box(2, point(10, 10, 10), rateTable=UNORDERED)}]},
            "boxes[0].boxType.rateTable.weights:",
        ),
    ],
)
def test_a_bad_rate_table_field_is_named_where_it_was_given(fields: Wire, details: str) -> None:
    # A box type's table merges field by field with its defaults': the 422 names the
    # defaults when the bad field came from them, not the box type that inherited it.
    request = {"itemSets": one_cube(side=1), "boxTypes": [box(1, point(10, 10, 10))], **fields}
    with pytest.raises(InvalidRequest) as info:
        cartonize.pack(request)
    assert (info.value.details or "").startswith(details), info.value.details


def test_rate_table_from_box_type_defaults() -> None:
    # The defaults' table applies to every box type: 10 lb at 100/lb = 1000 + price 7.
    response = pack(
        one_cube(weight=10),
        [box(1, point(10, 10, 10), price=7)],
        boxTypeDefaults={"rateTable": PER_POUND},
    )
    assert response["totalCost"] == 1007


def test_most_items_still_counts_the_rated_cost() -> None:
    steep = {"weights": [10, 20], "rates": [500, 1500]}
    boxes = [
        box(1, point(10, 10, 20), price=100, rateTable=steep),
        box(2, point(10, 10, 10), price=100, rateTable=steep),
    ]
    response = pack(one_cube(weight=10, quantity=2), boxes, boxTypeChoiceGoal="most-items")
    assert used(response) == [(1, 1600)]


def test_validator_recomputes_the_rated_cost() -> None:
    boxes = [box(1, point(10, 10, 10), price=300, rateTable={**PER_POUND, "dimFactor": 139})]
    request = {"itemSets": one_cube(), "boxTypes": boxes, "includeImages": False}
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    assert validate(request, response) == []
    # Rated on the 5 lb gross weight instead of the 7.19 lb dimensional weight.
    response["boxes"][0]["box"]["price"] = response["totalCost"] = 800
    assert validate(request, response) == [
        "box-cost: box 0: price 800, expected 1019.42",
        "box-figures: box 0: its items' deltaCost add up to 1019, not its price 800",
    ]


def test_tables_alike_are_lowered_once_and_each_request_keeps_its_own_fields() -> None:
    # The same breakpoints in three requests (lowered once per process): each request's
    # own dimFactor and rates still decide its cost, and a bad table in a later request
    # is named at its own path.
    table = {"weights": [10, 20], "rates": [500, 1500]}
    cube = [box(1, point(10, 10, 10), price=100, rateTable=table)]
    assert pack(one_cube(weight=5), cube)["totalCost"] == 600
    # Dimensional weight 1000 / 40 = 25 lb: over the last breakpoint, the last rate.
    dim = [box(1, point(10, 10, 10), price=100, rateTable={**table, "dimFactor": 40})]
    assert pack(one_cube(weight=5), dim)["totalCost"] == 1600
    dearer = {"weights": [10, 20], "rates": [700, 1500]}
    assert (
        pack(one_cube(weight=5), [box(1, point(10, 10, 10), rateTable=dearer)])["totalCost"] == 700
    )
    with pytest.raises(InvalidRequest) as info:
        pack(one_cube(), [*cube, box(2, point(10, 10, 10), rateTable={"weights": [20, 10]})])
    assert (info.value.details or "").startswith("boxTypes[1].rateTable.rates")


@pytest.mark.parametrize(
    ("weight", "quantity", "dims", "rate"),
    [
        # 20 x 0.05 lb sums to 1.0000000000000002 in floating point: billed at 1 lb.
        (0.05, 20, point(1, 1, 1), 800),
        # 15 x 0.2 lb sums to 3.0000000000000004: billed at 3 lb, not 4.
        (0.2, 15, point(1, 1, 1), 920),
    ],
)
def test_a_weight_summed_to_a_breakpoint_is_billed_at_it(
    weight: float, quantity: int, dims: dict[str, float], rate: int
) -> None:
    # sample / retail-ground zone 1: 800 up to 1 lb, 860 to 2, 920 to 3, 980 to 4.
    table = builtin_rate_tables()["sample"]["services"]["retail-ground"]
    assert table["weights"][:4] == [1, 2, 3, 4]
    assert table["zones"]["1"][:4] == [800, 860, 920, 980]
    response = pack(
        [{"refId": 1, "dimensions": dims, "weight": weight, "quantity": quantity}],
        [
            box(
                9,
                point(5, 5, 5),
                rateTable={"carrier": "sample", "service": "retail-ground", "zone": 1},
            )
        ],
    )
    assert used(response) == [(9, rate)]


def test_a_dimensional_weight_a_hair_above_a_breakpoint_is_billed_at_it() -> None:
    # A 0.1 x 3 x 10 box with dimFactor 1: 0.1 * 3 * 10 = 3.0000000000000004, billed at 3.
    response = pack(
        one_cube(side=0.1, weight=0),
        [
            box(
                9,
                point(0.1, 3, 10),
                rateTable={"weights": [3, 4], "rates": [100, 200], "dimFactor": 1},
            )
        ],
    )
    assert used(response) == [(9, 100)]


@pytest.mark.parametrize(("rate", "price"), [(0.5, 1), (1.5, 2), (2.5, 3), (100.5, 101), (2.4, 2)])
def test_a_price_rounds_halves_up(rate: float, price: int) -> None:
    # Money rounds halves up; Python's round() took them to the even neighbour (2.5 -> 2,
    # 0.5 -> 0).
    response = pack(
        one_cube(side=1, weight=0), [box(9, point(5, 5, 5), rateTable={"basePrice": rate})]
    )
    assert used(response) == [(9, price)]
    (item,) = [e["item"] for e in response["boxes"][0]["box"]["items"]]
    assert item["deltaCost"] == price


def test_a_line_below_0_rates_0_there() -> None:
    # The public schema (1.9.2) gives basePrice and priceIncreaseRate no bound, and a line
    # fitted to a carrier's rates may start below 0, so neither is refused; but the
    # response gives every box a price >= 0, so where the line is below 0 the rate is 0
    # (a box once cost 100 - 500 + 10 x 3 = -370; the schema fuzz, seed 1251, found a
    # price of -4 from a falling line). Above 0 the line holds as given.
    line = {"basePrice": -500, "priceIncreaseRate": 10}
    response = pack(one_cube(side=1, weight=3), [box(9, point(5, 5, 5), price=100, rateTable=line)])
    assert used(response) == [(9, 100)]
    assert response["totalCost"] == 100
    heavy = pack(one_cube(side=1, weight=80), [box(9, point(5, 5, 5), price=100, rateTable=line)])
    assert used(heavy) == [(9, 100 - 500 + 10 * 80)]
    falling = {"basePrice": 10, "priceIncreaseRate": -1}
    response = pack(one_cube(side=1, weight=25), [box(9, point(5, 5, 5), rateTable=falling)])
    assert used(response) == [(9, 0)]


def test_a_negative_breakpoint_rate_is_taken_as_0_with_a_warning() -> None:
    # The public schema (1.9.2) bounds no rate, so a table with one below 0 is not
    # refused (it was a 422 on boxTypes[0].rateTable.rates); but its response gives every
    # box a price >= 0, so the rate counts as 0 (the schema fuzz, seed 1251, found a
    # price of -4 from a negative rate: docs/rates.md).
    table = {"weights": [1, 5], "rates": [-200, 300]}
    light = pack(one_cube(side=1, weight=1), [box(9, point(5, 5, 5), price=50, rateTable=table)])
    assert used(light) == [(9, 50)]
    assert light["totalCost"] == 50
    (item,) = [e["item"] for e in light["boxes"][0]["box"]["items"]]
    assert item["deltaCost"] == 50
    assert (
        "boxTypes[0].rateTable.rates: rates below 0 are taken as 0 (a box's price in the "
        "response is never below 0); got -200"
    ) in light["warnings"]
    heavy = pack(one_cube(side=1, weight=3), [box(9, point(5, 5, 5), price=50, rateTable=table)])
    assert used(heavy) == [(9, 50 + 300)]


def test_a_rate_below_0_makes_a_box_no_cheaper_than_free() -> None:
    # The larger box's rate of -100 counts as 0: it costs its price, 20, and the smaller
    # box (10) stays the cheaper choice.
    credit = {"weights": [10], "rates": [-100]}
    response = pack(
        one_cube(side=1, weight=1),
        [
            box(1, point(2, 2, 2), price=10),
            box(2, point(4, 4, 4), price=20, rateTable=credit),
        ],
    )
    assert used(response) == [(1, 10)]
