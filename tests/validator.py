"""Independent validator of pack results.

Judges a pack response against its request using only the wire JSON (camelCase dicts).
It deliberately imports nothing from ``cartonize``: a bug shared by the engine and its
checker would otherwise pass unnoticed.

Every violation is one human-readable line that starts with the name of the rule it
breaks (``"overlap: box 0 items 3 and 7 ..."``), so tests can tell which rule fired.

Decisions where the spec leaves room (spec §B and §F, reference.md, the public schema):

- **Units.** Every Item, packed or leftover, stands for ``quantity`` eaches when it
  carries that field, else for one (public schema: ``Item.quantity`` is the number of
  eaches the item represents). ``lenLeftovers`` counts leftover eaches, ``lenItems`` all
  eaches, packed plus leftover, ``lenUnits`` the items, packed plus leftover. An item set
  without ``quantity`` asks for one unit. A box's ``lenItems`` counts its own eaches and
  those of every box nested in it (``subspace``, at any depth). An item standing for a
  box (pack-sequence ``box-to-item``) is no unit and no net volume of the response: the
  box's contents count in the box.
- **Auto-assigned refIds.** Item sets whose ``refId`` is missing, null or -1 get ids from
  the engine. Response items whose refId is not one of the request's explicit refIds are
  matched to those sets by (sorted dimensions, weight), or by an alternate shape the
  alternate-dimensions rule selecting the item offers a set of that weight; auto sets
  alike in both are pooled, which is sound because their units are interchangeable.
- **Cost.** A box costs its ``price`` plus its rate table's rate (breakpoints: the first
  breakpoint at or above the weight, above the last the last rate; linear: base plus
  slope times weight) at the larger of the gross weight and ``volume / dimFactor``
  (outer volume with ``outerBasedCost``; ``dimFactor`` <= 0 disables it); with neither
  price nor rate it costs its volume. Integer costs may differ by rounding. Built-in
  carrier tables are the engine's data and are not re-derived here.
- **Pre-packed boxes** (``boxes`` in the request) are the first boxes of the response, in
  order, never dropped; their type is their ``boxType``, completed by the box's own fields,
  then ``boxTypeDefaults``. Their items count as item sets of the request (one per item
  entry, ``quantity`` units, default 1) and stay in their box; one with an ``origin``
  stays exactly there.
- **Box options.** ``reservedSpace`` (a box type's own, else the request's) r: items fill
  at most (1 - r) of the box volume, ``volumeReserved`` = r x volumeMax and ``volumeUsed``
  = volumeNet + volumeReserved. ``propertyConstraints`` (sum): the box type's ``value``
  (default 0) plus the numeric ``properties[key]`` of the box's items is at most ``max``
  (a unit without the property adds nothing) and is the reported ``value``.
  ``boxTypeChoiceLookback`` n >= 0: among the boxes after the pre-packed ones, every item
  of box j has a lower ``packedIndex`` than every item of box j + n + 1 (box j closed when
  that box opened). ``cohortPacking``: per box and refId, the items form at most
  ``cohortMax`` (default 2) groups connected through shared faces of positive area (on
  the engine's grid: a neighbour starts where the engine's room for an item ends, its
  reported side rounded up to a step, and no further), or no more groups than a pre-packed
  box's given items of that refId form among themselves.
- **Random items** (``random: true``) are drawn again as docs/decisions.md says and
  checked like item sets; unseeded ones (``seed: false``) only for self-consistency.
- **Generated boxes** are judged by their generator's defaults (completed by
  boxTypeDefaults) for caps, reserved space and property constraints; in a pack-sequence
  stage with box targets they must be targeted like any box. Their size and price
  (spec §D, docs/generators.md, check_generated_boxes):

  - *Which generator.* A box is a cartesian generator's when it bears the name of the
    generator's defaults, or, when they name none, "generated XxYxZ" (and then X x Y x Z
    must be its size); a pack-as-is carton is known by its "as-is ..." (or defaults')
    name, holds one unit and has that unit's own dimensions (check_pack_as_is); its
    "as-is" name ends with its item set's name, or a number for a set without one (the
    position itself is not re-derived).
  - *Lengths.* Each axis is a length of its list or range. A range makes ``min`` and
    ``max`` as given plus every multiple of ``increment`` strictly between; with
    ``deriveFromItems`` instead every item side strictly between (any item set's unit,
    as given or rolled, any item of the response, any group-pack group: a pack in parts
    derives from the items of its part); with ``fitForFirstItem`` (overriding both) the
    first item's side clamped to min..max, the first item being any item set with units
    (the service makes a length per item set, docs/generators.md) or the first item
    placed in the box (the public schema's wording): either is accepted, and in a pack
    in parts or in sequence order any item's side. No increment and no derivation: min and max only.
  - *Trimming* (unless ``noTrimToMaxExtent``): each range axis of a generated size
    shrinks to the larger of the contents' extent from the box's origin, rounded up (to
    the range's increment, else tenths), and its floor (the range's min, raised by an
    x-/y-/z-dimension limit's min), never beyond the size; list-only axes never shrink.
    A box at a generated size that trimming would shrink must be trimmed unless the
    trimmed size breaks a limit, leaves the items less than reservedSpace allows, or
    costs more; judged only where rounding
    cannot decide it.
  - *Limits.* The box's size, and the generated size it was trimmed from, lie within
    every ``limits`` min and max. Metrics of inner (x, y, z) with sides L >= W >= H:
    volume xyz, surface-area 2(xy + yz + xz), surface-area-rsc (2L + 2W)(W + H),
    longest/middle/shortest-dimension L/W/H, girth 2(W + H), length-plus-girth
    L + 2(W + H), x-/y-/z-dimension, and the ratios as named (L/W, L/H, W/H, z/y, z/x,
    y/x).
  - *Price.* A generated box costs its price plus its rate as any box (rate table from
    the defaults, outer.dimensionChange followed, outer.dimensions ignored). The price
    is the price components' at the box's final size (they set it: the defaults' price
    is not added): per ``key`` one amount (components without a key share one), the
    keys' amounts summed; a threshold triggers when the metric exceeds it (a metric on
    a threshold, within the tolerance, is read both ways); ``max`` (default) the largest
    triggered price of the key, ``sum`` all of them, ``product`` each component's
    highest triggered threshold's price multiplied (nothing when one triggers none).
    Without components, and always for pack-as-is cartons, the defaults' price (-1
    allowed: such a carton may cost -1).
  - *Type.* Its weightMax and weightTare are the defaults' (0 when unset).
  - Not checked: which sizes ``generatedBoxTypesMax`` (or the 4,096 cap) sampled.
- **Not checked yet:** whether a bounded-fill unit took the largest free space available
  (only its volume and critical axis are checked).
- **Packs in parts.** group-pack units of one ``groupPackParent`` count as one item for
  count limits; a bounded-fill unit keeps its volume (and its ``criticalAxis`` side); an
  internal-space subspace box is not a box of the shipment for ``boxesMax``, and its
  item weighs its own weight plus the contents.
- **Count limits.** 0, negative and null mean no limit; a box type's own
  ``itemsPerBoxMax``, ``itemSetsPerBoxMax`` and ``itemsInlineMax`` (or boxTypeDefaults')
  override the request's. ``itemsInlineMax`` counts the items whose projection along the
  axis shares a point with the item's (itself included).
- **Support** (``allowableOverhang`` a >= 0): an item above the floor must touch the top
  of an item ending at its base height (on the engine's grid, as for cohorts), and every
  point of its base must lie within a, along y and along z, of such tops
  (docs/decisions.md); a group-pack group is one item.
  The check is O(n^2) per box.
- **Rules.** A rule selects an item by ``itemRefId``, ``itemSequence`` or ``itemMatch``
  evaluated on the response item's own fields (after set-properties). Locks: the first
  lock-orientation rule selecting an item gives its free axes. Exclusions never apply
  between units of one refId. A box holding a pack-as-is item holds only that unit, at
  exactly its dimensions, priced by ``boxTypeDefaults``.

- **Open spaces** (internal-space ``blocking: false``). Another item of the box holding
  the item may meet it only within its space, clear of what the space holds; the box's
  ``volumeNet`` counts the item's volume less its space's.

- **Nesting** (``ignoreSubspaces``). A box with ``subspace`` lies inside the item it
  names. Rules with ``ignoreSubspaces: true`` are judged on direct relations only; with
  false or absent, exclusions also hold between items of one shipped box at any depth
  (neither inside the other) and between an item and every box it is inside, fragile
  loads add up through the items an item is inside, and locks hold for the turn
  composed through them (a reduced box's item is the box along its own axes; an
  internal space lies along its item's).

- **layFlat / interlock.** A packed item lies flat when its x (height) is its smallest
  side; a lock-orientation rule that allows no flat turn wins. Under interlock an item's
  layer is floor(base height / its own height): even layers have the longer horizontal
  side along z, odd ones along y (items locked to one footprint are exempt).

- **Sequences.** A sequence is numeric when it is, trimmed, an optional sign, digits and
  an optional decimal part; ``maxSequenceDistance`` bounds the spread of the numeric ones
  in each box and leaves the others free.
- **Unit ladders** (``dimensionSets``): the first rung is the each (the item set's own
  dimensions and weight unless given); a later rung holds ``quantityDivisor`` eaches
  (default: the product of ``axisMultipliers``), measures ``dimensions`` (default: the
  each's times the multipliers) and weighs ``weight`` (default: the each's times the
  divisor). The quantity is taken greedily, most eaches per unit first; an Item's
  ``quantity`` is the eaches it holds.
- **Virtual items** take space and weight in their box but count in no ``len*`` figure.
- **Centre of mass.** A box's ``centerOfMass`` is the weight-weighted mean of its items'
  (volume-weighted when they weigh nothing); an item's lies within it, and with a given
  ``centerOfMass`` (an offset from the back-bottom corner) it is that offset turned with
  the item: along each axis the given offset or the side minus it.
- **Points.** The schema's Point requires no axis, and the service reads a missing one as
  0 (so ``centerOfMass: {}`` is the back-bottom corner, not "none given"; only a missing
  or null ``centerOfMass`` is): every point here is read that way (``_vec``).

- **Derived figures and echoes.** A box's ``volumeRemaining``, ``volumeUtilization``,
  ``weightNet``, ``weightRemaining``, ``weightUtilization``, ``lenUnits`` and ``id``, and
  the response's ``totalVolumeUsed`` and ``totalVolumeUtilization``, follow from the
  figures they derive from (check_derived_figures); ``dimensionalWeight`` and
  ``dimensionalWeightUsed`` from an explicit ``dimFactor``. Echoes are judged where the
  response gives them (converted answers of other packers give few): the request's
  ``orderId``, ``requestId`` and ``properties``; a box's type ``name`` (a pre-packed
  box's ``refId`` and ``name``, a pack-as-is rule's carton "pack-as-is <item name or
  refId>"); an item's set ``name`` (plus a group-pack ``nameSuffix``), ``sequence`` and
  ``properties``. Packed items' indices run 1..n. An item whose set gives no
  ``centerOfMass`` has it in its middle. A box's items' ``deltaCost`` add up to its
  ``price``. With ``totalVolume`` 0 (no box) ``totalVolumeUtilization`` is 0 (0 / 0 read
  as nothing used, as the service answers).
- **packedIndex** (reference.md: the unit's position in the winning sort) is an integer
  >= 0 where given. Without packing in parts (one sort of every new unit) the packed
  units' indices are distinct and below the number of new units (those with a
  packedIndex plus the leftovers); bounded-fill units (packed after the rest, each
  after every unit before it) may be the only part, and then follow the other units.
  Not checked: that the order follows ``itemSortUsed``
  (clustered, block, layer and search strategies and ties keep it from being a plain
  sort), nor indices in packs in parts (each part sorts its own units).
- **Leftovers.** A leftover that fits alone into an empty box (as its lock allows,
  lying flat under layFlat, and under interlock with its longer horizontal side along z
  as on the floor layer; a bounded-fill unit as given; on the engine's grid so an exact
  fit counts; within weightMax, reservedSpace and propertyConstraints; outside its
  exclude rules' target boxes) is a violation, it was packable, when the box is of a
  requested type, the unit's own pack-as-is generator carton, or a size a cartesian
  generator surely offers (its lists, range ends and increments, clear of its limits,
  when all its sizes fit the cap; when they do not, the sizes of the response's boxes
  only it can have made, a sampled size or one trimmed from it; not with
  fitForFirstItem), and the count caps allow one more box holding it: fewer shipped
  boxes than boxesMax, fewer boxes holding its refId (its sequence) than
  boxesPerItemSetMax (boxesPerSequenceMax). Weight and reserved space must fit clearly
  (a unit on its box's weight limit is not judged). Packs in parts: under bounded-fill
  every unit is judged (the other units pack as without the rule; fill units no box
  takes pack on their own, as given), under group-pack the units of item sets no
  group-pack rule selects (a group that found no box comes back as units that may each
  fit); pack-sequence (a stage takes only its target boxes, reduced boxes carry their
  contents) and internal-space (a host's contents are left over with it) are not
  judged, nor boxTypeSets without boxTypes (the account's cartons), nor generated boxes
  for a unit an exclude rule with box targets selects, nor sampled sizes in a pack in
  parts (each part generates for its own items).

Later rules are added as further functions in ``CHECKS``.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

# The one tolerance: relative to the size of what is compared (box size for geometry,
# weightMax for weight, the larger magnitude for totals). Wire values are floats such as
# 4.6000000000000005, so exact comparison would reject correct packs.
EPS = 1e-6
#: The engine's length unit: a box's sides are rounded down to multiples of it.
GRID = 1e-4

AXES = ("x", "y", "z")

Vec = tuple[float, float, float]
Vec2 = tuple[float, float]
Shape = tuple[Vec, float]  # sorted dimensions and weight: what identifies an item set
Wire = Mapping[str, Any]


@dataclass(frozen=True)
class Item:
    """One Item of the response: packed into ``box`` (its position) or a leftover."""

    box: int | None
    index: int | None
    ref_id: int | None
    unique_id: str | None
    origin: Vec | None
    dims: Vec
    weight: float
    units: int
    wire: Wire
    sequence: str | None = None
    virtual: bool = False

    @property
    def label(self) -> str:
        """Where to find the item in the response, for messages."""
        where = f"box {self.box}" if self.box is not None else "leftover"
        return f"{where} item {self.index} (refId {self.ref_id})"


@dataclass(frozen=True)
class Box:
    """One packed box of the response; ``position`` is its place in ``boxes``."""

    position: int
    wire: Wire
    dims: Vec
    items: list[Item]


@dataclass(frozen=True)
class ItemSetGroup:
    """Requested item sets that answer to one refId (or to one auto-id shape)."""

    label: str
    shapes: list[Shape]  # of each set in the group
    quantity: int
    sets: list[Wire]  # the item sets themselves


@dataclass(frozen=True)
class PackView:
    """Request and response, parsed once for all checks."""

    request: Wire
    response: Wire
    boxes: list[Box]
    leftovers: list[Item]
    explicit: dict[int, ItemSetGroup]
    auto: list[ItemSetGroup]
    # The item sets as the request gives them (random ones drawn), before rolls replace
    # any: box type generators size boxes from these.
    given_item_sets: tuple[Wire, ...] = ()

    @property
    def items(self) -> Iterator[Item]:
        """Every Item of the response, packed first, then leftovers."""
        for box in self.boxes:
            yield from box.items
        yield from self.leftovers

    def group_of(self, item: Item) -> ItemSetGroup | None:
        """The requested item sets this item belongs to, or None if it matches none."""
        if item.ref_id is not None and item.ref_id in self.explicit:
            return self.explicit[item.ref_id]
        shape = (sorted_dims(item.dims), item.weight)
        found = next((g for g in self.auto if any(_same_shape(shape, s) for s in g.shapes)), None)
        if found is None:
            # A unit in an alternate shape (alternate-dimensions) keeps its weight.
            found = next(
                (
                    g
                    for g in self.auto
                    for s in g.sets
                    if _close(item.weight, float(s.get("weight", 0.0)))
                    and any(
                        _same_dims(shape[0], sorted_dims(alt))
                        for alt in _alternate_shapes(self, item, [s])
                    )
                ),
                None,
            )
        if found is None and _fill_rule(self, item.wire) is not None:
            # A bounded-fill unit keeps only its volume (and weight).
            found = next(
                (
                    g
                    for g in self.auto
                    if any(
                        _close(_volume(item.dims), _volume(d)) and _close(item.weight, w)
                        for d, w in g.shapes
                    )
                ),
                None,
            )
        return found


Check = Callable[[PackView], Iterator[str]]


def validate(request: Wire, response: Wire) -> list[str]:
    """Return every rule the response breaks for this request; an empty list means valid."""
    problems = list(check_structure(response))
    if problems:
        # The other checks assume a well-formed response; report the shape first.
        return problems
    drawn = _properties_set(_random_drawn(request))
    view = _parse(_rolled(drawn), response, drawn.get("itemSets") or [])
    return [problem for check in CHECKS for problem in check(view)]


def _random_drawn(request: Wire) -> Wire:
    """A seeded ``random: true`` request with the item sets it draws (docs/decisions.md:
    Python's Mersenne Twister seeded by seedValue, default 1, or with seedFromOrderId the
    CRC-32 of a non-blank orderId; per refId 0..n-1 three sides 1..randomMaxDimension, a
    weight 1..randomMaxWeight (0 when that is 0), a quantity 1..randomMaxQuantity when
    given, else n). Unseeded draws cannot be known: only their consistency is checked."""
    if not request.get("random"):
        return request
    if request.get("seed") is False:
        return {**request, "itemSets": []}  # replaced by draws nobody can repeat
    seed = request.get("seedValue")
    seed = 1 if seed is None else int(seed)
    order_id = request.get("orderId")
    if request.get("seedFromOrderId") and isinstance(order_id, str) and order_id.strip():
        seed = zlib.crc32(order_id.encode("utf-8"))
    rng = random.Random(seed)
    n = int(given_n) if (given_n := request.get("n")) is not None else 5
    most_side = int(request.get("randomMaxDimension") or 10)
    most_weight = request.get("randomMaxWeight")
    most_weight = 10 if most_weight is None else int(most_weight)
    most_quantity = request.get("randomMaxQuantity")
    item_sets = []
    for ref_id in range(n):
        sides = [rng.randint(1, most_side) for _ in range(3)]
        weight = rng.randint(1, most_weight) if most_weight > 0 else 0
        quantity = n if most_quantity is None else rng.randint(1, int(most_quantity))
        item_sets.append(
            {
                "refId": ref_id,
                "name": f"random item {ref_id}",
                "dimensions": dict(zip(AXES, map(float, sides), strict=True)),
                "weight": weight,
                "quantity": quantity,
            }
        )
    return {**request, "random": False, "itemSets": item_sets}


def _properties_set(request: Wire) -> Wire:
    """The request with every set-properties rule applied to the item sets it selects, in
    request order, before any other rule (keys present stay unless ``overwrite``)."""
    rules = [r for r in request.get("rules") or [] if r.get("operation") == "set-properties"]
    if not rules:
        return request
    item_sets = [dict(s) for s in request.get("itemSets") or []]
    for rule in rules:
        options = rule.get("options") or {}
        for item_set in item_sets:
            if not _selects(rule, item_set):
                continue
            properties = dict(item_set.get("properties") or {})
            for key, value in (options.get("properties") or {}).items():
                if options.get("overwrite") or key not in properties:
                    properties[key] = value
            item_set["properties"] = properties
    return {**request, "itemSets": item_sets}


def _rolled(request: Wire) -> Wire:
    """The request with item sets an irregular (roll) rule selects replaced by their rolls:
    each unit's length (longest side) wound on the core into the fewest equal rolls within
    maxDiameter and maxWeight; a roll is D x D x width and weighs its share plus spool."""
    rules = [r for r in request.get("rules") or [] if r.get("operation") == "irregular"]
    if not rules:
        return request
    item_sets = []
    for item_set in request.get("itemSets") or []:
        rule = next((r for r in rules if _selects(r, item_set)), None)
        if rule is None or item_set.get("dimensionSets"):
            item_sets.append(item_set)  # a unit-of-measure ladder is not rolled
            continue
        options = rule.get("options") or {}
        thickness, width, length = sorted(_vec(item_set["dimensions"]))
        core = float(options.get("innerDiameter", 0))
        spool = float(options.get("spoolWeight", 0))
        per_length = float(item_set.get("weight", 0)) / length
        most = math.pi * (float(options["maxDiameter"]) ** 2 - core**2) / (4 * thickness)
        if options.get("maxWeight") is not None and per_length > 0:
            most = min(most, (float(options["maxWeight"]) - spool) / per_length)
        rolls = max(1, math.ceil(length / most - 1e-9))
        # Rounded up to thousandths, as documented.
        diameter = (
            math.ceil(math.sqrt(core**2 + 4 * thickness * length / rolls / math.pi) * 1000) / 1000
        )
        rolled = {k: v for k, v in item_set.items() if k != "centerOfMass"}  # centred
        item_sets.append(
            {
                **rolled,
                "dimensions": {"x": diameter, "y": diameter, "z": width},
                "weight": per_length * length / rolls + spool,
                "quantity": int(item_set.get("quantity", 1)) * rolls,
            }
        )
    return {**request, "itemSets": item_sets}


# --- numbers ---------------------------------------------------------------------------


def _is_number(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= EPS * max(1.0, abs(a), abs(b))


def _same_dims(a: Sequence[float], b: Sequence[float]) -> bool:
    return all(_close(u, v) for u, v in zip(a, b, strict=True))


def sorted_dims(dims: Vec) -> Vec:
    """Dimensions in ascending order: equal for every rotation of one item."""
    a, b, c = sorted(dims)
    return (a, b, c)


def _vec(point: Wire) -> Vec:
    """A Point as a tuple; a missing axis is 0, as the service reads it."""
    return (float(point.get("x", 0)), float(point.get("y", 0)), float(point.get("z", 0)))


def _volume(dims: Vec) -> float:
    return dims[0] * dims[1] * dims[2]


def _fmt(v: Vec) -> str:
    return "(" + ", ".join(f"{c:g}" for c in v) + ")"


# --- structure -------------------------------------------------------------------------

_RESPONSE_NUMBERS = ("totalVolume", "totalVolumeNet", "totalWeight")
_RESPONSE_INTEGERS = ("lenBoxes", "lenItems", "lenLeftovers", "totalCost")
_BOX_NUMBERS = ("weightMax", "volumeMax", "volumeNet", "weightUsed")


def _point_problems(where: str, name: str, point: object) -> Iterator[str]:
    if not isinstance(point, Mapping) or not all(_is_number(point.get(a)) for a in AXES):
        yield f"structure: {where}: {name} must be a point with numeric x, y, z, got {point!r}"


def _item_problems(where: str, item: object, packed: bool) -> Iterator[str]:
    if not isinstance(item, Mapping):
        yield f"structure: {where}: not an object"
        return
    yield from _point_problems(where, "dimensions", item.get("dimensions"))
    if packed:
        yield from _point_problems(where, "origin", item.get("origin"))
        if not isinstance(item.get("index"), int):
            yield f"structure: {where}: packed item needs an integer index"
    if not isinstance(item.get("refId"), int):
        yield f"structure: {where}: refId must be an integer, got {item.get('refId')!r}"
    if "weight" in item and not _is_number(item["weight"]):
        yield f"structure: {where}: weight must be a number"
    quantity = item.get("quantity", 1)
    if not isinstance(quantity, int) or quantity < 1:
        yield f"structure: {where}: quantity must be a positive integer, got {quantity!r}"


def check_structure(response: Wire) -> Iterator[str]:
    """Fields the other checks read are present and of the right type."""
    for name in _RESPONSE_INTEGERS:
        if not isinstance(response.get(name), int):
            yield f"structure: response.{name} must be an integer, got {response.get(name)!r}"
    for name in _RESPONSE_NUMBERS:
        if not _is_number(response.get(name)):
            yield f"structure: response.{name} must be a number, got {response.get(name)!r}"
    boxes = response.get("boxes")
    if not isinstance(boxes, list):
        yield "structure: response.boxes must be a list"
        boxes = []
    for b, wrapper in enumerate(boxes):
        box = wrapper.get("box") if isinstance(wrapper, Mapping) else None
        if not isinstance(box, Mapping):
            yield f"structure: boxes[{b}] must be an object with a 'box'"
            continue
        yield from _point_problems(f"box {b}", "dimensions", box.get("dimensions"))
        for name in _BOX_NUMBERS:
            if not _is_number(box.get(name)):
                yield f"structure: box {b}: {name} must be a number, got {box.get(name)!r}"
        if not isinstance(box.get("price"), int):
            yield f"structure: box {b}: price must be an integer, got {box.get('price')!r}"
        items = box.get("items", [])
        if not isinstance(items, list):
            yield f"structure: box {b}: items must be a list"
            continue
        for i, entry in enumerate(items):
            item = entry.get("item") if isinstance(entry, Mapping) else None
            yield from _item_problems(f"box {b} items[{i}]", item, packed=True)
    leftovers = response.get("leftovers", [])
    if not isinstance(leftovers, list):
        yield "structure: response.leftovers must be a list"
        leftovers = []
    for i, item in enumerate(leftovers):
        yield from _item_problems(f"leftovers[{i}]", item, packed=False)


# --- parsing ---------------------------------------------------------------------------


def _item(wire: Wire, box: int | None) -> Item:
    origin = wire.get("origin")
    return Item(
        box=box,
        index=wire.get("index"),
        ref_id=wire.get("refId"),
        unique_id=wire.get("uniqueId"),
        origin=_vec(origin) if origin is not None else None,
        dims=_vec(wire["dimensions"]),
        weight=float(wire.get("weight", 0.0)),
        units=int(wire.get("quantity", 1)),
        sequence=wire.get("sequence"),
        virtual=bool(wire.get("virtual", False)),
        wire=wire,
    )


def _is_auto_ref_id(ref_id: object) -> bool:
    return ref_id is None or ref_id == -1


def _shape(wire: Wire) -> Shape:
    return sorted_dims(_vec(wire["dimensions"])), float(wire.get("weight", 0.0))


def _same_shape(a: Shape, b: Shape) -> bool:
    return _same_dims(a[0], b[0]) and _close(a[1], b[1])


def _prepacked_item_sets(request: Wire) -> list[Wire]:
    """The items of the request's pre-packed boxes, each an item set of its quantity."""
    return [
        {**entry["item"], "quantity": int(entry["item"].get("quantity") or 1)}
        for box in request.get("boxes") or []
        for entry in box.get("items") or []
    ]


