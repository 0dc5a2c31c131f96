"""Pictures of packed boxes: SVG structure, PNG pixels, depth order, scale styles."""

from __future__ import annotations

import base64
import io
import itertools
import json
import math
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import cartonize
import pytest
from cartonize import _core
from cartonize.errors import InvalidRequest
from cartonize.models import Item, PackResponse
from cartonize.store import Store
from falcon import testing
from PIL import Image as PILImage

from api.app import create_app
from bench.render_ab import nested_spaces

Wire = dict[str, Any]
SVG = "{http://www.w3.org/2000/svg}"
UNIT = {"x": 1, "y": 1, "z": 1}
TEMPLATES = [None, "demo.tmpl", "shipapp.tmpl", "boat.tmpl", "classic"]
#: Eight distinct colours for the eight unit cubes of a 2 x 2 x 2 box.
CUBE_COLOURS = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2"]
CUBE_COLOURS += ["#17becf"]
#: Shades of the three visible faces (docs/pictures.md): top towards white, sides towards
#: black, so one colour gives three distinct faces.
TOP_LIGHTEN, WIDTH_DARKEN, LENGTH_DARKEN = 0.3, 0.1, 0.3


def full_cube(**extra: Any) -> Wire:
    """Eight unit cubes of distinct colours filling a 2 x 2 x 2 box exactly."""
    return {
        "itemSets": [
            {"refId": i, "color": c, "dimensions": {"x": 1, "y": 1, "z": 1}, "weight": 1}
            for i, c in enumerate(CUBE_COLOURS)
        ],
        "boxTypes": [{"refId": 1, "dimensions": {"x": 2, "y": 2, "z": 2}, "weightMax": 100}],
        **extra,
    }


def mixed_order(**extra: Any) -> Wire:
    """Two item sets of different sizes, one named colour, one without colour."""
    return {
        "itemSets": [
            {"refId": 3, "color": "Tomato", "dimensions": {"x": 4, "y": 7, "z": 8}, "weight": 4},
            {"refId": 5, "dimensions": {"x": 3, "y": 3, "z": 5}, "weight": 2, "quantity": 9},
        ],
        "boxTypes": [{"refId": 1, "dimensions": {"x": 10, "y": 12, "z": 16}, "weightMax": 99}],
        **extra,
    }


def items_of(response: PackResponse) -> dict[int, Item]:
    """Packed items by index."""
    return {e.item.index or 0: e.item for b in response.boxes for e in b.box.items}


def png_pixels(response: PackResponse, box_index: int = 0) -> PILImage.Image:
    """The decoded PNG of one box, as RGB."""
    images = response.images or []
    image = next(i for i in images if i.box_index == box_index)
    assert image.format == "png"
    return PILImage.open(io.BytesIO(base64.b64decode(image.data))).convert("RGB")


def face_polygons(svg: str) -> dict[int, list[tuple[str, list[tuple[float, float]]]]]:
    """Per item index: its face polygons as (fill, points) in drawing order."""
    root = ET.fromstring(svg)
    found: dict[int, list[tuple[str, list[tuple[float, float]]]]] = {}
    for group in root.iter(f"{SVG}g"):
        if "cz-item" not in (group.get("class") or "").split():
            continue
        faces = []
        for polygon in group.iter(f"{SVG}polygon"):
            points = [tuple(map(float, p.split(","))) for p in polygon.get("points", "").split()]
            faces.append((polygon.get("fill", ""), [(x, y) for x, y in points]))
        found[int(group.get("data-volume-index", "-1"))] = faces
    return found


def hex_rgb(text: str) -> tuple[int, int, int]:
    """`#rrggbb` as a tuple."""
    return int(text[1:3], 16), int(text[3:5], 16), int(text[5:7], 16)


