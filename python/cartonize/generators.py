"""Box type generators: box sizes made on demand (`cartesian`) or one carton per item
set (`pack-as-is`). Generated types join the request's box types and take part in box
choice like them. See docs/generators.md."""

from __future__ import annotations

import itertools
import math
import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cartonize.errors import InvalidRequest
from cartonize.models import (
    BoxProperties,
    BoxType,
    BoxTypeGenerator,
    Dimensions,
    GeneratorAxisRange,
    GeneratorPriceComponent,
    ItemSet,
    Metric,
    Outer,
)
from cartonize.rates import box_cost, lower_rating

__all__ = [
    "GeneratedBoxTypes",
    "Trim",
    "generate_box_types",
    "metric",
    "trim_packed_box",
    "trimmed_box_type",
    "trimmed_size",
]

#: With `generatedBoxTypesMax` 0 ("unlimited") a cartesian product is still sampled down
#: to this many sizes: every generated type costs a trial fill per box opened.
UNLIMITED_CAP = 4096
#: Most sizes the cartesian generators' axes may combine into: each is checked against the
#: limits before any sampling, about 0.6 s per million. Three lists of 1,000 lengths (a
#: 12 kB body) made a billion and held a worker for minutes.
MAX_COMBINATIONS = 1_000_000

#: Fixed seed of the sampling, so one request always generates the same sizes.
_SAMPLE_SEED = 0x5EED

Size = tuple[float, float, float]


@dataclass(frozen=True)
class Trim:
    """How a cartesian box is trimmed after packing: which axes came from a range, the
    floor of each (the range's `min`, raised by an axis `limits` min), and what the
    trimmed size must still satisfy (the generator's limits) and is priced by."""

    axes: tuple[bool, bool, bool]
    floor: Size
    generator: BoxTypeGenerator
    #: The generated name, "generated XxYxZ", follows the trimmed size.
    auto_name: bool


@dataclass
class GeneratedBoxTypes:
    """Generated box types; `generator[i]` is the index of the generator that made type
    i (in `box_types`); `as_is_owner[i]` is the item set position a pack-as-is
    generated type belongs to; `trim[i]` says how cartesian type i is trimmed to its
    contents after packing."""

    box_types: list[BoxType] = field(default_factory=list)
    generator: list[int] = field(default_factory=list)
    as_is_owner: dict[int, int] = field(default_factory=dict)
    trim: dict[int, Trim] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def only(self, keep: Callable[[BoxType], bool]) -> GeneratedBoxTypes:
        """The generated types `keep` accepts, renumbered, with their owners and trims."""
        out = GeneratedBoxTypes(warnings=list(self.warnings))
        for i, box_type in enumerate(self.box_types):
            if not keep(box_type):
                continue
            if i in self.as_is_owner:
                out.as_is_owner[len(out.box_types)] = self.as_is_owner[i]
            if i in self.trim:
                out.trim[len(out.box_types)] = self.trim[i]
            out.box_types.append(box_type)
            out.generator.append(self.generator[i])
        return out


def _sorted(size: Size) -> Size:
    a, b, c = sorted(size, reverse=True)
    return (a, b, c)


# Each metric of a size (x, y, z) and its sides sorted longest first (l, m, s).
_METRICS: dict[str, Callable[[Size, Size], float]] = {
    "volume": lambda d, o: d[0] * d[1] * d[2],
    "surface-area": lambda d, o: 2 * (d[0] * d[1] + d[1] * d[2] + d[0] * d[2]),
    # Blank of a regular slotted container: (2L + 2W) wide, (W + H) tall, L >= W >= H.
    "surface-area-rsc": lambda d, o: 2 * (o[0] + o[1]) * (o[1] + o[2]),
    "longest-dimension": lambda d, o: o[0],
    "middle-dimension": lambda d, o: o[1],
    "shortest-dimension": lambda d, o: o[2],
    "length-plus-girth": lambda d, o: o[0] + 2 * (o[1] + o[2]),
    "girth": lambda d, o: 2 * (o[1] + o[2]),
    "x-dimension": lambda d, o: d[0],
    "y-dimension": lambda d, o: d[1],
    "z-dimension": lambda d, o: d[2],
    "longest-to-middle-ratio": lambda d, o: o[0] / o[1],
    "longest-to-shortest-ratio": lambda d, o: o[0] / o[2],
    "middle-to-shortest-ratio": lambda d, o: o[1] / o[2],
    "z-to-y-ratio": lambda d, o: d[2] / d[1],
    "z-to-x-ratio": lambda d, o: d[2] / d[0],
    "y-to-x-ratio": lambda d, o: d[1] / d[0],
}


