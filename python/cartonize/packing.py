"""`pack()`: validate a pack request, lower it to the engine's input, run the
Rust engine with the GIL released, and build the public response."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cartonize import _core
from cartonize.errors import InvalidRequest
from cartonize.generators import GeneratedBoxTypes, generate_box_types, trim_packed_box
from cartonize.items import (
    placed_center_of_mass,
    sequence_distance_pairs,
    sequence_order,
    sequence_sort_warnings,
    unit_ladder,
)
from cartonize.models import (
    Box,
    BoxEntry,
    BoxType,
    Dimensions,
    DimensionSet,
    Item,
    ItemEntry,
    ItemSet,
    Outer,
    PackRequest,
    PackResponse,
    Point,
    response_totals,
    validate_request,
)
from cartonize.random_items import random_item_sets
from cartonize.rates import lower_rating, outer_dimensions
from cartonize.render import render_pictures
from cartonize.rules import apply_rules
from cartonize.sequences import has_sequences, pack_in_stages

__all__ = ["max_timeout", "pack"]

#: Compute cap for one request in seconds; real-time callers expect 30 s.
DEFAULT_MAX_TIMEOUT = 30.0

#: Request fields whose effect on packing later work adds; a request that sets
#: one still packs, and its `warnings` say the field had no effect.
_NOT_YET_HONOURED: dict[str, object] = {
    "layFlat": False,
    "interlock": False,
    "corners": True,
    "boxes": [],
    "usableSpace": 0.85,
    "reservedSpace": 0.0,
    "boxTypeSets": [],
    "packOrigin": None,
    "cohortPacking": False,
    "placementStyle": "default",
    "itemInitialOrientationBestForBox": False,
    "boxTypeChoiceStyle": "actual",
    "boxTypeChoiceLookahead": 0,
    "boxTypeChoiceLookback": -1,
}


def max_timeout() -> float:
    """The service's cap on `timeout`, from `CARTONIZE_MAX_TIMEOUT` (seconds)."""
    raw = os.environ.get("CARTONIZE_MAX_TIMEOUT")
    try:
        return float(raw) if raw else DEFAULT_MAX_TIMEOUT
    except ValueError:
        return DEFAULT_MAX_TIMEOUT


@dataclass(frozen=True)
class _Kind:
    """An item set as the engine sees it, with the refId it answers to and the
    number of its first unit (item sets sharing a refId number their units on); with
    `dimensionSets`, one rung of the item set's unit ladder (`dimension_set`)."""

    ref_id: int
    item_set: ItemSet
    first_unit: int = 0
    dimension_set: DimensionSet | None = None

    @property
    def eaches(self) -> int:
        """Eaches one unit of this kind holds."""
        return (self.dimension_set.quantity_divisor or 1) if self.dimension_set else 1

    def unique_id(self, unit: int) -> str:
        """`<refId>-<n>`, unique across item sets sharing the refId."""
        return f"{self.ref_id}-{self.first_unit + unit}"


