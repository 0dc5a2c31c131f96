"""On-demand pull latency: time from starting a webhook pull to its run finished.

Run from the repository root (each tree compared with its own PYTHONPATH, alternating):

    PYTHONPATH=<tree>/python:<tree> python -m bench.pull_launch [--pulls 5] [--via gunicorn]

`--via runs` (default) calls `pipelines.runs.PullRuns.start` then polls `status`, as the
console's Trigger Webhook does; `--via gunicorn` starts the API (1 worker) and times
`GET /sync-api/{id}/webhook`, which answers when the pull has finished. Each pull reads 25
records from the tests' loopback source into a fresh store. The first pull of a process
is reported apart: it pays the launcher's start-up (the fork server's imports).
Wall-clock times: compare trees only in runs alternated in the same period.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from cartonize.serve import api_on_loopback
from cartonize.store import Store

from pipelines.runs import PullRuns
from tests.sync.third_party import ThirdPartyServer, connect


def _via_runs(store: Store, home: Path, source: ThirdPartyServer, pulls: int) -> list[float]:
    account = store.create_account("bench", "enterprise")
    store.set_connections_enabled("bench", True)
    connection, _ = connect(store, account.id, source, n=25)
    runs = PullRuns(store, home)
    runs.instance  # opened once, as a worker that has pulled before has it  # noqa: B018
    times = []
    for _ in range(pulls):
        start = time.monotonic()
        status = runs.wait(runs.start(connection), 120, poll=0.05)
        assert status is not None and status.status == "success", status
        times.append(time.monotonic() - start)
    return times


def _via_gunicorn(store: Store, home: Path, source: ThirdPartyServer, pulls: int) -> list[float]:
    account = store.create_account("bench", "enterprise")
    store.set_connections_enabled("bench", True)
    connection, secret = connect(store, account.id, source, n=25)
    env = {"DAGSTER_HOME": str(home), "CARTONIZE_WEBHOOK_WAIT": "120"}
    log = store.data_dir.parent / "gunicorn.log"
    times = []
    with api_on_loopback(store.data_dir, log, workers=1, env=env) as base:
        for _ in range(pulls):
            start = time.monotonic()
            answer = httpx.get(
                f"{base}/sync-api/{connection.public_api_id}/webhook",
                headers={"X-Service-API-Secret": secret},
                timeout=180,
            )
            assert answer.json().get("status") == "success", answer.text
            times.append(time.monotonic() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pulls", type=int, default=5)
    parser.add_argument("--via", choices=("runs", "gunicorn"), default="runs")
    args = parser.parse_args()
    os.environ["CARTONIZE_SYNC_ALLOW_NETWORKS"] = "127.0.0.0/8"
    scratch = Path(tempfile.mkdtemp(prefix="pull-launch-"))
    store = Store(scratch / "data")
    store.migrate()
    with ThirdPartyServer() as source:
        measure = _via_runs if args.via == "runs" else _via_gunicorn
        times = measure(store, scratch / "dagster", source, args.pulls)
    later = times[1:]
    print(f"first pull {times[0]:.2f} s")
    if later:
        print(
            f"later pulls: median {statistics.median(later):.2f} s, "
            f"min {min(later):.2f} s, max {max(later):.2f} s ({len(later)})"
        )


if __name__ == "__main__":
    main()
