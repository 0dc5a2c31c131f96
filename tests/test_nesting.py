"""ignoreSubspaces: rules act on direct relations only with true, and through nesting
(pack-sequence boxes reduced to items, items' internal spaces) with false, the schema's
default. Each case packs one request both ways: both answers pass the validator, and the
answer to true breaks the rule read as false, which the validator reports."""

from __future__ import annotations

from typing import Any

import cartonize
import pytest

from tests.validator import validate

Wire = dict[str, Any]

CASE = {"refId": 10, "name": "case", "dimensions": {"x": 10, "y": 10, "z": 10}, "weightMax": 0}
#: Four cases side by side, one layer high.
PALLET = {"refId": 20, "name": "pallet", "dimensions": {"x": 10, "y": 20, "z": 20}, "weightMax": 0}


def _cubes(ref_id: int, name: str, quantity: int = 8, weight: float = 1) -> Wire:
    return {
        "refId": ref_id,
        "name": name,
        "dimensions": {"x": 5, "y": 5, "z": 5},
        "weight": weight,
        "quantity": quantity,
    }


def _stages(*later: Wire) -> list[Wire]:
    """Every item into cases (stage 0), the cases onto pallets (stage 1), then `later`."""
    return [
        {
            "operation": "pack-sequence",
            "itemMatch": {"all": True},
            "targetBoxRefIds": [10],
            "options": {"index": 0, "reduce": "box-to-item", "reducedRefId": 100},
        },
        {"operation": "pack-sequence", "targetBoxRefIds": [20], "options": {"index": 1}},
        *later,
    ]


def _sequence_request(rule: Wire) -> Wire:
    return {
        "orderId": "nesting",
        "includeImages": False,
        "itemSets": [_cubes(1, "acid"), _cubes(2, "base")],
        "boxTypes": [CASE, PALLET],
        "rules": [*_stages(), rule],
    }


def _pack(request: Wire) -> Wire:
    response: Wire = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    assert validate(request, response) == []
    return response


def _with(request: Wire, **fields: Any) -> Wire:
    """`request` with `fields` set on its last rule."""
    return request | {"rules": [*request["rules"][:-1], request["rules"][-1] | fields]}


def _shipped(response: Wire) -> list[list[int]]:
    """For each shipped box, the refIds inside it at any depth, sorted."""
    boxes = [b["box"] for b in response["boxes"]]

    def refs(box: Wire) -> list[int]:
        out = []
        for entry in box["items"]:
            inner = [
                b
                for b in boxes
                if (b.get("subspace") or {}).get("parentItemIndex") == entry["item"]["index"]
            ]
            out += [r for b in inner for r in refs(b)] if inner else [entry["item"]["refId"]]
        return sorted(set(out))

    return sorted(refs(b) for b in boxes if "subspace" not in b)


def _both_ways(request: Wire) -> tuple[Wire, Wire]:
    """The answers with ignoreSubspaces true and false on the last rule; the first breaks
    the rule as false reads it."""
    direct = _pack(_with(request, ignoreSubspaces=True))
    nested = _pack(_with(request, ignoreSubspaces=False))
    assert validate(_with(request, ignoreSubspaces=False), direct) != []
    return direct, nested


@pytest.mark.parametrize(
    ("rule", "direct", "nested"),
    [
        # Acid and base never share a case; as false, not a pallet either.
        (
            {"operation": "exclude", "itemRefId": 1, "targetItemRefIds": [2]},
            [[1, 2]],
            [[1], [2]],
        ),
        (
            {"operation": "exclude", "itemRefId": 2, "targetItemMatch": {"expression": "acid"}},
            [[1, 2]],
            [[1], [2]],
        ),
        # exclude-all: the acid's case shares no pallet with anything of another refId
        # (the base's case is an item of refId 100).
        ({"operation": "exclude-all", "itemRefId": 1}, [[1, 2]], [[1], [2]]),
    ],
)
def test_exclusions_reach_across_pack_sequence_stages(
    rule: Wire, direct: list[list[int]], nested: list[list[int]]
) -> None:
    by_direct, by_nested = _both_ways(_sequence_request(rule))
    assert _shipped(by_direct) == direct
    assert _shipped(by_nested) == nested
    assert by_nested["lenLeftovers"] == 0


def test_absent_ignore_subspaces_reads_as_false() -> None:
    request = _sequence_request({"operation": "exclude", "itemRefId": 1, "targetItemRefIds": [2]})
    assert _shipped(_pack(request)) == [[1], [2]]


