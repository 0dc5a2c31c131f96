"""Run the whole service on one machine: the API under gunicorn, Dagster's webserver and daemon.

`make run` calls `python -m cartonize.serve`. Everything lives under the data directory
(`CARTONIZE_DATA_DIR`): the DuckDB store, and Dagster's home with its SQLite run and event
storage (`<data>/dagster`). When any of the three processes exits, the others are stopped
and the exit code is passed on; Ctrl-C or SIGTERM stops all three.

Settings: `CARTONIZE_BIND` (API, default 127.0.0.1:8080), `CARTONIZE_DAGSTER_PORT`
(Dagster UI, default 3000), `CARTONIZE_DAGSTER=0` to run the API alone.
docs/operations.md says how to move Dagster's storage to PostgreSQL and its runs to Celery
or Kubernetes when one machine is not enough.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import FrameType

__all__ = ["DAGSTER_YAML", "commands", "main", "prepare_dagster_home"]

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


def prepare_dagster_home(data_dir: Path) -> Path:
    """`<data>/dagster` with a dagster.yaml (kept if the operator already has one)."""
    home = data_dir / "dagster"
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():
        config.write_text(DAGSTER_YAML)
    return home


def commands(env: Mapping[str, str], bin_dir: Path) -> list[tuple[str, list[str]]]:
    """The processes to start, by name."""
    bind = env.get("CARTONIZE_BIND", "127.0.0.1:8080")
    procs = [
        (
            "api",
            [
                str(bin_dir / "gunicorn"),
                "-c",
                "api/gunicorn.conf.py",
                "--bind",
                bind,
                "api.app:get_app()",
            ],
        ),
    ]
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


def main(argv: Sequence[str] | None = None) -> int:
    """Start the processes, wait for the first to exit, stop the rest."""
    del argv
    data_dir = Path(os.environ.get("CARTONIZE_DATA_DIR", "data")).resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "CARTONIZE_DATA_DIR": str(data_dir),
        "DAGSTER_HOME": os.environ.get("DAGSTER_HOME") or str(prepare_dagster_home(data_dir)),
        "PYTHONPATH": os.pathsep.join(
            p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p
        ),
    }
    bin_dir = Path(sys.executable).parent
    running: list[tuple[str, subprocess.Popen[bytes]]] = []
    for name, command in commands(env, bin_dir):
        print(f"cartonize.serve: starting {name}: {' '.join(command)}", flush=True)
        running.append((name, subprocess.Popen(command, cwd=ROOT, env=env)))

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
        exited = [(name, p) for name, p in running if p.poll() is not None]
        if exited:
            name, proc = exited[0]
            code = proc.returncode or 0
            print(f"cartonize.serve: {name} exited with {code}; stopping the rest", flush=True)
            break
        time.sleep(0.5)
    for _, proc in running:
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
