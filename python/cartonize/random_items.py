"""Random item sets (`random: true`): n item sets of quantity n, reproducible by seed."""

from __future__ import annotations

import random
import zlib

from cartonize.models import Dimensions, ItemSet, PackRequest

__all__ = ["random_item_sets", "random_seed"]


def random_seed(req: PackRequest) -> int | None:
    """The seed a random request uses: the orderId's CRC-32 when `seedFromOrderId` and
    an orderId is given, else `seedValue`; None (fresh entropy) when `seed` is false."""
    if not req.seed:
        return None
    if req.seed_from_order_id and req.order_id and req.order_id.strip():
        return zlib.crc32(req.order_id.encode("utf-8"))
    return req.seed_value


def random_item_sets(req: PackRequest) -> list[ItemSet]:
    """`n` item sets with integer sides 1..randomMaxDimension, weights 1..randomMaxWeight
    (0 when it is 0) and quantity n, or 1..randomMaxQuantity when that is given."""
    rng = random.Random(random_seed(req))
    item_sets = []
    for ref_id in range(req.n):
        sides = [rng.randint(1, req.random_max_dimension) for _ in range(3)]
        weight = rng.randint(1, req.random_max_weight) if req.random_max_weight > 0 else 0
        quantity = (
            req.n if req.random_max_quantity is None else rng.randint(1, req.random_max_quantity)
        )
        item_sets.append(
            ItemSet(
                ref_id=ref_id,
                name=f"random item {ref_id}",
                dimensions=Dimensions(x=sides[0], y=sides[1], z=sides[2]),
                weight=weight,
                quantity=quantity,
            )
        )
    return item_sets