def pack(request: PackRequest | Mapping[str, Any] | None = None) -> PackResponse:
    """Pack `request` (a model or its wire dict) and return the response model.

    Raises `InvalidRequest` (422) naming the fields when the request is invalid."""
    started = time.perf_counter()
    started_at = _now_iso()
    req = request if isinstance(request, PackRequest) else validate_request(request or {})
    if has_sequences(req):
        return pack_in_stages(req, pack)
    warnings = req.warnings_for_request() + _unhonoured_warnings(req)
    if req.allowable_overhang < 0 and req.allowable_overhang != -1:
        warnings.append(
            f"allowableOverhang {req.allowable_overhang:g} is negative: no support check, as for -1"
        )

    item_sets = req.item_sets
    if req.random:
        if item_sets:
            warnings.append("random is true: the request's itemSets were replaced by random items")
        item_sets = random_item_sets(req)
    kinds = _kinds(item_sets)
    warnings += sequence_sort_warnings(req, [k.item_set for k in kinds])
    if req.sequence_sort:
        kinds = [kinds[p] for p in sequence_order([k.item_set for k in kinds])]
    generated = generate_box_types(
        req.box_type_generators,
        [k.item_set for k in kinds],
        req.box_type_defaults,
        req.generated_box_types_max,
    )
    warnings += generated.warnings
    requested_box_types = req.resolved_box_types()
    effects = apply_rules(
        req.rules,
        [(k.ref_id, k.item_set) for k in kinds],
        requested_box_types + generated.box_types,
        prefer_original=req.item_initial_orientation_preferred,
        box_type_defaults=req.box_type_defaults,
    )
    warnings += effects.warnings
    kinds = [
        _Kind(k.ref_id, item_set, k.first_unit, k.dimension_set)
        for k, item_set in zip(kinds, effects.item_sets, strict=True)
    ]
    box_types = effects.box_types
    distance_pairs, distance_warnings = sequence_distance_pairs(
        [k.item_set.sequence for k in kinds], req.max_sequence_distance
    )
    warnings += distance_warnings
    resolved_tables: dict[int, Any] = {}
    cap = max_timeout()
    timeout = min(req.timeout or cap, cap)
    if req.timeout is not None and req.timeout > cap:
        warnings.append(f"timeout {req.timeout:g} s is above the service maximum; using {cap:g} s")
    engine_input = {
        "items": [
            {
                "dimensions": _xyz(k.item_set.dimensions),
                "weight": k.item_set.weight,
                "quantity": k.item_set.quantity,
                "freeAxes": effects.free_axes.get(position),
            }
            for position, k in enumerate(kinds)
        ],
        "boxTypes": [
            {
                "dimensions": _xyz(b.dimensions),
                "weightMax": b.weight_max or 0.0,
                "weightTare": b.weight_tare or 0.0,
                "price": b.price,
                "rating": lower_rating(
                    b, _box_type_path(i, len(req.box_types)), warnings, resolved_tables
                ),
            }
            for i, b in enumerate(box_types)
        ],
        "exclusions": {
            "kindPairs": sorted(effects.kind_pairs | distance_pairs),
            "kindBoxTypes": sorted(
                effects.kind_box_types
                | _as_is_generated_exclusions(generated, len(requested_box_types), len(kinds))
            ),
        },
        "fragile": [limit.engine(p) for p, limit in sorted(effects.fragile.items())],
        "boxTypeSubsets": _without_generated(
            len(box_types), len(requested_box_types), len(generated.box_types)
        ),
        "options": {
            # The kinds are in sequence order already; the engine keeps it.
            "itemSort": "sequence" if req.sequence_sort else req.item_sort,
            "itemSortReverse": req.item_sort_reverse,
            "itemSortDualDirection": req.item_sort_dual_direction,
            "goal": req.box_type_choice_goal,
            "valueTiebreaker": req.value_tiebreaker,
            "coordOrder": req.coord_order or [0, 1, 2],
            "orientationPreferred": req.item_initial_orientation_preferred,
            "timeout": timeout,
            # The engine spends half of an explicit timeout improving the
            # packing; the service's own cap must not cost every request that.
            "improve": req.timeout is not None,
            "allowableOverhang": req.allowable_overhang if req.allowable_overhang >= 0 else None,
            "limits": _limits(req, kinds, box_types),
        },
    }
    try:
        out = json.loads(_core.pack_json(json.dumps(engine_input)))
    except _core.InvalidInput as exc:
        raise InvalidRequest("invalid pack request", str(exc)) from exc
    warnings += out["warnings"]

    weights = [k.item_set.weight for k in kinds]
    boxes = [
        _box(i, *_trimmed(packed, box_types, generated, len(requested_box_types), weights), kinds)
        for i, packed in enumerate(out["boxes"])
    ]
    _number_items(boxes)
    leftovers = [_leftover(kinds[left["item"]], left) for left in out["leftovers"]]
    response = PackResponse.model_construct(
        boxes=[BoxEntry.model_construct(box=b) for b in boxes],
        built=_BUILT,
        started_at=started_at,
        version=_core.__version__,
        len_items=sum(k.item_set.quantity * k.eaches for k in kinds if not k.item_set.virtual),
        **response_totals(boxes, leftovers),
        pack_time=out["packTime"],
        render_time=0.0,
        leftovers=leftovers,
        item_sort_used=out["itemSortUsed"],
        item_sort_reverse_used=out["itemSortReverseUsed"],
        box_type_choice_goal_used=req.box_type_choice_goal,
        order_id=req.order_id,
        request_id=req.request_id,
        warnings=warnings,
        properties=req.properties,
    )
    render_pictures(req, response, box_types)
    response.total_time = time.perf_counter() - started
    return response


