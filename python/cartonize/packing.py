"""`pack()`: validate a pack request, lower it to the engine's input, run the
Rust engine with the GIL released, and build the public response."""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic_core import PydanticUndefined

from cartonize import _core
from cartonize.bounded_fill import has_bounded_fill, pack_filled
from cartonize.errors import InvalidRequest
from cartonize.generators import GeneratedBoxTypes, generate_box_types, trim_packed_box
from cartonize.grouping import has_group_pack, pack_grouped
from cartonize.items import (
    allowed_turns,
    placed_center_of_mass,
    point_string,
    property_amount,
    scaled_center_of_mass,
    sequence_order,
    sequence_sort_warnings,
    sequence_windows,
    unit_ladder,
    weighted_center_of_mass,
)
from cartonize.models import (
    WHOLE_MODEL_STEPS,
    XYZ,
    Box,
    BoxEntry,
    BoxProperties,
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
    PropertyConstraint,
    RateTable,
    assemble,
    response_totals,
    validate_request,
)
from cartonize.nesting import add_nested_relations
from cartonize.prepacked import Prepacked, read_prepacked
from cartonize.random_items import random_item_sets
from cartonize.rates import RateTableSources, lower_rating, outer_dimensions, whole_units
from cartonize.render import render_pictures
from cartonize.rules import RuleEffects, apply_rules, check_rule_options, with_properties_set
from cartonize.sequences import has_sequences, pack_in_stages, stage_targets_box
from cartonize.subspaces import has_internal_space, pack_with_subspaces

__all__ = ["max_timeout", "pack"]

#: Compute cap for one request in seconds; real-time callers expect 30 s.
DEFAULT_MAX_TIMEOUT = 30.0

#: `json.dumps` without its check for circular references: pack() builds the engine's
#: input as a tree (the check cost a sixth of the encoding).
_ENGINE_JSON = json.JSONEncoder(check_circular=False)


def _refuse_prepacked_with_parts(req: PackRequest) -> None:
    """Rules that pack a request in several parts would give each part the pre-packed
    boxes again; until the parts share them, the combination is a 422."""
    for operation, test in [
        ("pack-sequence", has_sequences),
        ("internal-space", has_internal_space),
        ("bounded-fill", has_bounded_fill),
        ("group-pack", has_group_pack),
    ]:
        if test(req):
            raise InvalidRequest(
                "invalid request",
                f"boxes: pre-packed boxes cannot be combined with {operation} rules; pack "
                "without the pre-packed boxes or without the rule",
            )


def _with_random_items(req: PackRequest) -> PackRequest:
    """`req` with its item sets replaced by the random items it asks for (a warning says
    so when it had item sets of its own)."""
    drawn = req.model_copy(update={"item_sets": random_item_sets(req), "random": False})
    if not req.item_sets:
        return drawn
    return drawn.with_warnings(
        "random is true: the request's itemSets were replaced by random items"
    )


def _with_properties_set(req: PackRequest) -> PackRequest:
    """`req` with its set-properties rules applied to its item sets (selected by the
    refIds pack() assigns, pre-packed items counted), before anything else."""
    ref_ids = _ref_ids([*req.item_sets, *read_prepacked(req).item_sets])
    item_sets, warnings = with_properties_set(
        req.rules, req.item_sets, ref_ids[: len(req.item_sets)]
    )
    return req.model_copy(update={"item_sets": item_sets}).with_warnings(*warnings)


def max_timeout() -> float:
    """The service's cap on `timeout`, from `CARTONIZE_MAX_TIMEOUT` (seconds)."""
    raw = os.environ.get("CARTONIZE_MAX_TIMEOUT")
    try:
        return float(raw) if raw else DEFAULT_MAX_TIMEOUT
    except ValueError:
        return DEFAULT_MAX_TIMEOUT


# Not frozen: a frozen dataclass sets each field through object.__setattr__, and pack()
# makes a kind per item set (several times the cost of a plain one). Never changed. With
# slots, no instance dict: one container less alive per kind (fewer garbage collections).
@dataclass(eq=False, slots=True)
class _Kind:
    """An item set as the engine sees it, with the refId it answers to and the
    number of its first unit (item sets sharing a refId number their units on); with
    `dimensionSets`, one rung of the item set's unit ladder (`dimension_set`)."""

    ref_id: int
    item_set: ItemSet
    first_unit: int = 0
    dimension_set: DimensionSet | None = None
    #: Further dimensions (x, y, z as given) a unit may take (alternate-dimensions).
    alternates: tuple[tuple[float, float, float], ...] = ()
    # Cached by hand, not with functools.cached_property: that takes a lock on each first
    # read (Python 3.11), and most kinds of a large order are read once (one unit each).
    _unit_fields: dict[str, Any] | None = field(default=None, init=False, repr=False)
    _shapes: tuple[tuple[float, float, float], ...] | None = field(
        default=None, init=False, repr=False
    )

    @property
    def eaches(self) -> int:
        """Eaches one unit of this kind holds."""
        return (self.dimension_set.quantity_divisor or 1) if self.dimension_set else 1

    def unique_id(self, unit: int) -> str:
        """`<refId>-<n>`, unique across item sets sharing the refId."""
        return f"{self.ref_id}-{self.first_unit + unit}"

    def unit_fields(self) -> dict[str, Any]:
        """A new dict of a packed unit's fields before its own: `Item`'s defaults, then the
        item set's fields that every unit of this kind repeats (`echo`), in the order
        `assemble` puts them. Kept for kinds of several units, which copy it (a copy of a
        whole dict costs less than merging the two); most kinds of MPV-like requests have
        one unit."""
        fields = self._unit_fields
        if fields is not None:
            return fields.copy()
        fields = self._echo_into(_ITEM_DEFAULTS.copy())
        if self.item_set.quantity > 1:
            self._unit_fields = fields
            return fields.copy()
        return fields

    @property
    def uneven_shapes(self) -> tuple[tuple[float, float, float], ...]:
        """The kind's shapes as given (its own dimensions, then its alternates) when some
        side is finer than the engine's 1/10,000 of the unit, else none: the engine then
        reports the side rounded up (3.93701 as 3.9371), and `_exact_dimensions` puts the
        given side back."""
        if self._shapes is None:
            d = self.item_set.dimensions
            x, y, z = d.x, d.y, d.z
            # Unrolled for the kind's own shape (one per packed unit of MPV-like requests).
            fine = (
                x != round(x * _FIXED) / _FIXED
                or y != round(y * _FIXED) / _FIXED
                or z != round(z * _FIXED) / _FIXED
                or bool(
                    self.alternates
                    and any(
                        v != round(v * _FIXED) / _FIXED for shape in self.alternates for v in shape
                    )
                )
            )
            self._shapes = ((x, y, z), *self.alternates) if fine else ()
        return self._shapes

    @property
    def echo(self) -> dict[str, Any]:
        """The item set's fields that every unit of this kind repeats in the response."""
        return self._echo_into({})

    def _echo_into(self, fields: dict[str, Any]) -> dict[str, Any]:
        s = self.item_set
        fields["ref_id"] = self.ref_id
        fields["name"] = s.name
        fields["color"] = s.color
        fields["weight"] = s.weight
        fields["sequence"] = s.sequence
        fields["virtual"] = s.virtual
        fields["properties"] = s.properties
        fields["quantity"] = self.eaches
        dimension_set = self.dimension_set
        fields["unit_of_measure"] = dimension_set.unit_of_measure if dimension_set else None
        fields["dimension_set"] = dimension_set
        return fields


