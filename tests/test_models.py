"""Wire models: defaults, aliases, bounds, normalisation, unknown fields, error text."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cartonize
import pytest
from cartonize.errors import BadRequest, InvalidRequest
from cartonize.models import (
    Box,
    BoxProperties,
    BoxType,
    Dimensions,
    ErrorBody,
    Item,
    ItemEntry,
    ItemMatch,
    ItemSet,
    PackRequest,
    PackResponse,
    Point,
    WireModel,
    assemble,
    parse_request,
    unknown_fields,
    validate_request,
    validation_details,
)
from pydantic import BaseModel, ValidationError

from tests.validator import validate

Wire = dict[str, Any]


def item_set(**overrides: Any) -> Wire:
    """A valid ItemSet with `overrides` applied."""
    return {"refId": 1, "dimensions": {"x": 1, "y": 2, "z": 3}, "weight": 1, **overrides}


def box_type(**overrides: Any) -> Wire:
    """A valid BoxType with `overrides` applied."""
    return {"name": "S", "dimensions": {"x": 5, "y": 5, "z": 5}, "weightMax": 50, **overrides}


def details_of(request: Wire) -> str:
    """Validate `request`, expecting failure, and return the human error text."""
    with pytest.raises(ValidationError) as caught:
        PackRequest.model_validate(request)
    return validation_details(caught.value)


# ------------------------------------------------------------------------------ defaults


@pytest.mark.parametrize(
    ("attribute", "expected"),
    [
        ("lay_flat", False),
        ("interlock", False),
        ("corners", True),
        ("usable_space", 0.85),
        ("reserved_space", 0.0),
        ("placement_style", "default"),
        ("cohort_packing", False),
        ("cohort_max", 2),
        ("allowable_overhang", -1.0),
        ("item_sort", "combined"),
        ("item_sort_reverse", False),
        ("item_initial_orientation_preferred", True),
        ("item_initial_orientation_best_for_box", False),
        ("item_orientation_search_depth", 1),
        ("box_type_choice_style", "actual"),
        ("box_type_choice_lookahead", 0),
        ("box_type_choice_lookback", -1),
        ("box_type_choice_goal", "lowest-cost"),
        ("boxes_max", 0),
        ("boxes_per_item_set_max", 0),
        ("boxes_per_sequence_max", 0),
        ("items_per_box_max", 0),
        ("item_sets_per_box_max", 0),
        ("generated_box_types_max", 0),
        ("value_tiebreaker", "volume"),
        ("random", False),
        ("n", 5),
        ("random_max_dimension", 10),
        ("random_max_weight", 10),
        ("seed", True),
        ("seed_value", 1),
        ("include_images", True),
        ("include_scripts", False),
        ("image_format", "svg"),
        ("img_size", 400),
        ("eye", Point(x=1, y=1, z=1)),
        ("image_scale", Point(x=0, y=0, z=0)),
        ("image_scale_style", "fill"),
        ("item_sets", []),
        ("box_types", []),
        ("boxes", []),
        ("rules", []),
        ("timeout", None),
        ("template", None),
    ],
)
def test_default(attribute: str, expected: object) -> None:
    assert getattr(PackRequest(), attribute) == expected


@pytest.mark.parametrize(
    ("wire_field", "attribute", "expected"),
    [
        ("usableSpace", "usable_space", 0.85),
        ("boxTypeChoiceLookback", "box_type_choice_lookback", -1),
        ("corners", "corners", True),
        ("eye", "eye", Point(x=1, y=1, z=1)),
        ("itemSets", "item_sets", []),
        ("timeout", "timeout", None),
    ],
)
def test_null_means_default(wire_field: str, attribute: str, expected: object) -> None:
    assert getattr(PackRequest.model_validate({wire_field: None}), attribute) == expected


def test_item_set_defaults() -> None:
    parsed = PackRequest.model_validate({"itemSets": [item_set()]}).item_sets[0]
    assert (parsed.quantity, parsed.virtual, parsed.center_of_mass) == (1, False, None)


# ------------------------------------------------------------------------------ aliases


SNAKE_ITEM_SET = {"ref_id": 7, "weight": 1, "dimensions": {"x": 1, "y": 2, "z": 3}, "quantity": 3}


@pytest.mark.parametrize(
    "wire",
    [
        {"itemSets": [item_set(refId=7, quantity=3)]},
        {"item_sets": [SNAKE_ITEM_SET]},
        # Both spellings at once: the wire name wins.
        {"itemSets": [{**SNAKE_ITEM_SET, "refId": 7, "ref_id": 8}]},
    ],
)
def test_both_spellings_accepted(wire: Wire) -> None:
    parsed = PackRequest.model_validate(wire).item_sets[0]
    assert (parsed.ref_id, parsed.quantity) == (7, 3)


def test_dump_is_camel_case() -> None:
    request = PackRequest.model_validate(
        {"itemSets": [item_set(centerOfMass={"x": 1})], "seedFromOrderId": True}
    )
    dumped = request.model_dump(by_alias=True, exclude_none=True)
    assert dumped["seedFromOrderId"] is True
    assert dumped["itemSets"][0]["centerOfMass"] == {"x": 1.0, "y": 0.0, "z": 0.0}
    assert "item_sets" not in dumped


def test_reserved_word_fields_use_their_wire_names() -> None:
    match = ItemMatch.model_validate({"all": True, "property": "sku", "expression": "A-"})
    assert (match.all_items, match.property_name) == (True, "sku")
    assert match.model_dump(exclude_none=True)["property"] == "sku"


@pytest.mark.parametrize(("given", "expected"), [("PNG", "png"), ("Svg", "svg"), ("svg", "svg")])
def test_image_format_any_case(given: str, expected: str) -> None:
    assert PackRequest.model_validate({"imageFormat": given}).image_format == expected


def test_legacy_key_accepted_but_never_dumped() -> None:
    request = PackRequest.model_validate({"key": "secret-api-key-123"})
    assert request.key is not None
    assert request.key.get_secret_value() == "secret-api-key-123"
    assert "secret" not in request.model_dump_json()
    assert "secret" not in repr(request)


def test_numbers_accepted_as_sequence_text() -> None:
    parsed = PackRequest.model_validate({"itemSets": [item_set(sequence=1120)]})
    assert parsed.item_sets[0].sequence == "1120"


# ------------------------------------------------------------------------------ bounds


@pytest.mark.parametrize(
    ("request_body", "expected"),
    [
        (
            {"itemSets": [item_set(dimensions={"x": -1, "y": 2, "z": 3})]},
            "itemSets[0].dimensions.x: must be greater than 0 (got -1)",
        ),
        (
            {"itemSets": [item_set(dimensions={"x": 1, "y": 0, "z": 3})]},
            "itemSets[0].dimensions.y: must be greater than 0 (got 0)",
        ),
        (
            {"itemSets": [item_set(dimensions={"x": 1, "y": 2})]},
            "itemSets[0].dimensions.z: is required",
        ),
        ({"itemSets": [item_set(weight=-0.5)]}, "itemSets[0].weight: must be a number >= 0"),
        ({"itemSets": [item_set(quantity=-1)]}, "itemSets[0].quantity: must be an integer >= 0"),
        ({"itemSets": [item_set(quantity=1.5)]}, "itemSets[0].quantity: must be an integer"),
        ({"itemSets": [item_set(weight="heavy")]}, "itemSets[0].weight: must be a number"),
        (
            {"itemSets": [{"dimensions": {"x": 1, "y": 1, "z": 1}}]},
            "itemSets[0].weight: is required",
        ),
        ({"usableSpace": 1.5}, "usableSpace: must be a number <= 1 (got 1.5)"),
        ({"reservedSpace": -0.1}, "reservedSpace: must be a number >= 0 (got -0.1)"),
        (
            {"placementStyle": "foo"},
            "placementStyle: must be one of 'default', 'corner', 'wedge', 'mound', 'orb' "
            "(got 'foo')",
        ),
        ({"itemSort": "random"}, "itemSort: must be one of 'default', 'largest-box-needed'"),
        ({"boxTypeSets": ["acme"]}, "boxTypeSets[0]: must be one of 'customer' (got 'acme')"),
        ({"imageFormat": "gif"}, "imageFormat: must be one of 'svg', 'png' (got 'gif')"),
        ({"itemOrientationSearchDepth": -1}, "itemOrientationSearchDepth: must be an integer >= 0"),
        ({"boxTypes": [box_type(price=-1)]}, "boxTypes[0].price: must be an integer >= 0"),
        ({"boxTypes": [box_type(weightMax=-1)]}, "boxTypes[0].weightMax: must be a number >= 0"),
        ({"boxTypes": [box_type(weightTare=-1)]}, "boxTypes[0].weightTare: must be a number >= 0"),
        (
            {"boxTypes": [box_type(reservedSpace=2)]},
            "boxTypes[0].reservedSpace: must be a number <=",
        ),
        (
            {"boxTypes": [box_type(dimensions={"x": 5, "y": 5, "z": 0})]},
            "boxTypes[0].dimensions.z: must be greater than 0 (got 0)",
        ),
        ({"boxTypes": [{"name": "S", "weightMax": 1}]}, "boxTypes[0].dimensions: is required"),
        (
            {"boxTypes": [box_type(rateTable={"weights": [1, 2], "rates": [5]})]},
            "boxTypes[0].rateTable: rates and weights must have the same length (got 1 and 2)",
        ),
        ({"coordOrder": [0, 0, 2]}, "coordOrder: must be a permutation of [0, 1, 2]"),
        ({"itemsInlineMax": [1, 2]}, "itemsInlineMax: must be 3 integers >= 0"),
        ({"layFlat": "sometimes"}, "layFlat: must be true or false (got 'sometimes')"),
        ({"itemSets": {"refId": 1}}, "itemSets: must be an array (got an object)"),
        ({"itemSets": [5]}, "itemSets[0]: must be an object (got 5)"),
        ({"rules": [{"itemRefId": 1}]}, "rules[0].operation: is required"),
        ({"rules": [{"operation": "glue"}]}, "rules[0].operation: must be one of 'exclude',"),
        (
            {
                "boxTypeGenerators": [
                    {"operation": "cartesian", "options": {"xRange": {"min": 9, "max": 2}}}
                ]
            },
            "boxTypeGenerators[0].options.xRange: min must not be above max (got min 9, max 2)",
        ),
        (
            {
                "boxTypeGenerators": [
                    {"operation": "cartesian", "options": {"limits": [{"metric": "mass"}]}}
                ]
            },
            "boxTypeGenerators[0].options.limits[0].metric: must be one of 'volume',",
        ),
        (
            {
                "boxTypeGenerators": [
                    {
                        "operation": "cartesian",
                        "options": {
                            "priceComponents": [
                                {"metric": "volume", "thresholds": [1, 2], "prices": [3]}
                            ]
                        },
                    }
                ]
            },
            "boxTypeGenerators[0].options.priceComponents[0]: thresholds and prices must have the "
            "same length (got 2 and 1)",
        ),
        ({"timeout": 0}, "timeout: must be greater than 0 (got 0)"),
        # Past the engine's ranges: 32-bit unit counts and fixed-point lengths.
        (
            {"itemSets": [item_set(quantity=2**32)]},
            "itemSets[0].quantity: must be an integer <= 4294967295",
        ),
        (
            {"itemSets": [item_set(dimensions={"x": 1e300, "y": 1, "z": 1})]},
            "itemSets[0].dimensions.x: must be a number <= 1000000000",
        ),
        ({"random": True, "n": 70_000}, "n: must be an integer <= 65535"),
        ({"imgSize": 10**23}, "imgSize: must be an integer <= 4096"),
        (
            {"boxTypeGenerators": [{"options": {"xList": [1e12]}}]},
            "boxTypeGenerators[0].options.xList[0]: must be a number <= 1000000000",
        ),
        (
            {"boxTypes": [{"name": "S", "dimensions": {"x": 1, "y": 1, "z": 1}}]},
            "boxTypes[0].weightMax: is required",
        ),
    ],
)
def test_validation_details_name_the_wire_path(request_body: Wire, expected: str) -> None:
    assert expected in details_of(request_body)


def test_snake_case_input_still_reports_wire_paths() -> None:
    details = details_of({"item_sets": [{"ref_id": 1, "weight": 1, "dimensions": {"x": 0}}]})
    assert details.startswith("itemSets[0].dimensions.x: must be greater than 0 (got 0)")


def test_several_errors_joined_with_semicolons() -> None:
    details = details_of({"usableSpace": 2, "itemSets": [item_set(quantity=-1)]})
    assert details.split("; ") == [
        "itemSets[0].quantity: must be an integer >= 0 (got -1)",
        "usableSpace: must be a number <= 1 (got 2)",
    ]


@pytest.mark.parametrize("extreme", [float("inf"), float("nan")])
def test_non_finite_numbers_rejected(extreme: float) -> None:
    assert "itemSets[0].weight: must be a finite number" in details_of(
        {"itemSets": [item_set(weight=extreme)]}
    )


def test_generator_box_defaults_allow_price_minus_one() -> None:
    request = PackRequest.model_validate(
        {"boxTypeGenerators": [{"operation": "pack-as-is", "boxTypeDefaults": {"price": -1}}]}
    )
    defaults = request.box_type_generators[0].box_type_defaults
    assert defaults is not None
    assert defaults.price == -1


@pytest.mark.parametrize(
    ("color", "fails"),
    [("#FF00aa", False), ("tomato", True), ("#fff", True), (None, False)],
)
def test_png_needs_hex_colors(color: str | None, fails: bool) -> None:
    body = {"imageFormat": "PNG", "itemSets": [item_set(color=color)]}
    if fails:
        assert "itemSets[0].color: must be '#' and 6 hex digits" in details_of(body)
    else:
        assert PackRequest.model_validate(body).item_sets[0].color == color


def test_svg_accepts_color_names() -> None:
    assert PackRequest.model_validate({"itemSets": [item_set(color="tomato")]}).item_sets


# ------------------------------------------------------------------------------ normalising


@pytest.mark.parametrize(
    ("given", "used", "warned"),
    [(0, 0, False), (4, 4, False), (5, 4, True), (100, 4, True)],
)
def test_search_depth_clamped_with_warning(given: int, used: int, warned: bool) -> None:
    request = PackRequest.model_validate({"itemOrientationSearchDepth": given, "orderId": "o"})
    assert request.item_orientation_search_depth == used
    warnings = request.warnings_for_request()
    assert any("itemOrientationSearchDepth" in w for w in warnings) is warned
    if warned:
        assert warnings == [f"itemOrientationSearchDepth {given} is above the maximum 4; using 4"]


def test_box_types_inherit_defaults_field_by_field() -> None:
    request = PackRequest.model_validate(
        {
            "boxTypeDefaults": {"weightMax": 50, "price": 100, "rateTable": {"dimFactor": 139}},
            "boxTypes": [
                {"dimensions": {"x": 1, "y": 1, "z": 1}, "price": 7, "rateTable": {"zone": "2"}},
            ],
        }
    )
    resolved = request.resolved_box_types()[0]
    assert (resolved.weight_max, resolved.price) == (50, 7)
    assert resolved.rate_table is not None
    assert (resolved.rate_table.dim_factor, resolved.rate_table.zone) == (139, "2")
    assert request.box_types[0].weight_max is None  # the request itself is left as given


def test_with_defaults_none_is_identity() -> None:
    own = BoxType.model_validate(box_type())
    assert own.with_defaults(None) is own
    assert own.with_defaults(BoxProperties()) == own


# ------------------------------------------------------------------------------ unknown fields


@pytest.mark.parametrize(
    ("request_body", "paths"),
    [
        ({"orderId": "o"}, []),
        ({"orderId": "o", "colour": "red"}, ["colour"]),
        (
            {"orderId": "o", "itemSets": [item_set(), item_set(colour="red")]},
            ["itemSets[1].colour"],
        ),
        (
            {"orderId": "o", "itemSets": [item_set(dimensions={"x": 1, "y": 1, "z": 1, "w": 2})]},
            ["itemSets[0].dimensions.w"],
        ),
        (
            {"orderId": "o", "boxTypes": [box_type(rateTable={"dimfactor": 1})]},
            ["boxTypes[0].rateTable.dimfactor"],
        ),
        (
            {"orderId": "o", "boxes": [{"items": [{"item": item_set(sku="A"), "qty": 1}]}]},
            ["boxes[0].items[0].qty", "boxes[0].items[0].item.sku"],
        ),
        (
            {
                "orderId": "o",
                "boxTypeGenerators": [{"operation": "cartesian", "options": {"xlist": [1]}}],
            },
            ["boxTypeGenerators[0].options.xlist"],
        ),
        # Free-form objects are the client's own: nothing inside them is unknown.
        ({"orderId": "o", "properties": {"anything": 1}}, []),
        ({"orderId": "o", "rules": [{"operation": "fragile", "options": {"maxWeight": 2}}]}, []),
        ({"orderId": "o", "itemSets": [item_set(properties={"hazmat": True})]}, []),
    ],
)
def test_unknown_fields_reported_as_warnings(request_body: Wire, paths: list[str]) -> None:
    request = PackRequest.model_validate(request_body)
    assert request.warnings_for_request() == [f"unknown field '{p}' ignored" for p in paths]


def test_unknown_fields_survive_copies() -> None:
    request = PackRequest.model_validate({"colour": 1, "itemSets": [item_set(colour="red")]})
    copied = request.model_copy(update={"order_id": "o"})
    item_set_copy = request.item_sets[0].model_copy(update={"quantity": 2})
    assert unknown_fields(copied) == ["colour", "itemSets[0].colour"]
    assert unknown_fields(item_set_copy) == ["colour"]


def test_objects_without_unknown_fields_carry_no_private_dict() -> None:
    # Declared private attributes would make pydantic build a dict for every object read.
    request = PackRequest.model_validate({"itemSets": [item_set()]})
    assert request.item_sets[0].__pydantic_private__ is None
    assert request.item_sets[0].dimensions.__pydantic_private__ is None


def test_unknown_fields_are_not_dumped() -> None:
    request = PackRequest.model_validate({"itemSets": [item_set(colour="red")]})
    assert "colour" not in request.model_dump_json()


@pytest.mark.parametrize(
    ("ids", "warned"),
    [({}, True), ({"orderId": ""}, True), ({"orderId": "A1"}, False), ({"requestId": "r"}, False)],
)
def test_missing_ids_warning(ids: Wire, warned: bool) -> None:
    warnings = PackRequest.model_validate(ids).warnings_for_request()
    assert any("orderId or requestId" in w for w in warnings) is warned


# ------------------------------------------------------------------------------ parse_request


@pytest.mark.parametrize("raw", [b"", b"  \n", "", b"{}"])
def test_empty_body_is_an_empty_request(raw: bytes | str) -> None:
    assert parse_request(raw) == PackRequest()


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"{", "malformed JSON"),
        (b'{"n": NaN}', "malformed JSON"),
        (b"\xff\xfe", "malformed JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "malformed JSON"),
        # A lone surrogate is no Unicode text: storing or drawing the pack raised (a 500).
        (b'{"orderId": "A\\ud800"}', "malformed JSON"),
        (b'{"itemSets": [{"name": "\xed\xb0\x80"}]}', "malformed JSON"),
        (b"[]", "request body must be a JSON object"),
        (b"42", "request body must be a JSON object"),
        (b'"text"', "request body must be a JSON object"),
    ],
)
def test_malformed_body_is_bad_request(raw: bytes, message: str) -> None:
    with pytest.raises(BadRequest) as caught:
        parse_request(raw)
    assert (caught.value.status, caught.value.message) == (400, message)


def test_validate_request_passes_models_through() -> None:
    request = PackRequest(order_id="A")
    assert validate_request(request) is request
    assert validate_request({"orderId": "A"}) == request
    with pytest.raises(BadRequest):
        validate_request([{"orderId": "A"}])


def test_invalid_body_is_invalid_request() -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse_request(b'{"usableSpace": 1.5}')
    body = caught.value.to_body()
    assert body == {
        "code": 422,
        "message": "invalid request",
        "details": "usableSpace: must be a number <= 1 (got 1.5)",
    }


# ------------------------------------------------------------------------------ response


def test_empty_response_has_lists_and_zero_totals() -> None:
    dumped = PackResponse().model_dump(by_alias=True, exclude_none=True)
    assert dumped["boxes"] == dumped["leftovers"] == dumped["warnings"] == []
    assert (dumped["lenBoxes"], dumped["totalCost"], dumped["imageScaleStyleUsed"]) == (
        0,
        0,
        "fill",
    )


@pytest.mark.parametrize(
    ("model", "values"),
    [
        (Point, {"x": 1.0}),
        (Point, {}),
        (Item, {"ref_id": 3, "weight": 1.0, "origin": Point(x=1.0)}),
        (Item, {"refId": 3, "weight": 1.0}),  # an alias: pydantic's own path
        (Box, {"id": 0, "volume_max": 8.0}),
        (PackResponse, {"len_boxes": 2, "warnings": ["w"]}),
        (PackRequest, {"order_id": "o"}),
    ],
)
def test_model_construct_matches_pydantic(model: type[BaseModel], values: Wire) -> None:
    fast = model.model_construct(**values)
    plain = BaseModel.model_construct.__func__(model, **values)  # type: ignore[attr-defined]
    assert fast.__dict__ == plain.__dict__
    assert fast.model_fields_set == plain.model_fields_set
    assert fast.__pydantic_private__ == plain.__pydantic_private__
    assert fast.__pydantic_extra__ == plain.__pydantic_extra__
    # Mutable defaults are never shared between models.
    again = model.model_construct(**values)
    for name, value in fast.__dict__.items():
        if isinstance(value, list | dict) and name not in values:
            assert again.__dict__[name] is not value


@pytest.mark.parametrize(
    ("model", "values"),
    [
        (Point, {"x": 1.0, "y": 2.0, "z": 3.0}),
        (Dimensions, {"x": 1.0, "y": 2.0, "z": 3.0}),
        (Item, {"ref_id": 3, "weight": 1.0, "origin": Point(x=1.0), "index": 1}),
        (ItemSet, {"weight": 1.0, "quantity": 2}),
        (Box, {"id": 0, "volume_max": 8.0}),
        (ItemEntry, {"item": Item.model_construct(weight=1.0)}),
    ],
)
def test_assemble_matches_model_construct(model: type[WireModel], values: Wire) -> None:
    fields_set = set(values)
    built = assemble(model, dict(values), fields_set)
    plain = BaseModel.model_construct.__func__(model, **values)  # type: ignore[attr-defined]
    assert type(built) is model
    assert built.__dict__ == plain.__dict__
    assert built.model_fields_set == plain.model_fields_set
    assert built.model_fields_set is fields_set
    assert built.__pydantic_private__ == plain.__pydantic_private__
    assert built.__pydantic_extra__ == plain.__pydantic_extra__
    if issubclass(model, Point) and set(values) == {"x", "y", "z"}:
        point = model.of(values["x"], values["y"], values["z"])
        assert point.__dict__ == plain.__dict__
        assert point.model_fields_set == plain.model_fields_set
        assert point.__pydantic_private__ == plain.__pydantic_private__


def test_response_rejects_unknown_fields() -> None:
    with pytest.raises(ValidationError):
        PackResponse.model_validate({"lenBox": 1})


def test_packed_box_round_trips() -> None:
    wire = {
        "id": 0,
        "name": "S",
        "dimensions": {"x": 5.0, "y": 5.0, "z": 5.0},
        "weightMax": 50.0,
        "price": 120,
        "items": [
            {
                "item": {
                    **item_set(),
                    "index": 1,
                    "uniqueId": "1-0",
                    "origin": {"x": 0.0, "y": 0.0, "z": 0.0},
                    "deltaCost": 3,
                }
            }
        ],
        "volumeUtilization": 0.048,
        "depthOrder": [1],
    }
    box = Box.model_validate(wire)
    assert Box.model_validate(box.model_dump()) == box
    assert box.items[0].item.unique_id == "1-0"


@pytest.mark.parametrize(("code", "valid"), [(99, False), (100, True), (422, True), (601, False)])
def test_error_body_code_bounds(code: int, valid: bool) -> None:
    if valid:
        assert ErrorBody(code=code, message="m").code == code
    else:
        with pytest.raises(ValidationError):
            ErrorBody(code=code, message="m")


def _weighty(item: dict[str, Any], box: dict[str, Any]) -> dict[str, Any]:
    """A request of one item set and one box type, with the given fields added."""
    return {
        "itemSets": [
            {"refId": 1, "dimensions": {"x": 1, "y": 2, "z": 3}, "weight": 1, "quantity": 50} | item
        ],
        "boxTypes": [{"refId": 1, "dimensions": {"x": 10, "y": 10, "z": 10}, "weightMax": 0} | box],
        "includeImages": False,
    }


@pytest.mark.parametrize(
    ("item", "box", "field"),
    [
        ({"weight": 1e308}, {}, "itemSets[0].weight"),
        ({}, {"weightTare": 1e300}, "boxTypes[0].weightTare"),
        ({}, {"price": 10**13}, "boxTypes[0].price"),
        ({}, {"rateTable": {"basePrice": 1, "priceIncreaseRate": 1e300}}, "priceIncreaseRate"),
        ({}, {"rateTable": {"rates": [1, -1e300], "weights": [1, 2]}}, "rateTable.rates[1]"),
    ],
)
def test_weights_and_money_beyond_any_real_one_are_refused(
    item: dict[str, Any], box: dict[str, Any], field: str
) -> None:
    # Their totals ran to infinity: the endpoint answered 500 (out-of-range floats in the
    # JSON, or a cost the engine could not return). Now a 422 on the field.
    with pytest.raises(InvalidRequest) as refused:
        cartonize.pack(_weighty(item, box))
    assert field in str(refused.value.details)


def test_the_largest_weights_and_money_still_total_finitely() -> None:
    request = _weighty(
        {"weight": 1e12},
        {
            "price": 10**12,
            "weightTare": 1e12,
            "rateTable": {"basePrice": 1e12, "priceIncreaseRate": 1e12},
        },
    )
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    assert validate(request, response) == []
    assert response["totalWeight"] == 51e12


@pytest.mark.parametrize(
    ("box", "item_weight", "field"),
    [
        ({"weightTare": 1e308}, 1.0, "boxes[0].weightTare"),
        ({"weightMax": 1e308}, 1.0, "boxes[0].weightMax"),
        ({}, 1e308, "boxes[0].items[0].item.weight"),
    ],
)
def test_pre_packed_weights_beyond_any_real_one_are_refused(
    box: dict[str, Any], item_weight: float, field: str
) -> None:
    given = {"refId": 7, "dimensions": {"x": 1, "y": 1, "z": 1}, "weight": item_weight}
    request = _weighty({}, {}) | {
        "boxes": [
            {
                "dimensions": {"x": 5, "y": 5, "z": 5},
                "weightMax": 0,
                "items": [{"item": given | {"origin": {"x": 0, "y": 0, "z": 0}}}],
            }
            | box
        ]
    }
    with pytest.raises(InvalidRequest) as refused:
        cartonize.pack(request)
    assert field in str(refused.value.details)


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"boxTypeDefaults": {"weightTare": 1e305}}, "boxTypeDefaults.weightTare"),
        (
            {
                "boxTypeGenerators": [
                    {"operation": "pack-as-is", "boxTypeDefaults": {"weightTare": 1e305}}
                ]
            },
            "boxTypeGenerators[0].boxTypeDefaults.weightTare",
        ),
    ],
)
def test_default_box_weights_beyond_any_real_one_are_refused(
    extra: dict[str, Any], field: str
) -> None:
    # A generator's defaults reached a bounded BoxType inside pack(): a 500 (schemathesis).
    with pytest.raises(InvalidRequest) as refused:
        cartonize.pack(_weighty({}, {}) | extra)
    assert field in str(refused.value.details)


def _priced_generator(aggregator: str, prices: list[list[int]]) -> dict[str, Any]:
    """A cartesian generator of one 4x4x4 size whose components (one per entry of
    `prices`, sharing one key) all trigger on it."""
    components = [
        {"metric": "volume", "aggregator": aggregator, "thresholds": [0] * len(p), "prices": p}
        for p in prices
    ]
    return {
        "boxTypeGenerators": [
            {
                "operation": "cartesian",
                "boxTypeDefaults": {"weightMax": 0},
                "options": {
                    "xList": [4],
                    "yList": [4],
                    "zList": [4],
                    "priceComponents": components,
                },
            }
        ]
    }


@pytest.mark.parametrize(
    ("generator", "field"),
    [
        (_priced_generator("max", [[10**400]]), "priceComponents[0].prices[0]: must be"),
        (_priced_generator("max", [[-(10**13)]]), "priceComponents[0].prices[0]: must be"),
        (
            _priced_generator("product", [[10**7], [10**6, 10**7]]),
            "priceComponents: the components can price a box at up to 100000000000000 ",
        ),
        (
            _priced_generator("sum", [[10**12], [1]]),
            "priceComponents: the components can price a box at up to 1000000000001 ",
        ),
    ],
)
def test_generated_prices_beyond_any_real_one_are_refused(
    generator: dict[str, Any], field: str
) -> None:
    # A price beyond a double, or a product of large ones, reached the engine as a number
    # it could not read: the endpoint answered 500.
    request = _weighty({}, {}) | {"boxTypes": []} | generator
    with pytest.raises(InvalidRequest) as refused:
        cartonize.pack(request)
    assert f"boxTypeGenerators[0].options.{field}" in str(refused.value.details)


@pytest.mark.parametrize(
    "generator",
    [
        _priced_generator("product", [[10**6], [10**6]]),
        _priced_generator("sum", [[10**11] * 5, [5 * 10**11]]),
        _priced_generator("max", [[1, 10**12], [10**12]]),
    ],
)
def test_the_largest_generated_prices_still_cost_finitely(generator: dict[str, Any]) -> None:
    request = _weighty({}, {}) | {"boxTypes": []} | generator
    response = cartonize.pack(request).model_dump(by_alias=True, exclude_none=True)
    assert validate(request, response) == []
    assert response["lenLeftovers"] == 0
    assert response["totalCost"] == 10**12 * response["lenBoxes"]


def test_an_integer_too_long_for_python_is_a_422_on_its_field() -> None:
    # Python's json refused it with advice for the server ("use
    # sys.set_int_max_str_digits()"), as a 400 naming no field.
    item = b'{"refId": 1, "dimensions": {"x": 1, "y": 1, "z": 1}, "weight": 1, "quantity": 1'
    with pytest.raises(InvalidRequest) as refused:
        parse_request(b'{"itemSets": [' + item + b"0" * 5000 + b"}]}")
    assert refused.value.details == "itemSets[0].quantity: must be a finite number (got inf)"


def test_a_long_integer_is_described_not_echoed() -> None:
    with pytest.raises(InvalidRequest) as refused:
        cartonize.pack({"itemSets": [item_set(quantity=10**4000)]})
    assert refused.value.details == (
        "itemSets[0].quantity: must be an integer <= 4294967295 (got an integer of 4001 digits)"
    )


def _nested(levels: int) -> dict[str, Any]:
    """An object whose innermost value lies `levels` objects deep (itself the first)."""
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


@pytest.mark.parametrize(
    ("place", "field"),
    [
        (lambda r, v: r["itemSets"][0].update(properties=v), "itemSets[0].properties"),
        (lambda r, v: r["boxTypes"][0].update(properties=v), "boxTypes[0].properties"),
        (lambda r, v: r.update(properties=v), "properties"),
        (lambda r, v: r.update(rules=[{"operation": "exclude", "options": v}]), "rules[0].options"),
    ],
)
def test_free_form_objects_nest_at_most_64_levels(
    place: Callable[[dict[str, Any], dict[str, Any]], None], field: str
) -> None:
    # pydantic refuses to serialise past its own depth limit: a properties object nested
    # 500 deep made the endpoint answer 500 when it fingerprinted the request.
    deepest = _weighty({}, {})
    place(deepest, _nested(64))
    response = cartonize.pack(deepest).model_dump(mode="json", by_alias=True, exclude_none=True)
    assert response["lenLeftovers"] == 0 or "rules" in deepest
    too_deep = _weighty({}, {})
    place(too_deep, _nested(65))
    with pytest.raises(InvalidRequest) as refused:
        cartonize.pack(too_deep)
    assert refused.value.details == (
        f"{field}: must not nest objects or arrays more than 64 levels deep"
    )


def test_escaped_surrogate_pairs_are_one_character() -> None:
    request = parse_request(b'{"orderId": "box \\ud83d\\udce6", "properties": {"\\u00e9": 1}}')
    assert request.order_id == "box \U0001f4e6"
    assert request.properties == {"\u00e9": 1}
