"""Unit numbers: pack() numbers the units of the item sets sharing a refId on, in request
order (`uniqueId` "<refId>-<n>"). Rules that pack a request in parts (group-pack,
bounded-fill, internal-space) use these helpers to give every unit the number it has
among the request's units, whatever part packed it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from cartonize.errors import InvalidRequest
from cartonize.items import unit_ladder
from cartonize.models import Item, ItemSet, Rule

__all__ = [
    "first_units",
    "locate",
    "numbered",
    "renamed_rules",
    "renumber",
    "renumber_by",
    "without_operations",
]


def numbered(item_set: ItemSet) -> int:
    """How many unit numbers pack() gives `item_set`: one per unit it packs as, so a case
    of its `dimensionSets` takes one number, not one per each (docs/decisions.md)."""
    if item_set.quantity <= 0:
        return 0
    if not item_set.dimension_sets:
        return item_set.quantity
    try:
        return sum(u.item_set.quantity for u in unit_ladder(item_set, "itemSets"))
    except InvalidRequest:
        return item_set.quantity  # a malformed ladder: pack() refuses the request (422)


def first_units(item_sets: Sequence[ItemSet]) -> list[int]:
    """The number of each item set's first unit among the units of its refId, as pack()
    numbers them (item sets without units take no numbers)."""
    so_far: dict[int | None, int] = {}
    out = []
    for s in item_sets:
        first = so_far.get(s.ref_id, 0)
        out.append(first)
        if s.quantity > 0:
            so_far[s.ref_id] = first + numbered(s)
    return out


def locate(
    item: Item, item_sets: Sequence[ItemSet], firsts: Sequence[int]
) -> tuple[int, int] | None:
    """(position of the item set, unit number within it) of a response item packed from
    `item_sets` (whose first units are `firsts`), or None when it is not one of theirs."""
    prefix, _, number = (item.unique_id or "").rpartition("-")
    if not number.isdigit() or prefix != str(item.ref_id):
        return None
    n = int(number)
    for position, (s, first) in enumerate(zip(item_sets, firsts, strict=True)):
        if s.ref_id == item.ref_id and s.quantity > 0 and first <= n < first + numbered(s):
            return position, n - first
    return None


def renumber(items: Iterable[Item], item_sets: Sequence[ItemSet], targets: Sequence[int]) -> None:
    """Give every item packed from `item_sets` the uniqueId "<refId>-<targets[p] + n>",
    p being its item set's position and n its number within the set."""
    firsts = first_units(item_sets)
    for item in list(items):
        found = locate(item, item_sets, firsts)
        if found is not None:
            position, n = found
            item.unique_id = f"{item.ref_id}-{targets[position] + n}"


def renumber_by(
    items: Iterable[Item], item_sets: Sequence[ItemSet], numbers: Sequence[Sequence[int]]
) -> list[tuple[Item, int, int]]:
    """Give every item packed from `item_sets` the uniqueId "<refId>-<numbers[p][n]>", p
    being its item set's position and n its number within the set; returns (item, p, n)
    for each item renumbered."""
    firsts = first_units(item_sets)
    found_all = []
    for item in list(items):
        found = locate(item, item_sets, firsts)
        if found is not None:
            position, n = found
            item.unique_id = f"{item.ref_id}-{numbers[position][n]}"
            found_all.append((item, position, n))
    return found_all


_RULE_INDEX = re.compile(r"rules\[(\d+)\]")


def without_operations(rules: Sequence[Rule], *operations: str) -> tuple[list[Rule], list[int]]:
    """`rules` without those of `operations`, and for each rule kept its index in `rules`
    (so that warnings of a pack of the rest can name the request's rules)."""
    kept = [(i, r) for i, r in enumerate(rules) if r.operation not in operations]
    return [r for _, r in kept], [i for i, _ in kept]


def renamed_rules(warnings: Iterable[str], indices: Sequence[int]) -> list[str]:
    """`warnings` of a pack whose rule i is the request's rule `indices[i]`, naming the
    request's rules."""

    def rename(match: re.Match[str]) -> str:
        i = int(match.group(1))
        return f"rules[{indices[i]}]" if i < len(indices) else match.group(0)

    return [_RULE_INDEX.sub(rename, w) for w in warnings]
