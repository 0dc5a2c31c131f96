"""Placement and orientation options (service-spec.md §A; docs/decisions.md "Placement
styles and orientation options"): a request with the option and one without differ the
way the spec says, and both pass the independent validator."""

from __future__ import annotations

import math
from typing import Any

import cartonize
import pytest

from tests.validator import validate

Wire = dict[str, Any]

BOX = (10.0, 10.0, 10.0)  # x (height), y (width), z (length)


def _pack(request: Wire) -> Wire:
    response: Wire = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    assert validate(request, response) == []
    return response


def _request(*item_sets: tuple[float, float, float, int], **extra: Any) -> Wire:
    return {
        "orderId": "placement",
        "itemSets": [
            {"refId": r, "dimensions": {"x": x, "y": y, "z": z}, "weight": 1, "quantity": q}
            for r, (x, y, z, q) in enumerate(item_sets, start=1)
        ],
        "boxTypes": [
            {"refId": 9, "dimensions": dict(zip("xyz", BOX, strict=True)), "weightMax": 0}
        ],
        "includeImages": False,
        **extra,
    }


def _items(response: Wire) -> list[Wire]:
    return [e["item"] for b in response["boxes"] for e in b["box"]["items"]]


def _vec(p: Wire) -> tuple[float, float, float]:
    return (p["x"], p["y"], p["z"])


def _centre(item: Wire) -> tuple[float, float, float]:
    o, d = _vec(item["origin"]), _vec(item["dimensions"])
    return (o[0] + d[0] / 2, o[1] + d[1] / 2, o[2] + d[2] / 2)


def _mean_distance(response: Wire, point: tuple[float, float, float]) -> float:
    items = _items(response)
    return sum(math.dist(_centre(i), point) for i in items) / len(items)


# --- placementStyle ------------------------------------------------------------------

MIXED = ((2, 3, 4, 6), (1, 2, 2, 6), (3, 3, 3, 2))
H, W, L = BOX
REFERENCE = {
    "corner": (0.0, 0.0, 0.0),  # rear bottom corner
    "wedge": (0.0, W / 2, 0.0),  # middle of the bottom back edge
    "mound": (0.0, W / 2, L / 2),  # centre of the floor
    "orb": (H / 2, W / 2, L / 2),  # centre of volume
}


@pytest.mark.parametrize("style", sorted(REFERENCE))
def test_a_style_gathers_items_nearest_its_reference_point(style: str) -> None:
    reference = REFERENCE[style]
    plain = _pack(_request(*MIXED))
    styled = _pack(_request(*MIXED, placementStyle=style))
    assert styled["lenLeftovers"] == plain["lenLeftovers"] == 0
    assert styled["warnings"] == []
    # The items sit nearer the style's point than under the default, and nearer it
    # than under any other style.
    mine = _mean_distance(styled, reference)
    assert mine < _mean_distance(plain, reference)
    for other in set(REFERENCE) - {style}:
        assert mine <= _mean_distance(_pack(_request(*MIXED, placementStyle=other)), reference)


@pytest.mark.parametrize(
    ("style", "first_origin"),
    [
        ("default", (0, 0, 0)),
        ("corner", (0, 0, 0)),
        ("wedge", (0, 3.5, 0)),  # a 3x3x3 cube centred on the back edge (y 5)
        ("mound", (0, 3.5, 3.5)),  # centred on the floor
        ("orb", (3.5, 3.5, 3.5)),  # centred in the box
    ],
)
def test_the_first_item_goes_to_the_reference_point(
    style: str, first_origin: tuple[float, float, float]
) -> None:
    response = _pack(_request((3, 3, 3, 1), placementStyle=style))
    assert _vec(_items(response)[0]["origin"]) == first_origin


@pytest.mark.parametrize("style", sorted(REFERENCE))
@pytest.mark.parametrize(
    "item_sets",
    [
        ((5, 5, 5, 8),),  # eight 5-cubes fill the box exactly: a centred cube would not
        ((2, 3, 4, 30), (1, 2, 2, 40), (3, 3, 3, 12)),  # several boxes
    ],
)
def test_a_style_never_costs_a_box(
    style: str, item_sets: tuple[tuple[float, float, float, int], ...]
) -> None:
    plain = _pack(_request(*item_sets))
    styled = _pack(_request(*item_sets, placementStyle=style))
    assert (styled["lenBoxes"], styled["lenLeftovers"]) == (plain["lenBoxes"], 0)
    assert styled["totalCost"] == plain["totalCost"]


