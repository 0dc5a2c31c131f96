"""bench.layers_ab: its seeded requests are the same every run, and a differing answer
is reported (and fails the run); it does not pack here (the sets take seconds)."""

from __future__ import annotations

import json

from bench import layers_ab


def test_the_sets_are_seeded_and_as_documented() -> None:
    first = [json.dumps(r, sort_keys=True) for _, r in layers_ab.requests("all")]
    again = [json.dumps(r, sort_keys=True) for _, r in layers_ab.requests("all")]
    assert first == again
    assert len(first) == 8 + 160 + 3
    prices = {
        next(iter(layers_ab.priced(seed)["boxTypes"][0].keys() & {"price", "rateTable"}), "none")
        for seed in range(160)
    }
    assert prices == {"price", "rateTable", "none"}


def test_a_different_answer_is_reported() -> None:
    here = [("a", 1.0, "h1"), ("b", 2.0, "h2")]
    lines, differ = layers_ab.report(here, [("a", 3.0, "h1"), ("b", 4.0, "other")])
    assert differ == 1
    assert lines[0].endswith("same") and lines[1].endswith("DIFFERS")
    assert lines[-1] == "CPU in all: 3.00 s, baseline 7.00 s; 1 answers differ"
    alone, none = layers_ab.report(here, [])
    assert none == 0 and alone[-1] == "CPU in all: 3.00 s"


def test_the_catalogue_set_is_seeded_and_its_requests_are_valid() -> None:
    from cartonize.models import validate_request

    first = [json.dumps(r, sort_keys=True) for _, r in layers_ab.requests("catalogue")]
    again = [json.dumps(r, sort_keys=True) for _, r in layers_ab.requests("catalogue")]
    assert first == again and len(first) == 7
    for _, request in layers_ab.requests("catalogue"):
        validate_request(request)