def mix(colour: str, towards: int, amount: float) -> tuple[int, int, int]:
    """`colour` moved `amount` of the way towards grey level `towards` (0 or 255), halves
    rounded up (not to even)."""
    r, g, b = hex_rgb(colour)
    return (
        math.floor(r + (towards - r) * amount + 0.5),
        math.floor(g + (towards - g) * amount + 0.5),
        math.floor(b + (towards - b) * amount + 0.5),
    )


def centre(points: list[tuple[float, float]]) -> tuple[int, int]:
    """Pixel at the centre of a convex polygon."""
    return (
        int(sum(p[0] for p in points) / len(points)),
        int(sum(p[1] for p in points) / len(points)),
    )


# ------------------------------------------------------------------------------ SVG


@pytest.mark.parametrize("template", TEMPLATES)
def test_svgs_parse_as_xml_and_mark_every_item(template: str | None) -> None:
    response = cartonize.pack(mixed_order(template=template))
    assert response.svgs is not None
    assert len(response.svgs) == response.len_boxes >= 1
    for box_index, (entry, svg) in enumerate(zip(response.boxes, response.svgs, strict=True)):
        assert entry.box.svg == svg
        root = ET.fromstring(svg)
        assert root.tag == f"{SVG}svg"
        assert root.get("width") == "400"
        marked = {
            int(g.get("data-volume-index", "-1")): g
            for g in root.iter()
            if g.get("data-volume-index") is not None and "cz-item" in (g.get("class") or "")
        }
        assert set(marked) == {e.item.index for e in entry.box.items}
        for item_entry in entry.box.items:
            group = marked[item_entry.item.index or 0]
            assert group.get("data-item-ref-id") == str(item_entry.item.ref_id)
            assert group.get("data-box-index") == str(box_index)
        outline = [g for g in root.iter() if g.get("data-volume-index") == "0"]
        assert outline, "index 0 is the box outline"


def test_colours_named_hex_and_derived_shade_the_faces() -> None:
    response = cartonize.pack(mixed_order())
    svg = (response.svgs or [""])[0]
    items = items_of(response)
    fills = {index: [fill for fill, _ in faces] for index, faces in face_polygons(svg).items()}
    tomato = next(i for i, item in items.items() if item.ref_id == 3)
    # Eye (1,1,1) sees top (x), width (y) and length (z) faces, in that order.
    assert [hex_rgb(f) for f in fills[tomato]] == [
        mix("#ff6347", 255, TOP_LIGHTEN),
        mix("#ff6347", 0, WIDTH_DARKEN),
        mix("#ff6347", 0, LENGTH_DARKEN),
    ]
    uncoloured = [i for i, item in items.items() if item.ref_id == 5]
    assert len({tuple(fills[i]) for i in uncoloured}) == 1, "one derived colour per refId"
    assert fills[uncoloured[0]] != fills[tomato]


def test_templates_look_different_and_classic_inlines_style_and_marks() -> None:
    svgs = {t: (cartonize.pack(mixed_order(template=t)).svgs or [""])[0] for t in TEMPLATES}
    assert svgs[None] == svgs["demo.tmpl"], "no template is the demo look"
    looks = [svgs[t] for t in TEMPLATES[1:]]
    assert len(set(looks)) == len(looks)
    assert "<style>" in svgs["classic"] and 'class="cz-marks"' in svgs["classic"]
    assert all("<style>" not in svgs[t] for t in TEMPLATES[:4])
    assert "#0b2540" in svgs["boat.tmpl"]


def test_scripts_and_styles_only_when_asked() -> None:
    plain = cartonize.pack(mixed_order())
    assert plain.scripts is None and plain.styles is None
    scripted = cartonize.pack(mixed_order(includeScripts=True))
    assert scripted.scripts and "data-volume-index" in scripted.scripts
    assert scripted.styles and ".cz-highlight" in scripted.styles


