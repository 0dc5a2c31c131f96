"""Rule `pack-sequence`: multi-stage packing (cases, then pallets, then trucks). Each
rule puts the item sets it selects into stage `index` of the sequence named `key`;
stages pack in index order, each into its rule's target box types (all box types
without targets), and a stage's `reduce` says what becomes of its boxes: `default` they
ship; `pack-as-is` its item sets ship as is; `box-to-item` / `box-to-item-optional` each
box becomes an item of the next stage (its key's next stage, else the first stage of the
next index: groups packed apart combine), sized by its outer dimensions, and is
reported inside the box that takes it (`subspace`). A reduced box's item carries its
contents (`ItemSet.nested`), so rules with `ignoreSubspaces: false` act through it
(nesting.py). See docs/rules.md."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from cartonize.errors import InvalidRequest
from cartonize.models import (
    MAX_AMOUNT,
    MAX_LENGTH,
    Box,
    BoxEntry,
    BoxType,
    Dimensions,
    Item,
    ItemMatch,
    ItemSet,
    Nested,
    PackRequest,
    PackResponse,
    Point,
    Rule,
    Subspace,
    response_totals,
)
from cartonize.nesting import contents_of
from cartonize.rates import outer_dimensions
from cartonize.render import render_pictures
from cartonize.rules import box_matches, item_matches
from cartonize.units import first_units, renamed_rules, renumber, without_operations

__all__ = ["has_sequences", "pack_in_stages", "stage_targets_box"]

Reduce = Literal["default", "pack-as-is", "box-to-item", "box-to-item-optional"]
_REDUCE: tuple[Reduce, ...] = ("default", "pack-as-is", "box-to-item", "box-to-item-optional")

Pack = Callable[[PackRequest], PackResponse]

#: Largest count limit the engine takes (u32); beyond it boxesMax cannot bind.
_COUNT_MAX = 2**32 - 1


def has_sequences(req: PackRequest) -> bool:
    """True when the request has a pack-sequence rule."""
    return any(r.operation == "pack-sequence" for r in req.rules)


@dataclass
class _Stage:
    rule_index: int
    rule: Rule
    key: str
    index: int
    reduce: Reduce
    reduced_ref_id: int | None
    item_sets: list[ItemSet] = field(default_factory=list)


def _invalid(index: int, option: str, fix: str, got: object) -> InvalidRequest:
    return InvalidRequest(
        "invalid rule options", f"rules[{index}].options.{option}: {fix} (got {got!r})"
    )


def _stage(index: int, rule: Rule) -> _Stage:
    options = rule.options or {}
    stage = options.get("index", 0)
    if not isinstance(stage, int) or isinstance(stage, bool) or stage < 0:
        raise _invalid(index, "index", "must be an integer >= 0", stage)
    key = options.get("key", "")
    if not isinstance(key, str):
        raise _invalid(index, "key", "must be a string naming the sequence", key)
    reduce = options.get("reduce", "default")
    if reduce not in _REDUCE:
        raise _invalid(index, "reduce", f"must be one of {', '.join(_REDUCE)}", reduce)
    reduced = options.get("reducedRefId")
    if reduced is not None and (not isinstance(reduced, int) or isinstance(reduced, bool)):
        raise _invalid(index, "reducedRefId", "must be an integer refId", reduced)
    return _Stage(index, rule, key, stage, reduce, reduced)


def _next_stage(stage: _Stage, ordered: Sequence[_Stage]) -> _Stage | None:
    """The stage a stage's reduced boxes go to: the next stage of its own key (`key`), or,
    when its key has none, the first stage (in rule order) of the next index, so groups
    packed apart at one index (keys "refrigerated" and "room-temperature") combine at the
    next (a mixed pallet), as the public schema describes `key`."""
    later = [s for s in ordered if s.index > stage.index]
    same_key = next((s for s in later if s.key == stage.key), None)
    if same_key is not None or not later:
        return same_key
    return later[0]


def _selects(rule: Rule, item_set: ItemSet) -> bool:
    return (
        (rule.item_ref_id is not None and rule.item_ref_id == item_set.ref_id)
        or (rule.item_sequence is not None and rule.item_sequence == item_set.sequence)
        or (rule.item_match is not None and item_matches(rule.item_match, item_set))
    )


def _with_ref_ids(item_sets: Sequence[ItemSet]) -> list[ItemSet]:
    """Item sets with every null or -1 refId replaced by one no item set uses, as pack()
    would assign them, so that ids stay unique across stages."""
    taken = {s.ref_id for s in item_sets if s.ref_id is not None and s.ref_id != -1}
    next_id = max(taken, default=-1) + 1
    out = []
    for s in item_sets:
        if s.ref_id is None or s.ref_id == -1:
            s = s.model_copy(update={"ref_id": next_id})
            next_id += 1
        out.append(s)
    return out


@dataclass
class _Reduced:
    """A stage box turned into an item of the next stage."""

    box: Box
    ref_id: int
    unique_id: str
    strict: bool
    #: Everything inside the box, at any depth (what rules see through it).
    nested: tuple[Nested, ...] = ()


def pack_in_stages(req: PackRequest, pack: Pack) -> PackResponse:
    """Pack `req` stage by stage (see the module docstring) with `pack` (a request without
    pack-sequence rules) and merge the stages into one response."""
    started = time.perf_counter()
    item_sets = _with_ref_ids(req.item_sets)
    stages = [_stage(i, r) for i, r in enumerate(req.rules) if r.operation == "pack-sequence"]
    other_rules, rule_indices = without_operations(req.rules, "pack-sequence")
    warnings: list[str] = []
    unstaged: list[ItemSet] = []
    for item_set in item_sets:
        chosen = [s for s in stages if _selects(s.rule, item_set)]
        if not chosen:
            unstaged.append(item_set)
            continue
        chosen[0].item_sets.append(item_set)
        for later in chosen[1:]:
            warnings.append(
                f"rules[{later.rule_index}]: item refId {item_set.ref_id} is already in "
                f"stage {chosen[0].index} of sequence '{chosen[0].key}' by "
                f"rules[{chosen[0].rule_index}], which wins"
            )
    used = {s.ref_id for s in item_sets if s.ref_id is not None}
    for s in stages:
        if s.reduced_ref_id is not None and s.reduced_ref_id in used:
            raise _invalid(
                s.rule_index,
                "reducedRefId",
                "must not be the refId of an item set (reduced boxes are new items)",
                s.reduced_ref_id,
            )
    # A fresh refId is one nothing in the request names: not an item set's, not a
    # reducedRefId, and not one a rule selects or targets (a rule naming a refId no item
    # set has must not catch the reduced boxes).
    named = {r.item_ref_id for r in req.rules if r.item_ref_id is not None}
    named |= {t for r in req.rules for t in r.target_item_ref_ids or []}
    fresh = max(used | named | {s.reduced_ref_id or 0 for s in stages}, default=0) + 1

    responses: list[PackResponse] = []
    reduced_into: list[tuple[PackResponse, list[_Reduced]]] = []
    # Each stage numbers its units from 0; every unit gets its number among the request's
    # units of its refId instead, and reduced boxes number on per reducedRefId.
    firsts = dict(zip(map(id, item_sets), first_units(item_sets), strict=True))
    reduced_count: dict[int, int] = {}

    # boxesMax bounds the boxes that ship: the parts whose boxes a later stage does not
    # carry get what the parts before them left; a part with none left ships nothing.
    limit = req.boxes_max if 0 < req.boxes_max <= _COUNT_MAX else None
    shipped = 0

    def pack_part(
        sets: list[ItemSet],
        carry: list[_Reduced],
        sub: PackRequest,
        *,
        ships: bool = True,
        stage_rule: int | None = None,
    ) -> PackResponse:
        nonlocal shipped
        left = None if limit is None or not ships else limit - shipped
        if left is not None and left > 0:
            sub = sub.model_copy(update={"boxes_max": left})
        elif limit is not None:
            sub = sub.model_copy(update={"boxes_max": 0})
        response = pack(sub)
        # Warnings of the part name the request's rules (a stage's own pack-as-is rule,
        # added last, is the stage's rule).
        indices = [*rule_indices, *([] if stage_rule is None else [stage_rule])]
        response.warnings = renamed_rules(response.warnings, indices)
        if limit is not None and left is not None:
            _bound_boxes(response, limit, left)
            shipped += len(_shipped(response))
        targets = [firsts[id(s)] for s in sets]
        targets += [int(r.unique_id.rpartition("-")[2]) for r in carry]
        renumber(
            [*(e.item for b in response.boxes for e in b.box.items), *response.leftovers],
            [*sets, *(_reduced_item_set(r) for r in carry)],
            targets,
        )
        return response

    if unstaged:
        responses.append(
            pack_part(unstaged, [], _sub_request(req, unstaged, req.box_types, other_rules))
        )
    ordered = sorted(stages, key=lambda s: (s.index, s.rule_index))
    incoming: dict[int, list[_Reduced]] = {}
    for stage in ordered:
        carry = incoming.pop(id(stage), [])
        reduced_sets = [_reduced_item_set(r) for r in carry]
        if not stage.item_sets and not reduced_sets:
            continue
        rules = list(other_rules)
        if stage.reduce == "pack-as-is":
            rules.append(Rule(operation="pack-as-is", item_match=ItemMatch(all=True)))
        box_types = [b for b in req.box_types if stage_targets_box(stage.rule, b)]
        sub = _sub_request(req, [*stage.item_sets, *reduced_sets], box_types, rules)
        reduces = stage.reduce in ("box-to-item", "box-to-item-optional")
        target = _next_stage(stage, ordered) if reduces else None
        response = pack_part(
            stage.item_sets,
            carry,
            sub.for_stage(stage.rule),
            ships=target is None,
            stage_rule=stage.rule_index,
        )
        responses.append(response)
        if carry:
            reduced_into.append((response, carry))
        if target is not None:
            ref_id = stage.reduced_ref_id
            if ref_id is None:
                ref_id, fresh = fresh, fresh + 1
            strict = stage.reduce == "box-to-item"
            shipped_boxes = _shipped(response)
            first = reduced_count.get(ref_id, 0)
            reduced_count[ref_id] = first + len(shipped_boxes)
            inside = _inside(response, carry)
            incoming.setdefault(id(target), []).extend(
                _Reduced(box, ref_id, f"{ref_id}-{first + i}", strict, contents_of(box, inside))
                for i, box in enumerate(shipped_boxes)
            )
        elif reduces:
            warnings.append(
                f"rules[{stage.rule_index}]: reduce '{stage.reduce}' but no stage comes after "
                f"stage {stage.index} of sequence '{stage.key}'; its boxes ship as they are"
            )
    return _merge(req, responses, reduced_into, warnings, started, limit, shipped)


def _without_boxes(
    boxes: list[Box],
    dropped: list[Box],
    parents: dict[int, tuple[Box, int]],
    spaces: dict[int, tuple[Box, int]],
    limit: int,
) -> tuple[list[Box], list[Item]]:
    """`boxes` without `dropped` and the boxes inside them (however deep: reduced boxes
    by `parents`, internal spaces by `spaces`), and the request items they held, as
    leftovers (an item with an internal space weighing its own weight again)."""
    inner: dict[int, list[Box]] = {}
    for box in boxes:
        parent = parents.get(id(box)) or spaces.get(id(box))
        if parent is not None:
            inner.setdefault(id(parent[0]), []).append(box)
    gone: set[int] = set()
    left_behind: list[Item] = []
    stack = list(dropped)
    while stack:
        box = stack.pop()
        gone.add(id(box))
        carried = inner.get(id(box), [])
        stack += carried
        # A reduced box's item is no request item; a host of an internal space is.
        carriers = {parents[id(c)][1] for c in carried if id(c) in parents}
        held = {spaces[id(c)][1]: c.weight_net or 0.0 for c in carried if id(c) in spaces}
        left_behind += [
            _left_behind(e.item, limit, held.get(p, 0.0))
            for p, e in enumerate(box.items)
            if p not in carriers
        ]
    return [b for b in boxes if id(b) not in gone], left_behind


def _bound_boxes(response: PackResponse, limit: int, left: int) -> None:
    """A part packed within `left` of the request's `limit` boxes: its leftover messages
    name the request's limit; with none left, all its units are leftovers."""
    if left <= 0:
        held = {
            (space.parent_box_index, space.parent_item_index): e.box.weight_net or 0.0
            for e in response.boxes
            if (space := e.box.subspace) is not None
        }
        for entry in response.boxes:
            response.leftovers += [
                _left_behind(e.item, limit, held.get((entry.box.id, e.item.index), 0.0))
                for e in entry.box.items
            ]
        response.boxes = []
    for item in response.leftovers:
        if item.message and item.message.startswith(f"boxesMax {left} reached"):
            item.message = _limit_reached(limit)


