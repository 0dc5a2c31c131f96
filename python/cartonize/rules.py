"""Rules: which item sets a rule selects, and what each operation does to them.

Only `lock-orientation` changes packing so far; other operations are accepted
and reported in `warnings` until the rules issue lands."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from cartonize.errors import InvalidRequest
from cartonize.models import ItemMatch, ItemSet, Rule

__all__ = ["RuleEffects", "apply_rules", "item_matches"]

#: Operations whose effect is implemented.
_HONOURED = frozenset({"lock-orientation"})


@dataclass
class RuleEffects:
    """What the request's rules do to each item set (by position)."""

    free_axes: dict[int, list[int]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def item_matches(match: ItemMatch, item_set: ItemSet) -> bool:
    """True when `item_set` is selected by `match` (substring search, any expression)."""
    if match.all_items:
        selected = True
    else:
        value = _property(item_set, match.property_name or "name")
        expressions = [
            *(match.expressions or []),
            *([match.expression] if match.expression else []),
        ]
        if expressions:
            selected = value is not None and any(e in value for e in expressions)
        else:
            selected = bool(value)
    return selected != match.negate


def _property(item_set: ItemSet, name: str) -> str | None:
    if name == "name":
        return item_set.name
    if name == "sequence":
        return item_set.sequence
    value = (item_set.properties or {}).get(name)
    return None if value is None else str(value)


def _selects(rule: Rule, ref_id: int, item_set: ItemSet) -> bool:
    """A rule selects an item set by refId, sequence or match; the selectors are or-ed."""
    return (
        (rule.item_ref_id is not None and rule.item_ref_id == ref_id)
        or (rule.item_sequence is not None and rule.item_sequence == item_set.sequence)
        or (rule.item_match is not None and item_matches(rule.item_match, item_set))
    )


def _free_axes(index: int, rule: Rule) -> list[int]:
    raw = (rule.options or {}).get("freeAxes", [])
    if not isinstance(raw, list) or not all(
        isinstance(a, int) and not isinstance(a, bool) and 0 <= a <= 2 for a in raw
    ):
        raise InvalidRequest(
            "invalid rule options",
            f"rules[{index}].options.freeAxes: must be a list of axes 0 (x), 1 (y), 2 (z) "
            f"(got {raw!r})",
        )
    return sorted(set(raw))


def apply_rules(rules: Sequence[Rule], item_sets: Sequence[tuple[int, ItemSet]]) -> RuleEffects:
    """Resolve `rules` against the item sets, given as (refId, item set) pairs."""
    effects = RuleEffects()
    for index, rule in enumerate(rules):
        if rule.operation not in _HONOURED:
            effects.warnings.append(
                f"rules[{index}]: operation '{rule.operation}' is accepted but has no effect "
                "on packing yet"
            )
            continue
        axes = _free_axes(index, rule)
        if rule.item_ref_id is None and rule.item_sequence is None and rule.item_match is None:
            effects.warnings.append(
                f"rules[{index}]: selects no items (give itemRefId, itemSequence or itemMatch)"
            )
            continue
        for position, (ref_id, item_set) in enumerate(item_sets):
            if not _selects(rule, ref_id, item_set):
                continue
            if position in effects.free_axes:
                effects.warnings.append(
                    f"rules[{index}]: item refId {ref_id} is already locked by an earlier "
                    "lock-orientation rule, which wins"
                )
                continue
            effects.free_axes[position] = axes
    return effects
