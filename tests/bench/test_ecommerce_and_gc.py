"""bench.ecommerce's --options reach every order, and bench.gc_pauses measures a worker
that froze what loading the app left alive."""

from __future__ import annotations

import json
from pathlib import Path

from bench import ecommerce
from bench.gc_pauses import child


def test_options_reach_every_order(tmp_path: Path) -> None:
    # Order seed 4 (order-4): six cartons that go one to a box as given and two to a box
    # turned (docs/tuning.md).
    figures = {}
    for name, options in (
        ("default", "{}"),
        ("free", '{"itemInitialOrientationPreferred": false}'),
    ):
        out = tmp_path / f"{name}.json"
        argv = ["--orders", "1", "--seed", "4", "--processes", "1", "--json", str(out)]
        assert ecommerce.main([*argv, "--options", options]) == 0
        figures[name] = json.loads(out.read_text())
    assert figures["default"]["boxes"] > figures["free"]["boxes"]
    assert (
        figures["default"]["total cost, engine (cents)"]
        > figures["free"]["total cost, engine (cents)"]
    )


def test_gc_pauses_runs_a_frozen_worker() -> None:
    frozen = child(20, freeze=True)
    plain = child(20, freeze=False)
    assert frozen["frozen"] > 10_000 and plain["frozen"] == 0
    assert sum(frozen["collections"].values()) > 0
