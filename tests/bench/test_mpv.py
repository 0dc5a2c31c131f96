"""bench.mpv's comparison with the authors' exact code counts against the bounds file."""

from __future__ import annotations

from bench.mpv import Outcome, against_exact, bounds


def test_proven_optima_are_counted_from_the_bounds_file() -> None:
    rows = bounds()
    # Class 6, n = 50, #1 and #4 have proven optima (11 and 9); class 1, n = 50, #1 none.
    assert [rows[(6, 50, k)]["proved_optimal"] for k in (1, 4)] == ["1", "1"]
    assert rows[(1, 50, 1)]["proved_optimal"] == "0"
    optimum = {k: int(rows[(6, 50, k)]["lb_after_2s"]) for k in (1, 4)}
    outcomes = [
        Outcome("6_50/1", 6, 50, 1, optimum[1], 1.0, []),
        Outcome("6_50/4", 6, 50, 4, optimum[4] + 2, 1.0, []),
        Outcome("1_50/1", 1, 50, 1, 99, 1.0, []),
    ]
    figures = against_exact(outcomes)
    assert (figures["proven"], figures["reached"], figures["above"]) == (2, 1, 2)
    assert figures["lb_2s"] == sum(
        int(rows[key]["lb_after_2s"]) for key in rows if key in {(6, 50, 1), (6, 50, 4), (1, 50, 1)}
    )
    assert figures["ub_2s"] >= figures["lb_2s"]
