"""Run the whole service on one machine: the API under gunicorn, Dagster's webserver and daemon.

`make run` calls `python -m cartonize.serve`. Everything lives under the data directory
(`CARTONIZE_DATA_DIR`): the DuckDB store, and Dagster's home with its SQLite run and event
storage (`<data>/dagster`). When any of the three processes exits, the others are stopped
and the exit code is passed on; Ctrl-C or SIGTERM stops all three.

Settings: `CARTONIZE_BIND` (API, default 127.0.0.1:8080), `CARTONIZE_DAGSTER_PORT`
(Dagster UI, default 3000), `CARTONIZE_DAGSTER=0` to run the API alone. The API is told
where the Dagster UI it started answers (`CARTONIZE_DAGSTER_UI_URL`, see `dagster_ui_url`)
so the console can link pull runs to their pages.
docs/operations.md says how to move Dagster's storage to PostgreSQL and its runs to Celery
or Kubernetes when one machine is not enough.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

import httpx

__all__ = [
    "DAGSTER_YAML",
    "api_command",
    "api_on_loopback",
    "commands",
    "configured_dagster_home",
    "dagster_home",
    "dagster_ui_url",
    "free_port",
    "main",
]

ROOT = Path(__file__).resolve().parents[2]

# Local SQLite storage under DAGSTER_HOME, no telemetry. The default run coordinator
# launches a submitted run at once (a webhook must not wait for a queue).
DAGSTER_YAML = """\
# Written by cartonize.serve on first run; edit freely (see docs/operations.md).
telemetry:
  enabled: false
sensors:
  use_threads: true
  num_workers: 2
"""


def dagster_home(data_dir: Path, environ: Mapping[str, str] = os.environ) -> Path:
    """Dagster's home: `DAGSTER_HOME` when set, else `<data>/dagster`, configured."""
    configured = environ.get("DAGSTER_HOME")
    return configured_dagster_home(Path(configured) if configured else data_dir / "dagster")


def configured_dagster_home(home: Path) -> Path:
    """`home`, with a dagster.yaml written when it has none (the operator's own is kept)."""
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():
        config.write_text(DAGSTER_YAML)
    return home


def api_command(bin_dir: Path, bind: str, workers: int | None = None) -> list[str]:
    """gunicorn serving the API (run from the repository root)."""
    command = [str(bin_dir / "gunicorn"), "-c", "api/gunicorn.conf.py", "--bind", bind]
    if workers is not None:
        command += ["--workers", str(workers)]
    return [*command, "api.app:get_app()"]


def free_port() -> int:
    """A loopback TCP port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def api_on_loopback(
    data_dir: Path,
    log: Path,
    *,
    workers: int = 2,
    env: Mapping[str, str] | None = None,
    startup_seconds: float = 60.0,
    root_path: str = "",
) -> Iterator[str]:
    """The API under gunicorn on a free loopback port over `data_dir`, for tests,
    benchmarks and screenshots: yields its base URL (no trailing slash), output in `log`.

    With `root_path` (e.g. "/cartonize") the API answers under that path prefix, as behind
    a proxy that forwards `/cartonize/...` unchanged: gunicorn's `SCRIPT_NAME`; the base
    URL yielded ends with it."""
    port = free_port()
    environ = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "python"), str(ROOT)]),
        "CARTONIZE_DATA_DIR": str(data_dir),
        **(env or {}),
    }
    if root_path:
        environ["SCRIPT_NAME"] = root_path
    command = api_command(Path(sys.executable).parent, f"127.0.0.1:{port}", workers)
    with log.open("wb") as output:
        server = subprocess.Popen(
            command, cwd=ROOT, env=environ, stdout=output, stderr=subprocess.STDOUT
        )
    base_url = f"http://127.0.0.1:{port}{root_path}"
    try:
        _wait_until_serving(base_url, server, log, startup_seconds)
        yield base_url
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _wait_until_serving(
    base_url: str, server: subprocess.Popen[bytes], log: Path, seconds: float
) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {server.returncode}:\n{log.read_text()}")
        try:
            if httpx.get(base_url + "/healthz", timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"gunicorn did not answer in {seconds} s:\n{log.read_text()}")


def commands(env: Mapping[str, str], bin_dir: Path) -> list[tuple[str, list[str]]]:
    """The processes to start, by name."""
    bind = env.get("CARTONIZE_BIND", "127.0.0.1:8080")
    procs = [("api", api_command(bin_dir, bind))]
    if env.get("CARTONIZE_DAGSTER", "1") != "0":
        location = ["-m", "pipelines.definitions", "-d", str(ROOT)]
        port = env.get("CARTONIZE_DAGSTER_PORT", "3000")
        host = bind.rpartition(":")[0] or "127.0.0.1"
        procs += [
            (
                "dagster-webserver",
                [str(bin_dir / "dagster-webserver"), *location, "-h", host, "-p", port],
            ),
            ("dagster-daemon", [str(bin_dir / "dagster-daemon"), "run", *location]),
        ]
    return procs


#: Bind hosts that name every interface, not one a browser can be sent to.
_WILDCARD_HOSTS = {"0.0.0.0", "::", "[::]"}


def dagster_ui_url(env: Mapping[str, str]) -> str | None:
    """Where browsers reach the Dagster UI `commands` starts, for the console's run links.

    `CARTONIZE_DAGSTER_UI_URL` when set (empty: no links; e.g. the UI's address behind a
    proxy); else `http://<API host>:<CARTONIZE_DAGSTER_PORT>` when the UI is started here
    on a named host. A wildcard bind (0.0.0.0) names no address a browser can use, and the
    UI's port should be closed there (docs/operations.md): no links unless set."""
    if "CARTONIZE_DAGSTER_UI_URL" in env:
        return env["CARTONIZE_DAGSTER_UI_URL"].strip() or None
    if env.get("CARTONIZE_DAGSTER", "1") == "0":
        return None
    host = env.get("CARTONIZE_BIND", "127.0.0.1:8080").rpartition(":")[0] or "127.0.0.1"
    if host in _WILDCARD_HOSTS:
        return None
    return f"http://{host}:{env.get('CARTONIZE_DAGSTER_PORT', '3000')}"


