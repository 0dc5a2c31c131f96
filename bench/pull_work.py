"""The work of one pull without Dagster or HTTP, for instruction counts.

Run from the repository root: ``python -m bench.pull_work [--records N] [--repeats N]``.

Decodes the body `bench.pull_speed` serves (N nested records under `data.items`) as a pull
does (`fetch._parse_json`: the duplicate-key scan and JSON decoding), takes the root path,
then maps and writes the records as a new list (the connection has no Resource to
Update) in one transaction with its log entry
(`StoreCatalog.import_records`, the retarget check in the write's transaction included),
`--repeats` times on a fresh store. Wall-clock times on a shared machine say little, so
compare instruction counts: run it under ``valgrind --tool=callgrind`` with
``--repeats 0`` (set-up only) and ``--repeats 2`` in each tree, and divide the difference
by 2 (docs/benchmarks.md, "Repeated JSON keys").
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import UTC, datetime

import httpx
from cartonize.store import Store
from cartonize.sync import fetch
from cartonize.sync.connections import ConnectionFields, create_connection
from cartonize.sync.crypto import SecretBox
from cartonize.sync.store_catalog import StoreCatalog

from tests.sync.third_party import SCHEMA_MAP, records_body


def main() -> None:
    """Run the pulls' work and print the seconds each took."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    body = records_body(args.records, "data.items")
    headers = httpx.Headers({"content-type": "application/json"})
    url = httpx.URL("http://source.example/")
    with tempfile.TemporaryDirectory() as data_dir:
        store = Store(data_dir)
        store.migrate()
        account = store.create_account("bench", "enterprise")
        store.set_connections_enabled("bench", True)
        box = SecretBox.for_data_dir(store.data_dir)
        now = datetime.now(UTC)
        fields = ConnectionFields(
            name="bench",
            resource_type="items",
            schema_map=SCHEMA_MAP,
            schema_root_path="data.items",
            third_party_api_url=str(url),
        )
        connection, _ = create_connection(store, box, account.id, fields, now)
        catalog = StoreCatalog(store, box)
        spec = catalog.pull_spec(str(connection.id))
        for repeat in range(args.repeats):
            started = time.perf_counter()
            records = fetch.extract_records(fetch._parse_json(body, url, headers), "data.items")
            outcome = catalog.import_records(
                str(connection.id), records, trigger="webhook", at=now, pulled=spec
            )
            assert outcome.status == "success", outcome.messages
            print(f"repeat {repeat + 1}: {time.perf_counter() - started:.3f} s")


if __name__ == "__main__":
    main()
