"""Pull a connection now, as a Dagster run, and read how that run went.

Used by `GET /sync-api/{public_api_id}/webhook` and by the console's Trigger Webhook button:

    runs = PullRuns(store)               # Dagster instance at DAGSTER_HOME or <data>/dagster
    run_id = runs.start(connection)      # created and launched at once, not at a sensor tick
    status = runs.wait(run_id, 20.0)     # or runs.status(run_id) later

`start` creates a run of the `pull_connection` job (partition = the connection id) on the
instance, so it shows in Dagster's UI with its logs like any other run, then executes it in a
process of its own (`python -m pipelines.runs RUN_ID`): the web worker is not blocked by the
pull and a crash of the pull cannot take the worker down. That process is this module's own
small run launcher; the instance's configured launcher (Celery, Kubernetes) serves runs the
daemon launches, the scheduled ones (docs/sync-schedules.md).

A run's figures come from the connection log entry it wrote (the store is the record of
what was imported); its state from the Dagster run.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any, Literal

from cartonize.serve import configured_dagster_home, dagster_home
from cartonize.store import Store
from cartonize.sync.catalog import PullTrigger
from cartonize.sync.connections import Connection, log_of_run
from cartonize.sync.fetch import FetchSettings
from dagster import DagsterEventType, DagsterInstance, DagsterRunStatus, RunsFilter
from dagster._core.definitions.reconstruct import ReconstructableJob, ReconstructableRepository
from dagster._core.execution.api import execute_run
from dagster._core.storage.tags import PARTITION_NAME_TAG

from pipelines.pulls import LOCK_MARGIN_S, PARTITIONS, PULL_JOB, TRIGGER_TAG

__all__ = [
    "CONNECTION_TAG",
    "PullRuns",
    "PullStatus",
]

ROOT = Path(__file__).resolve().parents[1]
#: Run tag naming the connection a run pulls (also its partition key).
CONNECTION_TAG = "cartonize/connection"
RunState = Literal["queued", "running", "success", "failure"]

#: Run states in which a run may still pull (or be about to).
_UNFINISHED = [
    DagsterRunStatus.QUEUED,
    DagsterRunStatus.NOT_STARTED,
    DagsterRunStatus.STARTING,
    DagsterRunStatus.STARTED,
]

_STATES: dict[DagsterRunStatus, RunState] = {
    DagsterRunStatus.QUEUED: "queued",
    DagsterRunStatus.NOT_STARTED: "queued",
    DagsterRunStatus.STARTING: "queued",
    DagsterRunStatus.STARTED: "running",
    DagsterRunStatus.CANCELING: "running",
    DagsterRunStatus.SUCCESS: "success",
    DagsterRunStatus.FAILURE: "failure",
    DagsterRunStatus.CANCELED: "failure",
}


@dataclass(frozen=True)
class PullStatus:
    """A pull run's state and, once it wrote its log entry, its figures."""

    run_id: str
    connection_id: int | None
    status: RunState
    #: Dagster's own status name (QUEUED, STARTED, SUCCESS, FAILURE, ...).
    dagster_status: str
    resource_id: int | None = None
    received: int = 0
    inserted: int = 0
    updated: int = 0
    rejected: int = 0
    duration_s: float | None = None
    message: str | None = None

    @property
    def done(self) -> bool:
        """Whether the run has finished (success or failure)."""
        return self.status in ("success", "failure")

    def to_wire(self) -> dict[str, Any]:
        """The sync API's answer body (camelCase like the write answers)."""
        body: dict[str, Any] = {"status": self.status, "run_id": self.run_id}
        if self.done:
            body.update(
                packResourceId=self.resource_id if self.status == "success" else None,
                received=self.received,
                inserted=self.inserted,
                updated=self.updated,
                rejected=self.rejected,
                duration_s=self.duration_s,
            )
        if self.message:
            body["message"] = self.message
        return body