def _requested_units(request: Wire) -> int:
    item_sets = [*(request.get("itemSets") or []), *_prepacked_item_sets(request)]
    return sum(int(s.get("quantity", 1)) for s in item_sets if not s.get("virtual"))


def _item_set_groups(request: Wire) -> tuple[dict[int, ItemSetGroup], list[ItemSetGroup]]:
    explicit: dict[int, list[Wire]] = defaultdict(list)
    auto: list[list[Wire]] = []  # pools of auto-id sets sharing one shape
    for item_set in [*(request.get("itemSets") or []), *_prepacked_item_sets(request)]:
        ref_id = item_set.get("refId")
        if not _is_auto_ref_id(ref_id):
            explicit[ref_id].append(item_set)
            continue
        # Auto-id units are told apart by shape only: sets sharing any unit shape (an
        # each, or a rung of a unit ladder) are one pool, and a set sharing shapes with
        # several pools joins them into one.
        shapes = [shape for shape, _ in _unit_shapes(item_set)]
        sharing = [
            n
            for n, p in enumerate(auto)
            if any(
                _same_shape(mine, theirs)
                for mine in shapes
                for other in p
                for theirs, _ in _unit_shapes(other)
            )
        ]
        if not sharing:
            auto.append([item_set])
            continue
        first = sharing[0]
        for n in sharing[1:]:
            auto[first].extend(auto[n])
        auto[first].append(item_set)
        for n in reversed(sharing[1:]):
            del auto[n]

    def group(label: str, sets: list[Wire]) -> ItemSetGroup:
        return ItemSetGroup(
            label=label,
            shapes=[shape for s in sets for shape, _ in _unit_shapes(s)],
            quantity=sum(int(s.get("quantity", 1)) for s in sets),
            sets=sets,
        )

    return (
        {ref_id: group(f"refId {ref_id}", sets) for ref_id, sets in explicit.items()},
        # Labels are count keys, so they carry the pool number to stay unique.
        [
            group(f"auto-id #{n} {_fmt(_shape(p[0])[0])} weight {_shape(p[0])[1]:g}", p)
            for n, p in enumerate(auto)
        ],
    )


def _parse(request: Wire, response: Wire, given: Sequence[Wire] = ()) -> PackView:
    boxes = []
    for position, wrapper in enumerate(response["boxes"]):
        box = wrapper["box"]
        items = [_item(entry["item"], position) for entry in box.get("items", [])]
        boxes.append(Box(position, box, _vec(box["dimensions"]), items))
    explicit, auto = _item_set_groups(request)
    return PackView(
        request=request,
        response=response,
        boxes=boxes,
        leftovers=[_item(wire, None) for wire in response.get("leftovers", [])],
        explicit=explicit,
        auto=auto,
        given_item_sets=tuple(given or request.get("itemSets") or []),
    )


# --- geometry --------------------------------------------------------------------------


def check_inside_box(view: PackView) -> Iterator[str]:
    """Every packed item lies within its box: origin >= 0 and origin + dims <= box dims."""
    for box in view.boxes:
        tol = EPS * max(box.dims)
        for item in box.items:
            assert item.origin is not None  # check_structure guarantees it for packed items
            for axis, o, d, limit in zip(AXES, item.origin, item.dims, box.dims, strict=True):
                if d <= 0:
                    yield f"inside: {item.label}: non-positive size {d:g} along {axis}"
                if o < -tol or o + d > limit + tol:
                    yield (
                        f"inside: {item.label}: spans {o:g}..{o + d:g} along {axis}, "
                        f"outside the box's 0..{limit:g}"
                    )


def _overlap(a: Item, b: Item, tol: float) -> bool:
    assert a.origin is not None and b.origin is not None
    return all(
        min(oa + da, ob + db) - max(oa, ob) > tol
        for oa, da, ob, db in zip(a.origin, a.dims, b.origin, b.dims, strict=True)
    )


def _open_space(view: PackView, box: Box, item: Item) -> tuple[Vec, Vec] | None:
    """The box-local (origin, dims) of ``item``'s internal space when its rule says
    ``blocking: false``: the box's other items may then use what the space's own
    contents leave free."""
    if item.origin is None or not _hosts_subspaces(view, item.wire):
        return None
    rule = next(
        (
            r
            for r in view.request.get("rules") or []
            if r.get("operation") == "internal-space" and _selects(r, item.wire)
        ),
        None,
    )
    options = (rule or {}).get("options") or {}
    if options.get("blocking", True) is not False:
        return None
    o = options.get("origin") or {}
    at = tuple(item.origin[a] + float(o.get(AXES[a], 0)) for a in range(3))
    return (at[0], at[1], at[2]), _vec(options["boxType"]["dimensions"])


def _occupied_volume(view: PackView, box: Box, item: Item) -> float:
    """The volume ``item`` takes in ``box``: all of it, less an open space's."""
    space = _open_space(view, box, item)
    return _volume(item.dims) - (_volume(space[1]) if space else 0.0)


def _space_contents(view: PackView, box: Box, item: Item) -> list[tuple[Vec, Vec]]:
    """The items in ``item``'s internal space, as box-local (origin, dims) in ``box``."""
    out: list[tuple[Vec, Vec]] = []
    for inner in view.boxes:
        subspace = inner.wire.get("subspace") or {}
        if (
            subspace.get("parentBoxIndex") != box.wire.get("id")
            or subspace.get("parentItemIndex") != item.index
            or subspace.get("originInParent") is None
        ):
            continue
        at = _vec(subspace["originInParent"])
        for i in inner.items:
            if i.origin is not None:
                out.append(
                    ((at[0] + i.origin[0], at[1] + i.origin[1], at[2] + i.origin[2]), i.dims)
                )
    return out


def _meet(a: tuple[Vec, Vec], b: tuple[Vec, Vec], tol: float) -> bool:
    return all(
        min(a[0][k] + a[1][k], b[0][k] + b[1][k]) - max(a[0][k], b[0][k]) > tol for k in range(3)
    )


def _within_open_space(view: PackView, box: Box, host: Item, other: Item, tol: float) -> bool:
    """``other`` meets ``host`` only inside host's open space, clear of what it holds."""
    space = _open_space(view, box, host)
    if space is None or host.origin is None or other.origin is None:
        return False
    for k in range(3):
        lo = max(host.origin[k], other.origin[k])
        hi = min(host.origin[k] + host.dims[k], other.origin[k] + other.dims[k])
        if lo < space[0][k] - tol or hi > space[0][k] + space[1][k] + tol:
            return False
    mine = (other.origin, other.dims)
    return not any(_meet(mine, c, tol) for c in _space_contents(view, box, host))


def check_no_overlap(view: PackView) -> Iterator[str]:
    """No two items in one box share a positive volume, except that an item may use
    what an open space (internal-space ``blocking: false``) of another leaves free."""
    for box in view.boxes:
        tol = EPS * max(box.dims)
        # Sweep along x: only items whose x-spans meet can overlap, which keeps boxes of
        # hundreds of items fast without a spatial index.
        items = sorted(box.items, key=lambda it: it.origin[0] if it.origin else 0.0)
        for i, a in enumerate(items):
            assert a.origin is not None
            end = a.origin[0] + a.dims[0]
            for b in items[i + 1 :]:
                assert b.origin is not None
                if b.origin[0] >= end - tol:
                    break
                if _overlap(a, b, tol) and not (
                    _within_open_space(view, box, a, b, tol)
                    or _within_open_space(view, box, b, a, tol)
                ):
                    yield (
                        f"overlap: box {box.position} items {a.index} and {b.index}: "
                        f"{_fmt(a.origin)}+{_fmt(a.dims)} meets {_fmt(b.origin)}+{_fmt(b.dims)}"
                    )


def _covered(whole: tuple[Vec2, Vec2], parts: list[tuple[Vec2, Vec2]], tol: float) -> bool:
    """True when the rectangles ``parts`` (each ((lo, hi) along y, (lo, hi) along z), inside
    ``whole``) leave no gap wider than ``tol`` in ``whole``."""
    edges = sorted({whole[0][0], whole[0][1], *(e for p in parts for e in p[0])})
    for lo, hi in itertools.pairwise(edges):
        if hi - lo <= tol:
            continue
        spans = sorted(p[1] for p in parts if p[0][0] <= lo + tol and p[0][1] >= hi - tol)
        reached = whole[1][0]
        for start, end in spans:
            if start > reached + tol:
                break
            reached = max(reached, end)
        if reached < whole[1][1] - tol:
            return False
    return True


def check_support(view: PackView) -> Iterator[str]:
    """With ``allowableOverhang`` a >= 0, an item above the floor touches the top of some
    item directly beneath it, and every point of its base lies within a (along y and
    along z) of such tops: it overhangs its support by at most a on every side. The units
    of a group-pack group are one item (the case packs as one): the group needs support,
    not each unit of its bottom layer. A pre-packed box's given items stand as the
    request puts them (docs/decisions.md: refused only for not fitting, overlapping or
    weight), but support what rests on them. Support is the engine's, on its grid: an item below
    reserves its sides rounded up to a step (docs/decisions.md), so its reported top and
    sides may fall short of what it holds up by that rounding (``_grid_reach``)."""
    allowance = view.request.get("allowableOverhang")
    if not _is_number(allowance) or allowance < 0:
        return
    for box in view.boxes:
        tol = EPS * max(box.dims)
        noise = 1e-9 * max(1.0, *box.dims)
        reach = _grid_reach(view, box)
        items = _counted_items(box)
        by_top = sorted(items, key=lambda it: it.origin[0] + it.dims[0] if it.origin else 0.0)
        tops = [it.origin[0] + it.dims[0] if it.origin else 0.0 for it in by_top]
        for item in items:
            assert item.origin is not None
            base = item.origin[0]
            if base <= tol or _given_prepacked(view, item):
                continue  # on the floor, or a pre-packed box's contents as given
            y0, z0 = item.origin[1], item.origin[2]
            y1, z1 = y0 + item.dims[1], z0 + item.dims[2]
            touching = False
            parts: list[tuple[Vec2, Vec2]] = []
            lo = bisect.bisect_left(tops, base - GRID - tol)
            hi = bisect.bisect_right(tops, base + tol)
            for other in by_top[lo:hi]:
                assert other.origin is not None
                up, across, along = (reach(other, a) for a in range(3))
                if up is not None and base - (other.origin[0] + other.dims[0]) > up + noise:
                    continue  # its top is below the item's base
                oy0, oz0 = other.origin[1], other.origin[2]
                oy1 = oy0 + other.dims[1] + (GRID if across is None else across)
                oz1 = oz0 + other.dims[2] + (GRID if along is None else along)
                if min(y1, oy1) - max(y0, oy0) > tol and min(z1, oz1) - max(z0, oz0) > tol:
                    touching = True
                part = (
                    (max(y0, oy0 - allowance), min(y1, oy1 + allowance)),
                    (max(z0, oz0 - allowance), min(z1, oz1 + allowance)),
                )
                if part[0][1] - part[0][0] > tol and part[1][1] - part[1][0] > tol:
                    parts.append(part)
            if not touching:
                yield f"support: {item.label}: rests on nothing at height {base:g}"
            elif not _covered(((y0, y1), (z0, z1)), parts, tol):
                yield (
                    f"support: {item.label} at {_fmt(item.origin)} size {_fmt(item.dims)}: "
                    f"overhangs its support by more than allowableOverhang {allowance:g}"
                )


# --- items against their item sets -----------------------------------------------------


def check_rotation(view: PackView) -> Iterator[str]:
    """Each item's dimensions are a permutation of its item set's dimensions."""
    if view.request.get("random"):
        return  # check_random_consistency covers invented items
    carriers = _box_carriers(view)
    for item in view.items:
        group = view.group_of(item)
        if item.index in carriers:
            continue  # a box of an earlier pack-sequence stage; check_pack_sequence judges it
        if _fill_rule(view, item.wire) is not None:
            continue  # a bounded-fill unit takes the shape of its space; check_bounded_fill
        if group is None:
            yield (
                f"rotation: {item.label}: no requested item set has refId {item.ref_id} "
                f"or dimensions {_fmt(item.dims)}"
            )
            continue
        alternates = list(_alternates(view, item, item.dims))
        # replaceOriginal drops the item's own dimensions for its alternates.
        own = [] if _replaces_original(view, item, alternates) else [d for d, _ in group.shapes]
        if not any(
            _same_dims(sorted_dims(item.dims), sorted_dims(dims)) for dims in own + alternates
        ):
            wanted = " or ".join(_fmt(dims) for dims in own + alternates)
            yield (
                f"rotation: {item.label}: dimensions {_fmt(item.dims)} are not a rotation "
                f"of {wanted}"
            )


def _sequence_number(sequence: str | None) -> float | None:
    text = (sequence or "").strip()
    unsigned = text[1:] if text[:1] in ("+", "-") else text
    whole, _, fraction = unsigned.partition(".")
    numeric = whole.isdigit() and (fraction.isdigit() or "." not in unsigned)
    return float(text) if numeric else None


def check_sequence_distance(view: PackView) -> Iterator[str]:
    """maxSequenceDistance: numeric sequences in one box differ by at most the limit."""
    limit = view.request.get("maxSequenceDistance")
    if not isinstance(limit, int) or isinstance(limit, bool):
        return
    for box in view.boxes:
        numbers = [n for item in box.items if (n := _sequence_number(item.sequence)) is not None]
        if numbers and max(numbers) - min(numbers) > limit * (1 + EPS):
            yield (
                f"sequence: box {box.position}: sequences {min(numbers):g}..{max(numbers):g} "
                f"differ by more than maxSequenceDistance {limit}"
            )


def check_random_consistency(view: PackView) -> Iterator[str]:
    """With random items, all units of one refId share one shape and weight, sides stay
    within randomMaxDimension, and every refId has the same count n (unless
    randomMaxQuantity varies it)."""
    if not view.request.get("random"):
        return
    max_side = float(view.request.get("randomMaxDimension") or 10)
    shapes: dict[object, Shape] = {}
    counts: dict[object, int] = defaultdict(int)
    for item in view.items:
        shape = (sorted_dims(item.dims), item.weight)
        first = shapes.setdefault(item.ref_id, shape)
        if not _same_shape(first, shape):
            yield f"random: {item.label}: differs from other units of refId {item.ref_id}"
        if max(item.dims) > max_side * (1 + EPS):
            yield f"random: {item.label}: a side exceeds randomMaxDimension {max_side:g}"
        counts[item.ref_id] += item.units
    n = view.request.get("n", 5)
    if view.request.get("randomMaxQuantity") is None:
        wrong = {ref: c for ref, c in counts.items() if c != n}
        if wrong or len(counts) != n:
            yield f"random: expected {n} refIds of {n} units each, got {dict(counts)}"


def check_item_weight(view: PackView) -> Iterator[str]:
    """Each item weighs what its item set says (box weight checks rely on it)."""
    hosts = {
        _parent_item(view, box).index  # type: ignore[union-attr]
        for box in view.boxes
        if _space_rule(view, box) is not None
    }
    for item in view.items:
        group = view.group_of(item)
        if item.box is not None and item.index in hosts:
            continue  # carries its subspace's contents; check_internal_space judges it
        if group is not None and not any(_close(item.weight, w) for _, w in group.shapes):
            wanted = " or ".join(f"{w:g}" for _, w in group.shapes)
            yield f"item-weight: {item.label}: weight {item.weight:g}, item set says {wanted}"


def check_units(view: PackView) -> Iterator[str]:
    """Every requested unit appears exactly once, packed or leftover."""
    if view.request.get("random"):
        return  # the engine invents the items; there is nothing to count against
    packed: dict[str, int] = defaultdict(int)
    leftover: dict[str, int] = defaultdict(int)
    carriers = _box_carriers(view)
    for item in view.items:
        if item.index is not None and item.index in carriers:
            continue  # a box reduced to an item (pack-sequence), whatever shape it shares
        group = view.group_of(item)
        if group is None:
            continue  # check_rotation reports items that match no item set
        (packed if item.box is not None else leftover)[group.label] += item.units
    for group in [*view.explicit.values(), *view.auto]:
        got = packed[group.label] + leftover[group.label]
        if got != group.quantity:
            kind = "missing" if got < group.quantity else "duplicated"
            yield (
                f"units: item set {group.label}: requested {group.quantity}, found "
                f"{packed[group.label]} packed + {leftover[group.label]} leftover "
                f"({abs(got - group.quantity)} {kind})"
            )


def check_identifiers(view: PackView) -> Iterator[str]:
    """Item indices are unique in the response and the packed items' run 1..n
    (docs/decisions.md: from 1 across the whole response, 0 being the box outline);
    uniqueIds are unique and "<refId>-<n>"."""
    packed = sorted(i.index for b in view.boxes for i in b.items if isinstance(i.index, int))
    if packed != list(range(1, len(packed) + 1)):
        gaps = sorted(set(range(1, len(packed) + 1)) - set(packed))
        yield f"index: the packed items' indices do not run 1..{len(packed)} (missing {gaps[:5]})"
    seen_index: dict[int, str] = {}
    seen_unique: dict[str, str] = {}
    for item in view.items:
        if item.index is not None:
            if item.index in seen_index:
                yield f"index: {item.label}: index also used by {seen_index[item.index]}"
            seen_index.setdefault(item.index, item.label)
        if item.unique_id is None:
            continue
        if item.unique_id in seen_unique:
            yield (
                f"index: {item.label}: uniqueId {item.unique_id!r} also used by "
                f"{seen_unique[item.unique_id]}"
            )
        seen_unique.setdefault(item.unique_id, item.label)
        prefix, _, n = item.unique_id.rpartition("-")
        if prefix != str(item.ref_id) or not n.isdigit():
            yield f"index: {item.label}: uniqueId {item.unique_id!r} is not '<refId>-<n>'"


# --- boxes -----------------------------------------------------------------------------


def check_box_weight(view: PackView) -> Iterator[str]:
    """Gross weight (items + tare) stays within weightMax when weightMax > 0."""
    for box in view.boxes:
        limit = float(box.wire["weightMax"])
        if limit <= 0:
            continue  # 0 means no weight limit
        gross = sum(item.weight for item in box.items) + float(box.wire.get("weightTare", 0.0))
        if gross > limit + EPS * max(1.0, limit):
            yield f"box-weight: box {box.position}: gross weight {gross:g} > weightMax {limit:g}"


def _completed(own: Wire, defaults: Wire) -> dict[str, Any]:
    """``own`` with the fields it leaves unset taken from ``defaults``; nested objects
    (rateTable, outer) are completed field by field."""
    out = dict(defaults)
    for key, value in own.items():
        inherited = defaults.get(key)
        if isinstance(value, Mapping) and isinstance(inherited, Mapping):
            value = _completed(value, inherited)
        out[key] = value
    return out


def _box_types(request: Wire) -> list[dict[str, Any]]:
    defaults = request.get("boxTypeDefaults") or {}
    return [_completed(box_type, defaults) for box_type in request.get("boxTypes") or []]


def _prepacked_box_type(request: Wire, position: int) -> dict[str, Any]:
    """The type of pre-packed box ``position``: its boxType, then its own fields, then
    boxTypeDefaults."""
    box = request["boxes"][position]
    own = {k: v for k, v in box.items() if k not in ("items", "boxType", "id")}
    return _completed(
        box.get("boxType") or {}, _completed(own, request.get("boxTypeDefaults") or {})
    )


