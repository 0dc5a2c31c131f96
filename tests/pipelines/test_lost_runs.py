"""Pull runs whose process died while the process that launched them was gone too (a
gunicorn worker restarted or killed): nobody marked them failed, so they stayed "started"
forever, their status URL said `running`, and webhook calls joined them. Real processes
are killed here: the launcher (standing in for the worker) and the run process."""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from cartonize.serve import free_port
from cartonize.store import Store
from cartonize.sync.connections import read_log
from dagster import DagsterRun, DagsterRunStatus

import pipelines.runs as runs_module
from pipelines.forks import PRELOAD, _running
from pipelines.runs import (
    LAUNCHER_TAG,
    PROCESS_TAG,
    PullRuns,
    _lost_reason,
    _process_alive,
    fail_lost_runs,
    process_token,
)
from tests.sync.third_party import ThirdPartyServer, connect

ROOT = Path(__file__).resolve().parents[2]

#: A web worker's part: start a pull run, say its id, then wait to be killed. (No
#: `if __name__ == "__main__"` guard: the fork server imports nothing of the launcher.)
LAUNCHER = textwrap.dedent(
    """
    import sys, time
    from cartonize.store import Store
    from cartonize.sync.connections import connection_by_id
    from pipelines.runs import PullRuns

    data_dir, home, connection_id = sys.argv[1:4]
    store = Store(data_dir)
    runs = PullRuns(store, __import__("pathlib").Path(home))
    print(runs.start(connection_by_id(store, int(connection_id)), "webhook"), flush=True)
    time.sleep(600)
    """
)


@pytest.fixture
def account_id(store: Store) -> int:
    account = store.create_account("acme", "enterprise")
    store.set_connections_enabled("acme", True)
    return account.id