def test_default_style_spelled_out_packs_as_the_default() -> None:
    plain = _pack(_request(*MIXED))
    spelled = _pack(_request(*MIXED, placementStyle="default"))
    assert _items(spelled) == _items(plain)


@pytest.mark.parametrize(
    ("coord_order", "second_origin"),
    [
        (None, (0, 0, 5)),  # the default [0, 1, 2]: lowest x, then y, then z: along z
        ([0, 1, 2], (0, 0, 5)),
        ([0, 2, 1], (0, 5, 0)),  # lowest x, then z: along y
        ([2, 1, 0], (5, 0, 0)),  # lowest z, then y, then x: stacked
    ],
)
def test_coord_order_is_the_axis_priority_of_the_default_style(
    coord_order: list[int] | None, second_origin: tuple[float, float, float]
) -> None:
    extra = {} if coord_order is None else {"coordOrder": coord_order}
    response = _pack(_request((5, 5, 5, 2), itemSort="default", **extra))
    assert [_vec(i["origin"]) for i in _items(response)] == [(0, 0, 0), second_origin]


# --- packOrigin ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pack_origin", "mirrored"),
    [
        ({"x": 0, "y": 0, "z": 0}, (False, False)),
        ({"x": 0, "y": 10, "z": 0}, (True, False)),
        ({"x": 0, "y": 0, "z": 10}, (False, True)),
        ({"x": 0, "y": 50, "z": 10}, (True, True)),  # beyond the wall: its corner
    ],
)
def test_a_bottom_corner_pack_origin_mirrors_the_default_packing(
    pack_origin: Wire, mirrored: tuple[bool, bool]
) -> None:
    plain = _items(_pack(_request(*MIXED)))
    moved = _items(_pack(_request(*MIXED, packOrigin=pack_origin)))
    assert len(moved) == len(plain)
    for a, b in zip(plain, moved, strict=True):
        assert b["dimensions"] == a["dimensions"]
        assert b["origin"]["x"] == a["origin"]["x"]
        for axis, side, flip in (("y", W, mirrored[0]), ("z", L, mirrored[1])):
            expected = (
                side - a["origin"][axis] - a["dimensions"][axis] if flip else a["origin"][axis]
            )
            assert b["origin"][axis] == pytest.approx(expected)


def test_an_inner_pack_origin_is_the_point_items_gather_around() -> None:
    # The centre of the floor is the mound's own reference point: same packing.
    centred = _pack(_request(*MIXED, packOrigin={"x": 0, "y": 5, "z": 5}))
    mound = _pack(_request(*MIXED, placementStyle="mound"))
    assert _items(centred) == _items(mound)
    point = (0.0, 8.0, 2.0)
    near = _pack(_request(*MIXED, packOrigin=dict(zip("xyz", point, strict=True))))
    assert _mean_distance(near, point) < _mean_distance(_pack(_request(*MIXED)), point)


def test_pack_origin_replaces_a_style_reference_point_with_a_warning() -> None:
    response = _pack(_request(*MIXED, placementStyle="orb", packOrigin={"x": 0, "y": 5, "z": 5}))
    mound = _pack(_request(*MIXED, placementStyle="mound"))
    assert _items(response) == _items(mound)
    assert response["warnings"] == ["packOrigin replaces the reference point of placementStyle orb"]


# --- corners -------------------------------------------------------------------------