def metric(name: Metric, size: Size, ordered: Size | None = None) -> float:
    """The value of metric `name` for a box of inner `size` (x, y, z); `ordered` is
    `size` sorted longest first, when the caller has it."""
    return _METRICS[name](size, ordered or _sorted(size))


def _range_values(
    r: GeneratorAxisRange, axis: int, item_sets: Sequence[ItemSet], where: str
) -> list[float]:
    if r.min is None or r.max is None:
        raise InvalidRequest("invalid box type generator", f"{where}: a range needs min and max")
    lo, hi = r.min, r.max
    if r.fit_for_first_item:
        # One length per item set (its side along the axis, as given, clamped): whichever
        # item comes first in a generated box, a type of its length is there to choose.
        if not item_sets:
            return [lo]
        sides = {(s.dimensions.x, s.dimensions.y, s.dimensions.z)[axis] for s in item_sets}
        return sorted({min(max(side, lo), hi) for side in sides})
    values = {lo, hi}
    if r.derive_from_items:
        for s in item_sets:
            for side in (s.dimensions.x, s.dimensions.y, s.dimensions.z):
                if lo < side < hi:
                    values.add(side)
    elif r.increment is not None:
        # Multiples of the increment strictly between min and max: 5..59 by 10 gives
        # 5, 10, 20, 30, 40, 50, 59.
        step = r.increment
        k = math.floor(lo / step) + 1
        while k * step < hi:
            values.add(round(k * step, 10))
            k += 1
            if len(values) > 100_000:
                raise InvalidRequest(
                    "invalid box type generator",
                    f"{where}.increment: gives more than 100000 lengths; use a larger increment",
                )
    return sorted(values)


def _axis_values(
    gen: BoxTypeGenerator, axis: int, item_sets: Sequence[ItemSet], where: str
) -> list[float]:
    name = "xyz"[axis]
    options = gen.options
    listed: list[float] | None = getattr(options, f"{name}_list")
    ranged: GeneratorAxisRange | None = getattr(options, f"{name}_range")
    values: set[float] = set(listed or [])
    if ranged is not None:
        values.update(_range_values(ranged, axis, item_sets, f"{where}.options.{name}Range"))
    if not values:
        raise InvalidRequest(
            "invalid box type generator",
            f"{where}.options.{name}List: cartesian needs {name}List or {name}Range",
        )
    return sorted(values)


def priced_size(box_type: BoxType, size: Size) -> Size:
    """The size a box type's price components measure: under `outerBasedCost` the outer one
    (the spec: "Base dimensionalWeight and price component thresholds on outer
    dimensions"), `size` plus the defaults' `outer.dimensionChange`; else `size`."""
    outer = box_type.outer
    if not box_type.outer_based_cost or outer is None or outer.dimension_change is None:
        return size
    change = outer.dimension_change
    return (size[0] + change.x, size[1] + change.y, size[2] + change.z)


def _price(components: Sequence[GeneratorPriceComponent], size: Size) -> int | None:
    """The price of a cartesian box of `size`: the components' price, at least 0 (see
    `_component_price`); None without components."""
    price = _component_price(components, size)
    return None if price is None else max(price, 0)


