"""bench.limited: its sets are what its docstring says, its figures count them, and a
run compared with its own record is neither better nor worse anywhere."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bench import limited

SET_LINE = re.compile(
    r"^(orders|tight): (\d+) requests, (\d+) with units left over \((\d+) units\)"
)
VERSUS_LINE = re.compile(r"^  against .*: (\d+) better, (\d+) worse$")


def test_the_sets_are_limited_and_small() -> None:
    orders = list(limited.order_requests(2))
    # Two orders, two goals: boxesMax at 1, k - 1, k, k + 1 (fewer when they coincide)
    # and boxesPerItemSetMax 1; then the 1,500 small orders.
    assert 1500 + 2 * 2 * 2 <= len(orders) <= 1500 + 2 * 2 * 5
    assert all("boxesMax" in r or "boxesPerItemSetMax" in r for r in orders)
    tight = list(limited.tight_requests(200))
    assert 0 < len(tight) <= 200
    for req in tight:
        assert req["boxesMax"] == 1 and len(req["boxTypes"]) == 1
        assert sum(s["quantity"] for s in req["itemSets"]) <= 12


def test_a_run_compared_with_its_own_record_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A smaller orders set keeps the test fast: 40 of the seeded small orders.
    small = list(limited.order_requests(1))[:40]
    monkeypatch.setattr(limited, "order_requests", lambda count: iter(small))
    record = tmp_path / "limited.json"
    assert limited.main(["--orders", "1", "--random", "60", "--record", str(record)]) == 0
    first = capsys.readouterr().out.splitlines()
    results = json.loads(record.read_text())
    matches = [m for m in map(SET_LINE.match, first) if m]
    assert [m[1] for m in matches] == ["orders", "tight"]
    for m in matches:
        name, count, over, units = m[1], int(m[2]), int(m[3]), int(m[4])
        assert count == len(results[name])
        assert over == sum(1 for r in results[name] if r[0])
        assert units == sum(r[0] for r in results[name])
    assert limited.main(["--orders", "1", "--random", "60", "--compare", str(record)]) == 0
    versus = [VERSUS_LINE.match(line) for line in capsys.readouterr().out.splitlines()]
    assert [(int(m[1]), int(m[2])) for m in versus if m] == [(0, 0), (0, 0)]
