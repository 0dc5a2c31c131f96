"""Writes into resources: create, overwrite, upsert by row key, append. Each is one transaction.

Every write also records its connection log entry: in the same transaction when it
succeeds, in a transaction of its own when it fails (after the rollback, so a failed write
leaves the resource exactly as it was). Rows go into DuckDB in bulk: the mapped polars
frame is registered through the Arrow C stream interface and read by one `INSERT ... SELECT`
or `MERGE`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal

import duckdb
import polars as pl

from cartonize.store import Store, StoreUnavailable
from cartonize.sync.connections import (
    Connection,
    LogEntry,
    Trigger,
    connection_in_transaction,
    record_log,
)
from cartonize.sync.mapping import (
    IDENTITY,
    PROPERTIES_KEY,
    MappedBatch,
    iter_messages,
    record_label,
)
from cartonize.sync.resources import (
    PROPERTIES,
    ResourceType,
    create_resource,
    find_resource,
    one,
    table_of,
)

__all__ = [
    "CHANGED_DURING_PULL",
    "CHANGED_DURING_WRITE",
    "ConnectionChanged",
    "ConnectionGone",
    "Guard",
    "RunInfo",
    "WriteFailure",
    "WriteMode",
    "WriteResult",
    "log_entry",
    "log_refusal",
    "log_result",
    "none_usable",
    "write_batch",
]

logger = logging.getLogger(__name__)

WriteMode = Literal["create", "overwrite", "upsert", "append"]
_ORDINAL = "__ordinal"
_RECORD = "__record"
_SOURCE = "sync_source"


class WriteFailure(Exception):
    """The write cannot complete; the message goes to the connection log."""


class ConnectionGone(WriteFailure):
    """The connection was deleted (or its account's connections disabled) before the
    write's transaction: nothing is written, and there is no log to write to."""


class ConnectionChanged(WriteFailure):
    """A guarded write found the connection edited since the write was prepared."""

    def __init__(self, message: str, changed: list[str]) -> None:
        super().__init__(message)
        #: The names of the settings that changed, as the guard gave them.
        self.changed = changed


#: Checked inside a write's transaction, before anything is written, against the
#: connection as that transaction reads it: the names of the settings that differ from
#: those the write was prepared with (empty: go ahead). A pull passes one: its records
#: were read from one source and mapped for one list, and an edit of the connection
#: during the pull must not let them overwrite the list the user has just chosen. A
#: REST write passes one too: its payload was mapped (and its target chosen) with the
#: connection it authenticated, and an edit since must not send it to the old list.
Guard = Callable[[Connection], list[str]]

#: Why a guarded write wrote nothing after an edit; the changed settings follow in brackets.
CHANGED_DURING_PULL = "the connection changed during the pull"
#: The same for a REST write (its payload was mapped before the edit).
CHANGED_DURING_WRITE = "the connection changed while this write was being prepared"


@dataclass
class WriteResult:
    """Outcome of one write, as answered to the client and recorded in the log."""

    status: Literal["success", "failure"]
    resource_id: int | None
    received: int = 0
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    rejected: int = 0
    messages: list[str] = field(default_factory=list)
    #: A guarded write refused by its guard: the settings that changed (nothing written).
    changed: list[str] = field(default_factory=list)
    #: A guarded write whose connection was gone (deleted, or its account's connections
    #: disabled) when its transaction began: nothing written, nothing logged.
    connection_gone: bool = False


class _ArrowStream:
    """Exposes only the Arrow C stream of a polars frame, which DuckDB reads without pyarrow."""

    def __init__(self, frame: pl.DataFrame) -> None:
        self._frame = frame

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        return self._frame.__arrow_c_stream__(requested_schema)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _required(rtype: ResourceType) -> list[str]:
    return [p.name for p in PROPERTIES[rtype] if p.required]


def _incomplete(frame: pl.DataFrame, rtype: ResourceType, positions: Sequence[int]) -> list[str]:
    """Messages naming rows that lack a required property (at most 10)."""
    required = _required(rtype)
    absent = [name for name in required if name not in frame.columns]
    if absent and frame.height:
        return [
            f"every row to insert needs {', '.join(absent)}: map "
            f"{'it' if len(absent) == 1 else 'them'} in the connection's schema map"
        ]
    if not frame.height:
        return []
    nulls = frame.select(pl.any_horizontal(pl.col(required).is_null()).alias("missing"))
    bad = nulls.to_series().arg_true().to_list()[:10]
    messages = []
    for index in bad:
        row = frame.row(index, named=True)
        missing = [name for name in required if row[name] is None]
        label = record_label(positions[index], {k: row.get(k) for k in IDENTITY[rtype]})
        messages.append(f"{label}: missing required {', '.join(missing)}")
    return messages


def write_batch(
    store: Store,
    connection: Connection,
    batch: MappedBatch,
    mode: WriteMode,
    *,
    trigger: Trigger,
    now: datetime,
    row_key: Sequence[str] | None = None,
    run: RunInfo | None = None,
    guard: Guard | None = None,
) -> WriteResult:
    """Write a mapped batch into the connection's resource and log it; never raises for a
    write that cannot complete (status `failure`, reasons in the log), only StoreUnavailable.

    `run` ties the log entry to the Dagster run of a pull and measures its duration. A
    failed write into the Resource to Update (every mode but create) is logged against it:
    the log names the resource the write was for, not none.

    With a `guard`, the write's own transaction first reads the connection and asks the
    guard what changed; anything did (or the connection is gone), and nothing is written.
    Check and write are one transaction under the store's lock, so no edit can land
    between them, however the timing falls. The result then says why: `changed` names
    the settings (logged as a failure), `connection_gone` a connection that is no more
    (not logged: there is no log left)."""
    target = connection.resource_to_update if mode != "create" else None
    result = WriteResult("failure", target, received=batch.received, rejected=batch.rejected_rows)
    result.messages = list(iter_messages(batch))
    try:
        _check(connection, batch, mode, row_key)
        result = store.transaction(
            lambda con: _write(
                con, connection, batch, mode, row_key, trigger, now, result, run, guard
            )
        )
    except StoreUnavailable:
        raise
    except ConnectionGone as exc:
        result.status = "failure"
        result.inserted = result.updated = result.unchanged = 0
        result.messages.insert(0, str(exc))
        result.connection_gone = True
        return result
    except Exception as exc:
        if isinstance(exc, ConnectionChanged):
            result.changed = list(exc.changed)
        if isinstance(exc, WriteFailure):
            reason = str(exc)
        else:
            logger.exception("write into resource of connection %s failed", connection.id)
            reason = f"the write failed internally ({type(exc).__name__})"
        result.status = "failure"
        result.inserted = result.updated = result.unchanged = 0
        result.messages.insert(0, reason)
        log_result(store, connection, result, trigger=trigger, now=now, run=run)
    return result


def none_usable(connection: Connection, batch: MappedBatch) -> WriteResult | None:
    """The failure to answer when every record of a non-empty batch was rejected: written,
    an overwrite would empty the resource (and a create make an empty one). None otherwise.

    The first message says so and names the first reasons; the rest follow, one each."""
    if not batch.received or batch.frame.height:
        return None
    reasons = list(iter_messages(batch))
    shown = "; ".join(reasons[:3]) + ("; ..." if len(reasons) > 3 else "")
    return WriteResult(
        "failure",
        connection.resource_to_update,
        received=batch.received,
        rejected=batch.rejected_rows,
        messages=[
            f"none of the {batch.received:,} records could be used, so nothing was written: "
            + shown,
            *reasons,
        ],
    )


@dataclass(frozen=True)
class RunInfo:
    """The Dagster run a write belongs to (a pull), for its log entry."""

    run_id: str | None
    #: When the pull started; the log records the seconds from then to the entry.
    started_at: datetime

    def log_fields(self) -> dict[str, Any]:
        """`duration_s` and `run_id` of a LogEntry, measured now."""
        elapsed = (datetime.now(UTC) - self.started_at).total_seconds()
        return {"duration_s": round(max(0.0, elapsed), 3), "run_id": self.run_id}


def log_entry(
    result: WriteResult, trigger: Trigger, now: datetime, run: RunInfo | None = None
) -> LogEntry:
    """The connection log entry recording `result`."""
    return LogEntry(
        trigger,
        result.status,
        now,
        result.resource_id,
        result.received,
        result.inserted,
        result.updated,
        result.unchanged,
        result.rejected,
        list(result.messages),
        **(run.log_fields() if run else {}),
    )


def log_result(
    store: Store,
    connection: Connection,
    result: WriteResult,
    *,
    trigger: Trigger,
    now: datetime,
    run: RunInfo | None = None,
) -> None:
    """Record a result that wrote nothing (a failure) in its own transaction."""
    entry = log_entry(result, trigger, now, run)
    store.transaction(lambda con: record_log(con, connection.id, entry))


def log_refusal(
    store: Store,
    connection: Connection,
    result: WriteResult,
    *,
    trigger: Trigger,
    now: datetime,
    guard: Guard,
) -> WriteResult:
    """Log a write refused before it began (nothing to write: every record rejected, a
    bad parameter) as `write_batch` logs a write, the `guard` checked in the logging
    transaction: a connection gone meanwhile gets no entry (`connection_gone`), one whose
    settings changed gets the changed-settings failure (`changed`) instead of `result`,
    since the refusal was judged with the old ones (its records mapped with the old map,
    or for the old list). Returns what was logged, or `result` marked gone."""

    def record(con: duckdb.DuckDBPyConnection) -> None:
        _check_guard(con, connection, guard, trigger)
        record_log(con, connection.id, log_entry(result, trigger, now))

    try:
        store.transaction(record)
    except ConnectionGone as exc:
        return replace(result, messages=[str(exc), *result.messages], connection_gone=True)
    except ConnectionChanged as exc:
        changed = replace(
            result,
            inserted=0,
            updated=0,
            unchanged=0,
            messages=[str(exc), *result.messages],
            changed=list(exc.changed),
        )
        log_result(store, connection, changed, trigger=trigger, now=now)
        return changed
    return result


def _check(
    connection: Connection, batch: MappedBatch, mode: WriteMode, row_key: Sequence[str] | None
) -> None:
    if mode != "create" and connection.resource_to_update is None:
        raise WriteFailure(
            f"{mode} needs the connection's Resource to Update; it is blank "
            "(POST creates a new resource instead)"
        )
    if mode == "upsert":
        if not row_key:
            raise WriteFailure("upsert needs a row_key")
        columns = [p.name for p in PROPERTIES[connection.resource_type]]
        for name in row_key:
            if name not in columns or name == PROPERTIES_KEY:
                raise WriteFailure(
                    f"row_key {name!r} is not a property of {connection.resource_type} "
                    f"resources; use mapped names such as {columns[0]}"
                )
            if name not in batch.columns:
                raise WriteFailure(f"row_key {name!r} is not mapped by the connection's schema map")
    else:
        problems = _incomplete(batch.frame, connection.resource_type, batch.positions)
        if problems:
            raise WriteFailure("rows are incomplete: " + "; ".join(problems))


def _write(
    con: duckdb.DuckDBPyConnection,
    connection: Connection,
    batch: MappedBatch,
    mode: WriteMode,
    row_key: Sequence[str] | None,
    trigger: Trigger,
    now: datetime,
    result: WriteResult,
    run: RunInfo | None = None,
    guard: Guard | None = None,
) -> WriteResult:
    if guard is not None:
        _check_guard(con, connection, guard, trigger)
    rtype = connection.resource_type
    frame = batch.frame
    if mode == "create":
        stamp = now.strftime("%Y-%m-%d %H:%M:%S")
        resource_id = create_resource(
            con, connection.account_id, rtype, f"{connection.base_name} {stamp}", now
        )
    else:
        assert connection.resource_to_update is not None
        resource_id = connection.resource_to_update
        found = find_resource(con, resource_id)
        if found is None or found.account_id != connection.account_id:
            raise WriteFailure(f"the Resource to Update ({resource_id}) no longer exists")
        if found.type != rtype:
            raise WriteFailure(f"the Resource to Update ({resource_id}) holds {found.type}")
    result.resource_id = resource_id
    table = table_of(rtype)
    if mode == "overwrite":
        con.execute(f"DELETE FROM {table} WHERE resource_id = ?", [resource_id])
    if mode == "upsert":
        assert row_key
        # Source positions travel with the rows, so messages name the client's records.
        frame = frame.with_columns(pl.Series(_RECORD, batch.positions, dtype=pl.Int64()))
        frame, dropped_null, dropped_duplicates = _deduplicate(frame, list(row_key))
        result.rejected += dropped_null
        if dropped_null:
            result.messages.append(f"{dropped_null} records without a row_key value rejected")
        if dropped_duplicates:
            result.messages.append(
                f"{dropped_duplicates} records had a row_key seen later in the payload; "
                "the last one was kept"
            )
        inserted, updated, unchanged = _merge(con, table, rtype, resource_id, frame, row_key)
        # A dropped duplicate is a record with nothing left to change, so every record
        # received is counted once: inserted + updated + unchanged + rejected = received.
        result.inserted, result.updated = inserted, updated
        result.unchanged = unchanged + dropped_duplicates
    else:
        result.inserted = _insert(con, table, resource_id, frame)
    con.execute("UPDATE resources SET updated_at = ? WHERE id = ?", [_db(now), resource_id])
    result.status = "success"
    record_log(con, connection.id, log_entry(result, trigger, now, run))
    return result


def _check_guard(
    con: duckdb.DuckDBPyConnection, connection: Connection, guard: Guard, trigger: Trigger
) -> None:
    """Raise when the connection, as this transaction reads it, is gone or has changed."""
    rest = trigger.startswith("rest ")
    current = connection_in_transaction(con, connection.id)
    if current is None:
        during = "while this write was being prepared" if rest else "during the pull"
        raise ConnectionGone(
            f"connection {connection.id} was deleted, or its account's connections were "
            f"disabled, {during}; nothing was written"
        )
    changed = guard(current)
    if changed:
        # The records came from the old source, or were mapped for the old list; written,
        # they would overwrite the list just chosen.
        names = ", ".join(changed)
        raise ConnectionChanged(
            f"{CHANGED_DURING_WRITE} ({names}), so nothing was written; send it again "
            "to write with the connection's current settings"
            if rest
            else f"{CHANGED_DURING_PULL} ({names}), so its records were not written; the "
            "next pull uses the new settings",
            changed,
        )


def _db(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(tzinfo=None)


def _next_pos(con: duckdb.DuckDBPyConnection, table: str, resource_id: int) -> int:
    row = one(
        con.execute(
            f"SELECT coalesce(max(pos), -1) + 1 FROM {table} WHERE resource_id = ?", [resource_id]
        )
    )
    return int(row[0]) if row else 0


def _insert(
    con: duckdb.DuckDBPyConnection, table: str, resource_id: int, frame: pl.DataFrame
) -> int:
    if frame.height == 0:
        return 0
    base = _next_pos(con, table, resource_id)
    columns = ", ".join(_quote(c) for c in frame.columns)
    con.register(_SOURCE, _ArrowStream(frame))
    try:
        con.execute(
            f"INSERT INTO {table} (resource_id, pos, {columns}) "
            f"SELECT ?, ? + row_number() OVER () - 1, {columns} FROM {_SOURCE}",
            [resource_id, base],
        )
    finally:
        con.unregister(_SOURCE)
    return frame.height


def _deduplicate(frame: pl.DataFrame, keys: list[str]) -> tuple[pl.DataFrame, int, int]:
    """Rows with every key set, the last of each key; and how many were dropped for each cause."""
    keyed = frame.drop_nulls(subset=keys)
    unique = keyed.unique(subset=keys, keep="last", maintain_order=True)
    return unique, frame.height - keyed.height, keyed.height - unique.height


def _merge(
    con: duckdb.DuckDBPyConnection,
    table: str,
    rtype: ResourceType,
    resource_id: int,
    frame: pl.DataFrame,
    keys: Sequence[str],
) -> tuple[int, int, int]:
    """MERGE the frame into the resource: matched rows take the batch's non-null values
    (`properties` merged key by key), others are inserted and must be complete.
    Returns how many of the frame's records were (inserted, updated, unchanged): a record
    whose key matches several stored rows (appends do not de-duplicate) counts once."""
    if frame.height == 0:
        return 0, 0, 0
    source = frame.with_row_index(_ORDINAL)
    con.register(_SOURCE, _ArrowStream(source))
    try:
        on = " AND ".join(f"t.{_quote(k)} = s.{_quote(k)}" for k in keys)
        target = f"(SELECT * FROM {table} WHERE resource_id = {int(resource_id)})"
        required = [name for name in _required(rtype) if name not in keys]
        absent = [name for name in required if name not in frame.columns]
        present = [name for name in required if name in frame.columns]
        # Required properties the schema map does not set make every new row incomplete.
        missing = " OR ".join(f"s.{_quote(c)} IS NULL" for c in present) or "false"
        if absent:
            missing = "true"
        named = [k for k in IDENTITY[rtype] if k in frame.columns]
        incomplete = con.execute(
            f"SELECT s.{_RECORD}{''.join(f', s.{_quote(k)}' for k in named)} "
            f"FROM {_SOURCE} s ANTI JOIN {target} t ON {on} "
            f"WHERE {missing} ORDER BY s.{_ORDINAL} LIMIT 10"
        ).fetchall()
        if incomplete:
            rows = ", ".join(
                record_label(r[0], dict(zip(named, r[1:], strict=True))).removeprefix("record ")
                for r in incomplete
            )
            need = ", ".join(_required(rtype))
            raise WriteFailure(
                f"a row inserted by upsert must be complete ({need}); records {rows} "
                "match no existing row and lack some of these"
            )
        base = _next_pos(con, table, resource_id)
        mapped = [c for c in frame.columns if c != _RECORD]
        updates = [c for c in mapped if c not in keys]
        sets = ", ".join(f"{_quote(c)} = {_merged(c)}" for c in updates)
        changed = " OR ".join(f"({_merged(c)}) IS DISTINCT FROM t.{_quote(c)}" for c in updates)
        columns = ", ".join(_quote(c) for c in mapped)
        values = ", ".join(f"s.{_quote(c)}" for c in mapped)
        matched = (
            f"WHEN MATCHED AND t.resource_id = {int(resource_id)} AND ({changed}) "
            f"THEN UPDATE SET {sets} "
            if updates
            else ""
        )
        actions = con.execute(
            f"MERGE INTO {table} t USING {_SOURCE} s "
            f"ON t.resource_id = {int(resource_id)} AND {on} "
            f"{matched}"
            f"WHEN NOT MATCHED THEN INSERT (resource_id, pos, {columns}) "
            f"VALUES ({int(resource_id)}, {int(base)} + s.{_ORDINAL}, {values}) "
            f"RETURNING merge_action, {', '.join(_quote(k) for k in keys)}"
        ).fetchall()
    finally:
        con.unregister(_SOURCE)
    # RETURNING sees only the target's columns; after the update a row's key is its
    # record's key, and keys are unique in the frame (de-duplicated above).
    inserted = sum(1 for action, *_ in actions if action == "INSERT")
    updated = len({tuple(key) for action, *key in actions if action == "UPDATE"})
    return inserted, updated, frame.height - inserted - updated


def _merged(column: str) -> str:
    """The value a matched row takes: the batch's when set; JSON objects merged by key."""
    quoted = _quote(column)
    if column == PROPERTIES_KEY:
        return (
            f"CASE WHEN s.{quoted} IS NULL THEN t.{quoted} "
            f"ELSE CAST(json_merge_patch(coalesce(t.{quoted}, '{{}}'), s.{quoted}) AS VARCHAR) END"
        )
    return f"coalesce(s.{quoted}, t.{quoted})"