def _matching_box_type(view: PackView, box: Box) -> dict[str, Any] | None:
    """The type of ``box``: a pre-packed box's own, a pack-as-is carton (the item's own
    dimensions, priced by boxTypeDefaults, no reserved space), the requested box type of
    its refId and dimensions, else the generator whose boxes it looks like."""
    request = view.request
    if box.position < len(request.get("boxes") or []):
        return _prepacked_box_type(request, box.position)
    defaults = request.get("boxTypeDefaults") or {}
    if _is_as_is_box(view, box):
        priced = {k: defaults[k] for k in ("price", "rateTable") if k in defaults}
        return {"dimensions": box.wire["dimensions"], "weightMax": 0, "reservedSpace": 0, **priced}
    ref_id = box.wire.get("refId")
    # A box echoes its type's refId (or has none when its type has none). Types alike in
    # both are told apart by the figures the box echoes (weightMax, weightTare, name).
    alike = [
        box_type
        for box_type in _box_types(request)
        if box_type.get("refId") == ref_id and _same_dims(_vec(box_type["dimensions"]), box.dims)
    ]
    # Its echo of its type (`boxType`) tells apart types alike in all those, say with and
    # without a reservedSpace, where it gives them.
    alike = [t for t in alike if _type_echoed(box, t)] or alike
    # Types alike in all those too may differ in price: the one the box's price is.
    for strict in (True, False):
        echoing = [t for t in alike if _echoes_type(box, t, strict)]
        if echoing:
            return next((t for t in echoing if _priced_as(t, box)), echoing[0])
    return alike[0] if alike else _generated_box_type(request, box)


#: Box type fields a box's ``boxType`` echoes as given (the checks read them off the type;
#: propertyConstraints come back completed, with their `aggregate`).
_ECHOED = ("reservedSpace", "itemsPerBoxMax", "itemSetsPerBoxMax", "itemsInlineMax")


def _type_echoed(box: Box, box_type: Wire) -> bool:
    """Whether ``box``'s ``boxType`` (when it has one) agrees with the fields of
    ``_ECHOED`` that ``box_type`` gives."""
    echo = box.wire.get("boxType")
    if not isinstance(echo, dict):
        return True
    return all(echo.get(k) == box_type[k] for k in _ECHOED if box_type.get(k) is not None)


def _priced_as(box_type: Wire, box: Box) -> bool:
    """Whether ``box``'s price is the cost ``box_type`` gives it (within check_box_cost's
    rounding: 1/2, and a grid step per side for a volume)."""
    want, price = _expected_cost(box_type, box), box.wire.get("price")
    if want is None or not _is_number(price):
        return False
    x, y, z = box.dims
    return abs(want - float(price)) <= 0.5 + GRID * (x * y + y * z + x * z)


def _echoes_type(box: Box, box_type: Wire, strict: bool) -> bool:
    """Whether ``box`` carries ``box_type``'s weightMax, weightTare and name (``strict``:
    the box's name is the type's, or both have none; else a box without one will do)."""
    name = box.wire.get("name") if strict else box.wire.get("name", box_type.get("name"))
    return name == box_type.get("name") and all(
        _close(float(box_type.get(field, 0.0)), float(box.wire.get(field, 0.0)))
        for field in ("weightMax", "weightTare")
    )


def _generated_box_type(request: Wire, box: Box) -> dict[str, Any] | None:
    """The type a generator gave ``box`` (its defaults completed by boxTypeDefaults, at
    the box's size): a pack-as-is carton holds one item of exactly its size and reserves
    nothing; a cartesian box has the defaults' name or a "generated ..." one. The first
    such generator's (see ``_generated_box_types`` for all)."""
    return next(iter(_generated_box_types(request, box)), None)


def _generated_box_types(request: Wire, box: Box) -> list[dict[str, Any]]:
    """The types every generator that could have made ``box`` would give it (two
    generators may make boxes of one size and name, with different defaults)."""
    found: list[dict[str, Any]] = []
    for generator in request.get("boxTypeGenerators") or []:
        template = _completed(
            generator.get("boxTypeDefaults") or {}, request.get("boxTypeDefaults") or {}
        )
        named = box.wire.get("name")
        if generator.get("operation") == "pack-as-is":
            if _own_carton_name(request, template, named):
                found.append(
                    {
                        **template,
                        "dimensions": box.wire["dimensions"],
                        "reservedSpace": 0,
                        "itemsPerBoxMax": 1,
                    }
                )
        elif named == template.get("name") or (
            "name" not in template and (named or "").startswith("generated ")
        ):
            found.append({**template, "dimensions": box.wire["dimensions"]})
    return found


def _own_carton_name(request: Wire, template: Wire, named: str | None) -> bool:
    """Whether a box of that name is a carton of the pack-as-is generator with
    ``template``: the template's name (when no cartesian generator's boxes share it), else
    "as-is <item name or position>"."""
    if named is None:
        return False
    own = template.get("name")
    if own is None:
        return named.startswith("as-is ")
    defaults = request.get("boxTypeDefaults") or {}
    return named == own and not any(
        g.get("operation") != "pack-as-is"
        and _completed(g.get("boxTypeDefaults") or {}, defaults).get("name") == own
        for g in request.get("boxTypeGenerators") or []
    )


def _is_own_carton(view: PackView, box: Box) -> bool:
    """Whether ``box`` is a carton a pack-as-is generator made (one unit's own packaging),
    not a requested box type nor a pack-as-is rule's box."""
    request = view.request
    if box.position < len(request.get("boxes") or []) or _is_as_is_box(view, box):
        return False
    ref_id = box.wire.get("refId")
    if any(
        t.get("refId") == ref_id and _same_dims(_vec(t["dimensions"]), box.dims)
        for t in _box_types(request)
    ):
        return False
    defaults = request.get("boxTypeDefaults") or {}
    return any(
        g.get("operation") == "pack-as-is"
        and _own_carton_name(
            request, _completed(g.get("boxTypeDefaults") or {}, defaults), box.wire.get("name")
        )
        for g in request.get("boxTypeGenerators") or []
    )


def check_box_type(view: PackView) -> Iterator[str]:
    """Each box is one of the requested box types (same dimensions, weightMax and tare,
    and, where the box gives one, the type's name) or a generator's (check_generated_boxes judges
    those)."""
    if not view.request.get("boxTypes"):
        # Nothing to compare with (boxTypeSets' account cartons are not in the request;
        # boxTypes given override boxTypeSets, docs/decisions.md).
        return
    for box in view.boxes[len(view.request.get("boxes") or []) :]:
        if _is_as_is_box(view, box) or _space_rule(view, box) is not None:
            continue  # check_pack_as_is and check_internal_space judge these
        if _is_generated(view, box):
            continue
        box_type = _matching_box_type(view, box)
        if box_type is None:
            yield (
                f"box-type: box {box.position}: no requested box type with refId "
                f"{box.wire.get('refId')} and dimensions {_fmt(box.dims)}"
            )
            continue
        for name in ("weightMax", "weightTare"):
            want, got = float(box_type.get(name, 0.0)), float(box.wire.get(name, 0.0))
            if not _close(want, got):
                yield f"box-type: box {box.position}: {name} {got:g}, box type says {want:g}"
        if (
            box_type.get("name") is not None
            and box.wire.get("name", box_type["name"]) != box_type["name"]
        ):
            yield (
                f"box-type: box {box.position}: name {box.wire.get('name')!r}, box type says "
                f"{box_type['name']!r}"
            )


#: A weight at most a billionth above a breakpoint counts as that breakpoint (the engine's
#: BREAKPOINT_SLACK): 20 units of 0.05 weigh 1.0000000000000002, billed as 1.
_BREAKPOINT_TAKES = 1 + 1e-9


def _rate_at(table: Wire, weight: float) -> float | None:
    """A breakpoint or linear table's rate at ``weight``; None for carrier tables."""
    if table.get("weights"):
        # A rate below 0 is taken as 0 (docs/rates.md).
        weights, rates = table["weights"], [max(0.0, float(r)) for r in table["rates"]]
        # The first breakpoint at or above the weight; above the last, the last rate.
        return float(
            next(
                (r for w, r in zip(weights, rates, strict=True) if weight <= w * _BREAKPOINT_TAKES),
                rates[-1],
            )
        )
    if table.get("basePrice") is not None or table.get("priceIncreaseRate") is not None:
        return max(
            0.0,
            float(table.get("basePrice") or 0)
            + float(table.get("priceIncreaseRate") or 0) * weight,
        )
    return None


def _rating_volume(box_type: Wire, box: Box) -> float:
    outer = box_type.get("outer") or {}
    if not box_type.get("outerBasedCost"):
        return _volume(box.dims)
    if outer.get("dimensions"):
        return _volume(_vec(outer["dimensions"]))
    if outer.get("dimensionChange"):
        change = _vec(outer["dimensionChange"])
        return _volume((box.dims[0] + change[0], box.dims[1] + change[1], box.dims[2] + change[2]))
    return _volume(box.dims)


def _expected_cost(box_type: Wire, box: Box) -> float | None:
    """The box's cost from its type: price plus the rate at max(gross, volume / dimFactor),
    the price alone, or the volume; None when the rate comes from a carrier table."""
    fixed, table = box_type.get("price"), box_type.get("rateTable")
    if not table or table.get("carrier") is not None:
        if table and table.get("carrier") is not None:
            return None  # built-in tables are the engine's data; not re-read here
        return float(fixed) if fixed is not None else _volume(box.dims)
    gross = sum(item.weight for item in box.items) + float(box_type.get("weightTare", 0.0))
    factor = table.get("dimFactor")
    weight = max(gross, _rating_volume(box_type, box) / factor) if factor and factor > 0 else gross
    rate = _rate_at(table, weight)
    if rate is None:
        return float(fixed) if fixed is not None else _volume(box.dims)
    return float(fixed or 0) + rate


def check_box_cost(view: PackView) -> Iterator[str]:
    """A box costs its fixed price plus its rate table's rate at the larger of its gross
    and dimensional weight; with neither price nor rate, its volume. Costs are integers,
    so each may differ from the exact figure by rounding (at most 1/2, and for a volume
    also the volume the engine's grid takes off the sides)."""
    for box in view.boxes:
        if _space_rule(view, box) is not None:
            continue  # check_internal_space judges these
        if _is_generated(view, box):
            # check_generated_boxes judges the price; its rating follows the generator's
            # defaults, outer.dimensionChange followed and outer.dimensions ignored.
            # Judged against each generator that could have made it: fine under one is fine.
            problems: list[str] | None = None
            for made in _generated_box_types(view.request, box):
                outer = {k: v for k, v in (made.get("outer") or {}).items() if k != "dimensions"}
                found = list(_dimensional_weight_problems({**made, "outer": outer}, box))
                if problems is None or len(found) < len(problems):
                    problems = found
            yield from problems or []
            continue
        box_type = _matching_box_type(view, box)
        if box_type is None:
            continue
        want = _expected_cost(box_type, box)
        price = box.wire["price"]
        slack = 0.5
        if want is not None and _same_cost(want, _volume(box.dims)):
            # A volume cost is the volume of the box's sides rounded down to the engine's
            # 1/10,000 grid, rounded: up to a grid step per side below the exact figure.
            x, y, z = box.dims
            slack += GRID * (x * y + y * z + x * z)
        if want is not None and abs(price - want) > slack + EPS * max(1.0, want):
            yield f"box-cost: box {box.position}: price {price}, expected {want:g}"
        yield from _dimensional_weight_problems(box_type, box)


def _same_cost(a: float, b: float) -> bool:
    return abs(a - b) <= EPS * max(1.0, abs(a), abs(b))


def _dimensional_weight_problems(box_type: Wire, box: Box) -> Iterator[str]:
    """docs/rates.md: with a ``dimFactor`` > 0 a box reports ``dimensionalWeight`` = its
    rating volume / dimFactor, and with a rate table ``dimensionalWeightUsed`` says
    whether that beat the gross weight (either way on a tie); without a dimFactor none
    was used. A built-in carrier table's own factor is the engine's data: with one, only
    an explicit dimFactor is judged."""
    table = box_type.get("rateTable") or {}
    factor = table.get("dimFactor")
    if not _is_number(factor) or factor <= 0:
        if table.get("carrier") is None and box.wire.get("dimensionalWeightUsed") is True:
            yield (
                f"box-cost: box {box.position}: dimensionalWeightUsed, but no dimFactor "
                "gives a dimensional weight"
            )
        return
    dimensional = _rating_volume(box_type, box) / factor
    got = box.wire.get("dimensionalWeight")
    if got is not None and not (_is_number(got) and _close(got, dimensional)):
        yield f"box-cost: box {box.position}: dimensionalWeight {got!r}, expected {dimensional:g}"
    used = box.wire.get("dimensionalWeightUsed")
    gross = float(box_type.get("weightTare", 0.0)) + sum(item.weight for item in box.items)
    if isinstance(used, bool) and not _close(dimensional, gross) and used != (dimensional > gross):
        yield (
            f"box-cost: box {box.position}: dimensionalWeightUsed {used}, but dimensional "
            f"weight {dimensional:g} vs gross {gross:g}"
        )


def check_box_totals(view: PackView) -> Iterator[str]:
    """volumeMax, volumeNet and weightUsed of each box agree with its contents, and so
    does lenItems (where given): the eaches of the box's own items (not virtual ones, nor
    an item standing for a box) plus those of the boxes nested in it, at every depth."""
    carriers = _box_carriers(view)
    for box in view.boxes:
        tare = float(box.wire.get("weightTare", 0.0))
        expected = {
            "volumeMax": _volume(box.dims),
            "volumeNet": sum(_occupied_volume(view, box, item) for item in box.items),
            "weightUsed": tare + sum(item.weight for item in box.items),
        }
        for name, want in expected.items():
            got = float(box.wire[name])
            if not _close(got, want):
                yield f"box-totals: box {box.position}: {name} {got:g}, expected {want:g}"
        if "lenItems" in box.wire:
            eaches = _eaches_within(view, box, carriers, set())
            if box.wire["lenItems"] != eaches:
                yield (
                    f"box-totals: box {box.position}: lenItems {box.wire['lenItems']}, "
                    f"expected {eaches} (its items and its subspaces' items)"
                )


def _eaches_within(view: PackView, box: Box, carriers: dict[int, Box], seen: set[int]) -> int:
    """The eaches in ``box`` and in the boxes nested in it (``subspace``), however deep."""
    seen.add(box.position)
    own = sum(item.units for item in box.items if not item.virtual and item.index not in carriers)
    nested = sum(
        _eaches_within(view, inner, carriers, seen)
        for inner in view.boxes
        if inner.position not in seen
        and (inner.wire.get("subspace") or {}).get("parentBoxIndex") == box.wire.get("id")
    )
    return own + nested


def _count_limit(value: object) -> int | None:
    """A count limit as the spec reads it: 0, negative and null mean none."""
    return value if isinstance(value, int) and value > 0 else None


def _box_limit(view: PackView, box: Box, name: str) -> object:
    """``name`` of the box's type (its own value, else boxTypeDefaults), else the request's."""
    box_type = _matching_box_type(view, box) or {}
    if box_type.get(name) is not None:
        return box_type[name]
    return view.request.get(name)


def _new_units(view: PackView, box: Box) -> list[Item]:
    """The items of ``box`` this pack put there: all but a pre-packed box's given ones.
    Limits bind what is added to a box: a pre-packed box's given contents count toward
    them but may exceed them, and then it takes nothing (docs/decisions.md)."""
    return [item for item in box.items if not _given_prepacked(view, item)]


def check_box_caps(view: PackView) -> Iterator[str]:
    """itemsPerBoxMax and itemSetsPerBoxMax hold in each box (a box type's own value
    overrides the request's). They count packed units: a case of a unit ladder is one.
    A pre-packed box's given items may exceed them if no unit was added (to the sets,
    no unit of another refId)."""
    for box in view.boxes:
        new = _new_units(view, box)
        items_max = _count_limit(_box_limit(view, box, "itemsPerBoxMax"))
        units = len(_counted_items(box))
        if items_max is not None and units > items_max and new:
            yield f"box-caps: box {box.position}: {units} items > itemsPerBoxMax {items_max}"
        sets_max = _count_limit(_box_limit(view, box, "itemSetsPerBoxMax"))
        ref_ids = {item.ref_id for item in box.items}
        given_ids = {item.ref_id for item in box.items if _given_prepacked(view, item)}
        adds_set = any(item.ref_id not in given_ids for item in new)
        if sets_max is not None and len(ref_ids) > sets_max and adds_set:
            yield (
                f"box-caps: box {box.position}: {len(ref_ids)} refIds "
                f"{sorted(ref_ids, key=lambda r: (r is None, r or 0))} "
                f"> itemSetsPerBoxMax {sets_max}"
            )


def _counted_items(box: Box) -> list[Item]:
    """The box's items as count limits see them: the units of one group-pack group
    (``groupPackParent``) are one item, their bounding box."""
    out: list[Item] = []
    groups: dict[str, list[Item]] = defaultdict(list)
    for item in box.items:
        parent = item.wire.get("groupPackParent")
        if parent is None:
            out.append(item)
        else:
            groups[parent].append(item)
    for units in groups.values():
        lo, hi = _bounds(units)
        dims = (hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2])
        out.append(
            Item(
                units[0].box,
                units[0].index,
                units[0].ref_id,
                None,
                lo,
                dims,
                sum(u.weight for u in units),
                1,
                units[0].wire,
            )
        )
    return out


def _bounds(items: Sequence[Item]) -> tuple[Vec, Vec]:
    """The least and greatest corner of the bounding box of packed ``items``."""
    los = [i.origin for i in items if i.origin is not None]
    his = [
        (i.origin[0] + i.dims[0], i.origin[1] + i.dims[1], i.origin[2] + i.dims[2])
        for i in items
        if i.origin is not None
    ]
    lo = (min(p[0] for p in los), min(p[1] for p in los), min(p[2] for p in los))
    hi = (max(p[0] for p in his), max(p[1] for p in his), max(p[2] for p in his))
    return lo, hi


def _max_depth(rects: list[tuple[Vec2, Vec2]]) -> int:
    """The most open rectangles sharing one point."""
    best = 0
    for u in sorted({r[0][0] for r in rects}):
        events = sorted(
            (edge, step)
            for r in rects
            if r[0][0] <= u < r[0][1]
            for edge, step in ((r[1][0], 1), (r[1][1], -1))
        )
        depth = 0
        for _, step in events:
            depth += step
            best = max(best, depth)
    return best


def check_inline(view: PackView) -> Iterator[str]:
    """itemsInlineMax: no line parallel to axis a crosses more than the axis's limit of
    items (0 = no limit; a box type's own list overrides the request's)."""
    for box in view.boxes:
        limits = _box_limit(view, box, "itemsInlineMax")
        if not isinstance(limits, list) or len(limits) != 3:
            continue
        tol = EPS * max(box.dims)
        for axis, limit in enumerate(limits):
            if not isinstance(limit, int) or limit <= 0:
                continue
            u, v = [a for a in range(3) if a != axis]
            counted = _counted_items(box)
            for item in counted:
                assert item.origin is not None
                lo = (item.origin[u] + tol, item.origin[v] + tol)
                hi = (item.origin[u] + item.dims[u] - tol, item.origin[v] + item.dims[v] - tol)
                rects = []
                for other in counted:
                    assert other.origin is not None
                    r = (
                        (
                            max(lo[0], other.origin[u] + tol),
                            min(hi[0], other.origin[u] + other.dims[u] - tol),
                        ),
                        (
                            max(lo[1], other.origin[v] + tol),
                            min(hi[1], other.origin[v] + other.dims[v] - tol),
                        ),
                    )
                    if r[0][0] < r[0][1] and r[1][0] < r[1][1]:
                        rects.append(r)  # the item itself is one of them
                if len(rects) > limit and _max_depth(rects) > limit:
                    yield (
                        f"inline: {item.label}: shares a line along {AXES[axis]} with more "
                        f"than itemsInlineMax {limit} items"
                    )


def check_box_spread(view: PackView) -> Iterator[str]:
    """boxesMax bounds the boxes that ship; boxesPerItemSetMax and boxesPerSequenceMax
    bound the boxes one refId, or one non-empty sequence, spreads across (within each
    pack-sequence stage). Pre-packed boxes' given items count toward the spread but may
    exceed it: then the group's added units go only into boxes it spans already."""
    boxes_max = _count_limit(view.request.get("boxesMax"))
    prepacked = len(view.request.get("boxes") or [])
    # A box inside an item (an internal space, or a pack-sequence box a later stage
    # carries) does not ship on its own.
    shipped = [b for b in view.boxes if not b.wire.get("subspace")]
    if boxes_max is not None and len(shipped) > max(boxes_max, prepacked):
        yield f"box-spread: {len(shipped)} boxes > boxesMax {boxes_max}"
    spreads: tuple[tuple[str, Callable[[Item], object]], ...] = (
        ("boxesPerItemSetMax", lambda it: it.ref_id),
        ("boxesPerSequenceMax", lambda it: it.sequence or None),
    )
    for name, key in spreads:
        limit = _count_limit(view.request.get(name))
        if limit is None:
            continue
        # Each pack-sequence stage is a packing of its own.
        spans: dict[object, set[int]] = defaultdict(set)
        given: dict[object, set[int]] = defaultdict(set)
        for box in view.boxes:
            stage = _stage_of(view, box)
            for item in box.items:
                group = key(item)
                if group is not None:
                    at = (stage, group) if stage is not None else group
                    spans[at].add(box.position)
                    if _given_prepacked(view, item):
                        given[at].add(box.position)
        for group, where in spans.items():
            if len(where) > limit and where - given[group]:
                yield f"box-spread: {group!r} spans boxes {sorted(where)} > {name} {limit}"


# --- rules -----------------------------------------------------------------------------
# Rules select items by refId, sequence or an itemMatch on the response item's own
# fields (name, sequence, properties: the values after set-properties).


def _rules(view: PackView, operation: str) -> list[Wire]:
    return [r for r in view.request.get("rules") or [] if r.get("operation") == operation]


def _field_value(item: Wire, name: str) -> str | None:
    if name in ("name", "sequence"):
        value = item.get(name)
    else:
        value = (item.get("properties") or {}).get(name)
    return None if value is None else str(value)


def _match(match: Wire, value: str | None) -> bool:
    expressions = list(match.get("expressions") or [])
    if match.get("expression"):
        expressions.append(match["expression"])
    if value is None:
        hit = False
    else:
        hit = any(e in value for e in expressions) if expressions else bool(value)
    return hit != bool(match.get("negate"))


def _item_match(match: Wire | None, item: Wire) -> bool:
    if not match:
        return False
    if match.get("all"):
        return not match.get("negate")
    return _match(match, _field_value(item, match.get("property") or "name"))


def _selects(rule: Wire, item: Wire) -> bool:
    return (
        (rule.get("itemRefId") is not None and rule["itemRefId"] == item.get("refId"))
        or (
            rule.get("itemSequence") is not None
            and str(rule["itemSequence"]) == str(item.get("sequence"))
        )
        or _item_match(rule.get("itemMatch"), item)
    )


def _targets(rule: Wire, item: Wire) -> bool:
    sequences = [str(s) for s in rule.get("targetItemSequences") or []]
    return (
        item.get("refId") in (rule.get("targetItemRefIds") or [])
        or (item.get("sequence") is not None and str(item["sequence"]) in sequences)
        or _item_match(rule.get("targetItemMatch"), item)
    )


def _targets_box(rule: Wire, box: Wire) -> bool:
    match = rule.get("targetBoxMatch")
    by_match = False
    if match:
        name = match.get("property") or "name"
        raw = box.get("name") if name == "name" else (box.get("properties") or {}).get(name)
        by_match = _match(match, None if raw is None else str(raw))
    return box.get("refId") in (rule.get("targetBoxRefIds") or []) or by_match


