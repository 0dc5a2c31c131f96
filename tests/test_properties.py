"""Property tests: every pack of a random request is valid and reproducible."""

from __future__ import annotations

import copy
import json
from typing import Any

import cartonize
from hypothesis import given, settings

from tests.strategies import (
    cohort_pack_requests,
    examples,
    generator_pack_requests,
    nested_pack_requests,
    pack_requests,
    subspace_pack_requests,
    tuned_pack_requests,
)
from tests.validator import packing_of, validate

Wire = dict[str, Any]


def pack_wire(request: Wire) -> Wire:
    """Pack ``request`` and return the response as wire JSON (camelCase, no nulls)."""
    response: Wire = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    return response


@settings(max_examples=examples(150), deadline=None)
@given(pack_requests())
def test_every_pack_passes_the_validator(pack_request: Wire) -> None:
    _assert_valid_and_untouched(pack_request)


@settings(max_examples=examples(100), deadline=None)
@given(cohort_pack_requests())
def test_every_cohort_pack_passes_the_validator(pack_request: Wire) -> None:
    # Item sets sharing refIds, unit ladders, rules and pre-packed boxes whose given items
    # already form more cohorts than cohortMax (the schema fuzz's lost request).
    assert validate(pack_request, pack_wire(pack_request)) == []


@settings(max_examples=examples(50), deadline=None)
@given(pack_requests())
def test_same_request_packs_the_same_way(pack_request: Wire) -> None:
    first = packing_of(pack_wire(pack_request))
    second = packing_of(pack_wire(pack_request))
    assert first == second


@settings(max_examples=examples(100), deadline=None)
@given(tuned_pack_requests())
def test_every_tuned_pack_passes_the_validator(pack_request: Wire) -> None:
    _assert_valid_and_untouched(pack_request)


@settings(max_examples=examples(100), deadline=None)
@given(generator_pack_requests())
def test_every_pack_with_box_type_generators_passes_the_validator(pack_request: Wire) -> None:
    _assert_valid_and_untouched(pack_request)


@settings(max_examples=examples(60), deadline=None)
@given(nested_pack_requests())
def test_every_nested_pack_passes_the_validator(pack_request: Wire) -> None:
    _assert_valid_and_untouched(pack_request)


@settings(max_examples=examples(80), deadline=None)
@given(subspace_pack_requests())
def test_every_pack_with_nested_internal_spaces_passes_the_validator(
    pack_request: Wire,
) -> None:
    _assert_valid_and_untouched(pack_request)


def _assert_valid_and_untouched(pack_request: Wire) -> None:
    """The pack of ``pack_request`` passes the validator and leaves the request as it was;
    a failure carries the request's JSON, to replay it outside hypothesis."""
    before = copy.deepcopy(pack_request)
    response = pack_wire(pack_request)
    assert pack_request == before, "pack() must not modify its request"
    problems = validate(pack_request, response)
    assert problems == [], f"{problems}\nrequest: {json.dumps(pack_request)}"