def pack(request: PackRequest | Mapping[str, Any] | None = None) -> PackResponse:
    """Pack `request` (a model or its wire dict) and return the response model.

    Raises `InvalidRequest` (422) naming the fields when the request is invalid."""
    started = time.perf_counter()
    started_at = _now_iso()
    req = request if isinstance(request, PackRequest) else validate_request(request or {})
    check_rule_options(req.rules)
    if req.random:
        # Drawn once, before the request is packed in parts, so that every part (stage,
        # groups, fill, subspaces) packs the same random items and every rule sees them.
        req = _with_random_items(req)
    if any(r.operation == "set-properties" for r in req.rules):
        req = _with_properties_set(req)
    if req.boxes:
        _refuse_prepacked_with_parts(req)
    if has_sequences(req):
        return pack_in_stages(req, pack)
    # Each of these packs the request in parts, each part with pack() (so they nest).
    if has_internal_space(req):
        return pack_with_subspaces(req, pack)
    if has_bounded_fill(req):
        return pack_filled(req, pack)
    if has_group_pack(req):
        return pack_grouped(req, pack)
    warnings = req.warnings_for_request() + _choice_warnings(req) + _placement_warnings(req)
    if req.allowable_overhang < 0 and req.allowable_overhang != -1:
        warnings.append(
            f"allowableOverhang {req.allowable_overhang:g} is negative: no support check, as for -1"
        )

    item_sets = req.item_sets
    prepacked = read_prepacked(req)
    # Pre-packed items are item sets too (their refIds and unit numbers must not clash
    # with the request's), after the request's own; only the request's are packed anew.
    kinds, prepacked_kinds = _kinds([*item_sets, *prepacked.item_sets], len(item_sets))
    warnings += sequence_sort_warnings(req, [k.item_set for k in kinds])
    # in_request[p]: where kind p stood in the request before sequenceSort reordered them.
    in_request = list(range(len(kinds)))
    if req.sequence_sort:
        in_request = sequence_order([k.item_set for k in kinds])
        kinds = [kinds[p] for p in in_request]
    generated = generate_box_types(
        req.box_type_generators,
        [k.item_set for k in kinds],
        req.box_type_defaults,
        req.generated_box_types_max,
    )
    warnings += generated.warnings
    stage = req.stage_rule
    if stage is not None:
        generated = generated.only(lambda b: stage_targets_box(stage, b))
    requested_box_types = req.resolved_box_types()
    # Pre-packed items take part in exclusions only: new units keep out of their boxes.
    effects = apply_rules(
        req.rules,
        [(k.ref_id, k.item_set) for k in [*kinds, *prepacked_kinds]],
        requested_box_types + generated.box_types,
        box_type_defaults=req.box_type_defaults,
        packed_anew=len(kinds),
        prepacked_boxes=prepacked.box_types,
        ladder_units={p for p, k in enumerate(kinds) if k.dimension_set is not None},
    )
    _resize_own_cartons(effects, generated, len(requested_box_types))
    # Units that carry others (reduced boxes, filled internal spaces) answer for them too.
    add_nested_relations(
        effects,
        req.rules,
        [k.ref_id for k in [*kinds, *prepacked_kinds]],
        requested_box_types + generated.box_types,
    )
    warnings += effects.warnings
    if req.lay_flat or req.interlock:
        warnings += _locked_upright(
            [(k.ref_id, s) for k, s in zip(kinds, effects.item_sets, strict=False)], effects
        )
    # Rules may change quantities (irregular: a unit becomes rolls): number units anew,
    # the request's own first, in request order whatever sequenceSort did (as
    # units.first_units counts them), and the pre-packed items after them.
    both = [*kinds, *prepacked_kinds]
    units_so_far: dict[int, int] = {}
    firsts: dict[int, int] = {}
    for p in [
        *sorted(range(len(kinds)), key=in_request.__getitem__),
        *range(len(kinds), len(both)),
    ]:
        firsts[p] = units_so_far.get(both[p].ref_id, 0)
        units_so_far[both[p].ref_id] = firsts[p] + effects.item_sets[p].quantity
    numbered: list[_Kind] = []
    for p, (k, item_set) in enumerate(zip(both, effects.item_sets, strict=True)):
        alternates = tuple(effects.alternates.get(p, ()))
        if item_set is k.item_set and firsts[p] == k.first_unit and not alternates:
            numbered.append(k)  # as the rules found it
        else:
            numbered.append(_Kind(k.ref_id, item_set, firsts[p], k.dimension_set, alternates))
    packed_anew = len(kinds)
    kinds = numbered
    box_types = effects.box_types
    keys = _property_keys([*box_types, *prepacked.box_types])
    windows, distance_warnings = sequence_windows(
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
                "quantity": k.item_set.quantity if position < packed_anew else 0,
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
                    b,
                    _box_type_path(i, len(req.box_types)),
                    warnings,
                    resolved_tables,
                    _rate_table_sources(req, i, generated),
                ),
            }
            for i, b in enumerate(box_types)
        ],
        "exclusions": {
            "kindPairs": sorted(effects.kind_pairs),
            "kindBoxTypes": sorted(
                effects.kind_box_types
                | _as_is_generated_exclusions(generated, len(requested_box_types), len(kinds))
                # The engine numbers pre-packed boxes after the box types.
                | {(k, len(box_types) + b) for k, b in effects.kind_prepacked_boxes}
            ),
            "sequenceWindows": windows,
        },
        "fragile": [limit.engine(p) for p, limit in sorted(effects.fragile.items())],
        "alternates": [
            {"kind": p, "dimensions": [list(d) for d in dims]}
            for p, dims in sorted(effects.alternates.items())
        ],
        "boxTypeSubsets": _without_generated(
            len(box_types), len(requested_box_types), len(generated.box_types)
        ),
        "boxes": _prepacked_input(req, prepacked, packed_anew, keys, warnings, resolved_tables),
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
            # The engine spends 80 % of an explicit timeout improving the
            # packing; the service's own cap must not cost every request that.
            "improve": req.timeout is not None,
            # The service's own cap stands in for the request's timeout: the engine's
            # timeout warning and error name the cap, not a field the caller never sent.
            "serviceLimit": cap if req.timeout is None or req.timeout > cap else None,
            "allowableOverhang": req.allowable_overhang if req.allowable_overhang >= 0 else None,
            "limits": _limits(req, kinds, box_types, keys),
            "boxTypeChoiceStyle": req.box_type_choice_style,
            "usableSpace": req.usable_space,
            # Counts past the engine's range cannot bind: they saturate (a lookback that
            # large is unlimited, as -1 is).
            "lookahead": min(req.box_type_choice_lookahead, _COUNT_MAX),
            "lookback": _lookback(req.box_type_choice_lookback),
            "cohortMax": min(req.cohort_max, _COUNT_MAX) if req.cohort_packing else None,
            **_placement_options(req),
        },
    }
    engine_json = _engine_json(engine_input)
    # Not kept alive while the response is built: every container alive brings Python's
    # next garbage collection nearer (the engine input holds a few per item set).
    del engine_input
    try:
        out = json.loads(_core.pack_json(engine_json))
    except _core.InvalidInput as exc:
        raise InvalidRequest("invalid pack request", str(exc)) from exc
    warnings += out["warnings"]

    weights = [k.item_set.weight for k in kinds]

    def box_and_type(packed: dict[str, Any]) -> tuple[dict[str, Any], BoxType]:
        if packed.get("prepacked") is not None:
            return packed, prepacked.box_types[packed["prepacked"]]
        if packed["boxType"] - len(requested_box_types) in generated.as_is_owner:
            return _as_given(packed, box_types[packed["boxType"]])
        return _trimmed(packed, box_types, generated, len(requested_box_types), weights, req)

    boxes: list[Box] = []
    # Every packed item has a response-wide `index`; 0 is reserved for box outlines.
    first_index = 1
    # Boxes of one type repeat the same fields of it (by the type's identity: trimmed
    # generated types are new objects).
    type_fields: dict[int, dict[str, Any]] = {}
    # Taken one by one, so that each engine box is dropped once its response box is built:
    # fewer containers alive at once, fewer garbage collections.
    engine_boxes = out.pop("boxes")[::-1]
    while engine_boxes:
        i = len(boxes)
        packed, box_type = box_and_type(engine_boxes.pop())
        fixed = _fixed_units(packed, prepacked, packed_anew)
        repeated = type_fields.get(id(box_type))
        if repeated is None:
            repeated = type_fields[id(box_type)] = _box_type_fields(box_type)
        box = _box(i, packed, box_type, kinds, req.reserved_space, fixed, first_index, repeated)
        boxes.append(box)
        first_index += len(box.items)
    leftovers = [_leftover(kinds[left["item"]], left) for left in out["leftovers"]]
    response = PackResponse.model_construct(
        boxes=[assemble(BoxEntry, {"box": b}, {"box"}) for b in boxes],
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
        # One warning per problem, however many box types share it (generated ones do).
        warnings=list(dict.fromkeys(warnings)),
        properties=req.properties,
    )
    render_pictures(req, response, box_types)
    response.total_time = time.perf_counter() - started
    return response


