"""Hypothesis strategies for random pack requests in wire format (camelCase dicts)."""

from __future__ import annotations

from typing import Any, get_args

from cartonize.models import BoxTypeChoiceGoal, ItemSort, PlacementStyle, ValueTiebreaker
from hypothesis import settings
from hypothesis import strategies as st

# Every value the request model accepts: a new sort is drawn here as soon as it exists.
ITEM_SORTS: tuple[str, ...] = get_args(ItemSort)
BOX_TYPE_CHOICE_GOALS: tuple[str, ...] = get_args(BoxTypeChoiceGoal)
PLACEMENT_STYLES: tuple[str, ...] = get_args(PlacementStyle)
VALUE_TIEBREAKERS: tuple[str, ...] = get_args(ValueTiebreaker)

Wire = dict[str, Any]


def examples(count: int) -> int:
    """A property test's example count: `count`, scaled as the hypothesis profile
    tests/conftest.py loaded scales hypothesis's default of 100 (ten times under `make
    fuzz`)."""
    return count * settings().max_examples // 100


def lengths(low: int, high: int) -> st.SearchStrategy[float]:
    """Whole numbers or numbers with one decimal in low..high, as real requests carry."""
    return st.one_of(
        st.integers(low, high),
        st.integers(low * 10, high * 10).map(lambda tenths: tenths / 10),
    )


def points(low: int, high: int) -> st.SearchStrategy[dict[str, float]]:
    """A Point {x, y, z} with each axis from ``lengths(low, high)``."""
    return st.fixed_dictionaries(
        {"x": lengths(low, high), "y": lengths(low, high), "z": lengths(low, high)}
    )


def tenths(low: float, high: float) -> st.SearchStrategy[float]:
    """A number with one decimal in low..high."""
    return st.integers(round(low * 10), round(high * 10)).map(lambda t: t / 10)


@st.composite
def item_sets(draw: st.DrawFn, ref_id: int) -> Wire:
    """One ItemSet; some omit refId so that the engine assigns it."""
    item_set: Wire = {
        "dimensions": draw(points(1, 30)),
        "weight": draw(tenths(0, 20)),
        "quantity": draw(st.integers(0, 12)),
    }
    # An omitted refId exercises the engine's auto-assignment (spec §B); keep it rare.
    if draw(st.integers(0, 4)) > 0:
        item_set["refId"] = ref_id
    if draw(st.booleans()):
        item_set["name"] = f"item {ref_id}"
    return item_set


@st.composite
def dimension_sets(draw: st.DrawFn) -> list[Wire]:
    """A unit ladder: the each, then one or two multiples of it (some with own weight)."""
    ladder: list[Wire] = [{}]
    for _ in range(draw(st.integers(1, 2))):
        rung: Wire = {"axisMultipliers": {a: draw(st.integers(1, 3)) for a in "xyz"}}
        if draw(st.booleans()):
            rung["weight"] = draw(tenths(0, 50))
        ladder.append(rung)
    return ladder


@st.composite
def item_extras(draw: st.DrawFn, dimensions: dict[str, float]) -> Wire:
    """Item set options drawn at random: dimensionSets, virtual, centerOfMass, properties."""
    extras: Wire = {}
    if draw(st.integers(0, 3)) == 0:
        extras["dimensionSets"] = draw(dimension_sets())
    if draw(st.integers(0, 5)) == 0:
        extras["virtual"] = True
    if draw(st.booleans()):
        extras["centerOfMass"] = {
            a: dimensions[a] * draw(st.integers(0, 10)) / 10 for a in ("x", "y", "z")
        }
    if draw(st.booleans()):
        extras["properties"] = {"sku": draw(st.integers(0, 99))}
    return extras


@st.composite
def box_types(draw: st.DrawFn, ref_id: int) -> Wire:
    """One BoxType; weightMax 0 means no weight limit, price is sometimes absent."""
    box_type: Wire = {
        "refId": ref_id,
        "name": f"box {ref_id}",
        "dimensions": draw(points(5, 60)),
        "weightMax": draw(st.one_of(st.just(0), st.integers(50, 500))),
        "weightTare": draw(tenths(0, 2)),
    }
    # Price 0 is left out: whether it means "free" or "unset" is not what this tests.
    price = draw(st.one_of(st.none(), st.integers(1, 5000)))
    if price is not None:
        box_type["price"] = price
    return box_type


@st.composite
def pack_requests(draw: st.DrawFn) -> Wire:
    """A pack request: 1-6 item sets, 1-4 box types and random sort and goal options;
    often count caps (``count_caps``) and a bounded-fill rule on one item set."""
    n_items = draw(st.integers(1, 6))
    n_boxes = draw(st.integers(1, 4))
    request: Wire = {
        "itemSets": [draw(item_sets(ref_id)) for ref_id in range(n_items)],
        "boxTypes": [draw(box_types(100 + ref_id)) for ref_id in range(n_boxes)],
        "boxTypeChoiceGoal": draw(st.sampled_from(BOX_TYPE_CHOICE_GOALS)),
        "itemSort": draw(st.sampled_from(ITEM_SORTS)),
        "itemSortReverse": draw(st.booleans()),
        "itemSortDualDirection": draw(st.booleans()),
        "includeImages": False,
    }
    draw(count_caps(request))
    explicit = [s["refId"] for s in request["itemSets"] if "refId" in s]
    if explicit and draw(st.integers(0, 2)) == 0:
        rule = draw(bounded_fill_rules(st.sampled_from(explicit)))
        request["rules"] = [rule]
        if draw(st.booleans()):
            # Small soft units, so that some fill the boxes the others leave part empty.
            for item_set in request["itemSets"]:
                if item_set.get("refId") == rule["itemRefId"]:
                    item_set.update(dimensions=draw(points(1, 8)), quantity=draw(st.integers(1, 6)))
    return request