def _box_type_path(index: int, requested: int) -> str:
    """Where box type `index` comes from in the request, for error messages."""
    return f"boxTypes[{index}]" if index < requested else "boxTypeGenerators/boxTypeDefaults"


def _trimmed(
    packed: dict[str, Any],
    box_types: list[BoxType],
    generated: GeneratedBoxTypes,
    first_generated: int,
    weights: list[float],
) -> tuple[dict[str, Any], BoxType]:
    """The engine box and its box type, trimmed to the contents when a cartesian
    generator made the type (docs/generators.md)."""
    box_type = box_types[packed["boxType"]]
    trim = generated.trim.get(packed["boxType"] - first_generated)
    if trim is None:
        return packed, box_type
    return trim_packed_box(trim, packed, box_type, weights)


def _without_generated(total: int, requested: int, generated: int) -> list[list[int]]:
    """The engine also packs with the box types that are not generated (the request's
    own and pack-as-is rule cartons), so generated types never make an answer dearer."""
    if generated == 0 or requested == 0:
        return []
    return [[b for b in range(total) if not requested <= b < requested + generated]]


def _as_is_generated_exclusions(
    generated: GeneratedBoxTypes, first: int, kinds: int
) -> set[tuple[int, int]]:
    """(item set, box type) pairs keeping every other item set out of a pack-as-is
    generator's carton: it is that item's own packaging."""
    return {
        (q, first + i)
        for i, owner in generated.as_is_owner.items()
        for q in range(kinds)
        if q != owner
    }


def _kinds(item_sets: Iterable[ItemSet]) -> list[_Kind]:
    """Item sets with quantity > 0, each with its refId, one kind per unit of measure
    they pack as; -1 or null get ids no item set of the request uses."""
    item_sets = list(item_sets)
    taken = {s.ref_id for s in item_sets if s.ref_id is not None and s.ref_id != -1}
    next_id = max(taken, default=-1) + 1
    kinds: list[_Kind] = []
    units_so_far: dict[int, int] = {}
    for position, s in enumerate(item_sets):
        ref_id = s.ref_id
        if ref_id is None or ref_id == -1:
            ref_id = next_id
            next_id += 1
        for unit in unit_ladder(s, f"itemSets[{position}]"):
            first = units_so_far.get(ref_id, 0)
            kinds.append(_Kind(ref_id, unit.item_set, first, unit.dimension_set))
            units_so_far[ref_id] = first + unit.item_set.quantity
    return kinds


#: Largest count the engine takes (u32).
_COUNT_MAX = 2**32 - 1


def _limit(value: int | None) -> int | None:
    """A count limit for the engine: 0, negative and null mean none; above the engine's
    counter range it can never bind, so it is none too."""
    return value if value is not None and 0 < value <= _COUNT_MAX else None


