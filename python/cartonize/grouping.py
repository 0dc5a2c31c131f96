"""Rule `group-pack` (`type: "auto"`): small units of an item set are bundled into group
items (cases) before packing. Along each of `options.axes` on which the unit is at least
`scaleFactorThreshold` times smaller than the smallest box type on that axis, the group
is `axisMultiplier` units long; a group is packed as one item, and reported as its units,
each placed in its cell of the group, named with `nameSuffix` and carrying
`groupPackParent`. See docs/rules.md."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cartonize.errors import InvalidRequest
from cartonize.items import (
    allowed_turns,
    box_center_of_mass,
    placed_center_of_mass,
    point_string,
    property_amount,
)
from cartonize.models import (
    BoxType,
    Dimensions,
    Item,
    ItemEntry,
    ItemSet,
    PackRequest,
    PackResponse,
    Point,
    Rule,
    response_totals,
)
from cartonize.render import render_pictures
from cartonize.rules import free_axes_option, item_matches
from cartonize.units import first_units as numbered_from
from cartonize.units import locate, numbered, renamed_rules, without_operations

__all__ = ["has_group_pack", "pack_grouped", "selects", "with_ref_ids"]

Pack = Callable[[PackRequest], PackResponse]

#: Operations that decide how a unit ships and so win over group-pack on the same item.
_WINS_OVER_GROUPING = ("pack-as-is", "irregular", "fragile", "alternate-dimensions")


def has_group_pack(req: PackRequest) -> bool:
    """True when the request has a group-pack rule (and real item sets to group)."""
    return any(r.operation == "group-pack" for r in req.rules)


def selects(rule: Rule, item_set: ItemSet) -> bool:
    """A rule selects an item set by refId, sequence or match; the selectors are or-ed."""
    return (
        (rule.item_ref_id is not None and rule.item_ref_id == item_set.ref_id)
        or (rule.item_sequence is not None and rule.item_sequence == item_set.sequence)
        or (rule.item_match is not None and item_matches(rule.item_match, item_set))
    )


def with_ref_ids(item_sets: Sequence[ItemSet]) -> list[ItemSet]:
    """Item sets with every null or -1 refId replaced by one no item set uses, exactly as
    pack() assigns them."""
    taken = {s.ref_id for s in item_sets if s.ref_id is not None and s.ref_id != -1}
    next_id = max(taken, default=-1) + 1
    out = []
    for s in item_sets:
        if s.ref_id is None or s.ref_id == -1:
            s = s.model_copy(update={"ref_id": next_id})
            next_id += 1
        out.append(s)
    return out


@dataclass(frozen=True)
class GroupPack:
    """A group-pack rule's options."""

    name_suffix: str
    threshold: float
    axes: tuple[int, ...]
    multiplier: int


def _invalid(index: int, option: str, fix: str, got: object) -> InvalidRequest:
    return InvalidRequest(
        "invalid rule options", f"rules[{index}].options.{option}: {fix} (got {got!r})"
    )


def group_pack_options(index: int, rule: Rule) -> GroupPack:
    """The options of group-pack rule `index`; raises `InvalidRequest` naming the field."""
    options = rule.options or {}
    kind = options.get("type", "auto")
    if kind != "auto":
        raise _invalid(index, "type", "group-pack supports type 'auto'", kind)
    suffix = options.get("nameSuffix", "")
    if not isinstance(suffix, str):
        raise _invalid(index, "nameSuffix", "must be a string", suffix)
    multiplier = options.get("axisMultiplier")
    if multiplier is None:
        raise InvalidRequest(
            "invalid rule options",
            f"rules[{index}].options.axisMultiplier: group-pack needs axisMultiplier (the "
            "units per group along each scaled axis, an integer >= 1)",
        )
    if not isinstance(multiplier, int) or isinstance(multiplier, bool) or multiplier < 1:
        raise _invalid(index, "axisMultiplier", "must be an integer >= 1", multiplier)
    threshold = options.get("scaleFactorThreshold", multiplier)
    if not isinstance(threshold, int | float) or isinstance(threshold, bool) or threshold <= 0:
        raise _invalid(index, "scaleFactorThreshold", "must be a number > 0", threshold)
    axes = options.get("axes", [0, 1, 2])
    if not isinstance(axes, list) or not all(
        isinstance(a, int) and not isinstance(a, bool) and 0 <= a <= 2 for a in axes
    ):
        raise _invalid(index, "axes", "must be a list of axes 0 (x), 1 (y), 2 (z)", axes)
    return GroupPack(suffix, float(threshold), tuple(sorted(set(axes))), multiplier)


