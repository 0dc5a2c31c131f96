"""The benchmark helpers that judge results: support share, cost from a rate table, the
orientation and vertical checks, and MPV instance reading."""

from __future__ import annotations

from typing import Any

import pytest

from bench.common import (
    MPV_DIR,
    box_cost,
    check_boxes_max,
    check_locked,
    check_vertical,
    mpv_request,
    rate,
    read_mpv,
    support_shares,
)

Wire = dict[str, Any]


def placed(ref_id: int, origin: tuple[float, ...], dims: tuple[float, ...]) -> Wire:
    x, y, z = origin
    dx, dy, dz = dims
    return {
        "item": {
            "refId": ref_id,
            "origin": {"x": x, "y": y, "z": z},
            "dimensions": {"x": dx, "y": dy, "z": dz},
        }
    }


def one_box(*items: Wire) -> Wire:
    return {"boxes": [{"box": {"dimensions": {"x": 10, "y": 10, "z": 10}, "items": list(items)}}]}


def test_floor_items_and_items_on_a_full_top_are_supported() -> None:
    response = one_box(
        placed(0, (0, 0, 0), (2, 4, 4)),
        placed(1, (2, 0, 0), (2, 4, 4)),  # exactly on item 0's top
        placed(2, (0, 5, 0), (2, 2, 2)),
    )
    assert support_shares(response) == (3, 3)


def test_support_from_several_items_counts_their_union() -> None:
    response = one_box(
        placed(0, (0, 0, 0), (2, 2, 4)),
        placed(1, (0, 2, 0), (2, 2, 4)),
        placed(2, (2, 0, 0), (2, 4, 4)),  # on both halves: fully supported
    )
    assert support_shares(response) == (3, 3)


def test_overhang_or_a_lower_top_is_not_full_support() -> None:
    response = one_box(
        placed(0, (0, 0, 0), (2, 4, 4)),
        placed(1, (2, 0, 0), (2, 4, 5)),  # overhangs item 0 by 1 along z
        placed(2, (0, 6, 0), (1, 2, 2)),
        placed(3, (2, 6, 0), (2, 2, 2)),  # floats: item 2's top is at 1, not 2
    )
    assert support_shares(response) == (2, 4)


TABLE = {"weights": [500, 1000, 2000], "rates": [600, 800, 1000], "dimFactor": 5000}


def test_rate_is_the_first_breakpoint_at_or_above_the_weight() -> None:
    assert rate(TABLE, 500) == 600
    assert rate(TABLE, 501) == 800
    assert rate(TABLE, 5000) == 1000  # above the last: the last rate


def test_box_cost_rates_the_larger_of_gross_and_dimensional_weight() -> None:
    box = {"dimensions": {"x": 100, "y": 100, "z": 200}, "price": 40, "rateTable": TABLE}
    # 2,000,000 mm3 / 5000 = 400 g dimensional; 700 g gross wins.
    assert box_cost(box, 700) == 40 + 800
    assert box_cost(box, 100) == 40 + 600
    assert box_cost({"dimensions": {"x": 2, "y": 3, "z": 4}}, 1) == 24
    assert box_cost({"dimensions": {"x": 2, "y": 3, "z": 4}, "price": 7}, 1) == 7


def test_locked_items_must_keep_their_axes() -> None:
    request = {"itemSets": [{"refId": 0, "dimensions": {"x": 1, "y": 2, "z": 3}}]}
    assert check_locked(request, one_box(placed(0, (0, 0, 0), (1, 2, 3)))) == []
    assert check_locked(request, one_box(placed(0, (0, 0, 0), (2, 1, 3))))


def test_vertical_side_and_box_limit_checks() -> None:
    response = one_box(placed(0, (0, 0, 0), (3, 2, 1)))
    assert check_vertical({0: [3, 1]}, response) == []
    assert check_vertical({0: [2]}, response)
    assert check_boxes_max(1, response) == []
    assert check_boxes_max(0, response)


@pytest.mark.skipif(not MPV_DIR.exists(), reason="MPV instances not on this machine")
def test_mpv_instances_read_and_become_locked_requests() -> None:
    inst = read_mpv(6, 50, 1)
    assert inst.bin == (10, 10, 10)
    assert len(inst.items) == 50
    request = mpv_request(inst, 1.0)
    assert request["timeout"] == 1.0
    assert request["rules"][0]["options"] == {"freeAxes": []}
    assert len(request["itemSets"]) == 50
