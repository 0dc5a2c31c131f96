"""Schema mapping and unit conversion: source records in, typed resource rows out.

A connection's schema map names, for each resource property, the source field it comes
from (dot notation for nested fields). `map_records` applies it to a batch of records,
casts every value to the property's type with an explicit polars dtype (never inferred),
converts units, and reports every value that could not be cast: such a row is rejected
and counted with the reason, never stored with a silent null.

Dot paths are resolved here, not with `pl.json_normalize`: a source key may itself contain
a dot (`{"dim.x": 4}`), and the longest key that exists wins at each level.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import polars as pl

from cartonize.jsontext import RepeatedKeys, repeat_reason, repeated_key_paths, show_value
from cartonize.models import MAX_AMOUNT, MAX_LENGTH, MAX_QUANTITY
from cartonize.sync.resources import PROPERTIES, Property, ResourceType, property_names

__all__ = [
    "DIM_CONVERSIONS",
    "IDENTITY",
    "WEIGHT_CONVERSIONS",
    "Conversions",
    "DimConv",
    "MappedBatch",
    "WeightConv",
    "iter_messages",
    "map_records",
    "record_label",
    "repeat_reason",
    "validate_schema_map",
]

DimConv = Literal["mm_to_in", "in_to_mm"]
WeightConv = Literal["gr_to_lb", "lb_to_gr"]
DIM_CONVERSIONS: tuple[str, ...] = get_args(DimConv)
WEIGHT_CONVERSIONS: tuple[str, ...] = get_args(WeightConv)

MM_PER_INCH = 25.4
GRAMS_PER_POUND = 453.59237
#: (multiply by, divide by) of each conversion.
_FACTORS: dict[str, tuple[float, float]] = {
    "mm_to_in": (1.0, MM_PER_INCH),
    "in_to_mm": (MM_PER_INCH, 1.0),
    "gr_to_lb": (1.0, GRAMS_PER_POUND),
    "lb_to_gr": (GRAMS_PER_POUND, 1.0),
}
#: Significant digits a converted value is rounded to: a binary result within a few units
#: in the last place of a decimal of this many digits is that decimal.
_CONVERTED_DIGITS = 15
#: Reasons kept per batch; the counts cover every rejected value.
MAX_MESSAGES = 20
PROPERTIES_KEY = "properties"


@dataclass(frozen=True)
class Conversions:
    """Unit conversions applied after mapping: lengths by `dim`, weights by `weight`."""

    dim: DimConv | None = None
    weight: WeightConv | None = None

    @classmethod
    def parse(cls, dim: str | None, weight: str | None) -> Conversions:
        """From the wire names (None or '' for none); ValueError names an unknown value."""
        dim = dim or None
        weight = weight or None
        if dim is not None and dim not in DIM_CONVERSIONS:
            raise ValueError(f"dim_conv must be one of {', '.join(DIM_CONVERSIONS)} (got {dim!r})")
        if weight is not None and weight not in WEIGHT_CONVERSIONS:
            raise ValueError(
                f"weight_conv must be one of {', '.join(WEIGHT_CONVERSIONS)} (got {weight!r})"
            )
        return cls(dim, weight)  # type: ignore[arg-type]

    def for_property(self, prop: Property) -> str | None:
        """The conversion that applies to `prop`, if any."""
        if prop.unit == "length":
            return self.dim
        if prop.unit == "weight":
            return self.weight
        return None


@dataclass
class MappedBatch:
    """Result of mapping a batch: the accepted rows and what was rejected, with reasons."""

    #: Accepted rows; one column per mapped property, typed, `properties` as JSON text.
    frame: pl.DataFrame
    #: Source position of each accepted row (for messages about later checks).
    positions: list[int]
    received: int
    rejected_rows: int = 0
    rejected_values: int = 0
    messages: list[str] = field(default_factory=list)

    @property
    def columns(self) -> list[str]:
        """The properties this batch sets (the schema map's targets)."""
        return list(self.frame.columns)

    def note(self, message: str) -> None:
        """Keep a reason, up to MAX_MESSAGES of them."""
        if len(self.messages) < MAX_MESSAGES:
            self.messages.append(message)


def validate_schema_map(schema_map: object, rtype: ResourceType) -> dict[str, str]:
    """Check a schema map for a resource type; ValueError says what is wrong and how to fix it.

    Keys are resource properties (`dimensions_x`) or `properties.<key>`; values are source
    field names, dot notation for nested fields. An empty map takes every property from the
    source field of the same name.
    """
    if not isinstance(schema_map, dict):
        raise ValueError("must be a JSON object of resource property -> source field name")
    known = property_names(rtype)
    cleaned: dict[str, str] = {}
    for key, value in schema_map.items():
        if not isinstance(key, str) or not _is_target(key, known):
            raise ValueError(
                f"key {key!r} is not a property of {rtype} resources; use one of "
                f"{', '.join(known)}, or properties.<key>"
            )
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"value of {key!r} must be a source field name (dots for nesting)")
        if any(not part for part in value.split(".")):
            raise ValueError(f"value of {key!r}: {value!r} has an empty part between dots")
        cleaned[key] = value
    return cleaned


