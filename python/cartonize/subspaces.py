"""Rule `internal-space` (`type: "subspace"`): an item (a flower pot, a tote, a bucket)
carries a packable space, `options.boxType` at `options.origin` within the item. Other
items fill the subspaces of the item's units first, before any box is opened: for each
such item set in request order, the items still to pack go into at most one subspace per
unit. The units then pack, as given (unturned, so the subspace keeps its place) and
weighing what they hold, with the rest into the request's box types. Each subspace that
holds something is reported as a box with `subspace` {parentBoxIndex, parentItemIndex,
originInParent}. A unit holding something carries it into the outer pack
(`ItemSet.nested`), so rules with `ignoreSubspaces: false` act through it (nesting.py).
See docs/rules.md."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from cartonize.errors import InvalidRequest
from cartonize.grouping import selects, with_ref_ids
from cartonize.models import (
    Box,
    BoxEntry,
    BoxType,
    Dimensions,
    Item,
    ItemSet,
    Nested,
    PackRequest,
    PackResponse,
    Point,
    Rule,
    Subspace,
    response_totals,
)
from cartonize.nesting import contents_of, sees_through
from cartonize.render import render_pictures
from cartonize.rules import AS_GIVEN, item_matches, targets_box_type
from cartonize.units import first_units, renamed_rules, renumber_by, without_operations

__all__ = ["has_internal_space", "pack_with_subspaces"]

Pack = Callable[[PackRequest], PackResponse]

#: Operations that change an item's shape, winning over internal-space.
_WINS_OVER_SUBSPACE = ("irregular", "group-pack", "bounded-fill")
#: Items these rules select stay out of subspaces: pack-as-is units ship on their own;
#: rolls (irregular) because subspaces are filled unit by unit, and a unit may wind into
#: several rolls.
_KEPT_OUT_OF_SUBSPACES = ("pack-as-is", "irregular")
#: A warning's "rules[i] (lock-orientation), which wins" (also "rules[i] says ...").
_LOCK_WINS = re.compile(r"rules\[(\d+)\](?: says)? \(lock-orientation\), which wins")


def has_internal_space(req: PackRequest) -> bool:
    """True when the request has an internal-space rule (and real item sets)."""
    return any(r.operation == "internal-space" for r in req.rules)


@dataclass
class _Host:
    rule_index: int
    box_type: BoxType
    origin: tuple[float, float, float]
    #: The subspace boxes of its units 0, 1, ... that hold something.
    filled: list[Box] = field(default_factory=list)


def _invalid(index: int, option: str, fix: str, got: object) -> InvalidRequest:
    return InvalidRequest(
        "invalid rule options", f"rules[{index}].options.{option}: {fix} (got {got!r})"
    )


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def subspace_options(index: int, rule: Rule) -> tuple[BoxType, tuple[float, float, float]]:
    """The subspace box type and origin of internal-space rule `index`; raises
    `InvalidRequest` naming the field when malformed."""
    options = rule.options or {}
    kind = options.get("type", "subspace")
    if kind != "subspace":
        raise _invalid(index, "type", "internal-space supports type 'subspace'", kind)
    for flag in ("blocking", "display", "displayChildren"):
        if flag in options and not isinstance(options[flag], bool):
            raise _invalid(index, flag, "must be true or false", options[flag])
    raw = options.get("boxType")
    if not isinstance(raw, dict):
        raise _invalid(index, "boxType", "internal-space needs boxType {dimensions, ...}", raw)
    dims = raw.get("dimensions")
    if not isinstance(dims, dict) or not all(_number(dims.get(a)) and dims[a] > 0 for a in "xyz"):
        raise _invalid(index, "boxType.dimensions", "must be {x, y, z}, each > 0", dims)
    weight_max = raw.get("weightMax", 0)
    if not _number(weight_max) or weight_max < 0:
        raise _invalid(index, "boxType.weightMax", "must be a number >= 0", weight_max)
    name = raw.get("name")
    if name is not None and not isinstance(name, str):
        raise _invalid(index, "boxType.name", "must be a string", name)
    origin = options.get("origin", {})
    if not isinstance(origin, dict) or not all(
        _number(origin.get(a, 0)) and origin.get(a, 0) >= 0 for a in "xyz"
    ):
        raise _invalid(index, "origin", "must be a point {x, y, z}, each >= 0", origin)
    box_type = BoxType(
        name=name or "internal space",
        ref_id=raw.get("refId") if isinstance(raw.get("refId"), int) else None,
        dimensions=Dimensions(x=dims["x"], y=dims["y"], z=dims["z"]),
        weight_max=float(weight_max),
        weight_tare=0.0,
        # "values specified are used except price and rate": a subspace costs nothing.
        price=0,
    )
    return box_type, (
        float(origin.get("x", 0)),
        float(origin.get("y", 0)),
        float(origin.get("z", 0)),
    )


def pack_with_subspaces(req: PackRequest, pack: Pack) -> PackResponse:
    """Pack `req` with its internal-space rules (module docstring), using `pack` for each
    part."""
    started = time.perf_counter()
    item_sets = with_ref_ids(req.item_sets)
    firsts = first_units(item_sets)
    warnings: list[str] = []
    hosts: dict[int, _Host] = {}
    for index, rule in enumerate(req.rules):
        if rule.operation != "internal-space":
            continue
        box_type, origin = subspace_options(index, rule)
        for p, s in enumerate(item_sets):
            if not selects(rule, s):
                continue
            if p in hosts:
                warnings.append(
                    f"rules[{index}]: item refId {s.ref_id} already has an internal space by "
                    f"rules[{hosts[p].rule_index}], which wins"
                )
                continue
            winner = next(
                (
                    (i, r)
                    for i, r in enumerate(req.rules)
                    if r.operation in _WINS_OVER_SUBSPACE and selects(r, s)
                ),
                None,
            )
            if winner is not None:
                warnings.append(
                    f"rules[{index}] (internal-space) and rules[{winner[0]}] "
                    f"({winner[1].operation}) both select item refId {s.ref_id}; "
                    f"{winner[1].operation} wins: the item has no internal space"
                )
                continue
            d, b = s.dimensions, box_type.dimensions
            if any(
                o + inner > outer + 1e-9
                for o, inner, outer in zip(origin, (b.x, b.y, b.z), (d.x, d.y, d.z), strict=True)
            ):
                raise _invalid(
                    index,
                    "boxType.dimensions",
                    f"origin + dimensions must fit inside item refId {s.ref_id} "
                    f"({d.x:g} x {d.y:g} x {d.z:g})",
                    {"x": b.x, "y": b.y, "z": b.z},
                )
            if not req.box_type_generators and not any(
                t.dimensions.x >= d.x and t.dimensions.y >= d.y and t.dimensions.z >= d.z
                for t in req.resolved_box_types()
            ):
                warnings.append(
                    f"rules[{index}]: item refId {s.ref_id} fits no box type as given (an item "
                    "with an internal space is not turned); its subspace stays empty"
                )
                continue
            hosts[p] = _Host(index, box_type, origin)
            if s.dimension_sets:
                # Each unit carries its own subspace: a host packs as eaches.
                item_sets[p] = s.model_copy(update={"dimension_sets": None})
                warnings.append(
                    f"rules[{index}]: item refId {s.ref_id} has an internal space, so it packs "
                    "as single units; its dimensionSets have no effect"
                )
    rules, indices = without_operations(req.rules, "internal-space")
    kept_out = {
        p
        for p, s in enumerate(item_sets)
        for r in req.rules
        if r.operation in _KEPT_OUT_OF_SUBSPACES and selects(r, s)
    }
    # Units of measure (dimensionSets) are numbered by unit, not by each: they stay out.
    kept_out |= {p for p, s in enumerate(item_sets) if s.dimension_sets}
    numbers = [list(range(firsts[p], firsts[p] + s.quantity)) for p, s in enumerate(item_sets)]
    candidates = [p for p in range(len(item_sets)) if p not in hosts and p not in kept_out]
    responses: list[PackResponse] = []
    spread = req.boxes_per_item_set_max > 0 or req.boxes_per_sequence_max > 0
    if spread and hosts:
        warnings.append(
            "internal-space: subspaces stay empty under boxesPerItemSetMax or "
            "boxesPerSequenceMax (their contents would spread items over more boxes)"
        )
    nested_of: dict[int, tuple[Nested, ...]] = {}  # id(packed item) -> what it carries
    for h, host in hosts.items():
        units = item_sets[h].quantity
        todo = [
            c
            for c in candidates
            if numbers[c] and _may_enter(req, item_sets[c], item_sets[h], host.rule_index)
        ]
        if spread or units <= 0 or not todo:
            continue
        sets = [item_sets[c].model_copy(update={"quantity": len(numbers[c])}) for c in todo]
        inner = req.model_copy(
            update={
                "item_sets": sets,
                "box_types": [host.box_type],
                # boxTypeDefaults are the request's box types' (cartons'); the subspace is
                # the item's own space: its values are those the rule gives (rules.md).
                "box_type_defaults": None,
                "box_type_generators": [],
                "rules": rules,
                "boxes_max": units,
                "include_images": False,
            }
        )
        # Groups (group-pack) are those of the whole request, not sized to the subspace.
        response = pack(inner.with_group_box_types(req.group_box_types))
        responses.append(response)
        host.filled = [e.box for e in response.boxes if e.box.items]
        packed = renumber_by(
            [i.item for b in host.filled for i in b.items], sets, [numbers[c] for c in todo]
        )
        taken = {(todo[p], numbers[todo[p]][n]) for _, p, n in packed}
        nested_of.update({id(item): sets[p].nested for item, p, _ in packed})
        for c in todo:
            numbers[c] = [n for n in numbers[c] if (c, n) not in taken]

    outer_sets: list[ItemSet] = []
    outer_numbers: list[list[int]] = []
    carriers: dict[int, tuple[_Host, int]] = {}  # outer set position -> (host, unit)
    for p, s in enumerate(item_sets):
        carrier = hosts.get(p)
        if carrier is None:
            outer_sets.append(s.model_copy(update={"quantity": len(numbers[p])}))
            outer_numbers.append(numbers[p])
            continue
        for k, box in enumerate(carrier.filled):
            carriers[len(outer_sets)] = (carrier, k)
            inside = contents_of(box, lambda i: nested_of.get(id(i), ()))
            outer_sets.append(
                s.model_copy(
                    update={"quantity": 1, "weight": s.weight + (box.weight_net or 0.0)}
                ).with_nested((*s.nested, *inside))
            )
            outer_numbers.append([firsts[p] + k])
        done = len(carrier.filled)
        outer_sets.append(s.model_copy(update={"quantity": s.quantity - done}))
        outer_numbers.append(list(range(firsts[p] + done, firsts[p] + s.quantity)))
    # Units with an internal space pack as given: lock-orientation rules ahead of the rest.
    locked = {item_sets[h].ref_id: host.rule_index for h, host in hosts.items()}
    locks = [
        Rule(
            operation="lock-orientation",
            item_ref_id=ref_id,
            options={"freeAxes": [], AS_GIVEN: True},
        )
        for ref_id in locked
    ]
    outer = pack(
        req.model_copy(
            update={"item_sets": outer_sets, "rules": [*locks, *rules], "include_images": False}
        )
    )
    # The locks standing for internal spaces take their rules' indices; only warnings
    # naming those say that the internal space wins (a request's own lock keeps its name).
    as_given = {str(i) for i in locked.values()}
    outer.warnings = [
        _LOCK_WINS.sub(
            lambda m: (
                m.group(0).replace("lock-orientation", "internal-space: it packs as given")
                if m.group(1) in as_given
                else m.group(0)
            ),
            w,
        )
        for w in renamed_rules(outer.warnings, [*locked.values(), *indices])
    ]
    outer_boxes = [e.box for e in outer.boxes]
    located = renumber_by(
        [*(i.item for b in outer_boxes for i in b.items), *outer.leftovers],
        outer_sets,
        outer_numbers,
    )
    for r in responses:
        r.warnings = renamed_rules(r.warnings, indices)
    return _merge(req, outer, responses, outer_boxes, located, carriers, warnings, started)


def _may_enter(req: PackRequest, item: ItemSet, host: ItemSet, space_rule: int) -> bool:
    """Whether `item` may go into `host`'s subspace. Not when an exclude or exclude-all
    rule keeps the two apart (whatever ignoreSubspaces: being inside the host is at least
    as close as sharing its box), nor when exclude rules that see through nesting keep it
    from every box type the host fits as given (the host would then find no box)."""
    for r in req.rules:
        if r.operation == "exclude" and (
            (selects(r, item) and _targets_item(r, host))
            or (selects(r, host) and _targets_item(r, item))
        ):
            return False
        apart = item.ref_id != host.ref_id
        if r.operation == "exclude-all" and apart and (selects(r, item) or selects(r, host)):
            return False
    banning = [
        r
        for r in req.rules
        if r.operation == "exclude"
        and sees_through(r)
        and selects(r, item)
        and (r.target_box_ref_ids or r.target_box_match is not None)
    ]
    if not banning or req.box_type_generators:
        return True
    d = host.dimensions
    return any(
        t.dimensions.x >= d.x
        and t.dimensions.y >= d.y
        and t.dimensions.z >= d.z
        and not any(targets_box_type(r, t) for r in banning)
        for t in req.resolved_box_types()
    )


def _targets_item(rule: Rule, item_set: ItemSet) -> bool:
    return (
        item_set.ref_id in (rule.target_item_ref_ids or [])
        or (
            item_set.sequence is not None
            and item_set.sequence in (rule.target_item_sequences or [])
        )
        or (rule.target_item_match is not None and item_matches(rule.target_item_match, item_set))
    )


def _merge(
    req: PackRequest,
    outer: PackResponse,
    inner: list[PackResponse],
    outer_boxes: list[Box],
    located: list[tuple[Item, int, int]],
    carriers: dict[int, tuple[_Host, int]],
    warnings: list[str],
    started: float,
) -> PackResponse:
    """One response: the outer boxes, then the subspaces (pointing at their items);
    the contents of a subspace whose item is a leftover are leftovers too."""
    leftovers = list(outer.leftovers)
    leftover_ids = {id(i) for i in leftovers}
    placed: list[tuple[Item, Box]] = []  # (carrier item, its subspace box)
    left_inside = 0
    for item, position, _ in located:
        found = carriers.get(position)
        if found is None:
            continue
        host, k = found
        box = host.filled[k]
        if id(item) in leftover_ids:
            item.weight = item.weight - (box.weight_net or 0.0)
            left_inside += sum(e.item.quantity or 1 for e in box.items if not e.item.virtual)
            for entry in box.items:
                entry.item.message = "inside an item that found no box"
                entry.item.origin = entry.item.center_of_mass = None
                entry.item.index = entry.item.global_id = entry.item.packed_index = None
                entry.item.delta_cost = None
                leftovers.append(entry.item)
            continue
        placed.append((item, box))
    boxes = [*outer_boxes, *(box for _, box in placed)]
    index = 1
    for box_id, box in enumerate(boxes):
        box.id = box_id
        for entry in box.items:
            entry.item.index = entry.item.global_id = index
            index += 1
    parent_of = {id(e.item): b for b in outer_boxes for e in b.items}
    for item, box in placed:
        host = next(h for h, _ in carriers.values() if box in h.filled)
        o = item.origin or Point.model_construct(x=0.0, y=0.0, z=0.0)
        box.subspace = Subspace.model_construct(
            origin_in_parent=Point.model_construct(
                x=o.x + host.origin[0], y=o.y + host.origin[1], z=o.z + host.origin[2]
            ),
            parent_box_index=parent_of[id(item)].id,
            parent_item_index=item.index,
        )
    # Counts leave virtual items out and count a unit of measure as its eaches.
    inside = sum(e.item.quantity or 1 for _, b in placed for e in b.items if not e.item.virtual)
    merged = PackResponse.model_construct(
        boxes=[BoxEntry.model_construct(box=b) for b in boxes],
        built=outer.built,
        started_at=outer.started_at,
        version=outer.version,
        len_items=outer.len_items + inside + left_inside,
        **response_totals(boxes, leftovers),
        pack_time=outer.pack_time + sum(r.pack_time for r in inner),
        render_time=0.0,
        leftovers=leftovers,
        item_sort_used=outer.item_sort_used,
        item_sort_reverse_used=outer.item_sort_reverse_used,
        box_type_choice_goal_used=req.box_type_choice_goal,
        order_id=req.order_id,
        request_id=req.request_id,
        warnings=list(
            dict.fromkeys([*warnings, *outer.warnings, *(w for r in inner for w in r.warnings)])
        ),
        properties=req.properties,
    )
    render_pictures(req, merged)
    merged.total_time = time.perf_counter() - started
    return merged
