"""Rule `fragile`: what may rest above an item (maxWeight, onTopOnly), heavier items kept
out of its box (excludeOverweight), and fragile units offered last unless
unrestrictedPlacement. x is height; "above" is higher with overlapping footprints."""

from __future__ import annotations

import copy
from typing import Any

import cartonize
import pytest
from cartonize.errors import InvalidRequest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import examples, pack_requests
from tests.validator import validate

Wire = dict[str, Any]


def slab(ref_id: int, name: str, height: float, weight: float, quantity: int = 1) -> Wire:
    """A 10 x 10 footprint slab; turned only about the vertical axis, so it lies flat."""
    return {
        "refId": ref_id,
        "name": name,
        "dimensions": {"x": height, "y": 10, "z": 10},
        "weight": weight,
        "quantity": quantity,
    }


def request(items: list[Wire], fragile: Wire, **more: Any) -> Wire:
    return {
        "orderId": "fragile",
        "includeImages": False,
        "itemSort": "default",
        "itemSets": items,
        "boxTypes": [{"refId": 9, "dimensions": {"x": 10, "y": 10, "z": 10}, "weightMax": 0}],
        "rules": [
            {
                "operation": "lock-orientation",
                "itemMatch": {"all": True},
                "options": {"freeAxes": [0]},
            },
            {"operation": "fragile", "itemMatch": {"expression": "glass"}, "options": fragile},
        ],
        **more,
    }


def pack(req: Wire) -> Wire:
    response: Wire = cartonize.pack(req).model_dump(by_alias=True, exclude_none=True)
    assert validate(req, response) == []
    return response


def layout(response: Wire) -> list[list[tuple[str, float]]]:
    """Per box, (name, height of the bottom) of each item, lowest first."""
    return [
        sorted(
            ((e["item"]["name"], e["item"]["origin"]["x"]) for e in b["box"]["items"]),
            key=lambda t: t[1],
        )
        for b in response["boxes"]
    ]


GLASS, BRICK = slab(1, "glass", 5, 1), slab(2, "brick", 4.9, 10)


def test_max_weight_puts_the_glass_on_top() -> None:
    response = pack(request([GLASS, BRICK], {"maxWeight": 5}))
    assert layout(response) == [[("brick", 0), ("glass", 4.9)]]


def packed_first(response: Wire) -> str:
    items = [e["item"] for b in response["boxes"] for e in b["box"]["items"]]
    return str(min(items, key=lambda i: i["packedIndex"])["name"])


def test_unrestricted_placement_keeps_the_order_and_the_limit() -> None:
    # The larger glass is offered first (not last) and the greedy fill puts it on the
    # floor, where the brick may not rest (10 > 5): two boxes. Re-boxing finds the one
    # box with the brick under the glass, within the limit.
    response = pack(request([GLASS, BRICK], {"maxWeight": 5, "unrestrictedPlacement": True}))
    assert packed_first(response) == "glass"
    assert layout(response) == [[("brick", 0), ("glass", 4.9)]]


def test_weight_within_the_limit_may_rest_on_the_glass() -> None:
    light = slab(2, "card", 4.9, 5)
    response = pack(request([GLASS, light], {"maxWeight": 5, "unrestrictedPlacement": True}))
    assert layout(response) == [[("glass", 0), ("card", 5)]]


def test_on_top_only_takes_nothing_above_even_weightless() -> None:
    feather = slab(2, "feather", 4.9, 0)
    response = pack(request([GLASS, feather], {"onTopOnly": True, "unrestrictedPlacement": True}))
    # Offered first, the glass goes on the floor; re-boxing puts the feather under it.
    assert packed_first(response) == "glass"
    assert layout(response) == [[("feather", 0), ("glass", 4.9)]]
    two_glasses = pack(request([slab(1, "glass", 5, 1, quantity=2)], {"onTopOnly": True}))
    assert two_glasses["lenBoxes"] == 2