def test_heat_map_colours_light_for_high_sequence_dark_for_low() -> None:
    request = {
        "sequenceHeatMap": True,
        "itemSets": [
            {
                "refId": i,
                "color": "#00ff00",
                "sequence": seq,
                "dimensions": {"x": 1, "y": 1, "z": 1},
            }
            | {"weight": 1}
            for i, seq in enumerate(["0401", "1228", "0950"])
        ],
        "boxTypes": [{"dimensions": {"x": 1, "y": 1, "z": 3}, "weightMax": 10}],
    }
    response = cartonize.pack(request)
    fills = face_polygons((response.svgs or [""])[0])
    by_sequence = {
        item.sequence: sum(hex_rgb(fills[index][0][0]))
        for index, item in items_of(response).items()
    }
    assert by_sequence["0401"] < by_sequence["0950"] < by_sequence["1228"]
    assert all(f != "#00ff00" for faces in fills.values() for f, _ in faces)


# ------------------------------------------------------------------------------ PNG


def test_png_pixels_show_the_shades_of_visible_faces_and_hide_the_back_item() -> None:
    svg_response = cartonize.pack(full_cube())
    png_response = cartonize.pack(full_cube(imageFormat="PNG"))
    assert png_response.svgs is None
    assert png_response.boxes[0].box.svg is None
    pixels = png_pixels(png_response)
    assert pixels.width == 400
    faces = face_polygons((svg_response.svgs or [""])[0])
    items = items_of(svg_response)
    near = next(
        i
        for i, it in items.items()
        if it.origin is not None and (it.origin.x, it.origin.y, it.origin.z) == (1, 1, 1)
    )
    back = next(
        i
        for i, it in items.items()
        if it.origin is not None and (it.origin.x, it.origin.y, it.origin.z) == (0, 0, 0)
    )
    colour = items[near].color or ""
    expected = [
        mix(colour, 255, TOP_LIGHTEN),
        mix(colour, 0, WIDTH_DARKEN),
        mix(colour, 0, LENGTH_DARKEN),
    ]
    seen = [pixels.getpixel(centre(points)) for _, points in faces[near]]
    assert seen == expected
    back_colour = items[back].color or ""
    back_shades = {mix(back_colour, 255, TOP_LIGHTEN), mix(back_colour, 0, WIDTH_DARKEN)}
    back_shades.add(mix(back_colour, 0, LENGTH_DARKEN))
    for _, points in faces[back]:
        assert pixels.getpixel(centre(points)) not in back_shades, "hidden item shows through"


def test_png_pictures_shrink_to_the_requests_pixel_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    # 500 boxes at imgSize 4096 rasterised for 70 s, past the web server's worker timeout.
    # With a budget of 3 x (200² + 10,000) pixels, three pictures of 300 shrink to 200; one
    # alone stays at 300.
    monkeypatch.setattr("cartonize.render.PNG_PIXEL_BUDGET", 3 * (200 * 200 + 10_000))
    request = {
        "orderId": "budget",
        "includeImages": True,
        "imageFormat": "png",
        "imgSize": 300,
        "itemSets": [
            {"refId": 1, "dimensions": {"x": 1, "y": 1, "z": 1}, "weight": 1, "quantity": 3}
        ],
        "boxTypes": [{"refId": 1, "dimensions": {"x": 1, "y": 1, "z": 1}, "weightMax": 0}],
    }
    response = cartonize.pack(request)
    asked_200 = cartonize.pack({**request, "imgSize": 200})
    sizes = {png_pixels(response, i).size for i in range(3)}
    assert sizes == {png_pixels(asked_200, i).size for i in range(3)}
    assert (
        "imgSize: the 3 PNG pictures are drawn 200 pixels wide, not 300: a request's "
        "pictures may have 150,000 pixels in all, counting 10,000 more for each (ask for "
        "SVG, or for fewer boxes, for larger ones)"
    ) in response.warnings
    # Within the budget, as asked and without a warning.
    single = {**request, "itemSets": [{**request["itemSets"][0], "quantity": 1}]}
    one = cartonize.pack(single)
    assert not any(w.startswith("imgSize") for w in one.warnings)
    monkeypatch.setattr("cartonize.render.PNG_PIXEL_BUDGET", 1 << 40)
    assert png_pixels(one).size == png_pixels(cartonize.pack(single)).size


