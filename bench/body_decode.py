"""CPU time to decode a pack body, as the endpoint did (`jsontext.loads(raw)`, the last
of a repeated key kept) and as it does (`api.resources.decode_body`: the compiled
repeated-key scan, then the check that no object repeats a key with different values),
alternated in the same period on a small order and an e-commerce order.

Run from the repository root: ``python -m bench.body_decode [--rounds 15] [--calls 5000]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Sequence

from cartonize import jsontext

from api.resources import decode_body
from bench import ecommerce
from bench.pack_speed import small_order


def _per_call_us(decode: Callable[[bytes], object], raw: bytes, calls: int) -> float:
    started = time.process_time()
    for _ in range(calls):
        decode(raw)
    return (time.process_time() - started) / calls * 1e6


def main(argv: Sequence[str] | None = None) -> int:
    """Print min and median microseconds per body, before and after, for each body."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=5000)
    args = parser.parse_args(argv)
    bodies = {
        "small order": json.dumps(small_order(1)).encode(),
        "e-commerce order": json.dumps(ecommerce.orders(1, 3)[0]).encode(),
    }
    for name, raw in bodies.items():
        before: list[float] = []
        after: list[float] = []
        for _ in range(args.rounds):
            before.append(_per_call_us(jsontext.loads, raw, args.calls))
            after.append(_per_call_us(decode_body, raw, args.calls))
        print(
            f"{name} ({len(raw):,} B): loads {min(before):.2f} us min, "
            f"{statistics.median(before):.2f} median; decode_body {min(after):.2f} min, "
            f"{statistics.median(after):.2f} median; +{min(after) - min(before):.2f} us (min)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
