"""Rule `bounded-fill`: a soft item (fill, pillow, bag of loose goods) keeps its volume
but takes the shape of the free space it is put in. The request's other items pack
first; then each bounded-fill unit, in request order, goes into the first box with a
placement point (the box's origin or a corner of a packed item) whose contiguous free
cuboid can hold its volume: it keeps its dimension along `options.criticalAxis` (when
given) and fills the free cuboid along the other axes, the horizontal ones first, so it
lies as flat as it can. Units no box can take are packed on their own, as given, into
new boxes. See docs/rules.md."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cartonize.errors import InvalidRequest
from cartonize.grouping import selects, with_ref_ids
from cartonize.items import (
    box_center_of_mass,
    point_string,
    sequences_apart,
)
from cartonize.models import (
    Box,
    BoxEntry,
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
from cartonize.nesting import add_nested_relations
from cartonize.rates import box_cost, lower_rating, whole_units
from cartonize.render import render_pictures
from cartonize.rules import apply_rules
from cartonize.units import first_units, renamed_rules, renumber, without_operations

__all__ = ["has_bounded_fill", "pack_filled"]

Pack = Callable[[PackRequest], PackResponse]
Vec = tuple[float, float, float]

#: Operations that decide the unit's shape or packaging, winning over bounded-fill.
_WINS_OVER_FILL = (
    "pack-as-is",
    "irregular",
    "group-pack",
    "fragile",
    "lock-orientation",
    "alternate-dimensions",
)
_EPS = 1e-9


def has_bounded_fill(req: PackRequest) -> bool:
    """True when the request has a bounded-fill rule (and real item sets)."""
    return any(r.operation == "bounded-fill" for r in req.rules)


def critical_axis(index: int, rule: Rule) -> int | None:
    """A bounded-fill rule's `criticalAxis` (the schema's table spells it `critialAxis`,
    also accepted); raises `InvalidRequest` naming the field when malformed."""
    options = rule.options or {}
    name = "criticalAxis" if "criticalAxis" in options else "critialAxis"
    axis = options.get(name)
    if axis is not None and (
        not isinstance(axis, int) or isinstance(axis, bool) or not 0 <= axis <= 2
    ):
        raise InvalidRequest(
            "invalid rule options",
            f"rules[{index}].options.{name}: must be an axis 0 (x), 1 (y) or 2 (z), or "
            f"absent (got {axis!r})",
        )
    return axis


@dataclass
class _Fill:
    position: int
    item_set: ItemSet
    axis: int | None
    first_unit: int
    placed: int = 0


def pack_filled(req: PackRequest, pack: Pack) -> PackResponse:
    """Pack `req` with its bounded-fill rules (module docstring) using `pack` for the
    parts packed by the engine."""
    started = time.perf_counter()
    item_sets = with_ref_ids(req.item_sets)
    firsts = first_units(item_sets)
    warnings: list[str] = []
    fills: dict[int, _Fill] = {}
    by_rule: dict[int, int] = {}
    for index, rule in enumerate(req.rules):
        if rule.operation != "bounded-fill":
            continue
        axis = critical_axis(index, rule)
        for p, s in enumerate(item_sets):
            if not selects(rule, s):
                continue
            if p in fills:
                warnings.append(
                    f"rules[{index}]: item refId {s.ref_id} already fills by "
                    f"rules[{by_rule[p]}], which wins"
                )
                continue
            winner = next(
                (
                    (i, r)
                    for i, r in enumerate(req.rules)
                    if r.operation in _WINS_OVER_FILL and selects(r, s)
                ),
                None,
            )
            if winner is not None:
                warnings.append(
                    f"rules[{index}] (bounded-fill) and rules[{winner[0]}] "
                    f"({winner[1].operation}) both select item refId {s.ref_id}; "
                    f"{winner[1].operation} wins: the item keeps its shape"
                )
                continue
            if s.dimension_sets:
                warnings.append(
                    f"rules[{index}] (bounded-fill): item refId {s.ref_id} packs as the units "
                    "of its dimensionSets, which win: the item keeps its shape"
                )
                continue
            if s.quantity > 0:
                fills[p] = _Fill(p, s, axis, firsts[p])
                by_rule[p] = index
    rules, indices = without_operations(req.rules, "bounded-fill")
    rest = [(p, s) for p, s in enumerate(item_sets) if p not in fills]
    responses: list[PackResponse] = []
    boxes: list[Box] = []
    if rest:
        first = pack(_sub(req, [s for _, s in rest], rules))
        all_boxes = [e.box for e in first.boxes]
        renumber(
            [*(e.item for b in all_boxes for e in b.items), *first.leftovers],
            [s for _, s in rest],
            [firsts[p] for p, _ in rest],
        )
        responses.append(first)
        boxes = all_boxes
    if boxes:
        _fill_boxes(req, item_sets, rules, boxes, list(fills.values()))
    left_sets: list[ItemSet] = []
    left_fills: list[_Fill] = []
    unplaced: list[Item] = []
    boxes_left = req.boxes_max <= 0 or len(boxes) < req.boxes_max
    for f in fills.values():
        rest_units = f.item_set.quantity - f.placed
        if rest_units <= 0:
            continue
        if not boxes_left or not _spread_left(req, boxes, f.item_set):
            unplaced += [
                _unit(
                    f, f.placed + k, "bounded-fill: no free space and no box left within the limits"
                )
                for k in range(rest_units)
            ]
            continue
        left_sets.append(f.item_set.model_copy(update={"quantity": rest_units}))
        left_fills.append(f)
    extra: list[Box] = []
    if left_sets:
        limits = _stage_limits(req, boxes, left_fills)
        last = pack(_sub(req, left_sets, rules).model_copy(update=limits))
        extra = [e.box for e in last.boxes]
        start = _next_packed_index(boxes)
        for entry in (e for b in extra for e in b.items):
            if entry.item.packed_index is not None:
                entry.item.packed_index += start
        renumber(
            [*(e.item for b in extra for e in b.items), *last.leftovers],
            left_sets,
            [f.first_unit + f.placed for f in left_fills],
        )
        responses.append(last)
    for r in responses:
        r.warnings = renamed_rules(r.warnings, indices)
    return _merge(req, responses, [*boxes, *extra], fills, unplaced, warnings, started)


def _sub(req: PackRequest, item_sets: list[ItemSet], rules: list[Rule]) -> PackRequest:
    return req.model_copy(update={"item_sets": item_sets, "rules": rules, "include_images": False})


def _stage_limits(req: PackRequest, boxes: list[Box], fills: list[_Fill]) -> dict[str, int]:
    """boxesMax and the spread limits left for packing the units no box took, each >= 1
    (every one of `fills` may still spread)."""
    out: dict[str, int] = {}
    if req.boxes_max > 0:
        out["boxes_max"] = req.boxes_max - len(boxes)
    if req.boxes_per_item_set_max > 0:
        out["boxes_per_item_set_max"] = min(
            req.boxes_per_item_set_max - _span(boxes, ref_id=f.item_set.ref_id) for f in fills
        )
    if req.boxes_per_sequence_max > 0:
        out["boxes_per_sequence_max"] = min(
            (
                req.boxes_per_sequence_max - _span(boxes, sequence=f.item_set.sequence)
                for f in fills
                if f.item_set.sequence
            ),
            default=req.boxes_per_sequence_max,
        )
    return out


def _spread_left(req: PackRequest, boxes: list[Box], s: ItemSet) -> bool:
    """The item set may still spread into a box more (boxesPerItemSetMax and
    boxesPerSequenceMax)."""
    if (
        req.boxes_per_item_set_max > 0
        and _span(boxes, ref_id=s.ref_id) >= req.boxes_per_item_set_max
    ):
        return False
    return not (
        req.boxes_per_sequence_max > 0
        and s.sequence
        and _span(boxes, sequence=s.sequence) >= req.boxes_per_sequence_max
    )


def _span(boxes: list[Box], *, ref_id: int | None = None, sequence: str | None = None) -> int:
    """How many boxes hold the refId (or the non-empty sequence)."""
    return sum(
        any(
            (ref_id is not None and e.item.ref_id == ref_id)
            or (sequence is not None and e.item.sequence == sequence)
            for e in b.items
        )
        for b in boxes
    )


def _unit(fill: _Fill, n: int, message: str) -> Item:
    """Unit `n` of a fill item set as a leftover."""
    s = fill.item_set
    return Item.model_construct(
        ref_id=s.ref_id,
        name=s.name,
        color=s.color,
        weight=s.weight,
        sequence=s.sequence,
        virtual=s.virtual,
        properties=s.properties,
        unique_id=f"{s.ref_id}-{fill.first_unit + n}",
        quantity=1,
        dimensions=s.dimensions,
        message=message,
    )


# --------------------------------------------------------------------------- placement


@dataclass
class _Placed:
    origin: Vec
    dims: Vec
    ref_id: int | None
    item: Item


def _placed(box: Box) -> list[_Placed]:
    out = []
    for e in box.items:
        o = e.item.origin or Point.model_construct(x=0.0, y=0.0, z=0.0)
        d = e.item.dimensions
        out.append(_Placed((o.x, o.y, o.z), (d.x, d.y, d.z), e.item.ref_id, e.item))
    return out


def _free_extent(point: Vec, order: Sequence[int], size: Vec, items: list[_Placed]) -> Vec | None:
    """The maximal empty cuboid from `point`, grown along `order` (first a line, then a
    rectangle, then a cuboid), or None when the point lies inside an item."""
    lo = list(point)
    hi = list(point)
    for item in items:
        if all(
            item.origin[a] - _EPS <= point[a] < item.origin[a] + item.dims[a] - _EPS
            for a in range(3)
        ):
            return None
    for axis in order:
        reach = size[axis]
        for item in items:
            # Items overlapping the region grown so far on the other axes block this one.
            blocks = all(
                item.origin[a] < max(hi[a], lo[a] + _EPS) - _EPS
                and lo[a] < item.origin[a] + item.dims[a] - _EPS
                for a in range(3)
                if a != axis
            )
            if blocks and item.origin[axis] >= point[axis] - _EPS:
                reach = min(reach, item.origin[axis])
        hi[axis] = reach
    extent = (hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2])
    return extent if min(extent) > _EPS else None


def _shape(volume: float, given: Vec, axis: int | None, room: Vec) -> Vec | None:
    """Dimensions of `volume` inside `room`: `given[axis]` along the critical axis, the
    other axes filled to the room, horizontal ones (y, z) first, the last one what the
    volume needs."""
    fixed = {axis: given[axis]} if axis is not None else {}
    if axis is not None and given[axis] > room[axis] + _EPS:
        return None
    free = [a for a in (1, 2, 0) if a != axis]
    for filled in itertools.permutations(free):
        dims = dict(fixed)
        for a in filled[:-1]:
            dims[a] = room[a]
        last = filled[-1]
        area = 1.0
        for a in dims:
            area *= dims[a]
        if area <= 0:
            continue
        dims[last] = volume / area
        if dims[last] <= room[last] * (1 + 1e-9) + _EPS:
            return (dims[0], dims[1], dims[2])
    return None


def _supported(origin: Vec, dims: Vec, items: list[_Placed]) -> bool:
    """The whole base of a cuboid at `origin` rests on the floor or on item tops."""
    if origin[0] <= _EPS:
        return True
    tops = [
        i for i in items if abs(i.origin[0] + i.dims[0] - origin[0]) <= _EPS * max(1.0, origin[0])
    ]
    ys = sorted(
        {origin[1], origin[1] + dims[1]}
        | {c for i in tops for c in (i.origin[1], i.origin[1] + i.dims[1])}
    )
    zs = sorted(
        {origin[2], origin[2] + dims[2]}
        | {c for i in tops for c in (i.origin[2], i.origin[2] + i.dims[2])}
    )
    for y0, y1 in itertools.pairwise(ys):
        for z0, z1 in itertools.pairwise(zs):
            if y0 < origin[1] - _EPS or y1 > origin[1] + dims[1] + _EPS:
                continue
            if z0 < origin[2] - _EPS or z1 > origin[2] + dims[2] + _EPS or y1 - y0 <= _EPS:
                continue
            if z1 - z0 <= _EPS:
                continue
            cy, cz = (y0 + y1) / 2, (z0 + z1) / 2
            if not any(
                i.origin[1] <= cy <= i.origin[1] + i.dims[1]
                and i.origin[2] <= cz <= i.origin[2] + i.dims[2]
                for i in tops
            ):
                return False
    return True


def _above(origin: Vec, dims: Vec, below: _Placed) -> bool:
    """A cuboid at `origin` lies higher than `below`, footprints overlapping."""
    return origin[0] >= below.origin[0] + below.dims[0] - _EPS and all(
        origin[a] < below.origin[a] + below.dims[a] - _EPS
        and below.origin[a] < origin[a] + dims[a] - _EPS
        for a in (1, 2)
    )


def _fill_boxes(
    req: PackRequest,
    item_sets: list[ItemSet],
    rules: list[Rule],
    boxes: list[Box],
    fills: list[_Fill],
) -> None:
    """Put bounded-fill units into the free space of `boxes`, in request order."""
    box_types = req.resolved_box_types()
    ref_ids = [s.ref_id if s.ref_id is not None else -1 for s in item_sets]
    effects = apply_rules(rules, list(zip(ref_ids, item_sets, strict=True)), box_types)
    add_nested_relations(effects, rules, ref_ids, box_types)
    # maxSequenceDistance keeps items apart as exclusions do (the engine's windows).
    sequences = [s.sequence for s in item_sets]
    fragile_refs = {ref_ids[p] for p in effects.fragile}
    inline_set = req.items_inline_max is not None and any(a > 0 for a in req.items_inline_max)
    for fill in fills:
        s = fill.item_set
        d = s.dimensions
        given = (d.x, d.y, d.z)
        volume = d.x * d.y * d.z
        kept_out = {
            ref_ids[q if p == fill.position else p]
            for p, q in effects.kind_pairs
            if fill.position in (p, q) and p != q
        } | {
            ref_ids[q] for q in sequences_apart(sequences, fill.position, req.max_sequence_distance)
        }
        banned_types = {b for p, b in effects.kind_box_types if p == fill.position}
        # Under boxTypeChoiceLookback n only the last n + 1 boxes are still open.
        lookback = req.box_type_choice_lookback
        open_boxes = boxes[-(lookback + 1) :] if lookback >= 0 else boxes
        for box in open_boxes:
            if fill.placed >= s.quantity:
                break
            if not _box_allows(req, box, box_types, banned_types, inline_set):
                continue
            while fill.placed < s.quantity and _place_one(
                req, boxes, box, fill, given, volume, kept_out, fragile_refs
            ):
                fill.placed += 1


def _box_allows(
    req: PackRequest,
    box: Box,
    box_types: list[BoxType],
    banned: set[int],
    inline_set: bool,
) -> bool:
    """The box's type is open to the fill item and has no inline limit (not judged here)."""
    if box.subspace is not None:
        return False
    index = next((b for b, t in enumerate(box_types) if t == box.box_type), None)
    if index is not None and index in banned:
        return False
    own = box.box_type.items_inline_max if box.box_type is not None else None
    if own is not None:
        return not any(a > 0 for a in own)
    return not inline_set


