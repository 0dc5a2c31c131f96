"""Fields that parse but do not change packing yet are named in `warnings`."""

from typing import Any

import cartonize
import pytest

BASE: dict[str, Any] = {
    "orderId": "W-1",
    "itemSets": [{"refId": 1, "dimensions": {"x": 1, "y": 1, "z": 1}, "weight": 1}],
    "boxTypes": [{"refId": 2, "dimensions": {"x": 4, "y": 4, "z": 4}, "weightMax": 10}],
    "includeImages": False,
}


def _warned(extra: dict[str, Any]) -> list[str]:
    warnings = cartonize.pack({**BASE, **extra}).warnings
    return [w for w in warnings if "no effect on packing yet" in w]


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"sequenceSort": True}, "sequenceSort"),
        ({"maxSequenceDistance": 10}, "maxSequenceDistance"),
    ],
)
def test_a_field_without_effect_is_named(extra: dict[str, Any], field: str) -> None:
    assert _warned(extra) == [f"'{field}' is accepted but has no effect on packing yet"]


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"placementStyle": "default", "corners": True, "boxesMax": 0},  # defaults, spelled out
        {"itemSort": "weight", "coordOrder": [0, 1, 2]},  # honoured fields
        {  # box choice and box accounting options, honoured since issue 4
            "boxTypeChoiceStyle": "estimated",
            "usableSpace": 0.9,
            "boxTypeChoiceLookback": 0,
            "reservedSpace": 0.1,
            "cohortPacking": True,
            "boxes": [{"dimensions": {"x": 4, "y": 4, "z": 4}, "weightMax": 10}],
        },
        {"placementStyle": "mound", "corners": False, "layFlat": True, "interlock": True},
        {"packOrigin": {"x": 0, "y": 0, "z": 0}, "itemInitialOrientationBestForBox": True},
    ],
)
def test_defaults_and_honoured_fields_are_not_named(extra: dict[str, Any]) -> None:
    assert _warned(extra) == []