@dataclass(frozen=True)
class _Grouped:
    """One grouped item set: `groups` groups of `per_group` units, then the rest."""

    original: ItemSet
    #: Units along x, y, z in one group (1 on unscaled axes).
    counts: tuple[int, int, int]
    groups: int
    #: Number of the item set's first unit among the units of its refId.
    first_unit: int
    #: Number of this item set's first group among the groups of its refId.
    first_group: int
    #: The turns the group's orientation lock allows it (all without one).
    turns: tuple[tuple[int, int, int], ...] = tuple(allowed_turns(None))

    @property
    def per_group(self) -> int:
        return self.counts[0] * self.counts[1] * self.counts[2]


def pack_grouped(req: PackRequest, pack: Pack) -> PackResponse:
    """Pack `req` with its group-pack rules lowered to group item sets (module docstring):
    `pack` packs the request without them, and group items come back as their units."""
    item_sets = with_ref_ids(req.item_sets)
    box_types = req.group_box_types
    warnings: list[str] = []
    chosen: dict[int, tuple[int, GroupPack]] = {}  # item set position -> rule
    for index, rule in enumerate(req.rules):
        if rule.operation != "group-pack":
            continue
        options = group_pack_options(index, rule)
        for p, s in enumerate(item_sets):
            if not selects(rule, s):
                continue
            if p in chosen:
                warnings.append(
                    f"rules[{index}]: item refId {s.ref_id} is already grouped by "
                    f"rules[{chosen[p][0]}], which wins"
                )
                continue
            winner = next(
                (
                    (i, r)
                    for i, r in enumerate(req.rules)
                    if r.operation in _WINS_OVER_GROUPING and selects(r, s)
                ),
                None,
            )
            if winner is not None:
                warnings.append(
                    f"rules[{index}] (group-pack) and rules[{winner[0]}] ({winner[1].operation})"
                    f" both select item refId {s.ref_id}; {winner[1].operation} wins: the item "
                    "is not grouped"
                )
                continue
            if s.dimension_sets:
                warnings.append(
                    f"rules[{index}] (group-pack): item refId {s.ref_id} packs as the units "
                    "of its dimensionSets, which win: the item is not grouped"
                )
                continue
            chosen[p] = (index, options)
    if not box_types and chosen:
        warnings.append("group-pack: the request has no box types to scale groups against")
        chosen = {}

    # A group holds per_group units, so it carries their sum of each constrained amount.
    constrained = {c.key for b in box_types for c in b.property_constraints or []}
    lowered: list[ItemSet] = []
    #: Per lowered item set: the number, among its refId's units in the request, of its
    #: first unit (a group item set's group n holds units first + n * per_group ...).
    first_units: list[int] = []
    grouped: dict[int, _Grouped] = {}  # position in `lowered` of a group item set
    units_so_far: dict[int, int] = {}
    groups_so_far: dict[int, int] = {}
    for p, s in enumerate(item_sets):
        ref_id = s.ref_id if s.ref_id is not None else -1
        first_unit = units_so_far.get(ref_id, 0)
        if s.quantity > 0:
            units_so_far[ref_id] = first_unit + numbered(s)
        by_rule = chosen.get(p)
        plan = _plan(by_rule[0], by_rule[1], s, box_types, warnings) if by_rule else None
        if plan is None:
            lowered.append(s)
            first_units.append(first_unit)
            continue
        counts, name = plan
        per_group = counts[0] * counts[1] * counts[2]
        groups = s.quantity // per_group
        first_group = groups_so_far.get(ref_id, 0)
        groups_so_far[ref_id] = first_group + groups
        grouped[len(lowered)] = _Grouped(s, counts, groups, first_unit, first_group)
        d = s.dimensions
        lowered.append(
            s.model_copy(
                update={
                    "name": name,
                    "dimensions": Dimensions(
                        x=d.x * counts[0], y=d.y * counts[1], z=d.z * counts[2]
                    ),
                    "weight": s.weight * per_group,
                    "properties": _group_properties(s.properties, per_group, constrained),
                    "quantity": groups,
                }
            )
        )
        first_units.append(first_unit)
        lowered.append(s.model_copy(update={"quantity": s.quantity - groups * per_group}))
        first_units.append(first_unit + groups * per_group)

    # set-properties acted already (pack() applies it first): applied again to a group
    # item it would overwrite the amounts the group carries for its units.
    rules, indices = without_operations(req.rules, "group-pack", "set-properties")
    for q, group in grouped.items():
        # The first lock selecting the group item set turns the group, as in the pack.
        lock = next(
            (
                (i, r)
                for i, r in enumerate(rules)
                if r.operation == "lock-orientation" and selects(r, lowered[q])
            ),
            None,
        )
        if lock is not None:
            turns = allowed_turns(free_axes_option(indices[lock[0]], lock[1]))
            grouped[q] = dataclasses.replace(group, turns=tuple(turns))
    inner = req.model_copy(update={"item_sets": lowered, "rules": rules, "include_images": False})
    response = pack(inner)
    _ungroup(response, lowered, first_units, grouped)
    response.warnings = list(dict.fromkeys([*warnings, *renamed_rules(response.warnings, indices)]))
    render_pictures(req, response)
    return response