def _limit_reached(limit: int) -> str:
    return f"boxesMax {limit} reached: no further box may be opened"


def _left_behind(item: Item, limit: int, holds: float = 0.0) -> Item:
    """A packed item that cannot ship under boxesMax, as a leftover (less the weight
    `holds` of what its internal space held, now leftovers too)."""
    return item.model_copy(
        update={
            "weight": item.weight - holds,
            "origin": None,
            "index": None,
            "global_id": None,
            "center_of_mass": None,
            "packed_index": None,
            "delta_cost": None,
            "group_pack_parent": None,
            "message": _limit_reached(limit),
        }
    )


def stage_targets_box(rule: Rule, box: BoxType) -> bool:
    """A stage packs into its rule's target box types (generated ones too); without
    targets, into all."""
    if not rule.target_box_ref_ids and rule.target_box_match is None:
        return True
    return (box.ref_id is not None and box.ref_id in (rule.target_box_ref_ids or [])) or (
        rule.target_box_match is not None and box_matches(rule.target_box_match, box)
    )


def _sub_request(
    req: PackRequest, item_sets: list[ItemSet], box_types: list[BoxType], rules: list[Rule]
) -> PackRequest:
    return req.model_copy(
        update={
            "item_sets": item_sets,
            "box_types": box_types,
            "rules": rules,
            "include_images": False,
        }
    )