def _engine_json(engine_input: dict[str, Any]) -> str:
    """The engine input as JSON text. A lowered rate that several box types share (a
    catalogue priced by one carrier table: `lower_rating` gives each the same rate) is
    encoded once: a placeholder string stands in for it in each box type's rating, and
    the rate's text replaces the placeholder's. Writing the rate's 20 floats again for
    each box type was most of an e-commerce order's encoding (issue 3). The ratings are
    changed in place (the caller drops the input after). Should the text hold a
    placeholder anywhere else, the input is encoded as it is."""
    ratings = [
        rating
        for box_type in engine_input["boxTypes"]
        if (rating := box_type["rating"]) is not None and rating["rate"] is not None
    ]
    if len(ratings) < 2:
        return _ENGINE_JSON.encode(engine_input)
    originals = [rating["rate"] for rating in ratings]
    # id(rate) -> (rate, placeholder); the rates stay alive in `originals`.
    shared: dict[int, tuple[dict[str, Any], str]] = {}
    uses: dict[str, int] = {}
    for rating, rate in zip(ratings, originals, strict=True):
        known = shared.get(id(rate))
        if known is None:
            known = shared[id(rate)] = (rate, f"{_PLACEHOLDER} {len(shared)}")
        rating["rate"] = known[1]
        uses[known[1]] = uses.get(known[1], 0) + 1
    if len(shared) == len(ratings):  # no rate shared: nothing to save
        return _restored(engine_input, ratings, originals)
    text = _ENGINE_JSON.encode(engine_input)
    quoted = [
        (_ENGINE_JSON.encode(placeholder), _ENGINE_JSON.encode(rate), uses[placeholder])
        for rate, placeholder in shared.values()
    ]
    if all(
        text.count(placeholder) == count and _QUOTED_PLACEHOLDER not in fragment
        for placeholder, fragment, count in quoted
    ):
        for placeholder, fragment, _ in quoted:
            text = text.replace(placeholder, fragment)
        return text
    return _restored(engine_input, ratings, originals)