@st.composite
def count_caps(draw: st.DrawFn, request: Wire) -> None:
    """Count caps set in place on ``request``, each on one request in four to six:
    boxesMax, boxesPerItemSetMax, boxesPerSequenceMax (with sequences on the item sets
    that have none) and, per box type, itemsPerBoxMax or itemSetsPerBoxMax. Positive
    values mostly: 0 and negatives mean no limit, which the tuned requests draw."""
    if draw(st.integers(0, 3)) == 0:
        request["boxesMax"] = draw(st.integers(1, 4))
    if draw(st.integers(0, 5)) == 0:
        request["boxesPerItemSetMax"] = draw(st.integers(1, 3))
    if draw(st.integers(0, 5)) == 0:
        request["boxesPerSequenceMax"] = draw(st.integers(1, 3))
        for item_set in request["itemSets"]:
            item_set.setdefault("sequence", draw(st.sampled_from(["0101", "0102", "1228"])))
    for box_type in request["boxTypes"]:
        if draw(st.integers(0, 3)) == 0:
            name = draw(st.sampled_from(["itemsPerBoxMax", "itemSetsPerBoxMax"]))
            box_type[name] = draw(st.integers(1, 6 if name == "itemsPerBoxMax" else 2))


#: Options that change packing, each with the values a tuned request may draw.
OPTION_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "allowableOverhang": st.one_of(st.just(-1), st.just(0), tenths(0, 5)),
    "boxesMax": st.integers(-1, 4),
    "boxesPerItemSetMax": st.integers(-1, 3),
    "boxesPerSequenceMax": st.integers(-1, 3),
    "itemsPerBoxMax": st.integers(-1, 10),
    "itemSetsPerBoxMax": st.integers(-1, 3),
    "itemsInlineMax": st.lists(st.integers(0, 4), min_size=3, max_size=3),
    "boxTypeChoiceStyle": st.sampled_from(["actual", "estimated"]),
    "usableSpace": tenths(0.1, 1),
    "boxTypeChoiceLookahead": st.integers(0, 2),
    "boxTypeChoiceLookback": st.integers(-1, 2),
    "reservedSpace": tenths(0, 0.5),
    "cohortPacking": st.booleans(),
    "cohortMax": st.integers(1, 3),
    "placementStyle": st.sampled_from(PLACEMENT_STYLES),
    "packOrigin": points(0, 60),
    "corners": st.booleans(),
    "layFlat": st.booleans(),
    "interlock": st.booleans(),
    "itemInitialOrientationPreferred": st.booleans(),
    # Depth 4 tries up to 6^4 orientation combinations, each a whole pack: too slow here.
    "itemOrientationSearchDepth": st.integers(0, 2),
    "itemInitialOrientationBestForBox": st.booleans(),
    "maxSequenceDistance": st.sampled_from([0, 1, 827, 1200]),
    "sequenceSort": st.booleans(),
    "valueTiebreaker": st.sampled_from(VALUE_TIEBREAKERS),
    "coordOrder": st.permutations([0, 1, 2]),
}

#: Per-box-type overrides a tuned request may set on its box types.
BOX_OPTION_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "itemsPerBoxMax": st.integers(-1, 10),
    "itemSetsPerBoxMax": st.integers(0, 3),
    "itemsInlineMax": st.lists(st.integers(0, 4), min_size=3, max_size=3),
    "reservedSpace": tenths(0, 0.5),
    "propertyConstraints": st.lists(
        st.fixed_dictionaries(
            {"key": st.sampled_from(["lithium", "ice"]), "max": tenths(0, 12)},
            optional={"value": tenths(0, 3)},
        ),
        min_size=1,
        max_size=2,
    ),
}


@st.composite
def prepacked_boxes(draw: st.DrawFn, item_sets: list[Wire]) -> Wire:
    """A pre-packed box of a random size holding up to two items: a unit of a requested
    item set (or a new refId) at the origin, and one the engine places."""
    side = draw(st.integers(20, 60))
    box: Wire = {
        "dimensions": {"x": side, "y": side, "z": side},
        "weightMax": draw(st.one_of(st.just(0), st.integers(100, 500))),
    }
    items = []
    for n, placed in enumerate([True, False]):
        if not draw(st.booleans()):
            continue
        source = draw(st.sampled_from(item_sets)) if item_sets else None
        dims = source["dimensions"] if source else draw(points(1, 10))
        if max(dims.values()) > side / 2:
            continue  # keep both items clear of each other: each within half the box
        item = {"refId": source.get("refId", 50 + n) if source else 50 + n, "dimensions": dims}
        item["weight"] = source["weight"] if source else 1
        if placed:
            item["origin"] = {"x": 0, "y": 0, "z": 0}
        items.append({"item": item})
    box["items"] = items
    return box