def _alternates(view: PackView, item: Item, dims: Vec) -> Iterator[Vec]:
    """Dimensions the first alternate-dimensions rule selecting ``item`` lets it take.
    None when a dimensionSets ladder, pack-as-is, irregular or an internal space (the
    item packs as given) wins over it."""
    group = view.group_of(item)
    yield from _alternate_shapes(view, item, group.sets if group is not None else [])


def _alternate_shapes(view: PackView, item: Item, sets: Sequence[Wire]) -> Iterator[Vec]:
    """Dimensions the first alternate-dimensions rule selecting ``item`` lets a unit of
    the item sets ``sets`` take (``_alternates``; an auto-id item's sets are not known
    before its shape is, so ``group_of`` asks this of each auto pool)."""
    if any(s.get("dimensionSets") for s in sets):
        return
    rules = view.request.get("rules") or []
    wins = ("pack-as-is", "irregular")
    if (
        _hosts_subspaces(view, item.wire)
        or _stage_ships_as_is(view, item.wire)
        or any(r.get("operation") in wins and _selects(r, item.wire) for r in rules)
    ):
        return
    selecting = (r for r in _rules(view, "alternate-dimensions") if _selects(r, item.wire))
    for rule in [r for r in [next(selecting, None)] if r is not None]:
        options = rule.get("options") or {}
        for p in options.get("dimensions") or []:
            yield (float(p.get("x", 0)), float(p.get("y", 0)), float(p.get("z", 0)))
        # Changes apply to each item set's own axes; pre-packed items take no rules.
        requested = view.request.get("itemSets") or []
        for item_set in sets:
            if not any(item_set is s for s in requested):
                continue
            given = _vec(item_set["dimensions"])
            for c in options.get("dimensionChanges") or []:
                yield tuple(g + float(c.get(a, 0)) for g, a in zip(given, AXES, strict=True))  # type: ignore[misc]
            for c in options.get("dimensionScaleChanges") or []:
                yield tuple(g * (1 + float(c.get(a, 0))) for g, a in zip(given, AXES, strict=True))  # type: ignore[misc]


_SPIN = {0: (0, 2, 1), 1: (2, 1, 0), 2: (1, 0, 2)}  # axis permutation of a quarter turn


def _allowed_turns(free_axes: Sequence[int]) -> set[tuple[int, int, int]]:
    """Axis permutations reachable by turns about ``free_axes`` (placed[a] = given[p[a]])."""
    turns = {(0, 1, 2)}
    frontier = [(0, 1, 2)]
    while frontier:
        p = frontier.pop()
        for axis in set(free_axes):
            spin = _SPIN[axis]
            q = (p[spin[0]], p[spin[1]], p[spin[2]])
            if q not in turns:
                turns.add(q)
                frontier.append(q)
    return turns


def check_orientation_locks(view: PackView) -> Iterator[str]:
    """Items selected by lock-orientation are turned only about their free axes (the
    first rule selecting an item wins); pack-as-is items stand as given."""
    rules = _rules(view, "lock-orientation")
    if not rules:
        return
    for box in view.boxes:
        for item in box.items:
            rule = next((r for r in rules if _selects(r, item.wire)), None)
            if rule is None or _is_as_is_box(view, box) or _given_prepacked(view, item):
                continue  # pre-packed items are as the request gives them
            group = view.group_of(item)
            if group is None:
                continue
            free = (rule.get("options") or {}).get("freeAxes") or []
            turns = _allowed_turns(free)
            ok = any(
                _same_dims(item.dims, tuple(given[p[a]] for a in range(3)))
                for given in _given_dims(view, item)
                for p in turns
            )
            if not ok:
                yield (
                    f"orientation: {item.label}: placed as {_fmt(item.dims)}, which turns "
                    f"about locked axes (freeAxes {free})"
                )


def _flat_turns(view: PackView, item: Item) -> list[Vec] | None:
    """The lying-flat shapes (smallest side along x) ``item`` may take, or None when an
    orientation lock allows it none (the lock wins over layFlat) or it ships as is."""
    rules = _rules(view, "lock-orientation")
    rule = next((r for r in rules if _selects(r, item.wire)), None)
    if _hosts_subspaces(view, item.wire):
        rule = {"options": {"freeAxes": []}}  # hosts pack unturned: internal-space wins
    allowed = (
        _allowed_turns((rule.get("options") or {}).get("freeAxes") or [])
        if rule is not None
        else None
    )
    inside = _turns_inside(view, item)
    if inside is not None:  # the locks of the items inside it hold too
        allowed = inside if allowed is None else allowed & inside
    if allowed is None:
        low = min(item.dims)
        return [
            tuple(d[p[a]] for a in range(3))  # type: ignore[misc]
            for d in [item.dims]
            for p in itertools.permutations(range(3))
            if _close_len(d[p[0]], low)
        ]
    givens = _given_dims(view, item)
    # A rung of a dimensionSets ladder is its own unit: another rung of the same sides
    # (2 x 2 x 3 and 3 x 2 x 2 cases of one item) is not a turn of it.
    rung = item.wire.get("dimensionSet")
    if isinstance(rung, Mapping) and isinstance(rung.get("dimensions"), Mapping):
        own = _vec(rung["dimensions"])
        givens = [g for g in givens if _same_dims(g, own)] or givens
    turned = [
        tuple(given[p[a]] for a in range(3))
        for given in givens
        if _same_dims(sorted_dims(given), sorted_dims(item.dims))  # this unit's own shape
        for p in allowed
    ]
    flat = [t for t in turned if _close_len(t[0], min(t))]
    return flat or None  # type: ignore[return-value]


def _hosts_subspaces(view: PackView, item: Wire) -> bool:
    """An internal-space rule selects ``item`` (an item or item set; and no rule that wins
    over it does) and, without generators, it fits some box type as given: it packs
    unturned, as single units. (An item that fits no box type unturned gets no subspace.)
    In a pack-sequence stage, the box types are those of its stage (the first
    pack-sequence rule selecting it; all box types without targets)."""
    rules = view.request.get("rules") or []
    winners = ("irregular", "group-pack", "bounded-fill")
    hosts = (
        any(r.get("operation") == "internal-space" and _selects(r, item) for r in rules)
        and not any(r.get("operation") in winners and _selects(r, item) for r in rules)
        and not _stands_for_box(view, item)
    )
    if not hosts or view.request.get("boxTypeGenerators"):
        return hosts
    given = [
        _vec(s["dimensions"])
        for s in view.request.get("itemSets") or []
        if s.get("refId") == item.get("refId")
    ] or [_vec(item["dimensions"])]
    stage = next((r for _, r in _stage_rules(view) if _selects(r, item)), None)
    targeted = stage is not None and bool(
        stage.get("targetBoxRefIds") or stage.get("targetBoxMatch")
    )
    boxes = [
        _vec(b["dimensions"])
        for b in _box_types(view.request)
        if not targeted or _targets_box(stage or {}, b)
    ]
    return any(all(b[a] >= d[a] - EPS for a in range(3)) for d in given for b in boxes)


def _close_len(a: float, b: float) -> bool:
    return abs(a - b) <= EPS * max(abs(a), abs(b), 1.0)


def check_lay_flat(view: PackView) -> Iterator[str]:
    """layFlat (and interlock, which implies it): every packed item lies on its largest
    face, its smallest side along x (up), unless an orientation lock allows no such turn
    (bounded-fill units are soft: they take the shape of the space instead).
    interlock: on even layers (base height // own height) the longer horizontal side runs
    along z, on odd layers along y, for items that may turn both ways lying flat."""
    interlock = bool(view.request.get("interlock"))
    if not (view.request.get("layFlat") or interlock):
        return
    for box in view.boxes:
        if _is_as_is_box(view, box) or _is_own_carton(view, box):
            continue  # a unit in its own packaging ships as is
        for item in box.items:
            if _fill_rule(view, item.wire) is not None:
                continue  # soft bounded-fill units take the shape of the space
            if item.wire.get("groupPackParent") is not None:
                continue  # the group is the item that lies flat, not its units
            if _given_prepacked(view, item):
                continue  # pre-packed as the request says
            flat = _flat_turns(view, item)
            if flat is None or item.origin is None:
                continue
            x, y, z = item.dims
            if not _close_len(x, min(item.dims)):
                yield f"lay-flat: {item.label} stands {_fmt(item.dims)}, not on its largest face"
                continue
            both = any(t[2] >= t[1] - EPS for t in flat) and any(t[1] >= t[2] - EPS for t in flat)
            if not interlock or not both:
                continue
            layer = math.floor(item.origin[0] / x + 1e-9)
            along = "z" if layer % 2 == 0 else "y"
            ok = z >= y - EPS * max(y, z) if along == "z" else y >= z - EPS * max(y, z)
            if not ok:
                yield (
                    f"interlock: {item.label} on layer {layer} lies {_fmt(item.dims)}, its long "
                    f"side not along {along}"
                )


def _given_dims(view: PackView, item: Item) -> list[Vec]:
    """The dimensions, as given, of every unit shape ``item`` may be (its item sets'
    units, and any alternate dimensions a rule offers; with replaceOriginal only the
    latter). An item a pack-sequence box was reduced to is given as that box: its outer
    dimensions along the box's axes."""
    carried = _box_carriers(view).get(item.index) if item.index is not None else None
    if carried is not None:
        return [_frame(view, carried, item)]
    alternates = list(_alternates(view, item, item.dims))
    if _replaces_original(view, item, alternates):
        return alternates
    return _own_dims(view, item) + alternates


def _replaces_original(view: PackView, item: Item, alternates: Sequence[Vec]) -> bool:
    """Whether the alternate-dimensions rule that gives ``item`` its ``alternates`` drops
    its own dimensions (replaceOriginal): the smallest alternate takes their place."""
    if not alternates or _given_prepacked(view, item):
        return False  # no rule, another rule wins over it, or pre-packed as given
    rule = next(r for r in _rules(view, "alternate-dimensions") if _selects(r, item.wire))
    return bool((rule.get("options") or {}).get("replaceOriginal"))


def _own_dims(view: PackView, item: Item) -> list[Vec]:
    """The dimensions, as given, of ``item``'s own units: its item sets' units, or, when
    the alternate-dimensions rule selecting it replaces the original (replaceOriginal),
    the smallest of its shapes. An item a pack-sequence box was reduced to is that box."""
    carried = _box_carriers(view).get(item.index) if item.index is not None else None
    if carried is not None:
        return [_frame(view, carried, item)]
    alternates = list(_alternates(view, item, item.dims))
    if _replaces_original(view, item, alternates):
        return [min(alternates, key=lambda d: d[0] * d[1] * d[2])]
    group = view.group_of(item)
    sets = group.sets if group is not None else []
    return [dims for s in sets for dims, _, _ in _units(s)]


def check_exclusions(view: PackView) -> Iterator[str]:
    """exclude: a selected item never shares a box with a target item of another refId,
    nor sits in a target box; exclude-all: a selected item shares only with its refId.
    Pre-packed items count as selected or targets, but two of them stay as given."""
    excludes, excludes_all = _rules(view, "exclude"), _rules(view, "exclude-all")
    for box in view.boxes:
        given = [_given_prepacked(view, item) for item in box.items]
        # Exclusions hold between refIds, and not between two pre-packed items.
        apart = {
            (i, j)
            for i, a in enumerate(box.items)
            for j, b in enumerate(box.items)
            if a.ref_id != b.ref_id and not (given[i] and given[j])
        }

        for rule in excludes:
            for i, a in enumerate(box.items):
                if not _selects(rule, a.wire):
                    continue
                if _targets_box(rule, box.wire) and not given[i]:
                    yield f"exclusion: {a.label} is in a box the rule excludes it from"
                for j, b in enumerate(box.items):
                    if (i, j) in apart and _targets(rule, b.wire):
                        yield f"exclusion: {a.label} shares box {box.position} with {b.label}"
        for rule in excludes_all:
            for i, a in enumerate(box.items):
                others = [b for j, b in enumerate(box.items) if (i, j) in apart]
                if _selects(rule, a.wire) and others:
                    yield (
                        f"exclusion: {a.label} shares box {box.position} with {others[0].label} "
                        "despite exclude-all"
                    )


def _is_as_is_box(view: PackView, box: Box) -> bool:
    if box.position < len(view.request.get("boxes") or []):
        return False  # a pre-packed box, whatever it holds
    rules = _rules(view, "pack-as-is")
    if any(_selects(r, item.wire) for r in rules for item in box.items):
        return True
    # A pack-sequence stage with reduce pack-as-is ships its items as is.
    return any(_stage_ships_as_is(view, item.wire) for item in box.items)


def _stage_ships_as_is(view: PackView, item: Wire) -> bool:
    """Whether the pack-sequence stage of ``item`` (the first selecting it) has reduce
    pack-as-is: its items ship as is, as with a pack-as-is rule."""
    stage = next((r for r in _rules(view, "pack-sequence") if _selects(r, item)), None)
    return stage is not None and (stage.get("options") or {}).get("reduce") == "pack-as-is"


def check_pack_as_is(view: PackView) -> Iterator[str]:
    """A pack-as-is item ships alone, as given, in a box of exactly its dimensions; so does
    a unit in a pack-as-is generator's carton (its own packaging): in its own dimensions,
    not folded into an alternate shape (docs/decisions.md). A new unit of a pack-as-is
    item never enters a pre-packed box."""
    as_is = _rules(view, "pack-as-is")
    for box in view.boxes[: len(view.request.get("boxes") or [])]:
        for item in box.items:
            if not _given_prepacked(view, item) and any(_selects(r, item.wire) for r in as_is):
                yield f"pack-as-is: {item.label} is in pre-packed box {box.position}"
    for box in view.boxes:
        rule = _is_as_is_box(view, box)
        if not (rule or _is_own_carton(view, box)):
            continue
        # A group-pack case in its own carton is one item (a generator's carton of the case).
        items = box.items if rule else _counted_items(box)
        if len(items) != 1:  # one unit: an each, or a case of a dimensionSets ladder
            yield f"pack-as-is: box {box.position} holds {len(items)} items, not one unit"
            continue
        item = items[0]
        # docs/rules.md: a pack-as-is rule's carton is named "pack-as-is <item name or refId>".
        own_name = item.wire.get("name") or item.ref_id
        if rule and box.wire.get("name", f"pack-as-is {own_name}") != f"pack-as-is {own_name}":
            yield (
                f"pack-as-is: box {box.position}: name {box.wire.get('name')!r}, not "
                f"'pack-as-is {own_name}'"
            )
        if not rule:
            yield from _carton_name_problems(view, box, item)
        if item.wire.get("groupPackParent") is not None:
            shapes = [item.dims]  # the case's shape is its units' bounding box
        else:
            shapes = _given_dims(view, item) if rule else _own_dims(view, item)
        if not _same_dims(item.dims, box.dims) or not any(
            _same_dims(item.dims, given) for given in shapes
        ):
            yield (
                f"pack-as-is: {item.label} placed as {_fmt(item.dims)} in a box of "
                f"{_fmt(box.dims)}; both must be its own dimensions as given"
            )


def _carton_name_problems(view: PackView, box: Box, item: Item) -> Iterator[str]:
    """A pack-as-is generator's carton named "as-is ..." (its defaults give no name) is
    "as-is <item set name>", or "as-is <n>" (n its position among the item sets) for an
    item set without a name (docs/generators.md). The item set is the unit's (any set of
    its refId or auto-id shape, or the unit's echoed name); the position is not
    re-derived (pre-packed item sets and sequenceSort move it)."""
    named = str(box.wire.get("name") or "")
    if not named.startswith("as-is ") or item.wire.get("groupPackParent") is not None:
        return
    group = view.group_of(item)
    if group is None:
        return
    names = [s.get("name") for s in group.sets] + [item.wire.get("name")]
    own = named.removeprefix("as-is ")
    if own in {n for n in names if isinstance(n, str) and n}:
        return
    if own.isdigit() and any(not (isinstance(n, str) and n) for n in names):
        return
    wanted = sorted({f"as-is {n}" for n in names if isinstance(n, str) and n})
    if any(not (isinstance(n, str) and n) for n in names):
        wanted.append("as-is <item set position>")
    yield f"pack-as-is: box {box.position}: name {named!r}, not {' or '.join(wanted)}"


# --- response totals -------------------------------------------------------------------


def check_totals(view: PackView) -> Iterator[str]:
    """Response totals agree with its boxes, items and leftovers."""
    response = view.response
    carriers = _box_carriers(view)
    packed_units = sum(
        item.units
        for box in view.boxes
        for item in box.items
        if item.index not in carriers and not item.virtual
    )
    leftover_units = sum(item.units for item in view.leftovers if not item.virtual)
    counts = {
        "lenBoxes": len(view.boxes),
        "lenItems": packed_units + leftover_units,
        "lenLeftovers": leftover_units,
        "totalCost": sum(int(box.wire["price"]) for box in view.boxes),
    }
    # An item standing for a box (box-to-item) is no unit: the box's items are.
    units = sum(
        1
        for box in view.boxes
        for item in box.items
        if item.index not in carriers and not item.virtual
    ) + sum(1 for item in view.leftovers if not item.virtual)
    if "lenUnits" in response:
        counts["lenUnits"] = units
    for name, want in counts.items():
        if response[name] != want:
            yield f"totals: {name} {response[name]}, boxes and leftovers give {want}"
    if not view.request.get("random") and view.request.get("itemSets") is not None:
        requested = _requested_units(view.request)
        if response["lenItems"] != requested:
            yield f"totals: lenItems {response['lenItems']}, request asks for {requested} units"
    sums: dict[str, float] = {
        "totalVolume": sum(float(box.wire["volumeMax"]) for box in view.boxes),
        # Its contents count in the box it stands for: an item standing for a box doesn't.
        "totalVolumeNet": sum(
            _occupied_volume(view, box, item)
            for box in view.boxes
            for item in box.items
            if item.index not in carriers
        ),
        # A box inside another (pack-sequence) weighs in its parent already.
        "totalWeight": sum(
            float(box.wire["weightUsed"]) for box in view.boxes if not box.wire.get("subspace")
        ),
    }
    for name, total in sums.items():
        if not _close(float(response[name]), total):
            yield f"totals: {name} {response[name]:g}, boxes give {total:g}"


def check_derived_figures(view: PackView) -> Iterator[str]:
    """Figures derived from others agree with them (docs/decisions.md, reservedSpace and
    Response; spec §F): per box ``volumeRemaining`` = volumeMax - volumeUsed and, with
    weightMax > 0, ``weightRemaining`` = weightMax - weightUsed (both >= 0: a pre-packed
    box over its limit has none left), ``volumeUtilization`` = volumeUsed / volumeMax and
    ``weightUtilization`` = weightUsed / weightMax (both at most 1, spec §F),
    ``weightNet`` = weightUsed - weightTare, ``lenUnits`` its own items (not virtual
    ones; an item standing for a box is one of its own, docs/decisions.md) and ``id`` its
    0-based position; in the response ``totalVolumeUsed`` = totalVolumeNet + the boxes'
    volumeReserved and ``totalVolumeUtilization`` = totalVolumeUsed / totalVolume. Each
    only where given."""
    for box in view.boxes:
        wire = box.wire
        used, most = wire.get("volumeUsed"), float(wire["volumeMax"])
        weight, limit = float(wire["weightUsed"]), float(wire["weightMax"])
        expected: dict[str, float] = {"weightNet": weight - float(wire.get("weightTare", 0.0))}
        if _is_number(used):
            expected["volumeRemaining"] = max(0.0, most - used)
            if most > 0:
                expected["volumeUtilization"] = min(1.0, used / most)
        if limit > 0:
            expected["weightRemaining"] = max(0.0, limit - weight)
            expected["weightUtilization"] = min(1.0, weight / limit)
        for name, want in expected.items():
            got = wire.get(name)
            if got is not None and not (_is_number(got) and _close(float(got), want)):
                yield f"box-figures: box {box.position}: {name} {got!r}, expected {want:g}"
        given = [i.wire.get("deltaCost") for i in box.items]
        deltas = [float(d) for d in given if _is_number(d)]
        price = wire.get("price")
        # The first item carries the box's fixed price, each its added rate (rates.md).
        if (
            deltas
            and len(deltas) == len(given)
            and _is_number(price)
            and abs(sum(deltas) - price) > 0.5
        ):
            yield (
                f"box-figures: box {box.position}: its items' deltaCost add up to "
                f"{sum(deltas):g}, not its price {price!r}"
            )
        units = sum(1 for i in box.items if not i.virtual)
        if "lenUnits" in wire and wire["lenUnits"] != units:
            yield f"box-figures: box {box.position}: lenUnits {wire['lenUnits']!r}, not {units}"
        if "id" in wire and wire["id"] != box.position:
            yield f"box-figures: box {box.position}: id {wire['id']!r}, expected {box.position}"
    response = view.response
    net, volume = float(response["totalVolumeNet"]), float(response["totalVolume"])
    used_total = net + sum(float(b.wire.get("volumeReserved") or 0.0) for b in view.boxes)
    got_used = response.get("totalVolumeUsed")
    if got_used is not None and not (_is_number(got_used) and _close(got_used, used_total)):
        yield (
            f"totals: totalVolumeUsed {got_used!r}, totalVolumeNet + volumeReserved give "
            f"{used_total:g}"
        )
    share = response.get("totalVolumeUtilization")
    if share is not None and volume == 0 and share != 0:
        # No box, or boxes of no volume: 0 / 0, read as nothing used (docs/decisions.md).
        yield f"totals: totalVolumeUtilization {share!r} with totalVolume 0, expected 0"
    if (
        share is not None
        and _is_number(got_used)
        and volume > 0
        and not (
            _is_number(share)
            and (_close(share, got_used / volume) or _close(share, min(1.0, got_used / volume)))
        )
    ):
        yield (
            f"totals: totalVolumeUtilization {share!r}, totalVolumeUsed / totalVolume "
            f"give {got_used / volume:g}"
        )


def check_echoes(view: PackView) -> Iterator[str]:
    """The request's ``orderId``, ``requestId`` and ``properties`` come back unchanged
    (spec §A and §F) where the response gives them (converted answers of other packers,
    bench/, carry none)."""
    for name in ("orderId", "requestId", "properties"):
        if (
            name in view.request
            and view.response.get(name, view.request[name]) != view.request[name]
        ):
            yield (
                f"echo: response {name} {view.response.get(name)!r}, request gave "
                f"{view.request[name]!r}"
            )


def check_item_echoes(view: PackView) -> Iterator[str]:
    """Each unit, packed or leftover, echoes its item set's ``name`` (with a group-pack
    rule's ``nameSuffix`` appended to a grouped unit's), ``sequence`` and ``properties``
    (after set-properties rules; docs/decisions.md). Items standing for a box are the
    box's, not an item set's, and are not judged."""
    carriers = _box_carriers(view)
    suffixes = {
        str((r.get("options") or {}).get("nameSuffix", "")) for r in _rules(view, "group-pack")
    }
    for item in view.items:
        group = view.group_of(item)
        if group is None or (item.index is not None and item.index in carriers):
            continue
        names = {s["name"] for s in group.sets if isinstance(s.get("name"), str)}
        name = item.wire.get("name")
        if (
            names
            and name is not None
            and not any(name in (n, n + suffix) for n in names for suffix in suffixes | {""})
        ):
            yield f"echo: {item.label}: name {name!r}, item set says {sorted(names)}"
        sequences = {s.get("sequence") for s in group.sets}
        if item.wire.get("sequence") not in sequences:
            yield (
                f"echo: {item.label}: sequence {item.wire.get('sequence')!r}, item set says "
                f"{' or '.join(repr(q) for q in sequences)}"
            )
        owned = [s.get("properties") or {} for s in group.sets]
        if (item.wire.get("properties") or {}) not in owned:
            yield (
                f"echo: {item.label}: properties {item.wire.get('properties')!r}, item set "
                f"says {' or '.join(repr(o) for o in owned)}"
            )