def _place_one(
    req: PackRequest,
    boxes: list[Box],
    box: Box,
    fill: _Fill,
    given: Vec,
    volume: float,
    kept_out: set[int],
    fragile_refs: set[int],
) -> bool:
    """Place the next unit of `fill` in `box` if some point has room; True when placed."""
    s = fill.item_set
    placed = _placed(box)
    refs = {p.ref_id for p in placed}
    if refs & kept_out:
        return False
    if s.ref_id not in refs and not _spread_left(req, boxes, s):
        return False
    box_type = box.box_type
    items_max = box_type.items_per_box_max if box_type is not None else None
    items_max = items_max if items_max is not None else req.items_per_box_max
    if 0 < items_max <= len(placed):
        return False
    sets_max = box_type.item_sets_per_box_max if box_type is not None else None
    sets_max = sets_max if sets_max is not None else req.item_sets_per_box_max
    if sets_max > 0 and s.ref_id not in refs and len(refs) >= sets_max:
        return False
    weight_max = box.weight_max or 0.0
    if weight_max > 0 and (box.weight_used or 0.0) + s.weight > weight_max + _EPS:
        return False
    if not _within_reserve_and_properties(box, s, volume):
        return False
    size = box.dimensions
    if size is None:
        return False
    extent: Vec = (size.x, size.y, size.z)
    points = [(0.0, 0.0, 0.0)]
    for p in placed:
        o, dd = p.origin, p.dims
        points += [
            (o[0] + dd[0], o[1], o[2]),
            (o[0], o[1] + dd[1], o[2]),
            (o[0], o[1], o[2] + dd[2]),
        ]
    points = sorted(set(points))
    for point in points:
        if any(point[a] >= extent[a] - _EPS for a in range(3)):
            continue
        for order in ((1, 2, 0), (2, 1, 0), (0, 1, 2), (0, 2, 1), (1, 0, 2), (2, 0, 1)):
            room = _free_extent(point, order, extent, placed)
            if room is None:
                break
            dims = _shape(volume, given, fill.axis, room)
            if dims is None:
                continue
            if req.allowable_overhang >= 0 and not _supported(point, dims, placed):
                continue
            if any(p.ref_id in fragile_refs and _above(point, dims, p) for p in placed):
                continue
            if req.cohort_packing and _cohorts(placed, s.ref_id, (point, dims)) > req.cohort_max:
                continue
            _add(box, fill, point, dims, _next_packed_index(boxes))
            return True
    return False


