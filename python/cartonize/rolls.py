"""Rule `irregular` with `type: "roll"`: long flexible goods (fabric, film, cable) shipped
wound on cores. Each unit of the item set is a length of material (its longest side), as
wide as its middle side and as thick as its shortest; it is wound into as few rolls of
equal length as `maxDiameter` and `maxWeight` allow, and the rolls are packed as D x D x
width cuboids. See docs/rules.md."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from cartonize.errors import InvalidRequest
from cartonize.models import MAX_AMOUNT, MAX_LENGTH, Dimensions, ItemSet

__all__ = ["Roll", "roll_of", "rolled_item_set"]


@dataclass(frozen=True)
class Roll:
    """How one unit of material is wound: `count` rolls of diameter `diameter` weighing
    `weight` each (spool included)."""

    count: int
    diameter: float
    width: float
    weight: float


def _number(
    index: int, options: dict[str, Any], name: str, *, required: bool, most: float
) -> float | None:
    """Option `name`, a number from 0 to `most` (a length's or a weight's bound: beyond
    them a roll's diameter overflowed, a 500)."""
    value = options.get(name)
    if value is None:
        if required:
            raise InvalidRequest(
                "invalid rule options",
                f"rules[{index}].options.{name}: a roll needs {name} (a number > 0)",
            )
        return None
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value <= most:
        raise InvalidRequest(
            "invalid rule options",
            f"rules[{index}].options.{name}: must be a number from 0 to {most:g} (got {value!r})",
        )
    return float(value)


@dataclass(frozen=True)
class RollOptions:
    """An irregular rule's options, checked."""

    core: float
    spool: float
    max_diameter: float
    max_weight: float | None
    min_length: float


def roll_options(index: int, options: dict[str, Any]) -> RollOptions:
    """The options of irregular rule `index`; raises `InvalidRequest` naming the field."""
    kind = options.get("type", "roll")
    if kind != "roll":
        raise InvalidRequest(
            "invalid rule options",
            f"rules[{index}].options.type: irregular supports type 'roll' (got {kind!r})",
        )
    core = _number(index, options, "innerDiameter", required=False, most=MAX_LENGTH) or 0.0
    spool = _number(index, options, "spoolWeight", required=False, most=MAX_AMOUNT) or 0.0
    max_diameter = _number(index, options, "maxDiameter", required=True, most=MAX_LENGTH) or 0.0
    max_weight = _number(index, options, "maxWeight", required=False, most=MAX_AMOUNT)
    min_length = _number(index, options, "minRollLength", required=False, most=MAX_LENGTH) or 0.0
    if max_diameter <= core:
        raise InvalidRequest(
            "invalid rule options",
            f"rules[{index}].options.maxDiameter: must exceed innerDiameter ({core:g})",
        )
    if max_weight is not None and max_weight <= spool:
        raise InvalidRequest(
            "invalid rule options",
            f"rules[{index}].options.maxWeight: must exceed spoolWeight ({spool:g})",
        )
    return RollOptions(core, spool, max_diameter, max_weight, min_length)


def roll_of(index: int, options: dict[str, Any], item_set: ItemSet) -> tuple[Roll, list[str]]:
    """The rolls one unit of `item_set` makes under rule `index`'s options, and warnings.

    Raises `InvalidRequest` naming the option when the options are malformed."""
    checked = roll_options(index, options)
    core, spool, min_length = checked.core, checked.spool, checked.min_length
    max_diameter, max_weight = checked.max_diameter, checked.max_weight
    d = item_set.dimensions
    thickness, width, length = sorted((d.x, d.y, d.z))
    # Material a roll of diameter D holds: the annulus area over the thickness.
    by_diameter = math.pi * (max_diameter**2 - core**2) / (4 * thickness)
    per_length = item_set.weight / length
    most = by_diameter
    if max_weight is not None and per_length > 0:
        most = min(most, (max_weight - spool) / per_length)
    count = max(1, math.ceil(length / most - 1e-9))
    each = length / count
    warnings = []
    if count > 1 and each < min_length:
        warnings.append(
            f"rules[{index}]: item refId {item_set.ref_id} needs {count} rolls of {each:g}, "
            f"shorter than minRollLength {min_length:g}"
        )
    # Rounded up to thousandths: a roll is never drawn smaller than it winds.
    diameter = math.ceil(math.sqrt(core**2 + 4 * thickness * each / math.pi) * 1000) / 1000
    return Roll(count, diameter, width, per_length * each + spool), warnings


def rolled_item_set(item_set: ItemSet, roll: Roll) -> ItemSet:
    """`item_set` as its rolls: quantity times the rolls per unit, each D x D x width,
    its mass centred (a `centerOfMass` of the flat material no longer applies)."""
    return item_set.model_copy(
        update={
            "dimensions": Dimensions(x=roll.diameter, y=roll.diameter, z=roll.width),
            "weight": roll.weight,
            "quantity": item_set.quantity * roll.count,
            "center_of_mass": None,
        }
    )