#: Rules under which a unit may be left over although it fits an empty box: packs in
#: parts (a stage's box targets, a host's contents left with it, a group that found no box).
_PARTS = ("pack-sequence", "internal-space", "group-pack", "bounded-fill")


def _box_side(side: float) -> float:
    """The room the engine gives a box's side (geometry.rs ``len_floor``): rounded down to
    its grid, a side within a millionth (relative) of a step count being that count."""
    scaled = side * _SCALE
    nearest = round(scaled)
    steps = nearest if abs(scaled - nearest) <= 1e-6 * max(abs(nearest), 1) else math.floor(scaled)
    return steps / _SCALE


def _fits_on_grid(dims: Sequence[float], inner: Vec) -> bool:
    """Whether an item of ``dims`` fits a box of ``inner`` on the engine's grid (an exact
    fit included)."""
    return all(_reserved_side(d) <= _box_side(b) for d, b in zip(dims, inner, strict=True))


def _new_box_allowed(view: PackView, item: Item) -> bool:
    """Whether the count caps leave room for one more box holding ``item``: fewer shipped
    boxes than boxesMax (pre-packed ones counted), and fewer boxes holding its refId (or
    its sequence: equal, or numerically equal) than boxesPerItemSetMax
    (boxesPerSequenceMax)."""
    request = view.request
    boxes_max = _count_limit(request.get("boxesMax"))
    shipped = [b for b in view.boxes if not b.wire.get("subspace")]
    if boxes_max is not None and len(shipped) >= boxes_max:
        return False
    per_set = _count_limit(request.get("boxesPerItemSetMax"))
    if per_set is not None:
        spans = sum(1 for b in view.boxes if any(i.ref_id == item.ref_id for i in b.items))
        if spans >= per_set:
            return False
    per_sequence = _count_limit(request.get("boxesPerSequenceMax"))
    if per_sequence is not None:
        number = _sequence_number(item.sequence)

        def same(other: Item) -> bool:
            return other.sequence == item.sequence or (
                number is not None and _sequence_number(other.sequence) == number
            )

        if sum(1 for b in view.boxes if any(same(i) for i in b.items)) >= per_sequence:
            return False
    return True


def _every_generated_size(view: PackView, generator: Wire) -> list[Vec]:
    """The sizes a cartesian generator surely offers: when its axes make at most as many
    sizes as the cap (``generatedBoxTypesMax``, else 4,096) keeps, every size from its
    lists and ranges (min, max and the increment's multiples; lengths derived from the
    items counted for the cap but not offered) clear of its limits. None when an axis
    fits the first item (its lengths depend on which item that is)."""
    options = generator.get("options") or {}
    sure: list[list[float]] = []
    counted = 1
    derived = _item_sides(view)
    for name in AXES:
        lengths = {float(v) for v in options.get(f"{name}List") or [] if _is_number(v)}
        axis_range = options.get(f"{name}Range")
        extra: set[float] = set()
        if isinstance(axis_range, Mapping):
            lo, hi = axis_range.get("min"), axis_range.get("max")
            if axis_range.get("fitForFirstItem") or not (_is_number(lo) and _is_number(hi)):
                return []
            lengths |= {float(lo), float(hi)}
            step = axis_range.get("increment")
            if axis_range.get("deriveFromItems"):
                extra = {side for side in derived if lo < side < hi}
            elif _is_number(step) and step > 0:
                k = math.floor(lo / step) + 1
                while k * step < hi - _tol(hi) and len(lengths) < 5_000:
                    lengths.add(k * step)
                    k += 1
        counted *= len(lengths | extra)
        sure.append(sorted(lengths))
    cap = _count_limit(view.request.get("generatedBoxTypesMax")) or 4096
    if counted > min(cap, 4096):
        return []
    sizes: list[Vec] = [(x, y, z) for x, y, z in itertools.product(*sure)]
    return [size for size in sizes if not _limit_breaks(generator, size, strict=True)]


def _empty_boxes_for(view: PackView, item: Item) -> Iterator[dict[str, Any]]:
    """The box types a new box for ``item`` may be: the requested ones, the item's own
    carton of a pack-as-is generator (its unit as given, a side on the engine's grid)
    and every size a cartesian generator surely offers (``_every_generated_size``), or,
    when it sampled its sizes, was seen to offer (``_sampled_sizes_seen``). A generated
    type is left out when an exclude rule with box targets selects the item."""
    request = view.request
    yield from _box_types(request)
    generators = request.get("boxTypeGenerators") or []
    excludes = _rules(view, "exclude")
    if not generators or any(
        _selects(r, item.wire) and (r.get("targetBoxRefIds") or r.get("targetBoxMatch"))
        for r in excludes
    ):
        return
    group = view.group_of(item)
    for generator in generators:
        template = _generator_template(request, generator)
        if generator.get("operation") == "pack-as-is":
            own = group is not None and any(
                _same_dims(sorted_dims(item.dims), sorted_dims(_vec(s["dimensions"])))
                and not s.get("dimensionSets")
                for s in group.sets
                if s.get("dimensions")
            )
            if own and item.units == 1:
                yield {**template, "dimensions": item.wire["dimensions"], "reservedSpace": 0}
        elif _every_generated_size(view, generator):
            for size in _every_generated_size(view, generator):
                yield {**template, "dimensions": dict(zip(AXES, size, strict=True))}
        else:
            yield from _sampled_sizes_seen(view, generator, template)


def _sampled_sizes_seen(
    view: PackView, generator: Wire, template: Wire
) -> Iterator[dict[str, Any]]:
    """Sizes a cartesian generator whose sizes were sampled (more than its cap) surely
    offered: those of the response's boxes that only it can have made (a generated box
    is its sampled size or that size trimmed smaller, so a unit that fits the box fits
    the size). None when an axis fits the first item (a size per item) or the request
    packs in parts (each part generates for its own items)."""
    options = generator.get("options") or {}
    parts = any(r.get("operation") in _PARTS for r in view.request.get("rules") or [])
    if parts or any(
        isinstance(r, Mapping) and r.get("fitForFirstItem")
        for r in (options.get(f"{name}Range") for name in AXES)
    ):
        return
    for box in view.boxes:
        sources = _cartesian_sources(view, box)
        if len(sources) == 1 and sources[0][1] is generator:
            yield {**template, "dimensions": box.wire["dimensions"]}


def _leftover_shapes(view: PackView, item: Item) -> list[Vec]:
    """The shapes a leftover could have taken alone in an empty box: a bounded-fill unit
    as given (it packs on its own, as given, when no box takes it: docs/rules.md); under
    layFlat or interlock its flat turns (``_flat_turns``; interlock, on the floor layer,
    with the longer horizontal side along z when it may lie both ways), or its lock's
    turns when the lock allows no flat one; else every turn its lock allows."""
    if _fill_rule(view, item.wire) is not None:
        return [item.dims]
    request = view.request
    if request.get("layFlat") or request.get("interlock"):
        flat = _flat_turns(view, item)
        if flat is not None:
            both = any(t[2] >= t[1] - EPS for t in flat) and any(t[1] >= t[2] - EPS for t in flat)
            if request.get("interlock") and both:
                return [t for t in flat if t[2] >= t[1] - EPS * max(t[1], t[2])]
            return flat
    lock = next((r for r in _rules(view, "lock-orientation") if _selects(r, item.wire)), None)
    if lock is None:
        turns: set[tuple[int, int, int]] = set(itertools.permutations(range(3)))  # type: ignore[arg-type]
    else:
        turns = _allowed_turns((lock.get("options") or {}).get("freeAxes") or [])
    # The unit as the leftover reports it (a case of a unit ladder is the case).
    return [tuple(item.dims[p[a]] for a in range(3)) for p in turns]  # type: ignore[misc]


def check_leftovers(view: PackView) -> Iterator[str]:
    """A leftover is a unit "not packable into any box" (spec §F): a leftover that fits
    alone into an empty box (the unit as reported, in a shape ``_leftover_shapes`` allows,
    on the engine's grid, within weightMax less tare, reservedSpace and
    propertyConstraints, not a target box its exclude rules keep it from) of a requested
    type, of its own pack-as-is carton, of a size a cartesian generator surely offers or
    of a size a sampling generator was seen to offer (``_empty_boxes_for``) should have
    had a box of its own, unless the count caps leave no room for one more box holding it
    (``_new_box_allowed``). boxTypeSets without boxTypes (the account's cartons, not in the
    request) and the packs in parts pack-sequence (a stage's units may only take its
    target boxes, and boxes reduced to items carry their contents) and internal-space (a
    host's contents are left over with it, at any depth) are not judged; under group-pack
    only the units no group-pack rule selects are (a group that found no box comes back
    as leftover units that may each fit); under bounded-fill every unit is (the other
    units pack as without the rule, and fill units no box takes pack on their own)."""
    request = view.request
    if request.get("boxTypeSets") and not request.get("boxTypes"):
        return
    if _rules(view, "pack-sequence") or _rules(view, "internal-space"):
        return
    as_is = _rules(view, "pack-as-is")
    grouping = _rules(view, "group-pack")
    excludes = [
        r for r in _rules(view, "exclude") if r.get("targetBoxRefIds") or r.get("targetBoxMatch")
    ]
    for item in view.leftovers:
        if item.virtual or any(_selects(r, item.wire) for r in [*as_is, *grouping]):
            continue
        if not _new_box_allowed(view, item):
            continue
        shapes = _leftover_shapes(view, item)
        for box_type in _empty_boxes_for(view, item):
            if any(_selects(r, item.wire) and _targets_box(r, box_type) for r in excludes):
                continue
            inner = _vec(box_type["dimensions"])
            limit = float(box_type.get("weightMax") or 0)
            tare = float(box_type.get("weightTare") or 0)
            if limit > 0 and item.weight + tare > limit * (1 - EPS):
                continue
            share = box_type.get("reservedSpace", request.get("reservedSpace"))
            share = float(share) if _is_number(share) else 0.0
            if share > 0 and _volume(item.dims) > (1 - share) * _volume(inner) * (1 - EPS):
                continue
            if any(
                c.get("max") is not None
                and _amount(item, c["key"]) > 0
                and float(c.get("value") or 0) + _amount(item, c["key"]) > float(c["max"]) - EPS
                for c in box_type.get("propertyConstraints") or []
            ):
                continue
            if any(_fits_on_grid(shape, inner) for shape in shapes):
                yield (
                    f"leftover: {item.label} {_fmt(item.dims)} fits alone into an empty box "
                    f"of type {box_type.get('refId', box_type.get('name'))} {_fmt(inner)}, "
                    "and no cap keeps it from one"
                )
                break


# Fields that describe the packing itself; timings, timestamps and pack ids differ per call.
PACKING_FIELDS = (
    "boxes",
    "leftovers",
    "lenBoxes",
    "lenItems",
    "lenLeftovers",
    "totalCost",
    "totalVolume",
    "totalVolumeNet",
    "totalWeight",
    "itemSortUsed",
)


def packing_of(response: Wire) -> dict[str, Any]:
    """The part of a response that packing the same request again must reproduce."""
    return {name: response.get(name) for name in PACKING_FIELDS}


def _rests_above(upper: Item, lower: Item) -> bool:
    """``upper`` lies higher along x (height) with a footprint overlapping ``lower``'s."""
    if upper.origin is None or lower.origin is None:
        return False
    if upper.origin[0] < lower.origin[0] + lower.dims[0] - EPS:
        return False
    return all(
        upper.origin[a] < lower.origin[a] + lower.dims[a] - EPS
        and lower.origin[a] < upper.origin[a] + upper.dims[a] - EPS
        for a in (1, 2)
    )


def check_fragile(view: PackView) -> Iterator[str]:
    """fragile (first rule selecting an item wins): the weight of everything resting above
    the item (higher, footprints overlapping) is at most maxWeight, nothing rests above
    it with onTopOnly, and with excludeOverweight no heavier item shares its box.
    Pre-packed items are not fragile, whatever rule selects them."""
    rules = _rules(view, "fragile")
    if not rules:
        return
    for box in view.boxes:
        for item in box.items:
            rule = next((r for r in rules if _selects(r, item.wire)), None)
            if rule is None or _given_prepacked(view, item):
                continue  # pre-packed items are not subject to rules
            options = rule.get("options") or {}
            above = [o for o in box.items if o is not item and _rests_above(o, item)]
            load = sum(o.weight for o in above)
            limit = options.get("maxWeight")
            if options.get("onTopOnly") and above:
                yield f"fragile: {item.label} is on-top-only but {above[0].label} rests above it"
            if limit is not None and load > float(limit) + EPS:
                yield f"fragile: {item.label} carries {load:g} above it, maxWeight {limit:g}"
            if limit is not None and options.get("excludeOverweight"):
                for o in box.items:
                    if o.ref_id != item.ref_id and o.weight > float(limit) + EPS:
                        yield (
                            f"fragile: {o.label} weighs {o.weight:g}, over {item.label}'s "
                            f"maxWeight {limit:g}, and shares its box"
                        )


def _stands_for_box(view: PackView, item: Wire) -> bool:
    """``item`` (an item or item set) is a box of a pack-sequence stage standing in as an
    item of the next: its refId is a reducedRefId, or one no item set has (nor an auto
    one: none has its shape). Such an item gets no internal space (its inside is its
    contents), whatever internal-space rule selects it."""
    rules = view.request.get("rules") or []
    stages = [r for r in rules if r.get("operation") == "pack-sequence"]
    ref_id = item.get("refId")
    if not stages or ref_id in view.explicit or "dimensions" not in item:
        return False
    reduced = {(r.get("options") or {}).get("reducedRefId") for r in stages}
    return ref_id in reduced or view.group_of(_item(item, None)) is None


def _box_carriers(view: PackView) -> dict[int, Box]:
    """Items (by response index) that stand for a box packed inside them (pack-sequence
    box-to-item), mapped to that box."""
    out: dict[int, Box] = {}
    for box in view.boxes:
        subspace = box.wire.get("subspace") or {}
        parent = subspace.get("parentItemIndex")
        if parent is not None and _space_rule(view, box) is None:
            out[int(parent)] = box
    return out


def _parent_item(view: PackView, box: Box) -> Item | None:
    """The item a box with ``subspace`` lives in, if it exists."""
    subspace = box.wire.get("subspace") or {}
    parent = next(
        (b for b in view.boxes if b.wire.get("id") == subspace.get("parentBoxIndex")), None
    )
    if parent is None:
        return None
    return next((i for i in parent.items if i.index == subspace.get("parentItemIndex")), None)


def _space_rule(view: PackView, box: Box) -> Wire | None:
    """The internal-space rule whose subspace ``box`` is: the first selecting the item
    the box lives in, unless an irregular, group-pack or bounded-fill rule selects it or
    the item stands for a pack-sequence box (``_stands_for_box``)."""
    if not box.wire.get("subspace"):
        return None
    item = _parent_item(view, box)
    if item is None:
        return None
    rules = view.request.get("rules") or []
    rule: Wire | None = next(
        (r for r in rules if r.get("operation") == "internal-space" and _selects(r, item.wire)),
        None,
    )
    winners = ("irregular", "group-pack", "bounded-fill")
    if rule is None or any(r.get("operation") in winners and _selects(r, item.wire) for r in rules):
        return None
    return None if _stands_for_box(view, item.wire) else rule


def check_internal_space(view: PackView) -> Iterator[str]:
    """internal-space: a subspace box has the rule's boxType dimensions and costs nothing;
    its item stands as given (unturned) and weighs its own weight plus the subspace's
    contents (their reported weights: an item nested in the space weighs what it holds,
    so weights roll up through every level); originInParent is the item's origin plus
    the rule's origin, and the space lies within the item; an item has one space. Items
    that a pack-as-is or irregular rule selects, and units of a dimensionSets ladder,
    are not in subspaces (exclusions hold through them: check_nested_exclusions)."""
    spaces: dict[tuple[int, int], int] = {}  # (parent box, item index) -> space box
    for box in view.boxes:
        rule = _space_rule(view, box)
        if rule is None:
            continue
        item = _parent_item(view, box)
        assert item is not None
        where = f"internal-space: box {box.position}"
        key = (int(box.wire["subspace"]["parentBoxIndex"]), int(item.index or 0))
        if key in spaces:
            yield f"{where}: its item {item.label} already has space box {spaces[key]}"
        spaces.setdefault(key, box.position)
        at = box.wire["subspace"].get("originInParent")
        if item.origin is not None and at is not None:
            lo, tol = _vec(at), EPS * max(1.0, *item.dims)
            if not all(
                item.origin[a] - tol <= lo[a]
                and lo[a] + box.dims[a] <= item.origin[a] + item.dims[a] + tol
                for a in range(3)
            ):
                yield f"{where} does not lie within its item {item.label}"
        options = rule.get("options") or {}
        want = _vec(options["boxType"]["dimensions"])
        if not _same_dims(box.dims, want):
            yield f"{where} is {_fmt(box.dims)}, the rule's boxType {_fmt(want)}"
        if box.wire["price"] != 0:
            yield f"{where} costs {box.wire['price']}; a subspace costs nothing"
        given = [
            _vec(s["dimensions"])
            for s in view.request.get("itemSets") or []
            if s.get("refId") == item.ref_id
        ]
        if given and not any(_same_dims(item.dims, g) for g in given):
            yield f"{where}: its item {item.label} is turned ({_fmt(item.dims)})"
        own = [
            float(s.get("weight", 0))
            for s in view.request.get("itemSets") or []
            if s.get("refId") == item.ref_id
        ]
        contents = sum(i.weight for i in box.items)
        if own and not any(_close(item.weight, w + contents) for w in own):
            yield f"{where}: its item weighs {item.weight:g}, not its own plus {contents:g} inside"
        o = options.get("origin") or {}
        at = (
            (item.origin[0] + float(o.get("x", 0))) if item.origin else 0.0,
            (item.origin[1] + float(o.get("y", 0))) if item.origin else 0.0,
            (item.origin[2] + float(o.get("z", 0))) if item.origin else 0.0,
        )
        origin = box.wire["subspace"].get("originInParent")
        if origin is None or not _same_dims(_vec(origin), at):
            yield f"{where}: originInParent {origin}, item origin plus rule origin is {_fmt(at)}"
        rules = view.request.get("rules") or []
        for inner in box.items:
            group = view.group_of(inner)
            kept_out = [
                r.get("operation")
                for r in rules
                if r.get("operation") in ("pack-as-is", "irregular") and _selects(r, inner.wire)
            ]
            # Units of measure stay out; an auto-id group may also hold a set without them
            # (one shape), so only a group whose every set with units has them says so.
            with_units = [s for s in group.sets if s.get("quantity", 1) > 0] if group else []
            # Beside sets without them a case (a unit of several eaches) is still a rung.
            if with_units and (
                all(s.get("dimensionSets") for s in with_units)
                or (inner.units > 1 and any(s.get("dimensionSets") for s in with_units))
            ):
                kept_out.append("dimensionSets")
            if kept_out:
                yield f"{where}: holds {inner.label}, which {kept_out[0]} keeps out of subspaces"


def check_nesting_chains(view: PackView) -> Iterator[str]:
    """A box inside an item (``subspace``: an internal space, or a pack-sequence box a
    later stage carries) leads, box by box through the items holding it, to a box that
    ships: the chain never returns to a box it has passed."""
    by_id = {b.wire.get("id"): b for b in view.boxes}
    for box in view.boxes:
        seen = {box.position}
        current = box
        while current.wire.get("subspace"):
            parent = by_id.get(current.wire["subspace"].get("parentBoxIndex"))
            if parent is None:
                break  # check_pack_sequence reports a missing parent
            if parent.position in seen:
                yield f"nesting: box {box.position} is inside itself (via box {parent.position})"
                break
            seen.add(parent.position)
            current = parent


def check_hosts_unturned(view: PackView) -> Iterator[str]:
    """An item with an internal space packs as given wherever it is (in a box or in
    another item's space), so its space keeps its place; see ``_hosts_subspaces`` (in a
    pack-sequence stage, against the stage's box types)."""
    if not _rules(view, "internal-space"):
        return
    for box in view.boxes:
        for item in box.items:
            if not _hosts_subspaces(view, item.wire) or _given_prepacked(view, item):
                continue
            given = [
                _vec(s["dimensions"])
                for s in view.request.get("itemSets") or []
                if s.get("refId") == item.ref_id
            ]
            if given and not any(_same_dims(item.dims, g) for g in given):
                yield f"internal-space: {item.label} has an internal space but is turned"


def _stage_rules(view: PackView) -> list[tuple[int, Wire]]:
    """(rule index, rule) of every pack-sequence rule."""
    rules = view.request.get("rules") or []
    return [(i, r) for i, r in enumerate(rules) if r.get("operation") == "pack-sequence"]


def _stage_of(view: PackView, box: Box, depth: int = 0) -> int | None:
    """The rule index of the pack-sequence stage that packed ``box`` (None: the items no
    stage selects). A box holds the items of one stage: request items the stage's rule
    selects first, or boxes reduced to items by a stage whose reduced boxes it takes (the
    next stage of their key, else the first stage of the next index)."""
    stages = _stage_rules(view)
    if not stages or not box.items or depth > len(stages):
        return None
    carriers = _box_carriers(view)
    item = box.items[0]
    if item.index in carriers:
        inner = _stage_of(view, carriers[item.index], depth + 1)
        rule = dict(stages).get(inner) if inner is not None else None
        if rule is None:
            return None
        key = (rule.get("options") or {}).get("key", "")
        index = (rule.get("options") or {}).get("index", 0)
        # The next stage of the same key, else the first (in rule order) of the next index.
        later = sorted(
            ((r.get("options") or {}).get("index", 0), i, (r.get("options") or {}).get("key", ""))
            for i, r in stages
            if (r.get("options") or {}).get("index", 0) > index
        )
        same_key = [(stage_index, i) for stage_index, i, k in later if k == key]
        if same_key:
            return same_key[0][1]
        return later[0][1] if later else None
    return next((i for i, r in stages if _selects(r, item.wire)), None)


def check_stage_box_types(view: PackView) -> Iterator[str]:
    """A pack-sequence stage packs into its rule's target box types (by refId or match,
    generated ones included), or into any without targets; with reduce pack-as-is its
    items ship in their own cartons."""
    stages = dict(_stage_rules(view))
    for box in view.boxes:
        if _is_as_is_box(view, box) or _space_rule(view, box) is not None:
            continue  # an internal space is its item's, not a box type of the stage
        stage = _stage_of(view, box)
        rule = stages.get(stage) if stage is not None else None
        if rule is None or not (rule.get("targetBoxRefIds") or rule.get("targetBoxMatch")):
            continue
        if not _targets_box(rule, box.wire):
            yield (
                f"pack-sequence: box {box.position} ({box.wire.get('name') or 'no name'}, refId "
                f"{box.wire.get('refId')}) holds the stage of rules[{stage}], which packs into "
                "its target box types only"
            )