def _plan(
    index: int,
    options: GroupPack,
    item_set: ItemSet,
    boxes: Sequence[BoxType],
    warnings: list[str],
) -> tuple[tuple[int, int, int], str | None] | None:
    """The units per group along x, y, z and the group's name, or None (with a warning)
    when the item set is not grouped."""
    d = item_set.dimensions
    given = (d.x, d.y, d.z)
    smallest = [
        min((b.dimensions.x, b.dimensions.y, b.dimensions.z)[a] for b in boxes) for a in range(3)
    ]
    counts = tuple(
        options.multiplier
        if a in options.axes and given[a] * options.threshold <= smallest[a] + 1e-9
        else 1
        for a in range(3)
    )
    per_group = counts[0] * counts[1] * counts[2]
    if per_group <= 1:
        warnings.append(
            f"rules[{index}]: item refId {item_set.ref_id} is on no axis scaleFactorThreshold "
            f"{options.threshold:g} times smaller than the smallest box type it may pack into; "
            "not grouped"
        )
        return None
    if item_set.quantity < per_group:
        warnings.append(
            f"rules[{index}]: item refId {item_set.ref_id} has {item_set.quantity} units, "
            f"fewer than a group of {per_group}; not grouped"
        )
        return None
    weight = item_set.weight * per_group
    if not any(_carries_weight(b, weight) for b in boxes):
        warnings.append(
            f"rules[{index}]: a group of {per_group} units of item refId {item_set.ref_id} "
            f"weighs {weight:g}, more than any box type it may pack into carries; not grouped"
        )
        return None
    if not any(_within_property_caps(b, item_set, per_group) for b in boxes):
        warnings.append(
            f"rules[{index}]: a group of {per_group} units of item refId {item_set.ref_id} "
            "holds more of a constrained property than any box type it may pack into allows "
            "(propertyConstraints); not grouped"
        )
        return None
    name = f"{item_set.name}{options.name_suffix}" if item_set.name else options.name_suffix or None
    return (counts[0], counts[1], counts[2]), name


def _carries_weight(box: BoxType, weight: float) -> bool:
    """Whether `box` may hold `weight` of items (a weightMax of 0 or none is no limit)."""
    limit = box.weight_max or 0.0
    return limit <= 0 or weight <= limit - (box.weight_tare or 0.0) + 1e-9


def _within_property_caps(box: BoxType, item_set: ItemSet, per_group: int) -> bool:
    """Whether a group of `per_group` units of `item_set` keeps every property constraint
    of `box` (its initial value plus the group's amount at most its max)."""
    return all(
        (c.value or 0.0) + per_group * property_amount(item_set.properties, c.key) <= c.max + 1e-9
        for c in box.property_constraints or []
        if c.max is not None
    )


