"""Packing from several threads at once gives the same valid results as packing alone."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import cartonize

from tests.validator import packing_of, validate

Wire = dict[str, Any]

THREADS = 4


def pack_wire(request: Wire) -> Wire:
    """Pack ``request`` and return the response as wire JSON (camelCase, no nulls)."""
    response: Wire = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    return response


def mixed_order(seed: int) -> Wire:
    """About 200 units of 10 item sets into 4 box types, every item sort: ~40 ms of packing."""
    rng = random.Random(seed)

    def side(low: int, high: int) -> float:
        return rng.randint(low * 10, high * 10) / 10

    item_sets = [
        {
            "refId": ref_id,
            "dimensions": {"x": side(1, 12), "y": side(1, 12), "z": side(1, 12)},
            "weight": side(0, 5),
            "quantity": rng.randint(10, 30),
        }
        for ref_id in range(10)
    ]
    box_types = [
        {"refId": 100 + n, "dimensions": dims, "weightMax": 150, "weightTare": 1}
        for n, dims in enumerate(
            [
                {"x": 12, "y": 12, "z": 12},
                {"x": 16, "y": 16, "z": 20},
                {"x": 20, "y": 24, "z": 24},
                {"x": 24, "y": 30, "z": 36},
            ]
        )
    ]
    # itemSort "all" makes the engine, not the Python glue, most of each call's time,
    # so the threads really overlap inside the engine.
    return {"itemSets": item_sets, "boxTypes": box_types, "itemSort": "all", "includeImages": False}


def test_concurrent_packs_match_sequential_packs() -> None:
    requests = [mixed_order(seed) for seed in range(2 * THREADS)]
    sequential = [pack_wire(request) for request in requests]
    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        concurrent = list(pool.map(pack_wire, requests))
    for request, alone, together in zip(requests, sequential, concurrent, strict=True):
        assert validate(request, together) == []
        assert packing_of(together) == packing_of(alone)
