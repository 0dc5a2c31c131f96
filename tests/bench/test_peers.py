"""The peers' answers, converted to the wire response, pass the independent validator,
and a broken conversion would not."""

from __future__ import annotations

from bench import ecommerce
from bench.peers import run_packvium, run_py3dbp
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