def _ungroup(
    response: PackResponse,
    lowered: list[ItemSet],
    first_units: list[int],
    grouped: dict[int, _Grouped],
) -> None:
    """Replace every group item of `response` by its units, give every unit the number it
    has among the request's units of its refId, fix the counts and number items anew."""
    firsts = numbered_from(lowered)

    def source(item: Item) -> tuple[int, int] | None:
        return locate(item, lowered, firsts)

    def units_of(item: Item, packed: bool) -> list[Item]:
        found = source(item)
        if found is None:
            return [item]
        position, n = found
        group = grouped.get(position)
        if group is None:
            item.unique_id = f"{item.ref_id}-{first_units[position] + n}"
            return [item]
        if packed:
            return _units_of_group(item, group, n)
        return [
            item.model_copy(
                update={
                    "unique_id": _unique(group, n * group.per_group + k),
                    "name": group.original.name,
                    "dimensions": group.original.dimensions,
                    "weight": group.original.weight,
                    "properties": group.original.properties,
                }
            )
            for k in range(group.per_group)
        ]

    for entry in response.boxes:
        box = entry.box
        box.items = [
            ItemEntry.model_construct(item=u) for e in box.items for u in units_of(e.item, True)
        ]
        box.len_items = sum(e.item.quantity or 1 for e in box.items if not e.item.virtual)
        box.len_units = sum(1 for e in box.items if not e.item.virtual)
        box.center_of_mass = box_center_of_mass([e.item for e in box.items])
        box.center_of_mass_string = point_string(box.center_of_mass)
    response.leftovers = [u for item in response.leftovers for u in units_of(item, False)]
    index = 1
    for entry in response.boxes:
        for packed in entry.box.items:
            packed.item.index = packed.item.global_id = index
            index += 1
    boxes = [entry.box for entry in response.boxes]
    for name, value in response_totals(boxes, response.leftovers).items():
        setattr(response, name, value)
    # pack() counted each group as one unit.
    response.len_items += sum(
        g.groups * (g.per_group - 1) for g in grouped.values() if not g.original.virtual
    )


def _unique(group: _Grouped, unit: int) -> str:
    return f"{group.original.ref_id}-{group.first_unit + unit}"


def _parent(group: _Grouped, n: int) -> str:
    """`groupPackParent` of the units of group `n` of an item set: "<refId>-g<k>", k
    numbering the groups of the refId."""
    return f"{group.original.ref_id}-g{group.first_group + n}"


def _group_properties(
    properties: dict[str, Any] | None, per_group: int, constrained: set[str]
) -> dict[str, Any] | None:
    """A group item's properties: its unit's, with each numeric amount a box type
    constrains (propertyConstraints) multiplied by the units in the group."""
    if not properties:
        return properties
    return {
        key: value * per_group
        if key in constrained and isinstance(value, int | float) and not isinstance(value, bool)
        else value
        for key, value in properties.items()
    }


def _units_of_group(item: Item, group: _Grouped, n: int) -> list[Item]:
    """The units of packed group item `item` (group `n` of its item set), each in its cell:
    bottom layer first."""
    d = group.original.dimensions
    scaled = [(d.x * group.counts[0], group.counts[0]), (d.y * group.counts[1], group.counts[1])]
    scaled.append((d.z * group.counts[2], group.counts[2]))
    placed = (item.dimensions.x, item.dimensions.y, item.dimensions.z)
    # Which axis of the group each placed axis is (the identity first when it fits): a
    # turn the group's lock allows, as the engine turned it. Sides of equal length may
    # match other permutations too, which would turn the units inside against the lock.
    turn = next(
        (
            p
            for p in [*group.turns, *itertools.permutations(range(3))]
            if all(abs(placed[a] - scaled[p[a]][0]) <= 1e-9 * max(1.0, placed[a]) for a in range(3))
        ),
        (0, 1, 2),
    )
    cells = [scaled[turn[a]][1] for a in range(3)]
    size = [placed[a] / cells[a] for a in range(3)]
    o = item.origin or Point.model_construct(x=0.0, y=0.0, z=0.0)
    origin = (o.x, o.y, o.z)
    total = item.delta_cost or 0
    units: list[Item] = []
    for k, (i, j, m) in enumerate(itertools.product(*(range(c) for c in cells))):
        at = (origin[0] + i * size[0], origin[1] + j * size[1], origin[2] + m * size[2])
        # Integer shares of the group's delta cost that add up to it.
        share = total * (k + 1) // group.per_group - total * k // group.per_group
        units.append(
            item.model_copy(
                update={
                    "unique_id": _unique(group, n * group.per_group + k),
                    "weight": group.original.weight,
                    "properties": group.original.properties,
                    "dimensions": Dimensions.model_construct(x=size[0], y=size[1], z=size[2]),
                    "origin": Point.model_construct(x=at[0], y=at[1], z=at[2]),
                    "center_of_mass": placed_center_of_mass(
                        group.original.dimensions,
                        group.original.center_of_mass,
                        Point.model_construct(x=at[0], y=at[1], z=at[2]),
                        Dimensions.model_construct(x=size[0], y=size[1], z=size[2]),
                    ),
                    "delta_cost": share,
                    "group_pack_parent": _parent(group, n),
                    "message": item.message if i == 0 or item.message is None else _ON_UNIT_BELOW,
                }
            )
        )
    return units


#: Support of a unit on the unit below it in its group.
_ON_UNIT_BELOW = "support: 100% of base on 1 item"