def test_an_item_is_not_nested_in_a_box_type_it_is_excluded_from() -> None:
    # The acid may not be on a pallet: its case ships on its own, and a warning says why.
    request = _sequence_request({"operation": "exclude", "itemRefId": 1, "targetBoxRefIds": [20]})
    direct, nested = _both_ways(request)
    assert _shipped(direct) == [[1, 2]]
    assert _shipped(nested) == [[1], [2]]
    names = sorted(b["box"]["name"] for b in nested["boxes"] if "subspace" not in b["box"])
    assert names == ["case", "pallet"]
    assert any(
        "box-to-item: box 100-0 fits no box of the next stage (rules exclude this item" in w
        for w in nested["warnings"]
    )


def test_exclusions_reach_through_every_level_of_a_sequence() -> None:
    # Cases onto pallets of one case each, pallets into a truck of two: the acid's and
    # the base's pallets may not share the truck.
    one_case = PALLET | {"dimensions": {"x": 10, "y": 10, "z": 10}}
    truck = {
        "refId": 30,
        "name": "truck",
        "dimensions": {"x": 10, "y": 10, "z": 20},
        "weightMax": 0,
    }
    request = _sequence_request({"operation": "exclude", "itemRefId": 1, "targetItemRefIds": [2]})
    request["boxTypes"] = [CASE, one_case, truck]
    request["rules"][1]["options"] |= {"reduce": "box-to-item", "reducedRefId": 200}
    request["rules"].insert(
        2, {"operation": "pack-sequence", "targetBoxRefIds": [30], "options": {"index": 2}}
    )
    direct, nested = _both_ways(request)
    assert _shipped(direct) == [[1, 2]]
    assert _shipped(nested) == [[1], [2]]
    assert sorted(b["box"]["name"] for b in nested["boxes"] if "subspace" not in b["box"]) == [
        "truck",
        "truck",
    ]


def _fragile_request(rule: Wire) -> Wire:
    # A glass in a case of its own, bricks in a flat case; one pallet takes both, one
    # on the other.
    flat = {"refId": 11, "name": "flat case", "dimensions": {"x": 5, "y": 10, "z": 10}}
    return {
        "orderId": "nesting",
        "includeImages": False,
        "itemSets": [
            {"refId": 1, "name": "glass", "dimensions": {"x": 8, "y": 8, "z": 8}, "weight": 1},
            _cubes(2, "brick", quantity=4, weight=5),
        ],
        "boxTypes": [
            CASE | {"price": 10},
            flat | {"weightMax": 0, "price": 5},
            PALLET | {"dimensions": {"x": 15, "y": 10, "z": 10}, "price": 100},
        ],
        "rules": [_stages()[0] | {"targetBoxRefIds": [10, 11]}, *_stages()[1:], rule],
    }


@pytest.mark.parametrize(
    "options", [{"maxWeight": 2}, {"onTopOnly": True}, {"maxWeight": 2, "excludeOverweight": True}]
)
def test_a_case_holding_a_fragile_item_carries_only_what_the_item_may(options: Wire) -> None:
    request = _fragile_request({"operation": "fragile", "itemRefId": 1, "options": options})
    direct, nested = _both_ways(request)
    glass_case = next(
        b["box"] for b in nested["boxes"] if b["box"]["items"][0]["item"]["refId"] == 1
    )
    pallets = [b["box"] for b in nested["boxes"] if "subspace" not in b["box"]]
    carrier = next(
        e["item"]
        for p in pallets
        for e in p["items"]
        if e["item"]["index"] == glass_case["subspace"]["parentItemIndex"]
    )
    if options.get("excludeOverweight"):
        # The bricks' case weighs 20, over maxWeight: it may not share the pallet.
        assert len(pallets) == 2
    else:
        # Bricks first, the glass's case on top of them.
        assert len(pallets) == 1
        assert carrier["origin"]["x"] == 5
    assert len([b for b in direct["boxes"] if "subspace" not in b["box"]]) == 1


@pytest.mark.parametrize(
    ("free_axes", "on_pallet"),
    [
        ([], False),  # the case may not turn: it does not fit the pallet lengthwise
        ([0], True),  # a spin about the vertical axis turns it to fit
        ([1], False),  # a spin about y tips the case, not what the pallet needs
    ],
)
def test_a_case_turns_only_as_its_locked_contents_may(
    free_axes: list[int], on_pallet: bool
) -> None:
    request = _sequence_request(
        {"operation": "lock-orientation", "itemRefId": 1, "options": {"freeAxes": free_axes}}
    )
    # Long items in a long case (10 x 10 x 20), a pallet that takes it only turned.
    request["itemSets"] = [_cubes(1, "upright") | {"dimensions": {"x": 5, "y": 5, "z": 10}}]
    request["boxTypes"] = [
        CASE | {"dimensions": {"x": 10, "y": 10, "z": 20}},
        PALLET | {"dimensions": {"x": 10, "y": 20, "z": 10}},
    ]
    direct = _pack(_with(request, ignoreSubspaces=True))
    nested = _pack(_with(request, ignoreSubspaces=False))
    assert all(len(_shipped(r)) == 1 for r in (direct, nested))
    names = [b["box"]["name"] for b in nested["boxes"] if "subspace" not in b["box"]]
    assert names == (["pallet"] if on_pallet else ["case"])
    # A turned case turns the cubes: the validator sees it unless the lock allows it.
    assert (validate(_with(request, ignoreSubspaces=False), direct) == []) == on_pallet


