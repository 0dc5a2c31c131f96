"""CPU per forked pull run process, the fork server's own start-up CPU, and the memory
of the launching process's helper processes (the server, and any resource tracker).

Run from the repository root, each tree with its own PYTHONPATH (the script works on a
tree without it too: pass its path), alternating trees:

    PYTHONPATH=<tree>/python:<tree> python <this tree>/bench/fork_cpu.py [--runs 6]

A first pull starts the launching process's fork server (and runs in a new interpreter);
after a pause for the server's imports, `--runs` pulls of 25 loopback records are forked
from it. The server reaps its run processes, so its children's CPU (`cutime + cstime`
in /proc/<pid>/stat) divided by the runs is the CPU of one forked run process: less
sensitive to the shared machine's load than wall-clock times (`bench.pull_launch`).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from cartonize.store import Store

from pipelines.runs import PullRuns
from tests.sync.third_party import ThirdPartyServer, connect


def _server_times() -> tuple[float, float] | None:
    """(own CPU, reaped children's CPU) in seconds of this process's fork server."""
    tick = os.sysconf("SC_CLK_TCK")
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(fields[1]) != os.getpid() or "fork" not in command:
            continue
        utime, stime, cutime, cstime = (int(x) / tick for x in fields[11:15])
        return utime + stime, cutime + cstime
    return None


def _helpers_memory() -> list[str]:
    """Resident, proportional and private memory of each child of this process."""
    lines = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) != os.getpid():
                continue
            command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            rows = (proc / "smaps_rollup").read_text().splitlines()[1:]
        except OSError:
            continue
        kb = {k: int(v.split()[0]) for k, v in (row.split(":", 1) for row in rows)}
        private = kb["Private_Clean"] + kb["Private_Dirty"]
        lines.append(
            f"{kb['Rss'] / 1024:.0f} MB resident, {kb['Pss'] / 1024:.0f} MB proportional, "
            f"{private / 1024:.0f} MB private: {command[:70]}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--pause", type=float, default=15.0, help="for the server's imports")
    args = parser.parse_args()
    os.environ["CARTONIZE_SYNC_ALLOW_NETWORKS"] = "127.0.0.0/8"
    scratch = Path(tempfile.mkdtemp(prefix="fork-cpu-"))
    store = Store(scratch / "data")
    store.migrate()
    with ThirdPartyServer() as source:
        account = store.create_account("bench", "enterprise")
        store.set_connections_enabled("bench", True)
        connection, _ = connect(store, account.id, source, n=25)
        runs = PullRuns(store, scratch / "dagster")
        for pull in range(args.runs + 1):
            status = runs.wait(runs.start(connection), 120, poll=0.05)
            assert status is not None and status.status == "success", status
            if pull == 0:
                time.sleep(args.pause)
        time.sleep(3)  # the last run process reaped
    for line in _helpers_memory():
        print(line)
    times = _server_times()
    assert times is not None, "no fork server among this process's children"
    own, children = times
    print(f"fork server start-up {own:.2f} s CPU; per forked run {children / args.runs:.3f} s CPU")


if __name__ == "__main__":
    main()
