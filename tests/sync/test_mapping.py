"""Schema mapping and unit conversion: dot paths, casts, rejects with reasons, factors."""

from __future__ import annotations

import json
import random
from decimal import Decimal
from typing import Any

import polars as pl
import pytest
from cartonize.sync.mapping import (
    Conversions,
    map_records,
    validate_schema_map,
)

ITEM_MAP = {
    "refId": "sku",
    "dimensions_x": "size.h",
    "dimensions_y": "size.w",
    "dimensions_z": "size.l",
    "weight": "mass",
}


def record(sku: Any = 1, h: Any = 1.0, w: Any = 2, l: Any = "3.5", mass: Any = 4) -> Any:  # noqa: E741
    return {"sku": sku, "size": {"h": h, "w": w, "l": l}, "mass": mass}


def test_nested_fields_are_mapped_and_cast_to_the_property_types() -> None:
    batch = map_records([record(), record(sku="B-2")], ITEM_MAP, "items")
    assert batch.rejected_rows == batch.rejected_values == 0
    assert batch.frame.schema == {
        "refId": pl.String,
        "dimensions_x": pl.Float64,
        "dimensions_y": pl.Float64,
        "dimensions_z": pl.Float64,
        "weight": pl.Float64,
    }
    assert batch.frame.to_dicts()[1] == {
        "refId": "B-2",
        "dimensions_x": 1.0,
        "dimensions_y": 2.0,
        "dimensions_z": 3.5,
        "weight": 4.0,
    }
    assert batch.frame["refId"].to_list() == ["1", "B-2"]


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (record(mass="heavy"), 'weight (mass): "heavy" is not a number'),
        (record(h=True), "dimensions_x (size.h): true is not a number"),
        (record(w={"v": 1}), "dimensions_y (size.w): an object is not a number"),
        (record(sku=[1]), "refId (sku): an array is not a string"),
        (record(l="NaN"), 'dimensions_z (size.l): "NaN" is not a finite number'),
        ("not an object", '"not an object" is not an object'),
    ],
)
def test_values_that_do_not_cast_reject_their_record_with_the_reason(bad: Any, reason: str) -> None:
    batch = map_records([record(sku=0), bad, record(sku=2)], ITEM_MAP, "items")
    assert batch.received == 3
    assert batch.rejected_rows == 1
    # A record that is not an object has no values to count.
    assert batch.rejected_values == (0 if isinstance(bad, str) else 1)
    assert batch.frame["refId"].to_list() == ["0", "2"]
    assert batch.positions == [0, 2]
    # The record's SKU is named where it can be read: not when it is itself the fault.
    unnamed = isinstance(bad, str) or reason.startswith("refId")
    label = "record 1" if unnamed else 'record 1 (refId "1")'
    assert batch.messages == [f"{label}: rejected: {reason}"]