def _reduced_item_set(r: _Reduced) -> ItemSet:
    """A stage box as an item of the next stage: its outer dimensions (inner ones when
    it has none), its gross weight, the stage's reduced refId, and its contents."""
    outer = outer_dimensions(r.box) if r.box.outer is not None else None
    d = outer or r.box.dimensions
    assert d is not None  # every packed box has dimensions
    weight = r.box.weight_used or 0.0
    # An item's own bounds (beyond them ItemSet refused it here: a 500). Only a box's
    # outer.dimensionChange or a heavy load takes it there.
    if not all(0 < side <= MAX_LENGTH for side in (d.x, d.y, d.z)) or weight > MAX_AMOUNT:
        raise InvalidRequest(
            "invalid pack-sequence",
            f"box {r.box.name or r.box.ref_id} becomes an item of the next stage measuring "
            f"{d.x:.10g} x {d.y:.10g} x {d.z:.10g} and weighing {weight:.10g}; an item's "
            f"sides must be > 0 and <= {MAX_LENGTH:g} and its weight <= {MAX_AMOUNT:g} "
            "(check the box type's outer.dimensionChange)",
        )
    return ItemSet(
        ref_id=r.ref_id,
        name=r.box.name or f"box {r.unique_id}",
        dimensions=Dimensions(x=d.x, y=d.y, z=d.z),
        weight=weight,
        quantity=1,
    ).with_nested(r.nested)