def check_pack_sequence(view: PackView) -> Iterator[str]:
    """A box inside another (subspace) sits in an existing item of that box, at that item's
    origin; the item has the box's outer dimensions (or inner, without outer), turned,
    and weighs what the box weighs in all."""
    for item_index, inner in _box_carriers(view).items():
        subspace = inner.wire["subspace"]
        parent_box = subspace.get("parentBoxIndex")
        parent = next((b for b in view.boxes if b.wire.get("id") == parent_box), None)
        item = next((i for i in parent.items if i.index == item_index), None) if parent else None
        where = f"pack-sequence: box {inner.position}"
        if parent is None or item is None:
            yield f"{where}: parent box {parent_box} item {item_index} does not exist"
            continue
        outer = (inner.wire.get("outer") or {}).get("dimensions")
        dims = _vec(outer) if outer else inner.dims
        if not _same_dims(sorted_dims(item.dims), sorted_dims(dims)):
            yield f"{where}: its item {item_index} is {_fmt(item.dims)}, the box {_fmt(dims)}"
        if not _close(item.weight, float(inner.wire["weightUsed"])):
            yield f"{where}: its item {item_index} weighs {item.weight:g}, the box more or less"
        origin = subspace.get("originInParent")
        if item.origin is None or origin is None or not _same_dims(item.origin, _vec(origin)):
            yield f"{where}: originInParent is not its item's origin"


# --- relations through nesting (ignoreSubspaces) --------------------------------------
# A box with ``subspace`` is inside an item of another box: a pack-sequence box reduced
# to an item of the next stage, or an item's internal space. Rules with
# ``ignoreSubspaces: true`` hold for direct relations only (the checks above: two items
# in one box, an item and its box). With false (or absent, the schema's default) they
# hold through the nesting too: an item relates to every item of the shipped box it ends
# up in, however deep either is, except the items it is inside (it is packed in them,
# not with them); to every box it is inside; and the weight resting on each item it is
# inside rests on it.


def _sees_through(rule: Wire) -> bool:
    return not rule.get("ignoreSubspaces")


def _holders(view: PackView) -> dict[int, tuple[Box, Item]]:
    """Box position of every box inside an item -> (the box holding that item, the item)."""
    by_id = {b.wire.get("id"): b for b in view.boxes}
    out: dict[int, tuple[Box, Item]] = {}
    for box in view.boxes:
        subspace = box.wire.get("subspace") or {}
        parent = by_id.get(subspace.get("parentBoxIndex"))
        item = (
            next((i for i in parent.items if i.index == subspace.get("parentItemIndex")), None)
            if parent is not None
            else None
        )
        if parent is not None and item is not None and parent.position != box.position:
            out[box.position] = (parent, item)
    return out


def _chain(holders: dict[int, tuple[Box, Item]], box: Box) -> list[tuple[Box, Item, Box]]:
    """From ``box`` outwards: (the box inside an item, the box holding it, the item), up
    to the shipped box."""
    out: list[tuple[Box, Item, Box]] = []
    seen = {box.position}
    while box.position in holders:
        parent, item = holders[box.position]
        if parent.position in seen:
            break  # a cycle is check_pack_sequence's to report
        out.append((box, item, parent))
        seen.add(parent.position)
        box = parent
    return out


def _nested_members(view: PackView) -> dict[int, list[tuple[Item, list[Item]]]]:
    """Shipped box position -> every item in it at any depth, with the items it is inside."""
    holders = _holders(view)
    out: dict[int, list[tuple[Item, list[Item]]]] = defaultdict(list)
    for box in view.boxes:
        chain = _chain(holders, box)
        root = chain[-1][2] if chain else box
        out[root.position] += [(item, [c for _, c, _ in chain]) for item in box.items]
    return out


def _load_above(box: Box, item: Item) -> float:
    return sum(o.weight for o in box.items if o is not item and _rests_above(o, item))


def _nested_pairs(view: PackView) -> Iterator[tuple[Item, Item, int]]:
    """(a, b, shipped box) for two items in different boxes of one shipment, neither
    inside the other."""
    for root, members in _nested_members(view).items():
        for a, a_in in members:
            for b, b_in in members:
                if a.box != b.box and b not in a_in and a not in b_in:
                    yield a, b, root


def check_nested_exclusions(view: PackView) -> Iterator[str]:
    """exclude / exclude-all without ignoreSubspaces hold through nesting: between items
    of one shipped box at any depth (neither inside the other), and between an item and
    every box it is inside."""
    rules = [r for r in _rules(view, "exclude") if _sees_through(r)]
    alls = [r for r in _rules(view, "exclude-all") if _sees_through(r)]
    if not rules and not alls:
        return
    reported: set[tuple[int, str]] = set()  # one line per item and kind of rule
    for a, b, root in _nested_pairs(view):
        if a.ref_id == b.ref_id:
            continue
        excluded = any(_selects(r, a.wire) and _targets(r, b.wire) for r in rules)
        if excluded and (id(a), "exclude") not in reported:
            reported.add((id(a), "exclude"))
            yield f"exclusion (nested): {a.label} and {b.label} are both in shipped box {root}"
        if any(_selects(r, a.wire) for r in alls) and (id(a), "all") not in reported:
            reported.add((id(a), "all"))
            yield (
                f"exclusion (nested): {a.label} is in shipped box {root} with {b.label} "
                "despite exclude-all"
            )
    holders = _holders(view)
    for box in view.boxes:
        for _, _, outer in _chain(holders, box):
            for item in box.items:
                if any(_selects(r, item.wire) and _targets_box(r, outer.wire) for r in rules):
                    yield (
                        f"exclusion (nested): {item.label} is inside box {outer.position}, "
                        "which the rule excludes it from"
                    )


def check_nested_fragile(view: PackView) -> Iterator[str]:
    """fragile without ignoreSubspaces holds through nesting: the weight resting on the
    item counts what rests on every item it is inside too (onTopOnly: nothing at any
    level), and excludeOverweight keeps heavier items of the same shipped box out (an item
    a box was reduced to weighs the box)."""
    rules = _rules(view, "fragile")
    if not rules:
        return
    holders = _holders(view)
    for box in view.boxes:
        chain = _chain(holders, box)
        for item in box.items:
            rule = next((r for r in rules if _selects(r, item.wire)), None)
            if not chain or rule is None or not _sees_through(rule):
                continue
            options = rule.get("options") or {}
            load = _load_above(box, item) + sum(_load_above(p, c) for _, c, p in chain)
            limit = options.get("maxWeight")
            if options.get("onTopOnly") and load > 0:
                yield f"fragile (nested): {item.label} is on-top-only but carries {load:g}"
            if limit is not None and load > float(limit) + EPS:
                yield (
                    f"fragile (nested): {item.label} carries {load:g} through the items it "
                    f"is inside, maxWeight {limit:g}"
                )
    for a, b, root in _nested_pairs(view):
        rule = next((r for r in rules if _selects(r, a.wire)), None)
        if rule is None or not _sees_through(rule):
            continue
        options = rule.get("options") or {}
        limit = options.get("maxWeight")
        if limit is None or not options.get("excludeOverweight") or a.ref_id == b.ref_id:
            continue
        if b.weight > float(limit) + EPS:
            yield (
                f"fragile (nested): {b.label} weighs {b.weight:g}, over {a.label}'s maxWeight "
                f"{limit:g}, and is in the same shipped box {root}"
            )


def _turns_of(dims: Vec, given: Vec) -> list[tuple[int, int, int]]:
    """Axis permutations p with dims[a] = given[p[a]]."""
    return [
        (p[0], p[1], p[2])
        for p in itertools.permutations(range(3))
        if _same_dims(dims, (given[p[0]], given[p[1]], given[p[2]]))
    ]


def _frame(view: PackView, box: Box, carrier: Item) -> Vec:
    """The axes of a box inside ``carrier``, as the carrier's given dimensions: an
    internal space lies along its item's own axes, a reduced box's item is the box (its
    outer dimensions when it has them)."""
    if _space_rule(view, box) is not None:
        given = [
            _vec(s["dimensions"])
            for s in view.request.get("itemSets") or []
            if s.get("refId") == carrier.ref_id
        ]
        if given:
            return given[0]
    outer = (box.wire.get("outer") or {}).get("dimensions")
    return _vec(outer) if outer else box.dims


def _turns_inside(view: PackView, carrier: Item) -> set[tuple[int, int, int]] | None:
    """The turns of ``carrier`` that keep every locked item inside it (at any depth, by a
    lock that sees through nesting) within its lock; None when none is locked."""
    rules = _rules(view, "lock-orientation")
    if not rules or carrier.index is None:
        return None
    as_is = _rules(view, "pack-as-is")
    holders = _holders(view)
    allowed: set[tuple[int, int, int]] | None = None
    for box in view.boxes:
        if not any(c is carrier for _, c, _ in _chain(holders, box)):
            continue
        for item in box.items:
            rule = next((r for r in rules if _selects(r, item.wire)), None)
            if (
                rule is None
                or not _sees_through(rule)
                or any(_selects(r, item.wire) for r in as_is)
            ):
                continue
            turns = _allowed_turns((rule.get("options") or {}).get("freeAxes") or [])
            allowed = turns if allowed is None else allowed & turns
    return allowed


def check_nested_locks(view: PackView) -> Iterator[str]:
    """lock-orientation without ignoreSubspaces holds in the shipped box: an item's turn
    inside its box composed with the turns of the items it is inside stays among those its
    free axes allow."""
    rules = _rules(view, "lock-orientation")
    if not rules:
        return
    as_is = _rules(view, "pack-as-is")
    holders = _holders(view)
    for box in view.boxes:
        chain = _chain(holders, box)
        if not chain or _is_as_is_box(view, box):
            continue
        for item in box.items:
            rule = next((r for r in rules if _selects(r, item.wire)), None)
            if rule is None or not _sees_through(rule):
                continue
            if any(_selects(r, item.wire) for r in as_is) or view.group_of(item) is None:
                continue
            turns = {p for given in _given_dims(view, item) for p in _turns_of(item.dims, given)}
            for inner, carrier, _ in chain:
                frame = _frame(view, inner, carrier)
                turns = {
                    (p[q[0]], p[q[1]], p[q[2]])
                    for p in turns
                    for q in _turns_of(carrier.dims, frame)
                }
            free = (rule.get("options") or {}).get("freeAxes") or []
            if not turns & _allowed_turns(free):
                yield (
                    f"orientation (nested): {item.label} is turned in its shipped box beyond "
                    f"its locked axes (freeAxes {free}) through the items it is inside"
                )


# --- pre-packed boxes and box options -----------------------------------------------


def check_prepacked(view: PackView) -> Iterator[str]:
    """Pre-packed boxes come first, in order, each with its type's dimensions (and refId
    and name, where both give them) and every unit of its own items (an item with an
    origin exactly there, as given)."""
    prepacked = view.request.get("boxes") or []
    if len(view.boxes) < len(prepacked):
        yield f"prepacked: {len(prepacked)} pre-packed boxes, only {len(view.boxes)} returned"
        return
    for position, wire in enumerate(prepacked):
        box = view.boxes[position]
        where = f"prepacked: box {position}"
        box_type = _prepacked_box_type(view.request, position)
        dims = box_type.get("dimensions")
        if dims is not None and not _same_dims(_vec(dims), box.dims):
            yield f"{where}: dimensions {_fmt(box.dims)}, the pre-packed box has {_fmt(_vec(dims))}"
        for name in ("refId", "name"):
            if (
                box_type.get(name) is not None
                and box.wire.get(name, box_type[name]) != box_type[name]
            ):
                yield (
                    f"{where}: {name} {box.wire.get(name)!r}, the pre-packed box has "
                    f"{box_type[name]!r}"
                )
        available = list(box.items)
        for i, entry in enumerate(wire.get("items") or []):
            item = entry["item"]
            shape = _shape(item)
            origin = item.get("origin")
            for _ in range(int(item.get("quantity") or 1)):
                found = next(
                    (
                        it
                        for it in available
                        if (item.get("refId") is None or it.ref_id == item["refId"])
                        and _same_shape((sorted_dims(it.dims), it.weight), shape)
                        and (
                            origin is None
                            or (
                                it.origin is not None
                                and _same_dims(it.origin, _vec(origin))
                                and _same_dims(it.dims, _vec(item["dimensions"]))
                            )
                        )
                    ),
                    None,
                )
                if found is None:
                    at = f" at {_fmt(_vec(origin))}" if origin else ""
                    yield f"{where}: its item {i} (refId {item.get('refId')}){at} is missing"
                    break
                available.remove(found)


def _reserved_share(view: PackView, box: Box) -> float:
    box_type = _matching_box_type(view, box) or {}
    share = box_type.get("reservedSpace")
    if share is None:
        share = view.request.get("reservedSpace")
    return float(share) if _is_number(share) else 0.0


def check_reserved_space(view: PackView) -> Iterator[str]:
    """reservedSpace r: items fill at most (1 - r) of the box, volumeReserved = r x
    volumeMax, volumeUsed = volumeNet + volumeReserved."""
    for box in view.boxes:
        share = _reserved_share(view, box)
        volume = _volume(box.dims)
        net = sum(_occupied_volume(view, box, item) for item in box.items)
        where = f"reserved: box {box.position}"
        if net > (1 - share) * volume * (1 + EPS) + EPS and _new_units(view, box):
            yield f"{where}: items fill {net:g} of {volume:g}, reservedSpace {share:g} allows less"
        reserved = box.wire.get("volumeReserved")
        if reserved is not None and not _close(float(reserved), share * volume):
            yield f"{where}: volumeReserved {reserved:g}, expected {share * volume:g}"
        used = box.wire.get("volumeUsed")
        if used is not None and not _close(float(used), net + share * volume):
            yield f"{where}: volumeUsed {used:g}, expected {net + share * volume:g}"


def _amount(item: Item, key: str) -> float:
    return _numeric((item.wire.get("properties") or {}).get(key))


def _numeric(value: object) -> float:
    """A property's amount: its number, else 0."""
    return float(value) if isinstance(value, int | float) and _is_number(value) else 0.0


def check_property_constraints(view: PackView) -> Iterator[str]:
    """propertyConstraints (sum) of a box's type: start value plus the items' amounts is at
    most max, and is the box's reported value; the box echoes its type's constraints
    (``_constraint_echo_problems``)."""
    for box in view.boxes:
        found = _matching_box_type(view, box)
        box_type = found or {}
        reported = list(box.wire.get("propertyConstraints") or [])
        for n, constraint in enumerate(box_type.get("propertyConstraints") or []):
            key = constraint["key"]
            total = float(constraint.get("value") or 0) + sum(
                _amount(item, key) for item in box.items
            )
            limit = constraint.get("max")
            # A unit without the property may always enter; given items may exceed it.
            amounts = any(_amount(item, key) > 0 for item in _new_units(view, box))
            if limit is not None and amounts and total > float(limit) + EPS * max(1.0, limit):
                yield (f"property: box {box.position}: {key!r} sums to {total:g} > max {limit:g}")
            value = reported[n].get("value") if n < len(reported) else None
            if value is None or not _close(float(value), total):
                yield f"property: box {box.position}: {key!r} value {value!r}, items give {total:g}"
        if found is not None:
            yield from _constraint_echo_problems(box, found)


def _constraint_echo(constraint: Wire) -> dict[str, Any]:
    """A box type's constraint as a box echoes it (spec §C): its key and max as given,
    its aggregate, default ``sum`` (the only function)."""
    echo = {"key": constraint.get("key"), "aggregate": constraint.get("aggregate") or "sum"}
    if constraint.get("max") is not None:
        echo["max"] = float(constraint["max"])
    return echo


def _constraint_echo_problems(box: Box, box_type: Wire) -> Iterator[str]:
    """A box's ``propertyConstraints`` are its type's, one for one in their order, each
    with its key, max and aggregate (sum by default) and the box's current ``value``
    (check_property_constraints judges the value); its ``boxType`` echo, where given,
    has the type's constraints with their own start ``value`` and the aggregate filled in.
    A type without constraints gives a box without any."""
    given = [c for c in box_type.get("propertyConstraints") or [] if isinstance(c, Mapping)]
    want = [_constraint_echo(c) for c in given]
    reported = [c for c in box.wire.get("propertyConstraints") or [] if isinstance(c, Mapping)]
    got = [
        {
            k: (float(v) if k == "max" and _is_number(v) else v)
            for k, v in _constraint_echo(c).items()
        }
        for c in reported
    ]
    if got != want:
        yield (
            f"property: box {box.position}: propertyConstraints echo "
            f"{[{k: c.get(k) for k in ('key', 'max', 'aggregate')} for c in reported]}, "
            f"its type says {want}"
        )
    echo = box.wire.get("boxType")
    if not isinstance(echo, Mapping) or "dimensions" not in echo:
        return
    echoed = [c for c in echo.get("propertyConstraints") or [] if isinstance(c, Mapping)]
    want_type = [
        {**_constraint_echo(c), "value": float(c["value"]) if _is_number(c.get("value")) else None}
        for c in given
    ]
    got_type = [
        {**_constraint_echo(c), "value": float(c["value"]) if _is_number(c.get("value")) else None}
        for c in echoed
    ]
    if got_type != want_type:
        yield (
            f"property: box {box.position}: boxType echoes propertyConstraints {echoed}, "
            f"its type says {given}"
        )


def check_packed_index(view: PackView) -> Iterator[str]:
    """``packedIndex`` is a unit's position in the winning sort (reference.md): an integer
    >= 0 wherever given. When one engine pass packs every new unit (no packing in parts:
    pack-sequence, internal-space, group-pack, bounded-fill), the sort holds each unit
    once, packed or left over, so the packed units' indices are distinct and below the
    number of new units (those with a packedIndex plus the leftovers); with bounded-fill
    (the only part) too, and fill units come after the others (``_fill_order_problems``).
    Not checked:
    that the order follows ``itemSortUsed`` (clustered and search strategies, ladders
    and ties keep it from being a plain sort of the items), nor indices across parts."""
    first: dict[int, str] = {}
    repeats: list[str] = []
    for box in view.boxes:
        for item in box.items:
            index = item.wire.get("packedIndex")
            if index is None:
                continue
            if not isinstance(index, int) or isinstance(index, bool) or index < 0:
                yield f"packed-index: {item.label}: packedIndex {index!r} is not an integer >= 0"
            elif index in first:
                repeats.append(f"packed-index: {item.label} and {first[index]} share {index}")
            else:
                first[index] = item.label
    parts = {r.get("operation") for r in view.request.get("rules") or []} & set(_PARTS)
    if parts - {"bounded-fill"}:
        return
    yield from repeats
    units = len(first) + len(repeats) + len(view.leftovers)
    for index, label in first.items():
        if index >= units:
            yield (
                f"packed-index: {label}: packedIndex {index}, but the sort holds {units} "
                "units (packed and left over)"
            )
    if parts:
        yield from _fill_order_problems(view)


def _sort_key(sort: str, dims: Vec, weight: float, quantity: int) -> float | None:
    """A unit's key under a wire sort (spec §A's item sort table), arranged so that the
    sort's order is ascending keys; None for sorts not judged here (largest-box-needed
    depends on which box types hold the unit)."""
    large, middle, small = sorted(dims, reverse=True)
    volume = _volume(dims)
    keys = {
        "default": -volume,
        "largest-girth": -2 * (middle + small),
        "largest-length-plus-girth": -(large + 2 * (middle + small)),
        "longest-dimension": -large,
        "shortest-dimension": small,
        "largest-cross-section": -(large * middle),
        "set-volume": -volume * quantity,
        "weight": -weight,
        "density": -(weight / volume) if volume > 0 else 0.0,
    }
    return keys.get(sort)


#: Rules under which units keep their item set's shape and the sort alone orders them.
_SORT_NEUTRAL_RULES = ("lock-orientation", "exclude", "exclude-all", "set-properties")


def check_sort_order(view: PackView) -> Iterator[str]:
    """``packedIndex`` follows ``itemSortUsed`` (in the direction ``itemSortReverseUsed``
    says): of two packed units whose keys under that sort clearly differ, the one first
    in the sort has the lower packedIndex. Judged where the order is the plain sort of
    the item sets: a single sort requested and reported (``combined`` and ``all`` add
    orderings that report the requested name), one pack of units as given (no pre-packed
    boxes, random items, sequenceSort, unit ladders or rules beyond locks, exclusions
    and set-properties: fragile units are offered last, and the others reshape units or
    pack in parts), and units of refIds given by exactly one item set."""
    request, response = view.request, view.response
    sort = response.get("itemSortUsed")
    reverse = response.get("itemSortReverseUsed")
    if (
        sort != request.get("itemSort")
        or not isinstance(reverse, bool)
        or request.get("boxes")
        or request.get("random")
        or request.get("sequenceSort")
        or any(r.get("operation") not in _SORT_NEUTRAL_RULES for r in request.get("rules") or [])
        or any(s.get("dimensionSets") for s in request.get("itemSets") or [])
    ):
        return
    sets_of: dict[object, list[Wire]] = defaultdict(list)
    for item_set in request.get("itemSets") or []:
        sets_of[item_set.get("refId")].append(item_set)
    ranked: list[tuple[float, int, str]] = []
    for box in view.boxes:
        for item in box.items:
            index = item.wire.get("packedIndex")
            sets = sets_of.get(item.ref_id) if item.ref_id in view.explicit else None
            if not isinstance(index, int) or isinstance(index, bool) or not sets or len(sets) > 1:
                continue
            key = _sort_key(str(sort), item.dims, item.weight, int(sets[0].get("quantity", 1)))
            if key is None:
                return
            ranked.append((-key if reverse else key, index, item.label))
    ranked.sort(key=lambda r: r[1])
    # The largest key so far in packedIndex order: a unit clearly below it came too late.
    top: tuple[float, int, str] | None = None
    for key, index, label in ranked:
        if top is not None and top[0] - key > 1e-3 * max(1.0, abs(top[0]), abs(key)):
            yield (
                f"sort-order: {label} (packedIndex {index}) comes after {top[2]} (packedIndex "
                f"{top[1]}), though it is ahead by {sort}{' reversed' if reverse else ''}"
            )
            return
        if top is None or key > top[0]:
            top = (key, index, label)


def _fill_order_problems(view: PackView) -> Iterator[str]:
    """docs/rules.md: bounded-fill units go in after the request's other units, and each
    one's packedIndex follows every unit packed before it. Judged between refIds whose
    every item set fills (unit ladders keep their shape) and refIds none of whose sets
    does."""
    by_ref: dict[object, set[bool]] = defaultdict(set)
    for item_set in view.request.get("itemSets") or []:
        fills = _fill_rule(view, item_set) is not None and not item_set.get("dimensionSets")
        by_ref[item_set.get("refId")].add(fills)
    fill_refs = {r for r, kinds in by_ref.items() if kinds == {True} and r in view.explicit}
    other_refs = {r for r, kinds in by_ref.items() if kinds == {False} and r in view.explicit}
    fill_items: list[tuple[int, str]] = []
    others: list[tuple[int, str]] = []
    for box in view.boxes:
        for item in box.items:
            index = item.wire.get("packedIndex")
            if not isinstance(index, int) or isinstance(index, bool):
                continue
            if item.ref_id in fill_refs:
                fill_items.append((index, item.label))
            elif item.ref_id in other_refs:
                others.append((index, item.label))
    if fill_items and others and min(fill_items) < max(others):
        (low, filled), (high, other) = min(fill_items), max(others)
        yield (
            f"packed-index: bounded-fill {filled} has packedIndex {low}, before {other} "
            f"({high}), packed before it"
        )


