"""Item, sequence and time options change the packing the way the spec says: a request
with the option and one without differ as expected, and both pass the validator."""

from __future__ import annotations

import random
import time
from typing import Any

import cartonize
import pytest
from cartonize.errors import InvalidRequest
from cartonize.items import sequence_number, sequence_windows

from tests.test_render import face_polygons, hex_rgb
from tests.validator import validate

Wire = dict[str, Any]


def _pack(request: Wire) -> Wire:
    response: Wire = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    assert validate(request, response) == []
    return response


def _items(response: Wire) -> list[Wire]:
    return [e["item"] for b in response["boxes"] for e in b["box"]["items"]]


def _cube(ref_id: int, side: float, sequence: str | None = None, quantity: int = 1) -> Wire:
    item: Wire = {
        "refId": ref_id,
        "dimensions": {"x": side, "y": side, "z": side},
        "weight": 1,
        "quantity": quantity,
    }
    if sequence is not None:
        item["sequence"] = sequence
    return item


def _box(side: float) -> Wire:
    return {"refId": 99, "dimensions": {"x": side, "y": side, "z": side}, "weightMax": 0}


# --- sequenceSort ------------------------------------------------------------------------

# Sequence order (small, middle, big) is the reverse of volume order.
SEQUENCED: Wire = {
    "orderId": "sequence-sort",
    "itemSets": [_cube(3, 3, "0300"), _cube(1, 1, "0100"), _cube(2, 2, "0200")],
    "boxTypes": [_box(10)],
    "includeImages": False,
}


def _packed_order(response: Wire) -> list[int]:
    return [i["refId"] for i in sorted(_items(response), key=lambda i: i["packedIndex"])]


@pytest.mark.parametrize(
    ("options", "order", "sort_used"),
    [
        ({}, [3, 2, 1], "default"),  # combined: largest first
        ({"itemSort": "default"}, [3, 2, 1], "default"),
        ({"sequenceSort": True}, [1, 2, 3], "sequence"),
        ({"sequenceSort": True, "itemSortReverse": True}, [3, 2, 1], "sequence"),
        ({"sequenceSort": False}, [3, 2, 1], "default"),
    ],
)
def test_sequence_sort_packs_in_sequence_order(
    options: Wire, order: list[int], sort_used: str
) -> None:
    response = _pack({**SEQUENCED, **options})
    assert _packed_order(response) == order
    assert response["itemSortUsed"] == sort_used


def test_sequence_sort_over_an_explicit_item_sort_warns() -> None:
    response = _pack({**SEQUENCED, "sequenceSort": True, "itemSort": "weight"})
    assert _packed_order(response) == [1, 2, 3]
    assert any("itemSort 'weight' is not used" in w for w in response["warnings"])
    quiet = _pack({**SEQUENCED, "sequenceSort": True})
    assert not any("sequenceSort" in w for w in quiet["warnings"])


def test_sequence_sort_numbers_before_text_before_none() -> None:
    item_sets = [_cube(1, 1), _cube(2, 1, "B7"), _cube(3, 1, "12"), _cube(4, 1, "0009")]
    response = _pack({**SEQUENCED, "itemSets": item_sets, "sequenceSort": True})
    assert _packed_order(response) == [4, 3, 2, 1]


# --- maxSequenceDistance -----------------------------------------------------------------

# Three aisle-bin sequences that fit one box together: 0401 and 1228 differ by 827.
DISTANCED: Wire = {
    "orderId": "sequence-distance",
    "itemSets": [_cube(1, 2, "0401"), _cube(2, 2, "1228"), _cube(3, 2, "0450", quantity=2)],
    "boxTypes": [_box(10)],
    "includeImages": False,
}


def _sequences_per_box(response: Wire) -> list[set[str]]:
    return sorted(
        ({e["item"]["sequence"] for e in b["box"]["items"]} for b in response["boxes"]),
        key=sorted,
    )


