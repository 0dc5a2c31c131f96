"""Rule `internal-space`: which item sets carry an internal space (the hosts), the
space's options, the order hosts are filled in and what may enter a host's space.
subspaces.py packs with them; docs/rules.md (`internal-space`) says what they mean."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cartonize.errors import InvalidRequest
from cartonize.grouping import selects
from cartonize.models import (
    MAX_AMOUNT,
    MAX_LENGTH,
    BoxType,
    Dimensions,
    ItemSet,
    PackRequest,
    Rule,
    SpaceLook,
)
from cartonize.nesting import sees_through
from cartonize.rules import item_matches, targets_box_type

__all__ = ["Host", "fill_order", "find_hosts", "may_enter", "subspace_options"]

#: Operations that change an item's shape, winning over internal-space.
_WINS_OVER_SUBSPACE = ("irregular", "group-pack", "bounded-fill")

#: Tolerance of "fits inside", in the request's length unit.
_EPS = 1e-9


@dataclass(frozen=True)
class Host:
    """An item set whose every unit carries an internal space."""

    #: Position of the item set in the request.
    position: int
    #: The internal-space rule that gives it (the first selecting it).
    rule_index: int
    box_type: BoxType
    #: Back-bottom corner of the space relative to the item's.
    origin: tuple[float, float, float]
    look: SpaceLook
    #: False: what the space leaves free is open to the items of the box holding the
    #: item (open_spaces.py).
    blocking: bool = True


def _invalid(index: int, option: str, fix: str, got: object) -> InvalidRequest:
    return InvalidRequest(
        "invalid rule options", f"rules[{index}].options.{option}: {fix} (got {got!r})"
    )


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def subspace_options(
    index: int, rule: Rule
) -> tuple[BoxType, tuple[float, float, float], SpaceLook, bool]:
    """The subspace box type, origin, look in pictures and `blocking` of internal-space
    rule `index`; raises `InvalidRequest` naming the field when malformed."""
    options = rule.options or {}
    kind = options.get("type", "subspace")
    if kind != "subspace":
        raise _invalid(index, "type", "internal-space supports type 'subspace'", kind)
    for flag in ("blocking", "display", "displayChildren"):
        if flag in options and not isinstance(options[flag], bool):
            raise _invalid(index, flag, "must be true or false", options[flag])
    raw = options.get("boxType")
    if not isinstance(raw, dict):
        raise _invalid(index, "boxType", "internal-space needs boxType {dimensions, ...}", raw)
    dims = raw.get("dimensions")
    # Within the bounds of a box type's own fields: beyond them BoxType refused the
    # space inside pack() (a 500).
    if not isinstance(dims, dict) or not all(
        _number(dims.get(a)) and 0 < dims[a] <= MAX_LENGTH for a in "xyz"
    ):
        raise _invalid(
            index,
            "boxType.dimensions",
            f"must be {{x, y, z}}, each > 0 and <= {MAX_LENGTH:g}",
            dims,
        )
    weight_max = raw.get("weightMax", 0)
    if not _number(weight_max) or not 0 <= weight_max <= MAX_AMOUNT:
        raise _invalid(
            index, "boxType.weightMax", f"must be a number from 0 to {MAX_AMOUNT:g}", weight_max
        )
    name = raw.get("name")
    if name is not None and not isinstance(name, str):
        raise _invalid(index, "boxType.name", "must be a string", name)
    origin = options.get("origin", {})
    if not isinstance(origin, dict) or not all(
        _number(origin.get(a, 0)) and 0 <= origin.get(a, 0) <= MAX_LENGTH for a in "xyz"
    ):
        raise _invalid(
            index, "origin", f"must be a point {{x, y, z}}, each from 0 to {MAX_LENGTH:g}", origin
        )
    box_type = BoxType(
        name=name or "internal space",
        ref_id=raw.get("refId") if isinstance(raw.get("refId"), int) else None,
        dimensions=Dimensions(x=dims["x"], y=dims["y"], z=dims["z"]),
        weight_max=float(weight_max),
        weight_tare=0.0,
        # "values specified are used except price and rate": a subspace costs nothing.
        price=0,
    )
    at = (float(origin.get("x", 0)), float(origin.get("y", 0)), float(origin.get("z", 0)))
    look = SpaceLook(
        outline=bool(options.get("display", False)),
        children=bool(options.get("displayChildren", False)),
    )
    return box_type, at, look, bool(options.get("blocking", True))


def find_hosts(req: PackRequest, item_sets: list[ItemSet], warnings: list[str]) -> dict[int, Host]:
    """The hosts among `item_sets` (with refIds assigned), by position: the first
    internal-space rule selecting an item set gives it its space, unless a rule that
    reshapes the item wins, the item fits no box type as given or it is a box standing in
    as an item (pack-sequence; it carries its contents). A host's dimensionSets
    are dropped from `item_sets` (each unit carries its own space). Adds a warning for
    each rule that loses."""
    hosts: dict[int, Host] = {}
    for index, rule in enumerate(req.rules):
        if rule.operation != "internal-space":
            continue
        box_type, origin, look, blocking = subspace_options(index, rule)
        for p, s in enumerate(item_sets):
            if not selects(rule, s):
                continue
            if s.nested:
                # A box of an earlier pack-sequence stage standing in as an item: its
                # inside is its contents, where a space would overlap them.
                warnings.append(
                    f"rules[{index}]: item refId {s.ref_id} is a box of an earlier "
                    "pack-sequence stage, full of its contents; it gets no internal space"
                )
                continue
            if p in hosts:
                warnings.append(
                    f"rules[{index}]: item refId {s.ref_id} already has an internal space by "
                    f"rules[{hosts[p].rule_index}], which wins"
                )
                continue
            winner = next(
                (
                    (i, r)
                    for i, r in enumerate(req.rules)
                    if r.operation in _WINS_OVER_SUBSPACE and selects(r, s)
                ),
                None,
            )
            if winner is not None:
                warnings.append(
                    f"rules[{index}] (internal-space) and rules[{winner[0]}] "
                    f"({winner[1].operation}) both select item refId {s.ref_id}; "
                    f"{winner[1].operation} wins: the item has no internal space"
                )
                continue
            d, b = s.dimensions, box_type.dimensions
            if any(
                o + inner > outer + _EPS
                for o, inner, outer in zip(origin, (b.x, b.y, b.z), (d.x, d.y, d.z), strict=True)
            ):
                raise _invalid(
                    index,
                    "boxType.dimensions",
                    f"origin + dimensions must fit inside item refId {s.ref_id} "
                    f"({d.x:g} x {d.y:g} x {d.z:g})",
                    {"x": b.x, "y": b.y, "z": b.z},
                )
            if not req.box_type_generators and not any(
                _fits(d, t.dimensions) for t in req.resolved_box_types()
            ):
                warnings.append(
                    f"rules[{index}]: item refId {s.ref_id} fits no box type as given (an item "
                    "with an internal space is not turned); its subspace stays empty"
                )
                continue
            hosts[p] = Host(p, index, box_type, origin, look, blocking)
            if s.dimension_sets:
                # Each unit carries its own subspace: a host packs as eaches.
                item_sets[p] = s.model_copy(update={"dimension_sets": None})
                warnings.append(
                    f"rules[{index}]: item refId {s.ref_id} has an internal space, so it packs "
                    "as single units; its dimensionSets have no effect"
                )
    return hosts


def fill_order(hosts: dict[int, Host], item_sets: Sequence[ItemSet]) -> list[Host]:
    """The order hosts are filled in: smallest item first, then request order. A host
    may only go into the spaces of hosts after it, so nothing goes into its own item
    set's units and no chain of hosts closes on itself; as an item fits a space only
    when it is no larger along any axis (hosts are not turned), and a space lies within
    its item, this loses only chains of equal items whose space is the whole item."""

    def volume(p: int) -> float:
        d = item_sets[p].dimensions
        return d.x * d.y * d.z

    return [hosts[p] for p in sorted(hosts, key=lambda p: (volume(p), p))]


def _fits(item: Dimensions, space: Dimensions) -> bool:
    return item.x <= space.x + _EPS and item.y <= space.y + _EPS and item.z <= space.z + _EPS


def may_enter(req: PackRequest, unit: ItemSet, host: ItemSet) -> bool:
    """Whether `unit` (with whatever it carries) may go into `host`'s space. Not when an
    exclude or exclude-all rule keeps the host apart from the unit or anything inside it
    (whatever ignoreSubspaces: being inside the host is at least as close as sharing its
    box), nor when exclude rules that see through nesting keep any of them from every
    box type the host fits as given (the host would then find no box)."""
    inside = [unit, *(n.item for n in unit.nested)]
    for r in req.rules:
        if r.operation == "exclude" and any(
            (selects(r, item) and _targets_item(r, host))
            or (selects(r, host) and _targets_item(r, item))
            for item in inside
        ):
            return False
        if r.operation == "exclude-all" and any(
            item.ref_id != host.ref_id and (selects(r, item) or selects(r, host)) for item in inside
        ):
            return False
    banning = [
        r
        for r in req.rules
        if r.operation == "exclude"
        and sees_through(r)
        and any(selects(r, item) for item in inside)
        and (r.target_box_ref_ids or r.target_box_match is not None)
    ]
    if not banning or req.box_type_generators:
        return True
    return any(
        _fits(host.dimensions, t.dimensions) and not any(targets_box_type(r, t) for r in banning)
        for t in req.resolved_box_types()
    )


def _targets_item(rule: Rule, item_set: ItemSet) -> bool:
    return (
        item_set.ref_id in (rule.target_item_ref_ids or [])
        or (
            item_set.sequence is not None
            and item_set.sequence in (rule.target_item_sequences or [])
        )
        or (rule.target_item_match is not None and item_matches(rule.target_item_match, item_set))
    )