# One layer (x = 1) of locked tiles in a 6 x 5 floor. With corner points only, the two
# 1x3 bars find no place: the free corner next to the 4x1 tiles was covered before the
# tile that would have ended it came. Positions against item faces reach it. The second
# box type takes no tile; it keeps out the maximal-space construction (one box type
# only), which reaches the gap whatever `corners` says (next test).
GAP_TILES: Wire = {
    "orderId": "corners",
    "itemSets": [
        {"refId": 1, "dimensions": {"x": 1, "y": 4, "z": 1}, "quantity": 3, "weight": 1},
        {"refId": 2, "dimensions": {"x": 1, "y": 1, "z": 3}, "quantity": 2, "weight": 1},
        {"refId": 4, "dimensions": {"x": 1, "y": 2, "z": 3}, "quantity": 1, "weight": 1},
    ],
    "boxTypes": [
        {"refId": 9, "dimensions": {"x": 1, "y": 6, "z": 5}, "weightMax": 0},
        {"refId": 8, "dimensions": {"x": 0.5, "y": 0.5, "z": 0.5}, "weightMax": 0},
    ],
    "rules": [
        {"operation": "lock-orientation", "itemRefId": r, "options": {"freeAxes": []}}
        for r in (1, 2, 4)
    ],
    "itemSort": "default",
    "includeImages": False,
}


@pytest.mark.parametrize(("corners", "boxes"), [(None, 2), (True, 2), (False, 1)])
def test_corners_false_places_items_against_faces_off_the_corner_points(
    corners: bool | None, boxes: int
) -> None:
    request = dict(GAP_TILES)
    if corners is not None:
        request["corners"] = corners
    response = _pack(request)
    assert (response["lenBoxes"], response["lenLeftovers"]) == (boxes, 0)


def test_one_box_type_reaches_the_gap_over_maximal_spaces() -> None:
    # The same tiles with only their box type: the maximal-space construction fills the
    # box from the corners of its free space, the gap's among them, so one box.
    request = {**GAP_TILES, "boxTypes": GAP_TILES["boxTypes"][:1]}
    response = _pack(request)
    assert (response["lenBoxes"], response["lenLeftovers"]) == (1, 0)


@pytest.mark.parametrize("style", ["default", "mound"])
def test_corners_false_is_never_worse_than_corner_points(style: str) -> None:
    request = _request((2, 3, 4, 9), (1, 2, 5, 7), (3, 3, 3, 4), (2, 2, 7, 3), placementStyle=style)
    cornered = _pack(request)
    free = _pack({**request, "corners": False})
    assert free["lenLeftovers"] == cornered["lenLeftovers"] == 0
    assert free["lenBoxes"] <= cornered["lenBoxes"]


# --- layFlat and interlock -----------------------------------------------------------


def _heights(response: Wire) -> list[float]:
    return [i["dimensions"]["x"] for i in _items(response)]


def test_lay_flat_puts_every_item_on_its_largest_face() -> None:
    # Standing posts (6 high) and boards (x 3, y 1): as given they stand.
    request = _request((6, 2, 3, 4), (3, 1, 5, 4))
    plain = _pack(request)
    assert 6 in _heights(plain) and 3 in _heights(plain)
    flat = _pack({**request, "layFlat": True})
    assert flat["lenLeftovers"] == 0
    assert sorted(set(_heights(flat))) == [1, 2]
    # The validator, told layFlat, rejects the standing pack.
    problems = validate({**request, "layFlat": True}, plain)
    assert problems and all(p.startswith("lay-flat:") for p in problems)


def test_an_orientation_lock_wins_over_lay_flat() -> None:
    request = _request((6, 2, 3, 2), (3, 1, 5, 2), layFlat=True)
    request["rules"] = [{"operation": "lock-orientation", "itemRefId": 1, "options": {}}]
    response = _pack(request)
    heights = {(i["refId"], i["dimensions"]["x"]) for i in _items(response)}
    assert heights == {(1, 6), (2, 1)}


