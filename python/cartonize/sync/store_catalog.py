"""The service's store as the pull pipeline's `ConnectionCatalog`.

Connections are the store's rows (`cartonize.sync.connections`); a pull's records go through
the same mapping (`map_records`) and writes (`write_batch`: create or overwrite) as the sync
REST API, so a pulled row and a written row are the same row. Each import is one
transaction with its log entry; the entry carries the trigger (schedule or webhook), the
Dagster run id and the seconds from the start of the pull to the commit.

Partition keys are strings; connection ids are integers: `str(id)` goes out, `int(key)`
comes back, and a key that is not an id is a connection that does not exist.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import filelock

from cartonize.store import Store, StoreUnavailable
from cartonize.sync.catalog import (
    CatalogUnavailable,
    ConnectionSchedule,
    PullBusy,
    PullSpec,
    PullTrigger,
    ResourceQuality,
)
from cartonize.sync.connections import (
    Connection,
    connection_by_id,
    connections_allowed,
    credentials,
    list_connections,
)
from cartonize.sync.crypto import SecretBox
from cartonize.sync.fetch import SourceRequest
from cartonize.sync.mapping import map_records
from cartonize.sync.resources import PROPERTIES, find_resource, one, table_of
from cartonize.sync.schedule import Frequency, ScheduleSpec
from cartonize.sync.writes import (
    CHANGED_DURING_PULL,
    RunInfo,
    WriteMode,
    WriteResult,
    log_result,
    none_usable,
    write_batch,
)

__all__ = ["StoreCatalog"]


class StoreCatalog:
    """`ConnectionCatalog` over a `Store` (connections, credentials, writes, log)."""

    def __init__(self, store: Store, box: SecretBox) -> None:
        self.store = store
        self.box = box

    @classmethod
    def for_data_dir(cls, data_dir: Path | str) -> StoreCatalog:
        """The catalog of the store under `data_dir`; CatalogUnavailable when it cannot open."""
        store = Store(data_dir)
        try:
            store.migrate()
            box = SecretBox.for_data_dir(store.data_dir)
        except (StoreUnavailable, OSError) as exc:
            raise CatalogUnavailable(f"the store under {data_dir} cannot be opened: {exc}") from exc
        return cls(store, box)

    # -- what the sensor and the run read ----------------------------------------------

    def scheduled_connections(self) -> Sequence[ConnectionSchedule]:
        """Connections of accounts allowed to use them; a schedule where one can run.

        A connection without a Third-Party API URL (written to only through the REST API),
        a start, or a frequency has no scheduled pulls.
        """
        try:
            connections = list_connections(self.store)
        except StoreUnavailable as exc:
            raise CatalogUnavailable(str(exc)) from exc
        return [ConnectionSchedule(str(c.id), _schedule(c)) for c in connections]

    def pull_spec(self, connection_id: str) -> PullSpec | None:
        """What a pull needs (credentials decrypted), or None when the connection is gone
        or its account may no longer use connections."""
        connection = self._connection(connection_id)
        if connection is None:
            return None
        creds = credentials(self.box, connection)
        return PullSpec(
            connection_id=connection_id,
            name=connection.name,
            source=SourceRequest(
                url=connection.url or "",
                headers_template=(
                    json.dumps(connection.headers_template) if connection.headers_template else None
                ),
                api_key=creds.api_key,
                api_token=creds.api_token,
                root_path=connection.schema_root_path,
            ),
            resource_type=connection.resource_type,
            resource_to_update=(
                None
                if connection.resource_to_update is None
                else str(connection.resource_to_update)
            ),
        )

    @contextmanager
    def pull_lock(self, connection_id: str, wait: float) -> Iterator[None]:
        """A file lock per connection beside the database (`pull-locks/<id>.lock`): webhook
        runs, scheduled runs and the web workers are separate processes on this machine,
        as the DuckDB file requires anyway. Released when the holder exits or dies."""
        directory = self.store.data_dir / "pull-locks"
        directory.mkdir(exist_ok=True)
        name = "".join(c if c.isalnum() else "_" for c in connection_id)
        lock = filelock.FileLock(str(directory / f"{name}.lock"), timeout=wait)
        try:
            lock.acquire()
        except filelock.Timeout:
            raise PullBusy(
                f"another pull of this connection was still running after {wait:g} s; "
                "this one did not start"
            ) from None
        try:
            yield
        finally:
            lock.release()

    # -- what a run writes -------------------------------------------------------------

    def import_records(
        self,
        connection_id: str,
        records: Sequence[Any],
        *,
        trigger: PullTrigger,
        at: datetime,
        run_id: str | None = None,
        pulled: PullSpec | None = None,
    ) -> WriteResult:
        """Map and convert the records, then create a resource (Resource to Update blank)
        or overwrite it (set), in one transaction with the log entry. Nothing is written
        when the connection's source or target changed since `pulled` was read."""
        connection = self._connection(connection_id)
        if connection is None:
            return WriteResult(
                "failure",
                None,
                received=len(records),
                messages=[
                    f"connection {connection_id} was deleted, or its account's connections "
                    "were disabled, during the pull; nothing was written"
                ],
            )
        run = RunInfo(run_id, at)
        if pulled is not None and (changed := _changed_since(connection, pulled, connection)):
            # Already edited: not worth mapping. The write's own transaction checks again
            # (below), since an edit may also land while the records are being mapped.
            result = WriteResult(
                "failure",
                connection.resource_to_update,
                received=len(records),
                messages=[
                    f"{CHANGED_DURING_PULL} ({', '.join(changed)}), so "
                    "its records were not written; the next pull uses the new settings"
                ],
            )
            log_result(self.store, connection, result, trigger=trigger, now=at, run=run)
            return result
        batch = map_records(
            records, connection.schema_map, connection.resource_type, connection.conversions
        )
        refused = none_usable(connection, batch)
        if refused is not None:
            # Every record rejected: an overwrite would empty the resource. Keep it instead.
            log_result(self.store, connection, refused, trigger=trigger, now=at, run=run)
            return refused
        mode: WriteMode = "create" if connection.resource_to_update is None else "overwrite"
        mapped_with = connection
        return write_batch(
            self.store,
            connection,
            batch,
            mode,
            trigger=trigger,
            now=at,
            run=run,
            guard=(
                None
                if pulled is None
                else lambda current: _changed_since(current, pulled, mapped_with)
            ),
        )

    def record_failure(
        self,
        connection_id: str,
        message: str,
        *,
        trigger: PullTrigger,
        at: datetime,
        run_id: str | None = None,
    ) -> None:
        """Log a pull that failed before writing (nothing to log if the connection is gone)."""
        connection = self._connection(connection_id)
        if connection is None:
            return
        result = WriteResult("failure", connection.resource_to_update, messages=[message])
        log_result(self.store, connection, result, trigger=trigger, now=at, run=RunInfo(run_id, at))

    def resource_quality(self, resource_id: int | str) -> ResourceQuality:
        """Rows, rows lacking a required property, and duplicated keys of a stored resource.

        The key is refId for items and cartons; for orders, whose rows repeat an item's
        refId across orders, it is the pair (orderId, refId).
        """
        rid = int(resource_id)

        def count(con: Any) -> ResourceQuality:
            found = find_resource(con, rid)
            if found is None:
                return ResourceQuality(rows=0, missing_required=0, duplicate_ref_ids=0)
            table = table_of(found.type)
            required = [p.name for p in PROPERTIES[found.type] if p.required]
            missing = " OR ".join(f'"{name}" IS NULL' for name in required) or "false"
            key = '"orderId", "refId"' if found.type == "orders" else '"refId"'
            row = one(
                con.execute(
                    f"SELECT count(*), count(*) FILTER (WHERE {missing}) FROM {table} "
                    "WHERE resource_id = ?",
                    [rid],
                )
            )
            dup = one(
                con.execute(
                    f"SELECT count(*) FROM (SELECT {key} FROM {table} WHERE resource_id = ? "
                    f"GROUP BY {key} HAVING count(*) > 1)",
                    [rid],
                )
            )
            return ResourceQuality(
                rows=int(row[0]) if row else 0,
                missing_required=int(row[1]) if row else 0,
                duplicate_ref_ids=int(dup[0]) if dup else 0,
            )

        return self.store.transaction(count)

    # -- helpers -----------------------------------------------------------------------

    def _connection(self, connection_id: str) -> Connection | None:
        try:
            key = int(connection_id)
        except ValueError:
            return None
        connection = connection_by_id(self.store, key)
        if connection is None or not connections_allowed(self.store, connection.account_id):
            return None
        return connection


def _changed_since(connection: Connection, pulled: PullSpec, mapped: Connection) -> list[str]:
    """The settings deciding what a pull reads, how it maps and what it overwrites that
    differ in `connection` from those it read the source with (`pulled`) and mapped the
    records with (`mapped`)."""
    target = None if connection.resource_to_update is None else str(connection.resource_to_update)
    changes = [
        ("Third-Party API URL", (connection.url or "") != pulled.source.url),
        ("Schema Root Path", connection.schema_root_path != pulled.source.root_path),
        ("Resource Type", connection.resource_type != pulled.resource_type),
        ("Resource to Update", target != pulled.resource_to_update),
        ("Schema Map", connection.schema_map != mapped.schema_map),
        ("Unit Conversion", connection.conversions != mapped.conversions),
    ]
    return [name for name, differs in changes if differs]


def _schedule(connection: Connection) -> ScheduleSpec | None:
    if not (connection.url and connection.start_at and connection.frequency):
        return None
    return ScheduleSpec(
        connection.start_at.replace(tzinfo=None),
        Frequency(connection.frequency),
        connection.time_zone,
    )