@st.composite
def tuned_pack_requests(draw: st.DrawFn) -> Wire:
    """A ``pack_requests()`` request with a random subset of ``OPTION_VALUES`` turned on."""
    request = draw(pack_requests())
    for name in draw(st.sets(st.sampled_from(sorted(OPTION_VALUES)))):
        request[name] = draw(OPTION_VALUES[name])
    for box_type in request["boxTypes"]:
        for name in draw(st.sets(st.sampled_from(sorted(BOX_OPTION_VALUES)), max_size=1)):
            box_type[name] = draw(BOX_OPTION_VALUES[name])
    if draw(st.integers(0, 3)) == 0:
        # Defaults fill what a box type leaves unset; a box type's own value wins.
        defaults = {"weightTare": draw(tenths(0, 2)), "price": draw(st.integers(1, 5000))}
        for name in draw(st.sets(st.sampled_from(sorted(BOX_OPTION_VALUES)), max_size=2)):
            defaults[name] = draw(BOX_OPTION_VALUES[name])
        request["boxTypeDefaults"] = defaults
    for item_set in request["itemSets"]:
        if draw(st.booleans()):
            item_set["sequence"] = draw(
                st.sampled_from(["0101", "0102", "1228", "0401", "A-7", ""])
            )
        item_set.update(draw(item_extras(item_set["dimensions"])))
    for item_set in request["itemSets"]:
        if draw(st.booleans()):
            item_set["properties"] = {"lithium": draw(tenths(0, 4)), "ice": draw(st.integers(0, 3))}
    if draw(st.integers(0, 3)) == 0:
        request["boxes"] = [
            draw(prepacked_boxes([s for s in request["itemSets"] if "refId" in s]))
            for _ in range(draw(st.integers(1, 2)))
        ]
    if request.get("boxTypeChoiceStyle") == "estimated" and request.get("usableSpace") == 0:
        request["usableSpace"] = 0.5  # a 422 by design (test_box_choice_options)
    # A bounded-fill rule on about one request in three, on an item set that no lock
    # or unit ladder keeps from filling (those win over it: docs/rules.md); a rule on a
    # refId of any kind, which may not be there, on some more.
    explicit = [s["refId"] for s in request["itemSets"] if "refId" in s]
    fills = []
    if explicit and draw(st.integers(0, 2)) == 0:
        fills.append(draw(bounded_fill_rules(st.sampled_from(explicit))))
        for item_set in request["itemSets"]:
            if item_set.get("refId") == fills[0]["itemRefId"]:
                item_set.pop("dimensionSets", None)
    fills += draw(st.lists(bounded_fill_rules(), max_size=1))
    filled = {rule["itemRefId"] for rule in fills}
    locked = [
        s["refId"]
        for s in request["itemSets"]
        if "refId" in s and s["refId"] not in filled and draw(st.booleans())
    ]
    request["rules"] = [
        {
            "operation": "lock-orientation",
            "itemRefId": ref_id,
            "options": {"freeAxes": draw(st.lists(st.integers(0, 2), max_size=2, unique=True))},
        }
        | draw(ignore_subspaces())
        for ref_id in locked
    ]
    # Rules name explicit refIds: an auto-assigned one is the engine's to choose.
    if explicit:
        request["rules"] += draw(st.lists(item_rules(explicit), max_size=3))
    request["rules"] += draw(st.lists(group_pack_rules(), max_size=1))
    request["rules"] += fills
    hosts = [s for s in request["itemSets"] if "refId" in s]
    if len(hosts) > 0 and draw(st.booleans()):
        host = draw(st.sampled_from(hosts))
        # A hollow inside: 80 % of each side, a tenth in from the item's origin.
        d = host["dimensions"]
        request["rules"].append(
            {
                "operation": "internal-space",
                "itemRefId": host["refId"],
                "options": {
                    "boxType": {
                        "dimensions": {a: d[a] * 0.8 for a in "xyz"},
                        "weightMax": draw(st.sampled_from([0, 5])),
                    },
                    "origin": {a: d[a] * 0.1 for a in "xyz"},
                    # Open or not, wherever the other options put it.
                    "blocking": draw(st.booleans()),
                },
            }
        )
    if explicit and draw(st.integers(0, 4)) == 0:
        if draw(st.booleans()):
            request["rules"].append(draw(pack_sequence_rule(explicit)))
        else:
            request["rules"] += draw(two_stage_sequence(explicit))
    for box_type in request["boxTypes"]:
        if draw(st.integers(0, 2)) == 0:
            box_type.update(draw(rated()))
    if draw(st.integers(0, 4)) == 0:
        request["boxTypeGenerators"] = [draw(generators())]
        request["generatedBoxTypesMax"] = draw(st.integers(1, 16))
    spaces = any(r["operation"] == "internal-space" for r in request["rules"])
    if not spaces and draw(st.integers(0, 9)) == 0:
        # (An internal space sized for an item set need not fit the random item.)
        request.update(random=True, n=draw(st.integers(1, 4)), seedValue=draw(st.integers(0, 9)))
    parts = ("bounded-fill", "internal-space", "group-pack", "pack-sequence")
    if any(r["operation"] in parts for r in request["rules"]):
        request.pop("boxes", None)  # a 422 by design (test_box_choice_options)
    return request