def test_a_locked_case_keeps_its_own_rung_under_lay_flat() -> None:
    # Found by the property tests: six 1 x 2 x 1 units make a case of either rung, 2 x 2 x 3
    # (it would lie flat) or 3 x 2 x 2. The engine ships the second, which the lock keeps
    # standing; the other rung is another unit, not a turn of this one.
    request = {
        "orderId": "placement",
        "includeImages": False,
        "layFlat": True,
        "itemSets": [
            {
                "refId": 4,
                "dimensions": {"x": 1, "y": 2, "z": 1},
                "weight": 0,
                "quantity": 6,
                "dimensionSets": [
                    {},
                    {"axisMultipliers": {"x": 2, "y": 1, "z": 3}},
                    {"axisMultipliers": {"x": 3, "y": 1, "z": 2}},
                ],
            }
        ],
        "boxTypes": [{"refId": 100, "dimensions": {"x": 5, "y": 5, "z": 5}, "weightMax": 0}],
        "rules": [{"operation": "lock-orientation", "itemRefId": 4, "options": {"freeAxes": []}}],
    }
    (item,) = _items(_pack(request))
    assert item["dimensions"] == item["dimensionSet"]["dimensions"] == {"x": 3, "y": 2, "z": 2}


# Bricks 1 high, 2 x 4, in a 4 x 4 x 8 box: four to a layer either way round.
BRICKS = _request((1, 2, 4, 16), itemSort="default")
BRICKS["boxTypes"][0]["dimensions"] = {"x": 4, "y": 4, "z": 8}


def _footprints_by_layer(response: Wire) -> dict[int, set[tuple[float, float]]]:
    layers: dict[int, set[tuple[float, float]]] = {}
    for i in _items(response):
        layer = int(i["origin"]["x"])
        layers.setdefault(layer, set()).add((i["dimensions"]["y"], i["dimensions"]["z"]))
    return layers


@pytest.mark.parametrize(
    ("extra", "layers"),
    [
        ({}, {n: {(2, 4)} for n in range(4)}),
        ({"layFlat": True}, {n: {(2, 4)} for n in range(4)}),
        ({"interlock": True}, {0: {(2, 4)}, 1: {(4, 2)}, 2: {(2, 4)}, 3: {(4, 2)}}),
        (
            {"interlock": True, "layFlat": True},
            {0: {(2, 4)}, 1: {(4, 2)}, 2: {(2, 4)}, 3: {(4, 2)}},
        ),
    ],
)
def test_interlock_turns_the_bricks_of_every_other_layer(
    extra: Wire, layers: dict[int, set[tuple[float, float]]]
) -> None:
    request = {**BRICKS, **extra}
    response = _pack(request)
    assert (response["lenBoxes"], response["lenLeftovers"]) == (1, 0)
    assert _footprints_by_layer(response) == layers


def test_the_validator_rejects_bricks_laid_without_interlock() -> None:
    plain = _pack(BRICKS)
    problems = validate({**BRICKS, "interlock": True}, plain)
    assert len(problems) == 8  # the bricks of layers 1 and 3
    assert all(p.startswith("interlock:") for p in problems)


def test_a_unit_in_an_alternate_shape_interlocks_as_that_shape_may_turn() -> None:
    # 6 x 6 x 3 spinning about x never lies flat, so its lock exempts it; folded to
    # 3 x 6 x 3 it lies flat both ways round, so the folded units interlock.
    request = _request((6, 6, 3, 4), interlock=True, itemInitialOrientationPreferred=False)
    request["boxTypes"][0]["dimensions"] = {"x": 6, "y": 6, "z": 6}
    request["rules"] = [
        {"operation": "lock-orientation", "itemRefId": 1, "options": {"freeAxes": [0]}},
        {
            "operation": "alternate-dimensions",
            "itemRefId": 1,
            "options": {"dimensionScaleChanges": [{"x": -0.5}]},
        },
    ]
    response = _pack(request)
    assert (response["lenBoxes"], response["lenLeftovers"]) == (1, 0)
    assert _footprints_by_layer(response) == {0: {(3, 6)}, 3: {(6, 3)}}
    # The lock keeps the item's own shape upright, not its fold: layFlat acts.
    assert not any(w.startswith("layFlat has no effect") for w in response["warnings"])


def test_interlock_warns_that_it_implies_lay_flat() -> None:
    response = _pack({**BRICKS, "interlock": True})
    assert response["warnings"] == [
        "interlock is true: items lie flat as with layFlat, which it implies"
    ]
    assert _pack({**BRICKS, "interlock": True, "layFlat": True})["warnings"] == []


# --- orientation ---------------------------------------------------------------------


def _shapes(response: Wire) -> set[tuple[float, float, float]]:
    return {_vec(i["dimensions"]) for i in _items(response)}


