"""The lost-run sweep's edges: a new Dagster home opened by several processes at once, a
run created while the start-up sweep runs, a sweep interrupted or run twice at once, and
runs launched on another machine (judged by their heartbeat). Real Dagster instances
(SQLite storage), real DuckDB stores, real run processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import filelock
import pytest
from cartonize.store import Store
from cartonize.sync.connections import read_log
from dagster import DagsterEvent, DagsterEventType, DagsterInstance, DagsterRunStatus, EventLogEntry

from pipelines.runs import (
    CONNECTION_TAG,
    HEARTBEAT_KEY,
    LAUNCHER_TAG,
    PROCESS_TAG,
    PullRuns,
    _heartbeat,
    _pull_job,
    fail_lost_runs,
    open_instance,
    process_token,
    sweep_lost_runs,
)
from tests.sync.third_party import ThirdPartyServer, connect


@pytest.fixture
def connection_id(store: Store, third_party: ThirdPartyServer) -> int:
    account = store.create_account("acme", "enterprise")
    store.set_connections_enabled("acme", True)
    connection, _ = connect(store, account.id, third_party)
    return connection.id


def _dead_token() -> str:
    """The token of a process that has ended."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return process_token(child.pid)


def _lost_run(instance: DagsterInstance, connection_id: int, token: str | None = None) -> str:
    """A created run of `connection_id` whose launcher and run process (both `token`, by
    default a dead process's) are gone; returns its id."""
    token = token or _dead_token()
    job = _pull_job()
    run = instance.create_run_for_job(
        job.get_definition(),
        run_config={},
        tags={CONNECTION_TAG: str(connection_id), LAUNCHER_TAG: token, PROCESS_TAG: token},
        job_code_origin=job.get_python_origin(),
    )
    return run.run_id


def _failures(instance: DagsterInstance, run_id: str) -> int:
    return len(instance.all_logs(run_id, of_type=DagsterEventType.RUN_FAILURE))


def test_processes_opening_a_new_home_together_all_open_it(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The API opens the instance at its first pull, the start-up sweep at start; on a new
    # home both create its SQLite storage, and openers at once failed (7 in 18) with
    # "Version table 'alembic_version' has more than one head present", some leaving a
    # storage nothing could open again. Threads race the same way as processes.
    for trial in range(4):
        home = tmp_path / f"dagster-{trial}"
        monkeypatch.setenv("DAGSTER_HOME", str(home))
        errors = _open_together(store, home)
        assert errors == [], (trial, errors)
        with open_instance(home) as instance:
            assert instance.get_dynamic_partitions("connections") == ["1"]


def _open_together(store: Store, home: Path) -> list[str]:
    """Three first pulls' openings of `home` and the start-up sweep, at once; the errors."""
    errors: list[str] = []
    start = threading.Barrier(4)

    def pull() -> None:
        try:
            start.wait()
            instance = PullRuns(store, home).instance
            instance.add_dynamic_partitions("connections", ["1"])
            instance.get_runs(limit=1)
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}"[:200])

    def sweep() -> None:
        try:
            start.wait()
            sweep_lost_runs(store, retry_s=0)
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}"[:200])

    threads = [threading.Thread(target=pull) for _ in range(3)]
    threads.append(threading.Thread(target=sweep))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return errors