def _restored(
    engine_input: dict[str, Any], ratings: list[dict[str, Any]], rates: list[dict[str, Any]]
) -> str:
    """`_engine_json`'s answer written the plain way, each rating's rate put back."""
    for rating, rate in zip(ratings, rates, strict=True):
        rating["rate"] = rate
    return _ENGINE_JSON.encode(engine_input)


#: What `_engine_json` writes in place of a shared rate (a control character: no rating
#: field holds one), and the start of its JSON text.
_PLACEHOLDER = "\x00shared rate"
_QUOTED_PLACEHOLDER = _ENGINE_JSON.encode(_PLACEHOLDER)[:-1]


def _placement_options(req: PackRequest) -> dict[str, Any]:
    """Placement and orientation options for the engine (docs/decisions.md, "Placement
    styles and orientation options")."""
    return {
        "placementStyle": req.placement_style,
        "packOrigin": _xyz(req.pack_origin) if req.pack_origin is not None else None,
        "corners": req.corners,
        "layFlat": req.lay_flat or req.interlock,
        "interlock": req.interlock,
        "orientationSearchDepth": req.item_orientation_search_depth,
        "bestForBox": req.item_initial_orientation_best_for_box,
    }


def _placement_warnings(req: PackRequest) -> list[str]:
    """Placement and orientation options that the request combines so that one yields."""
    warnings = []
    if req.interlock and not req.lay_flat:
        warnings.append("interlock is true: items lie flat as with layFlat, which it implies")
    if req.pack_origin is not None and req.placement_style != "default":
        warnings.append(
            f"packOrigin replaces the reference point of placementStyle {req.placement_style}"
        )
    if (
        "item_orientation_search_depth" in req.model_fields_set
        and req.item_initial_orientation_preferred
    ):
        warnings.append(
            "itemOrientationSearchDepth has no effect while itemInitialOrientationPreferred is true"
        )
    return warnings


def _locked_upright(item_sets: list[tuple[int, ItemSet]], effects: RuleEffects) -> list[str]:
    """A warning for each item set whose orientation lock lets it lie on no largest face
    (smallest side up), in its own shape or an alternate one: the lock wins over layFlat."""
    warnings = []
    for p, rule in sorted(effects.locked_by.items()):
        if p >= len(item_sets) or p in effects.as_is:
            continue
        ref_id, item_set = item_sets[p]
        d = item_set.dimensions
        shapes = [(d.x, d.y, d.z), *effects.alternates.get(p, [])]
        turns = allowed_turns(effects.free_axes[p])
        if not any(sides[turn[0]] <= min(sides) for sides in shapes for turn in turns):
            warnings.append(
                f"layFlat has no effect on item refId {ref_id}: it may only turn as "
                f"rules[{rule}] says (lock-orientation), which wins"
            )
    return list(dict.fromkeys(warnings))


def _resize_own_cartons(effects: RuleEffects, generated: GeneratedBoxTypes, first: int) -> None:
    """A pack-as-is generator's carton of an item whose dimensions alternate-dimensions
    replaced (`replaceOriginal`) takes the new dimensions: they are the item's own now."""
    for i, owner in generated.as_is_owner.items():
        carton = effects.box_types[first + i]
        d = effects.item_sets[owner].dimensions
        if carton.dimensions != d:
            effects.box_types[first + i] = carton.model_copy(update={"dimensions": d})


def _as_given(packed: dict[str, Any], box_type: BoxType) -> tuple[dict[str, Any], BoxType]:
    """A pack-as-is generator's carton and the one unit it holds, as given: the carton is
    the item's own packaging, of its own dimensions, so the unit fills it. The engine may
    have put it there in an alternate shape (alternate-dimensions), which fits too; a unit
    shipping as is is not folded (docs/decisions.md)."""
    assert box_type.dimensions is not None
    d = box_type.dimensions
    items = [
        {**placement, "origin": [0.0, 0.0, 0.0], "dimensions": [d.x, d.y, d.z]}
        for placement in packed["items"]
    ]
    return {**packed, "items": items}, box_type


def _box_type_path(index: int, requested: int) -> str:
    """Where box type `index` comes from in the request, for error messages."""
    return f"boxTypes[{index}]" if index < requested else "boxTypeGenerators/boxTypeDefaults"


def _defaults_rate_table(req: PackRequest) -> tuple[str, RateTable | None]:
    defaults = req.box_type_defaults
    return ("boxTypeDefaults.rateTable", defaults.rate_table if defaults else None)


def _rate_table_sources(
    req: PackRequest, index: int, generated: GeneratedBoxTypes
) -> RateTableSources:
    """Where box type `index`'s rate table was given, nearest first: a field the box
    type inherits is named in the defaults that gave it."""
    requested = len(req.box_types)
    if index < requested:
        own = (f"boxTypes[{index}].rateTable", req.box_types[index].rate_table)
        return [own, _defaults_rate_table(req)]
    if index - requested < len(generated.generator):
        g = generated.generator[index - requested]
        mine = req.box_type_generators[g].box_type_defaults
        own = (
            f"boxTypeGenerators[{g}].boxTypeDefaults.rateTable",
            mine.rate_table if mine else None,
        )
        return [own, _defaults_rate_table(req)]
    return [_defaults_rate_table(req)]  # a pack-as-is rule's carton: the defaults price it