def test_the_validator_reports_nested_relations_it_finds() -> None:
    request = _sequence_request({"operation": "exclude", "itemRefId": 1, "targetItemRefIds": [2]})
    direct = _pack(_with(request, ignoreSubspaces=True))
    problems = validate(request, direct)  # absent: false
    assert problems
    assert all(p.startswith("exclusion (nested): ") for p in problems)
    # One line per item kept apart: the 8 acid cubes.
    assert len(problems) == 8


# --- internal spaces --------------------------------------------------------------------

POT_SPACE = {
    "operation": "internal-space",
    "itemRefId": 1,
    "options": {
        "boxType": {"name": "pot inside", "dimensions": {"x": 3, "y": 3, "z": 3}},
        "origin": {"x": 1, "y": 0.5, "z": 0.5},
    },
}


def _pot_request(rule: Wire) -> Wire:
    return {
        "orderId": "nesting",
        "includeImages": False,
        "itemSets": [
            {"refId": 1, "name": "pot", "dimensions": {"x": 4, "y": 4, "z": 4}, "weight": 2},
            {
                "refId": 2,
                "name": "pencil",
                "dimensions": {"x": 1, "y": 1, "z": 3},
                "weight": 0.5,
                "quantity": 2,
            },
            {
                "refId": 3,
                "name": "eraser",
                "dimensions": {"x": 1, "y": 1, "z": 1},
                "weight": 0.1,
                "quantity": 2,
            },
        ],
        "boxTypes": [
            {"refId": 7, "dimensions": {"x": 5, "y": 5, "z": 10}, "weightMax": 100, "price": 100}
        ],
        "rules": [POT_SPACE, rule],
    }


def _spaces(response: Wire) -> list[list[int]]:
    return sorted(
        sorted({e["item"]["refId"] for e in b["box"]["items"]})
        for b in response["boxes"]
        if "subspace" in b["box"]
    )


@pytest.mark.parametrize(
    ("rule", "direct", "nested", "left"),
    [
        # Pencils in the pot relate to the erasers beside it only as false reads it.
        (
            {"operation": "exclude", "itemRefId": 2, "targetItemRefIds": [3]},
            [[1, 3]],
            [[1], [3]],
            0,
        ),
        # The only box type is excluded: in the pot (its direct box) the pencils may
        # still go as true reads it; as false they are leftovers saying why.
        ({"operation": "exclude", "itemRefId": 2, "targetBoxRefIds": [7]}, [[1]], [[1]], 2),
    ],
)
def test_items_in_an_internal_space_relate_to_the_box_of_its_item(
    rule: Wire, direct: list[list[int]], nested: list[list[int]], left: int
) -> None:
    by_direct, by_nested = _both_ways(_pot_request(rule))
    outer = sorted(
        sorted({e["item"]["refId"] for e in b["box"]["items"]})
        for b in by_direct["boxes"]
        if "subspace" not in b["box"]
    )
    assert outer == direct
    assert [2] in [s[:1] for s in _spaces(by_direct)]  # the pencils are in the pot
    outer = sorted(
        sorted({e["item"]["refId"] for e in b["box"]["items"]})
        for b in by_nested["boxes"]
        if "subspace" not in b["box"]
    )
    assert outer == nested
    assert by_nested["lenLeftovers"] == left
    assert all(
        m["message"] == "rules exclude this item from every box type large enough for it"
        for m in by_nested["leftovers"]
    )


@pytest.mark.parametrize(
    "rule",
    [
        # Being inside the pot is at least as close as sharing its box: never in it.
        {"operation": "exclude", "itemRefId": 2, "targetItemRefIds": [1]},
        {"operation": "exclude", "itemRefId": 1, "targetItemRefIds": [2]},
        {"operation": "exclude-all", "itemRefId": 2},
        {"operation": "exclude-all", "itemRefId": 1},
    ],
)
@pytest.mark.parametrize("ignore", [True, False])
def test_an_item_kept_from_the_pot_never_goes_inside_it(rule: Wire, ignore: bool) -> None:
    response = _pack(_pot_request(rule | {"ignoreSubspaces": ignore}))
    assert all(2 not in refs for refs in _spaces(response))
    assert response["lenLeftovers"] == 0