def _component_price(components: Sequence[GeneratorPriceComponent], size: Size) -> int | None:
    """The price the components give `size`, summed over keys; None without components.

    It can be negative (a negative price, or a discount larger than the rest); the
    generated box is then priced at 0 with a warning, since a box of negative price makes
    every extra box lower the cost, and the cheapest answer opens one box per unit."""
    if not components:
        return None
    ordered = _sorted(size)
    by_key: dict[str | None, list[tuple[GeneratorPriceComponent, float]]] = defaultdict(list)
    for c in components:
        by_key[c.key].append((c, metric(c.metric, size, ordered)))
    total = 0
    for group in by_key.values():
        aggregator = group[0][0].aggregator
        if aggregator == "sum":
            total += sum(
                p for c, v in group for t, p in zip(c.thresholds, c.prices, strict=True) if v > t
            )
        elif aggregator == "product":
            highest = [_highest(c, v) for c, v in group]
            if all(p is not None for p in highest):
                total += math.prod(p for p in highest if p is not None)
        else:
            triggered = [
                p for c, v in group for t, p in zip(c.thresholds, c.prices, strict=True) if v > t
            ]
            total += max(triggered, default=0)
    return total


def _highest(c: GeneratorPriceComponent, value: float) -> int | None:
    """The price of the highest threshold `value` exceeds (thresholds traversed in reverse)."""
    ranked = sorted(zip(c.thresholds, c.prices, strict=True), reverse=True)
    return next((p for t, p in ranked if value > t), None)


def _within_limits(gen: BoxTypeGenerator, size: Size) -> bool:
    limits = gen.options.limits
    if not limits:
        return True
    ordered = _sorted(size)
    for limit in limits:
        value = metric(limit.metric, size, ordered)
        if limit.min is not None and value < limit.min:
            return False
        if limit.max is not None and value > limit.max:
            return False
    return True


def _template(gen: BoxTypeGenerator, request_defaults: BoxProperties | None) -> BoxType:
    """A generated box type before its size, name and price are set."""
    own = gen.box_type_defaults or BoxProperties()
    merged = own.with_defaults(request_defaults)
    fields = merged.model_dump(exclude_unset=True, exclude_none=True, by_alias=False)
    fields["dimensions"] = {"x": 1.0, "y": 1.0, "z": 1.0}
    fields.setdefault("weight_max", 0.0)
    fields.pop("price", None)
    template = BoxType.model_validate(fields)
    # The generator's defaults may price as-is boxes at -1, below BoxType's own bound.
    template.price = merged.price
    return template


def _box_type(template: BoxType, size: Size, name: str, price: int | None) -> BoxType:
    update: dict[str, object] = {
        "dimensions": Dimensions.model_construct(x=size[0], y=size[1], z=size[2]),
        "name": template.name or name,
    }
    if price is not None:
        update["price"] = price
    return template.model_copy(update=update)