def _prepacked_rate_table_sources(req: PackRequest, index: int) -> RateTableSources:
    """Where pre-packed box `index`'s rate table was given, nearest first (prepacked.py:
    its boxType, then its own fields, then boxTypeDefaults)."""
    box = req.boxes[index]
    box_type = box.box_type.rate_table if box.box_type else None
    return [
        (f"boxes[{index}].boxType.rateTable", box_type),
        (f"boxes[{index}].rateTable", box.rate_table),
        _defaults_rate_table(req),
    ]


def _trimmed(
    packed: dict[str, Any],
    box_types: list[BoxType],
    generated: GeneratedBoxTypes,
    first_generated: int,
    weights: list[float],
    req: PackRequest,
) -> tuple[dict[str, Any], BoxType]:
    """The engine box and its box type, trimmed to the contents when a cartesian
    generator made the type (docs/generators.md)."""
    box_type = box_types[packed["boxType"]]
    trim = generated.trim.get(packed["boxType"] - first_generated)
    if trim is None:
        return packed, box_type
    return trim_packed_box(trim, packed, box_type, weights, _reserved_space(req, box_type))


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


def _kinds(item_sets: Sequence[ItemSet], own: int) -> tuple[list[_Kind], list[_Kind]]:
    """Item sets with quantity > 0, each with its refId, one kind per unit of measure
    they pack as; -1 or null get ids no item set of the request uses. The kinds of the
    first `own` item sets come first, those of the others (pre-packed) second."""
    own_kinds: list[_Kind] = []
    other_kinds: list[_Kind] = []
    units_so_far: dict[int, int] = {}
    for position, (s, ref_id) in enumerate(zip(item_sets, _ref_ids(item_sets), strict=True)):
        kinds = own_kinds if position < own else other_kinds
        if not s.dimension_sets and s.center_of_mass is None:
            # unit_ladder's answer without a ladder or a centre of mass to check: the item
            # set itself, or nothing for quantity 0 (most item sets; no path to write).
            if s.quantity > 0:
                first = units_so_far.get(ref_id, 0)
                kinds.append(_Kind(ref_id, s, first))
                units_so_far[ref_id] = first + s.quantity
            continue
        for unit in unit_ladder(s, f"itemSets[{position}]"):
            first = units_so_far.get(ref_id, 0)
            kinds.append(_Kind(ref_id, unit.item_set, first, unit.dimension_set))
            units_so_far[ref_id] = first + unit.item_set.quantity
    return own_kinds, other_kinds


def _ref_ids(item_sets: Sequence[ItemSet]) -> list[int]:
    """Each item set's refId; -1 or null get ids no item set of the request uses."""
    taken = {s.ref_id for s in item_sets if s.ref_id is not None and s.ref_id != -1}
    next_id = max(taken, default=-1) + 1
    out = []
    for s in item_sets:
        ref_id = s.ref_id
        if ref_id is None or ref_id == -1:
            ref_id, next_id = next_id, next_id + 1
        out.append(ref_id)
    return out


#: Largest count the engine takes (u32).
_COUNT_MAX = 2**32 - 1


def _limit(value: int | None) -> int | None:
    """A count limit for the engine: 0, negative and null mean none; above the engine's
    counter range it can never bind, so it is none too."""
    return value if value is not None and 0 < value <= _COUNT_MAX else None


def _lookback(value: int) -> int | None:
    """The engine's lookback window: negative is unlimited (None), 0 closes each box as
    soon as a unit does not fit; a window past the engine's counter range is unlimited."""
    return value if 0 <= value <= _COUNT_MAX else None


def _box_caps(req: PackRequest, box_type: BoxProperties) -> dict[str, Any]:
    """A box type's per-box count limits; its own value wins over the request's."""
    axes = box_type.items_inline_max
    if axes is None:
        axes = req.items_inline_max
    inline = [a if 0 < a <= _COUNT_MAX else 0 for a in axes] if axes is not None else [0, 0, 0]

    def own_or_request(own: int | None, request: int) -> int | None:
        return _limit(own if own is not None else request)

    return {
        "itemsMax": own_or_request(box_type.items_per_box_max, req.items_per_box_max),
        "itemSetsMax": own_or_request(box_type.item_sets_per_box_max, req.item_sets_per_box_max),
        "inlineMax": inline,
    }


def _reserved_space(req: PackRequest, box_type: BoxProperties) -> float:
    """The share of the box kept free: the box type's `reservedSpace`, else the request's."""
    own = box_type.reserved_space
    return own if own is not None else req.reserved_space


def _property_keys(box_types: Iterable[BoxProperties]) -> list[str]:
    """Every item property key some box type constrains, in order of first mention."""
    keys = (c.key for b in box_types for c in b.property_constraints or [])
    return list(dict.fromkeys(keys))


def _box_extra(req: PackRequest, box_type: BoxProperties, keys: list[str]) -> dict[str, Any]:
    """Reserved space and property caps of a box type for the engine, one cap per key: each
    constraint asks value + sum <= max, so the sum may reach the least max - value."""
    constraints = box_type.property_constraints or []

    def cap(key: str) -> dict[str, Any]:
        rooms = [
            c.max - (c.value or 0.0) for c in constraints if c.key == key and c.max is not None
        ]
        return {"initial": 0.0, "max": min(rooms) if rooms else None}

    return {
        "reservedSpace": _reserved_space(req, box_type),
        "properties": [cap(key) for key in keys] if constraints else [],
    }