def test_top_down_png_shows_only_the_top_layer() -> None:
    request = full_cube(eye={"x": 1, "y": 0, "z": 0}, imageFormat="png")
    pixels = png_pixels(cartonize.pack(request))
    svg_response = cartonize.pack(full_cube(eye={"x": 1, "y": 0, "z": 0}))
    faces = face_polygons((svg_response.svgs or [""])[0])
    items = items_of(svg_response)
    for index, item in items.items():
        assert len(faces[index]) == 1, "from straight above only the top face shows"
        shown = pixels.getpixel(centre(faces[index][0][1]))
        own = mix(item.color or "", 255, TOP_LIGHTEN)
        assert (shown == own) == (item.origin is not None and item.origin.x == 1)


def test_each_png_of_a_many_box_pack_is_its_own_boxs_picture() -> None:
    # 14 boxes of one unit each, six looks: drawn on every core, each look rasterised
    # once (docs/decisions.md, "Pictures"). Each picture must still be its own box's.
    colours = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#17becf"]
    request = {
        "itemSets": [
            {
                "refId": n,
                "color": colour,
                "dimensions": {"x": 6 + n % 3, "y": 7 + n % 2, "z": 6 + n % 4},
                "weight": 1,
                "quantity": 1 + n % 3,
            }
            for n, colour in enumerate(colours)
        ],
        "boxTypes": [{"refId": 1, "dimensions": {"x": 10, "y": 10, "z": 10}, "weightMax": 99}],
    }
    svg_response = cartonize.pack(request)
    png_response = cartonize.pack({**request, "imageFormat": "png"})
    assert png_response.len_boxes == 12 and len(png_response.images or []) == 12
    data = {}
    for b, svg in enumerate(svg_response.svgs or []):
        (index, faces), *more = face_polygons(svg).items()
        assert not more, "one unit per box"
        item = items_of(svg_response)[index]
        pixels = png_pixels(png_response, b)
        assert pixels.getpixel(centre(faces[0][1])) == mix(item.color or "", 255, TOP_LIGHTEN)
        image = next(i for i in png_response.images or [] if i.box_index == b)
        data.setdefault(item.ref_id, set()).add(image.data)
    # Boxes alike have the same picture, boxes of other items another.
    assert all(len(d) == 1 for d in data.values()) and len(data) == len(colours)
    assert len(set.union(*data.values())) == len(colours)


