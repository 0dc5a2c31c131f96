"""Builds `defs`, the Dagster code location: connection pulls and their schedule sensor.

`build_defs` is the factory: tests pass their own catalog resource (and clock); the
service's `defs` reads connections from its store under CARTONIZE_DATA_DIR.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from dagster import Definitions, in_process_executor

from pipelines.pulls import build_schedule_sensor, pull_job, synced_resource
from pipelines.resources import (
    ConnectionCatalogResource,
    SourceClientResource,
    StoreCatalogResource,
)

__all__ = ["build_defs", "defs"]


def build_defs(
    catalog: ConnectionCatalogResource,
    source: SourceClientResource | None = None,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> Definitions:
    """The pull asset, its job, and the schedule sensor, bound to `catalog` and `source`.

    Runs execute in process: a pull is one step, and a process per step would only add
    start-up time to every webhook.
    """
    return Definitions(
        assets=[synced_resource],
        jobs=[pull_job],
        sensors=[build_schedule_sensor(now)],
        resources={"catalog": catalog, "source": source or SourceClientResource()},
        executor=in_process_executor,
    )


defs = build_defs(StoreCatalogResource())
