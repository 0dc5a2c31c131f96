"""Wire models of the pack endpoint: request, response and error body.

Python attributes are snake_case; the wire is camelCase (pydantic alias generator), and both
spellings are accepted on input. Request objects accept unknown fields, drop them, and
remember them so that `PackRequest.warnings_for_request()` can report them. An explicit JSON
`null` on a field that has a default means "use the default", as if the field were absent.
"""

from __future__ import annotations

import copy
import functools
import inspect
import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Self, TypeVar, cast, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic._internal._model_construction import init_private_attributes
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails, PydanticCustomError, PydanticUndefined

from cartonize import jsontext
from cartonize.errors import BadRequest, InvalidRequest

__all__ = [
    "MAX_ITEM_ORIENTATION_SEARCH_DEPTH",
    "WHOLE_MODEL_STEPS",
    "XYZ",
    "Box",
    "BoxEntry",
    "BoxMatch",
    "BoxProperties",
    "BoxType",
    "BoxTypeGenerator",
    "DimensionSet",
    "Dimensions",
    "ErrorBody",
    "GeneratedBoxDefaults",
    "GeneratorAxisRange",
    "GeneratorLimit",
    "GeneratorOptions",
    "GeneratorPriceComponent",
    "Image",
    "Item",
    "ItemEntry",
    "ItemMatch",
    "ItemProperties",
    "ItemSet",
    "Metric",
    "Nested",
    "Outer",
    "PackRequest",
    "PackResponse",
    "Point",
    "PropertyConstraint",
    "RateTable",
    "RequestModel",
    "Rule",
    "SpaceLook",
    "Subspace",
    "WireModel",
    "assemble",
    "assemble_whole",
    "parse_request",
    "private_value",
    "response_totals",
    "set_private_value",
    "unknown_fields",
    "validate_request",
    "validation_details",
]

MAX_ITEM_ORIENTATION_SEARCH_DEPTH = 4
#: Widest picture rendered, in pixels (docs/decisions.md: a larger imgSize is a 422; the
#: renderer holds the same limit).
MAX_IMG_SIZE = 4096
#: Longest length the engine takes (its fixed-point range with room for sums).
MAX_LENGTH = 1e9

# Bounds on float fields are written as floats (0.0) and on int fields as ints (0): pydantic
# reports the bound with its type, which is how `validation_details` tells "an integer" from
# "a number" without re-reading the schema.
Fraction = Annotated[float, Field(ge=0.0, le=1.0)]
NonNegative = Annotated[float, Field(ge=0.0)]
Positive = Annotated[float, Field(gt=0.0)]
Length = Annotated[float, Field(gt=0.0, le=MAX_LENGTH)]
#: Heaviest weight and largest amount of money a request's own fields take: sums over
#: 2**32 units, and rates times weights, stay finite (beyond it they ran to infinity and
#: the endpoint answered 500). Far above any real parcel, pallet or price.
MAX_AMOUNT = 1e12
#: Most units of an item set (and eaches in a rung): the engine counts units in 32 bits.
MAX_QUANTITY = 2**32 - 1
Weight = Annotated[float, Field(ge=0.0, le=MAX_AMOUNT)]
Amount = Annotated[float, Field(ge=-MAX_AMOUNT, le=MAX_AMOUNT)]

#: Deepest nesting of a free-form object (`properties`, a rule's `options`): far more than
#: any real one has. pydantic refuses to serialise much deeper ones ("Maximum
#: serialization depth exceeded"), which made the endpoint answer 500.
MAX_NESTING = 64


def _nesting_bounded(value: dict[str, Any]) -> dict[str, Any]:
    """`value` when no object or array in it lies more than MAX_NESTING levels deep."""
    level: list[tuple[object, int]] = [(value, 1)]
    while level:
        node, depth = level.pop()
        if isinstance(node, dict):
            children: Iterable[object] = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > MAX_NESTING:
            raise ValueError(f"must not nest objects or arrays more than {MAX_NESTING} levels deep")
        level.extend((child, depth + 1) for child in children)
    return value


#: A free-form JSON object, bounded in depth.
JsonObject = Annotated[dict[str, Any], AfterValidator(_nesting_bounded)]

PlacementStyle = Literal["default", "corner", "wedge", "mound", "orb"]
ItemSort = Literal[
    "default",
    "largest-box-needed",
    "largest-girth",
    "largest-length-plus-girth",
    "longest-dimension",
    "shortest-dimension",
    "largest-cross-section",
    "set-volume",
    "density",
    "weight",
    "combined",
    "all",
]
BoxTypeChoiceStyle = Literal["actual", "estimated"]
BoxTypeChoiceGoal = Literal["lowest-cost", "most-items"]
ValueTiebreaker = Literal["volume", "weight"]
ImageFormat = Literal["svg", "png"]
ImageScaleStyle = Literal["fill", "largest-box", "largest-box-type"]
ImageScaleStyleUsed = Literal["fill", "largest-box", "largest-box-type", "override"]
Template = Literal["demo.tmpl", "shipapp.tmpl", "boat.tmpl", "classic"]
BoxTypeSet = Literal["customer"]
GeneratorOperation = Literal["cartesian", "pack-as-is"]
PriceAggregator = Literal["max", "product", "sum"]
Metric = Literal[
    "volume",
    "surface-area",
    "surface-area-rsc",
    "longest-dimension",
    "middle-dimension",
    "shortest-dimension",
    "length-plus-girth",
    "girth",
    "x-dimension",
    "y-dimension",
    "z-dimension",
    "longest-to-middle-ratio",
    "longest-to-shortest-ratio",
    "middle-to-shortest-ratio",
    "z-to-y-ratio",
    "z-to-x-ratio",
    "y-to-x-ratio",
]
RuleOperation = Literal[
    "exclude",
    "exclude-all",
    "pack-as-is",
    "irregular",
    "lock-orientation",
    "internal-space",
    "alternate-dimensions",
    "fragile",
    "set-properties",
    "group-pack",
    "pack-sequence",
    "bounded-fill",
]

#: Request options that only shape random items, and ones that only shape pictures.
_RANDOM_OPTIONS = (
    "n",
    "random_max_dimension",
    "random_max_weight",
    "random_max_quantity",
    "seed",
    "seed_value",
    "seed_from_order_id",
)
_IMAGE_OPTIONS = (
    "img_size",
    "template",
    "include_scripts",
    "image_format",
    "image_scale",
    "image_scale_style",
    "eye",
    "sequence_heat_map",
)