def test_png_with_a_named_colour_is_422_naming_the_item(store: Store) -> None:
    body = mixed_order(imageFormat="Png")
    result = testing.TestClient(create_app(store=store)).simulate_post(
        "/", body=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    assert result.status_code == 422
    assert "itemSets[0].color" in result.json["details"]
    assert "'Tomato'" in result.json["details"]


# ------------------------------------------------------------------------------ depth order

EYES = [(1, 1, 1), (1, 0, 0), (0, 0, 1), (1, -1, 0.5), (-1, 1, 1), (0.3, 2, -1)]


def assorted_order(seed: int) -> Wire:
    """Item sets of assorted sizes, several boxes' worth, deterministic per seed."""
    sizes = [(1, 2, 3), (2, 2, 2), (1, 1, 4), (3, 1, 2), (2, 3, 1), (1, 1, 1)]
    return {
        "itemSets": [
            {
                "refId": k,
                "dimensions": dict(zip("xyz", sizes[(k + seed) % len(sizes)], strict=True)),
                "weight": 1,
                "quantity": 3 + (k * seed) % 5,
            }
            for k in range(5)
        ],
        "boxTypes": [{"dimensions": {"x": 4, "y": 5, "z": 6}, "weightMax": 1000}],
    }


@pytest.mark.parametrize(("seed", "eye"), list(itertools.product(range(3), EYES)))
def test_depth_order_puts_supports_and_far_neighbours_first(
    seed: int, eye: tuple[float, float, float]
) -> None:
    request = assorted_order(seed) | {"eye": dict(zip("xyz", eye, strict=True))}
    response = cartonize.pack(request)
    checked = 0
    for entry in response.boxes:
        box = entry.box
        order = box.depth_order or []
        assert sorted(order) == sorted(e.item.index for e in box.items)
        assert box.depth_order_string == ",".join(map(str, order))
        position = {index: n for n, index in enumerate(order)}
        for a, b in itertools.permutations([e.item for e in box.items], 2):
            for axis in range(3):
                if eye[axis] == 0 or not touching_across(a, b, axis):
                    continue
                # b sits on a's high side along `axis` (rests on it when axis is x):
                # seen from that side b is nearer, so it is drawn (and loaded) later.
                nearer, farther = (b, a) if eye[axis] > 0 else (a, b)
                assert position[farther.index or 0] < position[nearer.index or 0]
                checked += 1
    assert checked > 0


def touching_across(a: Item, b: Item, axis: int) -> bool:
    """Whether b lies against a's high face along `axis`, sharing an area of it."""
    assert a.origin is not None and b.origin is not None
    lo_a, lo_b = xyz(a.origin), xyz(b.origin)
    hi_a = [lo + d for lo, d in zip(lo_a, xyz(a.dimensions), strict=True)]
    hi_b = [lo + d for lo, d in zip(lo_b, xyz(b.dimensions), strict=True)]
    if not math.isclose(hi_a[axis], lo_b[axis], abs_tol=1e-9):
        return False
    return all(min(hi_a[k], hi_b[k]) - max(lo_a[k], lo_b[k]) > 1e-9 for k in range(3) if k != axis)


def xyz(p: Any) -> list[float]:
    """A point as a list."""
    return [p.x, p.y, p.z]


def test_top_down_depth_order_is_bottom_layer_first() -> None:
    response = cartonize.pack(full_cube(eye={"x": 1, "y": 0, "z": 0}))
    origins = {i: item.origin for i, item in items_of(response).items()}
    heights = [origins[i].x for i in response.boxes[0].box.depth_order or [] if origins[i]]
    assert len(heights) == 8 and heights == sorted(heights)


@pytest.mark.parametrize(
    ("eye", "same_as"),
    [
        ((1e200, 1e200, 1e200), (1, 1, 1)),  # squaring these overflowed: an empty picture
        ((1e308, -1e308, 1e308), (1, -1, 1)),
        ((1e-300, 1e-300, 1e-300), (1, 1, 1)),
        ((1e-300, 0, 0), (1, 0, 0)),  # these underflowed to the (1,1,1) fallback
        ((2e-10, 0, 1e-10), (2, 0, 1)),
    ],
)
def test_only_the_eyes_direction_matters(
    eye: tuple[float, float, float], same_as: tuple[float, float, float]
) -> None:
    def pictures(e: tuple[float, float, float], image_format: str) -> list[Any]:
        response = cartonize.pack(
            full_cube(eye=dict(zip("xyz", e, strict=True)), imageFormat=image_format)
        )
        return [response.svgs, response.images, [b.box.depth_order for b in response.boxes]]

    for image_format in ("svg", "png"):
        assert pictures(eye, image_format) == pictures(same_as, image_format)
    svg = (cartonize.pack(full_cube(eye=dict(zip("xyz", eye, strict=True)))).svgs or [""])[0]
    assert "<polygon" in svg


def test_an_eye_with_no_direction_is_422() -> None:
    with pytest.raises(InvalidRequest) as info:
        cartonize.pack(full_cube(eye={"x": 0, "y": -0.0, "z": 0}))
    assert (info.value.details or "").startswith("eye: must not be (0, 0, 0)")


# ------------------------------------------------------------------------------ switches, scale


def test_include_images_false_renders_nothing() -> None:
    response = cartonize.pack(mixed_order(includeImages=False, imageFormat="png"))
    assert response.svgs is None and response.images is None
    assert response.render_time == 0.0
    assert all(e.box.svg is None and e.box.depth_order is None for e in response.boxes)
    rendered = cartonize.pack(mixed_order())
    assert rendered.render_time > 0.0


def two_boxes(**extra: Any) -> Wire:
    """One item per box (weight), a small and a large one, and an unused huge box type."""
    return {
        "itemSets": [
            {"refId": 1, "dimensions": {"x": 2, "y": 2, "z": 2}, "weight": 60},
            {"refId": 2, "dimensions": {"x": 7, "y": 7, "z": 7}, "weight": 60},
        ],
        "boxTypes": [
            {"refId": 1, "dimensions": {"x": 3, "y": 3, "z": 3}, "weightMax": 100, "price": 1},
            {"refId": 2, "dimensions": {"x": 8, "y": 8, "z": 8}, "weightMax": 100, "price": 5},
            {"refId": 3, "dimensions": {"x": 30, "y": 20, "z": 40}, "weightMax": 100, "price": 90},
        ],
        **extra,
    }


def pixels_per_unit(response: PackResponse) -> list[float]:
    """Scale of each box's picture: outline width in pixels over its isometric width."""
    scales = []
    for entry, svg in zip(response.boxes, response.svgs or [], strict=True):
        root = ET.fromstring(svg)
        xs = [
            float(point.split(",")[0])
            for g in root.iter(f"{SVG}g")
            if g.get("data-volume-index") == "0" and g.get("fill") != "none"
            for polygon in g.iter(f"{SVG}polygon")
            for point in polygon.get("points", "").split()
        ]
        dims = entry.box.dimensions
        assert dims is not None
        scales.append((max(xs) - min(xs)) / ((dims.y + dims.z) / math.sqrt(2)))
    return scales


def test_image_scale_styles() -> None:
    fill = cartonize.pack(two_boxes())
    assert fill.len_boxes == 2
    assert fill.image_scale is None and fill.image_scale_style_used == "fill"
    small, large = sorted(pixels_per_unit(fill), reverse=True)
    assert small > 2 * large, "each picture fills its width"

    largest_box = cartonize.pack(two_boxes(imageScaleStyle="largest-box"))
    assert largest_box.image_scale_style_used == "largest-box"
    assert largest_box.image_scale is not None
    assert xyz(largest_box.image_scale) == [8, 8, 8]
    a, b = pixels_per_unit(largest_box)
    assert a == pytest.approx(b, rel=0.01), "one scale for every picture"
    assert a == pytest.approx(large, rel=0.01)

    largest_type = cartonize.pack(two_boxes(imageScaleStyle="largest-box-type"))
    assert largest_type.image_scale_style_used == "largest-box-type"
    assert largest_type.image_scale is not None
    assert xyz(largest_type.image_scale) == [30, 20, 40]
    a, b = pixels_per_unit(largest_type)
    assert a == pytest.approx(b, rel=0.01) and a < large / 2

    forced = cartonize.pack(two_boxes(imageScaleStyle="largest-box", imageScale={"x": 1, "y": 100}))
    assert forced.image_scale_style_used == "override"
    assert forced.image_scale is not None and xyz(forced.image_scale) == [1, 100, 0]
    assert pixels_per_unit(forced)[0] < pixels_per_unit(largest_type)[0]


def test_render_json_errors_map_to_the_exception_tree() -> None:
    with pytest.raises(_core.DecodeError):
        _core.render_json("{")
    bad = {"imgSize": 100000, "boxes": []}
    with pytest.raises(_core.InvalidInput, match="imgSize"):
        _core.render_json(json.dumps(bad))


def test_too_wide_a_picture_is_422() -> None:
    with pytest.raises(InvalidRequest, match="imgSize"):
        cartonize.pack(mixed_order(imgSize=5000))


def test_render_from_several_threads_gives_identical_pictures() -> None:
    request = full_cube(imageFormat="png", template="shipapp.tmpl")
    alone = cartonize.pack(request).images
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: cartonize.pack(request).images, range(8)))
    assert all(r == alone for r in results)


