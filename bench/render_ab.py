"""Pictures, two builds side by side: the time of ``_core.render_json`` and whether the
pictures are the same (SVG text, depth orders and every PNG's decoded RGBA pixels).

Run from the repository root:
``python -m bench.render_ab [--baseline DIR] [--repeats N] [--only TEXT]``.

DIR holds another copy of the ``cartonize`` package (another ``_core`` build copied in).
Its ``_core`` is loaded into this process next to this build's, and both render the same
input strings, alternately, so both columns see the same load on a shared machine. The
inputs are the render inputs of seeded packs, captured as ``cartonize.pack`` sends them
(packed once, by this build):

- the 50-item box of ``bench.render_speed`` (SVG and PNG);
- a small mixed order in every template, three eyes, SVG and PNG; internal spaces shown;
  the sequence heat map; ``imgSize`` 16 to 4096;
- the order at the item limit of ``bench.pack_speed`` (10,000 units, 39 boxes) and its
  10,000 distinct units (24 boxes), as PNG and SVG;
- 2,000 one-unit boxes of 20 SKUs, and 500 unit cubes one per box at ``imgSize`` 4096
  (shrunk by the pixel budget), as PNG: many boxes that look alike.

PNG bytes may differ between builds (compression level); the pixels may not. The exit
status is 1 when a picture differs, 0 otherwise.

``--write DIR`` only writes the inputs, one JSON file each (``order-at-the-item-limit-png
.json``, ...), for ``cargo run --release -p cartonize-render --example render_file --
FILE`` or ``valgrind --tool=callgrind`` on it: the renderer alone, any build.
"""

from __future__ import annotations

import argparse
import base64
import importlib.util
import io
import json
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from PIL import Image

from bench import pack_speed, render_speed

Wire = dict[str, Any]
Render = Callable[[str], str]

UNIT = {"x": 1, "y": 1, "z": 1}


def mixed_order(**extra: Any) -> Wire:
    """Two item sets of different sizes, one coloured (by name in SVG; PNG takes hex
    only), one without colour."""
    colour = "#ff6347" if extra.get("imageFormat") == "png" else "Tomato"
    return {
        "itemSets": [
            {"refId": 3, "color": colour, "dimensions": {"x": 4, "y": 7, "z": 8}, "weight": 4},
            {"refId": 5, "dimensions": {"x": 3, "y": 3, "z": 5}, "weight": 2, "quantity": 9},
        ],
        "boxTypes": [{"refId": 1, "dimensions": {"x": 10, "y": 12, "z": 16}, "weightMax": 99}],
        "includeImages": True,
        **extra,
    }


def nested_spaces(pot: Wire, bucket: Wire, **extra: Any) -> Wire:
    """A pencil (refId 1) in a pot (2) in a bucket (3) in a box; `pot` and `bucket` are
    the picture options of each one's internal-space rule."""

    def space(ref_id: int, side: float, look: Wire) -> Wire:
        box_type = {"dimensions": {"x": side, "y": side, "z": side}}
        origin = {"x": 1, "y": 0.5, "z": 0.5}
        options = {"boxType": box_type, "origin": origin, **look}
        return {"operation": "internal-space", "itemRefId": ref_id, "options": options}

    return {
        "itemSets": [
            {"refId": 3, "dimensions": {"x": 10, "y": 10, "z": 10}, "weight": 3},
            {"refId": 2, "dimensions": {"x": 4, "y": 4, "z": 4}, "weight": 2},
            {"refId": 1, "dimensions": {"x": 1, "y": 1, "z": 3}, "weight": 0.5},
        ],
        "boxTypes": [{"refId": 7, "dimensions": {"x": 12, "y": 12, "z": 12}, "weightMax": 99}],
        "rules": [space(2, 3, pot), space(3, 9, bucket)],
        **extra,
    }


def nested_spaces_shown(**extra: Any) -> Wire:
    """A pencil in a pot in a bucket in a box, every space and what it holds shown."""
    look = {"display": True, "displayChildren": True}
    return nested_spaces(look, look, includeImages=True, **extra)