def test_exclude_overweight_keeps_heavier_items_out_of_the_box() -> None:
    card = slab(3, "card", 0.1, 2)
    response = pack(request([GLASS, BRICK, card], {"maxWeight": 5, "excludeOverweight": True}))
    contents = [{name for name, _ in box} for box in layout(response)]
    assert len(contents) == 2
    assert not any({"brick", "glass"} <= box for box in contents)
    # Without excludeOverweight the glass rides on the brick in one box.
    assert pack(request([GLASS, BRICK, card], {"maxWeight": 5}))["lenBoxes"] == 1


def test_a_pre_packed_item_is_not_fragile() -> None:
    # The rule selects the pre-packed glass by name, but pre-packed items are as given:
    # the brick goes on top of it in its box rather than into a new one.
    glass = {**GLASS, "origin": {"x": 0, "y": 0, "z": 0}}
    glass.pop("quantity")
    box = {"dimensions": {"x": 10, "y": 10, "z": 10}, "weightMax": 0, "items": [{"item": glass}]}
    response = pack(request([BRICK], {"onTopOnly": True}, boxes=[box]))
    assert layout(response) == [[("glass", 0), ("brick", 5)]]


def test_the_validator_reports_weight_above_a_fragile_item() -> None:
    req = request([GLASS, BRICK], {"maxWeight": 5})
    response = pack(req)
    broken = copy.deepcopy(response)
    items = broken["boxes"][0]["box"]["items"]
    broken["boxes"][0]["box"].pop("centerOfMass")  # no longer true; not what is judged
    for e in items:  # brick on top of the glass
        e["item"].pop("centerOfMass")
        e["item"]["origin"]["x"] = 5 if e["item"]["name"] == "brick" else 0
    assert any(p.startswith("fragile:") and "carries 10" in p for p in validate(req, broken))
    on_top = request([GLASS, BRICK], {"onTopOnly": True})
    assert any("on-top-only" in p for p in validate(on_top, broken))
    overweight = request([GLASS, BRICK], {"maxWeight": 50, "excludeOverweight": True})
    assert validate(overweight, broken) == []
    overweight["rules"][1]["options"]["maxWeight"] = 5
    assert any("shares its box" in p for p in validate(overweight, response))


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"maxWeight": "heavy"}, "rules[1].options.maxWeight"),
        ({"maxWeight": -1}, "rules[1].options.maxWeight"),
        ({}, "rules[1].options.maxWeight"),
        ({"onTopOnly": "yes"}, "rules[1].options.onTopOnly"),
        ({"maxWeight": 1, "excludeOverweight": 1}, "rules[1].options.excludeOverweight"),
    ],
)
def test_malformed_fragile_options_are_a_422(options: Wire, field: str) -> None:
    with pytest.raises(InvalidRequest) as info:
        cartonize.pack(request([GLASS], options))
    assert field in (info.value.details or "")


def test_a_second_fragile_rule_on_an_item_warns_and_the_first_wins() -> None:
    req = request([GLASS, BRICK], {"maxWeight": 5})
    req["rules"].append({"operation": "fragile", "itemRefId": 1, "options": {"maxWeight": 50}})
    response = pack(req)
    assert layout(response) == [[("brick", 0), ("glass", 4.9)]]
    assert any("rules[2]" in w and "rules[1]" in w for w in response["warnings"])


@settings(max_examples=examples(40))
@given(
    pack_requests(),
    st.sampled_from(["maxWeight", "onTopOnly"]),
    st.integers(0, 20),
    st.booleans(),
    st.booleans(),
)
def test_random_packs_keep_fragile_limits(
    req: Wire, kind: str, limit: int, overweight: bool, unrestricted: bool
) -> None:
    """A fragile rule on every other item set: every answer passes check_fragile."""
    options: Wire = {"unrestrictedPlacement": unrestricted, "excludeOverweight": overweight}
    options |= {"maxWeight": limit} if kind == "maxWeight" else {"onTopOnly": True}
    req = {
        **req,
        "random": False,
        "rules": [
            {"operation": "fragile", "itemRefId": s["refId"], "options": options}
            for s in req.get("itemSets", [])[::2]
            if "refId" in s
        ],
    }
    pack(req)