def test_rejections_name_the_record_by_its_mapped_identity_and_position() -> None:
    # They named the position alone ("record 3"), which a feed of thousands of SKUs
    # cannot be searched by. The identity is the stored text of refId (and orderId for
    # order lines), read through the schema map; left out where it is missing or is
    # itself the value that does not cast.
    smap = {**ITEM_MAP, "refId": "ids.sku"}
    records = [
        {"ids": {"sku": "MUG-1"}, "size": {"h": 1, "w": 2, "l": 3}, "mass": "heavy"},
        {"ids": {"sku": 7}, "size": {"h": 0, "w": 2, "l": 3}, "mass": 1},
        {"ids": {}, "size": {"h": 1, "w": 2, "l": 3}, "mass": "heavy"},
        {"ids": {"sku": True}, "size": {"h": 1, "w": 2, "l": 3}, "mass": 1},
    ]
    assert map_records(records, smap, "items").messages == [
        'record 0 (refId "MUG-1"): rejected: weight (mass): "heavy" is not a number',
        'record 1 (refId "7"): rejected: dimensions_x (size.h): 0.0 is not a length above 0 '
        "and at most 1e9",
        'record 2: rejected: weight (mass): "heavy" is not a number',
        "record 3: rejected: refId (ids.sku): true is not a string",
    ]
    lines = map_records(
        [{"o": "SO-1", "r": "X-9", "q": "two"}, {"o": "SO-2", "q": -1}],
        {"orderId": "o", "refId": "r", "quantity": "q"},
        "orders",
    )
    assert lines.messages == [
        'record 0 (orderId "SO-1", refId "X-9"): rejected: quantity (q): "two" is not an integer',
        'record 1 (orderId "SO-2"): rejected: quantity (q): -1 is not a quantity from 0 to '
        "4294967295",
    ]


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (record(h=0), "dimensions_x (size.h): 0.0 is not a length above 0 and at most 1e9"),
        (record(w=-2), "dimensions_y (size.w): -2.0 is not a length above 0 and at most 1e9"),
        (record(l="2e9"), "dimensions_z (size.l): 2000000000.0 is not a length above 0"),
        (record(mass=-0.5), "weight (mass): -0.5 is not a weight from 0 to 1e12"),
        (record(mass=1e13), "weight (mass): 10000000000000.0 is not a weight from 0 to 1e12"),
    ],
)
def test_values_no_pack_takes_reject_their_record(bad: Any, reason: str) -> None:
    # They were stored, and every pack using the row was refused, naming itemSets fields
    # the caller never sent.
    batch = map_records([record(sku=0), bad, record(sku=2, mass=0)], ITEM_MAP, "items")
    assert batch.frame["refId"].to_list() == ["0", "2"]
    assert (batch.rejected_rows, batch.rejected_values) == (1, 1)
    assert len(batch.messages) == 1 and batch.messages[0].startswith(
        f'record 1 (refId "1"): rejected: {reason}'
    )


def test_ranges_apply_after_unit_conversion_and_to_every_list() -> None:
    converted = map_records(
        [record(h=4e7), record(h=3.9e7)], ITEM_MAP, "items", Conversions.parse("in_to_mm", None)
    )
    assert converted.frame["dimensions_x"].to_list() == [pytest.approx(3.9e7 * 25.4)]
    assert converted.messages == [
        'record 0 (refId "1"): rejected: dimensions_x (size.h): 1016000000.0 is not a length '
        "above 0 and "
        "at most 1e9"
    ]
    orders = map_records(
        [{"o": 1, "r": 2, "q": 2**32}, {"o": 1, "r": 2, "q": 0}],
        {"orderId": "o", "refId": "r", "quantity": "q"},
        "orders",
    )
    assert orders.frame["quantity"].to_list() == [0]
    assert orders.messages == [
        'record 0 (orderId "1", refId "2"): rejected: quantity (q): 4294967296 is not a '
        "quantity from 0 to 4294967295"
    ]
    cartons = map_records(
        [{"r": 1, "x": 1, "y": 1, "z": 1, "m": 0, "p": -5}],
        {"refId": "r", "dimensions_x": "x", "dimensions_y": "y", "dimensions_z": "z"}
        | {"weightMax": "m", "price": "p"},
        "cartons",
    )
    assert cartons.messages == [
        'record 0 (refId "1"): rejected: price (p): -5 is not a price from 0 to 1e12'
    ]


def test_missing_values_stay_null_and_are_not_rejections() -> None:
    batch = map_records([{"sku": 1}], ITEM_MAP, "items")
    assert batch.rejected_rows == 0
    assert batch.frame.row(0) == ("1", None, None, None, None)


def test_integer_properties_refuse_fractions() -> None:
    orders = {"orderId": "o", "refId": "r", "quantity": "q"}
    batch = map_records(
        [{"o": 1, "r": 2, "q": "3"}, {"o": 1, "r": 2, "q": 2.5}, {"o": 1, "r": 2, "q": 4.0}],
        orders,
        "orders",
    )
    assert batch.frame["quantity"].to_list() == [3, 4]
    assert batch.messages == [
        'record 1 (orderId "1", refId "2"): rejected: quantity (q): 2.5 is not an integer'
    ]


