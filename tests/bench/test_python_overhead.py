"""bench.python_overhead compare: records that differ only in the engine's build time
are the same answers; any other difference is reported."""

from __future__ import annotations

import json
from pathlib import Path

from bench import python_overhead


def _write(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))
    return path


def _record(name: str, built: str, cost: float) -> dict[str, object]:
    response = {"built": built, "totalCost": cost}
    return {"name": name, "pack": response, "http": {"status": 200, "body": dict(response)}}


def test_build_time_alone_is_no_difference(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.jsonl", [_record("one", "2026-11-23T16:57:52+00:00", 5.0)])
    b = _write(tmp_path / "b.jsonl", [_record("one", "2026-11-23T22:07:51+00:00", 5.0)])
    assert python_overhead.compare(a, b) == 0


def test_an_answer_that_changed_is_reported(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.jsonl", [_record("one", "x", 5.0), _record("two", "x", 1.0)])
    b = _write(tmp_path / "b.jsonl", [_record("one", "y", 5.0), _record("two", "y", 2.0)])
    assert python_overhead.compare(a, b) == 1


def test_records_mask_the_build_time() -> None:
    assert python_overhead._masked({"built": "2026", "totalCost": 1})["built"] == "*"
