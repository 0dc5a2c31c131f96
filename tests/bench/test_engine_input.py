"""bench.engine_input writes what cartonize.pack hands the engine, for each workload."""

from __future__ import annotations

import json

import cartonize

from bench.engine_input import engine_input, one_box_type
from tests.validator import validate


def test_one_box_type_requests_are_seeded_valid_and_one_engine_call() -> None:
    assert one_box_type(33) == one_box_type(33) != one_box_type(34)
    request = one_box_type(33)
    assert len(request["boxTypes"]) == 1
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    assert validate(request, response) == []
    engine = json.loads(engine_input(request))
    assert len(engine["boxTypes"]) == 1
    assert sum(item["quantity"] for item in engine["items"]) == sum(
        s["quantity"] for s in request["itemSets"]
    )
