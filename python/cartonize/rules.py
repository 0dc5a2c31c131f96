"""Rules: which item sets (and box types) a rule selects, and what each operation
does to the pack. Operations that reshape the request (set-properties, irregular) are
applied here; the others become constraints the engine enforces (orientation locks,
exclusions, pack-as-is boxes, fragile limits, alternate dimensions). See docs/rules.md."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from cartonize.errors import InvalidRequest
from cartonize.items import scaled_center_of_mass
from cartonize.models import BoxMatch, BoxProperties, BoxType, Dimensions, ItemMatch, ItemSet, Rule
from cartonize.rolls import roll_of, roll_options, rolled_item_set

__all__ = [
    "AS_GIVEN",
    "Fragile",
    "RuleEffects",
    "apply_rules",
    "box_matches",
    "check_rule_options",
    "fragile_limit",
    "free_axes_option",
    "item_matches",
    "selects_item_set",
    "targets_box_type",
    "targets_item_set",
    "with_properties_set",
]

#: Operations resolved here; the others pack the request in parts (see apply_rules).
_HONOURED = frozenset(
    {
        "lock-orientation",
        "exclude",
        "exclude-all",
        "pack-as-is",
        "set-properties",
        "alternate-dimensions",
        "fragile",
        "irregular",
    }
)


#: Option of the lock-orientation rules that internal-space gives its hosts (not a wire
#: option): the units pack exactly as given, without alternate dimensions either.
AS_GIVEN = "packAsGiven"

#: Operations that change an item's shape, which a unit-of-measure ladder fixes.
_RESHAPING = frozenset({"irregular", "alternate-dimensions"})


@dataclass(frozen=True)
class Fragile:
    """What may rest above a fragile item set's units (rule `fragile`)."""

    max_weight: float | None
    on_top_only: bool
    #: Offered after the other units, so they tend to end on top.
    offer_last: bool

    def engine(self, kind: int) -> dict[str, Any]:
        """The engine's `fragile` entry for item kind `kind`."""
        return {
            "kind": kind,
            "maxWeight": self.max_weight,
            "onTopOnly": self.on_top_only,
            "offerLast": self.offer_last,
        }