def check_lookback(view: PackView) -> Iterator[str]:
    """boxTypeChoiceLookback n >= 0: a box closes when the box n + 1 after it opens, so each
    item of box j precedes (packedIndex) every item of box j + n + 1."""
    lookback = view.request.get("boxTypeChoiceLookback")
    if not isinstance(lookback, int) or isinstance(lookback, bool) or lookback < 0:
        return
    # Subspaces are filled before any box opens; the window is over shipping boxes, and
    # each pack-sequence stage (or the items no stage takes) is a packing of its own.
    parts: dict[int | None, list[Box]] = defaultdict(list)
    for box in view.boxes[len(view.request.get("boxes") or []) :]:
        if _space_rule(view, box) is None:
            parts[_stage_of(view, box)].append(box)
    for new in parts.values():
        indices = [
            [it.wire["packedIndex"] for it in box.items if it.wire.get("packedIndex") is not None]
            for box in new
        ]
        for j, later in enumerate(indices[lookback + 1 :]):
            if indices[j] and later and max(indices[j]) > min(later):
                yield (
                    f"lookback: box {new[j].position} took item {max(indices[j])} after box "
                    f"{new[j + lookback + 1].position} opened with item {min(later)} "
                    f"(boxTypeChoiceLookback {lookback})"
                )


#: The engine's length unit per unit of the request's (geometry.rs SCALE).
_SCALE = 10_000.0


def _reserved_side(side: float) -> float:
    """The room the engine reserves for an item's side (geometry.rs ``len_side``): rounded
    up to its grid, a side within a millionth (relative) of a step count being that count,
    and a positive side taking at least one step."""
    scaled = side * _SCALE
    nearest = round(scaled)
    steps = nearest if abs(scaled - nearest) <= 1e-6 * max(abs(nearest), 1) else math.ceil(scaled)
    return (1 if steps == 0 and side > 0 else steps) / _SCALE


#: How far past an item's reported end, along an axis, the engine's room for it may
#: reach; None where a step either way is allowed (``_grid_reach``).
Reach = Callable[[Item, int], float | None]
#: Whether the second item starts, along the axis, where the first ends.
Abuts = Callable[[Item, Item, int], bool]


def _grid_reach(view: PackView, box: Box) -> Reach:
    """How far the engine's room for an item reaches past its reported end along an axis:
    it reserves each side rounded up to its grid (docs/decisions.md), so that rounding.
    A group-pack group is reserved as a whole, so for a unit of one up to a step. None
    (a step either way, and the box's tolerance) for a pre-packed box's given items,
    which stand at the request's origins (the engine rounds those up too), and in a box
    packed around an open space (blocking false), around pieces placed the same way."""
    loose = any(_open_space(view, box, i) is not None for i in box.items)

    def reach(item: Item, axis: int) -> float | None:
        if loose or _given_prepacked(view, item):
            return None
        if item.wire.get("groupPackParent") is not None:
            return GRID
        return max(0.0, _reserved_side(item.dims[axis]) - item.dims[axis])

    return reach


def _abuts_on_grid(view: PackView, box: Box) -> Abuts:
    """Whether ``b`` starts along ``axis`` where ``a`` ends as the engine sees them: the
    engine's next item starts where its room for ``a`` ends (``_grid_reach``), never
    further, and never inside ``a`` beyond the box's tolerance."""
    tol = EPS * max(box.dims)
    noise = 1e-9 * max(1.0, *box.dims)
    reach = _grid_reach(view, box)

    def abuts(a: Item, b: Item, axis: int) -> bool:
        assert a.origin is not None and b.origin is not None
        gap = b.origin[axis] - (a.origin[axis] + a.dims[axis])
        ra, rb = reach(a, axis), reach(b, axis)
        if ra is None or rb is None:
            return abs(gap) <= GRID + tol
        return -tol <= gap <= ra + noise

    return abuts


def _touch(a: Item, b: Item, tol: float, abuts: Abuts) -> bool:
    """The two items share part of a face with positive area, as the engine sees them on
    its grid (``abuts``): a contact a step wide (less that rounding) is one. Edges and
    corners do not count: overlaps up to the floats' noise (far below ``tol``, a
    millionth of the box) are none."""
    assert a.origin is not None and b.origin is not None
    noise = tol * 1e-7
    for axis in range(3):
        if not abuts(a, b, axis) and not abuts(b, a, axis):
            continue
        if all(
            min(a.origin[o] + a.dims[o], b.origin[o] + b.dims[o]) - max(a.origin[o], b.origin[o])
            > noise
            for o in range(3)
            if o != axis
        ):
            return True
    return False


def check_cohorts(view: PackView) -> Iterator[str]:
    """cohortPacking: the items of one refId in a box form at most cohortMax groups joined
    through shared faces (on the engine's grid: ``_abuts_on_grid``). Like the other
    limits, cohortMax binds what is added: a pre-packed box's given items may form more
    groups, and then a new unit of their refId may only join one (so the box ends with no
    more groups than the given items form among themselves)."""
    if not view.request.get("cohortPacking"):
        return
    limit = view.request.get("cohortMax")
    limit = 2 if limit is None else int(limit)
    for box in view.boxes:
        tol = EPS * max(box.dims)
        abuts = _abuts_on_grid(view, box)
        by_ref: dict[object, list[Item]] = defaultdict(list)
        for item in box.items:
            by_ref[item.ref_id].append(item)
        for ref_id, items in by_ref.items():
            groups = _face_groups(items, tol, abuts)
            given = _face_groups([i for i in items if _given_prepacked(view, i)], tol, abuts)
            if groups > max(limit, given):
                yield (
                    f"cohort: box {box.position}: refId {ref_id} in {groups} groups > "
                    f"cohortMax {limit}"
                    + (f" (its given pre-packed items form {given})" if given else "")
                )


