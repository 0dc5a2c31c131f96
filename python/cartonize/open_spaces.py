"""internal-space `blocking: false`: the space's bounding box does not block the other
items of the box holding its item (an open crate, the underside of a table), so what the
space's own contents leave free is open to them. The engine packs cuboids, so such an
item stands in a box as its shell (the item less its space, at most six cuboids) and
its space's contents, fixed where the first pack put them (pre-packed, virtual: room
and weight, no count), while the other items pack again around them (subspaces.py).
Here: the shell, the fixed items, the box figures of an open item, and when a request
allows packing again."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from cartonize.items import box_center_of_mass, point_string
from cartonize.models import Box, Dimensions, Item, ItemEntry, PackRequest, Point
from cartonize.subspace_hosts import Host

__all__ = ["entries", "fixed_items", "may_pack_around", "open_volume_figures", "shell"]

Vec = tuple[float, float, float]

#: Rules under which the other items may pack around fixed open items: the rest
#: (exclusions, fragile loads, count rules, reshaping rules, stages) would have to see
#: the fixed pieces as the item they stand for and its contents, which they do not.
_ALLOWED_WITH_OPEN_SPACES = frozenset(
    {"internal-space", "lock-orientation", "alternate-dimensions", "set-properties"}
)


def may_pack_around(req: PackRequest) -> bool:
    """Whether the items of `req` may pack again around open items (module docstring):
    not with rules beyond `_ALLOWED_WITH_OPEN_SPACES`, per-box count limits, a lookback
    window, a support check or box-count limits per item set or sequence."""
    types = [*req.resolved_box_types(), *([req.box_type_defaults] if req.box_type_defaults else [])]
    caps = any(
        getattr(t, name) not in (None, 0, [0, 0, 0])
        for t in [req, *types]
        for name in ("items_per_box_max", "item_sets_per_box_max", "items_inline_max")
        if hasattr(t, name)
    )
    return (
        all(r.operation in _ALLOWED_WITH_OPEN_SPACES for r in req.rules)
        and not caps
        and not req.boxes
        and not req.box_type_generators
        and req.box_type_choice_lookback < 0
        and req.allowable_overhang < 0
        and req.boxes_per_item_set_max <= 0
        and req.boxes_per_sequence_max <= 0
    )


def shell(dims: Vec, at: Vec, space: Vec) -> list[tuple[Vec, Vec]]:
    """The item of `dims` less its space (`space` at `at`), as (origin, dims) cuboids in
    the item's coordinates: the slabs below and above the space along x, then beside it
    along y, then along z; empty slabs left out."""
    out: list[tuple[Vec, Vec]] = []
    lo, hi = at, tuple(a + s for a, s in zip(at, space, strict=True))
    # Each step keeps the span of the earlier axes to the space's, so the slabs never meet.
    span_lo, span_hi = [0.0, 0.0, 0.0], list(dims)
    for axis in range(3):
        for start, end in ((0.0, lo[axis]), (hi[axis], dims[axis])):
            if end - start <= 1e-9:
                continue
            o, d = list(span_lo), [h - low for low, h in zip(span_lo, span_hi, strict=True)]
            o[axis], d[axis] = start, end - start
            out.append(((o[0], o[1], o[2]), (d[0], d[1], d[2])))
        span_lo[axis], span_hi[axis] = lo[axis], hi[axis]
    return out


def _vec(p: Point | Dimensions | None) -> Vec:
    return (p.x, p.y, p.z) if p is not None else (0.0, 0.0, 0.0)


def fixed_items(item: Item, host: Host, contents: Iterable[Item]) -> list[Item]:
    """What stands for open item `item` (packed, with `host`'s space holding `contents`)
    in a pre-packed box: its shell, the first piece with its weight and properties (so
    weight and property sums are the item's), then its contents, weighing nothing (the
    item's weight is theirs already)."""
    base = _vec(item.origin)
    space = host.box_type.dimensions
    at = tuple(b + a for b, a in zip(base, host.origin, strict=True))
    out: list[Item] = []
    for o, d in shell(_vec(item.dimensions), host.origin, _vec(space)):
        first = not out
        out.append(
            Item.model_construct(
                ref_id=item.ref_id,
                name=item.name,
                sequence=item.sequence,
                properties=item.properties if first else None,
                weight=item.weight if first else 0.0,
                virtual=True,
                quantity=1,
                dimensions=Dimensions(x=d[0], y=d[1], z=d[2]),
                origin=Point(x=base[0] + o[0], y=base[1] + o[1], z=base[2] + o[2]),
            )
        )
    for inner in contents:
        o = _vec(inner.origin)
        out.append(
            Item.model_construct(
                ref_id=item.ref_id,
                name=item.name,
                weight=0.0,
                virtual=True,
                quantity=1,
                dimensions=inner.dimensions,
                origin=Point(x=at[0] + o[0], y=at[1] + o[1], z=at[2] + o[2]),
            )
        )
    return out


def open_volume_figures(box: Box, open_volume: Callable[[Item], float]) -> None:
    """Bring the volume, count and centre-of-mass figures of `box` up to date with its
    items, an open item taking its volume less `open_volume(item)` (its space: what the
    space holds counts in the space's own box)."""
    items = [e.item for e in box.items]
    net = sum(
        _vec(i.dimensions)[0] * _vec(i.dimensions)[1] * _vec(i.dimensions)[2] - open_volume(i)
        for i in items
    )
    box.volume_net = net
    box.volume_used = net + (box.volume_reserved or 0.0)
    volume_max = box.volume_max or 0.0
    box.volume_remaining = max(volume_max - box.volume_used, 0.0)
    box.volume_utilization = min(box.volume_used / volume_max, 1.0) if volume_max else 0.0
    box.len_items = sum(i.quantity or 1 for i in items if not i.virtual)
    box.len_units = sum(1 for i in items if not i.virtual)
    if items:
        box.center_of_mass = box_center_of_mass(items)
        box.center_of_mass_string = point_string(box.center_of_mass)


def entries(items: Iterable[Item]) -> list[ItemEntry]:
    """`items` as the entries of a box."""
    return [ItemEntry.model_construct(item=i) for i in items]