@st.composite
def item_rules(draw: st.DrawFn, ref_ids: list[int]) -> Wire:
    """One of the rules that constrain item sets in place, on one of `ref_ids`: exclude,
    exclude-all, pack-as-is, fragile, set-properties, alternate-dimensions, irregular."""
    ref_id = draw(st.sampled_from(ref_ids))
    operation = draw(
        st.sampled_from(
            [
                "exclude",
                "exclude-all",
                "pack-as-is",
                "fragile",
                "set-properties",
                "alternate-dimensions",
                "irregular",
            ]
        )
    )
    rule: Wire = {"operation": operation, "itemRefId": ref_id}
    if operation in ("exclude", "exclude-all", "fragile"):
        rule |= draw(ignore_subspaces())
    if operation == "exclude":
        if draw(st.booleans()):
            rule["targetItemRefIds"] = draw(st.lists(st.sampled_from(ref_ids), min_size=1))
        else:
            rule["targetBoxRefIds"] = [draw(st.integers(100, 103))]
    elif operation == "fragile":
        options: Wire = {}
        if draw(st.booleans()):
            options["onTopOnly"] = True
        else:
            options["maxWeight"] = draw(tenths(0, 20))
            options["excludeOverweight"] = draw(st.booleans())
        options["unrestrictedPlacement"] = draw(st.booleans())
        rule["options"] = options
    elif operation == "set-properties":
        rule["options"] = {
            "properties": {"lithium": draw(tenths(0, 4))},
            "overwrite": draw(st.booleans()),
        }
    elif operation == "alternate-dimensions":
        rule["options"] = draw(
            st.sampled_from(
                [
                    {"dimensionScaleChanges": [{"x": -0.5}]},  # folded in half
                    {"dimensionChanges": [{"x": 1, "y": 1, "z": 1}]},  # wrapped
                    {"dimensions": [{"x": 2, "y": 3, "z": 4}], "replaceOriginal": True},
                ]
            )
        )
    elif operation == "irregular":
        rule["options"] = {"maxDiameter": draw(st.integers(5, 30))}
    return rule


@st.composite
def pack_sequence_rule(draw: st.DrawFn, ref_ids: list[int]) -> Wire:
    """A pack-sequence rule putting one item set (or all) into stage 0 of a sequence,
    packed into one box type, sometimes reduced to items of a (missing) next stage."""
    rule: Wire = {
        "operation": "pack-sequence",
        "options": {
            "index": 0,
            "reduce": draw(
                st.sampled_from(["default", "pack-as-is", "box-to-item", "box-to-item-optional"])
            ),
        },
    }
    if draw(st.booleans()):
        rule["itemMatch"] = {"all": True}
    else:
        rule["itemRefId"] = draw(st.sampled_from(ref_ids))
    if draw(st.booleans()):
        rule["targetBoxRefIds"] = [draw(st.integers(100, 103))]
    return rule


def ignore_subspaces() -> st.SearchStrategy[Wire]:
    """``ignoreSubspaces`` true, false or absent (the schema's default, false)."""
    return st.sampled_from([{}, {"ignoreSubspaces": True}, {"ignoreSubspaces": False}])


@st.composite
def two_stage_sequence(draw: st.DrawFn, ref_ids: list[int]) -> list[Wire]:
    """Two stages (one key, or two keys that combine): one item set (or all) into boxes
    that become items of the second stage (box-to-item or box-to-item-optional, sometimes
    under a reducedRefId), which may take an item set of its own; each stage sometimes
    into one box type."""
    first: Wire = {
        "operation": "pack-sequence",
        "options": {
            "index": 0,
            "key": "nest",
            "reduce": draw(st.sampled_from(["box-to-item", "box-to-item-optional"])),
        },
    }
    if draw(st.booleans()):
        first["options"]["reducedRefId"] = 900
    # The second stage's key is the first's or another: a key without a later stage of
    # its own hands its boxes to the first stage of the next index.
    second_key = draw(st.sampled_from(["nest", "case"]))
    second: Wire = {"operation": "pack-sequence", "options": {"index": 1, "key": second_key}}
    if draw(st.booleans()):
        first["itemMatch"] = {"all": True}
    else:
        inner = draw(st.sampled_from(ref_ids))
        first["itemRefId"] = inner
        others = [r for r in ref_ids if r != inner]
        if len(others) > 0 and draw(st.booleans()):
            second["itemRefId"] = draw(st.sampled_from(others))
    for rule in (first, second):
        if draw(st.booleans()):
            rule["targetBoxRefIds"] = [draw(st.integers(100, 103))]
    return [first, second]