def generate_box_types(
    generators: Sequence[BoxTypeGenerator],
    item_sets: Sequence[ItemSet],
    request_defaults: BoxProperties | None,
    generated_max: int,
) -> GeneratedBoxTypes:
    """Every generator's box types, in generator order; cartesian products larger than
    `generated_max` (0: `UNLIMITED_CAP`) are sampled deterministically."""
    out = GeneratedBoxTypes()
    searched = 0  # sizes the cartesian generators so far combine into
    for g, gen in enumerate(generators):
        where = f"boxTypeGenerators[{g}]"
        defaults = _template(gen, request_defaults)
        outer = defaults.outer
        if outer is not None and outer.dimensions is not None:
            # One outer size cannot be every generated size's (nor a trimmed box's).
            out.warnings.append(
                f"{where}: outer.dimensions in the defaults cannot fit every generated size; "
                "ignored (give outer.dimensionChange instead)"
            )
            change = outer.dimension_change
            defaults.outer = None if change is None else Outer(dimension_change=change)
        if gen.operation == "pack-as-is":
            # The item's own packaging: it holds one unit, as given (packing.py reports a
            # unit the engine put there in an alternate shape as given), and no space is
            # reserved for packing material in it.
            own = defaults.model_copy(update={"reserved_space": 0.0, "items_per_box_max": 1})
            for position, item_set in enumerate(item_sets):
                d = item_set.dimensions
                out.as_is_owner[len(out.box_types)] = position
                out.generator.append(g)
                out.box_types.append(
                    _box_type(
                        own,
                        (d.x, d.y, d.z),
                        f"as-is {item_set.name or position}",
                        None,
                    )
                )
            continue
        xs, ys, zs = (_axis_values(gen, a, item_sets, where) for a in range(3))
        combinations = len(xs) * len(ys) * len(zs)
        searched += combinations
        if searched > MAX_COMBINATIONS:
            before = searched - combinations
            earlier = f" after {before} of the generators before it" if before else ""
            raise InvalidRequest(
                "invalid box type generator",
                f"{where}.options: the axes give {combinations} sizes ({len(xs)} x {len(ys)} "
                f"x {len(zs)} lengths){earlier}, more than the {MAX_COMBINATIONS} a request "
                "may search; give fewer lengths or larger increments",
            )
        sizes = [s for s in itertools.product(xs, ys, zs) if _within_limits(gen, s)]
        cap = generated_max if generated_max > 0 else UNLIMITED_CAP
        if len(sizes) > cap:
            if generated_max <= 0:
                out.warnings.append(
                    f"{where}: {len(sizes)} sizes; sampled {UNLIMITED_CAP} of them "
                    "(set generatedBoxTypesMax to choose how many)"
                )
            picked = sorted(random.Random(_SAMPLE_SEED + g).sample(range(len(sizes)), cap))
            sizes = [sizes[i] for i in picked]
        if not sizes:
            out.warnings.append(f"{where}: no size satisfies the limits; no box types generated")
        if defaults.price is not None and defaults.price < 0:
            out.warnings.append(
                f"{where}.boxTypeDefaults.price: {defaults.price} favours pack-as-is boxes "
                "only; a cartesian generator's boxes are priced at 0 or more, so 0 is used"
            )
            defaults.price = 0
        trim = _trim_of(gen, defaults)
        components = gen.options.price_components or []
        below_zero: list[tuple[Size, int]] = []
        for size in sizes:
            price = _component_price(components, priced_size(defaults, size))
            if price is not None and price < 0:
                below_zero.append((size, price))
                price = 0
            if trim is not None:
                out.trim[len(out.box_types)] = trim
            out.generator.append(g)
            out.box_types.append(_box_type(defaults, size, _generated_name(size), price))
        if below_zero:
            size, price = min(below_zero, key=lambda pair: pair[1])
            out.warnings.append(
                f"{where}.options.priceComponents: {len(below_zero)} of the {len(sizes)} "
                f"sizes come out below 0 (lowest {price}, for "
                f"{size[0]:g}x{size[1]:g}x{size[2]:g}); they are priced at 0 instead, since "
                "a negative price makes every extra box lower the cost"
            )
    return out


def _generated_name(size: Size) -> str:
    return f"generated {size[0]:g}x{size[1]:g}x{size[2]:g}"


#: Axis metrics whose `limits` min is also a trimming floor.
_AXIS_METRICS: tuple[Metric, Metric, Metric] = ("x-dimension", "y-dimension", "z-dimension")


def _trim_of(gen: BoxTypeGenerator, defaults: BoxType) -> Trim | None:
    """How the generator's boxes are trimmed; None with `noTrimToMaxExtent` or without a
    range axis (axes given only by lists are never trimmed)."""
    options = gen.options
    ranges = [getattr(options, f"{a}_range") for a in "xyz"]
    if options.no_trim_to_max_extent or all(r is None for r in ranges):
        return None
    floor = [r.min if r is not None and r.min is not None else 0.0 for r in ranges]
    for limit in options.limits or []:
        if limit.metric in _AXIS_METRICS and limit.min is not None:
            a = _AXIS_METRICS.index(limit.metric)
            floor[a] = max(floor[a], limit.min)
    return Trim(
        axes=(ranges[0] is not None, ranges[1] is not None, ranges[2] is not None),
        floor=(floor[0], floor[1], floor[2]),
        generator=gen,
        auto_name=defaults.name is None,
    )


def _up_to_tenths(length: float) -> float:
    # The small slack keeps 2.3 (stored as 2.2999...) at 2.3.
    return math.ceil(round(length * 10, 6)) / 10


