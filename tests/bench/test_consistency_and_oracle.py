"""bench.consistency's figures add up and count what they say they count; bench.oracle's
DP finds the cheapest partition its single-box checks allow, and never costs more than the
engine's own boxes re-priced by those checks."""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Iterator
from pathlib import Path

import cartonize
import pytest

from bench import consistency, ecommerce, oracle
from bench.common import Wire, box_cost
from bench.ecommerce import orders
from bench.oracle import DEFAULT_OPTIONS, Multiset, Oracle, engine_parts

PAIR_LINE = re.compile(r"^  (\S+) +(\d+) pairs, B better (\d+), B worse (\d+)$")
REFIT_LINE = re.compile(r"^  (\S+) +refit alone, boxesMax 1: (\d+) boxes checked, (\d+) with")
REMOVAL_LINE = re.compile(r"^  (\S+) +(\d+) removals tried \((\d+) orders\), (\d+) gave a")


def test_consistency_figures_add_up(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "consistency.json"
    argv = ["--orders", "6", "--relations", "dual,limits,catalogue", "--processes", "1"]
    assert consistency.main([*argv, "--json", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    figures = json.loads(out.read_text())["relations"]

    pairs = [PAIR_LINE.match(line) for line in lines]
    seen = [(m[1], int(m[2]), int(m[3]), int(m[4])) for m in pairs if m]
    assert len(seen) == 4  # dual and limits, two goals each
    for goal, count, better, worse in seen:
        assert goal in consistency.GOALS
        assert count == 6 and better + worse <= count
    # every worse case is listed in the JSON and the first few printed
    for rel in ("dual", "limits"):
        for goal, f in figures[rel].items():
            assert len(f["cases"]) == f["worse"]
            assert all(tuple(c["b"]) > tuple(c["a"]) for c in f["cases"])
            printed = [line for line in lines if line.startswith("    worse: ")]
            assert len(printed) >= min(f["worse"], consistency.SHOWN)
            assert goal in consistency.GOALS

    # the refits and removals are counted from the answers, computed again here
    boxes = {goal: 0 for goal in consistency.GOALS}
    unused = {goal: 0 for goal in consistency.GOALS}
    for order in orders(6, 1):
        for goal in consistency.GOALS:
            r = cartonize.pack({**order, "boxTypeChoiceGoal": goal})
            boxes[goal] += r.len_boxes
            unused[goal] += len(order["boxTypes"]) - len({b.box.ref_id for b in r.boxes})
    refits = {m[1]: (int(m[2]), int(m[3])) for m in map(REFIT_LINE.match, lines) if m}
    removals = {
        m[1]: (int(m[2]), int(m[3]), int(m[4])) for m in map(REMOVAL_LINE.match, lines) if m
    }
    for goal in consistency.GOALS:
        checked, with_leftovers = refits[goal]
        assert checked == boxes[goal] and with_leftovers <= checked
        tried, of_orders, better = removals[goal]
        assert tried == unused[goal] and of_orders == 6 and better <= tried


def test_consistency_dual_and_all_on_order_92(capsys: pytest.CaptureFixture[str]) -> None:
    # Before d3c20e4 dual direction and `all` were dearer than the default on order-92
    # under most-items (6960 against 6190 cents).
    argv = ["--orders", "1", "--seed", "92", "--relations", "dual,all", "--goals", "most-items"]
    assert consistency.main([*argv, "--processes", "1"]) == 0
    seen = [m for m in map(PAIR_LINE.match, capsys.readouterr().out.splitlines()) if m]
    assert [(m[1], m[2], m[4]) for m in seen] == [("most-items", "1", "0")] * 2


def test_consistency_rejects_unknown_relations() -> None:
    with pytest.raises(SystemExit):
        consistency.main(["--orders", "1", "--relations", "dual,nonesuch"])


def small_order(order_id: str) -> Wire:
    """Order `order-N` of the seed-1 runs (drawn with seed N)."""
    return ecommerce.order(int(order_id.removeprefix("order-")), ecommerce.sku_catalogue())


def partitions(ms: Multiset) -> Iterator[list[Multiset]]:
    """Every partition of a multiset into nonempty parts (parts in a canonical order)."""
    if not any(ms):
        yield []
        return
    first = next(i for i, m in enumerate(ms) if m)
    ranges = [range(1 if i == first else 0, m + 1) for i, m in enumerate(ms)]
    for part in itertools.product(*ranges):
        rest = tuple(a - c for a, c in zip(ms, part, strict=True))
        for tail in partitions(rest):
            yield [part, *tail]


# order-397 (7 units of two SKUs) needs two boxes; the others go in one
@pytest.mark.parametrize("order_id", ["order-15", "order-42", "order-52", "order-397"])
def test_oracle_is_the_cheapest_partition(order_id: str) -> None:
    order = small_order(order_id)
    dp = Oracle(order, DEFAULT_OPTIONS)
    cost = dp.best(dp.quantities)
    # the pruned DP loses nothing against every partition, priced by the same checks
    exhaustive = min(sum(dp.single(p)[0] for p in parts) for parts in partitions(dp.quantities))
    assert math.isfinite(cost) and cost == pytest.approx(exhaustive)

    # its partition covers the order, each box priced by its carton, and packs alone
    parts = dp.partition()
    assert [sum(col) for col in zip(*(p.quantities for p in parts), strict=True)] == list(
        dp.quantities
    )
    assert sum(p.cost for p in parts) == pytest.approx(cost)
    for p in parts:
        bt = next(t for t in order["boxTypes"] if t["refId"] == p.ref_id)
        weight = sum(m * w for m, w in zip(p.quantities, dp.weights, strict=True))
        assert p.cost == pytest.approx(box_cost(bt, weight + bt["weightTare"]))
        request = {
            "itemSets": [
                dict(s, quantity=m) for s, m in zip(dp.sets, p.quantities, strict=True) if m
            ],
            "boxTypes": [bt],
            "boxesMax": 1,
            **DEFAULT_OPTIONS,
        }
        assert cartonize.pack(request).len_leftovers == 0

    # the engine's own boxes, each re-priced at its cheapest single-box fit, cost no less
    response = cartonize.pack({**order, **DEFAULT_OPTIONS}).model_dump(by_alias=True)
    assert cost <= sum(dp.single(p)[0] for p in engine_parts(order, response)) + 1e-6
    assert len(parts) == (2 if order_id == "order-397" else 1)
    assert dp.problems == []


def test_oracle_main_totals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "oracle.json"
    argv = ["--orders", "16", "--max-units", "6", "--verbose", "--processes", "1"]
    assert oracle.main([*argv, "--json", str(out)]) == 0
    text = capsys.readouterr().out
    figures = json.loads(out.read_text())
    rows = figures["per order"]
    assert [r["order"] for r in rows] == ["order-2", "order-15"]  # the orders of <= 6 units
    for r in rows:
        assert f"  {r['order']:<10} {r['units']:>5} {r['engine']:>8.0f}" in text
    assert figures["oracle (cents)"] == round(sum(r["oracle"] for r in rows))
    assert figures["engine, default (cents)"] == round(sum(r["engine"] for r in rows))
    assert figures["oracle cheaper than both"] <= figures["oracle cheaper than default"]
    # both go in one box (the oracle's check finds the engine's fit): the same cost
    assert all(r["engine boxes"] == r["oracle boxes"] == 1 for r in rows)
    assert all(r["oracle"] == pytest.approx(r["engine"]) for r in rows)
    m = re.search(r"oracle \(cents\) +(\d+)", text)
    assert m and int(m[1]) == figures["oracle (cents)"]