def _face_groups(items: list[Item], tol: float, abuts: Abuts) -> int:
    """How many groups ``items`` form, two being joined by a chain of shared faces."""
    group = list(range(len(items)))

    def root(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    for i, j in itertools.combinations(range(len(items)), 2):
        if _touch(items[i], items[j], tol, abuts):
            group[root(i)] = root(j)
    return len({root(i) for i in range(len(items))})


def _group_sizes(view: PackView) -> dict[int, tuple[Wire, int, Vec, list[Wire]]]:
    """Per requested item set (position) that a group-pack rule groups: the rule, the units
    per group, the group's dimensions and the box types its groups are scaled against and
    ship in (completed by boxTypeDefaults). The first group-pack rule selecting an item set
    applies, unless a pack-as-is, irregular, fragile or alternate-dimensions rule (or a
    pack-sequence stage shipping as is) selects it too. Its box types are its
    pack-sequence stage's targets where the stage names some, else all. An axis is
    scaled when it is in ``axes`` and the unit is at least ``scaleFactorThreshold``
    (default ``axisMultiplier``) times smaller than the smallest of them on that axis."""
    rules = _rules(view, "group-pack")
    completed: list[Wire] = [*_box_types(view.request)]
    winners = [
        r
        for r in view.request.get("rules") or []
        if r.get("operation") in ("pack-as-is", "irregular", "fragile", "alternate-dimensions")
    ]
    out: dict[int, tuple[Wire, int, Vec, list[Wire]]] = {}
    if not rules or not completed:
        return out
    stages = _stage_rules(view)
    for position, item_set in enumerate(view.request.get("itemSets") or []):
        rule = next((r for r in rules if _selects(r, item_set)), None)
        if rule is None or any(_selects(w, item_set) for w in winners):
            continue
        if item_set.get("dimensionSets"):
            continue  # its units of measure win over grouping
        # In a pack-sequence stage: against the stage's box types; shipped as is, ungrouped.
        stage = next((r for _, r in stages if _selects(r, item_set)), None)
        stage_boxes = completed
        if stage is not None:
            if (stage.get("options") or {}).get("reduce") == "pack-as-is":
                continue
            if stage.get("targetBoxRefIds") or stage.get("targetBoxMatch"):
                stage_boxes = [box for box in completed if _targets_box(stage, box)]
            if not stage_boxes:
                continue
        options = rule.get("options") or {}
        multiplier = int(options["axisMultiplier"])
        threshold = float(options.get("scaleFactorThreshold", multiplier))
        axes = options.get("axes", [0, 1, 2])
        dims = _vec(item_set["dimensions"])
        counts = [
            multiplier
            if a in axes
            and dims[a] * threshold <= min(_vec(b["dimensions"])[a] for b in stage_boxes) + 1e-9
            else 1
            for a in range(3)
        ]
        per_group = counts[0] * counts[1] * counts[2]
        if per_group > 1:
            group = (dims[0] * counts[0], dims[1] * counts[1], dims[2] * counts[2])
            out[position] = (rule, per_group, group, stage_boxes)
    return out


def check_group_pack(view: PackView) -> Iterator[str]:
    """group-pack: the units of one group (``groupPackParent``) are all of one refId, in one
    box, as many as the rule's axes and multiplier give, and fill a cuboid that is the
    group's dimensions turned; their names end with ``nameSuffix``. An item set makes
    quantity // units-per-group groups unless no box type carries a group's weight and its
    constrained property amounts."""
    sizes = _group_sizes(view)
    if not sizes:
        return
    item_sets = view.request.get("itemSets") or []
    by_ref: dict[object, list[tuple[Wire, int, Vec, int, list[Wire], Wire]]] = defaultdict(list)
    for position, (rule, per_group, group, boxes) in sizes.items():
        item_set = item_sets[position]
        if _is_auto_ref_id(item_set.get("refId")):
            continue  # matched to its units by shape only; not judged here
        by_ref[item_set["refId"]].append(
            (rule, per_group, group, int(item_set.get("quantity", 1)), boxes, item_set)
        )
    groups: dict[str, list[Item]] = defaultdict(list)
    for box in view.boxes:
        for item in box.items:
            if item.wire.get("groupPackParent") is not None:
                groups[str(item.wire["groupPackParent"])].append(item)
    for item in view.leftovers:
        if item.wire.get("groupPackParent") is not None:
            yield f"group-pack: leftover {item.label} names a groupPackParent; leftovers are units"
    found: dict[object, int] = defaultdict(int)
    for parent, units in groups.items():
        ref_ids = {u.ref_id for u in units}
        where = f"group-pack: group {parent}"
        if len(ref_ids) == 1 and units[0].ref_id not in by_ref:
            if units[0].ref_id in view.explicit:
                yield f"{where} groups refId {units[0].ref_id}, which no group-pack rule groups"
            continue
        if len(ref_ids) != 1:
            yield f"{where} mixes refIds {sorted(map(str, ref_ids))}"
            continue
        found[units[0].ref_id] += 1
        if len({u.box for u in units}) != 1:
            yield f"{where} is spread over boxes {sorted({u.box or 0 for u in units})}"
            continue
        options = by_ref[units[0].ref_id]
        rule, per_group, group, _, _, _ = options[0]
        if not any(len(units) == o[1] for o in options):
            yield f"{where} has {len(units)} units, the rule makes groups of {per_group}"
        lo, hi = _bounds(units)
        span = (hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2])
        if not _close(_volume(span), sum(_volume(u.dims) for u in units)) or not any(
            _same_dims(sorted_dims(span), sorted_dims(o[2])) for o in options
        ):
            yield f"{where}: its units span {_fmt(span)}, not a {_fmt(group)} group"
        suffix = str((rule.get("options") or {}).get("nameSuffix", ""))
        if suffix and not all(str(u.wire.get("name", "")).endswith(suffix) for u in units):
            yield f"{where}: a unit's name does not end with nameSuffix {suffix!r}"

    def some_box_takes(item_set: Wire, n: int, boxes: list[Wire]) -> bool:
        # A group ships when one of its box types carries its weight and has room under
        # every property constraint for n units' amounts.
        weight = float(item_set.get("weight", 0)) * n
        properties = item_set.get("properties") or {}
        for b in boxes:
            limit = float(b.get("weightMax", 0))
            if limit > 0 and weight > limit - float(b.get("weightTare", 0)) + 1e-9:
                continue
            if all(
                float(c.get("value") or 0) + n * _numeric(properties.get(c["key"]))
                <= float(c["max"]) + 1e-9
                for c in b.get("propertyConstraints") or []
                if c.get("max") is not None
            ):
                return True
        return False

    for ref_id, options in by_ref.items():
        want = sum(q // n for _, n, _, q, boxes, s in options if some_box_takes(s, n, boxes))
        left = any(item.ref_id == ref_id for item in view.leftovers)
        # Groups that found no box come back as leftover units.
        if found[ref_id] > want or (found[ref_id] < want and not left):
            yield f"group-pack: refId {ref_id} makes {found[ref_id]} groups, expected {want}"


def _fill_rule(view: PackView, item: Wire) -> Wire | None:
    """The bounded-fill rule that may shape ``item``: the first selecting it, unless a
    pack-as-is, irregular, group-pack, fragile or lock-orientation rule selects it too, or
    every item set of its refId the rule selects packs as a unit ladder."""
    rules = view.request.get("rules") or []
    rule: Wire | None = next(
        (r for r in rules if r.get("operation") == "bounded-fill" and _selects(r, item)), None
    )
    winners = (
        "pack-as-is",
        "irregular",
        "group-pack",
        "fragile",
        "lock-orientation",
        "alternate-dimensions",
    )
    if rule is None or any(r.get("operation") in winners and _selects(r, item) for r in rules):
        return None
    selected = [
        s
        for s in view.request.get("itemSets") or []
        if _selects(rule, s) and s.get("refId") == item.get("refId")
    ]
    # Units of measure keep their shape; an item set of the refId without them fills (the
    # rule acts per item set, and the response does not say which one a unit came from).
    if selected and all(s.get("dimensionSets") for s in selected):
        return None
    return rule


def check_bounded_fill(view: PackView) -> Iterator[str]:
    """bounded-fill: a unit keeps its item set's volume, and either stands as a turn of
    its dimensions (packed as given) or keeps its dimension along ``criticalAxis``."""
    if not _rules(view, "bounded-fill"):
        return
    for item in view.items:
        rule = _fill_rule(view, item.wire)
        group = view.group_of(item)
        if rule is None or group is None:
            continue
        if any(_same_dims(sorted_dims(item.dims), dims) for dims, _ in group.shapes):
            continue
        given = [
            _vec(s["dimensions"])
            for s in view.request.get("itemSets") or []
            if s.get("refId") == item.ref_id
            or (_is_auto_ref_id(s.get("refId")) and _close(float(s.get("weight", 0)), item.weight))
        ]
        options = rule.get("options") or {}
        axis = options.get("criticalAxis", options.get("critialAxis"))
        if not any(
            _close(_volume(item.dims), _volume(g))
            and (axis is None or _close(item.dims[int(axis)], g[int(axis)]))
            for g in given
        ):
            yield (
                f"bounded-fill: {item.label} is {_fmt(item.dims)}: not the volume of "
                f"{' or '.join(_fmt(g) for g in given)} with criticalAxis {axis} kept"
            )


# --- unit ladders and centre of mass ---------------------------------------------------


def _unit_shapes(item_set: Wire) -> list[tuple[Shape, int]]:
    """The shapes an item set packs as, each with the eaches one unit holds: itself, or
    every rung of its ``dimensionSets``."""
    return [((sorted_dims(dims), weight), eaches) for dims, weight, eaches in _units(item_set)]


def _units(item_set: Wire) -> list[tuple[Vec, float, int]]:
    """(dimensions as given, weight, eaches) of each unit an item set packs as."""
    each_dims = _vec(item_set["dimensions"])
    each_weight = float(item_set.get("weight", 0.0))
    rungs = item_set.get("dimensionSets") or []
    if not rungs:
        return [(each_dims, each_weight, 1)]
    first = rungs[0]
    if first.get("dimensions"):
        each_dims = _vec(first["dimensions"])
    if first.get("weight") is not None:
        each_weight = float(first["weight"])
    out = [(each_dims, each_weight, 1)]
    for rung in rungs[1:]:
        multipliers = _vec(rung["axisMultipliers"]) if rung.get("axisMultipliers") else None
        divisor = rung.get("quantityDivisor")
        if divisor is None and multipliers is not None:
            divisor = round(math.prod(multipliers))
        if rung.get("dimensions"):
            dims = _vec(rung["dimensions"])
        elif multipliers is not None:
            dims = (
                each_dims[0] * multipliers[0],
                each_dims[1] * multipliers[1],
                each_dims[2] * multipliers[2],
            )
        else:
            continue  # malformed: the service refuses it
        weight = rung.get("weight")
        weight = float(weight) if weight is not None else each_weight * int(divisor or 1)
        out.append((dims, weight, int(divisor or 1)))
    return out


def _given_prepacked(view: PackView, item: Item) -> bool:
    """``item`` is one the request's pre-packed boxes brought (not a unit of its item
    sets): it sits in a pre-packed box and has no ``packedIndex``."""
    prepacked = len(view.request.get("boxes") or [])
    return item.box is not None and item.box < prepacked and "packedIndex" not in item.wire


def check_dimension_sets(view: PackView) -> Iterator[str]:
    """An item set with ``dimensionSets`` packs as many of its largest units as its
    quantity allows, the rest in the next smaller ones, eaches last. Item sets sharing
    its refId add their own units (eaches, without a ladder) to what the refId packs as."""
    by_ref: dict[Any, list[Wire]] = defaultdict(list)
    for item_set in view.request.get("itemSets") or []:
        by_ref[item_set.get("refId")].append(item_set)
    for ref_id, item_sets in by_ref.items():
        if not any(s.get("dimensionSets") for s in item_sets) or _is_auto_ref_id(ref_id):
            continue
        if any(_hosts_subspaces(view, s) for s in item_sets):
            continue  # each unit carries its own subspace: it packs as eaches
        wanted: dict[int, int] = defaultdict(int)
        for item_set in item_sets:
            left = int(item_set.get("quantity", 1))
            for divisor in sorted({d for _, d in _unit_shapes(item_set)}, reverse=True):
                count, left = divmod(left, divisor)
                wanted[divisor] += count
        got: dict[int, int] = defaultdict(int)
        for item in view.items:
            if item.ref_id == ref_id and not _given_prepacked(view, item):
                got[item.units] += 1
        if {k: v for k, v in got.items() if v} != {k: v for k, v in wanted.items() if v}:
            yield (
                f"dimension-sets: refId {ref_id}: units of (eaches: count) {dict(got)}, "
                f"the ladder gives {dict(wanted)}"
            )


def _offset_fits(placed: Vec, offset: Vec, dims: Vec, given: Vec) -> bool:
    """Whether ``placed`` (an offset within a unit of placed ``dims``) is ``offset`` (within
    ``given``) turned: along each axis the matching given offset or the side minus it."""
    for perm in itertools.permutations(range(3)):
        if all(_close(dims[a], given[perm[a]]) for a in range(3)) and all(
            _close(placed[a], offset[perm[a]]) or _close(placed[a], dims[a] - offset[perm[a]])
            for a in range(3)
        ):
            return True
    return False


def _centred(view: PackView, item: Item, carriers: Mapping[int, Box], hosts: set[Any]) -> bool:
    """Whether ``item``'s centre of mass must be its middle: no item set it may come from
    gives a ``centerOfMass``, and it is a plain unit (not a box's stand-in, not the host
    of filled internal space, not a pre-packed item as given)."""
    group = view.group_of(item)
    if group is None or any(s.get("centerOfMass") is not None for s in group.sets):
        return False
    return not (item.index in carriers or item.index in hosts or _given_prepacked(view, item))


def check_center_of_mass(view: PackView) -> Iterator[str]:
    """Each item's centre of mass lies within it (turned with it when the item set gives
    one, except for soft bounded-fill units), in its middle when its item set gives none
    (docs/decisions.md); each box's is the weighted mean of its items'."""
    offsets = {
        s["refId"]: (_vec(s["centerOfMass"]), _vec(s["dimensions"]))
        for s in view.request.get("itemSets") or []
        if s.get("centerOfMass") is not None
        and not s.get("dimensionSets")
        and not _is_auto_ref_id(s.get("refId"))
    }
    carriers = _box_carriers(view)
    hosts = {
        (inner.wire.get("subspace") or {}).get("parentItemIndex")
        for inner in view.boxes
        if _space_rule(view, inner) is not None
    }
    for box in view.boxes:
        weights = [item.weight for item in box.items]
        if sum(weights) <= 0:
            weights = [_volume(item.dims) for item in box.items]
        centres = []
        for item in box.items:
            com = item.wire.get("centerOfMass")
            if com is None or item.origin is None:
                continue
            c = _vec(com)
            inside = (c[0] - item.origin[0], c[1] - item.origin[1], c[2] - item.origin[2])
            centres.append(c)
            if any(v < -EPS or v > item.dims[a] + EPS for a, v in enumerate(inside)):
                yield f"center-of-mass: {item.label}: {_fmt(c)} lies outside the item"
            elif _centred(view, item, carriers, hosts) and not _same_dims(
                inside, (item.dims[0] / 2, item.dims[1] / 2, item.dims[2] / 2)
            ):
                yield (
                    f"center-of-mass: {item.label}: offset {_fmt(inside)} is not its middle, "
                    "and its item set gives no centerOfMass"
                )
            elif (
                item.ref_id in offsets
                and not item.wire.get("dimensionSet")
                and not _given_prepacked(view, item)
                # A soft bounded-fill unit takes the space's shape: its middle, not an offset.
                and _fill_rule(view, item.wire) is None
            ):
                offset, given = offsets[item.ref_id]
                # An alternate shape keeps the offset in proportion along each given axis.
                shapes: list[tuple[Vec, Vec]] = [(given, offset)]
                for alt in _alternates(view, item, item.dims):
                    scaled = [o * a / g for o, a, g in zip(offset, alt, given, strict=True)]
                    shapes.append((alt, (scaled[0], scaled[1], scaled[2])))
                shape = next(
                    (s for s in shapes if _same_dims(sorted_dims(s[0]), sorted_dims(item.dims))),
                    None,
                )
                if shape is not None and not _offset_fits(
                    (inside[0], inside[1], inside[2]), shape[1], item.dims, shape[0]
                ):
                    yield (
                        f"center-of-mass: {item.label}: offset {_fmt(inside)} is not the given "
                        f"{_fmt(shape[1])} turned with the item"
                    )
        box_com = box.wire.get("centerOfMass")
        total = sum(weights)
        if box_com is None or total <= 0 or len(centres) != len(box.items):
            continue
        want = tuple(
            sum(w * c[a] for w, c in zip(weights, centres, strict=True)) / total for a in range(3)
        )
        if not _same_dims(_vec(box_com), (want[0], want[1], want[2])):
            yield (
                f"center-of-mass: box {box.position}: {_fmt(_vec(box_com))}, its items give "
                f"{_fmt((want[0], want[1], want[2]))}"
            )


# --- generated boxes (boxTypeGenerators) ----------------------------------------------

# Axis metrics, whose limits' min is also a trimming floor (docs/generators.md).
_AXIS_METRICS = ("x-dimension", "y-dimension", "z-dimension")

# Joint sizes tried when judging whether a box came from a size its generator makes:
# beyond this many the axes are judged one by one only.
_MOST_SIZES = 20_000


def _metric(name: str, dims: Vec) -> float | None:
    """Metric ``name`` of a box of inner ``dims`` (x, y, z), as docs/generators.md defines
    them: sides sorted L >= W >= H; ``surface-area`` 2(xy + yz + xz); ``surface-area-rsc``
    the regular slotted container blank (2L + 2W)(W + H); ``girth`` 2(W + H);
    ``length-plus-girth`` L + 2(W + H); the ratios as named (L/W, L/H, W/H, z/y, z/x,
    y/x). None for a name the spec does not list."""
    h, w, length = sorted_dims(dims)
    x, y, z = dims

    def ratio(a: float, b: float) -> float:
        return a / b if b > 0 else math.inf

    values = {
        "volume": x * y * z,
        "surface-area": 2 * (x * y + y * z + x * z),
        "surface-area-rsc": (2 * length + 2 * w) * (w + h),
        "longest-dimension": length,
        "middle-dimension": w,
        "shortest-dimension": h,
        "length-plus-girth": length + 2 * (w + h),
        "girth": 2 * (w + h),
        "x-dimension": x,
        "y-dimension": y,
        "z-dimension": z,
        "longest-to-middle-ratio": ratio(length, w),
        "longest-to-shortest-ratio": ratio(length, h),
        "middle-to-shortest-ratio": ratio(w, h),
        "z-to-y-ratio": ratio(z, y),
        "z-to-x-ratio": ratio(z, x),
        "y-to-x-ratio": ratio(y, x),
    }
    return values.get(name)


def _tol(*values: float) -> float:
    return EPS * max([1.0, *(abs(v) for v in values if math.isfinite(v))])


def _limit_breaks(generator: Wire, dims: Vec, strict: bool = False) -> list[str]:
    """The generator's ``limits`` that ``dims`` breaks (metric below min or above max), as
    text. Within the tolerance a value counts as within (``strict``: as outside)."""
    out = []
    for limit in (generator.get("options") or {}).get("limits") or []:
        value = _metric(str(limit.get("metric")), dims)
        if value is None:
            continue
        lo, hi = limit.get("min"), limit.get("max")
        if _is_number(lo):
            slack = _tol(value, lo)
            if value < lo + (slack if strict else -slack):
                out.append(f"{limit['metric']} {value:g} below its limit min {lo:g}")
        if _is_number(hi):
            slack = _tol(value, hi)
            if value > hi - (slack if strict else -slack):
                out.append(f"{limit['metric']} {value:g} above its limit max {hi:g}")
    return out


def _generator_template(request: Wire, generator: Wire) -> dict[str, Any]:
    """A generated box type before its size: the generator's boxTypeDefaults completed by
    the request's. An ``outer.dimensions`` there is ignored (one outer size cannot be every
    generated size's; docs/generators.md), an ``outer.dimensionChange`` kept."""
    template = _completed(
        generator.get("boxTypeDefaults") or {}, request.get("boxTypeDefaults") or {}
    )
    outer = template.get("outer")
    if isinstance(outer, Mapping) and outer.get("dimensions") is not None:
        kept = {k: v for k, v in outer.items() if k != "dimensions"}
        if kept:
            template["outer"] = kept
        else:
            del template["outer"]
    return template


def _cartesian_sources(view: PackView, box: Box) -> list[tuple[int, Wire]]:
    """(position, generator) of every cartesian generator ``box`` may come from, by its
    name: the generator's defaults' name, else "generated ..." when they name none. None
    for a pre-packed box, a pack-as-is rule's box, an internal space, or a box that is a
    requested box type (same refId, dimensions and name)."""
    request = view.request
    generators = request.get("boxTypeGenerators") or []
    if not generators or box.position < len(request.get("boxes") or []):
        return []
    if _is_as_is_box(view, box) or _space_rule(view, box) is not None:
        return []
    named = box.wire.get("name")
    if any(
        t.get("refId") == box.wire.get("refId")
        and t.get("name") == named
        and _same_dims(_vec(t["dimensions"]), box.dims)
        for t in _box_types(request)
    ):
        return []
    out = []
    for position, generator in enumerate(generators):
        if generator.get("operation") == "pack-as-is":
            continue
        template = _generator_template(request, generator)
        if named == template.get("name") or (
            "name" not in template and str(named or "").startswith("generated ")
        ):
            out.append((position, generator))
    return out


def _is_generated(view: PackView, box: Box) -> bool:
    """Whether a generator made ``box``'s type (a cartesian size or an item's own carton)."""
    return bool(_cartesian_sources(view, box)) or _is_own_carton(view, box)


def _item_sides(view: PackView) -> list[float]:
    """Every side an item may have when a range derives lengths from the items: the item
    sets' units (as given or drawn, before and after rolling; every rung of a ladder),
    every item of the response as it stands (reduced boxes, bounded-fill units, alternate
    shapes) and group-pack groups; a part of a pack (a stage, a group) derives from the
    items it packs."""
    sides: set[float] = set()
    for item_set in [*view.given_item_sets, *(view.request.get("itemSets") or [])]:
        if item_set.get("dimensions"):
            sides.update(v for dims, _, _ in _units(item_set) for v in dims)
    for item in view.items:
        sides.update(item.dims)
    for _, _, group, _ in _group_sizes(view).values():
        sides.update(group)
    return sorted(sides)


def _compound(view: PackView) -> bool:
    """Whether the request is packed in parts (stages, groups, fills, subspaces) or in a
    sequence order: then a part's "first item" may be any item's."""
    parts = ("pack-sequence", "group-pack", "bounded-fill", "internal-space")
    return bool(view.request.get("sequenceSort")) or any(
        r.get("operation") in parts for r in view.request.get("rules") or []
    )


def _first_item_sides(view: PackView, box: Box, axis: int) -> list[float]:
    """The lengths along ``axis`` of the "first item" a fitForFirstItem range fits: any
    item set with units' (as given, any of its units: the service makes one length per
    item set, so that whichever comes first in a box has its own; docs/generators.md) or
    the first item placed in the box (lowest packedIndex, as placed; the public schema's
    wording). In a pack in parts or in sequence order, any item's, group-pack groups
    included."""
    item_sets = [
        s for s in view.given_item_sets if s.get("dimensions") and int(s.get("quantity", 1)) > 0
    ]
    out = [dims[axis] for s in item_sets for dims, _, _ in _units(s)]
    placed = (
        sorted(
            (i for i in box.items if _is_number(i.wire.get("packedIndex"))),
            key=lambda i: float(i.wire["packedIndex"]),
        )
        or box.items
    )
    if placed:
        out.append(placed[0].dims[axis])
    if _compound(view):
        out += [dims[axis] for s in item_sets for dims, _, _ in _units(s)]
        out += [item.dims[axis] for item in view.items]
        # A group-pack group packs as one item of its own size (reported as its units).
        out += [group[axis] for _, _, group, _ in _group_sizes(view).values()]
    return out


def _range_lengths(view: PackView, box: Box, axis_range: Wire, axis: int) -> list[float]:
    """The lengths an axis range makes (docs/generators.md): ``min`` and ``max`` as given,
    plus every multiple of ``increment`` strictly between them; with ``deriveFromItems``
    instead of the multiples every item side strictly between them; with
    ``fitForFirstItem`` (overriding both) only the first item's side (any item set's),
    clamped to min..max. Without increment or derivation, min and max only."""
    lo, hi = axis_range.get("min"), axis_range.get("max")
    if not (_is_number(lo) and _is_number(hi)):
        return []  # refused by the service (a range needs both)
    if axis_range.get("fitForFirstItem"):
        return [min(max(side, lo), hi) for side in _first_item_sides(view, box, axis)]
    out = [float(lo), float(hi)]
    if axis_range.get("deriveFromItems"):
        out += [side for side in _item_sides(view) if lo < side < hi]
        return out
    step = axis_range.get("increment")
    if _is_number(step) and step > 0:
        k = math.floor(lo / step) + 1
        while k * step < hi - _tol(hi) and len(out) < 200_000:
            out.append(k * step)
            k += 1
    return out


def _axis_lengths(view: PackView, box: Box, generator: Wire, axis: int) -> list[float]:
    """Every length a cartesian generator makes along ``axis``: its list's and its
    range's, sorted."""
    options = generator.get("options") or {}
    name = AXES[axis]
    lengths = [float(v) for v in options.get(f"{name}List") or [] if _is_number(v)]
    axis_range = options.get(f"{name}Range")
    if isinstance(axis_range, Mapping):
        lengths += _range_lengths(view, box, axis_range, axis)
    return sorted(set(lengths))


def _has_length(lengths: Sequence[float], length: float) -> bool:
    at = bisect.bisect_left(lengths, length)
    return any(_close(lengths[i], length) for i in (at - 1, at) if 0 <= i < len(lengths))


def _up_to_tenths(length: float) -> float:
    """``length`` rounded up to tenths; a float a hair above a tenth (2.3000000000000003)
    stays at it."""
    tenths = length * 10
    return math.ceil(tenths - _tol(tenths)) / 10


def _trim_targets(box: Box, generator: Wire) -> list[float | None] | None:
    """Per axis, the length trimming gives a range axis (None for a list-only axis): the
    larger of the contents' extent from the box's origin, rounded up (``_round_trimmed``),
    and the axis floor (the range's ``min``, raised by an x-/y-/z-dimension limit's
    ``min``). None when the generator does not trim (``noTrimToMaxExtent``, or no range axis)."""
    options = generator.get("options") or {}
    ranges = [options.get(f"{a}Range") for a in AXES]
    if options.get("noTrimToMaxExtent") or not any(isinstance(r, Mapping) for r in ranges):
        return None
    placed = [i for i in box.items if i.origin is not None]
    out: list[float | None] = []
    for axis, axis_range in enumerate(ranges):
        if not isinstance(axis_range, Mapping):
            out.append(None)
            continue
        extent = max((i.origin[axis] + i.dims[axis] for i in placed if i.origin), default=0.0)
        floor = float(axis_range["min"]) if _is_number(axis_range.get("min")) else 0.0
        for limit in options.get("limits") or []:
            if limit.get("metric") == _AXIS_METRICS[axis] and _is_number(limit.get("min")):
                floor = max(floor, float(limit["min"]))
        out.append(max(_round_trimmed(extent, axis_range), floor))
    return out


def _round_trimmed(extent: float, axis_range: Mapping[str, Any]) -> float:
    """A trimmed range side: ``extent`` rounded up to the range's ``increment`` (the
    schema's "increment for box dimension rounding": the next of min, the multiples of
    the increment strictly between, max), or to tenths without one or when the range
    derives its lengths from the items (deriveFromItems, fitForFirstItem)."""
    step, lo, hi = axis_range.get("increment"), axis_range.get("min"), axis_range.get("max")
    derived = axis_range.get("deriveFromItems") or axis_range.get("fitForFirstItem")
    if derived or not (_is_number(step) and step > 0 and _is_number(lo) and _is_number(hi)):
        return _up_to_tenths(extent)
    if extent > hi + _tol(hi):
        return _up_to_tenths(extent)  # a side from a list, beyond the range: no grid
    if extent <= lo + _tol(lo):
        return float(lo)
    multiple = step * math.ceil(extent / step - _tol(extent / step))
    return float(hi) if multiple >= hi - _tol(hi) else multiple


def _trimmed(size: Vec, targets: Sequence[float | None]) -> Vec:
    """``size`` trimmed: each range axis to its target, never beyond the size itself."""
    t = [size[a] if target is None else min(size[a], target) for a, target in enumerate(targets)]
    return (t[0], t[1], t[2])


def _sources_of(
    view: PackView, box: Box, generator: Wire, lengths: Sequence[Sequence[float]]
) -> list[Vec] | None:
    """The sizes the generator makes, within its limits, that are ``box``'s size or are
    trimmed to it; None when there are too many candidates to try."""
    targets = _trim_targets(box, generator)
    candidates: list[list[float]] = []
    for axis in range(3):
        d = box.dims[axis]
        target = targets[axis] if targets is not None else None
        options = [v for v in lengths[axis] if _close(v, d)]
        if target is not None and _close(d, target):
            options += [v for v in lengths[axis] if v > d and not _close(v, d)]
        if not (generator.get("options") or {}).get("limits"):
            options = options[:1] + options[-1:]  # without limits any two alike will do
        candidates.append(options)
    if math.prod(len(c) for c in candidates) > _MOST_SIZES:
        return None
    out = []
    for x, y, z in itertools.product(*candidates):
        size = (x, y, z)
        if _limit_breaks(generator, size):
            continue
        if _same_dims(size, box.dims) or (
            targets is not None and _same_dims(_trimmed(size, targets), box.dims)
        ):
            out.append(size)
    return out


def _size_problems(view: PackView, box: Box, generator: Wire, where: str) -> list[str]:
    """Why ``box`` is not a size ``generator`` makes (nor one trimmed to its contents),
    breaks the generator's limits, or should have been trimmed."""
    lengths = [_axis_lengths(view, box, generator, axis) for axis in range(3)]
    targets = _trim_targets(box, generator)
    problems = []
    for axis, name in enumerate(AXES):
        d = box.dims[axis]
        target = targets[axis] if targets is not None else None
        trimmed = (
            target is not None
            and _close(d, target)
            and bool(lengths[axis])
            and lengths[axis][-1] >= d - _tol(d)
        )
        if not _has_length(lengths[axis], d) and not trimmed:
            also = "" if target is None else f" nor its contents' extent trimmed ({target:g})"
            shown = ", ".join(f"{v:g}" for v in lengths[axis][:12])
            more = ", ..." if len(lengths[axis]) > 12 else ""
            problems.append(
                f"generator-size: {where}: {name} {d:g} is not a length the generator makes "
                f"({shown}{more}){also}"
            )
    breaks = _limit_breaks(generator, box.dims)
    problems += [f"generator-limits: {where}: {b}" for b in breaks]
    if problems:
        return problems
    sources = _sources_of(view, box, generator, lengths)
    if sources is not None and not sources:
        problems.append(
            f"generator-size: {where}: {_fmt(box.dims)} is no size the generator makes within "
            "its limits, nor one trimmed to its contents"
        )
    elif sources and targets is not None and all(_same_dims(s, box.dims) for s in sources):
        problems += _untrimmed(view, box, generator, targets, where)
    return problems


def _untrimmed(
    view: PackView, box: Box, generator: Wire, targets: Sequence[float | None], where: str
) -> list[str]:
    """A box at a generated size that trimming would have shrunk: a problem unless the
    trimmed size breaks a limit, leaves the items less than reservedSpace allows, or costs
    more (docs/generators.md). Judged only where the answer is clear of rounding."""
    size = _trimmed(box.dims, targets)
    if _same_dims(size, box.dims) or _limit_breaks(generator, size, strict=True):
        return []
    net = sum(_volume(item.dims) for item in box.items)
    if net > (1 - _reserved_share(view, box)) * _volume(size) * (1 - 1e-6):
        return []
    template = _generator_template(view.request, generator)
    smaller = Box(box.position, box.wire, size, box.items)
    before = _generated_costs(view, box, generator, template)
    after = _generated_costs(view, smaller, generator, template)
    if not before or not after:
        return []  # a carrier table: not re-derived here
    table = template.get("rateTable") or {}
    # Without a dimensional weight the rate is the same at both sizes, and the prices are
    # integers (a tie trims); with one, only a clear saving is judged (rounding).
    by_weight = not (_is_number(table.get("dimFactor")) and table["dimFactor"] > 0)
    if (by_weight and max(after) <= min(before) + _tol(*before)) or max(after) < min(before) - 1:
        return [
            f"generator-trim: {where}: {_fmt(box.dims)} is not trimmed; its contents "
            f"trim it to {_fmt(size)}, within the generator's limits and no dearer"
        ]
    return []


def _component_price(components: Sequence[Wire], dims: Vec, borderline: bool) -> int:
    """The price ``priceComponents`` give a box of ``dims`` (docs/generators.md): per
    ``key`` (components without one share the absent key) one amount, the keys' amounts
    summed. A threshold triggers when the metric exceeds it. ``max`` (default): the largest
    triggered price of the key; ``sum``: every triggered price; ``product``: the price of
    each component's highest triggered threshold, multiplied (nothing when one triggers
    none). A metric within the tolerance of a threshold triggers it when ``borderline``."""
    by_key: dict[object, list[Wire]] = defaultdict(list)
    for component in components:
        by_key[component.get("key")].append(component)
    total = 0
    for group in by_key.values():
        aggregator = group[0].get("aggregator") or "max"
        per_component = []
        for component in group:
            value = _metric(str(component.get("metric")), dims)
            thresholds, prices = component.get("thresholds") or [], component.get("prices") or []
            pairs = zip(thresholds, prices, strict=len(thresholds) == len(prices))
            per_component.append(
                [
                    (float(t), int(p))
                    for t, p in pairs
                    if value is not None
                    and (value > t - _tol(value, t) if borderline else value > t + _tol(value, t))
                ]
            )
        if aggregator == "sum":
            total += sum(p for hits in per_component for _, p in hits)
        elif aggregator == "product":
            if all(per_component):
                total += math.prod(max(hits)[1] for hits in per_component)
        else:
            total += max((p for hits in per_component for _, p in hits), default=0)
    return total


def _generated_costs(view: PackView, box: Box, generator: Wire, template: Wire) -> list[float]:
    """The costs ``box`` may have as a generator's box: its price (the price components' at
    its size, with a metric on a threshold read both ways; without components the
    defaults') plus its rate table's rate, as for any box. Empty for a carrier table."""
    components = (generator.get("options") or {}).get("priceComponents") or []
    prices: list[object] = [template.get("price")]
    # Under outerBasedCost the components measure the outer size: the box plus the
    # defaults' outer.dimensionChange (the spec, outerBasedCost).
    change = (template.get("outer") or {}).get("dimensionChange")
    measured = box.dims
    if template.get("outerBasedCost") and change:
        x, y, z = (d + float(change.get(a, 0)) for d, a in zip(box.dims, "xyz", strict=True))
        measured = (x, y, z)
    if generator.get("operation") == "pack-as-is" and _numeric(template.get("price")) < 0:
        # -1 favours shipping as is in the choice only: the carton is reported at 0.
        prices = [0]
    if generator.get("operation") != "pack-as-is":
        if components:
            prices = [_component_price(components, measured, b) for b in (False, True)]
        # A cartesian box is never priced below 0 (-1 is pack-as-is's marker; a negative
        # price makes every extra box lower the cost).
        prices = [p if p is None else max(_numeric(p), 0.0) for p in prices]
    out = []
    for price in prices:
        box_type = {**template, "price": price} if price is not None else template
        cost = _expected_cost(box_type, box)
        if cost is not None:
            out.append(cost)
    return out


def _generated_name(box: Box) -> str | None:
    """Why a box named "generated XxYxZ" does not measure X x Y x Z, if it does not."""
    named = str(box.wire.get("name") or "")
    try:
        said = tuple(float(v) for v in named.removeprefix("generated ").split("x"))
    except ValueError:
        said = ()
    if len(said) == 3 and all(
        abs(s - d) <= 1e-5 * max(1.0, abs(d)) for s, d in zip(said, box.dims, strict=True)
    ):
        return None
    return f"named {named!r} but measures {_fmt(box.dims)}"


def check_generated_boxes(view: PackView) -> Iterator[str]:
    """A box a cartesian generator made (known by its name) has a size it makes: each axis a
    length of its list or range (see ``_range_lengths``), the size within every limit, or
    that size trimmed (unless ``noTrimToMaxExtent``): each range axis reduced to the larger
    of the contents' extent from the box's origin, rounded up (to the range's increment,
    else tenths), and the axis floor (range min, raised by an x-/y-/z-dimension limit's
    min), never beyond the size; list-only axes never trimmed. A box is trimmed unless the
    trimmed size breaks a limit, leaves the items less than reservedSpace allows, or costs
    more. An unnamed generator's box is named "generated XxYxZ" after its (trimmed) size. A
    generator's box, cartesian or an item's own carton (pack-as-is; its size is
    check_pack_as_is's), costs its price plus its rate as any box: the price components'
    total at its final size, or without components the defaults' price (-1 allowed for an
    item's own carton; a cartesian box's price is never below 0, see
    ``_generated_costs``); its
    type is the generator's boxTypeDefaults completed by the request's, outer.dimensions
    ignored, and gives the box its weightMax and weightTare (0 when unset).
    Which sizes ``generatedBoxTypesMax`` samples is not checked."""
    generators = view.request.get("boxTypeGenerators") or []
    if not generators:
        return
    for box in view.boxes:
        where = f"box {box.position} ({box.wire.get('name')})"
        sources = _cartesian_sources(view, box)
        if sources:
            found = [(p, g, _size_problems(view, box, g, where)) for p, g in sources]
            fits = [(p, g) for p, g, problems in found if not problems]
            if not fits:
                yield from found[0][2]
                continue
            template = _generator_template(view.request, fits[0][1])
            if "name" not in template and (wrong := _generated_name(box)) is not None:
                yield f"generator-name: {where}: {wrong}"
            owners = fits
        elif _is_own_carton(view, box):
            owners = [
                (p, g) for p, g in enumerate(generators) if g.get("operation") == "pack-as-is"
            ]
        else:
            continue
        costs = [
            cost
            for _, g in owners
            for cost in _generated_costs(view, box, g, _generator_template(view.request, g))
        ]
        price = float(box.wire["price"])
        if costs and not any(abs(price - c) <= 0.5 + _tol(c) for c in costs):
            shown = " or ".join(sorted({f"{c:g}" for c in costs}))
            yield f"generator-price: {where}: price {price:g}, its generator gives {shown}"
        for name in ("weightMax", "weightTare"):
            # Unset in the defaults: 0 (weightMax 0: no limit; docs/generators.md).
            wants = {
                float(_generator_template(view.request, g).get(name) or 0.0) for _, g in owners
            }
            got = float(box.wire.get(name) or 0.0)
            if not any(_close(got, want) for want in wants):
                shown = " or ".join(f"{w:g}" for w in sorted(wants))
                yield f"generator-type: {where}: {name} {got:g}, its defaults say {shown}"


CHECKS: tuple[Check, ...] = (
    check_inside_box,
    check_no_overlap,
    check_support,
    check_rotation,
    check_sequence_distance,
    check_random_consistency,
    check_item_weight,
    check_units,
    check_identifiers,
    check_box_weight,
    check_box_type,
    check_box_cost,
    check_box_caps,
    check_inline,
    check_box_spread,
    check_box_totals,
    check_totals,
    check_orientation_locks,
    check_lay_flat,
    check_exclusions,
    check_pack_as_is,
    check_fragile,
    check_pack_sequence,
    check_stage_box_types,
    check_prepacked,
    check_reserved_space,
    check_property_constraints,
    check_lookback,
    check_packed_index,
    check_sort_order,
    check_cohorts,
    check_group_pack,
    check_bounded_fill,
    check_internal_space,
    check_nesting_chains,
    check_hosts_unturned,
    check_nested_exclusions,
    check_nested_fragile,
    check_nested_locks,
    check_dimension_sets,
    check_center_of_mass,
    check_generated_boxes,
    check_derived_figures,
    check_echoes,
    check_item_echoes,
    check_leftovers,
)