@dataclass
class RuleEffects:
    """What the request's rules do, by item set position and box type index.

    `item_sets` are the item sets after set-properties, irregular and alternate-dimensions
    with `replaceOriginal`; `box_types` are the request's box types followed by one box per
    pack-as-is item set."""

    item_sets: list[ItemSet]
    box_types: list[BoxType]
    free_axes: dict[int, list[int]] = field(default_factory=dict)
    #: Item set position -> index of the lock-orientation rule that locks it.
    locked_by: dict[int, int] = field(default_factory=dict)
    #: Item set pairs whose units never share a box.
    kind_pairs: set[tuple[int, int]] = field(default_factory=set)
    #: (item set, box type) pairs: the item set never enters the box type.
    kind_box_types: set[tuple[int, int]] = field(default_factory=set)
    #: (item set, pre-packed box position) pairs: the item set never enters that box.
    kind_prepacked_boxes: set[tuple[int, int]] = field(default_factory=set)
    #: Item set position -> index of its own pack-as-is box type.
    as_is: dict[int, int] = field(default_factory=dict)
    #: Item set position -> its fragile limit.
    fragile: dict[int, Fragile] = field(default_factory=dict)
    #: Item set position -> further dimensions (x, y, z as given) a unit may take instead.
    alternates: dict[int, list[tuple[float, float, float]]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def _expressions(match: ItemMatch | BoxMatch) -> list[str]:
    return [*(match.expressions or []), *([match.expression] if match.expression else [])]


def _search(value: str | None, match: ItemMatch | BoxMatch) -> bool:
    """Substring search of `value` for any expression (no expression: a non-empty value)."""
    expressions = _expressions(match)
    selected = (
        value is not None and any(e in value for e in expressions) if expressions else bool(value)
    )
    return selected != match.negate


def item_matches(match: ItemMatch, item_set: ItemSet) -> bool:
    """True when `item_set` is selected by `match` (substring search, any expression)."""
    if match.all_items:
        return not match.negate
    return _search(_property(item_set, match.property_name or "name"), match)


def box_matches(match: BoxMatch, box: BoxProperties) -> bool:
    """True when `box` is selected by `match` (its name, or a key of its properties)."""
    name = match.property_name or "name"
    if name == "name":
        value = box.name
    else:
        raw = (box.properties or {}).get(name)
        value = None if raw is None else str(raw)
    return _search(value, match)


def _property(item_set: ItemSet, name: str) -> str | None:
    if name == "name":
        return item_set.name
    if name == "sequence":
        return item_set.sequence
    value = (item_set.properties or {}).get(name)
    return None if value is None else str(value)


def selects_item_set(rule: Rule, ref_id: int, item_set: ItemSet) -> bool:
    """A rule selects an item set by refId, sequence or match; the selectors are or-ed."""
    return (
        (rule.item_ref_id is not None and rule.item_ref_id == ref_id)
        or (rule.item_sequence is not None and rule.item_sequence == item_set.sequence)
        or (rule.item_match is not None and item_matches(rule.item_match, item_set))
    )


def targets_item_set(rule: Rule, ref_id: int, item_set: ItemSet) -> bool:
    """A rule targets an item set by refId, sequence or match; the targets are or-ed."""
    return (
        ref_id in (rule.target_item_ref_ids or [])
        or (
            item_set.sequence is not None
            and item_set.sequence in (rule.target_item_sequences or [])
        )
        or (rule.target_item_match is not None and item_matches(rule.target_item_match, item_set))
    )


def targets_box_type(rule: Rule, box: BoxType) -> bool:
    """A rule targets a box type by refId or match (`targetBoxRefIds`, `targetBoxMatch`)."""
    return (box.ref_id is not None and box.ref_id in (rule.target_box_ref_ids or [])) or (
        rule.target_box_match is not None and box_matches(rule.target_box_match, box)
    )


def _has_item_targets(rule: Rule) -> bool:
    return bool(rule.target_item_ref_ids or rule.target_item_sequences or rule.target_item_match)


def _has_box_targets(rule: Rule) -> bool:
    return bool(rule.target_box_ref_ids or rule.target_box_match)


def _invalid(index: int, option: str, fix: str, got: object) -> InvalidRequest:
    return InvalidRequest(
        "invalid rule options", f"rules[{index}].options.{option}: {fix} (got {got!r})"
    )


def free_axes_option(index: int, rule: Rule) -> list[int]:
    """A lock-orientation rule's `freeAxes`; raises `InvalidRequest` when malformed."""
    raw = (rule.options or {}).get("freeAxes", [])
    if not isinstance(raw, list) or not all(
        isinstance(a, int) and not isinstance(a, bool) and 0 <= a <= 2 for a in raw
    ):
        raise _invalid(index, "freeAxes", "must be a list of axes 0 (x), 1 (y), 2 (z)", raw)
    return sorted(set(raw))


def _flag(index: int, options: dict[str, Any], name: str) -> bool:
    value = options.get(name, False)
    if not isinstance(value, bool):
        raise _invalid(index, name, "must be true or false", value)
    return value


def fragile_limit(index: int, rule: Rule) -> tuple[Fragile, bool]:
    """A fragile rule's limit, and whether heavier units are kept out of its boxes;
    raises `InvalidRequest` when its options are malformed."""
    options = rule.options or {}
    max_weight = options.get("maxWeight")
    if max_weight is not None and (not _is_number(max_weight) or max_weight < 0):
        raise _invalid(index, "maxWeight", "must be a number >= 0", max_weight)
    on_top_only = _flag(index, options, "onTopOnly")
    if max_weight is None and not on_top_only:
        raise InvalidRequest(
            "invalid rule options",
            f"rules[{index}].options.maxWeight: fragile needs maxWeight (the weight that may "
            "rest above the item) or onTopOnly: true",
        )
    exclude_overweight = _flag(index, options, "excludeOverweight")
    limit = Fragile(
        max_weight=None if max_weight is None else float(max_weight),
        on_top_only=on_top_only,
        offer_last=not _flag(index, options, "unrestrictedPlacement"),
    )
    return limit, exclude_overweight


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _points(index: int, options: dict[str, Any], name: str) -> list[dict[str, float]]:
    """`options[name]` as a list of points whose axes are numbers (missing axes are 0)."""
    raw = options.get(name, [])
    fix = "must be a list of points {x, y, z} with numeric axes"
    if not isinstance(raw, list):
        raise _invalid(index, name, fix, raw)
    points = []
    for p in raw:
        if not isinstance(p, dict) or not all(
            k in "xyz" and len(k) == 1 and _is_number(v) for k, v in p.items()
        ):
            raise _invalid(index, name, fix, raw)
        points.append({a: float(p.get(a, 0.0)) for a in "xyz"})
    return points


def _alternate_candidates(
    index: int, rule: Rule, dims: Dimensions
) -> tuple[list[tuple[float, float, float]], bool]:
    """The alternate dimensions an alternate-dimensions rule offers for `dims`, and
    whether they replace the original."""
    options = rule.options or {}
    replace = options.get("replaceOriginal", False)
    if not isinstance(replace, bool):
        raise _invalid(index, "replaceOriginal", "must be true or false", replace)
    given = (dims.x, dims.y, dims.z)
    candidates = [(p["x"], p["y"], p["z"]) for p in _points(index, options, "dimensions")]
    for change in _points(index, options, "dimensionChanges"):
        candidates.append((given[0] + change["x"], given[1] + change["y"], given[2] + change["z"]))
    for scale in _points(index, options, "dimensionScaleChanges"):
        candidates.append(
            (
                given[0] * (1 + scale["x"]),
                given[1] * (1 + scale["y"]),
                given[2] * (1 + scale["z"]),
            )
        )
    if not candidates:
        raise InvalidRequest(
            "invalid rule options",
            f"rules[{index}].options: alternate-dimensions needs dimensions, dimensionChanges "
            "or dimensionScaleChanges",
        )
    for c in candidates:
        if min(c) <= 0:
            raise _invalid(index, "dimensions", "every alternate side must come out > 0", c)
    return candidates, replace


def _property_options(index: int, rule: Rule) -> tuple[dict[str, Any], bool]:
    """A set-properties rule's properties and overwrite flag."""
    options = rule.options or {}
    new = options.get("properties")
    if not isinstance(new, dict):
        raise _invalid(index, "properties", "must be an object of properties to set", new)
    overwrite = options.get("overwrite", False)
    if not isinstance(overwrite, bool):
        raise _invalid(index, "overwrite", "must be true or false", overwrite)
    return new, overwrite


def _set_properties(index: int, rule: Rule, item_set: ItemSet) -> ItemSet:
    new, overwrite = _property_options(index, rule)
    current = dict(item_set.properties or {})
    for key, value in new.items():
        if overwrite or key not in current:
            current[key] = value
    return item_set.model_copy(update={"properties": current})


#: Units this long on every side check alternate options that hold for any item.
_ANY_ITEM = Dimensions.model_construct(x=1e12, y=1e12, z=1e12)


def check_rule_options(rules: Sequence[Rule]) -> None:
    """Checks the options of the rules resolved here whatever they select; raises
    `InvalidRequest` naming `rules[i].options.<field>` (the parts' own operations check
    theirs when their module packs the request)."""
    for index, rule in enumerate(rules):
        op = rule.operation
        if op == "lock-orientation":
            free_axes_option(index, rule)
        elif op == "fragile":
            fragile_limit(index, rule)
        elif op == "set-properties":
            _property_options(index, rule)
        elif op == "alternate-dimensions":
            _alternate_candidates(index, rule, _ANY_ITEM)
        elif op == "irregular":
            roll_options(index, rule.options or {})


def with_properties_set(
    rules: Sequence[Rule], item_sets: Sequence[ItemSet], ref_ids: Sequence[int]
) -> tuple[list[ItemSet], list[str]]:
    """`item_sets` (answering to `ref_ids`) after every set-properties rule, in request
    order: they act before any other rule, so every rule, and every part a request is
    packed in (group-pack groups carry their units' amounts), sees the new properties.
    Also a warning for each key two rules set on one item set, naming the winner."""
    out = list(item_sets)
    warnings = []
    set_by: dict[tuple[int, str], int] = {}  # (item set, key) -> rule index
    for index, rule in enumerate(rules):
        if rule.operation != "set-properties":
            continue
        new, overwrite = _property_options(index, rule)
        for p, ref_id in enumerate(ref_ids):
            if not selects_item_set(rule, ref_id, out[p]):
                continue
            current = out[p].properties or {}
            for key in new:
                earlier = set_by.get((p, key))
                sets = overwrite or key not in current
                if earlier is not None:
                    winner = index if sets else earlier
                    warnings.append(
                        f"rules[{index}] and rules[{earlier}] (set-properties) both set "
                        f"{key!r} on item refId {ref_id}; rules[{winner}] wins"
                    )
                if sets:
                    set_by[(p, key)] = index
            out[p] = _set_properties(index, rule, out[p])
    return out, list(dict.fromkeys(warnings))


def _as_is_box(item_set: ItemSet, ref_id: int, defaults: BoxProperties | None) -> BoxType:
    """The carton of a pack-as-is item set: its own dimensions, priced by the defaults;
    being the item's own packaging, it reserves no space for packing material."""
    box = BoxType(
        name=f"pack-as-is {item_set.name or ref_id}",
        dimensions=item_set.dimensions,
        weight_max=0.0,
        reserved_space=0.0,
    )
    base = BoxProperties(
        price=defaults.price if defaults else None,
        rate_table=defaults.rate_table if defaults else None,
    )
    return box.with_defaults(base)


def apply_rules(
    rules: Sequence[Rule],
    item_sets: Sequence[tuple[int, ItemSet]],
    box_types: Sequence[BoxType] = (),
    *,
    box_type_defaults: BoxProperties | None = None,
    packed_anew: int | None = None,
    prepacked_boxes: Sequence[BoxType] = (),
    ladder_units: Collection[int] = (),
) -> RuleEffects:
    """Resolve `rules`, in order, against the item sets (given as (refId, item set) pairs)
    and the box types. Raises `InvalidRequest` naming `rules[i]` and the field for
    malformed options; conflicts between rules become warnings naming the winner.

    Item sets from `packed_anew` on are pre-packed items: no rule changes them, but
    exclusions keep new units out of the boxes they are in; `prepacked_boxes` (the
    pre-packed boxes' types) may be exclude targets, and pack-as-is units keep out.
    Item sets at `ladder_units` are units of a `dimensionSets` ladder, whose shapes win
    over the rules that reshape an item (irregular, alternate-dimensions)."""
    ref_ids = [ref_id for ref_id, _ in item_sets]
    fresh = len(item_sets) if packed_anew is None else packed_anew
    effects = RuleEffects(item_sets=[s for _, s in item_sets], box_types=list(box_types))
    locked_by = effects.locked_by
    alternate_by: dict[int, int] = {}
    alternates: dict[int, tuple[list[tuple[float, float, float]], bool]] = {}
    #: Item sets that pack exactly as given (units carrying an internal space).
    as_given_by: dict[int, int] = {}
    as_is_by: dict[int, int] = {}
    fragile_by: dict[int, int] = {}
    rolled_by: dict[int, int] = {}
    for index, rule in enumerate(rules):
        if rule.operation not in _HONOURED:
            # pack-sequence, group-pack, bounded-fill and internal-space pack the request
            # in parts (sequences.py, grouping.py, bounded_fill.py, subspaces.py), which
            # take their own rules out before the parts reach here.
            continue
        if rule.item_ref_id is None and rule.item_sequence is None and rule.item_match is None:
            effects.warnings.append(
                f"rules[{index}]: selects no items (give itemRefId, itemSequence or itemMatch)"
            )
            continue
        _check_targets(index, rule)
        selected = [
            p
            for p, (ref_id, item_set) in enumerate(zip(ref_ids, effects.item_sets, strict=True))
            if selects_item_set(rule, ref_id, item_set)
        ]
        op = rule.operation
        if op not in ("exclude", "exclude-all"):
            selected = [p for p in selected if p < fresh]
        if op in _RESHAPING:
            laddered = {ref_ids[p] for p in selected if p in ladder_units}
            effects.warnings += [
                f"rules[{index}] ({op}): item refId {ref_id} packs as the units of its "
                "dimensionSets, which win: the rule does not apply to it"
                for ref_id in sorted(laddered)
            ]
            selected = [p for p in selected if p not in ladder_units]
        if op == "lock-orientation":
            axes = free_axes_option(index, rule)
            for p in selected:
                if p in locked_by:
                    effects.warnings.append(
                        f"rules[{index}]: item refId {ref_ids[p]} is already locked by "
                        f"rules[{locked_by[p]}] (lock-orientation), which wins"
                    )
                    continue
                if p in as_is_by:
                    effects.warnings.append(_as_is_wins(index, op, ref_ids[p], as_is_by[p]))
                    continue
                locked_by[p] = index
                effects.free_axes[p] = axes
                if (rule.options or {}).get(AS_GIVEN):
                    as_given_by[p] = index
        elif op == "exclude":
            for p in selected:
                for q, (ref_id, item_set) in enumerate(
                    zip(ref_ids, effects.item_sets, strict=True)
                ):
                    # An item set is never kept from its own units (pack-as-is does that),
                    # nor pre-packed items from each other (they are where they are).
                    both_given = p >= fresh and q >= fresh
                    if q != p and not both_given and targets_item_set(rule, ref_id, item_set):
                        effects.kind_pairs.add((min(p, q), max(p, q)))
                for b, box in enumerate(box_types):
                    if targets_box_type(rule, box):
                        effects.kind_box_types.add((p, b))
                for b, box in enumerate(prepacked_boxes):
                    if targets_box_type(rule, box):
                        effects.kind_prepacked_boxes.add((p, b))
        elif op == "exclude-all":
            for p in selected:
                for q, ref_id in enumerate(ref_ids):
                    if ref_id != ref_ids[p] and (p < fresh or q < fresh):
                        effects.kind_pairs.add((min(p, q), max(p, q)))
        elif op == "pack-as-is":
            for p in selected:
                as_is_by.setdefault(p, index)
                if p in locked_by:
                    effects.warnings.append(
                        _as_is_wins(locked_by[p], "lock-orientation", ref_ids[p], index)
                    )
                    del effects.free_axes[p]
                    del locked_by[p]
        elif op == "fragile":
            limit, exclude_overweight = fragile_limit(index, rule)
            for p in selected:
                if p in fragile_by:
                    effects.warnings.append(
                        f"rules[{index}]: item refId {ref_ids[p]} is already fragile by "
                        f"rules[{fragile_by[p]}], which wins"
                    )
                    continue
                fragile_by[p] = index
                effects.fragile[p] = limit
                if exclude_overweight and limit.max_weight is not None:
                    for q, other in enumerate(effects.item_sets):
                        if q != p and other.weight > limit.max_weight:
                            effects.kind_pairs.add((min(p, q), max(p, q)))
        elif op == "irregular":
            for p in selected:
                if p in rolled_by:
                    effects.warnings.append(
                        f"rules[{index}]: item refId {ref_ids[p]} is already rolled by "
                        f"rules[{rolled_by[p]}], which wins"
                    )
                    continue
                rolled_by[p] = index
                roll, warnings = roll_of(index, rule.options or {}, effects.item_sets[p])
                effects.warnings += warnings
                effects.item_sets[p] = rolled_item_set(effects.item_sets[p], roll)
        elif op == "set-properties":
            for p in selected:
                effects.item_sets[p] = _set_properties(index, rule, effects.item_sets[p])
        elif op == "alternate-dimensions":
            for p in selected:
                if p in alternate_by:
                    effects.warnings.append(
                        f"rules[{index}]: item refId {ref_ids[p]} already has alternate "
                        f"dimensions by rules[{alternate_by[p]}], which wins"
                    )
                    continue
                alternate_by[p] = index
                alternates[p] = _alternate_candidates(index, rule, effects.item_sets[p].dimensions)
    # Shipping as given, in the item's own carton or with its internal space, and
    # rolling win over alternate dimensions.
    for p, alternate in sorted(alternate_by.items()):
        winner = next(
            (
                (by[p], name)
                for by, name in (
                    (as_is_by, "pack-as-is"),
                    (rolled_by, "irregular"),
                    (as_given_by, "internal-space: it packs as given"),
                )
                if p in by
            ),
            None,
        )
        if winner is None:
            _add_alternates(effects, p, *alternates[p])
            continue
        effects.warnings.append(
            f"rules[{alternate}] (alternate-dimensions) and rules[{winner[0]}] ({winner[1]}) "
            f"both select item refId {ref_ids[p]}; {winner[1].split(':')[0]} wins: the item "
            "keeps its own dimensions"
        )
    _add_as_is_boxes(effects, ref_ids, as_is_by, len(box_types), box_type_defaults)
    effects.kind_prepacked_boxes |= {(p, b) for p in as_is_by for b in range(len(prepacked_boxes))}
    return effects


def _add_alternates(
    effects: RuleEffects,
    p: int,
    candidates: list[tuple[float, float, float]],
    replace: bool,
) -> None:
    """Gives item set `p` its alternate dimensions, smallest volume first (the schema:
    "sorted by volume ascending"); with `replace` the smallest takes the place of the
    item's own dimensions, which are dropped."""
    by_volume = sorted(candidates, key=lambda c: c[0] * c[1] * c[2])
    if replace:
        x, y, z = by_volume.pop(0)
        item_set = effects.item_sets[p]
        shape = Dimensions(x=x, y=y, z=z)
        effects.item_sets[p] = item_set.model_copy(
            update={
                "dimensions": shape,
                "center_of_mass": scaled_center_of_mass(
                    item_set.center_of_mass, item_set.dimensions, shape
                ),
            }
        )
    if by_volume:
        effects.alternates[p] = by_volume


def _as_is_wins(loser: int, operation: str, ref_id: int, winner: int) -> str:
    return (
        f"rules[{loser}] ({operation}) and rules[{winner}] (pack-as-is) both select item "
        f"refId {ref_id}; pack-as-is wins: the item ships in its own carton as given"
    )


def _add_as_is_boxes(
    effects: RuleEffects,
    ref_ids: list[int],
    as_is_by: dict[int, int],
    first_own_box: int,
    defaults: BoxProperties | None,
) -> None:
    """Gives every pack-as-is item set a box type of its own dimensions that nothing else
    enters, which it alone may use, one unit at a time, as given."""
    if not as_is_by:
        return  # no carton of its own: every item set may enter every box type
    for own, p in enumerate(sorted(as_is_by), start=first_own_box):
        effects.box_types.append(_as_is_box(effects.item_sets[p], ref_ids[p], defaults))
        effects.as_is[p] = own
        effects.free_axes[p] = []
        effects.kind_pairs.add((p, p))
    total_boxes = first_own_box + len(as_is_by)
    for q in range(len(ref_ids)):
        allowed = effects.as_is.get(q)
        for b in range(total_boxes):
            # A pack-as-is item set enters only its own box; the others only the request's.
            kept_out = b != allowed if allowed is not None else b >= first_own_box
            if kept_out:
                effects.kind_box_types.add((q, b))


def _check_targets(index: int, rule: Rule) -> None:
    """Operations that need targets have them; targets elsewhere are a mistake."""
    if rule.operation == "exclude" and not (_has_item_targets(rule) or _has_box_targets(rule)):
        raise InvalidRequest(
            "invalid rule",
            f"rules[{index}].targetItemRefIds: exclude needs targets (targetItemRefIds, "
            "targetItemSequences, targetItemMatch, targetBoxRefIds or targetBoxMatch)",
        )