def test_keys_containing_dots_are_found() -> None:
    smap = {"refId": "id", "dimensions_x": "dim.x", "dimensions_y": "a.b.c", "dimensions_z": "z"}
    records = [{"id": 1, "dim.x": 4, "a": {"b.c": 5}, "z": 6}]
    assert map_records(records, smap, "items").frame.row(0) == ("1", 4.0, 5.0, 6.0)


def test_properties_are_collected_from_dotted_keys_and_whole_objects() -> None:
    smap = {"refId": "id", "properties.color": "look.colour", "properties.n": "n"}
    batch = map_records([{"id": 1, "look": {"colour": "red"}, "n": 2}, {"id": 2}], smap, "items")
    assert batch.frame["properties"].to_list() == ['{"color":"red","n":2}', None]
    whole = map_records(
        [{"id": 1, "meta": {"a": [1, 2]}, "c": "x"}],
        {"refId": "id", "properties": "meta", "properties.c": "c"},
        "items",
    )
    assert whole.frame["properties"].to_list() == ['{"a":[1,2],"c":"x"}']


@pytest.mark.parametrize(
    ("look", "meta", "reason"),
    [
        (
            {"colour": float("nan")},
            None,
            "properties.color (look.colour): NaN is not a finite number",
        ),
        ({"colour": float("inf")}, None, "properties.color (look.colour): Infinity is not"),
        ({"colour": [1, float("-inf")]}, None, "properties.color (look.colour): holds a number"),
        ({}, {"shade": float("inf")}, "properties (meta): holds a number that is not finite"),
        ({}, {"a": {"b": [float("nan")]}}, "properties (meta): holds a number that is not finite"),
    ],
)
def test_non_finite_numbers_in_properties_reject_only_their_record(
    look: Any, meta: Any, reason: str
) -> None:
    # JSON has no NaN or infinity (1e400 reads as inf): encoding raised, a 500 on writes
    # and a crashed step on pulls, and the valid records were lost with it.
    smap = {"refId": "id", "properties": "meta", "properties.color": "look.colour"}
    records = [{"id": 1, "look": look, "meta": meta}, {"id": 2, "look": {"colour": "red"}}]
    batch = map_records(records, smap, "items")
    assert batch.frame.rows() == [("2", '{"color":"red"}')]
    assert batch.rejected_rows == 1
    (message,) = batch.messages
    assert message.startswith('record 0 (refId "1"): rejected: ' + reason)


#: Keys polars and Python's json escape differently, or that need escaping at all.
AWKWARD_KEYS = ["größe", "emoji😀", 'quo"te', "back\\slash", "ctl\x01\n\t", "\u2028sep", "plain"]


@pytest.mark.parametrize("kind", ["text", "number", "mixed"])
def test_properties_leave_out_keys_whose_value_is_missing_whatever_their_name(kind: str) -> None:
    # `"größe":null` was built with json.dumps (which writes \u00f6) and searched for in
    # polars' output (raw UTF-8): it stayed, and an upsert's merge then deleted the key.
    smap = {"refId": "id", **{f"properties.{key}": f"f{i}" for i, key in enumerate(AWKWARD_KEYS)}}
    value = {"text": "v", "number": 2.5, "mixed": [1]}[kind]  # "mixed": the slow path
    full = {"id": 1, **{f"f{i}": value for i in range(len(AWKWARD_KEYS))}}
    partial = {"id": 2, "f6": value}  # only "plain"
    batch = map_records([full, partial, {"id": 3}], smap, "items")
    texts = batch.frame["properties"].to_list()
    assert json.loads(texts[0]) == dict.fromkeys(AWKWARD_KEYS, value)
    assert json.loads(texts[1]) == {"plain": value}
    assert texts[2] is None


def test_nulls_in_a_whole_properties_object_are_left_out() -> None:
    smap = {"refId": "id", "properties": "meta"}
    batch = map_records([{"id": 1, "meta": {"größe": None, "a": 1}}], smap, "items")
    assert batch.frame["properties"].to_list() == ['{"a":1}']