def test_a_pot_holding_a_fragile_item_is_fragile() -> None:
    # An on-top-only pencil inside: nothing may rest on the pot either. A slab fits above
    # or below the pot: as false the pot goes on top of it.
    rule = {"operation": "fragile", "itemRefId": 2, "options": {"onTopOnly": True}}
    request = _pot_request(rule)
    request["itemSets"][2] = {
        "refId": 3,
        "name": "brick",
        "dimensions": {"x": 1, "y": 5, "z": 10},
        "weight": 3,
    }
    request["itemSets"][1]["quantity"] = 1
    request["boxTypes"][0]["dimensions"] = {"x": 5, "y": 5, "z": 10}
    direct, nested = _both_ways(request)
    for response in (direct, nested):
        assert response["lenBoxes"] - len(_spaces(response)) == 1
        assert _spaces(response) == [[2]]
    pot = next(e["item"] for e in nested["boxes"][0]["box"]["items"] if e["item"]["refId"] == 1)
    assert pot["origin"]["x"] == 1


def test_internal_spaces_inside_a_stage_stay_with_their_items() -> None:
    # Pots with pencils inside go into cases, the cases onto a pallet: the spaces point at
    # their pots (not carried as cases of their own), and warnings name the request's rules.
    request = _pot_request({"operation": "fragile", "options": {"onTopOnly": True}})
    request["itemSets"][0]["quantity"] = 2
    request["boxTypes"] = [
        {"refId": 10, "name": "case", "dimensions": {"x": 5, "y": 5, "z": 10}, "weightMax": 0},
        PALLET,
    ]
    request["rules"] = [POT_SPACE, *_stages(), request["rules"][1]]
    response = _pack(request)
    boxes = [b["box"] for b in response["boxes"]]
    spaces = [b for b in boxes if b.get("name") == "pot inside"]
    assert spaces
    for space in spaces:
        parent = boxes[space["subspace"]["parentBoxIndex"]]
        item = next(
            e["item"]
            for e in parent["items"]
            if e["item"]["index"] == space["subspace"]["parentItemIndex"]
        )
        assert (parent["name"], item["name"]) == ("case", "pot")
    assert [b["name"] for b in boxes if "subspace" not in b] == ["pallet"]
    assert (
        "rules[3]: selects no items (give itemRefId, itemSequence or itemMatch)"
        in (response["warnings"])
    )


@pytest.mark.parametrize("ignore", [True, False])
def test_lay_flat_yields_to_the_locks_inside_a_case(ignore: bool) -> None:
    # Standing items (locked as given) fill a standing case; layFlat lays the case down
    # only when the lock does not reach through it.
    rule = {"operation": "lock-orientation", "itemRefId": 1, "options": {"freeAxes": []}}
    request = _sequence_request(rule | {"ignoreSubspaces": ignore})
    request["layFlat"] = True
    request["itemSets"] = [_cubes(1, "upright") | {"dimensions": {"x": 10, "y": 5, "z": 5}}]
    request["boxTypes"] = [
        CASE | {"dimensions": {"x": 20, "y": 10, "z": 10}},
        PALLET | {"dimensions": {"x": 20, "y": 20, "z": 20}},
    ]
    response = _pack(request)
    case = next(
        e["item"] for b in response["boxes"] for e in b["box"]["items"] if e["item"]["refId"] == 100
    )
    assert case["dimensions"]["x"] == (10 if ignore else 20)
    warned = "layFlat has no effect on item refId 100: it may only turn as rules[2] says"
    assert any(w.startswith(warned) for w in response["warnings"]) == (not ignore)


def test_exclusions_reach_through_an_internal_space_inside_a_case() -> None:
    # Pencils in the pot, the pot in a case, the case on a pallet: as false, the erasers
    # (in a case of their own) may not share the pallet.
    request = _pot_request({"operation": "exclude", "itemRefId": 2, "targetItemRefIds": [3]})
    request["boxTypes"] = [
        {"refId": 10, "name": "case", "dimensions": {"x": 5, "y": 5, "z": 5}, "weightMax": 0},
        PALLET,
    ]
    request["rules"] = [POT_SPACE, *_stages(), request["rules"][1]]
    direct, nested = _both_ways(request)
    assert _shipped(direct) == [[2, 3]]
    assert _shipped(nested) == [[2], [3]]
    pot = [b["box"] for b in nested["boxes"] if b["box"].get("name") == "pot inside"]
    assert [[e["item"]["refId"] for e in b["items"]] for b in pot] == [[2, 2]]