@st.composite
def nested_pack_requests(draw: st.DrawFn) -> Wire:
    """A request that nests: two pack-sequence stages reducing boxes to items (and
    sometimes an internal space in the items, or a pot whose hollow takes the cases:
    ``pot_for_cases``; sometimes a stage apart or a third stage: ``more_stages``), with
    exclusions, fragile limits and locks that each draw ``ignoreSubspaces`` (rules on
    the reduced items too)."""
    request = draw(pack_requests())
    request["orderId"] = "nested"
    explicit = [s["refId"] for s in request["itemSets"] if "refId" in s]
    if not explicit:
        request["itemSets"][0]["refId"] = 0
        explicit = [0]
    # Box types from small to large, so that boxes of one often fit into another.
    for i, box_type in enumerate(request["boxTypes"]):
        box_type["dimensions"] = draw(points(10 + 30 * i, 40 + 30 * i))
    request["rules"] = draw(two_stage_sequence(explicit))
    if len(request["boxTypes"]) > 1 and draw(st.booleans()):
        # Cases into the smallest type, onto the largest: boxes nest most of the time.
        request["rules"][0]["targetBoxRefIds"] = [100]
        request["rules"][1]["targetBoxRefIds"] = [100 + len(request["boxTypes"]) - 1]
    targets = [*explicit, 900]  # 900: the reduced boxes, when the first stage names them
    for _ in range(draw(st.integers(1, 3))):
        ref_id = draw(st.sampled_from(targets))
        operation = draw(st.sampled_from(["exclude", "exclude-all", "fragile", "lock-orientation"]))
        rule: Wire = {"operation": operation, "itemRefId": ref_id} | draw(ignore_subspaces())
        if operation == "exclude":
            if draw(st.integers(0, 3)) > 0:
                rule["targetItemRefIds"] = draw(st.lists(st.sampled_from(targets), min_size=1))
            else:
                rule["targetBoxRefIds"] = [draw(st.integers(100, 103))]
        elif operation == "fragile":
            if draw(st.booleans()):
                rule["options"] = {"onTopOnly": True}
            else:
                rule["options"] = {
                    "maxWeight": draw(tenths(0, 30)),
                    "excludeOverweight": draw(st.booleans()),
                }
        elif operation == "lock-orientation":
            rule["options"] = {
                "freeAxes": draw(st.lists(st.integers(0, 2), max_size=2, unique=True))
            }
        request["rules"].append(rule)
    if draw(st.integers(0, 3)) == 0:
        host = draw(st.sampled_from([s for s in request["itemSets"] if "refId" in s]))
        d = host["dimensions"]
        request["rules"].append(
            {
                "operation": "internal-space",
                "itemRefId": host["refId"],
                "options": {
                    "boxType": {"dimensions": {a: d[a] * 0.8 for a in "xyz"}},
                    "origin": {a: d[a] * 0.1 for a in "xyz"},
                    "blocking": draw(st.booleans()),
                },
            }
        )
    if draw(st.integers(0, 2)) == 0:
        request["rules"] += draw(pot_for_cases(request))
    request["rules"] += draw(more_stages(request["rules"][1], explicit))
    if draw(st.integers(0, 3)) == 0:
        request["boxesMax"] = draw(st.integers(1, 4))
    return request


@st.composite
def more_stages(draw: st.DrawFn, second: Wire, ref_ids: list[int]) -> list[Wire]:
    """Sometimes a stage at index 0 under a key of its own (its boxes, reduced, join the
    first stage of index 1: groups packed apart combine), sometimes a third stage, fed
    only by the second's boxes (made to reduce) onto the largest box type."""
    rules: list[Wire] = []
    if draw(st.integers(0, 3)) == 0:
        apart: Wire = {
            "operation": "pack-sequence",
            "itemRefId": draw(st.sampled_from(ref_ids)),
            "options": {
                "index": 0,
                "key": "apart",
                "reduce": draw(st.sampled_from(["default", "box-to-item", "box-to-item-optional"])),
            },
        }
        if draw(st.booleans()):
            apart["targetBoxRefIds"] = [100]
        rules.append(apart)
    if draw(st.integers(0, 3)) == 0:
        second["options"]["reduce"] = draw(st.sampled_from(["box-to-item", "box-to-item-optional"]))
        third: Wire = {
            "operation": "pack-sequence",
            "options": {"index": 2, "key": draw(st.sampled_from(["nest", "case"]))},
        }
        if draw(st.booleans()):
            third["targetBoxRefIds"] = [draw(st.integers(100, 103))]
        rules.append(third)
    return rules


@st.composite
def pot_for_cases(draw: st.DrawFn, request: Wire) -> list[Wire]:
    """A pot (item set refId 50) in the second stage whose hollow takes a box of the
    first stage's smallest type as an item, and units of measure (dimensionSets) on some
    item sets, so that cases of ladders go into a subspace; sometimes an internal-space
    rule on the cases themselves (reducedRefId 900: they get none). Adds the pot to
    ``request`` and returns the rules."""
    first, second = request["rules"][0], request["rules"][1]
    for item_set in request["itemSets"]:
        if draw(st.integers(0, 2)) == 0:
            item_set["dimensionSets"] = draw(dimension_sets())
    smallest = request["boxTypes"][0]["dimensions"]
    hollow = {a: smallest[a] + draw(st.sampled_from([0, 0.5, 3])) for a in "xyz"}
    request["itemSets"].append(
        {
            "refId": 50,
            "name": "pot",
            "dimensions": {a: hollow[a] + 2 for a in "xyz"},
            "weight": draw(tenths(0, 5)),
            "quantity": draw(st.integers(1, 2)),
        }
    )
    first["targetBoxRefIds"] = [100]
    second.pop("itemMatch", None)
    second["itemRefId"] = 50
    if "itemMatch" in first:  # it would take the pot too (the first stage wins)
        del first["itemMatch"]
        first["itemRefId"] = draw(
            st.sampled_from([s["refId"] for s in request["itemSets"] if s.get("refId", 50) != 50])
        )
    rules: list[Wire] = [
        {
            "operation": "internal-space",
            "itemRefId": 50,
            "options": {
                "boxType": {"dimensions": hollow, "weightMax": draw(st.sampled_from([0, 40]))},
                "origin": {"x": 1, "y": 1, "z": 1},
                "blocking": draw(st.booleans()),
            },
        }
    ]
    if draw(st.integers(0, 3)) == 0:
        rules.insert(
            0,
            {
                "operation": "internal-space",
                "itemRefId": 900,
                "options": {"boxType": {"dimensions": {"x": 1, "y": 1, "z": 1}}},
            },
        )
    return rules


