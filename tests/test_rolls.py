"""Rule `irregular` (type roll): material wound into the fewest equal rolls within
maxDiameter and maxWeight; rolls pack as D x D x width cuboids."""

from __future__ import annotations

import math
from typing import Any

import cartonize
import pytest
from cartonize.errors import InvalidRequest

from tests.validator import validate

Wire = dict[str, Any]


def request(options: Wire, quantity: int = 1) -> Wire:
    # Fabric 0.1 thick, 60 wide, 1000 long, 20 lb per piece.
    return {
        "orderId": "rolls",
        "includeImages": False,
        "itemSets": [
            {
                "refId": 1,
                "name": "fabric",
                "dimensions": {"x": 0.1, "y": 60, "z": 1000},
                "weight": 20,
                "quantity": quantity,
            }
        ],
        "boxTypes": [{"refId": 9, "dimensions": {"x": 20, "y": 20, "z": 70}, "weightMax": 0}],
        "rules": [{"operation": "irregular", "itemRefId": 1, "options": options}],
    }


def rolls(req: Wire) -> tuple[list[Wire], Wire]:
    response: Wire = cartonize.pack(req).model_dump(by_alias=True, exclude_none=True)
    assert validate(req, response) == []
    items = [e["item"] for b in response["boxes"] for e in b["box"]["items"]]
    return items + response["leftovers"], response


def test_one_roll_when_the_diameter_allows() -> None:
    # 1000 x 0.1 = 100 square units around a 3 core: D = sqrt(9 + 400 / pi) = 11.679...
    items, response = rolls(request({"type": "roll", "innerDiameter": 3, "maxDiameter": 12}))
    (roll,) = items
    d = math.ceil(math.sqrt(9 + 400 / math.pi) * 1000) / 1000
    assert sorted(roll["dimensions"].values()) == pytest.approx([d, d, 60])
    assert roll["weight"] == 20
    assert response["lenItems"] == 1


def test_max_diameter_splits_into_equal_rolls() -> None:
    # A 9 roll holds pi (81 - 9) / 0.4 = 565.5 long: two rolls of 500, D = sqrt(9 + 200/pi).
    options = {"innerDiameter": 3, "maxDiameter": 9, "spoolWeight": 0.5}
    items, _ = rolls(request(options, quantity=2))
    d = math.ceil(math.sqrt(9 + 200 / math.pi) * 1000) / 1000
    assert len(items) == 4
    assert {i["uniqueId"] for i in items} == {"1-0", "1-1", "1-2", "1-3"}
    for roll in items:
        assert sorted(roll["dimensions"].values()) == pytest.approx([d, d, 60])
        assert roll["weight"] == pytest.approx(10.5)


def test_max_weight_splits_too() -> None:
    # 4.5 lb of material per roll at most (5 minus a 0.5 spool): 1000 at 0.02 lb each
    # needs 5 rolls of 200.
    options = {"maxDiameter": 30, "maxWeight": 5, "spoolWeight": 0.5}
    items, response = rolls(request(options))
    assert len(items) == 5
    assert all(i["weight"] == pytest.approx(4.5) for i in items)
    assert not any("minRollLength" in w for w in response["warnings"])
    _, short = rolls(request(options | {"minRollLength": 250}))
    assert any("minRollLength 250" in w for w in short["warnings"])


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({}, "options.maxDiameter"),
        ({"type": "coil", "maxDiameter": 9}, "options.type"),
        ({"maxDiameter": 2, "innerDiameter": 3}, "options.maxDiameter"),
        ({"maxDiameter": 9, "maxWeight": 0.5, "spoolWeight": 1}, "options.maxWeight"),
        ({"maxDiameter": "big"}, "options.maxDiameter"),
        # Beyond a length's or a weight's bound the roll's diameter overflowed (a 500).
        ({"maxDiameter": 1e300}, "options.maxDiameter: must be a number from 0 to 1e+09"),
        ({"maxDiameter": 9, "maxWeight": 1e13}, "options.maxWeight: must be a number from 0"),
    ],
)
def test_malformed_roll_options_are_a_422(options: Wire, field: str) -> None:
    with pytest.raises(InvalidRequest) as info:
        cartonize.pack(request(options))
    assert f"rules[0].{field}" in (info.value.details or "")


def test_a_roll_has_its_mass_at_its_centre() -> None:
    req = request({"maxDiameter": 15})
    req["itemSets"][0]["centerOfMass"] = {"x": 0, "y": 10, "z": 900}  # of the flat fabric
    items, _ = rolls(req)
    for roll in items:
        o, d, c = (roll[k] for k in ("origin", "dimensions", "centerOfMass"))
        assert c == pytest.approx({a: o[a] + d[a] / 2 for a in "xyz"})
