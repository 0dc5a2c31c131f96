"""Rules through nesting (`ignoreSubspaces`). Some units carry other items: a box that a
pack-sequence stage reduces to an item of the next stage (`box-to-item`), an item whose
internal space holds others. Such a unit's item set lists what it carries
(`ItemSet.nested`, at any depth). Rules with `ignoreSubspaces: true` act on direct
relations only: two items in one box, an item and the box it is in. With `false` (the
schema's default) they also act through the nesting, so a carrier unit takes on what
its contents ask of the box it goes into:

- exclude / exclude-all: two units are kept apart when anything in one (itself or an item
  inside it) is kept from anything in the other; a unit never enters a box type that an
  exclude rule keeps one of its contents from;
- fragile: a carrier is fragile with what is left of each fragile content's `maxWeight`
  (less the weight already above it inside), `onTopOnly` when a content is, and
  `excludeOverweight` keeps heavier units (or units holding heavier items) of another
  refId from its box;
- lock-orientation: a carrier turns only as all its locked contents may (a spin about
  one axis, the same for all, or none), so each stays within its lock in the outer box.

An item is not related to the units it is inside: it is packed in them, not with them.
See docs/rules.md ("ignoreSubspaces")."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cartonize.models import Box, BoxType, Item, ItemSet, Nested, Rule
from cartonize.rules import (
    Fragile,
    RuleEffects,
    fragile_limit,
    free_axes_option,
    selects_item_set,
    targets_box_type,
    targets_item_set,
)

__all__ = ["add_nested_relations", "contents_of", "sees_through", "weight_above"]

#: Tolerance of the "rests above" test, in the caller's length unit.
_EPS = 1e-9

#: An item's refId and item set, as rules match it.
_Element = tuple[int, ItemSet]


def sees_through(rule: Rule) -> bool:
    """The rule also acts through nesting: `ignoreSubspaces` is false or absent."""
    return not rule.ignore_subspaces


def weight_above(item: Item, box: Box) -> float:
    """Weight of the items of `box` resting above `item`: higher along x (height), with
    footprints overlapping (as fragile limits count it)."""
    if item.origin is None:
        return 0.0
    o, d = item.origin, item.dimensions
    total = 0.0
    for entry in box.items:
        other = entry.item
        if other is item or other.origin is None:
            continue
        p, e = other.origin, other.dimensions
        if p.x < o.x + d.x - _EPS:
            continue
        overlaps_y = p.y < o.y + d.y - _EPS and o.y < p.y + e.y - _EPS
        if overlaps_y and p.z < o.z + d.z - _EPS and o.z < p.z + e.z - _EPS:
            total += other.weight
    return total


def contents_of(box: Box, inside: Callable[[Item], Sequence[Nested]]) -> tuple[Nested, ...]:
    """Everything in `box` as nested items of the unit the box becomes (or is inside):
    its items, and through `inside` what each of them carries, with the weight resting
    on each."""
    out: list[Nested] = []
    for entry in box.items:
        item = entry.item
        load = weight_above(item, box)
        out.append(Nested(_as_item_set(item), load))
        out += [n.under(load) for n in inside(item)]
    return tuple(out)


def _as_item_set(item: Item) -> ItemSet:
    """A packed item as the rules see an item set: its refId and the fields they match."""
    return ItemSet(
        ref_id=item.ref_id,
        name=item.name,
        sequence=item.sequence,
        properties=item.properties,
        weight=item.weight,
        dimensions=item.dimensions,
        virtual=item.virtual,
        quantity=1,
    )


def _selects_nothing(rule: Rule) -> bool:
    return rule.item_ref_id is None and rule.item_sequence is None and rule.item_match is None


def _apart(kept: set[int], others: set[int]) -> bool:
    """Some refId of `kept` differs from some refId of `others` (a refId is never kept
    from itself)."""
    return any(a != b for a in kept for b in others)


def add_nested_relations(
    effects: RuleEffects,
    rules: Sequence[Rule],
    ref_ids: Sequence[int],
    box_types: Sequence[BoxType],
) -> None:
    """Adds to `effects` (from `apply_rules` on the same item sets and box types) what
    the rules that see through nesting ask of the item sets whose units carry others
    (module docstring)."""
    carriers = {p: s.nested for p, s in enumerate(effects.item_sets) if s.nested}
    if not carriers:
        return
    elements: list[list[_Element]] = [
        [(ref_id, s), *((_ref_id(n), n.item) for n in s.nested)]
        for ref_id, s in zip(ref_ids, effects.item_sets, strict=True)
    ]
    for rule in rules:
        if not sees_through(rule) or _selects_nothing(rule):
            continue
        if rule.operation == "exclude":
            _exclude(effects, rule, elements, carriers, box_types)
        elif rule.operation == "exclude-all":
            selected = [{r for r, s in e if selects_item_set(rule, r, s)} for e in elements]
            present = [{r for r, _ in e} for e in elements]
            _keep_apart(effects, carriers, selected, present)
    for p, nested in carriers.items():
        _inherit_fragile(effects, rules, p, nested, elements)
        _inherit_lock(effects, rules, p, nested)


def _ref_id(nested: Nested) -> int:
    return nested.item.ref_id if nested.item.ref_id is not None else -1


def _exclude(
    effects: RuleEffects,
    rule: Rule,
    elements: list[list[_Element]],
    carriers: dict[int, tuple[Nested, ...]],
    box_types: Sequence[BoxType],
) -> None:
    selected = [{r for r, s in e if selects_item_set(rule, r, s)} for e in elements]
    targeted = [{r for r, s in e if targets_item_set(rule, r, s)} for e in elements]
    _keep_apart(effects, carriers, selected, targeted)
    banned = [b for b, box in enumerate(box_types) if targets_box_type(rule, box)]
    for p in carriers:
        # The carrier itself is the direct relation, which apply_rules has judged.
        if banned and any(selects_item_set(rule, r, s) for r, s in elements[p][1:]):
            effects.kind_box_types.update((p, b) for b in banned)


def _keep_apart(
    effects: RuleEffects,
    carriers: dict[int, tuple[Nested, ...]],
    kept: list[set[int]],
    others: list[set[int]],
) -> None:
    """Item sets p and q (one a carrier) never share a box when some refId kept in one
    meets another refId in the other, either way round."""
    for p in carriers:
        for q in range(len(kept)):
            if q != p and (_apart(kept[p], others[q]) or _apart(kept[q], others[p])):
                effects.kind_pairs.add((min(p, q), max(p, q)))


def _first(rules: Sequence[Rule], operation: str, element: _Element) -> tuple[int, Rule] | None:
    """The first rule of `operation` selecting `element` (the one that wins on it)."""
    return next(
        (
            (i, r)
            for i, r in enumerate(rules)
            if r.operation == operation
            and not _selects_nothing(r)
            and selects_item_set(r, *element)
        ),
        None,
    )


def _inherit_fragile(
    effects: RuleEffects,
    rules: Sequence[Rule],
    p: int,
    nested: tuple[Nested, ...],
    elements: list[list[_Element]],
) -> None:
    """Carrier p is fragile with what its fragile contents can still bear."""
    limit = effects.fragile.get(p)
    for n in nested:
        found = _first(rules, "fragile", (_ref_id(n), n.item))
        if found is None or not sees_through(found[1]):
            continue
        own, exclude_overweight = fragile_limit(*found)
        left = None if own.max_weight is None else max(0.0, own.max_weight - n.load_above)
        limit = _tighter(limit, Fragile(left, own.on_top_only, own.offer_last))
        if exclude_overweight and own.max_weight is not None:
            heavy = own.max_weight
            for q, element in enumerate(elements):
                if q != p and any(r != _ref_id(n) and s.weight > heavy for r, s in element):
                    effects.kind_pairs.add((min(p, q), max(p, q)))
    if limit is not None:
        effects.fragile[p] = limit


def _tighter(a: Fragile | None, b: Fragile) -> Fragile:
    """Both limits at once: the lower weight, on top only when either is."""
    if a is None:
        return b
    weights = [w for w in (a.max_weight, b.max_weight) if w is not None]
    return Fragile(
        max_weight=min(weights) if weights else None,
        on_top_only=a.on_top_only or b.on_top_only,
        offer_last=a.offer_last or b.offer_last,
    )


def _inherit_lock(
    effects: RuleEffects, rules: Sequence[Rule], p: int, nested: tuple[Nested, ...]
) -> None:
    """Carrier p turns only in ways every locked content allows (its turns inside and the
    carrier's compose): a spin about one axis when they all allow that one, else none."""
    axes = effects.free_axes.get(p)
    by: int | None = None
    for n in nested:
        element = (_ref_id(n), n.item)
        if _first(rules, "pack-as-is", element) is not None:
            continue  # pack-as-is wins over its lock (rules.md)
        found = _first(rules, "lock-orientation", element)
        if found is None or not sees_through(found[1]):
            continue
        axes = _both_locks(axes, free_axes_option(*found))
        by = found[0] if by is None else by
    if axes is not None:
        effects.free_axes[p] = axes
        if by is not None:
            # The rule named when layFlat yields to the lock.
            effects.locked_by.setdefault(p, by)


def _both_locks(a: list[int] | None, b: list[int]) -> list[int] | None:
    """The turns two locks both allow, as free axes: none given, or two or more axes,
    allow every turn (None); one axis, a spin about it; [] none."""
    free_a = a is None or len(set(a)) >= 2
    free_b = len(set(b)) >= 2
    if free_a:
        return None if free_b else sorted(set(b))
    assert a is not None
    if free_b:
        return sorted(set(a))
    return sorted(set(a)) if set(a) == set(b) else []
