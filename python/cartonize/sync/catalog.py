"""What the pull pipeline needs from the connection store, as a Protocol.

The Dagster code (pipelines/definitions.py) is written against `ConnectionCatalog`; the store
module binds it (connections, decrypted credentials, schema mapping, resource writes and
the connection log). Connection ids are strings here because they are Dagster partition
keys; a store with integer ids passes `str(id)` out and parses it back.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

from cartonize.sync.fetch import SourceRequest
from cartonize.sync.schedule import ScheduleSpec

__all__ = [
    "CatalogUnavailable",
    "ConnectionCatalog",
    "ConnectionSchedule",
    "ImportOutcome",
    "PullBusy",
    "PullSpec",
    "PullTrigger",
    "ResourceQuality",
]

#: How a pull was started, as the connection log names it ("webhook" also covers the
#: console's Trigger Webhook button and a run launched by hand from Dagster's UI).
PullTrigger = Literal["schedule", "webhook"]


class CatalogUnavailable(Exception):
    """The connection store cannot be reached (or is not configured) right now."""


class PullBusy(Exception):
    """Another pull of the connection held it for longer than this pull would wait."""


@dataclass(frozen=True)
class ConnectionSchedule:
    """One connection as the sensor sees it: its id and its schedule, if it has one."""

    connection_id: str
    #: None: the connection is pulled only on demand (webhook, console button).
    schedule: ScheduleSpec | None


@dataclass(frozen=True)
class PullSpec:
    """Everything one pull of a connection needs before the write (credentials decrypted)."""

    connection_id: str
    name: str
    source: SourceRequest
    resource_type: Literal["items", "cartons", "orders"]
    #: None: each pull creates a new resource named from the base name and the time.
    resource_to_update: str | None


class ImportOutcome(Protocol):
    """What the write of one pull did (read-only, so the store's own result type fits)."""

    @property
    def status(self) -> Literal["success", "failure"]: ...
    @property
    def resource_id(self) -> int | str | None: ...
    @property
    def received(self) -> int: ...
    @property
    def inserted(self) -> int: ...
    @property
    def updated(self) -> int: ...
    @property
    def rejected(self) -> int: ...
    @property
    def messages(self) -> Sequence[str]: ...


@dataclass(frozen=True)
class ResourceQuality:
    """Facts about a stored resource that the pull's asset checks judge."""

    rows: int
    #: Rows lacking a required property of the resource type (items: refId, dimensions_*).
    missing_required: int
    #: refId values held by more than one row.
    duplicate_ref_ids: int


class ConnectionCatalog(Protocol):
    """The connection store as the pull pipeline uses it."""

    def scheduled_connections(self) -> Sequence[ConnectionSchedule]:
        """Every connection that exists now, scheduled or not (one Dagster partition each)."""
        ...

    def pull_spec(self, connection_id: str) -> PullSpec | None:
        """What a pull of the connection needs, or None when it no longer exists."""
        ...

    def pull_lock(self, connection_id: str, wait: float) -> AbstractContextManager[None]:
        """Held by a pull from before it reads the source until its write commits, so the
        pulls of one connection run one at a time, across processes: a pull that read the
        source earlier can never commit over one that read it later. Raises PullBusy after
        `wait` seconds."""
        ...

    def import_records(
        self,
        connection_id: str,
        records: Sequence[Any],
        *,
        trigger: PullTrigger,
        at: datetime,
        run_id: str | None = None,
        pulled: PullSpec | None = None,
    ) -> ImportOutcome:
        """Map, convert and write pulled records in one transaction, and log the import.

        `pulled` is the spec the records were read with: if the connection's source or
        target changed since (an edit during the pull), nothing is written and the
        failure is logged, since the records belong to the old settings.

        Resource to Update blank: a new resource; set: that resource is overwritten, the old
        rows staying until the new ones are complete. A write that cannot complete returns
        status "failure" (reasons in the log) rather than raising. `at` is when the pull
        started (the log records the duration from then) and `run_id` its Dagster run.
        """
        ...

    def record_failure(
        self,
        connection_id: str,
        message: str,
        *,
        trigger: PullTrigger,
        at: datetime,
        run_id: str | None = None,
    ) -> None:
        """Log a pull that failed before anything was written (source errors)."""
        ...

    def resource_quality(self, resource_id: int | str) -> ResourceQuality:
        """Counts the asset checks need about the stored resource."""
        ...