def _is_target(key: str, known: list[str]) -> bool:
    if key in known:
        return True
    prefix, dot, rest = key.partition(".")
    return prefix == PROPERTIES_KEY and bool(dot) and bool(rest)


#: The properties that say which record a message is about (the SKU of an item, a
#: carton's reference, an order line's order and item), in the order named.
IDENTITY: dict[ResourceType, tuple[str, ...]] = {
    "items": ("refId",),
    "cartons": ("refId",),
    "orders": ("orderId", "refId"),
}


def record_label(position: int, identity: Mapping[str, Any]) -> str:
    """`record 3 (refId "MUG-1")`: a record's position in the payload or pulled list
    (from 0), and its identity properties (`IDENTITY`) that have a value, as text."""
    named = [
        f"{name} {show_value(value)}" for name, value in identity.items() if isinstance(value, str)
    ]
    return f"record {position}" + (f" ({', '.join(named)})" if named else "")


def _identity(
    record: Mapping[str, Any], targets: Mapping[str, str], rtype: ResourceType
) -> dict[str, Any]:
    """The identity properties of a source record as they would be stored (text), where
    they are mapped and cast; a value that does not cast is left out (its reason says it)."""
    found: dict[str, Any] = {}
    for name in IDENTITY[rtype]:
        path = targets.get(name)
        if path is None:
            continue
        value = _resolve(record, path, tuple(path.split(".")))
        if value is not None:
            text, reason = _cast_one("string", value)
            if reason is None:
                found[name] = text
    return found


_MISSING: Any = object()


def _resolve(record: Mapping[str, Any], path: str, parts: tuple[str, ...]) -> Any:
    """The value at a dot path: nested lookup first, then keys that contain dots."""
    value: Any = record
    for part in parts:
        if not isinstance(value, Mapping):
            value = None
            break
        value = value.get(part)
    if value is not None:
        return value
    literal = record.get(path, _MISSING)
    if literal is not _MISSING or len(parts) == 1:
        return None if literal is _MISSING else literal
    # Longest dotted key first: {"dim.x": 4} answers "dim.x", {"a": {"b.c": 1}} "a.b.c".
    for split in range(len(parts) - 1, 0, -1):
        head = record.get(".".join(parts[:split]), _MISSING)
        if isinstance(head, Mapping):
            found = _resolve(head, ".".join(parts[split:]), parts[split:])
            if found is not None:
                return found
    return None


def _values(records: Sequence[Mapping[str, Any]], path: str) -> list[Any]:
    parts = tuple(path.split("."))
    if len(parts) == 1:
        return [r.get(path) for r in records]
    if len(parts) == 2:
        # The common nested case, inlined (this is the hot loop of a large batch); the slow
        # path only runs where the plain lookup found nothing.
        outer, inner = parts
        values = [x.get(inner) if type(x := r.get(outer)) is dict else None for r in records]
    else:
        values = [_resolve(r, path, parts) for r in records]
        return values
    for position, value in enumerate(values):
        if value is None:
            values[position] = _resolve(records[position], path, parts)
    return values


_DTYPES: dict[str, pl.DataType] = {
    "string": pl.String(),
    "float": pl.Float64(),
    "integer": pl.Int64(),
}


def _cast_one(kind: str, value: Any) -> tuple[Any, str | None]:
    """Cast one value; (value, None) or (None, reason)."""
    if isinstance(value, bool | Mapping | list):
        return None, f"{show_value(value)} is not {_ARTICLE[kind]}"
    if kind == "string":
        if isinstance(value, float) and value.is_integer():
            return str(int(value)), None
        return str(value), None
    if kind == "float":
        try:
            number = float(value.strip() if isinstance(value, str) else value)
        except (TypeError, ValueError):
            return None, f"{show_value(value)} is not a number"
        if not math.isfinite(number):
            return None, f"{show_value(value)} is not a finite number"
        return number, None
    # integer
    try:
        number = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        return None, f"{show_value(value)} is not an integer"
    if not math.isfinite(number) or not number.is_integer():
        return None, f"{show_value(value)} is not an integer"
    return int(number), None


