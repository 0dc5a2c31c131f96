"""The DuckDB store: migrations, accounts and keys, and several writer processes at once."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import time
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from cartonize.service import PackLog
from cartonize.store import MIGRATIONS, PackRecord, Store, StoreError, StoreUnavailable, hash_key

WRITERS = 4
PACKS_PER_WRITER = 15


def test_migrate_is_idempotent(tmp_path: Path) -> None:
    store = Store(tmp_path / "data")
    assert store.migrate() == len(MIGRATIONS)
    assert Store(tmp_path / "data").migrate() == len(MIGRATIONS)
    versions = store.transaction(
        lambda con: con.execute("SELECT version FROM schema_version").fetchall()
    )
    assert versions == [(len(MIGRATIONS),)]


def test_keys_are_stored_hashed_with_only_the_stem_in_clear(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.create_account("ACME", "free")
    key, secret = store.create_key("ACME", "ci")
    assert key.stem == secret[:10] and len(secret) >= 40
    assert secret.encode() not in store.path.read_bytes()
    rows = store.transaction(lambda con: con.execute("SELECT key_hash FROM api_keys").fetchall())
    assert rows == [(hash_key(secret),)]
    assert store.find_key(secret) == key
    store.revoke_key(key.stem)
    assert store.find_key(secret) is None


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (lambda s: s.create_account("ACME", "free"), "already exists"),
        (lambda s: s.set_tier("NOBODY", "premium"), "no account"),
        (lambda s: s.create_key("NOBODY", "x"), "no account"),
        (lambda s: s.revoke_key("0123456789"), "no key"),
        (lambda s: s.create_account("B", "gold"), "tier must be one of"),
    ],
)
def test_store_refuses_impossible_changes(tmp_path: Path, action: object, message: str) -> None:
    store = Store(tmp_path)
    store.create_account("ACME", "free")
    with pytest.raises(StoreError, match=message):
        action(store)  # type: ignore[operator]


def _write_packs(data_dir: str, writer: int) -> None:
    store = Store(data_dir)
    for n in range(PACKS_PER_WRITER):
        record = PackRecord(
            f"{writer}-{n}", datetime.now(UTC), None, None, f"O-{writer}", None, "{}", "{}", 0, 0
        )
        store.save_packs([record], None)
        store.admit_unique("shared", f"{writer}-{n}", date(2026, 1, 1), 10_000)


def test_writer_processes_lose_no_rows(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    Store(data_dir).migrate()
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=_write_packs, args=(str(data_dir), w)) for w in range(WRITERS)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    store = Store(data_dir)
    counts = store.transaction(
        lambda con: con.execute(
            "SELECT (SELECT count(*) FROM packs), (SELECT count(*) FROM daily_requests)"
        ).fetchone()
    )
    assert counts == (WRITERS * PACKS_PER_WRITER, WRITERS * PACKS_PER_WRITER)


def test_unique_admission_counts_distinct_fingerprints(tmp_path: Path) -> None:
    store = Store(tmp_path)
    day = date(2026, 1, 1)
    admitted = [store.admit_unique("a", fp, day, 2) for fp in ["x", "x", "y", "z", "x", "y"]]
    assert admitted == [True, True, True, False, True, True]
    assert store.admit_unique("a", "z", date(2026, 1, 2), 2)


HOLD = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1])
print("holding", flush=True)
time.sleep(float(sys.argv[2]))
con.close()
"""


def _hold_file(path: Path, seconds: float) -> subprocess.Popen[str]:
    # A process that opens the file without our lock, as an operator's DuckDB shell would.
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
    return holder


def test_lock_errors_are_retried_until_the_file_is_free(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.migrate()
    holder = _hold_file(store.path, 0.5)
    try:
        # The file is locked by another process when the ping starts; without retries
        # it would raise StoreUnavailable at once.
        assert holder.poll() is None
        store.ping()
    finally:
        assert holder.wait(timeout=30) == 0
        holder.stdout.close()  # type: ignore[union-attr]


def test_retries_are_bounded(tmp_path: Path) -> None:
    store = Store(tmp_path, retries=2)
    store.migrate()
    holder = _hold_file(store.path, 5.0)
    try:
        with pytest.raises(StoreUnavailable, match="lock"):
            store.ping()
    finally:
        holder.wait(timeout=30)
        holder.stdout.close()  # type: ignore[union-attr]


def test_pack_log_keeps_packs_when_the_store_fails_and_caps_the_queue(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    log = PackLog(Store(blocked / "data"), max_pending=2)

    def record(n: int) -> PackRecord:
        return PackRecord(f"p{n}", datetime.now(UTC), None, None, None, None, "{}", "{}", 0, 0)

    for n in range(3):
        with pytest.raises(StoreUnavailable):
            log.add(record(n))
    assert [r.pack_uuid for r in log._pending] == ["p1", "p2"]
    log.store = Store(tmp_path / "data")
    log.flush()
    assert log.get("p2") is not None and log.store.get_pack("p1") is not None


WORKER = """
import sys, time
from datetime import UTC, datetime
from cartonize.service import PackLog
from cartonize.store import PackRecord, Store
log = PackLog(Store(sys.argv[1]), flush_interval=600)
record = PackRecord(sys.argv[3], datetime.now(UTC), int(sys.argv[2]), None, "O-1", None, "{}",
                    "{}", 0, 0)
log.add(record)
print("queued", flush=True)
time.sleep(600)
"""


def _worker(store: Store, account_id: int, pack: str) -> subprocess.Popen[str]:
    """An API worker's pack log, in a process of its own, holding a keyed pack queued."""
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(store.data_dir), str(account_id), pack],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert worker.stdout is not None and worker.stdout.readline().strip() == "queued"
    return worker


def test_a_search_removes_the_pack_marks_of_workers_that_are_gone(tmp_path: Path) -> None:
    # A killed worker cannot remove its marks: they stayed for good (one more file per
    # worker and account after every restart), and a fresh one made searches wait a
    # flush interval for packs that died with the worker.
    store = Store(tmp_path / "data")
    account = store.create_account("ACME", "premium")
    folder = store.queued_packs_marks(account.id)
    workers: list[subprocess.Popen[str]] = []
    try:
        workers.append(killed := _worker(store, account.id, "lost"))
        (killed_mark,) = folder.iterdir()
        workers.append(_worker(store, account.id, "queued"))
        (running_mark,) = set(folder.iterdir()) - {killed_mark}
        killed.kill()
        killed.wait(timeout=30)
        now = time.time()
        # The running worker's mark is kept whatever its age under an hour; made 10 s ago
        # it makes no search wait. Another machine's (a shared volume) is kept for an hour.
        os.utime(running_mark, (now - 10, now - 10))
        elsewhere, gone_elsewhere = folder / "other-host-123-ab", folder / "other-host-456-cd"
        for mark, age in ((elsewhere, 10), (gone_elsewhere, 2 * 3600)):
            mark.touch()
            os.utime(mark, (now - age, now - age))
        searcher = PackLog(store, flush_interval=5.0)
        started = time.monotonic()
        found = searcher.find(account.id, order_id="O-1", request_id=None, limit=10, offset=0)
        assert time.monotonic() - started < 2.0  # the killed worker's fresh mark: no wait
        assert found == []
        assert sorted(m.name for m in folder.iterdir()) == sorted(
            [running_mark.name, elsewhere.name]
        )
        assert not killed_mark.exists()
    finally:
        for worker in workers:
            worker.kill()
            worker.wait(timeout=30)
            worker.stdout.close()  # type: ignore[union-attr]