def test_nulls_nested_in_properties_objects_are_left_out_at_every_depth() -> None:
    # An upsert merges `properties` as a JSON merge patch, which is recursive: a nested
    # null deleted the stored key. Objects left empty by it go too; arrays and objects
    # the source gave empty are kept as they are.
    smap = {"refId": "id", "properties": "meta", "properties.k": "k"}
    meta = {"a": {"b": None, "c": {"d": None}}, "e": {"f": None, "g": 1}, "h": [None], "i": {}}
    batch = map_records(
        [{"id": 1, "meta": meta, "k": {"x": None}}, {"id": 2, "meta": {"a": {"b": None}}}],
        smap,
        "items",
    )
    texts = batch.frame["properties"].to_list()
    assert json.loads(texts[0]) == {"e": {"g": 1}, "h": [None], "i": {}}
    assert texts[1] is None


def test_an_empty_schema_map_reads_properties_by_their_own_names() -> None:
    row = {"refId": 7, "dimensions_x": 1, "dimensions_y": 2, "dimensions_z": 3, "other": 9}
    batch = map_records([row], {}, "items")
    assert batch.frame["properties"].to_list() == [None]
    assert batch.frame.drop("properties").to_dicts() == [
        {
            "refId": "7",
            "dimensions_x": 1.0,
            "dimensions_y": 2.0,
            "dimensions_z": 3.0,
            "weight": None,
            "name": None,
            "color": None,
            "sequence": None,
        }
    ]


@pytest.mark.parametrize(
    ("dim", "weight", "x", "w"),
    [
        ("mm_to_in", "gr_to_lb", 1.0, 1.0),
        ("in_to_mm", "lb_to_gr", 25.4 * 25.4, 453.59237 * 453.59237),
        (None, None, 25.4, 453.59237),
    ],
)
def test_unit_conversions_use_the_exact_factors(dim: Any, weight: Any, x: float, w: float) -> None:
    batch = map_records(
        [record(h=25.4, mass=453.59237)], ITEM_MAP, "items", Conversions.parse(dim, weight)
    )
    assert batch.frame["dimensions_x"][0] == pytest.approx(x, rel=1e-15)
    assert batch.frame["weight"][0] == pytest.approx(w, rel=1e-15)


#: (conversion, value sent, value stored): every one exact in decimal arithmetic, so the
#: stored number must be exactly the decimal's nearest float.
EXACT_CONVERSIONS = [
    ("mm_to_in", 25.4, 1.0),
    ("mm_to_in", 50.8, 2.0),
    ("mm_to_in", 76.2, 3.0),
    ("mm_to_in", 2.54, 0.1),
    ("mm_to_in", 254, 10.0),
    ("mm_to_in", 12.7, 0.5),
    ("mm_to_in", 1270, 50.0),
    ("mm_to_in", 0.254, 0.01),
    ("in_to_mm", 1, 25.4),
    ("in_to_mm", 3, 76.2),
    ("in_to_mm", 0.1, 2.54),
    ("in_to_mm", 0.3, 7.62),
    ("in_to_mm", 7, 177.8),
    ("in_to_mm", 11.5, 292.1),
    ("gr_to_lb", 453.59237, 1.0),
    ("gr_to_lb", 907.18474, 2.0),
    ("gr_to_lb", 45.359237, 0.1),
    ("gr_to_lb", 1360.77711, 3.0),
    ("gr_to_lb", 4535.9237, 10.0),
    ("lb_to_gr", 1, 453.59237),
    ("lb_to_gr", 3, 1360.77711),
    ("lb_to_gr", 0.1, 45.359237),
    ("lb_to_gr", 0.7, 317.514659),
    ("lb_to_gr", 2.5, 1133.980925),
]


@pytest.mark.parametrize(("conversion", "sent", "stored"), EXACT_CONVERSIONS)
def test_unit_conversions_are_exact_where_the_decimal_result_is(
    conversion: str, sent: float, stored: float
) -> None:
    dim, weight = (conversion, None) if conversion.endswith(("in", "mm")) else (None, conversion)
    batch = map_records(
        [record(h=sent, mass=sent)], ITEM_MAP, "items", Conversions.parse(dim, weight)
    )
    column = "dimensions_x" if dim else "weight"
    assert batch.frame[column][0] == stored  # exactly, not approximately


