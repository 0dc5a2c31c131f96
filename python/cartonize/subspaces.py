"""Rule `internal-space` (`type: "subspace"`): an item (a flower pot, a tote, a bucket)
carries a packable space, `options.boxType` at `options.origin` within the item. Spaces
are filled before any box is opened, hosts with the smallest item first
(subspace_hosts.fill_order): each host's units take, one space per unit, the items still
to pack, including the units of the hosts filled before it with what they hold (a pencil
in a pot, the pot in a bucket). The units still loose then pack, hosts as given
(unturned, so each space keeps its place) and weighing what they hold, into the
request's box types. Each space that holds something is reported as a box with
`subspace` {parentBoxIndex, parentItemIndex, originInParent}, pointing at the box that
holds its item, itself a space's box when the item is nested. A unit holding something
carries it (`ItemSet.nested`, at every depth), so rules with `ignoreSubspaces: false` act
through it (nesting.py). See docs/rules.md."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass

from cartonize.grouping import selects, with_ref_ids
from cartonize.models import (
    Box,
    BoxEntry,
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
from cartonize.nesting import contents_of
from cartonize.render import render_pictures
from cartonize.rules import AS_GIVEN
from cartonize.subspace_hosts import Host, fill_order, find_hosts, may_enter
from cartonize.units import first_units, renamed_rules, renumber_by, without_operations

__all__ = ["has_internal_space", "pack_with_subspaces"]

Pack = Callable[[PackRequest], PackResponse]

#: Items these rules select stay out of subspaces: pack-as-is units ship on their own;
#: rolls (irregular) because subspaces are filled unit by unit, and a unit may wind into
#: several rolls.
_KEPT_OUT_OF_SUBSPACES = ("pack-as-is", "irregular")


def has_internal_space(req: PackRequest) -> bool:
    """True when the request has an internal-space rule (and real item sets)."""
    return any(r.operation == "internal-space" for r in req.rules)


@dataclass(eq=False)
class _Carrier:
    """A unit of a host whose space holds something."""

    host: Host
    #: Its unit number among the units of its refId.
    number: int
    #: Its space, as the fill packed it.
    box: Box
    #: The unit as an item of the next pack: quantity 1, its own weight plus the
    #: contents', carrying them (`nested`).
    unit: ItemSet


@dataclass
class _Source:
    """Units offered to a pack: an item set's plain units, or one carrier."""

    item_set: ItemSet
    numbers: list[int]
    position: int
    carrier: _Carrier | None = None


class _Pool:
    """The units not yet inside anything: per item set, the numbers of its plain units
    (for a host, the units whose space stays empty) and its carriers."""

    def __init__(self, item_sets: list[ItemSet], firsts: list[int]) -> None:
        self.item_sets = item_sets
        self.numbers = [
            list(range(f, f + s.quantity)) for f, s in zip(firsts, item_sets, strict=True)
        ]
        self.carriers: list[list[_Carrier]] = [[] for _ in item_sets]

    def sources(self, positions: list[int], admits: Callable[[ItemSet], bool]) -> list[_Source]:
        """The units of the item sets at `positions` that `admits` lets in, each set's
        carriers before its plain units."""
        out: list[_Source] = []
        for p in positions:
            out += [_Source(c.unit, [c.number], p, c) for c in self.carriers[p] if admits(c.unit)]
            s = self.item_sets[p]
            if self.numbers[p] and admits(s):
                numbers = list(self.numbers[p])
                out.append(_Source(s.model_copy(update={"quantity": len(numbers)}), numbers, p))
        return out

    def take(self, source: _Source, n: int) -> None:
        """Unit n of `source` went into a box."""
        if source.carrier is not None:
            self.carriers[source.position].remove(source.carrier)
        else:
            self.numbers[source.position].remove(source.numbers[n])


