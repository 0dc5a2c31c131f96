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
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from cartonize.grouping import selects, with_ref_ids
from cartonize.models import (
    Box,
    BoxEntry,
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
from cartonize.nesting import contents_of
from cartonize.open_spaces import (
    entries,
    fixed_items,
    may_pack_around,
    open_volume_figures,
    shell,
)
from cartonize.render import render_pictures
from cartonize.rules import AS_GIVEN
from cartonize.subspace_hosts import Host, fill_order, find_hosts, may_enter
from cartonize.units import (
    first_units,
    numbered,
    renamed_rules,
    renumber_by,
    without_operations,
)

__all__ = ["has_internal_space", "pack_with_subspaces"]

Pack = Callable[[PackRequest], PackResponse]

#: Items these rules select stay out of subspaces: pack-as-is units ship on their own;
#: rolls (irregular) because subspaces are filled unit by unit, and a unit may wind into
#: several rolls.
_KEPT_OUT_OF_SUBSPACES = ("pack-as-is", "irregular")
#: A warning's "rules[i] (lock-orientation), which wins" (also "rules[i] says ...").
_LOCK_WINS = re.compile(r"rules\[(\d+)\](?: says)? \(lock-orientation\), which wins")


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


def _with_units(item_set: ItemSet, numbers: list[int], whole: int) -> ItemSet:
    """`item_set` offering its units numbered `numbers`, of the `whole` it packs as: as
    many eaches. An item set with dimensionSets (units of measure, one number per unit,
    not per each) never enters a subspace (docs/rules.md), so it is offered whole."""
    if item_set.dimension_sets:
        return item_set.model_copy(
            update={"quantity": item_set.quantity if len(numbers) == whole else 0}
        )
    return item_set.model_copy(update={"quantity": len(numbers)})


class _Pool:
    """The units not yet inside anything: per item set, the numbers of its plain units
    (for a host, the units whose space stays empty) and its carriers. Numbers are those
    pack() gives: one per unit, so a case of an item set's dimensionSets takes one."""

    def __init__(self, item_sets: list[ItemSet], firsts: list[int]) -> None:
        self.item_sets = item_sets
        self.units = [numbered(s) for s in item_sets]
        self.numbers = [list(range(f, f + n)) for f, n in zip(firsts, self.units, strict=True)]
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
                out.append(_Source(_with_units(s, numbers, self.units[p]), numbers, p))
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
            # Groups (group-pack) are those of the whole request, not sized to the space.
            .with_group_box_types(req.group_box_types)
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
    located = renumber_by(
        [*(i.item for e in outer.boxes for i in e.box.items), *outer.leftovers],
        outer_sets,
        [src.numbers for src in outer_sources],
    )
    for item, q, _ in located:
        found = outer_sources[q].carrier
        if found is not None:
            carried[id(item)] = found
    outer = _pack_around_open_items(
        req.model_copy(update={"rules": rules}),
        hosts,
        item_sets,
        outer_sources,
        outer,
        located,
        carried,
        pack,
    )
    # The locks standing for internal spaces take their rules' indices; only warnings
    # naming those say that the internal space wins (a request's own lock keeps its name).
    as_given = {str(i) for i in locked.values()}
    for r in [outer, *responses]:
        r.warnings = [
            _LOCK_WINS.sub(
                lambda m: (
                    m.group(0).replace("lock-orientation", "internal-space: it packs as given")
                    if m.group(1) in as_given
                    else m.group(0)
                ),
                w,
            )
            for w in renamed_rules(r.warnings, indices)
        ]
    return _merge(req, outer, responses, carried, hosts, item_sets, warnings, started)


def _contents(item: Item, carried: dict[int, _Carrier]) -> list[Item]:
    carrier = carried.get(id(item))
    return [e.item for e in carrier.box.items] if carrier is not None else []


def _units_over(leftovers: list[Item], carried: dict[int, _Carrier]) -> int:
    """The units `leftovers` stand for, at every depth."""
    return sum(
        (0 if i.virtual else i.quantity or 1) + _units_over(_contents(i, carried), carried)
        for i in leftovers
    )


def _pack_around_open_items(
    req: PackRequest,
    hosts: dict[int, Host],
    item_sets: list[ItemSet],
    sources: list[_Source],
    outer: PackResponse,
    located: list[tuple[Item, int, int]],
    carried: dict[int, _Carrier],
    pack: Pack,
) -> PackResponse:
    """`blocking: false` (open_spaces.py): the boxes holding items whose space does not
    block keep those items where they are, as their shell and contents, and every other
    unit packs again, offered those boxes first. The pack that leaves fewer units over
    wins, then the cheaper (the one with fewer boxes under most-items), then the first."""
    # A space that is the whole item leaves no shell to carry the item's weight: it
    # stays where the first pack put it, as if it blocked.
    open_hosts = {
        p: h
        for p, h in hosts.items()
        if not h.blocking
        and shell(_dims(item_sets[p].dimensions), h.origin, _dims(h.box_type.dimensions))
    }
    if not open_hosts or not may_pack_around(req):
        return outer
    where = {id(item): (q, n) for item, q, n in located}
    fixed: list[tuple[Box, list[tuple[Item, Host]]]] = []
    taken: dict[int, set[int]] = {}  # source -> its units that stay where they are
    for entry in outer.boxes:
        opened: list[tuple[Item, Host]] = []
        for e in entry.box.items:
            q, n = where.get(id(e.item), (-1, 0))
            if q >= 0 and sources[q].position in open_hosts:
                opened.append((e.item, open_hosts[sources[q].position]))
                taken.setdefault(q, set()).add(n)
        if opened:
            fixed.append((entry.box, opened))
    if not fixed or (len(outer.boxes) == 1 and not outer.leftovers):
        return outer  # nothing to gain: everything is in the one box already
    if any(box.box_type is None for box, _ in fixed):
        return outer  # no type to open it again with
    again: list[_Source] = []
    for q, src in enumerate(sources):
        numbers = [m for n, m in enumerate(src.numbers) if n not in taken.get(q, set())]
        again.append(
            _Source(
                _with_units(src.item_set, numbers, len(src.numbers)),
                numbers,
                src.position,
                src.carrier if numbers else None,
            )
        )
    # Per box, per open item: the pieces standing for it in the second pack.
    parts = [
        [fixed_items(item, host, _contents(item, carried)) for item, host in opened]
        for _, opened in fixed
    ]
    stands_for = [[i for pieces in box_parts for i in pieces] for box_parts in parts]
    second = pack(
        req.model_copy(
            update={
                "item_sets": [s.item_set for s in again],
                "boxes": [
                    Box.model_construct(box_type=box.box_type, items=entries(pieces))
                    for (box, _), pieces in zip(fixed, stands_for, strict=True)
                ],
                "include_images": False,
            }
        )
    )
    # What the second pack charged for each open item: its pieces' deltaCost (the box's
    # price is on its first piece), which it takes over if the second pack wins.
    charged: list[tuple[Item, int]] = []
    for entry, (_, opened), box_parts in zip(second.boxes, fixed, parts, strict=False):
        placed = iter(entry.box.items)
        for (item, _), pieces in zip(opened, box_parts, strict=True):
            charged.append((item, sum(next(placed).item.delta_cost or 0 for _ in pieces)))
        entry.box.items = [*entries(i for i, _ in opened), *placed]
    hosts_fixed = {id(i): i for _, opened in fixed for i, _ in opened}
    fixed_ids = hosts_fixed.keys()
    # The engine saw them as virtual pieces; a virtual one counts no more than any other.
    second.len_items += sum(i.quantity or 1 for i in hosts_fixed.values() if not i.virtual)
    anew = [i.item for e in second.boxes for i in e.box.items if id(i.item) not in fixed_ids]
    second_carried: dict[int, _Carrier] = {}
    for item, q, _ in renumber_by(
        [*anew, *second.leftovers], [s.item_set for s in again], [s.numbers for s in again]
    ):
        found = again[q].carrier
        if found is not None:
            second_carried[id(item)] = found

    def score(r: PackResponse, found: dict[int, _Carrier]) -> tuple[int, float, int]:
        over = _units_over(r.leftovers, found)
        if req.box_type_choice_goal == "most-items":
            return (over, len(r.boxes), r.total_cost or 0)
        return (over, r.total_cost or 0, len(r.boxes))

    if score(second, {**carried, **second_carried}) < score(outer, carried):
        carried.update(second_carried)
        # In place: the open items are keys of `carried` by identity.
        for item, cost in charged:
            item.delta_cost = cost
        # What the first pack said of the fixed items holds (the second packs none).
        second.warnings = list(dict.fromkeys([*outer.warnings, *second.warnings]))
        return second
    return outer


def _volume(d: Dimensions) -> float:
    return d.x * d.y * d.z


def _dims(d: Dimensions) -> tuple[float, float, float]:
    return (d.x, d.y, d.z)


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
        # A leftover is a unit: the group it packed in (group-pack) did not ship.
        inner.group_pack_parent = None
        leftovers.append(inner)
        units += 0 if inner.virtual else (inner.quantity or 1)
        units += _spill(inner, carried, leftovers)
    return units


def _merge(
    req: PackRequest,
    outer: PackResponse,
    inner: list[PackResponse],
    carried: dict[int, _Carrier],
    hosts: dict[int, Host],
    item_sets: list[ItemSet],
    warnings: list[str],
    started: float,
) -> PackResponse:
    """One response: the outer boxes, then the spaces, each after the box holding its
    item (pointing at it); the contents of a space whose item is a leftover are
    leftovers too. A box holding an item whose space does not block counts the item's
    volume less its space's."""
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
    open_spaces = {
        item_sets[p].ref_id: _volume(h.box_type.dimensions)
        for p, h in hosts.items()
        if not h.blocking
    }
    for box in boxes:
        if any(e.item.ref_id in open_spaces for e in box.items):
            open_volume_figures(box, lambda i: open_spaces.get(i.ref_id, 0.0))
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
    # A box's lenItems counts what its items' spaces hold too, at every depth: a space
    # comes after the box holding its item, so the deepest are added in first.
    for _, holder, carrier in reversed(holders):
        holder.len_items = (holder.len_items or 0) + (carrier.box.len_items or 0)
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
