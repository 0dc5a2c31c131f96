"""A fork server for pull run processes: a process that imported Dagster and the pipelines
once, and forks a run process per request, so a run skips the 2-3 s of CPU a new
interpreter spends importing them (docs/decisions.md, "Pull processes fork from a server").

    server = ForkServer.start(env)           # `python -m pipelines.forks`, in the background
    server.ready.wait()                      # its imports are done
    pid, wait = server.launch(run_id, env, log_path)
    code = wait()                            # the run process's exit status

Used by `pipelines.runs.PullRuns`, one server per launching process (a gunicorn worker).
Only public interfaces: the server is a child process of the launcher, spoken to through
its stdin and stdout (one JSON object a line), and forks with `os.fork`; it is the run
processes' parent, so it reaps them and reports their exit status. Unlike multiprocessing's
forkserver this imports nothing of the launching process (whose main module a
multiprocessing child imports, so a script launching pulls needed an
`if __name__ == "__main__"` guard), and the launching process has no child to wait for as
it exits (multiprocessing joins its children at exit: a restarting worker waited for its
pulls). When the launching process ends, the server reads end-of-file and exits too; run
processes go on (each in a session of its own), reaped by init.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["PRELOAD", "ForkServer", "ForkServerGone"]

ROOT = Path(__file__).resolve().parents[1]

#: What the server imports once: the pipelines with Dagster, and what opening the
#: instance's SQLite storage and executing a run import lazily (0.5 s of CPU more per run
#: otherwise). A name that stops existing is skipped (tests/pipelines/test_lost_runs.py
#: imports each).
PRELOAD = (
    "pipelines.runs",
    "pipelines.definitions",
    "dagster._core.storage.sqlite_storage",
    "dagster._core.storage.event_log.sqlite.sqlite_event_log",
    "dagster._core.storage.runs.sqlite.sqlite_run_storage",
    "dagster._core.storage.schedules.sqlite.sqlite_schedule_storage",
    "dagster._core.execution.api",
    "alembic.command",
    "sqlalchemy.dialects.sqlite",
    "fsspec.implementations.local",
    "upath",
    "dotenv",
)

#: Seconds a launch waits for the server to answer with the run process's pid.
LAUNCH_TIMEOUT_S = 30.0


class ForkServerGone(RuntimeError):
    """The fork server has exited (or never answered): launch the run another way."""


class ForkServer:
    """The launching side: starts the server and asks it for run processes."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self._process = process
        #: Set once the server has imported `PRELOAD` and takes requests.
        self.ready = threading.Event()
        #: The modules the server imported (its ready message names them).
        self.preloaded: list[str] = []
        self._gone = threading.Event()
        self._lock = threading.Lock()  # one request at a time: answers come in order
        self._answers: list[dict[str, Any]] = []
        self._answered = threading.Condition()
        self._exits: dict[int, int] = {}
        self._exited = threading.Condition()
        threading.Thread(target=self._read, daemon=True, name="fork server answers").start()

    @classmethod
    def start(cls, env: Mapping[str, str]) -> ForkServer:
        """Start `python -m pipelines.forks` (it imports in the background)."""
        process = subprocess.Popen(
            [sys.executable, "-m", "pipelines.forks"],
            cwd=ROOT,
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        return cls(process)

    @property
    def alive(self) -> bool:
        """Whether the server still takes requests."""
        return not self._gone.is_set()

    def launch(
        self, run_id: str, env: Mapping[str, str], log_path: Path
    ) -> tuple[int, Callable[[], int | None]]:
        """Fork a run process executing `run_id` with environment `env` and its output in
        `log_path`; returns its pid and a function waiting for its exit status (None when
        the server went before it could say). ForkServerGone when no process was forked."""
        request = json.dumps({"run_id": run_id, "env": dict(env), "log": str(log_path)})
        with self._lock:
            if self._gone.is_set() or self._process.stdin is None:
                raise ForkServerGone("the fork server has exited")
            try:
                self._process.stdin.write(request.encode() + b"\n")
                self._process.stdin.flush()
            except OSError as exc:
                with contextlib.suppress(OSError):
                    self._process.stdin.close()
                raise ForkServerGone(f"the fork server has exited ({exc})") from exc
            answer = self._next_answer(LAUNCH_TIMEOUT_S)
        if "pid" not in answer:
            raise ForkServerGone(f"the fork server could not fork: {answer.get('error')}")
        pid = int(answer["pid"])
        return pid, lambda: self._wait(pid)

    def close(self) -> None:
        """Stop the server (run processes go on)."""
        if self._process.stdin is not None:
            with contextlib.suppress(OSError):
                self._process.stdin.close()
        self._process.wait()

    def _next_answer(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._answered:
            while not self._answers:
                left = deadline - time.monotonic()
                if self._gone.is_set() or left <= 0:
                    raise ForkServerGone("the fork server did not answer")
                self._answered.wait(left)
            return self._answers.pop(0)

    def _wait(self, pid: int) -> int | None:
        with self._exited:
            while pid not in self._exits and not self._gone.is_set():
                self._exited.wait()
            if pid in self._exits:
                return self._exits.pop(pid)
        # The server went first: the run process, reparented, can only be watched.
        while _running(pid):
            time.sleep(0.5)
        return None

    def _read(self) -> None:
        stream = self._process.stdout
        assert stream is not None
        for line in stream:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if "ready" in message:
                self.preloaded = list(message["ready"])
                self.ready.set()
            elif "exited" in message:
                with self._exited:
                    self._exits[int(message["exited"])] = int(message["code"])
                    self._exited.notify_all()
            else:
                with self._answered:
                    self._answers.append(message)
                    self._answered.notify_all()
        self._gone.set()
        stream.close()
        with self._answered:
            self._answered.notify_all()
        with self._exited:
            self._exited.notify_all()
        with self._lock, contextlib.suppress(OSError):  # (a launch in progress has failed)
            if self._process.stdin is not None:
                self._process.stdin.close()
        self._process.wait()


def _running(pid: int) -> bool:
    """Whether process `pid` still runs (not a zombie), for a run the server left."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return not Path("/proc/self/stat").exists()
    return text[text.rfind(")") + 2 :][:1] not in ("Z", "X", "x")


# ----------------------------------------------------------------------- the server side


def serve(preload: Sequence[str] = PRELOAD) -> int:
    """The server's loop: fork a run process per request line on stdin, answer its pid on
    stdout, and report each run process's exit status there when it ends. Ends at
    end-of-file on stdin (the launching process has gone)."""
    # Requests and answers get descriptors of their own; stdin and stdout become
    # /dev/null and stderr, so nothing a preloaded module prints can corrupt the answers.
    requests = os.dup(0)
    answers = os.fdopen(os.dup(1), "wb", buffering=0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    loaded = []
    for name in preload:
        try:
            importlib.import_module(name)
        except ImportError:
            continue
        loaded.append(name)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    os.set_blocking(wake_r, False)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    signal.set_wakeup_fd(wake_w)
    own = [requests, answers.fileno(), wake_r, wake_w]

    def say(message: dict[str, Any]) -> None:
        answers.write(json.dumps(message).encode() + b"\n")

    say({"ready": loaded})
    selector = selectors.DefaultSelector()
    selector.register(requests, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    own.append(selector.fileno())  # (a run process closes it with the rest)
    pending = b""
    open_ = True
    while open_:
        for key, _ in selector.select(timeout=1.0):
            if key.fd == wake_r:
                with contextlib.suppress(BlockingIOError):
                    os.read(wake_r, 4096)
                continue
            chunk = os.read(requests, 65536)
            if not chunk:
                open_ = False
                break
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                say(_fork(json.loads(line), own))
        _reap(say)
    return 0


def _fork(request: dict[str, Any], own: list[int]) -> dict[str, Any]:
    """Fork the run process of `request`; the answer naming its pid (or the error)."""
    try:
        pid = os.fork()
    except OSError as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    if pid:
        return {"pid": pid}
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in own:
            os.close(fd)
        code = _run(request["run_id"], request["env"], request["log"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _run(run_id: str, env: dict[str, str], log_path: str) -> int:
    """A run process: what `python -m pipelines.runs RUN_ID` does, in the launching
    process's environment at launch, with its output in `log_path`, in a session of its
    own (signals to the web server's process group do not reach it)."""
    os.setsid()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(ROOT)
    sys.stdout.flush()
    sys.stderr.flush()
    fd = os.open(log_path, os.O_WRONLY | os.O_APPEND)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    from pipelines.runs import main

    return main([run_id])


def _reap(say: Callable[[dict[str, Any]], None]) -> None:
    """Report every run process that has ended (its exit status: the code, or minus the
    signal that killed it, as subprocess gives it)."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        say({"exited": pid, "code": os.waitstatus_to_exitcode(status)})


if __name__ == "__main__":
    sys.exit(serve())
