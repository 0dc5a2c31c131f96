"""Pull a connection now, as a Dagster run, and read how that run went.

Used by `GET /sync-api/{public_api_id}/webhook` and by the console's Trigger Webhook button:

    runs = PullRuns(store)               # Dagster instance at DAGSTER_HOME or <data>/dagster
    run_id = runs.start(connection)      # created and launched at once, not at a sensor tick
    status = runs.wait(run_id, 20.0)     # or runs.status(run_id) later

`start` creates a run of the `pull_connection` job (partition = the connection id) on the
instance, so it shows in Dagster's UI with its logs like any other run, then executes it in a
process of its own (what `python -m pipelines.runs RUN_ID` does, forked from a server process
that imported Dagster and the pipelines once, `pipelines.forks`): the web worker is not
blocked by the pull and a crash of the pull cannot take the worker down. That process is
this module's own small run launcher; the instance's configured launcher (Celery,
Kubernetes) serves runs the daemon launches, the scheduled ones (docs/sync-schedules.md).

A run's figures come from the connection log entry it wrote (the store is the record of
what was imported); its state from the Dagster run.

No Dagster daemon watches these runs (run monitoring covers runs its launcher started). A
thread of the launching process waits for the run process and marks a run it left
unfinished failed; if the launching process is gone too (a gunicorn worker restarted or
killed), nobody did, and the run stayed "started" forever. So each run is tagged with the
process that created it and the process that runs it (host, boot, pid and the process's
start time, so a reused pid is not mistaken for it), and `fail_lost_runs` marks failed
every unfinished run whose process is gone, with a connection log entry saying so. It
runs when a pull of the connection is started, when a run's status is read, and once at
service start (`python -m pipelines.runs --fail-lost`, from `cartonize.serve`; only runs
created before it began). A run whose processes are on another host (a shared
DAGSTER_HOME) is lost when its run process's heartbeat has been silent for `LEASE_S`.
Failing a run is idempotent and serialised between processes (`_fail_run`), and every
process of ours opens the instance under the home's setup lock (`open_instance`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any, Literal

import filelock
from cartonize.serve import configured_dagster_home, dagster_home
from cartonize.store import Store
from cartonize.sync.catalog import PullTrigger
from cartonize.sync.connections import Connection, connection_by_id, log_of_run
from cartonize.sync.fetch import FetchSettings
from cartonize.sync.writes import RunInfo, WriteResult, log_result
from dagster import DagsterEventType, DagsterInstance, DagsterRun, DagsterRunStatus, RunsFilter
from dagster._core.definitions.reconstruct import ReconstructableJob, ReconstructableRepository
from dagster._core.execution.api import execute_run
from dagster._core.storage.tags import PARTITION_NAME_TAG
from dagster._time import datetime_from_timestamp
from sqlalchemy.exc import OperationalError

from pipelines.forks import ForkServer, ForkServerGone
from pipelines.pulls import LOCK_MARGIN_S, PARTITIONS, PULL_JOB, TRIGGER_TAG, pull_trigger

__all__ = [
    "CONNECTION_TAG",
    "LAUNCHER_TAG",
    "PROCESS_TAG",
    "PullRuns",
    "PullStatus",
    "fail_lost_runs",
    "open_instance",
    "process_token",
    "sweep_lost_runs",
]

ROOT = Path(__file__).resolve().parents[1]
#: Run tag naming the connection a run pulls (also its partition key).
CONNECTION_TAG = "cartonize/connection"
RunState = Literal["queued", "running", "success", "failure"]
#: Run tag naming the process that created the run (`process_token`).
LAUNCHER_TAG = "cartonize/launcher"
#: Run tag naming the process that executes the run (`process_token`).
PROCESS_TAG = "cartonize/process"
#: Seconds a run may show no run process before a gone launcher counts as losing it: the
#: run process tags itself once Python and Dagster are imported (2-5 s under load).
START_GRACE_S = 60.0
#: Seconds between a run process's heartbeats (`CARTONIZE_PULL_HEARTBEAT_S` overrides).
HEARTBEAT_S = 30.0
#: A run whose processes this machine cannot see (another host's) is lost once its last
#: heartbeat, or its creation before the first, is this many seconds old.
LEASE_S = 600.0
#: Key of a run's last heartbeat (a UNIX time) in the instance's key-value store.
HEARTBEAT_KEY = "cartonize/pull-heartbeat/{run_id}"

#: Run states in which a run may still pull (or be about to).
_UNFINISHED = [
    DagsterRunStatus.QUEUED,
    DagsterRunStatus.NOT_STARTED,
    DagsterRunStatus.STARTING,
    DagsterRunStatus.STARTED,
]

#: Events that end a run, as Dagster records them before it updates the run's status.
_RUN_ENDS = {
    DagsterEventType.RUN_SUCCESS,
    DagsterEventType.RUN_FAILURE,
    DagsterEventType.RUN_CANCELED,
}

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
                self._instance = open_instance(self.home, configure=True)
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
        # A run whose process died unseen would count as running (and be joined) forever.
        fail_lost_runs(instance, self.store, key)
        waiting = self._waiting_run(key)
        if waiting is not None:
            return waiting
        job = _pull_job()
        run = instance.create_run_for_job(
            job.get_definition(),
            run_config={},
            tags={
                PARTITION_NAME_TAG: key,
                TRIGGER_TAG: trigger,
                CONNECTION_TAG: key,
                LAUNCHER_TAG: process_token(),
            },
            job_code_origin=job.get_python_origin(),
        )
        try:
            self._launch(run.run_id)
        except Exception as exc:
            # No process will ever run it: say so now rather than leave it "not started".
            message = f"the pull process could not be started: {type(exc).__name__}: {exc}"
            instance.report_run_failed(run, message)
            _log_lost(self.store, run.run_id, run.tags, message)
            raise
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
        if not run.is_finished and fail_lost_runs(instance, self.store, runs=[run]):
            run = instance.get_run_by_id(run_id) or run
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
        log_path.write_bytes(b"")
        wait: Callable[[], int | None]
        server = _fork_server(env)
        launched = None
        if server is not None:
            # Forked from this process's fork server, which imported Dagster and the
            # pipelines once (a new interpreter spends 2-3 s of CPU importing them).
            with contextlib.suppress(ForkServerGone):  # (then as before the server)
                launched = server.launch(run_id, env, log_path)
        if launched is not None:
            pid, wait = launched
        else:
            # The first pull of this process: the server is being started beside it
            # (its imports would otherwise hold up this request), so a new interpreter.
            with log_path.open("wb") as output:
                spawned = subprocess.Popen(
                    [sys.executable, "-m", "pipelines.runs", run_id],
                    cwd=ROOT,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            pid, wait = spawned.pid, spawned.wait
        # The run process tags itself too, once started; this covers the moments before.
        self.instance.add_run_tags(run_id, {PROCESS_TAG: process_token(pid)})
        threading.Thread(target=self._reap, args=(wait, run_id, log_path), daemon=True).start()

    def _reap(self, wait: Callable[[], int | None], run_id: str, log_path: Path) -> None:
        """Wait for the run process; a run it left unfinished is marked failed, with a
        connection log entry (the console shows the log, not Dagster's)."""
        code = wait()
        ended = "exited" if code is None else f"exited with code {code}"
        reason = f"the pull process {ended} before the run finished; its output is in {log_path}"
        _fail_run(self.instance, self.store, run_id, reason)
        if code == 0:
            log_path.unlink(missing_ok=True)


def process_token(pid: int | None = None) -> str:
    """`host|boot id|pid|start time` of a process (this one by default): what
    `_process_alive` needs to tell, later and from another process, whether it still runs.
    The start time (clock ticks after boot, Linux) tells a reused pid from it."""
    pid = os.getpid() if pid is None else pid
    stat = _proc_stat(pid)
    return f"{socket.gethostname()}|{_boot_id()}|{pid}|{stat[1] if stat else ''}"


def _process_alive(token: str) -> bool | None:
    """Whether the process of `token` still runs; None when this machine cannot tell (a
    token of another host, or one it cannot read)."""
    try:
        host, boot, pid_text, start = token.split("|")
        pid = int(pid_text)
    except ValueError:
        return None
    if host != socket.gethostname() or pid <= 0:
        return None
    if boot and boot != _boot_id():
        return False  # the machine restarted since: no process of before runs
    stat = _proc_stat(pid)
    if stat is None:
        if Path("/proc/self/stat").exists():
            return False
        try:  # no /proc: the pid alone
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    state, ticks = stat
    # A zombie has ended (its parent has not reaped it yet); another start time, another
    # process under the same pid.
    return state not in ("Z", "X", "x") and not (start and ticks != start)


def _proc_stat(pid: int) -> tuple[str, str] | None:
    """(state, start time in clock ticks) of a process from /proc, or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # `pid (comm) state ...`: comm may hold spaces and parentheses, so split after the last.
    fields = text[text.rfind(")") + 2 :].split()
    return (fields[0], fields[19]) if len(fields) > 19 else None


@cache
def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def _lost_reason(
    run: DagsterRun,
    created: float | None,
    heartbeat: float | None = None,
    lease_s: float = LEASE_S,
) -> str | None:
    """Why an unfinished run of this launcher can no longer finish, or None.

    `created` and `heartbeat` (UNIX times) are read only for a run whose processes this
    machine cannot see (another host's), and for a run no pull process took yet."""
    token = run.tags.get(PROCESS_TAG)
    launcher = run.tags.get(LAUNCHER_TAG)
    if token:
        alive = _process_alive(token)
        if alive is None:
            return _lease_lapsed(token, created, heartbeat, lease_s)
        # While the launcher lives, its reaper reports the run with the exit code.
        if alive is False and not (launcher and _process_alive(launcher)):
            pid = token.split("|")[2]
            return (
                f"the pull process (pid {pid}) ended before its run finished (killed, or out "
                "of memory), and the service process that started it was gone too"
            )
        return None
    young = created is not None and time.time() - created < START_GRACE_S
    if not launcher or young:
        return None
    alive = _process_alive(launcher)
    if alive is None:
        return _lease_lapsed(launcher, created, heartbeat, lease_s)
    if alive is False:
        return "the service process that created the run ended before the pull process started"
    return None


def _lease_lapsed(
    token: str, created: float | None, heartbeat: float | None, lease_s: float
) -> str | None:
    """Why a run on another machine counts as lost: no sign of life (its last heartbeat,
    or its creation before the first) for `lease_s` seconds; else None."""
    signs = [t for t in (created, heartbeat) if t is not None]
    if not signs:
        return None
    silent = time.time() - max(signs)
    if silent < lease_s:
        return None
    return (
        f"its process on {token.split('|')[0]} gave no sign of life for {silent:.0f} s "
        f"(a running pull's process says it runs every {HEARTBEAT_S:.0f} s)"
    )


def _heartbeat(instance: DagsterInstance, run_id: str) -> float | None:
    """The UNIX time of the run process's last heartbeat, or None."""
    key = HEARTBEAT_KEY.format(run_id=run_id)
    value = instance.daemon_cursor_storage.get_cursor_values({key}).get(key)
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _beat(instance: DagsterInstance, run_id: str, stop: threading.Event, every: float) -> None:
    """The run process's heartbeat: its time in the key-value store every `every` s, so
    a sweep on another machine can tell a live run from a lost one."""
    key = HEARTBEAT_KEY.format(run_id=run_id)
    while True:
        try:
            instance.daemon_cursor_storage.set_cursor_values({key: f"{time.time():.3f}"})
        except Exception as exc:  # a busy storage: the next beat, the lease is long
            print(f"heartbeat not recorded: {type(exc).__name__}: {exc}", flush=True)
        if stop.wait(every):
            return


def fail_lost_runs(
    instance: DagsterInstance,
    store: Store,
    key: str | None = None,
    runs: list[DagsterRun] | None = None,
    *,
    created_before: datetime | None = None,
    lease_s: float = LEASE_S,
) -> list[str]:
    """Mark failed the unfinished runs this launcher started (of connection `key`, or all,
    created before `created_before` when given; or just `runs`) whose process is gone;
    each gets a connection log entry unless it wrote one. Returns their ids."""
    if runs is None:
        tags = {CONNECTION_TAG: key} if key is not None else {}
        runs = [
            r
            for r in instance.get_runs(
                RunsFilter(tags=tags, statuses=_UNFINISHED, created_before=created_before)
            )
            if CONNECTION_TAG in r.tags
        ]
    failed = []
    for run in runs:
        if run.is_finished or not ({PROCESS_TAG, LAUNCHER_TAG} & set(run.tags)):
            continue
        created = heartbeat = None
        token = run.tags.get(PROCESS_TAG)
        remote = token is not None and _process_alive(token) is None
        if token is None or remote:
            # Only these need the run's age (read for every status poll).
            record = instance.get_run_record_by_id(run.run_id)
            created = record.create_timestamp.timestamp() if record is not None else None
        if remote or (token is None and _process_alive(run.tags.get(LAUNCHER_TAG, "")) is None):
            heartbeat = _heartbeat(instance, run.run_id)
        reason = _lost_reason(run, created, heartbeat, lease_s)
        if reason is not None and _fail_run(instance, store, run.run_id, reason):
            failed.append(run.run_id)
    return failed


def _fail_run(instance: DagsterInstance, store: Store, run_id: str, reason: str) -> bool:
    """Mark an unfinished run failed for `reason`, with a connection log entry, once:
    whoever else does it at the same time (a sweep, a status read in another worker, the
    reaper) waits and then finds it finished, and what an interrupted attempt wrote is
    completed, not written again. Returns whether this call failed the run.

    Dagster records a run's end as an event (the run's log) and then sets its status;
    a process killed between the two leaves the event with the run still unfinished, and
    reporting the failure again would log a second one. So an end event already in the
    log is applied instead. The connection log entry comes first: a process killed after
    it leaves a run still unfinished, which the next attempt ends without another entry
    (`_log_lost` writes none for a run that has one)."""
    lock_path = Path(instance.root_directory) / "pull-launcher" / "lost-runs.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with filelock.FileLock(str(lock_path), timeout=LOST_LOCK_S):
            run = instance.get_run_by_id(run_id)
            if run is None or run.is_finished:
                return False
            ends = instance.all_logs(run_id, of_type=_RUN_ENDS)
            end = ends[-1] if ends else None
            event = end.dagster_event if end is not None else None
            if end is None or event is None:
                _log_lost(store, run_id, run.tags, reason)
                instance.report_run_failed(run, reason)
                return True
            failed = event.event_type != DagsterEventType.RUN_SUCCESS
            if failed:
                _log_lost(store, run_id, run.tags, event.message or reason)
            instance.run_storage.handle_run_event(
                run_id, event, datetime_from_timestamp(end.timestamp)
            )
            return failed
    except filelock.Timeout:
        return False  # another process is at it (and holds the lock past reason)


#: Seconds a process waits for another that is failing a lost run (a few SQLite writes).
LOST_LOCK_S = 30.0


#: How long the start-up sweep retries a storage another process holds, in seconds.
SWEEP_RETRY_S = 60.0


def _storage_busy(error: OperationalError) -> bool:
    """Whether SQLite refused because another process holds or is creating the storage:
    its write lock ("database is locked", past the driver's 5 s busy timeout) or a table
    another process's setup created a moment earlier ("already exists")."""
    text = str(error.orig)
    return "database is locked" in text or "already exists" in text


def sweep_lost_runs(store: Store, retry_s: float = SWEEP_RETRY_S) -> list[str]:
    """At service start: open the instance (creating its storage when new) and fail the
    runs whose processes went with the last service run. Retries, with growing pauses,
    while SQLite says another process holds or is creating the storage; any other error,
    or the same after `retry_s`, is raised.

    Only runs created before the sweep began are its business: a run created since is
    one of this service run's (a first pull in the sweep's first seconds), left to the
    status reads and pulls that fail lost runs as they go."""
    began = datetime.now(UTC)
    deadline = time.monotonic() + retry_s
    pause = 0.2
    while True:
        try:
            with open_instance() as instance:
                return fail_lost_runs(instance, store, created_before=began)
        except OperationalError as error:
            if not _storage_busy(error) or time.monotonic() + pause > deadline:
                raise
            print(f"Dagster's storage is busy ({error.orig}); again in {pause:.1f} s", flush=True)
            time.sleep(pause)
            pause = min(2 * pause, 5.0)


def open_instance(home: Path | None = None, *, configure: bool = False) -> DagsterInstance:
    """The Dagster instance at `home` (default `DAGSTER_HOME`), opened while holding the
    home's setup lock: processes opening a new home together each create its SQLite
    storage, and 7 openings in 18 (3 at a time) failed, some leaving a storage with two
    alembic heads that no process could open again. The first opening creates the whole
    storage, so later ones wait only for that (the lock is free once it exists). With
    `configure`, a home without a dagster.yaml gets ours first (under the lock too, so no
    opener reads it half written)."""
    if home is None:
        configured = os.environ.get("DAGSTER_HOME")
        if not configured:
            raise RuntimeError("DAGSTER_HOME is not set")
        home = Path(configured)
    home.mkdir(parents=True, exist_ok=True)
    with filelock.FileLock(str(home / ".cartonize-open.lock")):
        if configure:
            configured_dagster_home(home)
        return DagsterInstance.from_config(str(home))


def _log_lost(store: Store, run_id: str, tags: Mapping[str, str], reason: str) -> None:
    """A connection log entry for a run that ended without writing one (none when it did:
    its rows and entry committed together, so it imported)."""
    tag = tags.get(CONNECTION_TAG, "")
    connection = connection_by_id(store, int(tag)) if tag.isdigit() else None
    if connection is None or log_of_run(store, run_id) is not None:
        return
    now = datetime.now(UTC)
    message = (
        f"pull run {run_id[:8]} failed: {reason}; it wrote nothing. Start the pull again, "
        "or wait for the next scheduled one"
    )
    result = WriteResult("failure", connection.resource_to_update, messages=[message])
    log_result(
        store, connection, result, trigger=pull_trigger(tags), now=now, run=RunInfo(run_id, now)
    )


_server_lock = threading.Lock()
#: This process's fork server (`pipelines.forks`), started at its first pull.
_server: ForkServer | None = None


def _fork_server(env: Mapping[str, str]) -> ForkServer | None:
    """This process's fork server once it has imported what runs need; None before. The
    first call (or the first after the server went) starts it, in the background."""
    global _server
    with _server_lock:
        if _server is None or not _server.alive:
            _server = ForkServer.start(env)
            return None
        return _server if _server.ready.is_set() else None


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
        print("usage: python -m pipelines.runs RUN_ID | --fail-lost", file=sys.stderr)
        return 2
    if args[0] == "--fail-lost":
        # At service start: runs whose processes went with the last service run.
        for run_id in sweep_lost_runs(Store.from_env()):
            print(f"pull run {run_id} had lost its process: marked failed", flush=True)
        return 0
    instance = open_instance()
    run = instance.get_run_by_id(args[0])
    if run is None:
        print(f"no run {args[0]} in {os.environ.get('DAGSTER_HOME')}", file=sys.stderr)
        return 2
    instance.add_run_tags(run.run_id, {PROCESS_TAG: process_token()})
    every = float(os.environ.get("CARTONIZE_PULL_HEARTBEAT_S") or HEARTBEAT_S)
    stop = threading.Event()
    threading.Thread(target=_beat, args=(instance, run.run_id, stop, every), daemon=True).start()
    try:
        execute_run(_pull_job(), run, instance)
    finally:
        stop.set()
    return 0


if __name__ == "__main__":
    sys.exit(main())