def sequenced(**extra: Any) -> Wire:
    """30 units with 12 sequence values, for the heat map."""
    return {
        "itemSets": [
            {
                "refId": n,
                "sequence": f"{n % 12:04d}",
                "dimensions": {"x": 2 + n % 3, "y": 3, "z": 2 + n % 4},
                "weight": 1,
            }
            for n in range(30)
        ],
        "boxTypes": [{"refId": 1, "dimensions": {"x": 9, "y": 12, "z": 14}, "weightMax": 99}],
        "includeImages": True,
        "sequenceHeatMap": True,
        **extra,
    }


def one_per_box(units: int, skus: int) -> Wire:
    """`units` units of `skus` SKUs, each too large to share its carton."""
    return {
        "itemSets": [
            {
                "refId": n,
                "dimensions": {"x": 6 + n % 3, "y": 7 + n % 2, "z": 6 + n % 4},
                "weight": 1,
                "quantity": units // skus,
            }
            for n in range(skus)
        ],
        "boxTypes": [{"refId": 1, "dimensions": {"x": 10, "y": 10, "z": 10}, "weightMax": 99}],
        "includeImages": True,
        "imageFormat": "png",
    }


def requests() -> Iterator[tuple[str, Wire]]:
    """The seeded pack requests whose render inputs make the corpus, labelled."""
    for fmt in ("svg", "png"):
        for template in (None, "demo.tmpl", "shipapp.tmpl", "boat.tmpl", "classic"):
            for eye in ((1, 1, 1), (1, 0, 0), (-1, 2, 0.5)):
                yield (
                    f"mixed {template} eye {eye} {fmt}",
                    mixed_order(
                        imageFormat=fmt,
                        template=template,
                        eye=dict(zip("xyz", eye, strict=True)),
                    ),
                )
        yield f"spaces {fmt}", nested_spaces_shown(imageFormat=fmt, eye=UNIT)
        yield f"heat map {fmt}", sequenced(imageFormat=fmt, template="classic")
    for size in (16, 100, 1000, 4096):
        yield f"mixed png imgSize {size}", mixed_order(imageFormat="png", imgSize=size)
    for fmt in ("png", "svg"):
        yield (
            f"order at the item limit {fmt}",
            pack_speed.order_at_the_limit(1) | {"includeImages": True, "imageFormat": fmt},
        )
    yield (
        "10,000 distinct units png",
        pack_speed.distinct_units(1) | {"includeImages": True, "imageFormat": "png"},
    )
    yield "2,000 one-unit boxes png", one_per_box(2000, 20)
    yield (
        "500 unit cubes one per box png imgSize 4096",
        {
            "itemSets": [{"refId": 1, "dimensions": UNIT, "weight": 1, "quantity": 500}],
            "boxTypes": [{"refId": 1, "dimensions": UNIT, "weightMax": 9}],
            "includeImages": True,
            "imageFormat": "png",
            "imgSize": 4096,
        },
    )


def render_inputs(only: str | None) -> Iterator[tuple[str, str]]:
    """(label, render input JSON) of the 50-item box and of each request's pack."""
    import cartonize
    from cartonize import _core as real
    from cartonize import render

    for fmt in ("svg", "png"):
        label = f"50-item box {fmt}"
        if only is None or only in label:
            yield label, json.dumps(render_speed.fifty_item_box(fmt))
    captured: list[str] = []

    class Capture:
        """Stands in for ``_core`` in ``cartonize.render``: keeps the input, renders it."""

        InvalidInput = real.InvalidInput

        @staticmethod
        def render_json(text: str) -> str:
            captured.append(text)
            out: str = real.render_json(text)
            return out

    for label, request in requests():
        if only is not None and only not in label:
            continue
        setattr(render, "_core", Capture)  # noqa: B010 (a private name of the module)
        try:
            cartonize.pack(request)
        finally:
            setattr(render, "_core", real)  # noqa: B010
        yield label, captured.pop()


