"""Adding generated box types never makes an answer dearer: the engine also packs with
the request's own box types alone and keeps the cheaper complete answer."""

from __future__ import annotations

import copy
from typing import Any

import cartonize
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.cartonization_speed import order
from tests.strategies import examples
from tests.validator import validate

Wire = dict[str, Any]


def packed(req: Wire) -> Wire:
    response: Wire = cartonize.pack(req).model_dump(by_alias=True, exclude_none=True)
    assert validate(req, response) == []
    return response


def without_generators(req: Wire) -> Wire:
    fixed = copy.deepcopy(req)
    fixed.pop("boxTypeGenerators", None)
    return fixed


def test_the_bench_order_is_no_dearer_with_its_generator() -> None:
    # Greedy box choice alone opens 3 boxes for 8980 with the 64 generated types; the
    # 15 fixed types alone give 2 boxes for 7100 (7110 before re-boxing).
    req = order()
    with_generated = packed(req)
    fixed_only = packed(without_generators(req))
    assert fixed_only["totalCost"] == 7100
    assert with_generated["totalCost"] <= fixed_only["totalCost"]
    assert with_generated["lenLeftovers"] == fixed_only["lenLeftovers"] == 0


@st.composite
def orders_with_a_generator(draw: st.DrawFn) -> Wire:
    """A small rated order with a few fixed carton types and one cartesian generator."""
    sides = st.integers(1, 9)
    item_sets = [
        {
            "refId": i + 1,
            "dimensions": {a: draw(sides) for a in "xyz"},
            "weight": draw(st.integers(1, 40)) / 10,
            "quantity": draw(st.integers(1, 6)),
        }
        for i in range(draw(st.integers(2, 6)))
    ]
    rate = {"weights": [1, 3, 8, 20], "rates": [800, 1000, 1500, 2600], "dimFactor": 139}
    box_types = [
        {
            "refId": 100 + b,
            "dimensions": {a: draw(st.integers(9, 20)) for a in "xyz"},
            "weightMax": 70,
            "price": draw(st.integers(0, 300)),
            "rateTable": rate,
        }
        for b in range(draw(st.integers(1, 4)))
    ]
    step = draw(st.sampled_from([2, 3, 4]))
    generator = {
        "operation": "cartesian",
        "boxTypeDefaults": {"weightMax": 70, "rateTable": rate},
        "options": {
            axis: {
                "min": draw(st.integers(2, 6)),
                "max": draw(st.integers(10, 24)),
                "increment": step,
            }
            for axis in ("xRange", "yRange", "zRange")
        }
        | {
            "priceComponents": [
                {
                    "metric": "surface-area-rsc",
                    "thresholds": [0, 500, 1000],
                    "prices": [40, 70, 110],
                }
            ],
            "noTrimToMaxExtent": True,
        },
    }
    return {
        "orderId": "monotone",
        "itemSets": item_sets,
        "boxTypes": box_types,
        "boxTypeGenerators": [generator],
        "generatedBoxTypesMax": draw(st.sampled_from([8, 32])),
        "boxTypeChoiceGoal": draw(st.sampled_from(["lowest-cost", "most-items"])),
        "includeImages": False,
    }


@settings(max_examples=examples(60))
@given(orders_with_a_generator())
def test_generated_box_types_never_make_the_answer_dearer(req: Wire) -> None:
    with_generated = packed(req)
    fixed_only = packed(without_generators(req))
    assert with_generated["lenLeftovers"] <= fixed_only["lenLeftovers"]
    if with_generated["lenLeftovers"] == fixed_only["lenLeftovers"]:
        if req["boxTypeChoiceGoal"] == "lowest-cost":
            assert with_generated["totalCost"] <= fixed_only["totalCost"]
        else:
            assert with_generated["lenBoxes"] <= fixed_only["lenBoxes"]