def _shipped(response: PackResponse) -> list[Box]:
    """A part's boxes that are not inside an item (internal spaces are)."""
    return [e.box for e in response.boxes if e.box.subspace is None]


def _spaces(response: PackResponse) -> list[tuple[Box, Box, int]]:
    """The internal-space boxes of a part, each with the box holding its item and that
    item's position (found by the part's own box ids and item indices)."""
    by_id = {e.box.id: e.box for e in response.boxes}
    out: list[tuple[Box, Box, int]] = []
    for entry in response.boxes:
        space = entry.box.subspace
        parent = by_id.get(space.parent_box_index) if space is not None else None
        if space is None or parent is None:
            continue
        position = next(
            (k for k, e in enumerate(parent.items) if e.item.index == space.parent_item_index),
            None,
        )
        if position is not None:
            out.append((entry.box, parent, position))
    return out


def _inside(response: PackResponse, carry: list[_Reduced]) -> Callable[[Item], tuple[Nested, ...]]:
    """What an item of a stage's box carries: a reduced box of the stage before (its
    contents), an item with an internal space (the space's contents, however deep)."""
    reduced = {r.unique_id: r.nested for r in carry}
    spaces = {id(parent.items[position].item): box for box, parent, position in _spaces(response)}

    def inside(item: Item) -> tuple[Nested, ...]:
        if item.unique_id in reduced:
            return reduced[item.unique_id]
        space = spaces.get(id(item))
        return contents_of(space, inside) if space is not None else ()

    return inside


