"""The peers' answers, converted to the wire response, pass the independent validator,
and a broken conversion would not."""

from __future__ import annotations

import cartonize
import pytest

from bench import ecommerce
from bench.common import check_locked, mpv_request, read_mpv
from bench.peers import Run, run_packvium, run_py3dbp, summarise
from tests.validator import validate


def small_order() -> dict[str, object]:
    request = ecommerce.order(3, ecommerce.sku_catalogue())
    request["itemSets"] = request["itemSets"][:2]
    for item_set in request["itemSets"]:
        item_set["quantity"] = min(item_set["quantity"], 3)
    return request


def test_py3dbp_answer_converts_to_a_valid_response() -> None:
    request = small_order()
    response, seconds = run_py3dbp(request, locked=False)
    assert seconds >= 0
    assert validate(request, response) == []
    assert response["lenBoxes"] >= 1


def test_packvium_answer_converts_to_a_valid_response() -> None:
    request = small_order()
    response, _ = run_packvium(request, locked=False)
    assert validate(request, response) == []
    assert response["lenLeftovers"] == 0
    # Moving one item onto another must be caught: the conversion keeps real geometry.
    items = max((b["box"]["items"] for b in response["boxes"]), key=len)
    assert len(items) >= 2
    items[1]["item"]["origin"] = dict(items[0]["item"]["origin"])
    assert any(p.startswith("overlap") for p in validate(request, response))


def test_summary_compares_every_cartonize_variant_with_every_peer(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def runs(ours: int, free: int, py3dbp: int, packvium: int) -> list[Run]:
        return [
            Run("cartonize", 0.01, ours, 0, 100.0 * ours, engine_seconds=0.004),
            Run("cartonize-free", 0.02, free, 0, 100.0 * free),
            Run("py3dbp", 0.05, py3dbp, 0, 100.0 * py3dbp),
            Run("packvium", 1.0, packvium, 0, 100.0 * packvium),
        ]

    figures = summarise("orders", [("a", runs(2, 1, 3, 1)), ("b", runs(1, 1, 2, 1))])
    assert set(figures["ratios"]) == {
        "py3dbp",
        "packvium",
        "cartonize-free/py3dbp",
        "cartonize-free/packvium",
    }
    assert figures["ratios"]["packvium"]["more_boxes"] == 1
    assert figures["ratios"]["cartonize-free/packvium"]["more_boxes"] == 0
    assert figures["ratios"]["cartonize-free/packvium"]["boxes"] == 1.0
    # The engine alone: 0.008 s of packTime against py3dbp's 0.1 s.
    assert figures["ratios"]["py3dbp"]["engine_time"] == pytest.approx(0.08)
    out = capsys.readouterr().out
    assert "worse than packvium on a: boxes 2 vs 1" in out
    assert "engine alone 12.5x faster" in out


def test_mpv_8_50_4_packs_in_as_few_bins_as_packvium() -> None:
    # The one MPV instance of bench.peers where packvium (8 bins) beat the default request
    # (9): its winning start fills bins over maximal spaces, and so does cartonize's now.
    request = mpv_request(read_mpv(8, 50, 4), None)
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True, mode="json")
    assert validate(request, response) == []
    assert check_locked(request, response) == []
    assert (response["lenBoxes"], response["lenLeftovers"]) == (8, 0)
    peer, _ = run_packvium(request, locked=True)
    assert peer["lenBoxes"] >= response["lenBoxes"]
