"""Rendering speed benchmark.

Run from the repository root: ``python -m bench.render_speed [--repeats N]``.

One box holding 50 items (a 5 x 5 x 2 grid of mixed cuboids, named, hex and derived
colours), rendered through ``cartonize._core.render_json`` exactly as a pack request does
(JSON in, JSON out, GIL released), at the default eye (1,1,1) and imgSize 400:

- **svg**: target median < 2 ms.
- **png**: SVG rasterised with resvg and base64-encoded, target median < 20 ms.

It also reports the median ``renderTime`` of a whole ``cartonize.pack`` call on the same
50 items, which adds building the render input from the response models, and of the
order at the item limit of ``bench.pack_speed`` (10,000 units, 39 boxes) with PNG
pictures (``--limit-repeats`` packs; 0 leaves it out). Missing a target prints ``MISS``
but is not an error: targets are goals, not gates.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import cartonize
from cartonize import _core

from bench.pack_speed import order_at_the_limit

SVG_TARGET_MS = 2.0
PNG_TARGET_MS = 20.0
COLOURS = ["tomato", "#3366cc", None, "gold", None]

Wire = dict[str, Any]


def fifty_item_box(image_format: str) -> Wire:
    """The render input of one 8 x 20 x 30 box with 50 items, as pack would send it."""
    items = []
    for n in range(50):
        x, y, z = n // 25, (n // 5) % 5, n % 5
        items.append(
            {
                "index": n + 1,
                "refId": n % 7,
                "origin": [x * 4.0, y * 4.0, z * 6.0],
                "dimensions": [4.0, 3.0 + n % 2, 5.0 + n % 2],
                "color": COLOURS[n % 5],
                "sequence": None,
            }
        )
    return {
        "eye": [1.0, 1.0, 1.0],
        "imgSize": 400,
        "format": image_format,
        "template": None,
        "scaleExtent": None,
        "sequenceHeatMap": False,
        "includeScripts": False,
        "boxes": [{"dimensions": [8.0, 20.0, 30.0], "items": items}],
    }


def fifty_item_pack() -> Wire:
    """A pack request that puts 50 unit-ish items in one box."""
    return {
        "itemSets": [
            {"refId": 1, "dimensions": {"x": 4, "y": 4, "z": 6}, "weight": 1, "quantity": 50}
        ],
        "boxTypes": [{"dimensions": {"x": 8, "y": 20, "z": 30}, "weightMax": 1000}],
        "itemSort": "default",
    }


def median_ms(run: Callable[[], object], repeats: int) -> float:
    """Median wall time of `run` in milliseconds, after a warm-up call."""
    run()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main(argv: list[str] | None = None) -> int:
    """Print the table of medians against their targets."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument(
        "--limit-repeats", type=int, default=3, help="packs of the order at the item limit"
    )
    args = parser.parse_args(argv)
    svg_input = json.dumps(fifty_item_box("svg"))
    png_input = json.dumps(fifty_item_box("png"))
    svg_ms = median_ms(lambda: _core.render_json(svg_input), args.repeats)
    png_ms = median_ms(lambda: _core.render_json(png_input), args.repeats)
    request = fifty_item_pack()
    packed = cartonize.pack(request)
    if packed.boxes[0].box.len_items != 50:
        print("FAILED: the pack request did not put 50 items in one box", file=sys.stderr)
        return 1
    render_times = [cartonize.pack(request).render_time for _ in range(max(args.repeats // 4, 5))]
    in_pack_ms = statistics.median(render_times) * 1000

    def verdict(ms: float, target: float) -> str:
        return "ok" if ms < target else "MISS"

    print("| workload | median | target | |")
    print("|---|---|---|---|")
    print(
        f"| 50-item box, svg | {svg_ms:.3f} ms | < {SVG_TARGET_MS:g} ms | "
        f"{verdict(svg_ms, SVG_TARGET_MS)} |"
    )
    print(
        f"| 50-item box, png 400 px | {png_ms:.2f} ms | < {PNG_TARGET_MS:g} ms | "
        f"{verdict(png_ms, PNG_TARGET_MS)} |"
    )
    print(f"| renderTime in cartonize.pack, 50 items, svg | {in_pack_ms:.3f} ms | | |")
    if args.limit_repeats > 0:
        limit = order_at_the_limit(1) | {"includeImages": True, "imageFormat": "png"}
        limit_times = [cartonize.pack(limit).render_time for _ in range(args.limit_repeats)]
        limit_ms = statistics.median(limit_times) * 1000
        print(
            f"| renderTime in cartonize.pack, order at the item limit (39 boxes), png | "
            f"{limit_ms:.0f} ms | | |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