def test_the_start_sweep_leaves_runs_created_after_it_began(
    store: Store, connection_id: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A run created while the start-up sweep runs belongs to this service run, whose
    # status reads judge it; the sweep is for runs the last service run left.
    home = tmp_path / "dagster"
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    instance = open_instance(home)
    before = _lost_run(instance, connection_id)
    swept: list[list[str]] = []
    # The sweep begins, then waits to open the instance while the setup lock is held.
    with filelock.FileLock(str(home / ".cartonize-open.lock")):
        sweeper = threading.Thread(target=lambda: swept.append(sweep_lost_runs(store)))
        sweeper.start()
        time.sleep(0.5)
        after = _lost_run(instance, connection_id)
    sweeper.join(60)
    assert swept == [[before]]
    run = instance.get_run_by_id(after)
    assert run is not None and not run.is_finished
    # Its own status read finds it lost.
    assert fail_lost_runs(instance, store, runs=[run]) == [after]


def test_a_sweep_interrupted_after_recording_the_failure_does_not_record_a_second(
    store: Store, connection_id: int, tmp_path: Path
) -> None:
    # Dagster stores a run's failure event, then sets its status: a sweep killed between
    # the two left the run unfinished, and the next sweep recorded a second failure.
    instance = open_instance(tmp_path / "dagster")
    run_id = _lost_run(instance, connection_id)
    # What the killed sweep had written: the event, not the status.
    _record_end(instance, run_id, DagsterEventType.RUN_FAILURE)
    assert fail_lost_runs(instance, store) == [run_id]
    assert _failures(instance, run_id) == 1
    done = instance.get_run_by_id(run_id)
    assert done is not None and done.status == DagsterRunStatus.FAILURE
    (entry,) = read_log(store, connection_id, limit=10, offset=0)
    assert entry.messages[0].endswith(
        "the pull process ended before its run finished; it wrote nothing. Start the pull "
        "again, or wait for the next scheduled one"
    )
    assert fail_lost_runs(instance, store) == []
    assert _failures(instance, run_id) == 1


def test_a_run_whose_success_was_recorded_but_not_applied_is_not_failed(
    store: Store, connection_id: int, tmp_path: Path
) -> None:
    # The same interruption in the run process itself, after its success event.
    instance = open_instance(tmp_path / "dagster")
    run_id = _lost_run(instance, connection_id)
    _record_end(instance, run_id, DagsterEventType.RUN_SUCCESS)
    assert fail_lost_runs(instance, store) == []
    run = instance.get_run_by_id(run_id)
    assert run is not None and run.status == DagsterRunStatus.SUCCESS
    assert _failures(instance, run_id) == 0
    assert read_log(store, connection_id, limit=10, offset=0) == []


def _record_end(instance: DagsterInstance, run_id: str, kind: DagsterEventType) -> None:
    """Store a run-ending event in the run's log without applying it to the run's status,
    as a process killed between the two steps of Dagster's `handle_new_event` leaves it."""
    run = instance.get_run_by_id(run_id)
    assert run is not None
    event = DagsterEvent(
        event_type_value=kind.value,
        job_name=run.job_name,
        message="the pull process ended before its run finished",
    )
    instance.event_log_storage.store_event(
        EventLogEntry(
            error_info=None,
            level="ERROR",
            user_message="",
            run_id=run_id,
            timestamp=time.time(),
            dagster_event=event,
            job_name=run.job_name,
        )
    )
    current = instance.get_run_by_id(run_id)
    assert current is not None and not current.is_finished


def test_sweeps_at_once_fail_each_lost_run_once(
    store: Store, connection_id: int, tmp_path: Path
) -> None:
    # Status reads in two workers (or one and the start-up sweep) each judged a run lost
    # and each reported it: two failure events and, at worst, two log entries.
    home = tmp_path / "dagster"
    token = _dead_token()
    first = open_instance(home)
    runs = [_lost_run(first, connection_id, token) for _ in range(4)]
    start = threading.Barrier(3)
    failed: list[str] = []

    def sweep() -> None:
        instance = open_instance(home)
        start.wait()
        failed.extend(fail_lost_runs(instance, store))

    threads = [threading.Thread(target=sweep) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(failed) == sorted(runs)
    assert [_failures(first, run_id) for run_id in runs] == [1] * 4
    entries = read_log(store, connection_id, limit=20, offset=0)
    assert sorted(e.run_id for e in entries if e.run_id) == sorted(runs)


def test_a_run_on_another_machine_is_lost_once_its_heartbeat_stops(
    store: Store,
    third_party: ThirdPartyServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A run's processes on another host cannot be looked up here, so such a run was never
    # judged lost: with a shared DAGSTER_HOME it stayed "started" (and was joined) for
    # ever. Run processes now beat every 30 s (0.3 s here); a silent lease ends it.
    monkeypatch.setenv("CARTONIZE_SYNC_ALLOW_NETWORKS", "127.0.0.0/8")
    monkeypatch.setenv("CARTONIZE_PULL_HEARTBEAT_S", "0.3")
    account = store.create_account("acme", "enterprise")
    store.set_connections_enabled("acme", True)
    connection, _ = connect(
        store,
        account.id,
        third_party,
        third_party_api_url=third_party.url("/slow?delay=60&n=3&root=data.items"),
    )
    runs = PullRuns(store, tmp_path / "dagster")
    run_id = runs.start(connection, "webhook")
    instance = runs.instance
    deadline = time.monotonic() + 60
    while not (third_party.seen and _heartbeat(instance, run_id)):
        assert time.monotonic() < deadline, "the run never read the source nor beat"
        time.sleep(0.1)
    run = instance.get_run_by_id(run_id)
    assert run is not None
    pid = int(run.tags[PROCESS_TAG].split("|")[2])
    # As a sweep on another machine sees it: tokens it cannot look up.
    elsewhere = {
        tag: "|".join(["elsewhere", *run.tags[tag].split("|")[1:]])
        for tag in (PROCESS_TAG, LAUNCHER_TAG)
    }
    instance.add_run_tags(run_id, elsewhere)
    try:
        first = _heartbeat(instance, run_id)
        time.sleep(2.0)
        assert (_heartbeat(instance, run_id) or 0) > (first or 0)
        assert fail_lost_runs(instance, store, lease_s=1.5) == []
        # Its machine hangs: no more beats.
        os.kill(pid, signal.SIGSTOP)
        time.sleep(2.0)
        assert fail_lost_runs(instance, store, lease_s=1.5) == [run_id]
    finally:
        os.kill(pid, signal.SIGKILL)
        os.kill(pid, signal.SIGCONT)
    status = runs.status(run_id)
    assert status is not None and status.status == "failure"
    assert status.message is not None and "on elsewhere gave no sign of life" in status.message
    assert _failures(instance, run_id) == 1


def test_a_run_of_another_machine_is_lost_only_when_silent_for_the_lease(
    store: Store, connection_id: int, tmp_path: Path
) -> None:
    # Before its first beat (or from a version without them) its creation is its last
    # sign of life.
    instance = open_instance(tmp_path / "dagster")
    run_id = _lost_run(instance, connection_id, "elsewhere|boot|123|456")
    assert fail_lost_runs(instance, store, lease_s=60) == []
    time.sleep(1.1)
    key = HEARTBEAT_KEY.format(run_id=run_id)
    instance.daemon_cursor_storage.set_cursor_values({key: str(time.time())})
    assert fail_lost_runs(instance, store, lease_s=1) == []
    time.sleep(1.1)
    assert fail_lost_runs(instance, store, lease_s=1) == [run_id]
    (entry,) = read_log(store, connection_id, limit=10, offset=0)
    assert "its process on elsewhere gave no sign of life for 1 s" in entry.messages[0]
