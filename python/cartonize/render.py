"""Pictures of packed boxes: hands the packing to the Rust renderer (`_core.render_json`,
GIL released) and fills the response's picture fields and depth orders. Internal spaces
whose rule asks for it (`display`, `displayChildren`) are drawn inside their items, with
what they hold (docs/pictures.md)."""

from __future__ import annotations

import json
import math
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from cartonize import _core
from cartonize.errors import InvalidRequest
from cartonize.models import (
    Box,
    BoxType,
    Image,
    ImageScaleStyleUsed,
    Item,
    PackRequest,
    PackResponse,
    Point,
)

__all__ = ["image_scale", "render_pictures"]

_ORIGIN = Point.model_construct(x=0.0, y=0.0, z=0.0)

#: Pixels the PNG pictures of one request may have in all, each picture counted as
#: imgSize² plus PNG_PICTURE_PIXELS for its own cost (encoding it): about 6-8 s of
#: rasterising at 10-16 ns a pixel. 500 boxes at imgSize 4096 took 70 s, past the web
#: server's worker timeout (the worker was killed, the client got no answer); 10,000
#: boxes (one unit each, within the item limit) at the default 400 took 26 s.
PNG_PIXEL_BUDGET = 1 << 29

#: A picture's own cost, in pixels' worth (about 0.15 ms).
PNG_PICTURE_PIXELS = 10_000

#: The narrowest picture the budget shrinks PNGs to.
PNG_SIZE_MIN = 16


def render_pictures(
    request: PackRequest, response: PackResponse, box_types: Sequence[BoxType] | None = None
) -> None:
    """Fill svgs or images, each box's svg and depthOrder, imageScale, scripts and styles,
    and renderTime; with `includeImages: false` render nothing (renderTime 0).
    `box_types` are all box types available (generated ones included), for
    `largest-box-type`; by default the request's own."""
    if not request.include_images:
        response.render_time = 0.0
        return
    started = time.perf_counter()
    extent, style_used = image_scale(request, response, box_types)
    boxes = [entry.box for entry in response.boxes]
    shown = _shown_spaces(boxes)
    size = _png_size(request, len(boxes), response.warnings)
    render_input = {
        "eye": _xyz(request.eye),
        "imgSize": size,
        "format": request.image_format,
        "template": request.template,
        "scaleExtent": _xyz(extent) if extent is not None else None,
        "sequenceHeatMap": request.sequence_heat_map,
        "includeScripts": request.include_scripts,
        "boxes": [
            {
                "dimensions": _xyz(box.dimensions or _ORIGIN),
                "items": [_item_input(entry.item, box.id, shown, _ORIGIN) for entry in box.items],
            }
            for box in boxes
        ],
    }
    try:
        out: dict[str, Any] = json.loads(_core.render_json(json.dumps(render_input)))
    except _core.InvalidInput as exc:
        raise InvalidRequest("cannot render pictures", str(exc)) from exc

    images: list[Image] = []
    for index, (box, rendered) in enumerate(zip(boxes, out["boxes"], strict=True)):
        box.depth_order = rendered["depthOrder"]
        box.depth_order_string = ",".join(str(i) for i in rendered["depthOrder"])
        box.svg = rendered["svg"]
        if rendered["png"] is not None:
            images.append(
                Image.model_construct(box_index=index, format="png", data=rendered["png"])
            )
    if request.image_format == "svg":
        response.svgs = [box.svg or "" for box in boxes]
    else:
        response.images = images
    response.image_scale = extent
    response.image_scale_style_used = style_used
    response.scripts = out["scripts"]
    response.styles = out["styles"]
    response.render_time = time.perf_counter() - started