_ARTICLE = {"string": "a string", "float": "a number", "integer": "an integer"}

#: The range a packing request takes for a property (docs/decisions.md, "Bounds on sizes,
#: weights and money"): (lowest, lowest allowed, highest, wording). A row outside it was
#: stored, and every pack that used it was refused, naming a field the caller never sent.
_RANGES: dict[str, tuple[float, bool, float, str]] = {
    "length": (0.0, False, MAX_LENGTH, "a length above 0 and at most 1e9"),
    "weight": (0.0, True, MAX_AMOUNT, "a weight from 0 to 1e12"),
    "price": (0.0, True, MAX_AMOUNT, "a price from 0 to 1e12"),
    "quantity": (0.0, True, MAX_QUANTITY, "a quantity from 0 to 4294967295"),
}


def _out_of_range(prop: Property, series: pl.Series) -> list[tuple[int, str]]:
    """(position, reason) of each value of `series` (after unit conversion) outside the
    range a pack request takes for `prop`; nulls (absent values) pass."""
    bounds = _RANGES.get(prop.unit or prop.name)
    if bounds is None:
        return []
    low, low_allowed, high, wording = bounds
    above_low = series >= low if low_allowed else series > low
    inside = above_low & (series <= high)
    bad = (~inside).fill_null(False)
    if not bad.any():
        return []
    return [
        (position, f"{show_value(value)} is not {wording}")
        for position, value in zip(
            bad.arg_true().to_list(), series.filter(bad).to_list(), strict=True
        )
    ]


def _typed_series(
    name: str, kind: str, values: list[Any]
) -> tuple[pl.Series, list[tuple[int, str]]]:
    """The column as its dtype, and (position, reason) of each value that failed."""
    dtype = _DTYPES[kind]
    try:
        # Fast path: every value already has the right JSON type.
        if kind == "string" and all(v is None or type(v) in (str, int) for v in values):
            texts = [v if type(v) is not int else str(v) for v in values]
            return pl.Series(name, texts, dtype=dtype), []
        if kind != "string" and all(
            v is None or type(v) is int or (type(v) is float and kind == "float") for v in values
        ):
            series = pl.Series(name, values, dtype=dtype, strict=True)
            if kind == "float" and not series.drop_nulls().is_finite().all():
                raise ValueError("non-finite")
            return series, []
    except (TypeError, ValueError, OverflowError, pl.exceptions.PolarsError):
        pass
    cast: list[Any] = []
    failures: list[tuple[int, str]] = []
    for position, value in enumerate(values):
        if value is None:
            cast.append(None)
            continue
        result, reason = _cast_one(kind, value)
        if reason is not None:
            failures.append((position, reason))
        cast.append(result)
    try:
        return pl.Series(name, cast, dtype=dtype, strict=True), failures
    except OverflowError:
        # An integer beyond 64 bits: reject those values too.
        limit = 2**63
        for position, value in enumerate(cast):
            if isinstance(value, int) and not -limit <= value < limit:
                failures.append((position, f"{value} is out of range"))
                cast[position] = None
        return pl.Series(name, cast, dtype=dtype, strict=True), failures


def _convert(series: pl.Series, conversion: str) -> pl.Series:
    """`series` in the other unit, exact wherever the decimal result has at most 15
    significant digits (25.4 mm is 1 in, 3 in is 76.2 mm, 453.59237 g is 1 lb).

    Binary floating point alone is not: `3 * 25.4` is 76.19999999999999, and polars turns
    `x / 25.4` into `x * (1 / 25.4)`, so 25.4 mm became 0.9999999999999999 in. Dividing by
    a column divides truly (within half a unit in the last place), and rounding to 15
    significant digits then lands on the decimal (tests/sync/test_mapping.py checks it
    against decimal arithmetic on 20,000 values per conversion); ten times faster than
    converting each distinct value as a Decimal, which cost 0.5 s per 100,000 records of
    distinct sizes.
    """
    multiply, divide = _FACTORS[conversion]
    if divide == 1.0:
        out = series * multiply
    else:
        out = series / pl.repeat(divide, len(series), dtype=pl.Float64, eager=True)
    return out.round_sig_figs(_CONVERTED_DIGITS)


def _targets(schema_map: Mapping[str, str], rtype: ResourceType) -> dict[str, str]:
    if schema_map:
        return dict(schema_map)
    # An empty map reads each property from the source field of the same name.
    return {name: name for name in property_names(rtype)}


