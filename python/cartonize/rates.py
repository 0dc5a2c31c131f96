"""Rate tables: check a box type's `rateTable`, resolve built-in carrier tables
(`data/rate_tables.json`, described in docs/rates.md) and lower it to the
engine's rating (breakpoints or a linear model, a dimFactor and the volume
the dimensional weight is based on)."""

from __future__ import annotations

import functools
import itertools
import json
import math
from collections.abc import Sequence
from importlib import resources
from typing import Any

from cartonize.errors import InvalidRequest
from cartonize.models import BoxProperties, OuterPoint, RateTable

__all__ = [
    "RateTableSources",
    "box_cost",
    "builtin_rate_tables",
    "lower_rating",
    "outer_dimensions",
]

#: Where the parts of a box's rate table were given, nearest first: (the request path of
#: a `rateTable`, the table given there, None if none). A box type's table merges field
#: by field with its defaults' (models.py), so each field has its own source.
RateTableSources = Sequence[tuple[str, RateTable | None]]


@functools.cache
def builtin_rate_tables() -> dict[str, Any]:
    """The built-in carrier tables: carrier -> services -> {dimFactor, weights, zones}."""
    text = resources.files("cartonize").joinpath("data/rate_tables.json").read_text("utf-8")
    carriers: dict[str, Any] = json.loads(text)["carriers"]
    return carriers


def outer_dimensions(box: BoxProperties) -> OuterPoint | None:
    """The box's outer dimensions: as given, or inner plus `dimensionChange`; None if unknown."""
    outer = box.outer
    if outer is None:
        return None
    if outer.dimensions is not None:
        return outer.dimensions
    if outer.dimension_change is not None and box.dimensions is not None:
        inner, change = box.dimensions, outer.dimension_change
        return OuterPoint.of(inner.x + change.x, inner.y + change.y, inner.z + change.z)
    return None


#: A table's lowered rate and its carrier's default dimFactor, by the table's rating
#: fields. A catalogue's box types often share one table, and a caller sends the same
#: catalogue with every order; checking a table took about 4 µs. Only tables that passed
#: the checks are kept (an invalid one raises every time, naming its own field), the
#: lists are copies, and nothing changes a lowered rate after it is made.
_LOWERED: dict[tuple[Any, ...], tuple[dict[str, Any] | None, float | None]] = {}

#: Distinct tables kept at most; the cache starts over when it is full.
_LOWERED_MAX = 1024


def lower_rating(
    box: BoxProperties,
    path: str,
    warnings: list[str],
    resolved: dict[int, tuple[dict[str, Any] | None, float | None]] | None = None,
    sources: RateTableSources | None = None,
) -> dict[str, Any] | None:
    """The engine's `rating` for `box` (at request path `path`), or None without a rate table.

    `resolved` remembers tables already checked (by identity) across the box types of
    one request; tables equal in every rating field are lowered once per process
    (`_LOWERED`). Raises `InvalidRequest` naming the field when the table is ambiguous,
    incomplete or names an unknown carrier, service or zone: where `sources` says it was
    given (by default in the box's own `rateTable`)."""
    table = box.rate_table
    if table is None:
        return None
    if resolved is not None and id(table) in resolved:
        rate, default_dim_factor = resolved[id(table)]
    else:
        where = _Where(sources or [(f"{path}.rateTable", table)])
        rate, default_dim_factor = _lowered(table, where)
        if resolved is not None:
            resolved[id(table)] = (rate, default_dim_factor)
    if table.rates is not None and any(r < 0 for r in table.rates):
        where = _Where(sources or [(f"{path}.rateTable", table)])
        warning = (
            f"{where('rates')}: rates below 0 are taken as 0 (a box's price in the response "
            f"is never below 0); got {min(table.rates):g}"
        )
        if warning not in warnings:
            warnings.append(warning)
    dim_factor = table.dim_factor if table.dim_factor is not None else default_dim_factor
    return {
        "volume": _rating_volume(box, path, warnings),
        # 0 or negative (the documented -1) disables dimensional weight.
        "dimFactor": dim_factor if dim_factor is not None and dim_factor > 0 else None,
        "rate": rate,
    }


class _Where:
    """The request path of a field of a merged rate table: the nearest source giving it."""

    def __init__(self, sources: RateTableSources) -> None:
        self._sources = [(path, table) for path, table in sources if table is not None]
        self._fallback = sources[0][0]

    def __call__(self, field: str | None = None) -> str:
        """`field`'s path (`boxTypeDefaults.rateTable.rates`); the table's without one.
        A field no source gives is named in the nearest table that is given."""
        given = [p for p, t in self._sources if field is None or getattr(t, field) is not None]
        path = (given or [p for p, _ in self._sources] or [self._fallback])[0]
        return path if field is None else f"{path}.{field}"


def _lowered(table: RateTable, where: _Where) -> tuple[dict[str, Any] | None, float | None]:
    """`_rate` of `table`, once per distinct table (`_LOWERED`)."""
    key = (
        table.carrier,
        table.service,
        table.zone,
        None if table.weights is None else tuple(table.weights),
        None if table.rates is None else tuple(table.rates),
        table.base_price,
        table.price_increase_rate,
    )
    known = _LOWERED.get(key)
    if known is not None:
        return known
    rate, default_dim_factor = _rate(table, where)
    if rate is not None and rate["method"] == "breakpoints":
        rate = {**rate, "weights": list(rate["weights"]), "rates": list(rate["rates"])}
    if len(_LOWERED) >= _LOWERED_MAX:
        _LOWERED.clear()
    _LOWERED[key] = (rate, default_dim_factor)
    return rate, default_dim_factor