@pytest.mark.parametrize(
    ("distance", "boxes"),
    [
        (None, [{"0401", "0450", "1228"}]),
        (827, [{"0401", "0450", "1228"}]),  # exactly the limit: allowed
        (826, [{"0401", "0450"}, {"1228"}]),
        (49, [{"0401", "0450"}, {"1228"}]),
        (48, [{"0401"}, {"0450"}, {"1228"}]),
        (0, [{"0401"}, {"0450"}, {"1228"}]),  # equal sequences still share a box
    ],
)
def test_max_sequence_distance_splits_far_sequences(
    distance: int | None, boxes: list[set[str]]
) -> None:
    request = dict(DISTANCED)
    if distance is not None:
        request["maxSequenceDistance"] = distance
    response = _pack(request)
    assert _sequences_per_box(response) == boxes
    assert response["lenLeftovers"] == 0


def test_max_sequence_distance_ignores_text_and_missing_sequences_with_a_warning() -> None:
    item_sets = [_cube(1, 2, "A-11"), _cube(2, 2, "B-40"), _cube(3, 2), _cube(4, 2, "0100")]
    response = _pack({**DISTANCED, "itemSets": item_sets, "maxSequenceDistance": 0})
    assert response["lenBoxes"] == 1
    assert any("'A-11', 'B-40' are not numbers" in w for w in response["warnings"])


def test_sequence_distance_and_sequence_sort_combine() -> None:
    response = _pack({**DISTANCED, "maxSequenceDistance": 49, "sequenceSort": True})
    assert _sequences_per_box(response) == [{"0401", "0450"}, {"1228"}]
    assert _packed_order(response) == [1, 3, 3, 2]


@pytest.mark.parametrize("seed", range(20))
def test_sequence_windows_keep_apart_exactly_the_pairs_too_far_apart(seed: int) -> None:
    # The engine gets each numeric sequence's rank and reach instead of every pair too far
    # apart (5,000 distinct sequences made 12.5 million pairs). Two kinds share a box by the
    # windows exactly when their numbers differ by at most the distance, decimals and
    # equal numbers included; text and missing sequences are not constrained.
    rng = random.Random(seed)
    pool = ["0401", "401", "450.5", "1e3", "12", "-3", "11.50", "x-1", "", None, "7", "8.25"]
    sequences = [rng.choice(pool) for _ in range(rng.randint(1, 14))]
    distance = rng.choice([0, 1, 5, 49, 1000])
    windows, _ = sequence_windows(sequences, distance)
    window = {k: (rank, reach) for k, rank, reach in windows}
    numbers = {k: sequence_number(s) for k, s in enumerate(sequences)}
    for p in range(len(sequences)):
        for q in range(len(sequences)):
            a, b = numbers[p], numbers[q]
            if a is None or b is None:
                assert p not in window or q not in window
                continue
            (ra, reach_a), (rb, reach_b) = window[p], window[q]
            shares = rb <= reach_a if ra <= rb else ra <= reach_b
            assert shares == (abs(a - b) <= distance), (sequences[p], sequences[q], distance)


# --- sequenceHeatMap ---------------------------------------------------------------------

# Four green cubes in two boxes: the ramp runs over all boxes, lowest sequence darkest;
# numbers rank by value (950 below 1228, though not in text order), text above them, an
# item without a sequence is grey.
HEATED: Wire = {
    "orderId": "heat-map",
    "itemSets": [
        {**_cube(n, 1, seq), "color": "#00ff00"}
        for n, seq in enumerate(["1228", "0401", "B-7", "950", None])
    ],
    "boxTypes": [{"refId": 99, "dimensions": {"x": 1, "y": 1, "z": 3}, "weightMax": 0}],
}


def _top_fills(response: Wire) -> dict[str | None, tuple[int, int, int]]:
    """The top-face colour of each packed item, by its sequence."""
    fills: dict[str | None, tuple[int, int, int]] = {}
    for box in response["boxes"]:
        faces = face_polygons(box["box"]["svg"])
        for entry in box["box"]["items"]:
            item = entry["item"]
            fills[item.get("sequence")] = hex_rgb(faces[item["index"]][0][0])
    return fills


