"""Sync write and mapping speed benchmark.

Run from the repository root: ``python -m bench.sync_speed [--base-rows N] [--repeats N]``.

On a fresh store in a temporary directory, through the same functions the REST API and
the pipelines call (`map_records`, `write_batch`), each timed end to end including the
store's lock, connection, transaction and commit:

- **mapping**: 100,000 nested source records (6 dot-path fields, a `properties.*` key,
  mm -> in and g -> lb conversion) mapped with `map_records`: target < 0.5 s.
- **PATCH upsert**: 100,000 rows with row_key `refId` (half match existing rows, half are
  new) into a resource of 1,000,000 rows: target < 3 s (the write; mapping is reported
  apart, and the sum too).
- **PUT**: 100,000 rows overwrite that resource (every old row deleted): target < 2 s.

Missing a target prints ``MISS`` but is not an error: targets are goals, not gates.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from typing import Any

from cartonize.store import Store
from cartonize.sync.connections import ConnectionFields, create_connection, update_connection
from cartonize.sync.crypto import SecretBox
from cartonize.sync.mapping import Conversions, MappedBatch, map_records
from cartonize.sync.writes import write_batch

SCHEMA_MAP = {
    "refId": "sku",
    "dimensions_x": "size.h",
    "dimensions_y": "size.w",
    "dimensions_z": "size.l",
    "weight": "mass.grams",
    "name": "title",
    "properties.color": "look.colour",
}
CONVERSIONS = Conversions("mm_to_in", "gr_to_lb")


def records(first: int, count: int, version: int = 0) -> list[dict[str, Any]]:
    """Nested source records with skus first .. first + count - 1 (titles of `version`)."""
    return [
        {
            "sku": f"SKU-{n}",
            "size": {"h": 10 + n % 90, "w": 20.5, "l": 30 + n % 7},
            "mass": {"grams": 100 + n % 1000},
            "title": f"item {n} v{version}",
            "look": {"colour": ("red", "green", "blue")[n % 3]},
        }
        for n in range(first, first + count)
    ]


def timed(work: Callable[[], Any]) -> tuple[float, Any]:
    """Seconds `work` took, and its result."""
    started = time.perf_counter()
    result = work()
    return time.perf_counter() - started, result


def report(name: str, seconds: list[float], target: float | None) -> None:
    """One line: median and best of the runs, against the target."""
    median = statistics.median(seconds)
    verdict = "" if target is None else ("ok" if median < target else "MISS")
    goal = "" if target is None else f"target < {target:.1f} s"
    print(f"{name:<34} median {median:6.3f} s  best {min(seconds):6.3f} s  {goal:<16} {verdict}")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print one line per workload."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-rows", type=int, default=1_000_000)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    incoming = records(args.base_rows - args.rows // 2, args.rows, version=1)
    mapping: list[float] = []
    batch: MappedBatch | None = None
    for _ in range(args.repeats):
        seconds, batch = timed(lambda: map_records(incoming, SCHEMA_MAP, "items", CONVERSIONS))
        mapping.append(seconds)
    assert batch is not None and batch.rejected_rows == 0
    report(f"mapping {args.rows:,} nested records", mapping, 0.5)

    upserts: list[float] = []
    puts: list[float] = []
    with tempfile.TemporaryDirectory() as directory:
        store = Store(directory)
        store.migrate()
        account = store.create_account("bench", "enterprise")
        box = SecretBox.for_data_dir(directory)
        now = datetime.now(UTC)
        fields = ConnectionFields(name="bench", resource_type="items", schema_map=SCHEMA_MAP)
        connection, _ = create_connection(store, box, account.id, fields, now)
        base = map_records(records(0, args.base_rows), SCHEMA_MAP, "items", CONVERSIONS)
        for _ in range(args.repeats):
            created = write_batch(store, connection, base, "create", trigger="rest POST", now=now)
            assert created.status == "success", created.messages
            target = update_connection(
                store,
                box,
                account.id,
                connection.id,
                {"resourceToUpdate": created.resource_id},
                now,
            )
            assert target is not None
            seconds, result = timed(
                partial(
                    write_batch,
                    store,
                    target,
                    batch,
                    "upsert",
                    trigger="rest PATCH",
                    now=now,
                    row_key=["refId"],
                )
            )
            assert result.status == "success", result.messages
            assert (result.inserted, result.updated) == (args.rows - args.rows // 2, args.rows // 2)
            upserts.append(seconds)
            seconds, result = timed(
                partial(write_batch, store, target, batch, "overwrite", trigger="rest PUT", now=now)
            )
            assert result.status == "success" and result.inserted == args.rows, result.messages
            puts.append(seconds)
    report(f"PATCH upsert {args.rows:,} into {args.base_rows:,}", upserts, 3.0)
    report(
        "  ... with mapping",
        [u + statistics.median(mapping) for u in upserts],
        None,
    )
    report(f"PUT {args.rows:,} over {args.base_rows + args.rows // 2:,}", puts, 2.0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