#: The option keys each rule operation reads (docs/rules.md); others are ignored with a
#: warning. `packAsGiven` is internal: internal-space gives it to its hosts' locks.
RULE_OPTION_KEYS: dict[str, frozenset[str]] = {
    "exclude": frozenset(),
    "exclude-all": frozenset(),
    "pack-as-is": frozenset(),
    "lock-orientation": frozenset({"freeAxes", "packAsGiven"}),
    "irregular": frozenset(
        {"type", "innerDiameter", "spoolWeight", "maxDiameter", "maxWeight", "minRollLength"}
    ),
    "internal-space": frozenset(
        {"type", "boxType", "origin", "blocking", "display", "displayChildren"}
    ),
    "alternate-dimensions": frozenset(
        {"dimensions", "dimensionChanges", "dimensionScaleChanges", "replaceOriginal"}
    ),
    "fragile": frozenset({"maxWeight", "onTopOnly", "excludeOverweight", "unrestrictedPlacement"}),
    "group-pack": frozenset(
        {"type", "nameSuffix", "scaleFactorThreshold", "axes", "axisMultiplier"}
    ),
    "set-properties": frozenset({"properties", "overwrite"}),
    "pack-sequence": frozenset({"index", "key", "reduce", "reducedRefId"}),
    "bounded-fill": frozenset({"criticalAxis", "critialAxis"}),
}

_PNG_COLOR = re.compile(r"#[0-9a-fA-F]{6}")
_M = TypeVar("_M", bound=BaseModel)
_W = TypeVar("_W", bound="WireModel")
_R = TypeVar("_R", bound="BaseModel")


# --------------------------------------------------------------------------- base classes


class WireModel(BaseModel):
    """Base of every wire object: camelCase on the wire, snake_case in Python."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        serialize_by_alias=True,
        # JSON has no NaN or infinity; a Python caller passing them gets a clear error.
        allow_inf_nan=False,
        # Clients send sequences and names as numbers (aisle-bin 1120); accept them as text.
        coerce_numbers_to_str=True,
    )

    # no-redef: pydantic's mypy plugin declares model_construct again when a forward
    # reference (Nested <-> ItemSet) defers this module's analysis.
    @classmethod  # type: ignore[no-redef]
    def model_construct(  # type: ignore[override]  # the pydantic plugin types each subclass
        cls, _fields_set: set[str] | None = None, **values: Any
    ) -> Self:
        """pydantic's `model_construct`, several times faster for the common case that
        builds every response: values by field name, defaults copied from a per-class plan.
        Anything else (aliases, private values, user post-init hooks) takes pydantic's path."""
        plan = _plan(cls)
        if plan is None or not plan.names.issuperset(values):
            return super().model_construct(_fields_set, **values)
        return _assembled(cls, plan, values, set(values) if _fields_set is None else _fields_set)


def assemble(cls: type[_W], values: dict[str, Any], fields_set: set[str]) -> _W:
    """`cls.model_construct(fields_set, **values)` for callers that know every key of
    `values` is a field name: the response objects `pack()` builds by the thousand."""
    plan = _plan(cls)
    if plan is None:
        return cast(_W, cls.model_construct(fields_set, **values))
    return _assembled(cls, plan, values, fields_set)


def assemble_whole(cls: type[_R], fields: dict[str, Any], fields_set: set[str]) -> _R:
    """`assemble` for callers that give every field of `cls` in `fields`, defaults included,
    in the order `assemble` would put them (it keeps `fields` as the model's dict): a
    packed item and the points in it, built several times faster. Only for models
    without private attributes (`Point`, `Dimensions`, `Item`, `ItemEntry`)."""
    model = _new(cls)
    _set_dict(model, fields)
    _set_fields_set(model, fields_set)
    _set_extra(model, None)
    _set_private(model, None)
    return model


_new = object.__new__
_set = object.__setattr__
# The setters of BaseModel's slots, called directly: `object.__setattr__(model, name, v)`
# looks each one up by name first, and a packed item takes five models (a fifth less).
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__

#: `assemble_whole`'s steps (new object, then its dict, fields set, extra and private
#: values), for a caller that inlines them in its innermost loop: pack() builds five
#: models per packed item, and a Python call per model was a tenth of their cost.
WHOLE_MODEL_STEPS = (_new, _set_dict, _set_fields_set, _set_extra, _set_private)


def _assembled(
    cls: type[_W], plan: _ConstructPlan, values: dict[str, Any], fields_set: set[str]
) -> _W:
    fields = {**plan.static, **values}
    for name, make in plan.made:
        if name not in values:
            fields[name] = make()
    model = cls.__new__(cls)
    _set = object.__setattr__
    _set(model, "__dict__", fields)
    _set(model, "__pydantic_fields_set__", fields_set)
    _set(model, "__pydantic_extra__", None)
    private = plan.private_static
    if private is not None:
        private = private.copy()
        for name, make in plan.private_made:
            private[name] = make()
    _set(model, "__pydantic_private__", private)
    return model


@dataclass(frozen=True)
class _ConstructPlan:
    names: frozenset[str]  # field names
    static: dict[str, Any]  # immutable defaults, shared
    made: tuple[tuple[str, Callable[[], Any]], ...]  # defaults made anew for each model
    #: Private attributes' immutable defaults (None: the model has no private attributes)
    #: and the factories of the others.
    private_static: dict[str, Any] | None
    private_made: tuple[tuple[str, Callable[[], Any]], ...]


#: Each model class's plan, once asked for (None: pydantic's own path).
_PLANS: dict[type[BaseModel], _ConstructPlan | None] = {}
_UNPLANNED: Any = object()


def _plan(cls: type[BaseModel]) -> _ConstructPlan | None:
    # A dict rather than functools.cache: this runs for every object of every response.
    plan = _PLANS.get(cls, _UNPLANNED)
    if plan is _UNPLANNED:
        plan = _PLANS[cls] = _construct_plan(cls)
    return plan  # type: ignore[no-any-return]


#: Defaults of these types are shared between models (pydantic's deep copy returns them).
_IMMUTABLE = (type(None), bool, int, float, str, bytes, tuple, frozenset)