def _limits(
    req: PackRequest, kinds: list[_Kind], box_types: list[BoxType], keys: list[str]
) -> dict[str, Any]:
    """The engine's count limits: per box type (its own value wins over the request's) and
    across boxes, with each kind's item set (refId) and sequence group; and per box type its
    reserved space and property caps, with each kind's property amounts.

    The engine reads a missing entry of these lists as one that limits nothing (its own
    item set, no sequence group, no caps: limits.rs), so a list of nothing else is sent
    empty: the same packing from less text to write and read (issue 3)."""
    ref_ids = {ref_id: n for n, ref_id in enumerate(dict.fromkeys(k.ref_id for k in kinds))}
    sequences = {s: n for n, s in enumerate(dict.fromkeys(k.item_set.sequence for k in kinds))}
    item_sets = [ref_ids[k.ref_id] for k in kinds]
    groups = [sequences[k.item_set.sequence] if k.item_set.sequence else None for k in kinds]
    caps = [_box_caps(req, b) for b in box_types]
    extras = [_box_extra(req, b, keys) for b in box_types]
    return {
        "boxesMax": _limit(req.boxes_max),
        "boxesPerItemSetMax": _limit(req.boxes_per_item_set_max),
        "boxesPerSequenceMax": _limit(req.boxes_per_sequence_max),
        # Each kind its own item set: what the engine assumes without the list.
        "itemSets": [] if len(ref_ids) == len(kinds) else item_sets,
        "sequences": groups if any(g is not None for g in groups) else [],
        "boxCaps": caps if any(c != _NO_CAPS for c in caps) else [],
        "boxExtras": extras if any(not _no_extra(e) for e in extras) else [],
        "amounts": (
            [[property_amount(k.item_set.properties, key) for key in keys] for k in kinds]
            if keys
            else []
        ),
    }


#: `_box_caps` of a box type without count limits (the engine's default BoxCaps).
_NO_CAPS = {"itemsMax": None, "itemSetsMax": None, "inlineMax": [0, 0, 0]}


def _no_extra(extra: dict[str, Any]) -> bool:
    """Whether `_box_extra` gave the engine's default BoxExtra: no reserved space (+0.0,
    not -0.0, to send the same number) and no property caps."""
    reserved = extra["reservedSpace"]
    return not extra["properties"] and reserved == 0.0 and math.copysign(1.0, reserved) > 0


def _prepacked_input(
    req: PackRequest,
    prepacked: Prepacked,
    first_kind: int,
    keys: list[str],
    warnings: list[str],
    resolved_tables: dict[int, Any],
) -> list[dict[str, Any]]:
    """The engine's pre-packed boxes: box type, caps, extras and their items (kinds from
    `first_kind` on, one per pre-packed item entry)."""
    out = []
    for b, (box_type, units) in enumerate(zip(prepacked.box_types, prepacked.units, strict=True)):
        assert box_type.dimensions is not None  # read_prepacked requires it
        out.append(
            {
                "boxType": {
                    "dimensions": _xyz(box_type.dimensions),
                    "weightMax": box_type.weight_max or 0.0,
                    "weightTare": box_type.weight_tare or 0.0,
                    "price": box_type.price,
                    "rating": lower_rating(
                        box_type,
                        f"boxes[{b}]",
                        warnings,
                        resolved_tables,
                        _prepacked_rate_table_sources(req, b),
                    ),
                },
                "caps": _box_caps(req, box_type),
                "extra": _box_extra(req, box_type, keys),
                "items": [
                    {"item": first_kind + e, "origin": _xyz(origin) if origin else None}
                    for e, _, origin in units
                ],
            }
        )
    return out


def _fixed_units(
    packed: Mapping[str, Any], prepacked: Prepacked, first_kind: int
) -> list[tuple[int, int]]:
    """(kind, unit) of each item the engine reports in a pre-packed box's `fixed`."""
    which = packed.get("prepacked")
    if which is None:
        return []
    return [(first_kind + e, unit) for e, unit, _ in prepacked.units[which]]


