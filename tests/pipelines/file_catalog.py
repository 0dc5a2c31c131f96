"""A connection catalog kept in a JSON file: the pipeline tests' stand-in for the store.

It implements `cartonize.sync.catalog.ConnectionCatalog` simply (flat dot-path mapping, no
types, no unit conversion) so the Dagster tests exercise the pipeline's own decisions:
partitions, due slots, run keys, failures, metadata and checks. The real binding to the
store (mapping with polars, transactional writes) is tested with the store.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from cartonize.sync.catalog import (
    ConnectionSchedule,
    PullSpec,
    PullTrigger,
    ResourceQuality,
)
from cartonize.sync.fetch import SourceRequest
from cartonize.sync.schedule import Frequency, ScheduleSpec

from pipelines.resources import ConnectionCatalogResource

REQUIRED = ("refId", "dimensions_x", "dimensions_y", "dimensions_z")


@dataclass
class Outcome:
    """What one import did (matches the ImportOutcome protocol)."""

    status: Literal["success", "failure"]
    resource_id: int | str | None
    received: int = 0
    inserted: int = 0
    updated: int = 0
    rejected: int = 0
    messages: list[str] = field(default_factory=list)


class FileCatalog:
    """Connections, resources and the connection log in one JSON document."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if not path.exists():
            self._save({"connections": {}, "resources": {}, "log": []})

    # -- test set-up -------------------------------------------------------------------

    def add_connection(
        self,
        connection_id: str,
        url: str = "http://127.0.0.1:9/records",
        *,
        start: str | None = None,
        frequency: str | None = None,
        time_zone: str = "UTC",
        root_path: str = "",
        schema_map: dict[str, str] | None = None,
        resource_to_update: str | None = None,
        headers_template: str | None = None,
        api_key: str | None = None,
        api_token: str | None = None,
    ) -> None:
        """Store a connection (start as local ISO wall time)."""
        state = self._load()
        state["connections"][connection_id] = {
            "url": url,
            "start": start,
            "frequency": frequency,
            "time_zone": time_zone,
            "root_path": root_path,
            "schema_map": schema_map or {},
            "resource_to_update": resource_to_update,
            "headers_template": headers_template,
            "api_key": api_key,
            "api_token": api_token,
        }
        if resource_to_update is not None:
            state["resources"].setdefault(resource_to_update, [])
        self._save(state)

    def delete_connection(self, connection_id: str) -> None:
        """Remove a connection, as the console's delete would."""
        state = self._load()
        del state["connections"][connection_id]
        self._save(state)

    def log(self) -> list[dict[str, Any]]:
        """The connection log, oldest first."""
        return list(self._load()["log"])

    def rows(self, resource_id: str) -> list[dict[str, Any]]:
        """The stored rows of a resource."""
        return list(self._load()["resources"][resource_id])

    def resource_ids(self) -> list[str]:
        """Every stored resource's id."""
        return sorted(self._load()["resources"])

    # -- ConnectionCatalog -------------------------------------------------------------

    def scheduled_connections(self) -> Sequence[ConnectionSchedule]:
        result = []
        for cid, row in self._load()["connections"].items():
            schedule = None
            if row["start"] and row["frequency"]:
                schedule = ScheduleSpec(
                    datetime.fromisoformat(row["start"]),
                    Frequency.parse(row["frequency"]),
                    row["time_zone"],
                )
            result.append(ConnectionSchedule(cid, schedule))
        return result

    def pull_spec(self, connection_id: str) -> PullSpec | None:
        row = self._load()["connections"].get(connection_id)
        if row is None:
            return None
        return PullSpec(
            connection_id=connection_id,
            name=f"connection {connection_id}",
            source=SourceRequest(
                url=row["url"],
                headers_template=row["headers_template"],
                api_key=row["api_key"],
                api_token=row["api_token"],
                root_path=row["root_path"],
            ),
            resource_type="items",
            resource_to_update=row["resource_to_update"],
        )

    def pull_lock(self, connection_id: str, wait: float) -> AbstractContextManager[None]:
        """No lock: the pipeline tests run one pull at a time."""
        return nullcontext()

    def import_records(
        self,
        connection_id: str,
        records: Sequence[Any],
        *,
        trigger: PullTrigger,
        at: datetime,
        run_id: str | None = None,
        pulled: PullSpec | None = None,
    ) -> Outcome:
        state = self._load()
        row = state["connections"].get(connection_id)
        if row is None:
            return Outcome("failure", None, messages=["connection deleted"])
        mapped, rejected = [], 0
        for record in records:
            out = {prop: _dig(record, path) for prop, path in row["schema_map"].items()}
            if any(out.get(name) is None for name in REQUIRED):
                rejected += 1
                continue
            mapped.append(out)
        target = row["resource_to_update"]
        if target is None:
            target = f"{connection_id}-{at.strftime('%Y%m%dT%H%M%S')}-{len(state['resources'])}"
        previous = len(state["resources"].get(target, []))
        state["resources"][target] = mapped
        outcome = Outcome(
            "success",
            target,
            received=len(records),
            inserted=len(mapped),
            rejected=rejected,
            messages=[f"{rejected} records lack a required property"] if rejected else [],
        )
        state["log"].append(
            {
                "connection_id": connection_id,
                "trigger": trigger,
                "status": "success",
                "resource_id": target,
                "received": len(records),
                "inserted": len(mapped),
                "replaced": previous,
                "rejected": rejected,
                "message": None,
            }
        )
        self._save(state)
        return outcome

    def record_failure(
        self,
        connection_id: str,
        message: str,
        *,
        trigger: PullTrigger,
        at: datetime,
        run_id: str | None = None,
    ) -> None:
        state = self._load()
        state["log"].append(
            {
                "connection_id": connection_id,
                "trigger": trigger,
                "status": "failure",
                "message": message,
            }
        )
        self._save(state)

    def resource_quality(self, resource_id: int | str) -> ResourceQuality:
        rows = self._load()["resources"][str(resource_id)]
        ref_ids = [r.get("refId") for r in rows]
        return ResourceQuality(
            rows=len(rows),
            missing_required=sum(any(r.get(n) is None for n in REQUIRED) for r in rows),
            duplicate_ref_ids=len({i for i in ref_ids if ref_ids.count(i) > 1}),
        )

    def _load(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.path.read_text())
        return loaded

    def _save(self, state: dict[str, Any]) -> None:
        self.path.write_text(json.dumps(state))


class FileCatalogResource(ConnectionCatalogResource):
    """Binds the pipeline to a `FileCatalog` at `path`."""

    path: str

    def open(self) -> FileCatalog:
        return FileCatalog(Path(self.path))


def _dig(record: Any, path: str) -> Any:
    node = record
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node