def _merge(
    req: PackRequest,
    responses: list[PackResponse],
    reduced_into: list[tuple[PackResponse, list[_Reduced]]],
    warnings: list[str],
    started: float,
    limit: int | None,
    shipped: int,
) -> PackResponse:
    """One response: every stage's boxes (reduced ones pointing at the item that carries
    them), leftovers that are request items, totals over all, items numbered anew. A
    reduced box no later stage takes ships as it is, within what `limit` (boxesMax) leaves
    after the `shipped` boxes; beyond it its contents are leftovers."""
    boxes: list[Box] = [e.box for r in responses for e in r.boxes]
    leftovers = [i for r in responses for i in r.leftovers]
    parents: dict[int, tuple[Box, int]] = {}  # id(inner box) -> (outer box, item position)
    # Internal spaces point at their item by the ids of their own part: kept by object.
    spaces = {id(box): (parent, p) for r in responses for box, parent, p in _spaces(r)}
    dropped: list[Box] = []
    for response, carry in reduced_into:
        by_unique = {r.unique_id: r for r in carry}
        for entry in response.boxes:
            for position, item_entry in enumerate(entry.box.items):
                reduced = by_unique.pop(item_entry.item.unique_id or "", None)
                if reduced is not None:
                    parents[id(reduced.box)] = (entry.box, position)
        for reduced in by_unique.values():
            why = next((i.message for i in leftovers if i.unique_id == reduced.unique_id), None)
            leftovers = [i for i in leftovers if i.unique_id != reduced.unique_id]
            if limit is not None and shipped >= limit:
                dropped.append(reduced.box)
                continue
            shipped += 1
            if reduced.strict:
                warnings.append(
                    f"box-to-item: box {reduced.unique_id} fits no box of the next stage"
                    f"{f' ({why})' if why else ''}; it ships as it is"
                )
    if dropped:
        assert limit is not None
        boxes, left_behind = _without_boxes(boxes, dropped, parents, spaces, limit)
        leftovers += left_behind
    index = 1
    for box_id, box in enumerate(boxes):
        box.id = box_id
        for packed in box.items:
            packed.item.index = packed.item.global_id = index
            index += 1
    carriers: list[Item] = []
    for box in boxes:
        parent = parents.get(id(box))
        if parent is None:
            continue
        outer, position = parent
        item = outer.items[position].item
        origin = item.origin or Point.model_construct(x=0.0, y=0.0, z=0.0)
        box.subspace = Subspace.model_construct(
            origin_in_parent=origin, parent_box_index=outer.id, parent_item_index=item.index
        )
        # The box's lenItems counts the reduced box's items (however deep: a stage's boxes
        # come before the next stage's), not the item standing for it.
        stands_for = 0 if item.virtual else (item.quantity or 1)
        change = (box.len_items or 0) - stands_for
        # The item may lie in an internal space: the boxes holding that space's item, up
        # to the shipped box, count it too. (A reduced box holding the space's item is
        # met later in this loop: its stage comes after this box's.)
        holder: Box | None = outer
        while holder is not None:
            holder.len_items = (holder.len_items or 0) + change
            up = spaces.get(id(holder))
            holder = up[0] if up is not None else None
        carriers.append(item)
    for box in boxes:
        space = spaces.get(id(box))
        if space is not None and box.subspace is not None:
            outer, position = space
            box.subspace = Subspace.model_construct(
                origin_in_parent=box.subspace.origin_in_parent,
                parent_box_index=outer.id,
                parent_item_index=outer.items[position].item.index,
            )
    first = responses[0] if responses else PackResponse()
    all_warnings = list(dict.fromkeys([*warnings, *(w for r in responses for w in r.warnings)]))
    merged = PackResponse.model_construct(
        boxes=[BoxEntry.model_construct(box=b) for b in boxes],
        built=first.built,
        started_at=first.started_at,
        version=first.version,
        # Boxes standing in as items of a later stage are not request items.
        len_items=sum(r.len_items for r in responses)
        - sum(len(carry) for _, carry in reduced_into),
        **response_totals(boxes, leftovers, carriers),
        pack_time=sum(r.pack_time for r in responses),
        render_time=0.0,
        leftovers=leftovers,
        item_sort_used=first.item_sort_used,
        item_sort_reverse_used=first.item_sort_reverse_used,
        box_type_choice_goal_used=req.box_type_choice_goal,
        order_id=req.order_id,
        request_id=req.request_id,
        warnings=all_warnings,
        properties=req.properties,
    )
    render_pictures(req, merged)
    merged.total_time = time.perf_counter() - started
    return merged
