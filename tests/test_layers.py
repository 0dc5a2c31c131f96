"""Orders of many distinct units, where the engine also builds boxes in layers of units
chosen to fit (``rust/cartonize-core/src/layers.rs``): every answer passes the validator,
whatever the options that reach the layers, and the layers find the volume bound."""

from __future__ import annotations

import math
from typing import Any

import cartonize
import pytest

from bench.pack_speed import large_order
from tests.validator import validate

Wire = dict[str, Any]


def first_units(n: int, seed: int = 1) -> Wire:
    """The bench's large order (sides 50..350 mm, three cartons) cut to its first ``n`` items."""
    request = large_order(seed)
    return {**request, "itemSets": request["itemSets"][:n]}


def pack_wire(request: Wire) -> Wire:
    """Pack ``request`` and return the wire response."""
    response: Wire = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    return response


def volume_bound(request: Wire) -> int:
    """Boxes the items' volume needs at least, in the largest box type."""
    items = sum(math.prod(s["dimensions"].values()) * s["quantity"] for s in request["itemSets"])
    largest = max(math.prod(b["dimensions"].values()) for b in request["boxTypes"])
    return math.ceil(items / largest)


def test_three_hundred_distinct_units_fill_the_volume_bound() -> None:
    # 2.55 m^3 of units: three 1 m^3 boxes at 85 %. A fixed order filled by extreme
    # points needs four; boxes filled from units chosen to fit need three.
    request = first_units(300)
    response = pack_wire(request)
    assert validate(request, response) == []
    assert response["lenBoxes"] == volume_bound(request) == 3


VARIANTS: dict[str, Wire] = {
    "lowest-cost": {"boxTypeChoiceGoal": "lowest-cost"},
    "lowest-cost, priced cartons": {
        "boxTypeChoiceGoal": "lowest-cost",
        "boxTypes": [
            {**b, "price": p} for b, p in zip(large_order(2)["boxTypes"], [30, 25, 9], strict=True)
        ],
    },
    "coordOrder 2, 0, 1 (layers along z)": {"coordOrder": [2, 0, 1]},
    "placementStyle mound (restyled after)": {"placementStyle": "mound"},
    "layFlat": {"layFlat": True},
    "orientation locked": {
        "rules": [
            {
                "operation": "lock-orientation",
                "itemMatch": {"all": True},
                "options": {"freeAxes": []},
            }
        ]
    },
    "timeout (improvement on the layered answer)": {"timeout": 0.5},
}


@pytest.mark.parametrize("options", VARIANTS.values(), ids=VARIANTS.keys())
def test_layered_answers_pass_the_validator(options: Wire) -> None:
    request = {**first_units(300, seed=2), **options}
    response = pack_wire(request)
    assert validate(request, response) == []
    assert response["lenLeftovers"] == 0
