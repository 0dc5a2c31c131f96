"""What the request's item options do to the item kinds the engine packs: sequence
order (`sequenceSort`), sequence distance (`maxSequenceDistance`), the unit-of-measure
ladder (`dimensionSets`) and each unit's centre of mass. See docs/decisions.md
("Sequences, item units and time")."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, NamedTuple

from cartonize.errors import InvalidRequest
from cartonize.models import (
    MAX_AMOUNT,
    MAX_LENGTH,
    MAX_QUANTITY,
    Dimensions,
    DimensionSet,
    Item,
    ItemSet,
    PackRequest,
    Point,
)

__all__ = [
    "Unit",
    "box_center_of_mass",
    "check_center_of_mass",
    "placed_center_of_mass",
    "point_string",
    "property_amount",
    "scaled_center_of_mass",
    "sequence_number",
    "sequence_order",
    "sequence_sort_warnings",
    "sequence_windows",
    "sequences_apart",
    "unit_ladder",
    "weighted_center_of_mass",
]


def property_amount(properties: Mapping[str, Any] | None, key: str) -> float:
    """A unit's amount of a constrained property (propertyConstraints): its numeric value,
    else 0."""
    value = (properties or {}).get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    return float(value)


#: A numeric sequence: optional sign, digits, optional decimal part ("0401", "-3", "11.5").
_NUMBER = re.compile(r"[+-]?\d+(\.\d+)?")


def sequence_number(sequence: str | None) -> Decimal | None:
    """The numeric value of a sequence ("0401" is 401), or None when it is not a number."""
    if sequence is None:
        return None
    text = sequence.strip()
    return Decimal(text) if _NUMBER.fullmatch(text) else None


def sequence_order(item_sets: Sequence[ItemSet]) -> list[int]:
    """Positions of `item_sets` in sequence order: numeric sequences by value, then the
    other sequences by text, then item sets without one; ties by volume, largest first
    (the default sort), then as given."""

    def key(position: int) -> tuple[int, Decimal, str, float, int]:
        s = item_sets[position]
        volume = -(s.dimensions.x * s.dimensions.y * s.dimensions.z)
        number = sequence_number(s.sequence)
        if number is not None:
            return (0, number, "", volume, position)
        if s.sequence:
            return (1, Decimal(0), s.sequence, volume, position)
        return (2, Decimal(0), "", volume, position)

    return sorted(range(len(item_sets)), key=key)


def sequence_sort_warnings(req: PackRequest, item_sets: Sequence[ItemSet]) -> list[str]:
    """What `sequenceSort` overrides or cannot do in this request."""
    if not req.sequence_sort:
        return []
    warnings = []
    if "item_sort" in req.model_fields_set:
        warnings.append(
            f"sequenceSort is true: itemSort '{req.item_sort}' is not used; items are packed "
            "in sequence order"
        )
    if not any(s.sequence for s in item_sets):
        warnings.append(
            "sequenceSort is true but no item set has a sequence: items are packed by "
            "volume, largest first"
        )
    return warnings


def sequence_windows(
    sequences: Sequence[str | None], max_distance: int | None
) -> tuple[list[tuple[int, int, int]], list[str]]:
    """`maxSequenceDistance` as the engine takes it: (kind, rank, reach) for each item kind
    with a numeric sequence, its rank among the distinct numbers (ascending) and the
    highest rank within `max_distance` of it; two kinds share a box only when the higher
    rank is within the lower's reach. The same as excluding every two kinds whose numbers
    differ by more than the distance (the largest minus the smallest sequence in a box is
    at most D exactly when every two of them differ by at most D), without listing those
    pairs: 5,000 item sets of distinct sequences made 12.5 million pairs, 28 s and 2.3 GB
    before the engine started. Compared exactly (decimal). Also a warning naming the
    sequences that are not numbers (they are not constrained)."""
    if max_distance is None:
        return [], []
    numbers = [sequence_number(s) for s in sequences]
    distinct = sorted({n for n in numbers if n is not None})
    reach: list[int] = []
    top = 0
    for low, number in enumerate(distinct):
        top = max(top, low)
        while top + 1 < len(distinct) and distinct[top + 1] - number <= max_distance:
            top += 1
        reach.append(top)
    rank = {number: r for r, number in enumerate(distinct)}
    windows = [(k, rank[n], reach[rank[n]]) for k, n in enumerate(numbers) if n is not None]
    odd = sorted({s for s, n in zip(sequences, numbers, strict=True) if s and n is None})
    warnings = []
    if odd:
        shown = ", ".join(repr(s) for s in odd[:5]) + (", ..." if len(odd) > 5 else "")
        warnings.append(
            f"maxSequenceDistance: sequences {shown} are not numbers, so the distance does "
            "not constrain their items"
        )
    return windows, warnings


def sequences_apart(
    sequences: Sequence[str | None], position: int, max_distance: int | None
) -> set[int]:
    """Positions of the item sets whose numeric sequence differs from the one at `position`
    by more than `max_distance` (none without a distance or a number there)."""
    if max_distance is None:
        return set()
    own = sequence_number(sequences[position])
    if own is None:
        return set()
    return {
        q
        for q, s in enumerate(sequences)
        if (n := sequence_number(s)) is not None and abs(n - own) > max_distance
    }


# --------------------------------------------------------------------------- unit ladder


class Unit(NamedTuple):
    """One rung of an item set's unit-of-measure ladder as packed: the item set reshaped
    to the unit (its dimensions, weight and centre of mass, `quantity` = how many such
    units) and the dimension set it stands for (None without `dimensionSets`). A named
    tuple: made for every item set of every pack, a frozen dataclass cost three times as much."""

    item_set: ItemSet
    dimension_set: DimensionSet | None = None

    @property
    def eaches(self) -> int:
        """Eaches one unit holds."""
        return (self.dimension_set.quantity_divisor or 1) if self.dimension_set else 1


def unit_ladder(item_set: ItemSet, path: str) -> list[Unit]:
    """The units `item_set` packs as: without `dimensionSets` itself; with them, as many
    of the largest unit (most eaches) as the quantity allows, the remainder in the next
    smaller ones, eaches last. Raises `InvalidRequest` naming `path` for a malformed rung."""
    check_center_of_mass(item_set, path)
    if item_set.quantity <= 0:
        return []
    if not item_set.dimension_sets:
        return [Unit(item_set)]
    rungs = [_rung(item_set, path, i) for i in range(len(item_set.dimension_sets))]
    # Larger units first; among equal ones the later rung (the schema: "in reverse").
    order = sorted(range(len(rungs)), key=lambda i: (-(rungs[i].quantity_divisor or 1), -i))
    left = item_set.quantity
    units = []
    for i in order:
        rung = rungs[i]
        count, left = divmod(left, rung.quantity_divisor or 1)
        if count:
            units.append(Unit(_unit_item_set(item_set, rungs[0], rung, count), rung))
    return units


def _rung(item_set: ItemSet, path: str, index: int) -> DimensionSet:
    """Dimension set `index` with its dimensions, weight, quantityDivisor and
    unitOfMeasure resolved (the first is the each: the item set's own by default)."""
    given = (item_set.dimension_sets or [])[index]
    where = f"{path}.dimensionSets[{index}]"
    multipliers = given.axis_multipliers
    if index == 0:
        if (given.quantity_divisor or 1) != 1:
            raise InvalidRequest(
                "invalid dimension set",
                f"{where}.quantityDivisor: the first dimension set is the each, so it holds 1 "
                f"(got {given.quantity_divisor})",
            )
        return DimensionSet(
            dimensions=given.dimensions or item_set.dimensions,
            quantity_divisor=1,
            weight=item_set.weight if given.weight is None else given.weight,
            unit_of_measure=given.unit_of_measure or "each",
        )
    each = _rung(item_set, path, 0)
    each_dims = each.dimensions or item_set.dimensions
    if multipliers is not None and min(multipliers.x, multipliers.y, multipliers.z) <= 0:
        raise InvalidRequest(
            "invalid dimension set",
            f"{where}.axisMultipliers: every axis must be > 0 (got {_xyz(multipliers)})",
        )
    divisor = given.quantity_divisor
    if divisor is None and multipliers is not None:
        product = multipliers.x * multipliers.y * multipliers.z
        if not float(product).is_integer():
            raise InvalidRequest(
                "invalid dimension set",
                f"{where}.quantityDivisor: is required when the axisMultipliers' product "
                f"{product:g} is not a whole number",
            )
        divisor = int(product)
        if divisor > MAX_QUANTITY:
            raise InvalidRequest(
                "invalid dimension set",
                f"{where}.axisMultipliers: their product {product:g} is the eaches in the "
                f"rung, and a quantity must be <= {MAX_QUANTITY}",
            )
    if divisor is None or (given.dimensions is None and multipliers is None):
        raise InvalidRequest(
            "invalid dimension set",
            f"{where}: give dimensions and quantityDivisor, or axisMultipliers",
        )
    dims = given.dimensions
    if dims is None and multipliers is not None:
        sides = (
            each_dims.x * multipliers.x,
            each_dims.y * multipliers.y,
            each_dims.z * multipliers.z,
        )
        # A rung is bounded as an item set is (beyond, Dimensions refused it inside
        # pack(): a 500).
        if max(sides) > MAX_LENGTH:
            raise InvalidRequest(
                "invalid dimension set",
                f"{where}.axisMultipliers: make a side of {max(sides):g}, and a side must be "
                f"<= {MAX_LENGTH:g}",
            )
        dims = Dimensions(x=sides[0], y=sides[1], z=sides[2])
    weight = (each.weight or 0.0) * divisor if given.weight is None else given.weight
    if weight > MAX_AMOUNT:
        raise InvalidRequest(
            "invalid dimension set",
            f"{where}: {divisor} eaches weigh {weight:g}, and a weight must be "
            f"<= {MAX_AMOUNT:g}; give the rung's weight",
        )
    return DimensionSet(
        dimensions=dims,
        axis_multipliers=multipliers,
        quantity_divisor=divisor,
        weight=weight,
        unit_of_measure=given.unit_of_measure,
    )


def _unit_item_set(
    item_set: ItemSet, each: DimensionSet, rung: DimensionSet, count: int
) -> ItemSet:
    """`item_set` as `count` units of `rung`. A unit built from multiples of the each keeps
    the each's centre of mass in every cell; one with its own dimensions has it central,
    and so has the each itself when its dimensions are not the item set's (the item set's
    offset is within the item set's sides, not necessarily within the each's)."""
    each_dims = each.dimensions or item_set.dimensions
    dims = rung.dimensions or item_set.dimensions
    own_each = not all(
        math.isclose(e, d, rel_tol=1e-9)
        for e, d in zip(_xyz(each_dims), _xyz(item_set.dimensions), strict=True)
    )
    com = None if own_each else item_set.center_of_mass
    if com is not None and rung is not each:
        m = rung.axis_multipliers
        grid = m is not None and all(
            math.isclose(d, e * k, rel_tol=1e-9)
            for d, e, k in zip(_xyz(dims), _xyz(each_dims), _xyz(m), strict=True)
        )
        com = (
            Point(
                x=com.x + (m.x - 1) * each_dims.x / 2,
                y=com.y + (m.y - 1) * each_dims.y / 2,
                z=com.z + (m.z - 1) * each_dims.z / 2,
            )
            if grid and m is not None
            else None
        )
    return item_set.model_copy(
        update={
            "dimensions": dims,
            "weight": rung.weight if rung.weight is not None else item_set.weight,
            "quantity": count,
            "center_of_mass": com,
            "dimension_sets": None,
        }
    )


# --------------------------------------------------------------------------- centre of mass


def check_center_of_mass(item_set: ItemSet, path: str) -> None:
    """An item's `centerOfMass` is an offset from its back-bottom corner and lies within
    it; raises `InvalidRequest` naming `path` otherwise."""
    com, dims = item_set.center_of_mass, item_set.dimensions
    if com is None:
        return
    if not all(0 <= c <= d for c, d in zip(_xyz(com), _xyz(dims), strict=True)):
        raise InvalidRequest(
            "invalid centre of mass",
            f"{path}.centerOfMass: must lie within the item, 0..{dims.x:g}, 0..{dims.y:g}, "
            f"0..{dims.z:g} from its back-bottom corner (got {_xyz(com)})",
        )


def allowed_turns(free_axes: Sequence[int] | None) -> list[tuple[int, int, int]]:
    """The axis permutations (placed axis a shows given axis p[a]) that turns about
    `free_axes` reach, as the engine allows them (None: no lock): none, a spin about one
    axis, or all; the unturned one first."""
    every = [(a, b, c) for a, b, c in itertools.permutations(range(3))]
    if free_axes is None:
        return every
    axes = sorted(set(free_axes))
    if not axes:
        return [(0, 1, 2)]
    if len(axes) == 1:
        return [p for p in every if p[axes[0]] == axes[0]]
    return every


def placed_center_of_mass(
    given: Dimensions, offset: Point | None, origin: Point, placed: Dimensions
) -> Point:
    """Box-local centre of mass of a unit placed at `origin` with `placed` dimensions:
    its geometric centre without an `offset`; else the offset turned with the unit. The
    turn maps the given axes onto the placed ones (unturned where sides allow, else the
    first axis permutation that fits); a permutation that alone would mirror the unit
    also turns it end for end along z, so the turn is a real rotation."""
    size = _xyz(placed)
    if offset is None:
        return Point.of(origin.x + size[0] / 2, origin.y + size[1] / 2, origin.z + size[2] / 2)
    sides, off = _xyz(given), _xyz(offset)
    perm = next(
        (
            p
            for p in itertools.permutations(range(3))
            if all(math.isclose(size[a], sides[p[a]], rel_tol=1e-9, abs_tol=1e-6) for a in range(3))
        ),
        (0, 1, 2),
    )
    turned = [off[perm[a]] for a in range(3)]
    if _is_odd(perm):
        turned[2] = size[2] - turned[2]
    return Point.of(origin.x + turned[0], origin.y + turned[1], origin.z + turned[2])


def scaled_center_of_mass(offset: Point | None, given: Dimensions, shape: Point) -> Point | None:
    """`offset` (within `given`) for a unit that takes another `shape` (alternate
    dimensions): moved in proportion along each axis, so it keeps its place in the unit."""
    if offset is None:
        return None
    g, s, o = _xyz(given), _xyz(shape), _xyz(offset)
    x, y, z = (o[a] * s[a] / g[a] if g[a] > 0 else s[a] / 2 for a in range(3))
    return Point.of(x, y, z)


def box_center_of_mass(items: Sequence[Item]) -> Point:
    """Weight-weighted centre of the items (volume-weighted when all weigh nothing)."""
    weights = [i.weight for i in items]
    return weighted_center_of_mass(items, weights, sum(weights))


def weighted_center_of_mass(items: Sequence[Item], weights: list[float], total: float) -> Point:
    """`box_center_of_mass` for a caller that has the items' weights and their sum."""
    if total <= 0:
        weights = [
            i.dimensions.x * i.dimensions.y * i.dimensions.z if i.dimensions else 0.0 for i in items
        ]
        total = sum(weights)
        if total <= 0:
            return Point.of(0.0, 0.0, 0.0)
    centers = [i.center_of_mass for i in items if i.center_of_mass is not None]
    # Lists, not generators, to sum (a box's centre is worked out for every box packed).
    pairs = list(zip(weights, centers, strict=True))
    return Point.of(
        sum([w * c.x for w, c in pairs]) / total,
        sum([w * c.y for w, c in pairs]) / total,
        sum([w * c.z for w, c in pairs]) / total,
    )


def point_string(p: Point) -> str:
    """`x,y,z` as the response's `...String` fields write points."""
    return f"{p.x:g},{p.y:g},{p.z:g}"


def _is_odd(perm: tuple[int, ...]) -> bool:
    inversions = sum(1 for i, j in itertools.combinations(range(len(perm)), 2) if perm[i] > perm[j])
    return inversions % 2 == 1


def _xyz(p: Point) -> list[float]:
    return [p.x, p.y, p.z]