@pytest.mark.parametrize("conversion", ["mm_to_in", "in_to_mm", "gr_to_lb", "lb_to_gr"])
def test_every_conversion_with_a_short_decimal_result_stores_that_decimal(
    conversion: str,
) -> None:
    # 20,000 seeded values each: lengths and weights of up to four decimals, and, so that
    # the divisions have terminating results too, multiples of 0.254 mm and 0.45359237 g.
    # Whenever the exact decimal result has at most 15 significant digits, the stored
    # float is that decimal's (what float(Decimal) gives), not a neighbour of it.
    rng = random.Random(conversion)
    sent = [round(rng.uniform(0, 5000), rng.randint(0, 4)) for _ in range(10_000)]
    unit = {"mm_to_in": "0.254", "gr_to_lb": "0.45359237"}.get(conversion)
    if unit is not None:
        sent += [float(Decimal(unit) * rng.randint(1, 200_000)) for _ in range(10_000)]
    factor = {"mm_to_in": ("1", "25.4"), "in_to_mm": ("25.4", "1")}.get(
        conversion, ("1", "453.59237") if conversion == "gr_to_lb" else ("453.59237", "1")
    )
    multiply, divide = Decimal(factor[0]), Decimal(factor[1])
    dim, weight = (conversion, None) if conversion.endswith(("in", "mm")) else (None, conversion)
    column = "dimensions_x" if dim else "weight"
    records = [record(sku=i, h=v or 1.0, mass=v) for i, v in enumerate(sent)]
    stored = map_records(records, ITEM_MAP, "items", Conversions.parse(dim, weight)).frame
    checked = 0
    for value, got in zip(sent, stored[column].to_list(), strict=True):
        exact = Decimal(repr(value or 1.0 if dim else value)) * multiply / divide
        if exact and len(exact.normalize().as_tuple().digits) <= 15:
            checked += 1
            assert got == float(exact), (value, got, exact)
    assert checked > 5_000


def test_carton_lengths_and_weights_convert_too() -> None:
    smap = {
        "refId": "r",
        "dimensions_x": "x",
        "outer_dimensions_x": "ox",
        "weightMax": "m",
        "weightTare": "t",
        "price": "p",
    }
    batch = map_records(
        [{"r": 1, "x": 254, "ox": 508, "m": 4535.9237, "t": 0, "p": 100}],
        smap,
        "cartons",
        Conversions("mm_to_in", "gr_to_lb"),
    )
    row = batch.frame.row(0, named=True)
    assert row["dimensions_x"] == pytest.approx(10.0)
    assert row["outer_dimensions_x"] == pytest.approx(20.0)
    assert row["weightMax"] == pytest.approx(10.0)
    assert row["price"] == 100  # not a unit


@pytest.mark.parametrize("value", ["cm_to_in", "MM_TO_IN"])
def test_unknown_conversions_are_refused(value: str) -> None:
    with pytest.raises(ValueError, match="dim_conv must be one of mm_to_in, in_to_mm"):
        Conversions.parse(value, None)


@pytest.mark.parametrize(
    ("schema_map", "message"),
    [
        ({"width": "w"}, "key 'width' is not a property of items resources"),
        ({"refId": 3}, "value of 'refId' must be a source field name"),
        ({"refId": "a..b"}, "has an empty part between dots"),
        ({"properties.": "x"}, "key 'properties.' is not a property"),
        ([], "must be a JSON object"),
    ],
)
def test_schema_maps_are_validated(schema_map: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace(".", r"\.")):
        validate_schema_map(schema_map, "items")


def test_valid_schema_maps_pass_for_each_type() -> None:
    assert validate_schema_map({"orderId": "o", "properties.x": "a.b"}, "orders")
    assert validate_schema_map({"weightMax": "m", "outer_dimensions_z": "o.z"}, "cartons")
    with pytest.raises(ValueError):
        validate_schema_map({"weightMax": "m"}, "items")