class PullRuns:
    """Starts pull runs on the Dagster instance beside a store, and reads their status."""

    def __init__(self, store: Store, home: Path | None = None) -> None:
        self.store = store
        # DAGSTER_HOME when set, else <data>/dagster, as `make run` sets it up.
        self.home = (home or dagster_home(store.data_dir)).resolve()
        self._instance: DagsterInstance | None = None
        self._lock = threading.Lock()

    @property
    def instance(self) -> DagsterInstance:
        """The Dagster instance (opened on first use)."""
        with self._lock:
            if self._instance is None:
                self._instance = DagsterInstance.from_config(
                    str(configured_dagster_home(self.home))
                )
            return self._instance

    def start(self, connection: Connection, trigger: PullTrigger = "webhook") -> str:
        """Create a run pulling `connection` and launch it now; return the run id.

        Pulls of one connection run one at a time (the pull lock), so while one runs and
        another waits for it, a third would only read the source after the waiting one,
        no fresher: its request joins the waiting run instead (that run's id is returned).
        Each run is a process of ~200 MB, and a client retrying a slow source's webhook
        every few seconds started one per call until memory ran out.
        """
        instance = self.instance
        key = str(connection.id)
        if not instance.has_dynamic_partition(PARTITIONS, key):
            instance.add_dynamic_partitions(PARTITIONS, [key])
        waiting = self._waiting_run(key)
        if waiting is not None:
            return waiting
        job = _pull_job()
        run = instance.create_run_for_job(
            job.get_definition(),
            run_config={},
            tags={PARTITION_NAME_TAG: key, TRIGGER_TAG: trigger, CONNECTION_TAG: key},
            job_code_origin=job.get_python_origin(),
        )
        self._launch(run.run_id)
        return run.run_id

    def _waiting_run(self, key: str) -> str | None:
        """The newest unfinished run of partition `key` when another unfinished one is
        older (so the newest waits, or will wait, for the pull lock); else None.

        Only runs young enough to still be running count: a run whose process died with
        nobody to mark it failed stays "started" forever and must not swallow requests.
        """
        settings = FetchSettings.from_env()
        longest = 2 * (settings.total_timeout + LOCK_MARGIN_S) + 60
        runs = self.instance.get_runs(
            RunsFilter(
                tags={PARTITION_NAME_TAG: key},
                statuses=_UNFINISHED,
                created_after=datetime.now(UTC) - timedelta(seconds=longest),
            ),
            limit=2,
        )
        return runs[0].run_id if len(runs) >= 2 else None

    def status(self, run_id: str) -> PullStatus | None:
        """The run's state and figures, or None when the instance has no such run."""
        instance = self.instance
        run = instance.get_run_by_id(run_id)
        if run is None:
            return None
        tag = run.tags.get(CONNECTION_TAG)
        connection_id = int(tag) if tag and tag.isdigit() else None
        state = _STATES.get(run.status, "running")
        logged = log_of_run(self.store, run_id)
        message = None
        if logged is not None:
            entry = logged[1]
            if entry.status == "failure" and entry.messages:
                message = entry.messages[0]
            if state == "failure" and entry.status == "success":
                # The rows and this entry committed together, so the import happened; the
                # run failed after it (its process killed, the store locked for the asset
                # checks). Answering failure would make the caller pull again for nothing.
                state = "success"
            status = PullStatus(
                run_id,
                connection_id,
                state,
                run.status.value,
                entry.resource_id,
                entry.received,
                entry.inserted,
                entry.updated,
                entry.rejected,
                entry.duration_s,
                message,
            )
        else:
            status = PullStatus(run_id, connection_id, state, run.status.value)
        if state == "failure" and status.message is None:
            status = _with_message(status, _failure_message(instance, run_id))
        return status

    def wait(self, run_id: str, timeout: float, poll: float = 0.1) -> PullStatus | None:
        """The status once the run has finished, or as it is after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            status = self.status(run_id)
            if status is None or status.done or time.monotonic() >= deadline:
                return status
            time.sleep(min(poll, max(0.0, deadline - time.monotonic())))

    def _launch(self, run_id: str) -> None:
        env = {
            **os.environ,
            "DAGSTER_HOME": str(self.home),
            "CARTONIZE_DATA_DIR": str(self.store.data_dir.resolve()),
            "PYTHONPATH": os.pathsep.join(
                p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p
            ),
        }
        logs = self.home / "pull-launcher"
        logs.mkdir(parents=True, exist_ok=True)
        log_path = logs / f"{run_id}.log"
        with log_path.open("wb") as output:
            process = subprocess.Popen(
                [sys.executable, "-m", "pipelines.runs", run_id],
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        threading.Thread(target=self._reap, args=(process, run_id, log_path), daemon=True).start()

    def _reap(self, process: subprocess.Popen[bytes], run_id: str, log_path: Path) -> None:
        """Wait for the run process; a run it left unfinished is marked failed."""
        code = process.wait()
        run = self.instance.get_run_by_id(run_id)
        if run is not None and not run.is_finished:
            self.instance.report_run_failed(
                run,
                f"the pull process exited with code {code} before the run finished; "
                f"its output is in {log_path}",
            )
        elif code == 0:
            log_path.unlink(missing_ok=True)


@cache
def _pull_job() -> ReconstructableJob:
    repository = ReconstructableRepository.for_module(
        "pipelines.definitions", "defs", working_directory=str(ROOT)
    )
    return repository.get_reconstructable_job(PULL_JOB)


def _with_message(status: PullStatus, message: str | None) -> PullStatus:
    return dataclasses.replace(status, message=message)


def _failure_message(instance: DagsterInstance, run_id: str) -> str | None:
    """Why a run failed, from its step failure (the pull's own message) or the run failure."""
    for entry in instance.all_logs(run_id, of_type=DagsterEventType.STEP_FAILURE):
        event = entry.dagster_event
        data = event.step_failure_data if event is not None else None
        if data is None:
            continue
        if data.user_failure_data is not None and data.user_failure_data.description:
            return data.user_failure_data.description
        if data.error is not None:
            return data.error.message.strip()
    for entry in instance.all_logs(run_id, of_type=DagsterEventType.RUN_FAILURE):
        if entry.dagster_event is not None and entry.dagster_event.message:
            return entry.dagster_event.message
    return None


def main(argv: list[str] | None = None) -> int:
    """Execute a created pull run (the process `PullRuns.start` launches)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m pipelines.runs RUN_ID", file=sys.stderr)
        return 2
    instance = DagsterInstance.get()
    run = instance.get_run_by_id(args[0])
    if run is None:
        print(f"no run {args[0]} in {os.environ.get('DAGSTER_HOME')}", file=sys.stderr)
        return 2
    execute_run(_pull_job(), run, instance)
    return 0


if __name__ == "__main__":
    sys.exit(main())