@st.composite
def host_rules(draw: st.DrawFn, ref_id: int, dims: dict[str, float]) -> Wire:
    """An internal-space rule on item ``ref_id`` (of ``dims``): most often a hollow of 80 %
    of each side a tenth in, sometimes the whole item (so a unit could hold another of
    its own set), with or without a weight limit and picture options."""
    whole = draw(st.integers(0, 4)) == 0
    box_type: Wire = {
        "dimensions": dict(dims) if whole else {a: round(dims[a] * 0.8, 3) for a in "xyz"}
    }
    weight_max = draw(st.sampled_from([None, 0, 0.5, 2, 10]))
    if weight_max is not None:
        box_type["weightMax"] = weight_max
    options: Wire = {
        "boxType": box_type,
        "origin": {a: 0 if whole else round(dims[a] * 0.1, 3) for a in "xyz"},
    }
    for flag in draw(st.sets(st.sampled_from(["blocking", "display", "displayChildren"]))):
        options[flag] = draw(st.booleans())
    return {"operation": "internal-space", "itemRefId": ref_id, "options": options}


@st.composite
def subspace_pack_requests(draw: st.DrawFn) -> Wire:
    """A request whose items nest: one to three hosts, each often fitting the space of
    the next (grown by 1.3 to 2 times per side; 1.1 leaves one that fits no other host),
    small items to fill them, the ``pack_requests()`` items beside them, and sometimes
    rules that see through nesting or not (exclude, exclude-all, fragile, lock), rules
    that keep items out of spaces (pack-as-is, irregular), up to three options of
    ``OPTION_VALUES``, or pictures."""
    request = draw(pack_requests())
    request["orderId"] = "subspaces"
    side = draw(points(2, 6))
    for n in range(draw(st.integers(1, 3))):
        ref_id = 20 + n
        request["itemSets"].append(
            {
                "refId": ref_id,
                "name": f"host {n}",
                "dimensions": side,
                "weight": draw(tenths(0, 5)),
                "quantity": draw(st.integers(1, 3)),
            }
        )
        request["rules"] = [*request.get("rules", []), draw(host_rules(ref_id, side))]
        grow = draw(st.sampled_from([1.1, 1.3, 1.5, 2]))
        side = {a: round(side[a] * grow + 0.1, 1) for a in "xyz"}
    for n in range(draw(st.integers(1, 2))):
        request["itemSets"].append(
            {
                "refId": 30 + n,
                "dimensions": draw(points(0, 3).filter(lambda d: min(d.values()) > 0)),
                "weight": draw(tenths(0, 2)),
                "quantity": draw(st.integers(1, 12)),
            }
        )
    # Boxes for the largest host as given (often just its size, so that what an open
    # space leaves free decides the box count), or none (its units then have no space).
    if draw(st.integers(0, 4)) > 0:
        request["boxTypes"][0]["dimensions"] = {
            a: side[a] + draw(st.sampled_from([0, 0, 1, 5, 20])) for a in "xyz"
        }
    explicit = [s["refId"] for s in request["itemSets"] if "refId" in s]
    for _ in range(draw(st.integers(0, 2))):
        ref_id = draw(st.sampled_from(explicit))
        operation = draw(
            st.sampled_from(
                ["exclude", "exclude-all", "fragile", "lock-orientation", "pack-as-is", "irregular"]
            )
        )
        rule: Wire = {"operation": operation, "itemRefId": ref_id} | draw(ignore_subspaces())
        if operation == "exclude":
            rule["targetItemRefIds"] = draw(st.lists(st.sampled_from(explicit), min_size=1))
        elif operation == "fragile":
            rule["options"] = {"maxWeight": draw(tenths(0, 10))}
        elif operation == "lock-orientation":
            rule["options"] = {"freeAxes": draw(st.lists(st.integers(0, 2), max_size=2))}
        elif operation == "irregular":
            rule["options"] = {"maxDiameter": draw(st.integers(2, 10))}
        request["rules"].append(rule)
    for name in draw(st.sets(st.sampled_from(sorted(OPTION_VALUES)), max_size=3)):
        request[name] = draw(OPTION_VALUES[name])
    if request.get("boxTypeChoiceStyle") == "estimated" and request.get("usableSpace") == 0:
        request["usableSpace"] = 0.5  # a 422 by design (test_box_choice_options)
    if draw(st.integers(0, 4)) == 0:
        request["includeImages"] = True
    return request


@st.composite
def rated(draw: st.DrawFn) -> Wire:
    """A rate table (breakpoints or linear, with or without dimFactor), sometimes outer
    dimensions rating the box with outerBasedCost."""
    table: Wire
    if draw(st.booleans()):
        table = {"weights": [5, 20, 60], "rates": [300, 700, 1500]}
    else:
        table = {"basePrice": draw(st.integers(0, 500)), "priceIncreaseRate": draw(tenths(0, 50))}
    if draw(st.booleans()):
        table["dimFactor"] = draw(st.sampled_from([-1, 139, 166, 1000]))
    extra: Wire = {"rateTable": table}
    if draw(st.booleans()):
        extra["outer"] = {"dimensionChange": {"x": 0.5, "y": 0.5, "z": 0.5}}
        extra["outerBasedCost"] = draw(st.booleans())
    return extra