def _cohorts(placed: list[_Placed], ref_id: int | None, new: tuple[Vec, Vec]) -> int:
    """Face-connected groups (cohortPacking) the units of `ref_id` form with one more at
    `new` (origin, dims): units sharing a face of positive area are in one group."""
    cuboids = [(p.origin, p.dims) for p in placed if p.ref_id == ref_id] + [new]
    group = list(range(len(cuboids)))

    def root(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    for i, j in itertools.combinations(range(len(cuboids)), 2):
        if _share_a_face(cuboids[i], cuboids[j]):
            group[root(i)] = root(j)
    return len({root(i) for i in range(len(cuboids))})


def _share_a_face(a: tuple[Vec, Vec], b: tuple[Vec, Vec]) -> bool:
    """Whether cuboids `a` and `b` touch along one axis with an overlap of positive area."""
    (ao, ad), (bo, bd) = a, b
    for axis in range(3):
        touch = (
            abs(ao[axis] + ad[axis] - bo[axis]) <= _EPS
            or abs(bo[axis] + bd[axis] - ao[axis]) <= _EPS
        )
        if touch and all(
            min(ao[x] + ad[x], bo[x] + bd[x]) - max(ao[x], bo[x]) > _EPS
            for x in range(3)
            if x != axis
        ):
            return True
    return False


def _within_reserve_and_properties(box: Box, s: ItemSet, volume: float) -> bool:
    """The unit leaves the box's reservedSpace free and keeps every propertyConstraints
    sum within its max."""
    room = (box.volume_max or 0.0) - (box.volume_reserved or 0.0) - (box.volume_net or 0.0)
    if (box.volume_reserved or 0.0) > 0 and volume > room + _EPS:
        return False
    for constraint in box.property_constraints or []:
        amount = (s.properties or {}).get(constraint.key)
        if not isinstance(amount, int | float) or isinstance(amount, bool) or amount <= 0:
            continue
        limit = constraint.max
        if limit is not None and (constraint.value or 0.0) + amount > limit + _EPS:
            return False
    return True


def _next_packed_index(boxes: list[Box]) -> int:
    """One past the highest packedIndex in `boxes`: filled units come after the units
    packed before them, so `boxTypeChoiceLookback` order holds."""
    found = [e.item.packed_index for b in boxes for e in b.items if e.item.packed_index is not None]
    return max(found, default=-1) + 1


def _add(box: Box, fill: _Fill, origin: Vec, dims: Vec, packed_index: int) -> None:
    """Add unit `fill.placed` to `box` and bring the box's figures up to date."""
    s = fill.item_set
    before = box.price or 0
    item = Item.model_construct(
        ref_id=s.ref_id,
        name=s.name,
        color=s.color,
        weight=s.weight,
        sequence=s.sequence,
        virtual=s.virtual,
        properties=s.properties,
        unique_id=f"{s.ref_id}-{fill.first_unit + fill.placed}",
        quantity=1,
        dimensions=Dimensions.model_construct(x=dims[0], y=dims[1], z=dims[2]),
        origin=Point.model_construct(x=origin[0], y=origin[1], z=origin[2]),
        center_of_mass=Point.model_construct(
            x=origin[0] + dims[0] / 2, y=origin[1] + dims[1] / 2, z=origin[2] + dims[2] / 2
        ),
        packed_index=packed_index,
        message="bounded-fill: shaped to the free space at its placement",
    )
    box.items = [*box.items, ItemEntry.model_construct(item=item)]
    volume = dims[0] * dims[1] * dims[2]
    box.volume_net = (box.volume_net or 0.0) + volume
    box.volume_used = box.volume_net + (box.volume_reserved or 0.0)
    volume_max = box.volume_max or 0.0
    box.volume_remaining = max(volume_max - box.volume_used, 0.0)
    box.volume_utilization = min(box.volume_used / volume_max, 1.0) if volume_max else 0.0
    for constraint in box.property_constraints or []:
        amount = (s.properties or {}).get(constraint.key)
        if isinstance(amount, int | float) and not isinstance(amount, bool):
            constraint.value = (constraint.value or 0.0) + amount
    box.center_of_mass = box_center_of_mass([e.item for e in box.items])
    box.center_of_mass_string = point_string(box.center_of_mass)
    box.weight_net = (box.weight_net or 0.0) + s.weight
    box.weight_used = (box.weight_used or 0.0) + s.weight
    weight_max = box.weight_max or 0.0
    if weight_max > 0:
        box.weight_remaining = max(weight_max - box.weight_used, 0.0)
        box.weight_utilization = min(box.weight_used / weight_max, 1.0)
    box.len_items = sum(e.item.quantity or 1 for e in box.items if not e.item.virtual)
    box.len_units = sum(1 for e in box.items if not e.item.virtual)
    box_type = box.box_type
    if box_type is not None and box_type.dimensions is not None:
        rating = lower_rating(box_type, "boxTypes", [])
        t = box_type.dimensions
        cost, dimensional, used = box_cost(box_type.price, t.x * t.y * t.z, rating, box.weight_used)
        box.price = whole_units(cost)
        box.dimensional_weight = dimensional
        if box.rate_table is not None:
            box.dimensional_weight_used = used
    item.delta_cost = (box.price or 0) - before


def _merge(
    req: PackRequest,
    responses: list[PackResponse],
    boxes: list[Box],
    fills: dict[int, _Fill],
    unplaced: list[Item],
    warnings: list[str],
    started: float,
) -> PackResponse:
    leftovers = [*(i for r in responses for i in r.leftovers), *unplaced]
    index = 1
    for box_id, box in enumerate(boxes):
        box.id = box_id
        for entry in box.items:
            entry.item.index = entry.item.global_id = index
            index += 1
    first = responses[0] if responses else PackResponse()
    merged = PackResponse.model_construct(
        boxes=[BoxEntry.model_construct(box=b) for b in boxes],
        built=first.built,
        started_at=first.started_at,
        version=first.version,
        len_items=sum(r.len_items for r in responses)
        + sum(f.placed for f in fills.values() if not f.item_set.virtual)
        + sum(1 for u in unplaced if not u.virtual),
        **response_totals(boxes, leftovers),
        pack_time=sum(r.pack_time for r in responses),
        render_time=0.0,
        leftovers=leftovers,
        item_sort_used=first.item_sort_used,
        item_sort_reverse_used=first.item_sort_reverse_used,
        box_type_choice_goal_used=req.box_type_choice_goal,
        order_id=req.order_id,
        request_id=req.request_id,
        warnings=list(dict.fromkeys([*warnings, *(w for r in responses for w in r.warnings)])),
        properties=req.properties,
    )
    render_pictures(req, merged)
    merged.total_time = time.perf_counter() - started
    return merged