def _construct_plan(cls: type[BaseModel]) -> _ConstructPlan | None:
    """How `WireModel.model_construct` fills a model of `cls`; None where pydantic must."""
    if cls.model_config.get("extra") == "allow" or cls.__pydantic_root_model__:
        return None
    # pydantic wraps the hook once per subclass; unwrapped, it must only set private
    # attributes (no model here defines its own `model_post_init`).
    if (
        cls.__pydantic_post_init__
        and inspect.unwrap(cls.model_post_init) is not init_private_attributes
    ):
        return None
    static: dict[str, Any] = {}
    made: list[tuple[str, Callable[[], Any]]] = []
    for name, field in cls.__pydantic_fields__.items():
        if field.default_factory_takes_validated_data:
            return None
        if field.default_factory is not None:
            made.append((name, field.default_factory))  # type: ignore[arg-type]
        elif field.default is PydanticUndefined:
            continue
        elif isinstance(field.default, _IMMUTABLE):
            static[name] = field.default
        else:
            made.append((name, functools.partial(copy.deepcopy, field.default)))
    private_static: dict[str, Any] = {}
    private_made: list[tuple[str, Callable[[], Any]]] = []
    for name, attr in cls.__private_attributes__.items():
        if attr.default_factory is not None:
            if attr.default_factory_takes_validated_data:
                return None
            private_made.append((name, attr.default_factory))  # type: ignore[arg-type]
        elif attr.default is PydanticUndefined:
            continue
        elif isinstance(attr.default, _IMMUTABLE):
            private_static[name] = attr.default
        else:
            private_made.append((name, functools.partial(copy.deepcopy, attr.default)))
    return _ConstructPlan(
        frozenset(cls.__pydantic_fields__),
        static,
        tuple(made),
        private_static if cls.__private_attributes__ else None,
        tuple(private_made),
    )


@dataclass(frozen=True)
class _WireKeys:
    alias_of: dict[str, str]  # python name or wire alias -> wire alias
    null_means_default: frozenset[str]  # aliases of fields whose default is not None
    aliases: frozenset[str]  # the wire aliases alone


#: Each request model class's `_WireKeys`, once asked for (a dict read costs less than a
#: `functools.cache` call, and every object of every request asks).
_WIRE_KEYS: dict[type[BaseModel], _WireKeys] = {}


def _wire_keys(cls: type[BaseModel]) -> _WireKeys:
    keys = _WIRE_KEYS.get(cls)
    if keys is None:
        keys = _WIRE_KEYS[cls] = _make_wire_keys(cls)
    return keys


def _make_wire_keys(cls: type[BaseModel]) -> _WireKeys:
    alias_of: dict[str, str] = {}
    null_means_default: set[str] = set()
    for name, field in cls.model_fields.items():
        alias = field.alias or name
        alias_of[name] = alias
        alias_of[alias] = alias
        has_default = field.default_factory is not None or (
            not field.is_required() and field.default is not None
        )
        if has_default:
            null_means_default.add(alias)
    return _WireKeys(alias_of, frozenset(null_means_default), frozenset(alias_of.values()))