def _png_size(request: PackRequest, pictures: int, warnings: list[str]) -> int:
    """The width PNG pictures are drawn at: `imgSize`, or less (with a warning) where
    `pictures` of that size would pass PNG_PIXEL_BUDGET."""
    size = request.img_size
    if request.image_format != "png" or pictures == 0:
        return size
    if pictures * (size * size + PNG_PICTURE_PIXELS) <= PNG_PIXEL_BUDGET:
        return size
    room = PNG_PIXEL_BUDGET // pictures - PNG_PICTURE_PIXELS
    fits = max(math.isqrt(max(room, 0)), PNG_SIZE_MIN)
    warnings.append(
        f"imgSize: the {pictures} PNG pictures are drawn {fits} pixels wide, not {size}: "
        f"a request's pictures may have {PNG_PIXEL_BUDGET:,} pixels in all, counting "
        f"{PNG_PICTURE_PIXELS:,} more for each (ask for SVG, or for fewer boxes, for larger "
        "ones)"
    )
    return fits


def image_scale(
    request: PackRequest, response: PackResponse, box_types: Sequence[BoxType] | None = None
) -> tuple[Point | None, ImageScaleStyleUsed]:
    """The extent every picture is fitted to at least, and the style that chose it.

    A non-zero `imageScale` overrides the style; `largest-box` is the per-axis maximum of
    the boxes used, `largest-box-type` that of every box type; `fill` has none."""
    forced = request.image_scale
    if (forced.x, forced.y, forced.z) != (0.0, 0.0, 0.0):
        return forced, "override"
    if request.image_scale_style == "largest-box":
        found = [entry.box.dimensions for entry in response.boxes]
    elif request.image_scale_style == "largest-box-type":
        available = request.resolved_box_types() if box_types is None else box_types
        found = [box_type.dimensions for box_type in available]
    else:
        return None, "fill"
    dims = [d for d in found if d is not None]
    if not dims:
        return None, request.image_scale_style
    return (
        Point.model_construct(
            x=max(d.x for d in dims), y=max(d.y for d in dims), z=max(d.z for d in dims)
        ),
        request.image_scale_style,
    )


#: (box id, item index) -> the internal spaces of that item its box's picture shows.
_Shown = dict[tuple[int | None, int | None], list[Box]]


def _shown_spaces(boxes: Sequence[Box]) -> _Shown:
    """The internal spaces (boxes inside items) whose rule asks to show them in the
    picture of the box holding their item (`display`, `displayChildren`)."""
    out: _Shown = defaultdict(list)
    for box in boxes:
        look, space = box.space_look, box.subspace
        if look is not None and space is not None and (look.outline or look.children):
            out[(space.parent_box_index, space.parent_item_index)].append(box)
    return out


def _item_input(item: Item, box_id: int | None, shown: _Shown, shift: Point) -> dict[str, Any]:
    """`item` of box `box_id` as the renderer takes it, `shift` added to its origin (the
    box's own origin in the picture), with the spaces of it the picture shows."""
    origin = item.origin or _ORIGIN
    out: dict[str, Any] = {
        "index": item.index or 0,
        "refId": item.ref_id if item.ref_id is not None else -1,
        # The sum as _plus makes it, without a Point per item (10,000 at the item limit).
        "origin": [origin.x + shift.x, origin.y + shift.y, origin.z + shift.z],
        "dimensions": _xyz(item.dimensions),
        "color": item.color,
        "sequence": item.sequence,
    }
    spaces = []
    for space in shown.get((box_id, item.index), []):
        look, at = space.space_look, space.subspace
        assert look is not None and at is not None  # _shown_spaces keeps only these
        corner = _plus(at.origin_in_parent or _ORIGIN, shift)
        children = space.items if look.children else []
        spaces.append(
            {
                "origin": _xyz(corner),
                "dimensions": _xyz(space.dimensions or _ORIGIN),
                "outline": look.outline,
                "items": [_item_input(e.item, space.id, shown, corner) for e in children],
            }
        )
    if spaces:
        out["spaces"] = spaces
    return out


def _plus(a: Point, b: Point) -> Point:
    return Point.model_construct(x=a.x + b.x, y=a.y + b.y, z=a.z + b.z)


def _xyz(p: Point) -> list[float]:
    return [p.x, p.y, p.z]
