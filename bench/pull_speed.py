"""Pull speed benchmark: 100,000 nested records from a source to a stored resource.

Run from the repository root: ``python -m bench.pull_speed [--records N] [--repeats N]``.

The loopback third-party server of the tests (`tests/sync/third_party.py`) serves N nested
records (about 290 bytes each) under `data.items`, checking the auth headers. Each repeat
materialises the `synced_resource` asset in process (Dagster's in-process executor, an
ephemeral instance) for one connection of a fresh DuckDB store, exactly as a scheduled or
webhook run does: decrypt the credentials, render the headers, GET with the egress guard,
parse, take the root path, map 5 dot-path fields with polars, overwrite the Resource to
Update in one transaction with its log entry, then the asset checks' counts.

Timed end to end around `materialize` (target < 5 s), with the fetch (GET + JSON parse)
and the import (mapping + write + commit) reported from the run's own figures. Missing
the target prints ``MISS`` but is not an error: targets are goals, not gates.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cartonize.store import Store
from cartonize.sync.connections import ConnectionFields, create_connection, read_log
from cartonize.sync.crypto import SecretBox
from cartonize.sync.mapping import map_records
from cartonize.sync.writes import write_batch
from dagster import DagsterInstance, materialize

from pipelines.pulls import TRIGGER_TAG, synced_resource
from pipelines.resources import SourceClientResource, StoreCatalogResource
from tests.sync.third_party import (
    API_KEY,
    API_TOKEN,
    HEADERS_TEMPLATE,
    SCHEMA_MAP,
    ThirdPartyServer,
    records_body,
)

TARGET_S = 5.0


def setup(data_dir: Path, url: str) -> int:
    """A store with one enterprise account and a connection overwriting one resource."""
    store = Store(data_dir)
    store.migrate()
    account = store.create_account("bench", "enterprise")
    store.set_connections_enabled("bench", True)
    box = SecretBox.for_data_dir(store.data_dir)
    now = datetime.now(UTC)
    fields: dict[str, Any] = {
        "name": "bench",
        "resource_type": "items",
        "third_party_api_url": url,
        "schema_root_path": "data.items",
        "api_headers_template": HEADERS_TEMPLATE,
        "third_party_api_key": API_KEY,
        "third_party_api_token": API_TOKEN,
        "schema_map": SCHEMA_MAP,
    }
    seed_conn, _ = create_connection(store, box, account.id, ConnectionFields(**fields), now)
    seed = map_records(
        [{"refId": "old", "dimensions_x": 1, "dimensions_y": 1, "dimensions_z": 1}], {}, "items"
    )
    created = write_batch(store, seed_conn, seed, "create", trigger="rest POST", now=now)
    resource = created.resource_id
    fields["resource_to_update"] = resource
    connection, _ = create_connection(store, box, account.id, ConnectionFields(**fields), now)
    return connection.id


def one_pull(n: int, server: ThirdPartyServer) -> tuple[float, dict[str, Any], float | None]:
    """(seconds end to end, run figures, seconds the log measured from fetch to commit)."""
    with tempfile.TemporaryDirectory(prefix="pull-bench-") as tmp:
        data_dir = Path(tmp) / "data"
        connection_id = setup(data_dir, server.url(f"/records?n={n}&root=data.items"))
        key = str(connection_id)
        with DagsterInstance.ephemeral(tempdir=str(Path(tmp) / "dagster")) as instance:
            instance.add_dynamic_partitions("connections", [key])
            started = time.perf_counter()
            result = materialize(
                [synced_resource],
                partition_key=key,
                instance=instance,
                resources={
                    "catalog": StoreCatalogResource(data_dir=str(data_dir)),
                    "source": SourceClientResource(allow_networks="127.0.0.0/8"),
                },
                tags={TRIGGER_TAG: "schedule"},
            )
            elapsed = time.perf_counter() - started
        assert result.success
        (event,) = result.get_asset_materialization_events()
        meta = event.materialization.metadata or {}
        figures = {k: v.value for k, v in meta.items()}
        assert figures["inserted"] == n, figures
        (entry,) = read_log(Store(data_dir), connection_id, limit=1, offset=0)
        return elapsed, figures, entry.duration_s


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print one line per repeat and a summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    body = records_body(args.records, "data.items")  # built once, as a warm source would
    print(f"source: {args.records:,} records, {len(body):,} bytes")
    times: list[float] = []
    with ThirdPartyServer() as server:
        for repeat in range(args.repeats):
            elapsed, figures, logged = one_pull(args.records, server)
            times.append(elapsed)
            print(
                f"repeat {repeat + 1}: end to end {elapsed:.2f} s; run duration "
                f"{figures['duration_s']:.2f} s (log: {logged:.2f} s); "
                f"inserted {figures['inserted']:,}"
            )
    median = statistics.median(times)
    verdict = "ok" if median < TARGET_S else "MISS"
    print(
        f"pull {args.records:,} nested records end to end: median {median:.2f} s, "
        f"best {min(times):.2f} s (target < {TARGET_S:g} s) {verdict}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