class RequestModel(WireModel):
    """Base of every object a client may send: unknown fields are dropped but remembered.

    The unknown keys, and an item set's nested items, are kept in pydantic's private dict
    (`private_value`) without being declared private attributes: a declared one makes
    pydantic initialise the private dict of every object it validates, which cost the
    request's reading more than its validation (issue 3). Copies keep the dict."""

    model_config = ConfigDict(extra="ignore")

    @model_validator(mode="wrap")
    @classmethod
    def _read_wire_object(cls, data: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        # Keys are renamed to their wire alias before validation so that every error location
        # is in wire form, whichever spelling the client used.
        if type(data) is not dict and not isinstance(data, dict):
            return handler(data)
        keys = _WIRE_KEYS.get(cls) or _wire_keys(cls)
        # The common case, every key a wire alias and no null, is read as it is: the loop
        # below would copy it unchanged (and there are no unknown keys to remember).
        if keys.aliases.issuperset(data):
            for value in data.values():
                if value is None:
                    break
            else:
                return handler(data)
        cleaned: dict[str, Any] = {}
        unknown: list[str] = []
        for key, value in data.items():
            alias = keys.alias_of.get(key) if isinstance(key, str) else None
            if alias is None:
                unknown.append(str(key))
            elif value is None and alias in keys.null_means_default:
                continue
            elif key == alias:
                cleaned[alias] = value
            else:
                cleaned.setdefault(alias, value)
        model = handler(cleaned)
        if unknown:
            set_private_value(model, "_unknown_keys", tuple(unknown))
        return model


def private_value(model: BaseModel, name: str, default: Any) -> Any:
    """The value `name` in `model`'s private dict, `default` when it has none."""
    private = model.__pydantic_private__
    return private.get(name, default) if private else default


def set_private_value(model: BaseModel, name: str, value: Any) -> None:
    """Set `name` in `model`'s private dict (made when the model has none), which model
    copies take along; not an attribute, so pydantic's `__setattr__` is not asked."""
    private = model.__pydantic_private__
    if private is None:
        object.__setattr__(model, "__pydantic_private__", {name: value})
    else:
        private[name] = value


class ResponseModel(WireModel):
    """Base of objects only the service produces: unknown fields are a bug, so rejected."""

    model_config = ConfigDict(extra="forbid")


# --------------------------------------------------------------------------- geometry


class Point(RequestModel):
    """A point or vector; x = height (up), y = width, z = length."""

    x: float = 0.0
    y: float = 0.0
    z: float = 0.0

    @classmethod
    def of(cls, x: float, y: float, z: float) -> Self:
        """The point (x, y, z) as `model_construct` builds it, unchecked, only faster."""
        return assemble_whole(cls, {"x": x, "y": y, "z": z}, XYZ)


#: The fields set of the points `pack()` builds, one set for all (a container less per
#: point: each one alive brings Python's next garbage collection nearer). Sharing is safe
#: because a point sets every field: assigning one adds a name the set holds already,
#: and copies take their own set.
XYZ = {"x", "y", "z"}


class Dimensions(Point):
    """Extents of an item or a box: every axis is required, greater than 0 and at most
    1e9 (the engine's fixed-point range)."""

    x: Length
    y: Length
    z: Length


# --------------------------------------------------------------------------- items


class DimensionSet(RequestModel):
    """One rung of a unit-of-measure ladder (each, 6-pack, case)."""

    dimensions: Dimensions | None = None
    axis_multipliers: Point | None = None
    quantity_divisor: int | None = Field(default=None, ge=1, le=MAX_QUANTITY)
    weight: Weight | None = None
    unit_of_measure: str | None = None


class ItemProperties(RequestModel):
    """Fields shared by an item set (input) and a packed item (output)."""

    ref_id: int | None = None
    name: str | None = None
    color: str | None = None
    weight: NonNegative
    sequence: str | None = None
    dimensions: Dimensions
    center_of_mass: Point | None = None
    virtual: bool = False
    properties: JsonObject | None = None


@dataclass(frozen=True)
class Nested:
    """An item packed inside a unit of another item set: in a box that a pack-sequence
    stage reduced to an item of the next stage, or in an item's internal space (at any
    depth). Rules with `ignoreSubspaces: false` see it through the unit (nesting.py)."""

    #: The item as rules match it (refId, name, sequence, properties, weight).
    item: ItemSet
    #: Weight resting on it inside the unit that carries it, level by level.
    load_above: float

    def under(self, load: float) -> Nested:
        """The same item one level further in, with `load` more resting above it."""
        return Nested(self.item, self.load_above + load)


class ItemSet(ItemProperties):
    """A number of identical items to pack."""

    weight: Weight
    # The engine counts units in 32 bits; the service's own item limit is far below.
    quantity: int = Field(default=1, ge=0, le=MAX_QUANTITY)
    dimension_sets: list[DimensionSet] | None = None

    @property
    def nested(self) -> tuple[Nested, ...]:
        """The items packed inside this set's unit (a reduced box, an item's internal
        space), at any depth; empty for ordinary items. Never on the wire; copies keep it
        (in the private dict, see `RequestModel`)."""
        return private_value(self, "_nested", ())  # type: ignore[no-any-return]

    def with_nested(self, nested: Iterable[Nested]) -> Self:
        """A copy whose unit carries `nested`."""
        twin = self.model_copy()
        carried = tuple(nested)
        if carried or self.nested:
            set_private_value(twin, "_nested", carried)
        return twin


class Item(ItemProperties):
    """One packed (or leftover) item instance as returned by the service."""

    index: int | None = None
    global_id: int | None = None
    packed_index: int | None = None
    unique_id: str | None = None
    origin: Point | None = None
    delta_cost: int | None = None
    message: str | None = None
    group_pack_parent: str | None = None
    quantity: int | None = None
    unit_of_measure: str | None = None
    dimension_set: DimensionSet | None = None


class ItemEntry(RequestModel):
    """Wrapper of an item inside `Box.items`: `{"item": {...}}`."""

    item: Item


# --------------------------------------------------------------------------- boxes


class RateTable(RequestModel):
    """Carrier rates of a box type: carrier tables, breakpoints, or a linear model."""

    carrier: str | None = None
    service: str | None = None
    zone: str | None = None
    rates: list[Amount] | None = None
    weights: list[Amount] | None = None
    price_increase_rate: Amount | None = None
    base_price: Amount | None = None
    dim_factor: Amount | None = None

    @model_validator(mode="after")
    def _rates_match_weights(self) -> Self:
        rates, weights = self.rates, self.weights
        if rates is not None and weights is not None and len(rates) != len(weights):
            raise ValueError(
                f"rates and weights must have the same length (got {len(rates)} and {len(weights)})"
            )
        return self


class PropertyConstraint(RequestModel):
    """Limit on the per-box sum of a numeric item property."""

    key: str
    max: float | None = None
    aggregate: Literal["sum"] = "sum"
    value: float | None = None


#: An outer side, or its change from the inner side: bounded so that a box's outer
#: volume stays finite (an outer-based cost of a 1e300 change reached the engine as
#: Infinity: a 500). An inner side (at most MAX_LENGTH) plus a change stays in range.
OuterLength = Annotated[float, Field(ge=-2 * MAX_LENGTH, le=2 * MAX_LENGTH)]


class OuterPoint(Point):
    """An outer size or change: a point whose coordinates are OuterLengths."""

    x: OuterLength = 0.0
    y: OuterLength = 0.0
    z: OuterLength = 0.0


class Outer(RequestModel):
    """Outer dimensions of a box, given as a change from the inner ones."""

    dimensions: OuterPoint | None = None
    dimension_change: OuterPoint | None = None


class BoxProperties(RequestModel):
    """Attributes of a box type; every field optional so it can serve as defaults.

    A None limit (`reservedSpace`, `itemsPerBoxMax`, ...) means "inherit the top-level value".
    """

    name: str | None = None
    ref_id: int | None = None
    price: int | None = Field(default=None, ge=0, le=int(MAX_AMOUNT))
    weight_tare: Weight | None = None
    weight_max: Weight | None = None
    dimensions: Dimensions | None = None
    outer: Outer | None = None
    outer_based_cost: bool = False
    center_of_mass: Point | None = None
    reserved_space: Fraction | None = None
    items_per_box_max: int | None = None
    item_sets_per_box_max: int | None = None
    items_inline_max: list[int] | None = None
    rate_table: RateTable | None = None
    property_constraints: list[PropertyConstraint] | None = None
    properties: JsonObject | None = None

    @field_validator("items_inline_max")
    @classmethod
    def _three_axes(cls, value: list[int] | None) -> list[int] | None:
        return _check_items_inline_max(value)

    def with_defaults(self, defaults: BoxProperties | None) -> Self:
        """Return a copy where fields this object did not set come from `defaults`."""
        if defaults is None:
            return self
        return _merge_set_fields(self, defaults)


class BoxType(BoxProperties):
    """A box type the packer may open; dimensions required, weightMax here or in defaults."""

    dimensions: Dimensions


class GeneratedBoxDefaults(BoxProperties):
    """Defaults of a generator's box types; price -1 marks pack-as-is as barely preferred."""

    price: int | None = Field(default=None, ge=-1)


class Subspace(RequestModel):
    """Where a box lives inside a parent box or item."""

    origin_in_parent: Point | None = None
    parent_box_index: int | None = None
    parent_item_index: int | None = None


@dataclass(frozen=True)
class SpaceLook:
    """How an item's internal space shows in the picture of the box holding the item
    (rule internal-space, options `display` and `displayChildren`)."""

    #: The space's bounds, drawn as a white semi-transparent cuboid in the item.
    outline: bool = False
    #: The items packed in the space, drawn inside the item.
    children: bool = False


class Box(BoxProperties):
    """A packed box (response) or a pre-packed box (request)."""

    id: int | None = None
    subspace: Subspace | None = None
    box_type: BoxType | None = None
    items: list[ItemEntry] = Field(default_factory=list)
    volume_max: NonNegative | None = None
    volume_used: NonNegative | None = None
    volume_net: NonNegative | None = None
    volume_remaining: NonNegative | None = None
    volume_reserved: NonNegative | None = None
    volume_utilization: Fraction | None = None
    weight_used: NonNegative | None = None
    weight_net: NonNegative | None = None
    weight_remaining: NonNegative | None = None
    weight_utilization: Fraction | None = None
    dimensional_weight: float | None = None
    dimensional_weight_used: bool | None = None
    len_items: int | None = None
    len_units: int | None = None
    svg: str | None = None
    center_of_mass_string: str | None = None
    depth_order: list[int] | None = None
    depth_order_string: str | None = None
    origin: Point | None = None

    #: How this box, an item's internal space, shows in the parent box's picture.
    _space_look: SpaceLook | None = PrivateAttr(default=None)

    @property
    def space_look(self) -> SpaceLook | None:
        """How this box shows in its parent box's picture when it is an item's internal
        space (never on the wire; None: not at all)."""
        return self._space_look

    @space_look.setter
    def space_look(self, look: SpaceLook | None) -> None:
        self._space_look = look


# --------------------------------------------------------------------------- generators


class GeneratorAxisRange(RequestModel):
    """Range of lengths a generator may use along one axis."""

    min: Length | None = None
    max: Length | None = None
    derive_from_items: bool = False
    fit_for_first_item: bool = False
    increment: Length | None = None

    @model_validator(mode="after")
    def _min_not_above_max(self) -> Self:
        _check_min_max(self.min, self.max)
        return self


class GeneratorLimit(RequestModel):
    """Bounds on a metric of generated box types."""

    metric: Metric
    min: float | None = None
    max: float | None = None

    @model_validator(mode="after")
    def _min_not_above_max(self) -> Self:
        _check_min_max(self.min, self.max)
        return self


class GeneratorPriceComponent(RequestModel):
    """Price step function of a metric of generated box types."""

    key: str | None = None
    metric: Metric
    aggregator: PriceAggregator = "max"
    thresholds: list[float] = Field(default_factory=list)
    prices: list[Annotated[int, Field(ge=-int(MAX_AMOUNT), le=int(MAX_AMOUNT))]] = Field(
        default_factory=list
    )

    @model_validator(mode="after")
    def _prices_match_thresholds(self) -> Self:
        if len(self.prices) != len(self.thresholds):
            raise ValueError(
                "thresholds and prices must have the same length "
                f"(got {len(self.thresholds)} and {len(self.prices)})"
            )
        return self


class GeneratorOptions(RequestModel):
    """Options of a box type generator: axis lists and ranges, limits, price components."""

    x_list: list[Length] | None = None
    y_list: list[Length] | None = None
    z_list: list[Length] | None = None
    x_range: GeneratorAxisRange | None = None
    y_range: GeneratorAxisRange | None = None
    z_range: GeneratorAxisRange | None = None
    limits: list[GeneratorLimit] | None = None
    price_components: list[GeneratorPriceComponent] | None = None
    no_trim_to_max_extent: bool = False

    @field_validator("price_components")
    @classmethod
    def _prices_bounded(
        cls, components: list[GeneratorPriceComponent] | None
    ) -> list[GeneratorPriceComponent] | None:
        """The largest price the components can give any size stays within MAX_AMOUNT, as a
        box type's own price does (a product of large prices made a cost the engine could
        not read: the endpoint answered 500)."""
        by_key: dict[str | None, list[GeneratorPriceComponent]] = defaultdict(list)
        for component in components or []:
            by_key[component.key].append(component)
        largest = 0
        for group in by_key.values():
            highest = [max((abs(p) for p in c.prices), default=0) for c in group]
            if group[0].aggregator == "sum":
                largest += sum(abs(p) for c in group for p in c.prices)
            elif group[0].aggregator == "product":
                largest += math.prod(highest)
            else:
                largest += max(highest, default=0)
        if largest > MAX_AMOUNT:
            raise ValueError(
                f"the components can price a box at up to {largest} in magnitude, and a "
                f"box's price must stay within {int(MAX_AMOUNT)}: lower the prices"
            )
        return components

    @model_validator(mode="after")
    def _one_aggregator_per_key(self) -> Self:
        seen: dict[str | None, str] = {}
        for component in self.price_components or []:
            first = seen.setdefault(component.key, component.aggregator)
            if first != component.aggregator:
                raise ValueError(
                    f"price components with key {component.key!r} use different aggregators "
                    f"({first!r} and {component.aggregator!r}); they must share one"
                )
        return self


class BoxTypeGenerator(RequestModel):
    """Generates box types on demand (cartesian sizes, or one box per item as is)."""

    box_type_defaults: GeneratedBoxDefaults | None = None
    operation: GeneratorOperation
    options: GeneratorOptions = Field(default_factory=GeneratorOptions)


# --------------------------------------------------------------------------- rules


class ItemMatch(RequestModel):
    """Substring search selecting the item sets a rule applies to."""

    all_items: bool | None = Field(default=None, alias="all")
    property_name: str | None = Field(default=None, alias="property")
    expression: str | None = None
    expressions: list[str] | None = None
    negate: bool = False


class BoxMatch(RequestModel):
    """Substring search selecting the box types a rule applies to."""

    property_name: str | None = Field(default=None, alias="property")
    expression: str | None = None
    expressions: list[str] | None = None
    negate: bool = False


class Rule(RequestModel):
    """A packing rule; `options` depend on the operation and are passed on unchanged."""

    operation: RuleOperation
    item_ref_id: int | None = None
    item_sequence: str | None = None
    item_match: ItemMatch | None = None
    target_item_ref_ids: list[int] | None = None
    target_item_sequences: list[str] | None = None
    target_item_match: ItemMatch | None = None
    target_box_ref_ids: list[int] | None = None
    target_box_match: BoxMatch | None = None
    ignore_subspaces: bool | None = None
    options: JsonObject | None = None
    parameters: list[str] | None = None


# --------------------------------------------------------------------------- request


class PackRequest(RequestModel):
    """Body of `POST /`: what to pack, into what, and how. Every field is optional.

    Defaults are those of schema 1.9.0 (reference.md). Limits where "0, negative or null
    mean no limit" are plain ints defaulting to 0; `timeout` None means the endpoint maximum.
    """

    request_id: str | None = None
    order_id: str | None = None
    lay_flat: bool = False
    interlock: bool = False
    corners: bool = True
    item_sets: list[ItemSet] = Field(default_factory=list)
    box_types: list[BoxType] = Field(default_factory=list)
    box_type_generators: list[BoxTypeGenerator] = Field(default_factory=list)
    box_type_defaults: BoxProperties | None = None
    boxes: list[Box] = Field(default_factory=list)
    usable_space: Fraction = 0.85
    reserved_space: Fraction = 0.0
    box_type_sets: list[BoxTypeSet] = Field(default_factory=list)
    eye: Point = Field(default_factory=lambda: Point(x=1.0, y=1.0, z=1.0))
    pack_origin: Point | None = None
    rules: list[Rule] = Field(default_factory=list)
    random: bool = False
    # n item sets of quantity n: n * n units must stay within the engine's 32-bit count.
    n: int = Field(default=5, ge=0, le=65_535)
    # Random items' integer sides are lengths and their weights weights, within the bounds of
    # those (MAX_LENGTH, MAX_AMOUNT): larger bounds drew items no model took (a 500).
    random_max_dimension: int = Field(default=10, ge=1, le=int(MAX_LENGTH))
    random_max_weight: int = Field(default=10, ge=0, le=int(MAX_AMOUNT))
    # None: each random item set gets quantity n, as the spec describes.
    random_max_quantity: int | None = Field(default=None, ge=1, le=MAX_QUANTITY)
    seed: bool = True
    seed_value: int = 1
    seed_from_order_id: bool = False
    img_size: int = Field(default=400, ge=1, le=MAX_IMG_SIZE)
    template: Template | None = None
    include_scripts: bool = False
    include_images: bool = True
    image_format: ImageFormat = "svg"
    image_scale: Point = Field(default_factory=Point)
    image_scale_style: ImageScaleStyle = "fill"
    coord_order: list[int] | None = None
    cohort_packing: bool = False
    cohort_max: int = Field(default=2, ge=1)
    # -1: no support check.
    allowable_overhang: float = -1.0
    placement_style: PlacementStyle = "default"
    item_sort: ItemSort = "combined"
    item_sort_reverse: bool = False
    item_sort_dual_direction: bool = False
    item_initial_orientation_best_for_box: bool = False
    item_initial_orientation_preferred: bool = True
    item_orientation_search_depth: int = Field(default=1, ge=0)
    sequence_sort: bool = False
    sequence_heat_map: bool = False
    max_sequence_distance: int | None = Field(default=None, ge=0)
    box_type_choice_style: BoxTypeChoiceStyle = "actual"
    box_type_choice_lookahead: int = Field(default=0, ge=0)
    # Negative: unlimited lookback (every box stays open).
    box_type_choice_lookback: int = -1
    box_type_choice_goal: BoxTypeChoiceGoal = "lowest-cost"
    boxes_max: int = 0
    boxes_per_item_set_max: int = 0
    boxes_per_sequence_max: int = 0
    items_per_box_max: int = 0
    item_sets_per_box_max: int = 0
    items_inline_max: list[int] | None = None
    generated_box_types_max: int = Field(default=0, ge=0)
    value_tiebreaker: ValueTiebreaker = "volume"
    properties: JsonObject | None = None
    timeout: Positive | None = None
    # Legacy API key in the body: accepted, never dumped (so never echoed or fingerprinted).
    key: SecretStr | None = Field(default=None, exclude=True, repr=False)

    _normalisation_warnings: list[str] = PrivateAttr(default_factory=list)
    #: A pack-sequence stage's rule: the stage packs into the box types it targets only.
    _stage_rule: Rule | None = PrivateAttr(default=None)
    _group_box_types: list[BoxType] | None = PrivateAttr(default=None)

    @field_validator("boxes")
    @classmethod
    def _prepacked_weights(cls, boxes: list[Box]) -> list[Box]:
        """A pre-packed box's given items weigh at most MAX_AMOUNT, as an item set's units
        do (the Item model is the response's too, so the bound is checked here, on the
        request; the box's own weights are bounded in BoxProperties)."""
        for i, box in enumerate(boxes):
            for j, entry in enumerate(box.items):
                if entry.item.weight > MAX_AMOUNT:
                    raise ValueError(
                        f"boxes[{i}].items[{j}].item.weight must be <= {MAX_AMOUNT:g} "
                        f"(got {entry.item.weight:g})"
                    )
        return boxes

    @field_validator("image_format", mode="before")
    @classmethod
    def _lower_case_format(cls, value: object) -> object:
        return value.lower() if isinstance(value, str) else value

    @field_validator("image_scale_style", mode="before")
    @classmethod
    def _empty_style_is_fill(cls, value: object) -> object:
        return "fill" if value == "" else value

    @field_validator("template", mode="before")
    @classmethod
    def _empty_template_is_none(cls, value: object) -> object:
        return None if value == "" else value

    @field_validator("eye")
    @classmethod
    def _a_direction(cls, value: Point) -> Point:
        # Only the direction matters (render.py scales it); (0, 0, 0) has none.
        if value.x == 0 and value.y == 0 and value.z == 0:
            raise ValueError("must not be (0, 0, 0): it is the direction the pictures look from")
        return value

    @field_validator("coord_order")
    @classmethod
    def _axis_permutation(cls, value: list[int] | None) -> list[int] | None:
        if value is not None and sorted(value) != [0, 1, 2]:
            raise ValueError(f"must be a permutation of [0, 1, 2] (got {value})")
        return value

    @field_validator("items_inline_max")
    @classmethod
    def _three_axes(cls, value: list[int] | None) -> list[int] | None:
        return _check_items_inline_max(value)

    @model_validator(mode="after")
    def _normalise(self) -> Self:
        # The spec makes a too-deep search a warning, not an error.
        depth = self.item_orientation_search_depth
        if depth > MAX_ITEM_ORIENTATION_SEARCH_DEPTH:
            self.item_orientation_search_depth = MAX_ITEM_ORIENTATION_SEARCH_DEPTH
            self._normalisation_warnings.append(
                f"itemOrientationSearchDepth {depth} is above the maximum "
                f"{MAX_ITEM_ORIENTATION_SEARCH_DEPTH}; using {MAX_ITEM_ORIENTATION_SEARCH_DEPTH}"
            )
        self._normalisation_warnings.extend(self._ignored_option_warnings())
        problems = [*self._box_type_problems(), *self._png_color_problems()]
        if problems:
            # The paths are inside the message because this error belongs to the whole request.
            raise PydanticCustomError(
                "contradiction", "{problems}", {"problems": "; ".join(problems)}
            )
        return self

    def _ignored_option_warnings(self) -> list[str]:
        """Options given where they cannot act: a warning each (issue: every ignored
        combination that still packs says so)."""
        given = self.model_fields_set

        def named(names: tuple[str, ...]) -> str:
            return ", ".join(to_camel(n) for n in names if n in given)

        warnings = []
        random_only = named(_RANDOM_OPTIONS)
        if random_only and not self.random:
            warnings.append(f"{random_only}: no effect without random: true")
        seeded = named(("seed_value", "seed_from_order_id"))
        if self.random and not self.seed and seeded:
            warnings.append(f"{seeded}: no effect with seed: false (the items are unseeded)")
        blank = not (self.order_id and self.order_id.strip())
        if self.random and self.seed and self.seed_from_order_id and blank:
            warnings.append(
                f"seedFromOrderId: no orderId given; seeded with seedValue {self.seed_value}"
            )
        if "generated_box_types_max" in given and not self.box_type_generators:
            warnings.append("generatedBoxTypesMax: no effect without boxTypeGenerators")
        pictures = named(_IMAGE_OPTIONS)
        if pictures and not self.include_images:
            warnings.append(f"{pictures}: no effect with includeImages: false")
        return warnings

    def _box_type_problems(self) -> Iterator[str]:
        for i, box_type in enumerate(self.box_types):
            if box_type.with_defaults(self.box_type_defaults).weight_max is None:
                yield f"boxTypes[{i}].weightMax: is required, here or in boxTypeDefaults"

    def _png_color_problems(self) -> Iterator[str]:
        if not (self.include_images and self.image_format == "png"):
            return
        colored: list[tuple[str, ItemProperties]] = [
            (f"itemSets[{i}]", item_set) for i, item_set in enumerate(self.item_sets)
        ]
        for b, box in enumerate(self.boxes):
            colored += [(f"boxes[{b}].items[{i}].item", e.item) for i, e in enumerate(box.items)]
        for path, item in colored:
            if item.color is not None and not _PNG_COLOR.fullmatch(item.color):
                yield (
                    f"{path}.color: must be '#' and 6 hex digits when imageFormat is 'png' "
                    f"(got {item.color!r})"
                )

    def resolved_box_types(self) -> list[BoxType]:
        """Return `boxTypes` with `boxTypeDefaults` filled in where a box type is silent."""
        return [box_type.with_defaults(self.box_type_defaults) for box_type in self.box_types]

    def for_stage(self, rule: Rule, **update: Any) -> Self:
        """A copy of the request (with `update`) that packs one pack-sequence stage: its
        box types, generated ones included, are those `rule` targets (all without targets)."""
        copy = self.model_copy(update=update)
        copy._stage_rule = rule
        return copy

    def with_group_box_types(self, box_types: list[BoxType]) -> Self:
        """A copy of the request whose group-pack rules size their groups against
        `box_types` (a part of a pack, such as a subspace, groups as the whole does)."""
        copy = self.model_copy()
        copy._group_box_types = box_types
        return copy

    @property
    def group_box_types(self) -> list[BoxType]:
        """The box types group-pack sizes groups against: the request's (resolved), or
        those of the pack this request is a part of."""
        if self._group_box_types is not None:
            return self._group_box_types
        return self.resolved_box_types()

    @property
    def stage_rule(self) -> Rule | None:
        """The pack-sequence rule of the stage this request packs, if it is one."""
        return self._stage_rule

    def with_warnings(self, *warnings: str) -> Self:
        """A copy of the request whose `warnings_for_request()` also lists `warnings`."""
        copy = self.model_copy()
        copy._normalisation_warnings = [*self._normalisation_warnings, *warnings]
        return copy

    def warnings_for_request(self) -> list[str]:
        """Return the request's non-fatal problems: clamped values, unknown fields, no ids."""
        warnings = list(self._normalisation_warnings)
        warnings += [f"unknown field '{path}' ignored" for path in unknown_fields(self)]
        warnings += [
            f"unknown field 'rules[{i}].options.{key}' ignored (operation {rule.operation})"
            for i, rule in enumerate(self.rules)
            for key in rule.options or {}
            if key not in RULE_OPTION_KEYS[rule.operation]
        ]
        if not self.order_id and not self.request_id:
            # True for keyless callers too: searching packs needs a key, the uuid does not.
            warnings.append(
                "no orderId or requestId given; with an API key, packs can be found later "
                "by orderId or requestId (GET /packs), any pack by its packUuid"
            )
        return warnings


# --------------------------------------------------------------------------- response


class BoxEntry(ResponseModel):
    """Wrapper of a box inside `PackResponse.boxes`: `{"box": {...}}`."""

    box: Box


class Image(ResponseModel):
    """A rendered box image; `data` is base64."""

    box_index: int
    format: ImageFormat
    data: str


class PackResponse(ResponseModel):
    """Body of a successful pack: boxes with their items, leftovers, totals and timings."""

    boxes: list[BoxEntry] = Field(default_factory=list)
    title: str | None = None
    built: str | None = None
    started_at: str | None = None
    version: str | None = None
    len_boxes: int = 0
    len_items: int = 0
    len_units: int = 0
    len_leftovers: int = 0
    total_cost: int = 0
    total_volume: float = 0.0
    total_volume_net: float = 0.0
    total_volume_used: float = 0.0
    total_volume_utilization: float = 0.0
    total_weight: float = 0.0
    pack_time: float = 0.0
    render_time: float = 0.0
    total_time: float = 0.0
    leftovers: list[Item] = Field(default_factory=list)
    item_sort_used: str | None = None
    item_sort_reverse_used: bool | None = None
    box_type_choice_goal_used: str | None = None
    scripts: str | None = None
    styles: str | None = None
    svgs: list[str] | None = None
    order_id: str | None = None
    request_id: str | None = None
    image_scale: Point | None = None
    image_scale_style_used: ImageScaleStyleUsed = "fill"
    images: list[Image] | None = None
    used_key_stem: str | None = Field(default=None, max_length=10)
    warnings: list[str] = Field(default_factory=list)
    request_fingerprint: str | None = None
    response_fingerprint: str | None = None
    pack_uuid: str | None = None
    properties: JsonObject | None = None


def response_totals(
    boxes: list[Box], leftovers: list[Item], carriers: Sequence[Item] = ()
) -> dict[str, Any]:
    """The totals of a pack response, from its boxes and leftovers. The weight counts only
    outermost boxes: a box packed inside another (`subspace`) weighs in its parent.
    `carriers` are items standing for such a box (pack-sequence box-to-item): no request
    item, so neither a unit nor net volume (the box's contents count in the box)."""
    total_volume = sum(b.volume_max or 0.0 for b in boxes)
    carried_volume = sum(i.dimensions.x * i.dimensions.y * i.dimensions.z for i in carriers)
    total_used = sum(b.volume_used or 0.0 for b in boxes) - carried_volume
    # Virtual items (blocking space) are not items: no count includes them.
    real_leftovers = [i for i in leftovers if not i.virtual]
    return {
        "len_boxes": len(boxes),
        "len_units": sum(b.len_units or 0 for b in boxes)
        - sum(1 for i in carriers if not i.virtual)
        + len(real_leftovers),
        "len_leftovers": sum(i.quantity or 1 for i in real_leftovers),
        "total_cost": sum(b.price or 0 for b in boxes),
        "total_volume": total_volume,
        "total_volume_net": sum(b.volume_net or 0.0 for b in boxes) - carried_volume,
        "total_volume_used": total_used,
        "total_volume_utilization": total_used / total_volume if total_volume else 0.0,
        "total_weight": sum(b.weight_used or 0.0 for b in boxes if b.subspace is None),
    }


class ErrorBody(ResponseModel):
    """Error object of the pack endpoint (400, 401, 413, 422, 429, 500)."""

    code: int = Field(ge=100, le=600)
    message: str
    details: str | None = None


# --------------------------------------------------------------------------- helpers


def _check_items_inline_max(value: list[int] | None) -> list[int] | None:
    if value is not None and (len(value) != 3 or any(v < 0 for v in value)):
        raise ValueError(f"must be 3 integers >= 0, one per axis x, y, z (got {value})")
    return value


def _check_min_max(low: float | None, high: float | None) -> None:
    if low is not None and high is not None and low > high:
        raise ValueError(f"min must not be above max (got min {low:g}, max {high:g})")


def _merge_set_fields(own: _M, defaults: BaseModel) -> _M:
    # Nested objects merge field by field, so `rateTable: {dimFactor}` in the defaults
    # survives a box type that only names its carrier.
    update: dict[str, Any] = {}
    for name in defaults.model_fields_set & type(own).model_fields.keys():
        inherited = getattr(defaults, name)
        mine = getattr(own, name)
        if name not in own.model_fields_set:
            update[name] = inherited
        elif isinstance(mine, BaseModel) and isinstance(inherited, BaseModel):
            update[name] = _merge_set_fields(mine, inherited)
    return own.model_copy(update=update) if update else own


def unknown_fields(model: BaseModel, path: str = "") -> list[str]:
    """Return wire paths (`itemSets[0].colour`) of every unknown field under `model`."""
    found: list[str] = []
    # Every pack asks; most requests have no unknown field, and finding that out without
    # writing every object's path is several times faster.
    if _has_unknown_fields(model):
        _add_unknown_fields(model, path, found)
    return found


def _has_unknown_fields(model: BaseModel) -> bool:
    private = model.__pydantic_private__
    if private and private.get("_unknown_keys"):
        return True
    for name, _ in _nested_fields(type(model)):
        value = getattr(model, name)
        if value is None:
            continue
        for child in value if isinstance(value, list) else (value,):
            if not isinstance(child, BaseModel):
                continue
            # Points and other objects without nested ones are checked here, not called.
            nested = _NESTED_FIELDS.get(type(child))
            if nested is None:
                nested = _nested_fields(type(child))
            if nested:
                if _has_unknown_fields(child):
                    return True
            else:
                private = child.__pydantic_private__
                if private and private.get("_unknown_keys"):
                    return True
    return False


def _add_unknown_fields(model: BaseModel, path: str, found: list[str]) -> None:
    # One list for the whole walk, and private values read from their dict: the walk visits
    # every object of the request, so it runs on each pack.
    if isinstance(model, RequestModel):
        private = model.__pydantic_private__
        unknown = private.get("_unknown_keys") if private else None
        if unknown:
            found += [_join(path, key) for key in unknown]
    for name, alias in _nested_fields(type(model)):
        value = getattr(model, name)
        if value is None:
            continue
        here = _join(path, alias)
        if isinstance(value, BaseModel):
            _add_unknown_fields(value, here, found)
        elif isinstance(value, list):
            for i, element in enumerate(value):
                if isinstance(element, BaseModel):
                    _add_unknown_fields(element, f"{here}[{i}]", found)


#: `_nested_fields` of each class, once asked for (a dict read costs less than a
#: `functools.cache` call, and the walk asks for every object of every request).
_NESTED_FIELDS: dict[type[BaseModel], tuple[tuple[str, str], ...]] = {}


def _nested_fields(cls: type[BaseModel]) -> tuple[tuple[str, str], ...]:
    """(name, wire alias) of the fields of `cls` that may hold models: only these can
    carry unknown keys below the model itself."""
    fields = _NESTED_FIELDS.get(cls)
    if fields is None:
        fields = _NESTED_FIELDS[cls] = _find_nested_fields(cls)
    return fields


def _find_nested_fields(cls: type[BaseModel]) -> tuple[tuple[str, str], ...]:
    return tuple(
        (name, field.alias or name)
        for name, field in cls.model_fields.items()
        if _mentions_model(field.annotation)
    )


def _mentions_model(annotation: Any) -> bool:
    """True when a type annotation names a pydantic model anywhere inside it."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    return any(_mentions_model(arg) for arg in get_args(annotation))


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# --------------------------------------------------------------------------- errors


def parse_request(raw: bytes | str) -> PackRequest:
    """Parse a JSON body into a PackRequest; empty means `{}`.

    Raises BadRequest (400) for malformed JSON or a non-object, InvalidRequest (422) otherwise.
    """
    data: object = {}
    if raw.strip():
        try:
            data = jsontext.loads(raw)
        except ValueError as exc:
            raise BadRequest("malformed JSON", details=str(exc)) from exc
    return validate_request(data)


def validate_request(data: object) -> PackRequest:
    """Validate decoded JSON (or pass a PackRequest through) into a PackRequest.

    Raises BadRequest (400) for a non-object and InvalidRequest (422) for invalid fields.
    """
    if isinstance(data, PackRequest):
        return data
    if not isinstance(data, dict):
        raise BadRequest(
            "request body must be a JSON object", details=f"got {_describe(data, quote=False)}"
        )
    try:
        return PackRequest.model_validate(data)
    except ValidationError as exc:
        raise InvalidRequest("invalid request", details=validation_details(exc)) from exc


def validation_details(exc: ValidationError) -> str:
    """Describe each validation error as `wirePath: what is allowed (got value)`, `; `-joined."""
    return "; ".join(_describe_error(error) for error in exc.errors())


def _describe_error(error: ErrorDetails) -> str:
    path = "".join(
        f"[{part}]" if isinstance(part, int) else f".{part}" for part in error["loc"]
    ).lstrip(".")
    reason, show_input = _reason(error)
    if show_input:
        reason += f" (got {_describe(error['input'], quote=True)})"
    return f"{path}: {reason}" if path else reason


def _reason(error: ErrorDetails) -> tuple[str, bool]:
    kind = error["type"]
    ctx = error.get("ctx") or {}
    if kind == "missing":
        return "is required", False
    if kind in ("value_error", "assertion_error"):
        return str(ctx.get("error", error["msg"])), False
    if kind == "literal_error":
        options = str(ctx.get("expected", "")).replace(" or ", ", ")
        return f"must be one of {options}", True
    for bound, word in (("gt", "greater than"), ("lt", "less than")):
        if bound in ctx:
            return f"must be {word} {_number(ctx[bound])}", True
    for bound, symbol in (("ge", ">="), ("le", "<=")):
        if bound in ctx:
            noun = "an integer" if isinstance(ctx[bound], int) else "a number"
            return f"must be {noun} {symbol} {_number(ctx[bound])}", True
    if kind in _TYPE_REASONS:
        return _TYPE_REASONS[kind], True
    if kind in ("too_short", "too_long", "string_too_long", "string_too_short"):
        return error["msg"].replace("Input should", "must").replace("Value should", "must"), True
    return error["msg"], False


_TYPE_REASONS = {
    "int_type": "must be an integer",
    "int_parsing": "must be an integer",
    "int_from_float": "must be an integer",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "finite_number": "must be a finite number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "string_type": "must be a string",
    "list_type": "must be an array",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
}


def _number(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _describe(value: object, *, quote: bool) -> str:
    # Never echo a whole object or array back: the body may be large.
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, str):
        text = value if len(value) <= 40 else value[:37] + "..."
        return repr(text) if quote else f"a string {text!r}"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and len(text := str(abs(value))) > 40:
        return f"an integer of {len(text)} digits"
    return str(value)