def pack_with_subspaces(req: PackRequest, pack: Pack) -> PackResponse:
    """Pack `req` with its internal-space rules (module docstring), using `pack` for each
    part."""
    started = time.perf_counter()
    item_sets = with_ref_ids(req.item_sets)
    warnings: list[str] = []
    hosts = find_hosts(req, item_sets, warnings)
    pool = _Pool(item_sets, first_units(item_sets))
    rules, indices = without_operations(req.rules, "internal-space")
    # Units with an internal space pack as given, in spaces and boxes alike:
    # lock-orientation rules ahead of the rest.
    locked = {item_sets[p].ref_id: host.rule_index for p, host in hosts.items()}
    rules = [
        *(
            Rule(
                operation="lock-orientation",
                item_ref_id=ref_id,
                options={"freeAxes": [], AS_GIVEN: True},
            )
            for ref_id in locked
        ),
        *rules,
    ]
    indices = [*locked.values(), *indices]
    kept_out = {
        p
        for p, s in enumerate(item_sets)
        for r in req.rules
        if r.operation in _KEPT_OUT_OF_SUBSPACES and selects(r, s)
    }
    # Units of measure (dimensionSets) are numbered by unit, not by each: they stay out.
    kept_out |= {p for p, s in enumerate(item_sets) if s.dimension_sets}
    if hosts and (req.boxes_per_item_set_max > 0 or req.boxes_per_sequence_max > 0):
        warnings.append(
            "internal-space: subspaces stay empty under boxesPerItemSetMax or "
            "boxesPerSequenceMax (their contents would spread items over more boxes)"
        )
        order: list[Host] = []
    else:
        order = fill_order(hosts, item_sets)
    carried: dict[int, _Carrier] = {}  # id(packed item) -> the carrier it is
    nested_of: dict[int, tuple[Nested, ...]] = {}  # id(packed item) -> what it carries
    responses: list[PackResponse] = []
    for rank, host in enumerate(order):
        h = host.position
        filled_before = {g.position for g in order[:rank]}
        positions = [
            p
            for p in range(len(item_sets))
            if p not in kept_out and (p not in hosts or p in filled_before)
        ]
        sources = pool.sources(positions, functools.partial(may_enter, req, host=item_sets[h]))
        if not pool.numbers[h] or not sources:
            continue
        sets = [s.item_set for s in sources]
        response = pack(
            req.model_copy(
                update={
                    "item_sets": sets,
                    "box_types": [host.box_type],
                    # boxTypeDefaults complete the request's cartons, not a part of an
                    # item: a space costs nothing and reserves no void fill of its own.
                    "box_type_defaults": None,
                    "box_type_generators": [],
                    "rules": rules,
                    "boxes_max": len(pool.numbers[h]),
                    "include_images": False,
                }
            )
        )
        responses.append(response)
        filled = [e.box for e in response.boxes if e.box.items]
        packed = [i.item for b in filled for i in b.items]
        for item, q, n in renumber_by(packed, sets, [s.numbers for s in sources]):
            nested_of[id(item)] = sets[q].nested
            found = sources[q].carrier
            if found is not None:
                carried[id(item)] = found
            pool.take(sources[q], n)
        s = item_sets[h]
        for box in filled:
            inside = contents_of(box, lambda i: nested_of.get(id(i), ()))
            unit = s.model_copy(
                update={"quantity": 1, "weight": s.weight + (box.weight_net or 0.0)}
            ).with_nested((*s.nested, *inside))
            pool.carriers[h].append(_Carrier(host, pool.numbers[h].pop(0), box, unit))

    outer_sources = pool.sources(list(range(len(item_sets))), lambda _: True)
    # Item sets keep their place (and their numbers) even when all their units are inside.
    for p, s in enumerate(item_sets):
        if not any(src.position == p and src.carrier is None for src in outer_sources):
            outer_sources.append(_Source(s.model_copy(update={"quantity": 0}), [], p))
    outer_sources.sort(key=lambda src: (src.position, src.carrier is None))
    outer_sets = [src.item_set for src in outer_sources]
    outer = pack(
        req.model_copy(update={"item_sets": outer_sets, "rules": rules, "include_images": False})
    )
    for r in [outer, *responses]:
        r.warnings = [
            w.replace(
                "(lock-orientation), which wins", "(internal-space: it packs as given), which wins"
            )
            for w in renamed_rules(r.warnings, indices)
        ]
    located = renumber_by(
        [*(i.item for e in outer.boxes for i in e.box.items), *outer.leftovers],
        outer_sets,
        [src.numbers for src in outer_sources],
    )
    for item, q, _ in located:
        found = outer_sources[q].carrier
        if found is not None:
            carried[id(item)] = found
    return _merge(req, outer, responses, carried, warnings, started)


def _spill(item: Item, carried: dict[int, _Carrier], leftovers: list[Item]) -> int:
    """`item` found no box: what its space holds, at every depth, joins `leftovers`, and
    it weighs its own weight again. Returns the units that joined."""
    carrier = carried.get(id(item))
    if carrier is None:
        return 0
    item.weight = item.weight - (carrier.box.weight_net or 0.0)
    units = 0
    for entry in carrier.box.items:
        inner = entry.item
        inner.message = "inside an item that found no box"
        inner.origin = inner.center_of_mass = None
        inner.index = inner.global_id = inner.packed_index = None
        inner.delta_cost = None
        leftovers.append(inner)
        units += 0 if inner.virtual else (inner.quantity or 1)
        units += _spill(inner, carried, leftovers)
    return units


def _merge(
    req: PackRequest,
    outer: PackResponse,
    inner: list[PackResponse],
    carried: dict[int, _Carrier],
    warnings: list[str],
    started: float,
) -> PackResponse:
    """One response: the outer boxes, then the spaces, each after the box holding its
    item (pointing at it); the contents of a space whose item is a leftover are
    leftovers too."""
    leftovers = list(outer.leftovers)
    left_inside = sum(_spill(item, carried, leftovers) for item in outer.leftovers)
    boxes = [e.box for e in outer.boxes]
    holders: list[tuple[Item, Box, _Carrier]] = []  # (item, the box holding it, its space)
    k = 0
    while k < len(boxes):  # grows: a space follows the box holding its item
        for entry in boxes[k].items:
            found = carried.get(id(entry.item))
            if found is not None:
                boxes.append(found.box)
                holders.append((entry.item, boxes[k], found))
        k += 1
    index = 1
    for box_id, box in enumerate(boxes):
        box.id = box_id
        for entry in box.items:
            entry.item.index = entry.item.global_id = index
            index += 1
    for item, holder, carrier in holders:
        o = item.origin or Point.model_construct(x=0.0, y=0.0, z=0.0)
        at = carrier.host.origin
        carrier.box.subspace = Subspace.model_construct(
            origin_in_parent=Point.model_construct(x=o.x + at[0], y=o.y + at[1], z=o.z + at[2]),
            parent_box_index=holder.id,
            parent_item_index=item.index,
        )
        carrier.box.space_look = carrier.host.look
    # Counts leave virtual items out and count a unit of measure as its eaches.
    inside = sum(
        e.item.quantity or 1 for _, _, c in holders for e in c.box.items if not e.item.virtual
    )
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