def _limits(req: PackRequest, kinds: list[_Kind], box_types: list[BoxType]) -> dict[str, Any]:
    """The engine's count limits: per box type (its own value wins over the request's) and
    across boxes, with each kind's item set (refId) and sequence group."""
    ref_ids = {ref_id: n for n, ref_id in enumerate(dict.fromkeys(k.ref_id for k in kinds))}
    sequences = {s: n for n, s in enumerate(dict.fromkeys(k.item_set.sequence for k in kinds))}

    def inline(box_type: BoxType) -> list[int]:
        axes = box_type.items_inline_max
        if axes is None:
            axes = req.items_inline_max
        return [a if 0 < a <= _COUNT_MAX else 0 for a in axes] if axes is not None else [0, 0, 0]

    def own_or_request(own: int | None, request: int) -> int | None:
        return _limit(own if own is not None else request)

    return {
        "boxesMax": _limit(req.boxes_max),
        "boxesPerItemSetMax": _limit(req.boxes_per_item_set_max),
        "boxesPerSequenceMax": _limit(req.boxes_per_sequence_max),
        "itemSets": [ref_ids[k.ref_id] for k in kinds],
        "sequences": [
            sequences[k.item_set.sequence] if k.item_set.sequence else None for k in kinds
        ],
        "boxCaps": [
            {
                "itemsMax": own_or_request(b.items_per_box_max, req.items_per_box_max),
                "itemSetsMax": own_or_request(b.item_sets_per_box_max, req.item_sets_per_box_max),
                "inlineMax": inline(b),
            }
            for b in box_types
        ],
    }


def _box(index: int, packed: dict[str, Any], box_type: BoxType, kinds: list[_Kind]) -> Box:
    """A response box from the engine's placements, with its volume and weight figures."""
    items: list[Item] = []
    cost_so_far = 0.0
    for placement in packed["items"]:
        kind = kinds[placement["item"]]
        # Rounded running totals keep the integer deltas summing to the box price.
        before = round(cost_so_far)
        cost_so_far += placement["deltaCost"]
        items.append(_item(kind, placement, round(cost_so_far) - before))
    dims = box_type.dimensions
    volume_max = dims.x * dims.y * dims.z
    volume_net = sum(_volume(i.dimensions) for i in items)
    weight_net = sum(i.weight for i in items)
    tare = box_type.weight_tare or 0.0
    weight_max = box_type.weight_max or 0.0
    weight_used = tare + weight_net
    real = [i for i in items if not i.virtual]
    center = _center_of_mass(items)
    overridden = {"dimensions", "price", "weight_tare", "weight_max", "outer", "rate_table"}
    fields = {
        name: getattr(box_type, name)
        for name in box_type.model_fields_set - overridden
        if getattr(box_type, name) is not None
    }
    return Box.model_construct(
        **fields,
        id=index,
        dimensions=box_type.dimensions,
        weight_max=weight_max,
        weight_tare=tare,
        outer=_outer(box_type),
        rate_table=box_type.rate_table,
        price=round(packed["cost"]),
        dimensional_weight=packed.get("dimensionalWeight"),
        dimensional_weight_used=(
            packed.get("dimensionalWeightUsed") if box_type.rate_table is not None else None
        ),
        box_type=box_type,
        items=[ItemEntry.model_construct(item=i) for i in items],
        volume_max=volume_max,
        volume_used=volume_net,
        volume_net=volume_net,
        volume_remaining=max(volume_max - volume_net, 0.0),
        volume_reserved=0.0,
        volume_utilization=min(volume_net / volume_max, 1.0),
        weight_used=weight_used,
        weight_net=weight_net,
        weight_remaining=max(weight_max - weight_used, 0.0) if weight_max > 0 else None,
        weight_utilization=min(weight_used / weight_max, 1.0) if weight_max > 0 else None,
        len_items=sum(i.quantity or 1 for i in real),
        len_units=len(real),
        center_of_mass=center,
        center_of_mass_string=_point_string(center),
    )


def _outer(box_type: BoxType) -> Outer | None:
    """The box type's `outer`, with the final outer dimensions when a change was given."""
    outer = box_type.outer
    if outer is None or outer.dimensions is not None:
        return outer
    return Outer.model_construct(
        dimensions=outer_dimensions(box_type), dimension_change=outer.dimension_change
    )


