"""The fork server of pull run processes (`pipelines.forks`), on its own: exit statuses
reported, and a server that dies neither hangs its launcher's reapers nor takes the run
processes with it. Real processes throughout; a run process is held up by holding its
Dagster home's setup lock, which it takes to open the instance."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import filelock
import pytest

from pipelines.forks import ForkServer, ForkServerGone

ROOT = Path(__file__).resolve().parents[2]


def _env(**settings: str) -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, **settings}


def test_the_fork_server_reports_exits_and_its_death_hangs_nothing(tmp_path: Path) -> None:
    server = ForkServer.start(_env())
    try:
        assert server.ready.wait(120), "the fork server never finished its imports"
        # A run the home does not have: the run process says so and exits with 2.
        log = tmp_path / "missing.log"
        log.write_bytes(b"")
        pid, wait = server.launch("missing", _env(DAGSTER_HOME=str(tmp_path / "a")), log)
        assert wait() == 2
        assert "no run missing" in log.read_text()
        # A run process waiting (for the home's setup lock) when the server is killed.
        home = tmp_path / "b"
        home.mkdir()
        held = filelock.FileLock(str(home / ".cartonize-open.lock"))
        held.acquire()
        log = tmp_path / "held.log"
        log.write_bytes(b"")
        pid, wait = server.launch("missing", _env(DAGSTER_HOME=str(home)), log)
        codes: list[int | None] = []
        waiter = threading.Thread(target=lambda: codes.append(wait()))
        waiter.start()
        os.kill(server._process.pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while server.alive:
            assert time.monotonic() < deadline, "the server's death went unnoticed"
            time.sleep(0.05)
        with pytest.raises(ForkServerGone):
            server.launch("missing", _env(DAGSTER_HOME=str(home)), log)
        # The run process outlived its server; its waiter returns once it ends (its
        # status is nobody's to read now).
        os.kill(pid, 0)
        assert codes == []
        held.release()
        waiter.join(60)
        assert codes == [None]
        assert "no run missing" in log.read_text()
    finally:
        if server.alive:
            server.close()