#: Every metric of a generated box size, with a scale its thresholds and limits are drawn in.
METRIC_SCALES: dict[str, st.SearchStrategy[float]] = {
    "volume": st.integers(0, 40_000).map(float),
    "surface-area": st.integers(0, 8_000).map(float),
    "surface-area-rsc": st.integers(0, 12_000).map(float),
    **{
        name: tenths(0, 150)
        for name in (
            "longest-dimension",
            "middle-dimension",
            "shortest-dimension",
            "length-plus-girth",
            "girth",
            "x-dimension",
            "y-dimension",
            "z-dimension",
        )
    },
    **{
        name: tenths(0.5, 4)
        for name in (
            "longest-to-middle-ratio",
            "longest-to-shortest-ratio",
            "middle-to-shortest-ratio",
            "z-to-y-ratio",
            "z-to-x-ratio",
            "y-to-x-ratio",
        )
    },
}


@st.composite
def axis_options(draw: st.DrawFn, axis: str) -> Wire:
    """One axis of a cartesian generator: a list of lengths, a range, or both. A range
    steps by an increment, derives its lengths from the items, fits the first item, or
    gives its min and max only."""
    out: Wire = {}
    kind = draw(st.sampled_from(["list", "range", "both"]))
    if kind != "range":
        out[f"{axis}List"] = draw(st.lists(lengths(5, 40), min_size=1, max_size=3, unique=True))
    if kind != "list":
        low = draw(lengths(1, 15))
        axis_range: Wire = {"min": low, "max": draw(lengths(int(low) + 1, 60))}
        how = draw(st.sampled_from(["increment", "deriveFromItems", "fitForFirstItem", "none"]))
        if how == "increment":
            axis_range["increment"] = draw(st.sampled_from([2.5, 5, 10]))
        elif how != "none":
            axis_range[how] = True
        out[f"{axis}Range"] = axis_range
    return out


@st.composite
def price_components(draw: st.DrawFn) -> list[Wire]:
    """Up to three price components over one or two keys (or none), each key with one
    aggregator, thresholds ascending."""
    aggregators = {key: draw(st.sampled_from(["max", "product", "sum"])) for key in ("a", "b")}
    out = []
    for _ in range(draw(st.integers(1, 3))):
        metric = draw(st.sampled_from(sorted(METRIC_SCALES)))
        thresholds = sorted(draw(st.lists(METRIC_SCALES[metric], min_size=1, max_size=3)))
        component: Wire = {
            "metric": metric,
            "thresholds": thresholds,
            "prices": draw(
                # Now and then a discount: a size priced below 0 costs 0, with a warning.
                st.lists(
                    st.integers(0, 900) | st.integers(-300, -1),
                    min_size=len(thresholds),
                    max_size=len(thresholds),
                )
            ),
        }
        key = draw(st.sampled_from(["a", "b", None]))
        if key is not None:
            component["key"] = key
            component["aggregator"] = aggregators[key]
        out.append(component)
    return out


@st.composite
def generators(draw: st.DrawFn) -> Wire:
    """A cartesian generator (lists and ranges, limits, price components, sometimes
    trimmed, named or rated) or a pack-as-is one."""
    if draw(st.integers(0, 3)) == 0:
        as_is: Wire = {"price": draw(st.integers(-1, 900))}
        if draw(st.integers(0, 2)) == 0:
            as_is.update(draw(rated()))
        return {"operation": "pack-as-is", "boxTypeDefaults": as_is}
    options: Wire = {}
    for axis in "xyz":
        options.update(draw(axis_options(axis)))
    options["noTrimToMaxExtent"] = draw(st.booleans())
    if draw(st.booleans()):
        options["limits"] = [
            {"metric": metric, bound: draw(METRIC_SCALES[metric])}
            for metric, bound in draw(
                st.lists(
                    st.tuples(
                        st.sampled_from(sorted(METRIC_SCALES)), st.sampled_from(["min", "max"])
                    ),
                    max_size=2,
                )
            )
        ]
    if draw(st.booleans()):
        options["priceComponents"] = draw(price_components())
    defaults: Wire = {"weightMax": draw(st.sampled_from([0, 300]))}
    if draw(st.booleans()):
        defaults["price"] = draw(st.integers(1, 3000))
    if draw(st.integers(0, 3)) == 0:
        defaults.update(draw(rated()))
    if draw(st.integers(0, 5)) == 0:
        defaults["name"] = "made to measure"
    return {"operation": "cartesian", "boxTypeDefaults": defaults, "options": options}


@st.composite
def generator_pack_requests(draw: st.DrawFn) -> Wire:
    """A ``pack_requests()`` request with one or two generators, few fixed box types (none
    at times, so that generated boxes are chosen), and some options that bear on them."""
    request = draw(pack_requests())
    request["boxTypes"] = request["boxTypes"][: draw(st.integers(0, 2))]
    request["boxTypeGenerators"] = draw(st.lists(generators(), min_size=1, max_size=2))
    request["generatedBoxTypesMax"] = draw(st.integers(0, 40))  # 0: all (up to 4,096)
    for name in draw(
        st.sets(
            st.sampled_from(
                ["reservedSpace", "packOrigin", "placementStyle", "sequenceSort", "layFlat"]
            ),
            max_size=2,
        )
    ):
        request[name] = draw(OPTION_VALUES[name])
    if draw(st.integers(0, 3)) == 0:
        # (A rate table here would meet a generator's of the other method: a 422.)
        request["boxTypeDefaults"] = {
            "price": draw(st.integers(1, 500)),
            "weightTare": draw(tenths(0, 2)),
        }
    explicit = [s["refId"] for s in request["itemSets"] if "refId" in s]
    if explicit:
        request["rules"] = draw(st.lists(item_rules(explicit), max_size=2))
    return request