def load_core(package_dir: Path) -> ModuleType:
    """Another build's ``_core``, loaded under its own name next to this build's."""
    path = next((package_dir / "cartonize").glob("_core*.so"))
    spec = importlib.util.spec_from_file_location("baseline_cartonize._core", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pictures(out: str) -> tuple[list[Any], list[bytes], int]:
    """(SVGs and depth orders, each PNG's decoded RGBA bytes, PNG bytes in all)."""
    boxes = json.loads(out)["boxes"]
    pixels = []
    size = 0
    for b in boxes:
        if b["png"] is not None:
            data = base64.b64decode(b["png"])
            size += len(data)
            with Image.open(io.BytesIO(data)) as image:
                pixels.append(repr(image.size).encode() + image.convert("RGBA").tobytes())
    return [(b["svg"], b["depthOrder"]) for b in boxes], pixels, size


def timed(render: Render, text: str) -> tuple[float, str]:
    """Wall milliseconds of one render, and its output."""
    started = time.perf_counter()
    out = render(text)
    return (time.perf_counter() - started) * 1000, out


def compare(label: str, text: str, here: Render, there: Render | None, repeats: int) -> str:
    """One table row: median times (alternated with the baseline), PNG bytes, and
    whether the pictures are the same; ``DIFFERS`` marks a difference."""
    ms_here, out_here = timed(here, text)
    # Large inputs get fewer repeats: a run of the whole corpus stays within minutes.
    runs = max(1, min(repeats, int(2000 / max(ms_here, 0.01))))
    times_here: list[float] = []
    times_there: list[float] = []
    out_there = ""
    for _ in range(runs):
        if there is not None:
            ms, out_there = timed(there, text)
            times_there.append(ms)
        ms, out_here = timed(here, text)
        times_here.append(ms)
    drawn_here, pixels_here, size_here = pictures(out_here)
    row = f"| {label} | {statistics.median(times_here):.2f} ms | {size_here:,} |"
    if there is None:
        return row
    drawn_there, pixels_there, size_there = pictures(out_there)
    same = drawn_here == drawn_there and pixels_here == pixels_there
    base = statistics.median(times_there)
    speedup = base / max(statistics.median(times_here), 1e-9)
    return (
        f"{row} {base:.2f} ms | {speedup:.2f} | {size_there:,} | {'same' if same else 'DIFFERS'} |"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Print one row per render input; 1 if a picture differs from the baseline's."""
    parser = argparse.ArgumentParser(prog="python -m bench.render_ab", description=__doc__)
    parser.add_argument("--baseline", type=Path, help="a directory holding another cartonize")
    parser.add_argument("--repeats", type=int, default=9, help="runs of each input (at most)")
    parser.add_argument("--only", help="only the inputs whose label contains this text")
    parser.add_argument("--write", type=Path, help="write the inputs to this directory")
    args = parser.parse_args(argv)
    if args.write is not None:
        args.write.mkdir(parents=True, exist_ok=True)
        for label, text in render_inputs(args.only):
            name = "".join(c if c.isalnum() else "-" for c in label.lower()).strip("-")
            (args.write / f"{name}.json").write_text(text)
            print(args.write / f"{name}.json")
        return 0
    from cartonize import _core

    there = load_core(args.baseline).render_json if args.baseline is not None else None
    header = "| input | median | PNG bytes |"
    rule = "|---|---|---|"
    if there is not None:
        header += " baseline median | speed-up | baseline PNG bytes | pictures |"
        rule += "---|---|---|---|"
    print(header)
    print(rule)
    differ = 0
    for label, text in render_inputs(args.only):
        row = compare(label, text, _core.render_json, there, args.repeats)
        differ += row.endswith("DIFFERS |")
        print(row, flush=True)
    if there is not None:
        print(f"\n{differ} inputs' pictures differ from the baseline's")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