def _unit(kind: _Kind, unit: int, **placed: Any) -> Item:
    """One unit of an item set: the set's echoed fields plus `placed` (where and how)."""
    s = kind.item_set
    return Item.model_construct(
        ref_id=kind.ref_id,
        name=s.name,
        color=s.color,
        weight=s.weight,
        sequence=s.sequence,
        virtual=s.virtual,
        properties=s.properties,
        unique_id=kind.unique_id(unit),
        quantity=kind.eaches,
        unit_of_measure=kind.dimension_set.unit_of_measure if kind.dimension_set else None,
        dimension_set=kind.dimension_set,
        **placed,
    )


def _item(kind: _Kind, placement: dict[str, Any], delta_cost: int) -> Item:
    """A packed unit, with its position, placed dimensions and cost."""
    ox, oy, oz = placement["origin"]
    dx, dy, dz = placement["dimensions"]
    origin = Point.model_construct(x=ox, y=oy, z=oz)
    dimensions = Dimensions.model_construct(x=dx, y=dy, z=dz)
    s = kind.item_set
    return _unit(
        kind,
        placement["unit"],
        dimensions=dimensions,
        origin=origin,
        center_of_mass=placed_center_of_mass(s.dimensions, s.center_of_mass, origin, dimensions),
        packed_index=placement["packedIndex"],
        delta_cost=delta_cost,
        message=_support_message(placement.get("support")),
    )


def _support_message(support: dict[str, Any] | None) -> str | None:
    """What a unit rests on, reported when the request checks support (allowableOverhang)."""
    if support is None:
        return None
    if support["onFloor"]:
        return "support: 100% of base on the box floor"
    count = support["items"]
    share = f"{support['share'] * 100:.4g}%"
    return f"support: {share} of base on {count} item{'s' if count != 1 else ''}"


def _leftover(kind: _Kind, left: dict[str, Any]) -> Item:
    """An unpacked unit, with the reason in `message`."""
    return _unit(kind, left["unit"], dimensions=kind.item_set.dimensions, message=left["reason"])


def _number_items(boxes: list[Box]) -> None:
    """Gives every packed item a response-wide `index`; 0 is reserved for box outlines."""
    index = 1
    for box in boxes:
        for entry in box.items:
            entry.item.index = index
            entry.item.global_id = index
            index += 1


def _center_of_mass(items: list[Item]) -> Point:
    """Weight-weighted centre of the items (volume-weighted when all weigh nothing)."""
    weights = [i.weight for i in items]
    if sum(weights) <= 0:
        weights = [_volume(i.dimensions) for i in items]
    total = sum(weights)
    if total <= 0:
        return Point.model_construct(x=0.0, y=0.0, z=0.0)
    centers = [i.center_of_mass for i in items if i.center_of_mass is not None]
    return Point.model_construct(
        x=sum(w * c.x for w, c in zip(weights, centers, strict=True)) / total,
        y=sum(w * c.y for w, c in zip(weights, centers, strict=True)) / total,
        z=sum(w * c.z for w, c in zip(weights, centers, strict=True)) / total,
    )


#: Python attribute of each wire name in `_NOT_YET_HONOURED`.
_ATTRIBUTE_OF = {
    field.alias or name: name
    for name, field in PackRequest.model_fields.items()
    if (field.alias or name) in _NOT_YET_HONOURED
}


def _unhonoured_warnings(req: PackRequest) -> list[str]:
    """Names the fields this request set that packing does not use yet."""
    warnings = []
    for wire, default in _NOT_YET_HONOURED.items():
        name = _ATTRIBUTE_OF[wire]
        value = getattr(req, name)
        if name in req.model_fields_set and value is not None and value != default:
            warnings.append(f"'{wire}' is accepted but has no effect on packing yet")
    return warnings


def _xyz(p: Point) -> list[float]:
    return [p.x, p.y, p.z]


def _volume(p: Point) -> float:
    return p.x * p.y * p.z


def _point_string(p: Point) -> str:
    return f"{p.x:g},{p.y:g},{p.z:g}"


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


#: When the engine was built (ISO 8601), reported as `built`.
_BUILT = datetime.fromtimestamp(int(_core.BUILT), UTC).isoformat()