def _one_kind(dims: tuple[float, float, float], quantity: int, box: Wire, **extra: Any) -> Wire:
    request = _request((*dims, quantity), **extra)
    request["boxTypes"][0]["dimensions"] = box
    return request


@pytest.mark.parametrize(
    ("preferred", "shapes"),
    [
        (None, {(4, 3, 2)}),  # default true: as given while it fits
        (True, {(4, 3, 2)}),
        (False, {(2, 3, 4), (3, 4, 2)}),  # every orientation at each point: flattest first
    ],
)
def test_item_initial_orientation_preferred(
    preferred: bool | None, shapes: set[tuple[float, float, float]]
) -> None:
    request = _request((4, 3, 2, 5))
    if preferred is not None:
        request["itemInitialOrientationPreferred"] = preferred
    assert _shapes(_pack(request)) == shapes


# Five 3x2x10 bars tile the 10x15 floor of a 2-high box only all turned 2x10x3; the
# flattest shape at the first point (2x3x10) leaves slivers and needs a second box.
# Re-boxing finds the tiling whatever the options: 3 high, the bars never fit the box as
# given, so they turn there and its fit tries each turn that fits; with orientation free
# to optimise, block building (which turns units freely) finds it too, even without the
# orientation search (depth 0).
BARS_BOX = {"x": 2, "y": 10, "z": 15}


@pytest.mark.parametrize(
    ("extra", "boxes", "warnings"),
    [
        ({}, 1, []),
        ({"itemInitialOrientationPreferred": False, "itemOrientationSearchDepth": 0}, 1, []),
        ({"itemInitialOrientationPreferred": False}, 1, []),  # default depth 1
        ({"itemInitialOrientationPreferred": False, "itemOrientationSearchDepth": 1}, 1, []),
        ({"itemInitialOrientationPreferred": False, "itemOrientationSearchDepth": 4}, 1, []),
        (
            {"itemInitialOrientationPreferred": False, "itemOrientationSearchDepth": 9},
            1,
            ["itemOrientationSearchDepth 9 is above the maximum 4; using 4"],
        ),
        (
            {"itemOrientationSearchDepth": 2},
            1,
            [
                "itemOrientationSearchDepth has no effect while "
                "itemInitialOrientationPreferred is true"
            ],
        ),
    ],
)
def test_orientation_search_depth_tries_initial_orientations(
    extra: Wire, boxes: int, warnings: list[str]
) -> None:
    response = _pack(_one_kind((3, 2, 10), 5, BARS_BOX, **extra))
    assert (response["lenBoxes"], response["lenLeftovers"]) == (boxes, 0)
    assert response["warnings"] == warnings
    if boxes == 1:
        assert _shapes(response) == {(2, 10, 3)}


@pytest.mark.parametrize(
    ("box", "best"),
    [
        # 4x5x7 units in 10x14x21: as given 2*2*3 = 12 fit, turned 5x7x4 2*2*5 = 20.
        ({"x": 10, "y": 14, "z": 21}, (5, 7, 4)),
        # The same box stood up: 4x7x5 fits 5*2*2 = 20.
        ({"x": 21, "y": 14, "z": 10}, (4, 7, 5)),
    ],
)
@pytest.mark.parametrize("preferred", [True, False])
def test_best_for_box_orientation_fits_most_units_per_box_type(
    box: Wire, best: tuple[float, float, float], preferred: bool
) -> None:
    # Depth 0: no search, so only the per-point choice differs. As given first, the plain
    # packing needs two boxes; free to turn, re-boxing's block building finds the one-box
    # tiling too (it turns units freely).
    request = _one_kind(
        (4, 5, 7),
        20,
        box,
        itemInitialOrientationPreferred=preferred,
        itemOrientationSearchDepth=0,
    )
    plain = _pack(request)
    chosen = _pack({**request, "itemInitialOrientationBestForBox": True})
    assert plain["lenBoxes"] == (2 if preferred else 1), plain["warnings"]
    assert (chosen["lenBoxes"], chosen["lenLeftovers"]) == (1, 0)
    assert _shapes(chosen) == {best}
