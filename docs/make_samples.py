"""Write the sample pictures of docs/pictures.md: `make samples` (or run from the repo root).

Each sample is a real pack request; its PNG (no text: PNGs are rasterised without fonts)
and SVG (with captions and labels) go to docs/images/<name>.png and .svg.
"""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

import cartonize

OUT = Path(__file__).resolve().parent / "images"
IMG_SIZE = 320

Wire = dict[str, Any]

SHOP_ORDER: Wire = {
    "itemSets": [
        {
            "refId": 1,
            "color": "#e4572e",
            "dimensions": {"x": 4, "y": 7, "z": 8},
            "weight": 4,
            "quantity": 2,
            "sequence": "0401",
        },
        {
            "refId": 2,
            "color": "#29335c",
            "dimensions": {"x": 3, "y": 3, "z": 5},
            "weight": 2,
            "quantity": 6,
            "sequence": "0950",
        },
        {
            "refId": 3,
            "color": "#f3a712",
            "dimensions": {"x": 2, "y": 4, "z": 4},
            "weight": 1,
            "quantity": 5,
            "sequence": "1120",
        },
        {
            "refId": 4,
            "color": "#669bbc",
            "dimensions": {"x": 6, "y": 2, "z": 3},
            "weight": 1,
            "quantity": 3,
            "sequence": "1228",
        },
    ],
    "boxTypes": [{"refId": 1, "dimensions": {"x": 10, "y": 12, "z": 16}, "weightMax": 100}],
}

# No colours: each refId gets its own derived colour.
PALLET: Wire = {
    "itemSets": [
        {
            "refId": k,
            "dimensions": {"x": 2 + k % 3, "y": 3 + k % 2, "z": 4 + k % 4},
            "weight": 1,
            "quantity": 6,
        }
        for k in range(6)
    ],
    "boxTypes": [{"refId": 9, "dimensions": {"x": 12, "y": 14, "z": 20}, "weightMax": 500}],
}


def _space(ref_id: int, side: float) -> Wire:
    """An internal space shown inside its item, bounds and contents."""
    return {
        "operation": "internal-space",
        "itemRefId": ref_id,
        "options": {
            "boxType": {"dimensions": {"x": side, "y": side, "z": side}},
            "origin": {"x": 1, "y": 0.5, "z": 0.5},
            "display": True,
            "displayChildren": True,
        },
    }


# Pencils in pots in a bucket, beside two books too tall for it: every level is drawn in
# the box's picture.
NESTED: Wire = {
    "itemSets": [
        {"refId": 3, "color": "#9fb4c7", "dimensions": {"x": 10, "y": 10, "z": 10}, "weight": 3},
        {
            "refId": 2,
            "color": "#c1666b",
            "dimensions": {"x": 4, "y": 4, "z": 4},
            "weight": 2,
            "quantity": 2,
        },
        {
            "refId": 1,
            "color": "#f3a712",
            "dimensions": {"x": 1, "y": 1, "z": 3},
            "weight": 0.5,
            "quantity": 12,
        },
        {
            "refId": 4,
            "color": "#29335c",
            "dimensions": {"x": 10, "y": 3, "z": 6},
            "weight": 2,
            "quantity": 2,
        },
    ],
    "boxTypes": [{"refId": 1, "dimensions": {"x": 11, "y": 11, "z": 17}, "weightMax": 100}],
    "rules": [_space(2, 3), _space(3, 9)],
}

SAMPLES: dict[str, Wire] = {
    "demo": SHOP_ORDER | {"template": "demo.tmpl"},
    "shipapp": SHOP_ORDER | {"template": "shipapp.tmpl"},
    "boat": PALLET | {"template": "boat.tmpl"},
    "classic": PALLET | {"template": "classic"},
    "heat-map": SHOP_ORDER | {"sequenceHeatMap": True},
    "top-down": SHOP_ORDER | {"eye": {"x": 1, "y": 0, "z": 0}},
    "end-on": PALLET | {"eye": {"x": 0.3, "y": 0.2, "z": 1}},
    "internal-spaces": NESTED,
}


def main() -> int:
    """Render every sample; print each file with its size."""
    OUT.mkdir(exist_ok=True)
    for name, request in SAMPLES.items():
        common = {"imgSize": IMG_SIZE, "orderId": f"sample-{name}"}
        svg = cartonize.pack(request | common).svgs or []
        images = cartonize.pack(request | common | {"imageFormat": "png"}).images or []
        if not svg or not images:
            print(f"{name}: nothing rendered", file=sys.stderr)
            return 1
        (OUT / f"{name}.svg").write_text(svg[0])
        (OUT / f"{name}.png").write_bytes(base64.b64decode(images[0].data))
        print(f"{name}: {(OUT / f'{name}.png').stat().st_size / 1024:.1f} KB png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