def _box(
    index: int,
    packed: dict[str, Any],
    box_type: BoxType,
    kinds: list[_Kind],
    reserved_space: float,
    fixed_units: list[tuple[int, int]],
    first_index: int,
    type_fields: dict[str, Any],
) -> Box:
    """A response box from the engine's placements, with its volume and weight figures; a
    pre-packed box lists its own items first (`fixed_units`: their kinds and units). Its
    items are numbered from `first_index` on; `type_fields` are those it repeats from
    `box_type` (`_box_type_fields`)."""
    items: list[Item] = []
    # Rounded running totals keep the integer deltas summing to the box price, which the
    # first item carries with the tie-breaking discount given back (`_tie_discount`).
    discount = _tie_discount(box_type)
    cost_so_far = float(discount)
    rounded = 0
    placed = [(kinds[placement["item"]], placement) for placement in packed["items"]]
    if fixed_units or packed.get("fixed"):
        fixed = [
            (kinds[kind], {**placement, "unit": unit, "packedIndex": None})
            for (kind, unit), placement in zip(fixed_units, packed.get("fixed", []), strict=True)
        ]
        placed = [*fixed, *placed]
    entries: list[ItemEntry] = []
    # The box's sums, added up item by item in the order (and from the int 0) that sum()
    # over the items would: the same floats. The weighted centre of mass is
    # weighted_center_of_mass's when the items weigh something.
    volume_net: float = 0
    weight_net: float = 0
    moment_x: float = 0
    moment_y: float = 0
    moment_z: float = 0
    len_items = 0
    len_units = 0
    for number, (kind, placement) in enumerate(placed, first_index):
        before = rounded
        cost_so_far += placement["deltaCost"]
        rounded = _floor(cost_so_far + 0.5)  # whole_units
        item = _item(kind, placement, rounded - before, number)
        items.append(item)
        # One fields set for all the entries, as XYZ is for points: an entry sets its one
        # field. assemble_whole, inlined.
        entry = _new(ItemEntry)
        _set_dict(entry, {"item": item})
        _set_fields_set(entry, _ITEM_ENTRY_FIELDS)
        _set_extra(entry, None)
        _set_private(entry, None)
        entries.append(entry)
        d = item.dimensions
        volume_net += d.x * d.y * d.z
        w = item.weight
        weight_net += w
        c = item.center_of_mass
        assert c is not None  # every packed unit has one
        moment_x += w * c.x
        moment_y += w * c.y
        moment_z += w * c.z
        if not item.virtual:
            len_units += 1
            len_items += item.quantity or 1
    dims = box_type.dimensions
    volume_max = dims.x * dims.y * dims.z
    if box_type.reserved_space is not None:
        reserved_space = box_type.reserved_space
    volume_reserved = reserved_space * volume_max
    volume_used = volume_net + volume_reserved
    tare = box_type.weight_tare or 0.0
    weight_max = box_type.weight_max or 0.0
    weight_used = tare + weight_net
    if weight_net > 0:
        center = Point.of(moment_x / weight_net, moment_y / weight_net, moment_z / weight_net)
    else:
        center = weighted_center_of_mass(items, [i.weight for i in items], weight_net)
    # What Box.model_construct(**values) does, without the keyword round trip.
    values = {
        **type_fields,
        "id": index,
        "dimensions": box_type.dimensions,
        "weight_max": weight_max,
        "weight_tare": tare,
        "outer": _outer(box_type),
        "rate_table": box_type.rate_table,
        "price": whole_units(packed["cost"] + discount),
        "dimensional_weight": packed.get("dimensionalWeight"),
        "dimensional_weight_used": (
            packed.get("dimensionalWeightUsed") if box_type.rate_table is not None else None
        ),
        # Echoed at the price it is reported at, so it can be sent back as a pre-packed box.
        "box_type": box_type.model_copy(update={"price": 0}) if discount else box_type,
        "items": entries,
        "property_constraints": _property_values(box_type.property_constraints, items),
        "volume_max": volume_max,
        "volume_used": volume_used,
        "volume_net": volume_net,
        "volume_remaining": max(volume_max - volume_used, 0.0),
        "volume_reserved": volume_reserved,
        "volume_utilization": min(volume_used / volume_max, 1.0) if volume_max else 0.0,
        "weight_used": weight_used,
        "weight_net": weight_net,
        "weight_remaining": max(weight_max - weight_used, 0.0) if weight_max > 0 else None,
        "weight_utilization": min(weight_used / weight_max, 1.0) if weight_max > 0 else None,
        "len_items": len_items,
        "len_units": len_units,
        "center_of_mass": center,
        "center_of_mass_string": point_string(center),
    }
    return assemble(Box, values, set(values))


def _tie_discount(box_type: BoxType) -> int:
    """What the engine took off a box type's cost that the response gives back: a
    pack-as-is carton priced -1 (the spec: -1 "favors as-is by the smallest meaningful
    amount") cost 1 less so that shipping as is wins ties; it is worth 0 plus its rate,
    and a reported `price` is >= 0. 0 for every other type."""
    return -box_type.price if box_type.price is not None and box_type.price < 0 else 0


_ITEM_ENTRY_FIELDS = {"item"}

#: Box type fields a packed box sets itself (`_box`), not copied from its box type.
_OVERRIDDEN = frozenset(
    {
        "dimensions",
        "price",
        "weight_tare",
        "weight_max",
        "outer",
        "rate_table",
        "property_constraints",
        "center_of_mass",
    }
)


def _box_type_fields(box_type: BoxType) -> dict[str, Any]:
    """The fields a packed box repeats from its box type: those the type set, not None."""
    return {
        name: getattr(box_type, name)
        for name in box_type.model_fields_set - _OVERRIDDEN
        if getattr(box_type, name) is not None
    }


def _property_values(
    constraints: list[PropertyConstraint] | None, items: list[Item]
) -> list[PropertyConstraint] | None:
    """The box type's property constraints, each with its `value` now: the box type's start
    value plus the amounts of the box's items."""
    if constraints is None:
        return None
    return [
        PropertyConstraint.model_construct(
            key=c.key,
            max=c.max,
            aggregate=c.aggregate,
            value=(c.value or 0.0) + sum(property_amount(i.properties, c.key) for i in items),
        )
        for c in constraints
    ]


def _outer(box_type: BoxType) -> Outer | None:
    """The box type's `outer`, with the final outer dimensions when a change was given."""
    outer = box_type.outer
    if outer is None or outer.dimensions is not None:
        return outer
    return Outer.model_construct(
        dimensions=outer_dimensions(box_type), dimension_change=outer.dimension_change
    )


_new, _set_dict, _set_fields_set, _set_extra, _set_private = WHOLE_MODEL_STEPS
_floor = math.floor

#: The fields a unit sets (its `model_fields_set`): those it repeats from its kind, then
#: those of a packed unit (numbered response-wide), then those of a leftover.
_UNIT_FIELDS = frozenset(
    {
        "ref_id",
        "name",
        "color",
        "weight",
        "sequence",
        "virtual",
        "properties",
        "quantity",
        "unit_of_measure",
        "dimension_set",
        "unique_id",
    }
)
_PACKED_FIELDS = _UNIT_FIELDS | {
    "dimensions",
    "origin",
    "center_of_mass",
    "packed_index",
    "delta_cost",
    "message",
    "index",
    "global_id",
}
_LEFTOVER_FIELDS = _UNIT_FIELDS | {"dimensions", "message"}


#: Item's fields with an immutable default (all but weight and dimensions), in order.
_ITEM_DEFAULTS = {
    name: info.default
    for name, info in Item.model_fields.items()
    if info.default is not PydanticUndefined
}


