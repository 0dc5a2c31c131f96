"""Concurrent writers in separate processes: every row arrives, none is lost.

DuckDB lets one process write a file at a time; the store serialises units of work with a
cross-process file lock and short-lived connections. Each writer process appends and
upserts into the same resource through the sync write functions."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

from cartonize.store import Store
from cartonize.sync.connections import ConnectionFields, create_connection, update_connection
from cartonize.sync.crypto import SecretBox
from cartonize.sync.mapping import map_records
from cartonize.sync.resources import read_rows
from cartonize.sync.writes import write_batch

WRITERS = 4
BATCHES = 5
ROWS = 20

WRITER = textwrap.dedent(
    """
    import sys
    from datetime import UTC, datetime
    from cartonize.store import Store
    from cartonize.sync.connections import get_connection
    from cartonize.sync.mapping import map_records
    from cartonize.sync.writes import write_batch

    data_dir, account_id, connection_id, writer = sys.argv[1], *map(int, sys.argv[2:5])
    store = Store(data_dir)
    connection = get_connection(store, account_id, connection_id)
    for batch in range({batches}):
        records = [
            {{"refId": f"w{{writer}}-b{{batch}}-r{{row}}", "dimensions_x": 1, "dimensions_y": 1,
              "dimensions_z": 1, "weight": writer}}
            for row in range({rows})
        ]
        mapped = map_records(records, {{}}, "items")
        now = datetime.now(UTC)
        if batch % 2:
            result = write_batch(
                store, connection, mapped, "upsert", trigger="schedule", now=now, row_key=["refId"]
            )
        else:
            result = write_batch(store, connection, mapped, "append", trigger="webhook", now=now)
        assert result.status == "success", result.messages
    """
).format(batches=BATCHES, rows=ROWS)


def test_concurrent_writer_processes_lose_no_row(tmp_path: Path) -> None:
    store = Store(tmp_path / "data")
    store.migrate()
    account = store.create_account("acme", "enterprise")
    box = SecretBox.for_data_dir(store.data_dir)
    now = datetime.now(UTC)
    fields = ConnectionFields(name="feed", resource_type="items")
    connection, _ = create_connection(store, box, account.id, fields, now)
    seed = map_records(
        [{"refId": "seed", "dimensions_x": 1, "dimensions_y": 1, "dimensions_z": 1}], {}, "items"
    )
    created = write_batch(store, connection, seed, "create", trigger="rest POST", now=now)
    resource_id = created.resource_id
    update_connection(store, box, account.id, connection.id, {"resourceToUpdate": resource_id}, now)

    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                str(script),
                str(store.data_dir),
                str(account.id),
                str(connection.id),
                str(n),
            ],
            stderr=subprocess.PIPE,
        )
        for n in range(WRITERS)
    ]
    for process in processes:
        _, err = process.communicate(timeout=240)
        assert process.returncode == 0, err.decode()[-2000:]

    rows = store.transaction(lambda con: read_rows(con, "items", resource_id))
    expected = {
        f"w{w}-b{b}-r{r}" for w in range(WRITERS) for b in range(BATCHES) for r in range(ROWS)
    } | {"seed"}
    assert len(rows) == len(expected)  # no duplicates, no losses
    assert {row["refId"] for row in rows} == expected
    positions = store.transaction(
        lambda con: con.execute(
            "SELECT count(DISTINCT pos) FROM resource_items WHERE resource_id = ?", [resource_id]
        ).fetchall()
    )
    assert positions[0][0] == len(expected)  # every row kept its own place
    log_rows = store.transaction(
        lambda con: con.execute(
            "SELECT count(*), sum(inserted) FROM connection_log WHERE status = 'success'"
        ).fetchall()
    )
    assert log_rows[0] == (1 + WRITERS * BATCHES, len(expected))