def map_records(
    records: Sequence[Any],
    schema_map: Mapping[str, str],
    rtype: ResourceType,
    conversions: Conversions = Conversions(),
) -> MappedBatch:
    """Apply a schema map and unit conversions to source records.

    Returns the typed rows of every record whose values all cast, and counts (with reasons)
    the records and values that did not. Null or missing source values are kept as nulls;
    whether a row is complete enough is the write's decision, not the mapping's.
    """
    targets = _targets(schema_map, rtype)
    props = {p.name: p for p in PROPERTIES[rtype]}
    received = len(records)
    bad_rows: dict[int, list[str]] = {}
    objects: Sequence[Mapping[str, Any]] = records
    if not all(type(r) is dict for r in records):
        # Rare: keep positions aligned by treating non-objects as empty, then reject them;
        # so are records repeating a key with different values (which one is meant?).
        for position, record in enumerate(records):
            if isinstance(record, RepeatedKeys):
                bad_rows.setdefault(position, []).extend(_repeat_reasons(record))
            elif not isinstance(record, Mapping):
                bad_rows.setdefault(position, []).append(f"{show_value(record)} is not an object")
        objects = [r if isinstance(r, Mapping) else {} for r in records]

    columns: list[pl.Series] = []
    rejected_values = 0
    for name, prop in props.items():
        if name == PROPERTIES_KEY or name not in targets:
            continue
        series, failures = _typed_series(name, prop.kind, _values(objects, targets[name]))
        for position, reason in failures:
            bad_rows.setdefault(position, []).append(f"{name} ({targets[name]}): {reason}")
        rejected_values += len(failures)
        conversion = conversions.for_property(prop)
        if conversion is not None:
            series = _convert(series, conversion)
        outside = _out_of_range(prop, series)
        for position, reason in outside:
            bad_rows.setdefault(position, []).append(f"{name} ({targets[name]}): {reason}")
        rejected_values += len(outside)
        columns.append(series)

    property_targets = {k: v for k, v in targets.items() if k.split(".")[0] == PROPERTIES_KEY}
    if property_targets:
        texts, failures = _properties_column(objects, property_targets)
        for position, reason in failures:
            bad_rows.setdefault(position, []).append(reason)
        rejected_values += len(failures)
        columns.append(pl.Series(PROPERTIES_KEY, texts, dtype=pl.String()))

    frame = pl.DataFrame(columns)
    positions = list(range(received))
    if bad_rows:
        keep = [position not in bad_rows for position in positions]
        frame = frame.filter(pl.Series(keep, dtype=pl.Boolean()))
        positions = [p for p in positions if p not in bad_rows]
    batch = MappedBatch(
        frame=frame,
        positions=positions,
        received=received,
        rejected_rows=len(bad_rows),
        rejected_values=rejected_values,
    )
    for position in sorted(bad_rows)[:MAX_MESSAGES]:
        label = record_label(position, _identity(objects[position], targets, rtype))
        batch.note(f"{label}: rejected: {'; '.join(bad_rows[position])}")
    return batch


def _properties_column(
    records: Sequence[Mapping[str, Any]], targets: Mapping[str, str]
) -> tuple[list[str | None], list[tuple[int, str]]]:
    """The `properties` JSON object of each record: the whole mapped object, then each key."""
    whole = targets.get(PROPERTIES_KEY)
    keyed = [(k.partition(".")[2], v) for k, v in targets.items() if k != PROPERTIES_KEY]
    if whole is None:
        fast = _scalar_properties(records, keyed)
        if fast is not None:
            return fast, []
    getters: list[tuple[str, str, Callable[[Mapping[str, Any]], Any]]] = [
        (key, path, _getter(path)) for key, path in keyed
    ]
    whole_getter = _getter(whole) if whole else None
    texts: list[str | None] = []
    failures: list[tuple[int, str]] = []
    for position, record in enumerate(records):
        merged: dict[str, Any] = {}
        reasons: list[str] = []
        if whole_getter is not None:
            base = whole_getter(record)
            if isinstance(base, Mapping):
                if not _finite(base):
                    reasons.append(f"properties ({whole}): holds a number that is not finite")
                merged.update(_without_nulls(base))
            elif base is not None:
                reasons.append(f"properties ({whole}): {show_value(base)} is not an object")
        for key, path, getter in getters:
            value = getter(record)
            if isinstance(value, Mapping) and value:
                value = _without_nulls(value) or None  # every member null: absent
            if value is not None:
                if not _finite(value):
                    what = (
                        f"{show_value(value)} is not a finite number"
                        if isinstance(value, float)
                        else "holds a number that is not finite"
                    )
                    reasons.append(f"properties.{key} ({path}): {what}")
                merged[key] = value
        # JSON has no NaN or infinity (1e400 reads as inf): such a record is rejected.
        failures.extend((position, reason) for reason in reasons)
        texts.append(_ENCODE(merged) if merged and not reasons else None)
    return texts, failures