def _item(kind: _Kind, placement: dict[str, Any], delta_cost: int, index: int) -> Item:
    """A packed unit, numbered `index`, with its position, placed dimensions and cost."""
    ox, oy, oz = placement["origin"]
    dx, dy, dz = placement["dimensions"]
    shapes = kind._shapes
    if shapes is None:
        shapes = kind.uneven_shapes
    if shapes:
        dx, dy, dz = _exact_dimensions(shapes, (dx, dy, dz))
    # assemble_whole, inlined: five models per packed unit (WHOLE_MODEL_STEPS).
    origin = _new(Point)
    _set_dict(origin, {"x": ox, "y": oy, "z": oz})
    _set_fields_set(origin, XYZ)
    _set_extra(origin, None)
    _set_private(origin, None)
    dimensions = _new(Dimensions)
    _set_dict(dimensions, {"x": dx, "y": dy, "z": dz})
    _set_fields_set(dimensions, XYZ)
    _set_extra(dimensions, None)
    _set_private(dimensions, None)
    if not kind.alternates and kind.item_set.center_of_mass is None:
        # The geometric centre (placed_center_of_mass without an offset).
        center = _new(Point)
        _set_dict(center, {"x": ox + dx / 2, "y": oy + dy / 2, "z": oz + dz / 2})
        _set_fields_set(center, XYZ)
        _set_extra(center, None)
        _set_private(center, None)
    else:
        given, offset = _shape_of(kind, dimensions)
        center = placed_center_of_mass(given, offset, origin, dimensions)
    support = placement.get("support")
    # Every field, in the order `assemble` puts them: defaults, the kind's, the unit's.
    fields = kind.unit_fields()
    fields["unique_id"] = f"{kind.ref_id}-{kind.first_unit + placement['unit']}"
    fields["dimensions"] = dimensions
    fields["origin"] = origin
    fields["center_of_mass"] = center
    fields["packed_index"] = placement["packedIndex"]
    fields["delta_cost"] = delta_cost
    fields["message"] = None if support is None else _support_message(support)
    fields["index"] = index
    fields["global_id"] = index
    item = _new(Item)
    _set_dict(item, fields)
    _set_fields_set(item, set(_PACKED_FIELDS))
    _set_extra(item, None)
    _set_private(item, None)
    return item


def _shape_of(kind: _Kind, placed: Dimensions) -> tuple[Dimensions, Point | None]:
    """The dimensions as given of the shape a unit was placed in (its own, or one of its
    alternate dimensions) and its centre of mass offset in that shape."""
    s = kind.item_set
    if not kind.alternates or _sides(s.dimensions) == _sides(placed):
        return s.dimensions, s.center_of_mass
    for x, y, z in kind.alternates:
        shape = Dimensions.model_construct(x=x, y=y, z=z)
        if _sides(shape) == _sides(placed):
            return shape, scaled_center_of_mass(s.center_of_mass, s.dimensions, shape)
    return s.dimensions, None


#: The engine's fixed-point lengths per unit of the caller's (docs/decisions.md).
_FIXED = 10_000.0

#: The three axes in every order: a placed shape is a given one turned.
_TURNS = ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0))


def _exact_dimensions(
    shapes: Sequence[tuple[float, float, float]], placed: tuple[float, float, float]
) -> tuple[float, float, float]:
    """The given sides of the shape and turn the engine placed, in placed order: the
    engine reports each side rounded up to 1/10,000 of the unit (a positive side to at
    least that), so the turned shape nearest `placed`, within that step, is the one it
    placed. `placed` when none is that near."""
    best, gap = placed, 1.5 / _FIXED
    for shape in shapes:
        for turn in _TURNS:
            turned = (shape[turn[0]], shape[turn[1]], shape[turn[2]])
            off = max(abs(a - b) for a, b in zip(turned, placed, strict=True))
            if off < gap:
                best, gap = turned, off
    return best


def _sides(p: Point) -> list[float]:
    """Sides sorted, rounded to the engine's 1/10,000 so placed and given sides compare."""
    return sorted(round(v, 4) for v in (p.x, p.y, p.z))


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
    return assemble(
        Item,
        {
            **kind.echo,
            "unique_id": kind.unique_id(left["unit"]),
            "dimensions": kind.item_set.dimensions,
            "message": left["reason"],
        },
        set(_LEFTOVER_FIELDS),
    )


def _choice_warnings(req: PackRequest) -> list[str]:
    """Box choice options that contradict each other: a warning when the request still packs,
    422 when it cannot (`estimated` with `usableSpace: 0` expects every box to hold nothing)."""
    estimated = req.box_type_choice_style == "estimated"
    if estimated and req.usable_space <= 0:
        raise InvalidRequest(
            "invalid request",
            "usableSpace: must be > 0 with boxTypeChoiceStyle 'estimated' (it estimates how "
            "much of each box the items fill; 0 expects every box to hold nothing); raise it "
            "or use boxTypeChoiceStyle 'actual'",
        )
    warnings = []
    if not estimated and "usable_space" in req.model_fields_set:
        warnings.append(
            "usableSpace only applies to boxTypeChoiceStyle 'estimated'; it has no effect here"
        )
    if estimated and req.box_type_choice_lookahead > 0:
        warnings.append(
            f"boxTypeChoiceLookahead {req.box_type_choice_lookahead} applies to "
            "boxTypeChoiceStyle 'actual' only; ignored with 'estimated'"
        )
    if req.box_type_choice_lookback < -1:
        warnings.append(
            f"boxTypeChoiceLookback {req.box_type_choice_lookback} is negative: every box stays "
            "open, as for -1"
        )
    if "cohort_max" in req.model_fields_set and not req.cohort_packing:
        warnings.append("cohortMax has no effect without cohortPacking: true")
    if req.box_type_sets:
        # The service replaces boxTypeSets 'customer' by the account's cartons before packing
        # (cartonize.sync.library); what reaches the packer could not be resolved.
        warnings.append(
            "boxTypeSets has no effect: boxTypes given override it"
            if req.box_types
            else "boxTypeSets 'customer' names the account's cartons, which only the service "
            "with an API key resolves; no box types were taken from it"
        )
    return warnings


def _xyz(p: Point) -> list[float]:
    return [p.x, p.y, p.z]


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


#: When the engine was built (ISO 8601), reported as `built`.
_BUILT = datetime.fromtimestamp(int(_core.BUILT), UTC).isoformat()