def _wait(condition: object, what: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def _orphaned_run(
    store: Store, account_id: int, third_party: ThirdPartyServer, tmp_path: Path
) -> tuple[PullRuns, str, int]:
    """A run reading a slow source whose launcher and run process were both SIGKILLed;
    returns (runs, run id, connection id)."""
    launcher, run_id, home, connection_id = _launch_slow_pull(
        store, account_id, third_party, tmp_path, LAUNCHER
    )
    assert launcher.stdout is not None
    runs = PullRuns(store, home)
    _wait(lambda: third_party.seen, "the run never read the source")
    run = runs.instance.get_run_by_id(run_id)
    assert run is not None and run.status == DagsterRunStatus.STARTED
    token = run.tags[PROCESS_TAG]
    assert _process_alive(token) is True
    # The worker goes first (its reaper thread with it), then the run process.
    launcher.kill()
    launcher.wait()
    launcher.stdout.close()
    os.kill(int(token.split("|")[2]), signal.SIGKILL)
    _wait(lambda: _process_alive(token) is False, "the run process did not die")
    return runs, run_id, connection_id


def _launch_slow_pull(
    store: Store, account_id: int, third_party: ThirdPartyServer, tmp_path: Path, script: str
) -> tuple[subprocess.Popen[bytes], str, Path, int]:
    """Run launcher `script` (a worker's part) for a connection to a slow source; returns
    (its process, the run id it printed, the Dagster home, the connection id)."""
    connection, _ = connect(
        store,
        account_id,
        third_party,
        third_party_api_url=third_party.url("/slow?delay=60&n=3&root=data.items"),
    )
    home = tmp_path / "dagster"
    path = tmp_path / "launcher.py"
    path.write_text(script)
    launcher = subprocess.Popen(
        [sys.executable, str(path), str(store.data_dir), str(home), str(connection.id)],
        cwd=ROOT,
        env=_child_env(CARTONIZE_SYNC_ALLOW_NETWORKS="127.0.0.0/8"),
        stdout=subprocess.PIPE,
    )
    assert launcher.stdout is not None
    run_id = launcher.stdout.readline().decode().strip()
    return launcher, run_id, home, connection.id


def _child_env(**settings: str) -> dict[str, str]:
    """This process's environment with the repository on PYTHONPATH, plus `settings`."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, **settings}


def test_a_run_whose_processes_died_is_failed_when_its_status_is_read(
    store: Store, account_id: int, third_party: ThirdPartyServer, tmp_path: Path
) -> None:
    runs, run_id, connection_id = _orphaned_run(store, account_id, third_party, tmp_path)
    status = runs.status(run_id)
    assert status is not None and status.status == "failure", status
    assert status.message is not None and "ended before its run finished" in status.message
    run = runs.instance.get_run_by_id(run_id)
    assert run is not None and run.status == DagsterRunStatus.FAILURE
    (entry,) = read_log(store, connection_id, limit=10, offset=0)
    assert (entry.status, entry.run_id, entry.trigger) == ("failure", run_id, "webhook")
    assert entry.messages[0].startswith(f"pull run {run_id[:8]} failed: the pull process")
    # Asked again: still one entry.
    assert runs.status(run_id) is not None
    assert len(read_log(store, connection_id, limit=10, offset=0)) == 1


def test_a_run_whose_processes_died_is_failed_at_service_start_and_not_joined(
    store: Store, account_id: int, third_party: ThirdPartyServer, tmp_path: Path
) -> None:
    runs, run_id, connection_id = _orphaned_run(store, account_id, third_party, tmp_path)
    # What `python -m pipelines.runs --fail-lost` does when the service starts.
    assert fail_lost_runs(runs.instance, store) == [run_id]
    assert fail_lost_runs(runs.instance, store) == []
    run = runs.instance.get_run_by_id(run_id)
    assert run is not None and run.status == DagsterRunStatus.FAILURE
    (entry,) = read_log(store, connection_id, limit=10, offset=0)
    assert entry.status == "failure" and entry.run_id == run_id


def test_a_killed_run_process_is_failed_and_logged_by_its_live_launcher(
    store: Store,
    account_id: int,
    third_party: ThirdPartyServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The launcher's reaper marked the run failed in Dagster, but the connection log (what
    the console shows) said nothing of it."""
    monkeypatch.setenv("CARTONIZE_SYNC_ALLOW_NETWORKS", "127.0.0.0/8")
    connection, _ = connect(
        store,
        account_id,
        third_party,
        third_party_api_url=third_party.url("/slow?delay=60&n=3&root=data.items"),
    )
    runs = PullRuns(store, tmp_path / "dagster")
    run_id = runs.start(connection, "webhook")
    _wait(lambda: third_party.seen, "the run never read the source")
    run = runs.instance.get_run_by_id(run_id)
    assert run is not None
    os.kill(int(run.tags[PROCESS_TAG].split("|")[2]), signal.SIGKILL)
    status = runs.wait(run_id, 60)
    assert status is not None and status.status == "failure", status
    # The reaper logs right after marking the run failed.
    _wait(lambda: read_log(store, connection.id, limit=10, offset=0), "nothing was logged", 10)
    (entry,) = read_log(store, connection.id, limit=10, offset=0)
    assert entry.status == "failure" and entry.run_id == run_id
    assert "the pull process exited with code -9 before the run finished" in entry.messages[0]


def test_process_tokens_tell_a_live_process_from_a_dead_or_reused_pid(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    token = process_token(child.pid)
    assert _process_alive(token) is True
    host, boot, pid, start = token.split("|")
    # Same pid, another start time: another process that reused the pid.
    assert _process_alive("|".join([host, boot, pid, str(int(start) + 1)])) is False
    assert _process_alive("|".join(["elsewhere", boot, pid, start])) is None
    child.kill()
    # Not reaped yet: a zombie, which has ended all the same.
    time.sleep(0.2)
    assert _process_alive(token) is False
    child.wait()
    assert _process_alive(token) is False
    assert _process_alive(process_token()) is True


def test_a_dead_run_process_is_left_to_its_live_launcher() -> None:
    """A status read in any process judged the run lost as soon as its pull process had
    died, raced the live launcher's reaper (which logs the exit code) and said the
    launcher was gone when it was not."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    dead = process_token(child.pid)
    child.wait()
    live_launcher = DagsterRun(
        job_name="pull_connection", tags={PROCESS_TAG: dead, LAUNCHER_TAG: process_token()}
    )
    assert _lost_reason(live_launcher, time.time() - 3600) is None
    launcher = subprocess.Popen([sys.executable, "-c", "pass"])
    gone = process_token(launcher.pid)
    launcher.wait()
    dead_launcher = DagsterRun(
        job_name="pull_connection", tags={PROCESS_TAG: dead, LAUNCHER_TAG: gone}
    )
    reason = _lost_reason(dead_launcher, time.time() - 3600)
    assert reason is not None and "was gone too" in reason


def test_the_service_fails_lost_runs_as_it_starts_before_dagster_opens_the_storage(
    store: Store, account_id: int, third_party: ThirdPartyServer, tmp_path: Path
) -> None:
    # `cartonize.serve` swept lost runs a fixed 30 s after starting the Dagster processes
    # (an earlier sweep had raced a new instance's setup), so a run lost across a restart
    # answered `running` for half a minute. Now the sweep runs first, alone, and the UI
    # and daemon start when it has ended.
    runs, run_id, connection_id = _orphaned_run(store, account_id, third_party, tmp_path)
    env = _child_env(
        CARTONIZE_DATA_DIR=str(store.data_dir),
        DAGSTER_HOME=str(tmp_path / "dagster"),
        CARTONIZE_BIND=f"127.0.0.1:{free_port()}",
        CARTONIZE_DAGSTER_PORT=str(free_port()),
    )
    log = tmp_path / "serve.log"
    started = time.monotonic()
    with log.open("wb") as out:
        serve = subprocess.Popen(
            [sys.executable, "-m", "cartonize.serve"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:

        def failed() -> bool:
            run = runs.instance.get_run_by_id(run_id)
            return run is not None and run.status == DagsterRunStatus.FAILURE

        _wait(failed, "the lost run was not failed", timeout=60)
        # The old fixed wait alone was 30 s; the sweep itself takes a few seconds.
        assert time.monotonic() - started < 30, log.read_text()
        _wait(lambda: "starting dagster-daemon" in log.read_text(), "no daemon", timeout=30)
        text = log.read_text()
        swept = text.index(f"pull run {run_id} had lost its process: marked failed")
        assert (
            swept < text.index("starting dagster-webserver") < text.index("starting dagster-daemon")
        )
        (entry,) = read_log(store, connection_id, limit=10, offset=0)
        assert entry.status == "failure" and entry.run_id == run_id
    finally:
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(timeout=60) == 0, log.read_text()


#: Another process holding the run storage's write lock until its stdin closes.
LOCKER = textwrap.dedent(
    """
    import sqlite3, sys
    db = sqlite3.connect(sys.argv[1], isolation_level=None)
    db.execute("BEGIN EXCLUSIVE")
    print("locked", flush=True)
    sys.stdin.read()
    db.execute("COMMIT")
    """
)


def test_the_start_sweep_waits_out_a_locked_storage_and_fails_the_lost_run(
    store: Store, account_id: int, third_party: ThirdPartyServer, tmp_path: Path
) -> None:
    # SQLite refuses a write after its 5 s busy timeout ("database is locked"): the sweep
    # retries that (and a table another process's setup just created), nothing else.
    runs, run_id, connection_id = _orphaned_run(store, account_id, third_party, tmp_path)
    env = _child_env(CARTONIZE_DATA_DIR=str(store.data_dir), DAGSTER_HOME=str(tmp_path / "dagster"))
    db = tmp_path / "dagster" / "history" / "runs.db"
    locker = subprocess.Popen(
        [sys.executable, "-c", LOCKER, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=ROOT,
    )
    assert locker.stdin is not None and locker.stdout is not None
    assert locker.stdout.readline() == b"locked\n"
    sweep = subprocess.Popen(
        [sys.executable, "-m", "pipelines.runs", "--fail-lost"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert sweep.stdout is not None
    try:
        # The lock is let go only once the sweep has met it and said it will try again.
        first = sweep.stdout.readline()
        assert "storage is busy (database is locked)" in first, first
    finally:
        locker.stdin.close()
        locker.wait(timeout=30)
        locker.stdout.close()
    rest = sweep.stdout.read()
    sweep.stdout.close()
    assert sweep.wait(timeout=120) == 0, first + rest
    assert f"pull run {run_id} had lost its process: marked failed" in rest, first + rest
    run = runs.instance.get_run_by_id(run_id)
    assert run is not None and run.status == DagsterRunStatus.FAILURE
    (entry,) = read_log(store, connection_id, limit=10, offset=0)
    assert entry.status == "failure" and entry.run_id == run_id


def test_the_fork_server_preloads_modules_that_exist() -> None:
    # The server skips a name it cannot import: a rename in Dagster would silently cost
    # every run its import time again.
    for name in PRELOAD:
        importlib.import_module(name)


def _parent_command(pid: int) -> str:
    stat = Path(f"/proc/{pid}/stat").read_text()
    ppid = int(stat.rsplit(")", 1)[1].split()[1])
    return Path(f"/proc/{ppid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


def test_run_processes_fork_from_a_preloaded_server_with_the_launch_time_environment(
    store: Store,
    account_id: int,
    third_party: ThirdPartyServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A new interpreter per run spent 2-3 s of CPU importing Dagster and the pipelines;
    # runs now fork from a server that imported them once. The first launch starts the
    # server beside a run of its own (the request does not wait for the imports), yet
    # each later run has the environment of its own launch, not the server's.
    monkeypatch.delenv("CARTONIZE_SYNC_ALLOW_NETWORKS", raising=False)
    monkeypatch.delenv("CARTONIZE_SYNC_ALLOW_HOSTS", raising=False)
    connection, _ = connect(store, account_id, third_party, n=3)
    runs = PullRuns(store, tmp_path / "dagster")
    refused = runs.wait(runs.start(connection, "webhook"), 60)
    assert refused is not None and refused.status == "failure", refused
    assert refused.message is not None and "127.0.0.1" in refused.message, refused.message
    server = runs_module._server
    assert server is not None and server.ready.wait(120), "the fork server did not start"
    assert server.preloaded == list(PRELOAD)
    monkeypatch.setenv("CARTONIZE_SYNC_ALLOW_NETWORKS", "127.0.0.0/8")
    run_id = runs.start(connection, "webhook")
    run = runs.instance.get_run_by_id(run_id)
    assert run is not None
    pid = int(run.tags[PROCESS_TAG].split("|")[2])
    assert _parent_command(pid).endswith("-m pipelines.forks ")
    status = runs.wait(run_id, 60)
    assert status is not None and status.status == "success" and status.received == 3, status


#: A web worker's part, as a script without an `if __name__ == "__main__"` guard: it pulls
#: the fast connection (a new interpreter: its fork server is starting), then, the server
#: ready, again (forked), then starts a pull of the slow one (forked) and exits normally,
#: printing the two statuses, then the slow run's id and the server's pid.
EXITING_LAUNCHER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    import pipelines.runs
    from cartonize.store import Store
    from cartonize.sync.connections import connection_by_id
    from pipelines.runs import PullRuns

    data_dir, home, fast_id, slow_id = sys.argv[1:5]
    store = Store(data_dir)
    runs = PullRuns(store, Path(home))
    fast = connection_by_id(store, int(fast_id))
    print(runs.wait(runs.start(fast, "webhook"), 60).status, flush=True)
    server = pipelines.runs._server
    assert server is not None and server.ready.wait(120)
    print(runs.wait(runs.start(fast, "webhook"), 60).status, flush=True)
    slow = runs.start(connection_by_id(store, int(slow_id)), "webhook")
    print(slow, server._process.pid, flush=True)
    sys.exit(0)
    """
)


def test_a_launcher_needs_no_main_guard_and_exits_without_waiting_for_its_runs(
    store: Store, account_id: int, third_party: ThirdPartyServer, tmp_path: Path
) -> None:
    # multiprocessing's forkserver made each run process import the launching script as
    # its main module (without a guard each run ran the script again: more runs, more
    # servers), and joined a process's children as it exited (a gunicorn worker
    # restarting waited for every pull it started, up to the source's time limit, unless
    # it edited a private set). The fork server now imports nothing of the launcher, and
    # goes with it; the runs go on.
    fast, _ = connect(store, account_id, third_party, n=3)
    slow, _ = connect(
        store,
        account_id,
        third_party,
        third_party_api_url=third_party.url("/slow?delay=60&n=3&root=data.items"),
    )
    path = tmp_path / "launcher.py"
    path.write_text(EXITING_LAUNCHER)
    home = tmp_path / "dagster"
    launcher = subprocess.Popen(
        [sys.executable, str(path), str(store.data_dir), str(home), str(fast.id), str(slow.id)],
        cwd=ROOT,
        env=_child_env(CARTONIZE_SYNC_ALLOW_NETWORKS="127.0.0.0/8"),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert launcher.stdout is not None
    statuses = [launcher.stdout.readline().strip() for _ in range(2)]
    assert statuses == ["success", "success"]
    run_id, server_pid = launcher.stdout.readline().split()
    assert launcher.wait(timeout=30) == 0
    launcher.stdout.close()
    _wait(lambda: not _running(int(server_pid)), "the fork server outlived its launcher", 30)
    instance = PullRuns(store, home).instance

    def token() -> str | None:
        run = instance.get_run_by_id(run_id)
        return run.tags.get(PROCESS_TAG) if run is not None else None

    _wait(lambda: token() is not None and third_party.seen, "the slow run never started", 60)
    started = token()
    assert started is not None
    try:
        run = instance.get_run_by_id(run_id)
        assert run is not None and run.status == DagsterRunStatus.STARTED
        assert _process_alive(started) is True
        # Only the launcher's own three runs: no run process ran the script again.
        assert len(instance.get_runs()) == 3
        assert len(read_log(store, fast.id, limit=10, offset=0)) == 2
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(started.split("|")[2]), signal.SIGKILL)