def _rating_volume(box: BoxProperties, path: str, warnings: list[str]) -> float:
    inner = box.dimensions
    volume = inner.x * inner.y * inner.z if inner is not None else 0.0
    if not box.outer_based_cost:
        return volume
    outer = outer_dimensions(box)
    if outer is None:
        warnings.append(
            f"{path}.outerBasedCost: no outer dimensions or dimensionChange given; "
            "rating on the inner dimensions"
        )
        return volume
    return outer.x * outer.y * outer.z


def _rate(table: RateTable, where: _Where) -> tuple[dict[str, Any] | None, float | None]:
    """The engine's rate and the carrier table's default dimFactor (None without one)."""
    methods = [
        name
        for name, given in (
            ("carrier, service and zone", _given(table, "carrier", "service", "zone")),
            ("weights and rates", _given(table, "weights", "rates")),
            ("basePrice and priceIncreaseRate", _given(table, "base_price", "price_increase_rate")),
        )
        if given
    ]
    if len(methods) > 1:
        raise InvalidRequest(
            "invalid rate table",
            f"{where()}: give one rating method, not {' and also '.join(methods)}",
        )
    if _given(table, "carrier", "service", "zone"):
        return _carrier_rate(table, where)
    if _given(table, "weights", "rates"):
        return _breakpoint_rate(table.weights, table.rates, where), None
    if _given(table, "base_price", "price_increase_rate"):
        return {
            "method": "linear",
            "basePrice": table.base_price or 0.0,
            "priceIncreaseRate": table.price_increase_rate or 0.0,
        }, None
    # Only a dimFactor: dimensional weight is reported, the fixed price is the cost.
    return None, None


def _given(table: RateTable, *names: str) -> bool:
    return any(getattr(table, name) is not None for name in names)


def _breakpoint_rate(
    weights: list[float] | None, rates: list[float] | None, where: _Where
) -> dict[str, Any]:
    if not weights or not rates:
        missing = "weights" if not weights else "rates"
        raise InvalidRequest(
            "invalid rate table",
            f"{where(missing)}: give weights and rates as two non-empty lists of equal length",
        )
    if any(w < 0 for w in weights) or any(b <= a for a, b in itertools.pairwise(weights)):
        raise InvalidRequest(
            "invalid rate table",
            f"{where('weights')}: breakpoints must be >= 0 and strictly ascending (got {weights})",
        )
    # A rate below 0 is not refused (the public schema bounds no rate) but taken as 0: the
    # schema's response gives every box a price >= 0 (docs/rates.md; lower_rating warns).
    return {"method": "breakpoints", "weights": weights, "rates": [max(0.0, r) for r in rates]}


def _carrier_rate(table: RateTable, where: _Where) -> tuple[dict[str, Any], float | None]:
    carriers = builtin_rate_tables()
    carrier = _lookup(carriers, table.carrier, where("carrier"), "carrier")
    services: dict[str, Any] = carrier["services"]
    service = _lookup(services, table.service, where("service"), "service")
    zones: dict[str, Any] = service["zones"]
    zone_key = table.zone.strip() if table.zone is not None else None
    rates = _lookup(zones, zone_key, where("zone"), "zone")
    dim_factor = service.get("dimFactor")
    return (
        _breakpoint_rate(service["weights"], rates, where),
        float(dim_factor) if dim_factor is not None else None,
    )


def _lookup(table: dict[str, Any], name: str | None, field: str, what: str) -> Any:
    """`table[name]` (case-insensitive), or a 422 naming `field` and the known names."""
    known = sorted(table)
    if name is None:
        raise InvalidRequest(
            "invalid rate table",
            f"{field}: a built-in rate table needs carrier, service and zone; "
            f"known {what} names: {', '.join(known)}",
        )
    for key, value in table.items():
        if key.lower() == name.strip().lower():
            return value
    raise InvalidRequest(
        "invalid rate table",
        f"{field}: unknown {what} {name!r}; known: {', '.join(known)}",
    )


def whole_units(cost: float) -> int:
    """`cost` in whole units of currency, halves rounded up as money is (Python's round
    takes halves to the even neighbour: a rate of 2.5 cents came out 2, 0.5 came out 0)."""
    return math.floor(cost + 0.5)


def box_cost(
    price: float | None, volume: float, rating: dict[str, Any] | None, gross: float
) -> tuple[float, float | None, bool]:
    """A box's cost holding `gross` weight, as the engine computes it (cost.rs): price plus
    the rate at the larger of gross and dimensional weight, or the price alone, or the
    volume; with the dimensional weight (None without a dimFactor) and whether it won."""
    dim_factor = rating.get("dimFactor") if rating else None
    dimensional = rating["volume"] / dim_factor if rating and dim_factor else None
    used = dimensional is not None and dimensional > gross
    rate = rating.get("rate") if rating else None
    if rate is None:
        return (price if price is not None else volume), dimensional, used
    weight = dimensional if used and dimensional is not None else gross
    return (price or 0.0) + _rate_at(rate, weight), dimensional, used


#: A weight at most a billionth above a breakpoint counts as that breakpoint (the engine's
#: BREAKPOINT_SLACK): 20 units of 0.05 weigh 1.0000000000000002, billed as 1.
_BREAKPOINT_TAKES = 1 + 1e-9


def _rate_at(rate: dict[str, Any], weight: float) -> float:
    """A lowered rate at `weight`: the first breakpoint at or above it (above the last,
    the last rate), or base plus slope times weight, never below 0 (cost.rs)."""
    if rate["method"] == "breakpoints":
        weights, rates = rate["weights"], rate["rates"]
        return float(
            next(
                (r for w, r in zip(weights, rates, strict=True) if weight <= w * _BREAKPOINT_TAKES),
                rates[-1],
            )
        )
    return max(0.0, float(rate["basePrice"] + rate["priceIncreaseRate"] * weight))
