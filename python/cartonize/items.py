"""What the request's item options do to the item kinds the engine packs: sequence
order (`sequenceSort`) and sequence distance (`maxSequenceDistance`). See
docs/decisions.md ("Sequences")."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from decimal import Decimal

from cartonize.models import ItemSet, PackRequest

__all__ = [
    "sequence_distance_pairs",
    "sequence_number",
    "sequence_order",
    "sequence_sort_warnings",
]

#: A numeric sequence: optional sign, digits, optional decimal part ("0401", "-3", "11.5").
_NUMBER = re.compile(r"[+-]?\d+(\.\d+)?")


def sequence_number(sequence: str | None) -> Decimal | None:
    """The numeric value of a sequence ("0401" is 401), or None when it is not a number."""
    if sequence is None:
        return None
    text = sequence.strip()
    return Decimal(text) if _NUMBER.fullmatch(text) else None


def sequence_order(item_sets: Sequence[ItemSet]) -> list[int]:
    """Positions of `item_sets` in sequence order: numeric sequences by value, then the
    other sequences by text, then item sets without one; ties by volume, largest first
    (the default sort), then as given."""

    def key(position: int) -> tuple[int, Decimal, str, float, int]:
        s = item_sets[position]
        volume = -(s.dimensions.x * s.dimensions.y * s.dimensions.z)
        number = sequence_number(s.sequence)
        if number is not None:
            return (0, number, "", volume, position)
        if s.sequence:
            return (1, Decimal(0), s.sequence, volume, position)
        return (2, Decimal(0), "", volume, position)

    return sorted(range(len(item_sets)), key=key)


def sequence_sort_warnings(req: PackRequest, item_sets: Sequence[ItemSet]) -> list[str]:
    """What `sequenceSort` overrides or cannot do in this request."""
    if not req.sequence_sort:
        return []
    warnings = []
    if "item_sort" in req.model_fields_set:
        warnings.append(
            f"sequenceSort is true: itemSort '{req.item_sort}' is not used; items are packed "
            "in sequence order"
        )
    if not any(s.sequence for s in item_sets):
        warnings.append(
            "sequenceSort is true but no item set has a sequence: items are packed by "
            "volume, largest first"
        )
    return warnings


def sequence_distance_pairs(
    sequences: Sequence[str | None], max_distance: int | None
) -> tuple[set[tuple[int, int]], list[str]]:
    """Pairs (p, q), p < q, of item kinds whose numeric sequences differ by more than
    `max_distance`, so never share a box, and a warning naming the sequences that are not
    numbers (they are not constrained). Pairwise is exact: the largest minus the smallest
    sequence in a box is at most D exactly when every two of them differ by at most D."""
    if max_distance is None:
        return set(), []
    numbers = [sequence_number(s) for s in sequences]
    pairs = {
        (p, q)
        for (p, a), (q, b) in itertools.combinations(enumerate(numbers), 2)
        if a is not None and b is not None and abs(a - b) > max_distance
    }
    odd = sorted({s for s, n in zip(sequences, numbers, strict=True) if s and n is None})
    warnings = []
    if odd:
        shown = ", ".join(repr(s) for s in odd[:5]) + (", ..." if len(odd) > 5 else "")
        warnings.append(
            f"maxSequenceDistance: sequences {shown} are not numbers, so the distance does "
            "not constrain their items"
        )
    return pairs, warnings