@st.composite
def bounded_fill_rules(draw: st.DrawFn, ref_ids: st.SearchStrategy[int] | None = None) -> Wire:
    """A bounded-fill rule on one item set (its refId from ``ref_ids``, default 0..5),
    sometimes with a critical axis."""
    rule: Wire = {
        "operation": "bounded-fill",
        "itemRefId": draw(st.integers(0, 5) if ref_ids is None else ref_ids),
    }
    if draw(st.booleans()):
        rule["options"] = {"criticalAxis": draw(st.integers(0, 2))}
    return rule


@st.composite
def group_pack_rules(draw: st.DrawFn) -> Wire:
    """A group-pack rule on one item set (or on all), with a small multiplier."""
    rule: Wire = {
        "operation": "group-pack",
        "options": {
            "axisMultiplier": draw(st.integers(1, 3)),
            "axes": draw(st.lists(st.integers(0, 2), min_size=1, max_size=3, unique=True)),
            "nameSuffix": draw(st.sampled_from(["", " case"])),
        },
    }
    if draw(st.booleans()):
        rule["options"]["scaleFactorThreshold"] = draw(st.sampled_from([1, 2, 4]))
    if draw(st.booleans()):
        rule["itemMatch"] = {"all": True}
    else:
        rule["itemRefId"] = draw(st.integers(0, 5))
    return rule


#: Sides for cohort packs: whole and tenths, and values the engine's 1/10,000 grid rounds
#: up (so units it packs face to face are reported a hair apart).
_COHORT_SIDES = st.one_of(
    st.integers(1, 6), st.sampled_from([0.5, 1.5, 2.5, 0.33333, 1.66667, 2.00005, 0.9995])
)


@st.composite
def cohort_pack_requests(draw: st.DrawFn) -> Wire:
    """cohortPacking with a small cohortMax: several item sets sharing refIds (in other
    shapes, quantities and unit ladders), rules acting on refIds, and pre-packed boxes
    whose given items of those refIds lie apart in more groups than cohortMax."""
    ref_ids = draw(st.lists(st.sampled_from([1, 2, 3]), min_size=2, max_size=5))
    sets: list[Wire] = []
    for ref_id in ref_ids:
        dims = {a: draw(_COHORT_SIDES) for a in "xyz"}
        item_set: Wire = {
            "refId": ref_id,
            "dimensions": dims,
            "weight": draw(tenths(0, 5)),
            "quantity": draw(st.integers(1, 14)),
        }
        if draw(st.integers(0, 3)) == 0:
            item_set["dimensionSets"] = draw(dimension_sets())
        sets.append(item_set)
    request: Wire = {
        "orderId": "cohorts",
        "includeImages": False,
        "cohortPacking": True,
        "cohortMax": draw(st.integers(1, 3)),
        "itemSets": sets,
        "boxTypes": [
            {
                "refId": 100 + n,
                "dimensions": {a: draw(st.integers(4, 16)) for a in "xyz"},
                "weightMax": 0,
            }
            for n in range(draw(st.integers(1, 2)))
        ],
    }
    for name, values in (
        ("itemSort", st.sampled_from(ITEM_SORTS)),
        ("placementStyle", st.sampled_from(PLACEMENT_STYLES)),
        ("allowableOverhang", st.sampled_from([-1, 0, 0.5])),
        ("itemsPerBoxMax", st.integers(0, 8)),
        ("timeout", st.sampled_from([0.2])),
    ):
        if draw(st.integers(0, 3)) == 0:
            request[name] = draw(values)
    if draw(st.booleans()):
        # Given items on a lattice of 3-unit cells (each within its cell, so apart),
        # scattered so that one refId forms many groups.
        side = draw(st.integers(9, 15))
        cells = [
            (x, y, z) for x in range(0, side - 2, 3) for y in range(0, side - 2, 3) for z in (0, 3)
        ]
        chosen = draw(st.lists(st.sampled_from(cells), unique=True, max_size=10))
        given = [
            {
                "item": {
                    "refId": draw(st.sampled_from([1, 2, 3])),
                    "dimensions": {a: draw(st.sampled_from([1, 2, 0.33333, 2.5])) for a in "xyz"},
                    "weight": 1,
                    "origin": {"x": x, "y": y, "z": z},
                }
            }
            for x, y, z in chosen
        ]
        if draw(st.booleans()):
            given.append(
                {"item": {"refId": 2, "dimensions": {"x": 1, "y": 1, "z": 1}, "weight": 1}}
            )
        request["boxes"] = [
            {"dimensions": {"x": side, "y": side, "z": side}, "weightMax": 0, "items": given}
        ]
    if "boxes" not in request and draw(st.integers(0, 3)) == 0:
        # Rules that pack in parts refuse pre-packed boxes (422).
        ref_id = draw(st.sampled_from(ref_ids))
        request["rules"] = [
            draw(
                st.sampled_from(
                    [
                        {"operation": "lock-orientation", "itemRefId": ref_id},
                        {
                            "operation": "group-pack",
                            "itemRefId": ref_id,
                            "options": {"axisMultiplier": 2, "axes": [1, 2]},
                        },
                        {"operation": "bounded-fill", "itemRefId": ref_id},
                        {"operation": "fragile", "itemRefId": ref_id, "options": {"maxWeight": 2}},
                    ]
                )
            )
        ]
    return request