@pytest.mark.parametrize("heat_map", [None, False, True])
def test_sequence_heat_map_colours_by_sequence(heat_map: bool | None) -> None:
    request = dict(HEATED)
    if heat_map is not None:
        request["sequenceHeatMap"] = heat_map
    response = _pack(request)
    assert response["lenBoxes"] == 2
    fills = _top_fills(response)
    if not heat_map:
        # The items' own colour: every top face is the same lightened green.
        assert len(set(fills.values())) == 1
        return
    light = {s: sum(rgb) for s, rgb in fills.items()}
    assert light["0401"] < light["950"] < light["1228"] < light["B-7"]
    assert len(set(fills[None])) == 1  # grey
    assert all(rgb[1] < 255 for rgb in fills.values())  # no item keeps its green


# --- dimensionSets -----------------------------------------------------------------------

# Eaches of 1 x 1 x 1 (weight 1), six-packs of 1 x 2 x 3 and cases of 12 measuring 2 x 2 x 3
# and weighing 13 (the carton adds 1).
LADDER = [
    {"unitOfMeasure": "each"},
    {"axisMultipliers": {"x": 1, "y": 2, "z": 3}, "unitOfMeasure": "six-pack"},
    {
        "dimensions": {"x": 2, "y": 2, "z": 3},
        "quantityDivisor": 12,
        "weight": 13,
        "unitOfMeasure": "case",
    },
]


def _laddered(quantity: int, ladder: list[Wire] | None) -> Wire:
    item_set: Wire = {**_cube(1, 1, quantity=quantity), "name": "soda"}
    if ladder is not None:
        item_set["dimensionSets"] = ladder
    return {
        "orderId": "ladder",
        "itemSets": [item_set],
        "boxTypes": [_box(10)],
        "includeImages": False,
    }


def _units(response: Wire) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in [*_items(response), *response.get("leftovers", [])]:
        name = item.get("unitOfMeasure", "-")
        counts[name] = counts.get(name, 0) + 1
    return counts


@pytest.mark.parametrize(
    ("quantity", "ladder", "units"),
    [
        (27, None, {"-": 27}),
        (27, LADDER, {"case": 2, "each": 3}),  # 3 left is less than a six-pack
        (12, LADDER, {"case": 1}),
        (18, LADDER, {"case": 1, "six-pack": 1}),
        (29, LADDER, {"case": 2, "each": 5}),
        (5, LADDER, {"each": 5}),
        (17, LADDER[:2], {"six-pack": 2, "each": 5}),
    ],
)
def test_dimension_sets_pack_larger_units_first(
    quantity: int, ladder: list[Wire] | None, units: dict[str, int]
) -> None:
    response = _pack(_laddered(quantity, ladder))
    assert _units(response) == units
    assert response["lenItems"] == quantity  # eaches
    assert response["lenUnits"] == sum(units.values())
    assert sum(b["box"]["lenItems"] for b in response["boxes"]) == quantity


def test_a_dimension_set_unit_reports_its_rung() -> None:
    response = _pack(_laddered(18, LADDER))
    by_unit = {i["unitOfMeasure"]: i for i in _items(response)}
    case, six = by_unit["case"], by_unit["six-pack"]
    assert (case["quantity"], case["weight"], case["dimensionSet"]["quantityDivisor"]) == (
        12,
        13,
        12,
    )
    assert sorted(case["dimensions"].values()) == [2, 2, 3]
    assert (six["quantity"], six["weight"]) == (6, 6)  # weight defaults to 6 eaches
    assert sorted(six["dimensions"].values()) == [1, 2, 3]
    assert {i["uniqueId"] for i in _items(response)} == {"1-0", "1-1"}
    assert response["boxes"][0]["box"]["lenUnits"] == 2


_SIDES = {"x": 2, "y": 2, "z": 2}