def _rounded_up(trim: Trim, axis: int, length: float) -> float:
    """`length` rounded up as the axis range asks: to its `increment` (the schema: "the
    desired increment for box dimension rounding", `min` and `max` as they are), so a
    trimmed side is one of the lengths the range makes; to tenths without one (or when
    the range derives its lengths from the items)."""
    r: GeneratorAxisRange | None = getattr(trim.generator.options, f"{'xyz'[axis]}_range")
    step = r.increment if r is not None else None
    if (
        r is None
        or step is None
        or step <= 0
        or r.derive_from_items
        or r.fit_for_first_item
        or r.min is None
        or r.max is None
        or length > r.max
    ):
        # Beyond the range's max the side came from a list: no grid to round to.
        return _up_to_tenths(length)
    if length <= r.min:
        return r.min
    up = round(math.ceil(round(length / step, 9)) * step, 10)
    return r.max if up >= r.max else up


def trimmed_size(trim: Trim, size: Size, extent: Size) -> Size | None:
    """`size` with each range axis reduced to the contents' `extent` rounded up (to the
    range's increment, else tenths; never below the axis floor, never above `size`);
    None when nothing shrinks or the trimmed size breaks one of the generator's limits
    (then the box keeps its size)."""
    new = tuple(
        min(size[a], max(_rounded_up(trim, a, extent[a]), trim.floor[a]))
        if trim.axes[a]
        else size[a]
        for a in range(3)
    )
    trimmed: Size = (new[0], new[1], new[2])
    if trimmed == size or not _within_limits(trim.generator, trimmed):
        return None
    return trimmed


def trimmed_box_type(trim: Trim, box_type: BoxType, size: Size) -> BoxType:
    """`box_type` at the trimmed `size`, priced by the generator's components anew."""
    price = _price(trim.generator.options.price_components or [], priced_size(box_type, size))
    update: dict[str, object] = {
        "dimensions": Dimensions.model_construct(x=size[0], y=size[1], z=size[2])
    }
    if price is not None:
        update["price"] = price
    if trim.auto_name:
        update["name"] = _generated_name(size)
    return box_type.model_copy(update=update)


#: Relative slack under which a trimmed box's recomputed cost equals the engine's.
_COST_SLACK = 1e-9


def trim_packed_box(
    trim: Trim,
    packed: dict[str, Any],
    box_type: BoxType,
    weights: Sequence[float],
    reserved: float = 0.0,
) -> tuple[dict[str, Any], BoxType]:
    """An engine box of a cartesian type (`weights`: each engine item kind's unit weight)
    trimmed to its contents' extent and costed anew: price components, dimensional
    weight, each item's deltaCost. Unchanged when trimming shrinks nothing, breaks a
    limit, leaves the items more than the `reserved` share allows, or would make the box
    dearer."""
    d = box_type.dimensions
    extent = [
        max((p["origin"][a] + p["dimensions"][a] for p in packed["items"]), default=0.0)
        for a in range(3)
    ]
    new_size = trimmed_size(trim, (d.x, d.y, d.z), (extent[0], extent[1], extent[2]))
    if new_size is None:
        return packed, box_type
    volume = new_size[0] * new_size[1] * new_size[2]
    net = sum(math.prod(p["dimensions"]) for p in packed["items"])
    if net > (1 - reserved) * volume * (1 + 1e-9):
        return packed, box_type
    trimmed = trimmed_box_type(trim, box_type, new_size)
    rating = lower_rating(trimmed, "boxTypeGenerators", [])
    price = None if trimmed.price is None else float(trimmed.price)
    gross = trimmed.weight_tare or 0.0
    previous = 0.0
    items = []
    cost, dimensional, used = box_cost(price, volume, rating, gross)
    for placement in packed["items"]:
        gross += weights[placement["item"]]
        cost, dimensional, used = box_cost(price, volume, rating, gross)
        items.append({**placement, "deltaCost": cost - previous})
        previous = cost
    # The engine sums the same weights in another order: a trimmed box that costs the
    # same up to float rounding is no dearer.
    if cost > packed["cost"] + _COST_SLACK * max(1.0, abs(packed["cost"])):
        return packed, box_type
    return {
        **packed,
        "cost": cost,
        "dimensionalWeight": dimensional,
        "dimensionalWeightUsed": used,
        "items": items,
    }, trimmed