# ------------------------------------------------------------------ internal spaces


SHOW = {"display": True, "displayChildren": True}


@pytest.mark.parametrize(
    ("pot", "bucket", "spaces", "inner"),
    [
        ({}, {}, 0, []),  # by default a picture shows the items of its own box only
        ({"display": False, "displayChildren": False}, {}, 0, []),
        ({}, {"display": True}, 1, []),  # the bucket's space, as a white cuboid
        ({}, {"displayChildren": True}, 0, [2]),  # the pot, not what it holds
        (SHOW, {"displayChildren": True}, 1, [2, 1]),  # ... and then the pot's space too
        (SHOW, SHOW, 2, [2, 1]),
        (SHOW, {}, 0, []),  # the pot is not in the shipped box's picture
    ],
)
def test_internal_spaces_show_inside_their_items_as_their_rules_ask(
    pot: Wire, bucket: Wire, spaces: int, inner: list[int]
) -> None:
    response = cartonize.pack(nested_spaces(pot, bucket))
    box, bucket_space, pot_space = (e.box for e in response.boxes)
    assert bucket_space.subspace is not None and pot_space.subspace is not None
    root = ET.fromstring(box.svg or "")
    drawn = [g for g in root.iter() if "cz-space" in (g.get("class") or "")]
    assert len(drawn) == spaces
    inside = [g for g in root.iter() if "cz-inner" in (g.get("class") or "")]
    assert [int(g.get("data-item-ref-id", "-1")) for g in inside] == inner
    held = {e.item.ref_id: e.item.index for b in (bucket_space, pot_space) for e in b.items}
    assert [int(g.get("data-volume-index", "-1")) for g in inside] == [held[r] for r in inner]
    # Items drawn inside another are not loaded into this box: the depth order is its own.
    assert box.depth_order == [box.items[0].item.index]
    # The bucket's space holds the pot: its picture shows the pot's space as the pot's
    # rule asks, whatever the bucket's rule says.
    middle = ET.fromstring(bucket_space.svg or "")
    classes = [g.get("class") or "" for g in middle.iter()]
    assert sum("cz-space" in c for c in classes) == int(pot.get("display", False))
    assert sum("cz-inner" in c for c in classes) == int(pot.get("displayChildren", False))
    # A space's own picture shows what it holds as any box does.
    own = ET.fromstring(pot_space.svg or "")
    assert [g.get("data-item-ref-id") for g in own.iter() if g.get("class") == "cz-item"] == ["1"]


def test_shown_spaces_change_the_png_only_where_the_bucket_is() -> None:
    def png(look: Wire) -> PILImage.Image:
        response = cartonize.pack(nested_spaces(look, look, imageFormat="png", eye=UNIT))
        assert response.images is not None
        data = base64.b64decode(response.images[0].data or "")
        return PILImage.open(io.BytesIO(data)).convert("RGB")

    plain, shown = png({}), png(SHOW)
    assert plain.size == shown.size
    changed = [
        (x, y)
        for x in range(plain.width)
        for y in range(plain.height)
        if plain.getpixel((x, y)) != shown.getpixel((x, y))
    ]
    assert changed, "the see-through bucket shows what it holds"
    # Both pictures frame the same box: the corners (background) are alike.
    assert (0, 0) not in changed and (plain.width - 1, plain.height - 1) not in changed