@pytest.mark.parametrize(
    ("ladder", "field"),
    [
        ([{}, {"unitOfMeasure": "case"}], "itemSets[0].dimensionSets[1]: give dimensions"),
        ([{"quantityDivisor": 2}], "itemSets[0].dimensionSets[0].quantityDivisor"),
        (
            [{}, {"axisMultipliers": {"x": 1, "y": 1.5, "z": 1}}],
            "itemSets[0].dimensionSets[1].quantityDivisor",
        ),
        (
            [{}, {"axisMultipliers": {"x": 1, "y": 0, "z": 1}}],
            "itemSets[0].dimensionSets[1].axisMultipliers",
        ),
        # Past the bounds of a side, a count and a weight: refused inside pack() (500s).
        (
            [{}, {"axisMultipliers": {"x": 1e300, "y": 1, "z": 1}, "quantityDivisor": 2}],
            "itemSets[0].dimensionSets[1].axisMultipliers: make a side of 1e+300",
        ),
        (
            [{}, {"axisMultipliers": {"x": 1e5, "y": 1e5, "z": 1}, "dimensions": _SIDES}],
            "itemSets[0].dimensionSets[1].axisMultipliers: their product 1e+10",
        ),
        (
            [{"weight": 1e8}, {"axisMultipliers": {"x": 1e5, "y": 1, "z": 1}}],
            "itemSets[0].dimensionSets[1]: 100000 eaches weigh 1e+13",
        ),
        (
            [{}, {"dimensions": _SIDES, "quantityDivisor": 2**32}],
            "itemSets[0].dimensionSets[1].quantityDivisor: must be an integer <= 4294967295",
        ),
    ],
)
def test_a_malformed_dimension_set_is_refused_naming_it(ladder: list[Wire], field: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        cartonize.pack(_laddered(12, ladder))
    assert field in (caught.value.details or "")


# --- virtual -----------------------------------------------------------------------------

# A 10 x 10 x 5 blocking volume and two 10 x 10 x 5 items in 10-cubes.
_SLAB = {"dimensions": {"x": 5, "y": 10, "z": 10}, "weight": 2}


@pytest.mark.parametrize("virtual", [False, True])
def test_a_virtual_item_takes_space_but_is_not_counted(virtual: bool) -> None:
    request = {
        "orderId": "virtual",
        "itemSets": [
            {"refId": 1, **_SLAB, "virtual": virtual},
            {"refId": 2, **_SLAB, "quantity": 2},
        ],
        "boxTypes": [_box(10)],
        "includeImages": False,
    }
    response = _pack(request)
    assert response["lenBoxes"] == 2  # the block needs room either way
    real = 2 if virtual else 3
    assert response["lenItems"] == real
    assert response["lenUnits"] == real
    assert sum(b["box"]["lenItems"] for b in response["boxes"]) == real
    assert response["totalWeight"] == 6  # it weighs what it says
    blocks = [i for i in _items(response) if i["refId"] == 1]
    assert [b.get("virtual", False) for b in blocks] == [virtual]


# --- centerOfMass ------------------------------------------------------------------------


def _com(point: Wire) -> tuple[float, float, float]:
    return (point["x"], point["y"], point["z"])


@pytest.mark.parametrize(
    ("offset", "box_com"),
    [
        (None, (1, 1, 2)),  # the geometric centre
        ({"x": 0.5, "y": 1, "z": 1}, (0.5, 1, 1)),  # bottom-heavy, heavier at the back
    ],
)
def test_an_item_centre_of_mass_moves_the_box_centre(
    offset: Wire | None, box_com: tuple[float, float, float]
) -> None:
    item: Wire = {"refId": 1, "dimensions": {"x": 2, "y": 2, "z": 4}, "weight": 3}
    if offset is not None:
        item["centerOfMass"] = offset
    request = {
        "orderId": "com",
        "itemSets": [item],
        "boxTypes": [{"refId": 9, "dimensions": {"x": 2, "y": 2, "z": 4}, "weightMax": 0}],
        "includeImages": False,
    }
    response = _pack(request)
    assert _com(response["boxes"][0]["box"]["centerOfMass"]) == box_com
    assert _com(_items(response)[0]["centerOfMass"]) == box_com


def test_a_turned_item_turns_its_centre_of_mass() -> None:
    # 4 high as given, heavy at the top; the box is 4 long, so the item lies down and
    # its heavy end points along z.
    item = {
        "refId": 1,
        "dimensions": {"x": 4, "y": 2, "z": 2},
        "weight": 1,
        "centerOfMass": {"x": 3, "y": 1, "z": 1},
    }
    request = {
        "orderId": "com-turned",
        "itemSets": [item, {**item, "refId": 2}],
        "boxTypes": [{"refId": 9, "dimensions": {"x": 2, "y": 2, "z": 8}, "weightMax": 0}],
        "includeImages": False,
    }
    response = _pack(request)
    for placed in _items(response):
        assert sorted(placed["dimensions"].values()) == [2, 2, 4]
        assert placed["dimensions"]["z"] == 4
        x, y, z = _com(placed["centerOfMass"])
        assert (x, y, z - placed["origin"]["z"]) == (1, 1, 3)
    assert _com(response["boxes"][0]["box"]["centerOfMass"]) == (1, 1, 5)


def test_an_each_of_its_own_dimensions_has_its_centre_of_mass_in_it() -> None:
    # Found by the schema fuzz: the item set's offset (0, 0, 2) lies within its 1 x 1 x 2
    # sides, but the ladder's each measures 1 x 1 x 1; it was reported at the offset,
    # outside the unit. An each of its own dimensions is centred, as other such rungs are.
    item_set = {
        "refId": 1,
        "dimensions": {"x": 1, "y": 1, "z": 2},
        "weight": 1,
        "quantity": 3,
        "centerOfMass": {"x": 0, "y": 0, "z": 2},
        "dimensionSets": [
            {"dimensions": {"x": 1, "y": 1, "z": 1}},
            {"quantityDivisor": 2, "axisMultipliers": {"x": 1, "y": 1, "z": 2}},
        ],
    }
    request = {"itemSets": [item_set], "boxTypes": [_box(4)], "includeImages": False}
    units = _items(_pack(request))
    assert sorted(u["quantity"] for u in units) == [1, 2]
    for unit in units:
        inside = [unit["centerOfMass"][a] - unit["origin"][a] for a in "xyz"]
        assert inside == pytest.approx([unit["dimensions"][a] / 2 for a in "xyz"]), unit


def test_a_centre_of_mass_outside_the_item_is_refused() -> None:
    item = {**_cube(1, 2), "centerOfMass": {"x": 1, "y": 3, "z": 1}}
    with pytest.raises(InvalidRequest) as caught:
        cartonize.pack({"itemSets": [item], "boxTypes": [_box(10)]})
    assert "itemSets[0].centerOfMass: must lie within the item" in (caught.value.details or "")


# --- properties --------------------------------------------------------------------------


@pytest.mark.parametrize("properties", [None, {"sku": "A-1", "hazmat": 1, "tags": ["x"]}])
def test_item_properties_come_back_on_every_unit(properties: Wire | None) -> None:
    item = _cube(1, 6, quantity=3)
    if properties is not None:
        item["properties"] = properties
    request = {"orderId": "props", "itemSets": [item], "boxTypes": [_box(10)]}
    response = _pack({**request, "includeImages": False})
    units = _items(response)
    assert len(units) == 3 and response["lenBoxes"] == 3  # one 6-cube per 10-cube box
    assert [u.get("properties") for u in units] == [properties] * 3
    left = _pack({**request, "includeImages": False, "boxesMax": 1})["leftovers"]
    assert [u.get("properties") for u in left] == [properties] * 2


# --- the validator judges these options --------------------------------------------------


def _corrupted(request: Wire, corrupt: Any) -> list[str]:
    response = _pack(request)
    corrupt(response)
    return validate(request, response)


def test_the_validator_catches_a_unit_ladder_not_taken_largest_first() -> None:
    request = _laddered(18, LADDER)

    def six_for_a_case(response: Wire) -> None:
        case = next(i for i in _items(response) if i["quantity"] == 12)
        case["quantity"] = 6

    found = _corrupted(request, six_for_a_case)
    assert any(p.startswith("dimension-sets: refId 1") for p in found), found


def test_the_validator_catches_a_wrong_centre_of_mass() -> None:
    item = {"refId": 1, "dimensions": {"x": 2, "y": 2, "z": 4}, "weight": 3}
    request = {
        "orderId": "com",
        "itemSets": [{**item, "centerOfMass": {"x": 0.5, "y": 1, "z": 1}}],
        "boxTypes": [{"refId": 9, "dimensions": {"x": 2, "y": 2, "z": 4}, "weightMax": 0}],
        "includeImages": False,
    }

    def centred(response: Wire) -> None:
        _items(response)[0]["centerOfMass"] = {"x": 1, "y": 1, "z": 2}

    def box_moved(response: Wire) -> None:
        response["boxes"][0]["box"]["centerOfMass"] = {"x": 1, "y": 1, "z": 2}

    assert any("is not the given" in p for p in _corrupted(request, centred))
    assert any(p.startswith("center-of-mass: box 0") for p in _corrupted(request, box_moved))


def test_the_validator_does_not_count_virtual_items() -> None:
    request = {
        "orderId": "virtual",
        "itemSets": [{"refId": 1, **_SLAB, "virtual": True}, {"refId": 2, **_SLAB}],
        "boxTypes": [_box(10)],
        "includeImages": False,
    }

    def counted(response: Wire) -> None:
        response["lenItems"] = 2

    assert any(p.startswith("totals: lenItems") for p in _corrupted(request, counted))


# --- random ------------------------------------------------------------------------------

RANDOM_BOX = {"refId": 1, "dimensions": {"x": 20, "y": 20, "z": 20}, "weightMax": 0}


def _random_items(request: Wire) -> list[tuple[int, float, float, float, float]]:
    """Each random item set as (refId, sides sorted, weight)."""
    response = _pack(request)
    found = {
        (u["refId"], *sorted(u["dimensions"].values()), u["weight"])
        for u in [*_items(response), *response.get("leftovers", [])]
    }
    return sorted(found)


@pytest.mark.parametrize(
    ("options", "same_as_default"),
    [
        ({}, True),
        ({"seed": True, "seedValue": 1}, True),  # the defaults spelled out
        ({"seedValue": 7}, False),
        ({"seedFromOrderId": True, "orderId": "SO-1"}, False),
        ({"seedFromOrderId": True, "orderId": "  "}, True),  # blank: seedValue
        ({"seedFromOrderId": False, "orderId": "SO-1"}, True),
    ],
)
def test_random_items_follow_the_seed(options: Wire, same_as_default: bool) -> None:
    base = {"random": True, "n": 6, "boxTypes": [RANDOM_BOX], "includeImages": False}
    default = _random_items({**base, "orderId": "R"})
    chosen = _random_items({"orderId": "R", **base, **options})
    assert (chosen == default) == same_as_default
    assert chosen == _random_items({"orderId": "R", **base, **options})  # reproducible


def test_unseeded_random_items_differ_between_packs() -> None:
    request = {"random": True, "n": 8, "seed": False, "boxTypes": [RANDOM_BOX]}
    runs = {tuple(_random_items({**request, "includeImages": False})) for _ in range(3)}
    assert len(runs) > 1  # 3 draws of 8 shapes from 10^3 x 10 alike: practically never


def test_random_replaces_item_sets_with_a_warning() -> None:
    request = {
        "orderId": "random",
        "random": True,
        "n": 3,
        "itemSets": [_cube(50, 1)],
        "boxTypes": [RANDOM_BOX],
        "includeImages": False,
    }
    response = _pack(request)
    assert response["lenItems"] == 9
    assert 50 not in {u["refId"] for u in _items(response)}
    assert any("replaced by random items" in w for w in response["warnings"])
    assert _pack({**request, "random": False})["lenItems"] == 1


# --- timeout -----------------------------------------------------------------------------


def _many(sets: int, quantity: int, timeout: float | None) -> Wire:
    """`sets` item sets of `quantity` units each, of sides 1..9, and four box types."""
    rng = random.Random(5)
    request: Wire = {
        "orderId": "many",
        "includeImages": False,
        "itemSets": [
            {
                "refId": i,
                "dimensions": {a: rng.randint(1, 9) for a in "xyz"},
                "weight": 1,
                "quantity": quantity,
            }
            for i in range(sets)
        ],
        "boxTypes": [
            {"refId": 100 + b, "dimensions": {"x": 10 + 5 * b, "y": 12 + 5 * b, "z": 14 + 5 * b}}
            | {"weightMax": 0}
            for b in range(4)
        ],
    }
    if timeout is not None:
        request["timeout"] = timeout
    return request


TIMEOUT_WARNING = "timeout reached: returning the best complete packing found so far"


# An explicit timeout also buys improvement for 80 % of it, so large ones make slow tests.
@pytest.mark.parametrize(("timeout", "warned"), [(None, False), (0.01, True)])
def test_a_timeout_returns_the_best_complete_packing_so_far(
    timeout: float | None, warned: bool
) -> None:
    started = time.perf_counter()
    response = _pack(_many(40, 25, timeout))  # 1,000 units: every ordering takes a while
    elapsed = time.perf_counter() - started
    assert response["lenLeftovers"] == 0 and response["lenItems"] == 1000
    assert (TIMEOUT_WARNING in response["warnings"]) == warned
    if warned:
        # The timeout plus its grace (1 s + 10 %) plus building the response, with room
        # for a loaded machine: not a benchmark, a bound.
        assert elapsed < 2.0


def test_no_complete_packing_within_the_grace_is_a_timeout_error() -> None:
    started = time.perf_counter()
    with pytest.raises(InvalidRequest) as caught:
        cartonize.pack(_many(100, 400, 0.01))  # 40,000 units: the first packing needs > 1 s
    assert time.perf_counter() - started < 3.0  # stopped at the grace, not run to the end
    assert (caught.value.details or "").startswith("timeout: no complete packing was found")


SERVICE_LIMIT_WARNING = (
    "the service's time limit of 0.01 s was reached: returning the best complete packing "
    "found so far"
)


def test_the_service_maximum_caps_the_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CARTONIZE_MAX_TIMEOUT", "0.01")
    response = _pack(_many(40, 25, 60))
    # The service's limit cut it short, not the timeout asked for.
    assert SERVICE_LIMIT_WARNING in response["warnings"]
    assert TIMEOUT_WARNING not in response["warnings"]
    assert "timeout 60 s is above the service maximum; using 0.01 s" in response["warnings"]
    within = _pack(_many(40, 25, 0.01))["warnings"]
    assert not any("above the service maximum" in w for w in within)
    assert TIMEOUT_WARNING in within


def test_a_request_without_timeout_is_told_of_the_service_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # It gets the service's limit as its timeout; the engine's words named a "timeout" the
    # caller never sent, and advised a larger one, which cannot help past the limit.
    monkeypatch.setenv("CARTONIZE_MAX_TIMEOUT", "0.01")
    assert SERVICE_LIMIT_WARNING in _pack(_many(40, 25, None))["warnings"]
    with pytest.raises(InvalidRequest) as caught:
        cartonize.pack(_many(100, 400, None))  # 40,000 units: the first packing needs > 1 s
    assert caught.value.details == (
        "no complete packing was found within the service's time limit of 0.01 s (and 1.0 s "
        "of grace); send fewer items or box types"
    )