def _without_nulls(value: Mapping[str, Any]) -> dict[str, Any]:
    """`value` less its null members at every depth of nested objects, and less the
    objects that held only such members: a null is an absent value, and stored it would
    delete the key from a matched row, since an upsert merges `properties` as a JSON
    merge patch (RFC 7396), which recurses into nested objects. An object the source
    gave empty stays; arrays are kept as given (a merge replaces them whole)."""
    root: dict[str, Any] = {}
    # (members still to read, the copy being built, its parent's copy, its key there):
    # a stack, not recursion, since source objects may nest deeply.
    stack: list[tuple[Iterator[tuple[str, Any]], dict[str, Any], dict[str, Any] | None, str]]
    stack = [(iter(value.items()), root, None, "")]
    while stack:
        members, copy, parent, key = stack[-1]
        for name, member in members:
            if member is None:
                continue
            if isinstance(member, Mapping) and member:
                stack.append((iter(member.items()), {}, copy, name))
                break
            copy[name] = dict(member) if isinstance(member, Mapping) else member
        else:
            stack.pop()
            if parent is not None and copy:
                parent[key] = copy
    return root


def _finite(value: Any) -> bool:
    """Whether `value` (a JSON value) holds no NaN or infinity at any depth."""
    pending = [value]  # a stack, not recursion: source objects may nest deeply
    while pending:
        current = pending.pop()
        if isinstance(current, float):
            if not math.isfinite(current):
                return False
        elif isinstance(current, Mapping):
            pending.extend(current.values())
        elif isinstance(current, list):
            pending.extend(current)
    return True


_SCALAR_DTYPES: dict[type, pl.DataType] = {
    str: pl.String(),
    int: pl.Int64(),
    float: pl.Float64(),
    bool: pl.Boolean(),
}


def _scalar_properties(
    records: Sequence[Mapping[str, Any]], keyed: list[tuple[str, str]]
) -> list[str | None] | None:
    """JSON objects built by polars when every mapped key holds one scalar type (or null);
    None when some key does not, and the caller builds them one by one."""
    fields: list[pl.Series] = []
    for position, (_, path) in enumerate(keyed):
        values = _values(records, path)
        kinds = {type(v) for v in values if v is not None}
        if len(kinds) > 1 or not kinds <= set(_SCALAR_DTYPES):
            return None
        dtype = _SCALAR_DTYPES[kinds.pop()] if kinds else pl.String()
        try:
            # Positional column names: the keys themselves go into each one-field struct.
            fields.append(pl.Series(f"_{position}", values, dtype=dtype, strict=True))
        except (TypeError, ValueError, OverflowError, pl.exceptions.PolarsError):
            return None
        if dtype == pl.Float64() and not fields[-1].drop_nulls().is_finite().all():
            return None
    # One `"key":value` member per set value, encoded by polars (`{"key":value}` less its
    # braces), joined: a missing source value leaves its key out, and no text is searched
    # for, so keys with quotes, escapes or non-ASCII letters cannot be mistaken.
    members = [
        pl.when(pl.col(series.name).is_not_null()).then(
            pl.struct(pl.col(series.name).alias(key)).struct.json_encode().str.slice(1).str.head(-1)
        )
        for series, (key, _) in zip(fields, keyed, strict=True)
    ]
    joined = pl.DataFrame(fields).select(pl.concat_str(members, separator=",", ignore_nulls=True))
    return [f"{{{text}}}" if text else None for text in joined.to_series().to_list()]


_ENCODE = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode


def _getter(path: str) -> Callable[[Mapping[str, Any]], Any]:
    parts = tuple(path.split("."))
    if len(parts) == 1:
        return lambda record: record.get(path)
    if len(parts) == 2:
        outer, inner = parts

        def nested(record: Mapping[str, Any]) -> Any:
            x = record.get(outer)
            found = x.get(inner) if type(x) is dict else None
            return found if found is not None else _resolve(record, path, parts)

        return nested
    return lambda record: _resolve(record, path, parts)


def _repeat_reasons(record: RepeatedKeys) -> list[str]:
    return [repeat_reason(path, values) for path, values in repeated_key_paths(record)]


def iter_messages(batch: MappedBatch) -> Iterator[str]:
    """The batch's reasons, then a line on how many more were not kept."""
    yield from batch.messages
    hidden = batch.rejected_rows - len(batch.messages)
    if hidden > 0:
        yield f"... and {hidden} more rejected records"