def main(argv: Sequence[str] | None = None) -> int:
    """Start the processes, wait for the first to exit, stop the rest."""
    del argv
    data_dir = Path(os.environ.get("CARTONIZE_DATA_DIR", "data")).resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "CARTONIZE_DATA_DIR": str(data_dir),
        "DAGSTER_HOME": str(dagster_home(data_dir)),
        "PYTHONPATH": os.pathsep.join(
            p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p
        ),
    }
    ui_url = dagster_ui_url(env)
    if ui_url is not None:
        env["CARTONIZE_DAGSTER_UI_URL"] = ui_url
    bin_dir = Path(sys.executable).parent
    # Pull runs whose processes went with the last service run are marked failed
    # (pipelines/runs.py): nothing else would, as no daemon monitors them. The sweep opens
    # the Dagster instance first, alone: on a new DAGSTER_HOME that creates its SQLite
    # storage, which processes opening it together race to create (with the sweep, the UI
    # and the daemon started at once, 1 trial in 3 left the schedule storage with two
    # alembic heads, which no process can open again). The UI and the daemon start when
    # the sweep has ended; the API, which opens the instance only for a pull, at once.
    running: list[tuple[str, subprocess.Popen[bytes]]] = []
    waiting = commands(env, bin_dir)
    sweep: subprocess.Popen[bytes] | None = None
    if len(waiting) > 1:
        print("cartonize.serve: failing lost pull runs; Dagster starts after", flush=True)
        sweep = subprocess.Popen(
            [sys.executable, "-m", "pipelines.runs", "--fail-lost"], cwd=ROOT, env=env
        )

    def start(name: str, command: list[str]) -> None:
        print(f"cartonize.serve: starting {name}: {' '.join(command)}", flush=True)
        running.append((name, subprocess.Popen(command, cwd=ROOT, env=env)))

    start(*waiting.pop(0))

    stopping = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        del frame
        stopping = True
        print(f"cartonize.serve: signal {signum}, stopping", flush=True)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    code = 0
    while not stopping:
        if sweep is not None and sweep.poll() is not None:
            if sweep.returncode != 0:
                print(
                    f"cartonize.serve: the lost-run sweep exited with {sweep.returncode}; "
                    "starting Dagster anyway",
                    flush=True,
                )
            sweep = None
            while waiting:
                start(*waiting.pop(0))
        exited = [(name, p) for name, p in running if p.poll() is not None]
        if exited:
            name, proc = exited[0]
            code = proc.returncode or 0
            print(f"cartonize.serve: {name} exited with {code}; stopping the rest", flush=True)
            break
        time.sleep(0.1 if sweep is not None else 0.5)
    for proc in [p for _, p in running] + ([sweep] if sweep is not None else []):
        if proc.poll() is None:
            proc.terminate()
    deadline = time.monotonic() + 20
    for _, proc in running:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
    return code


if __name__ == "__main__":
    sys.exit(main())
