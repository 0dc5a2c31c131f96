"""Pre-packed boxes (`boxes` in the request): their box type and items, read from the
request for the engine.

A pre-packed box's type is its `boxType`, completed by the box's own box fields (so a box
echoed from an earlier response, whose own `price` is the computed cost, keeps its type's
fixed price), then by `boxTypeDefaults`. Each of its items stands for `quantity` units
(default 1); an item with an `origin` stays exactly there with the dimensions given (as
placed) and must be one unit; one without is placed by the engine, in the order given,
where a unit would go. Items that do not fit, overlap, stick out or are too heavy for the
box are a 422 naming them (raised by the engine with the same paths).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cartonize.errors import InvalidRequest
from cartonize.items import check_center_of_mass
from cartonize.models import BoxProperties, BoxType, Item, ItemSet, PackRequest, Point

__all__ = ["Prepacked", "read_prepacked"]


@dataclass(frozen=True)
class Prepacked:
    """The request's pre-packed boxes, in order."""

    box_types: list[BoxType] = field(default_factory=list)
    #: One item set per pre-packed item entry, all boxes in order.
    item_sets: list[ItemSet] = field(default_factory=list)
    #: Per box: one (item set index, unit, origin) per unit, in the order given.
    units: list[list[tuple[int, int, Point | None]]] = field(default_factory=list)


def read_prepacked(req: PackRequest) -> Prepacked:
    """The box types and items of `req.boxes`; raises InvalidRequest for a box without
    dimensions or weightMax, or an item with an origin standing for several units."""
    out = Prepacked()
    for b, box in enumerate(req.boxes):
        out.box_types.append(_box_type(b, box, req.box_type_defaults))
        units: list[tuple[int, int, Point | None]] = []
        for i, entry in enumerate(box.items):
            item = entry.item
            quantity = 1 if item.quantity is None else item.quantity
            where = f"boxes[{b}].items[{i}].item"
            if quantity < 1:
                raise InvalidRequest(
                    "invalid request", f"{where}.quantity: must be at least 1 in a pre-packed box"
                )
            if item.origin is not None and quantity != 1:
                raise InvalidRequest(
                    "invalid request",
                    f"{where}.quantity: an item with an origin is one unit (got {quantity}); "
                    "list each unit with its own origin, or drop the origin",
                )
            set_index = len(out.item_sets)
            center_of_mass = _own_center_of_mass(item.center_of_mass, item.origin, item, where)
            given = ItemSet.model_construct(
                ref_id=item.ref_id,
                name=item.name,
                color=item.color,
                weight=item.weight,
                sequence=item.sequence,
                dimensions=item.dimensions,
                center_of_mass=center_of_mass,
                virtual=item.virtual,
                properties=item.properties,
                quantity=quantity,
            )
            # Here, where the path is the caller's: later it would name the item set the
            # pre-packed item becomes (itemSets[n], past the request's own).
            check_center_of_mass(given, where)
            out.item_sets.append(given)
            units += [(set_index, unit, item.origin) for unit in range(quantity)]
        out.units.append(units)
    return out


def _own_center_of_mass(
    com: Point | None, origin: Point | None, item: Item, where: str
) -> Point | None:
    """A pre-packed item's centre of mass as an offset from its back-bottom corner. An item
    with an `origin` is placed, as a packed item of a response is, and gives it box-local as
    a response reports it (so a box echoed from a response packs again): it must lie within
    the item where it stands."""
    if com is None or origin is None:
        return com
    dims = item.dimensions
    offset = (com.x - origin.x, com.y - origin.y, com.z - origin.z)
    if dims is not None and not all(
        -_SLACK * max(1.0, d) <= o <= d * (1 + _SLACK) + _SLACK
        for o, d in zip(offset, (dims.x, dims.y, dims.z), strict=True)
    ):
        ends = ", ".join(
            f"{lo:g}..{lo + d:g}"
            for lo, d in zip((origin.x, origin.y, origin.z), (dims.x, dims.y, dims.z), strict=True)
        )
        raise InvalidRequest(
            "invalid centre of mass",
            f"{where}.centerOfMass: an item with an origin gives its centre of mass in the "
            f"box's coordinates, as a response reports it: it must lie within the item, {ends} "
            f"(got {com.x:g}, {com.y:g}, {com.z:g})",
        )
    clamp = [
        min(max(o, 0.0), d)
        for o, d in zip(offset, (dims.x, dims.y, dims.z) if dims else offset, strict=True)
    ]
    return Point.model_construct(x=clamp[0], y=clamp[1], z=clamp[2])


#: Rounding a box-local centre of mass may carry (the response's sums of floats).
_SLACK = 1e-9


def _box_type(index: int, box: BoxProperties, defaults: BoxProperties | None) -> BoxType:
    own = box.model_fields_set & BoxProperties.model_fields.keys()
    # Every field is given (dimensions None when the box has none); only its own count as set.
    resolved = BoxType.model_construct(
        _fields_set=set(own), **{name: getattr(box, name) for name in BoxProperties.model_fields}
    )
    box_type = getattr(box, "box_type", None)
    if box_type is not None:
        # The box type's own values win: an echoed response box carries its computed cost.
        resolved = box_type.with_defaults(resolved)
    resolved = resolved.with_defaults(defaults)
    where = f"boxes[{index}]"
    if resolved.dimensions is None:
        raise InvalidRequest(
            "invalid request", f"{where}.dimensions: required, on the box or in its boxType"
        )
    if resolved.weight_max is None:
        raise InvalidRequest(
            "invalid request",
            f"{where}.weightMax: required, on the box, its boxType or boxTypeDefaults",
        )
    return resolved
