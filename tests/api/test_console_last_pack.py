"""The limits of the playground's kept last packs (api/console/last_pack.py): one file per
session, gone with its session, and at most `max_total_bytes` in all."""

from __future__ import annotations

import os
import time
from pathlib import Path

from cartonize.sync.crypto import SecretBox

from api.console.last_pack import LastPack, LastPacks
from api.console.session import Session

LIFETIME = 8 * 3600


def session(sid: str, expires: int = 2_000_000_000) -> Session:
    return Session(sid, "stem", 1, "ACME", "plan", expires)


def packs(tmp_path: Path, max_total_bytes: int = 1 << 30) -> LastPacks:
    box = SecretBox(tmp_path / "sync.key")
    return LastPacks(box, tmp_path / "console-playground", LIFETIME, max_total_bytes)


def test_a_session_sees_only_its_own_last_pack_until_its_session_expires(tmp_path: Path) -> None:
    kept = packs(tmp_path)
    alice, bob = session("a" * 24, expires=1000), session("b" * 24)
    kept.keep(alice, LastPack("{1}", "{}"))
    kept.keep(alice, LastPack("{2}", "{}"))
    assert kept.recall(alice, now=999) == LastPack("{2}", "{}")
    assert kept.recall(bob, now=999) is None
    # Another session's file put in place of bob's shows nothing to bob.
    os.replace(kept.path(alice), kept.path(bob))
    assert kept.recall(bob, now=999) is None
    os.replace(kept.path(bob), kept.path(alice))
    # After its session expired the file is read once more, to be deleted.
    assert kept.recall(alice, now=1000) is None
    assert not kept.path(alice).exists()


def test_files_untouched_for_a_session_lifetime_are_swept_by_the_next_pack(
    tmp_path: Path,
) -> None:
    kept = packs(tmp_path)
    old, new = session("o" * 24), session("n" * 24)
    kept.keep(old, LastPack("{old}", "{}"))
    stale = time.time() - LIFETIME - 60
    os.utime(kept.path(old), (stale, stale))
    left = kept.directory / ".writing-0123456789abcdef"  # a worker killed while writing
    left.write_text("half")
    os.utime(left, (stale, stale))
    kept.keep(new, LastPack("{new}", "{}"))
    assert sorted(kept.directory.iterdir()) == [kept.path(new)]


def test_past_the_size_limit_the_least_recently_shown_go_first(tmp_path: Path) -> None:
    big = "x" * 10_000  # about 13.5 kB once encrypted
    kept = packs(tmp_path, max_total_bytes=45_000)
    first, second, third, fourth = (session(c * 24) for c in "1234")
    for i, s in enumerate((first, second, third)):
        kept.keep(s, LastPack(big, "{}"))
        at = time.time() - 100 + i
        os.utime(kept.path(s), (at, at))
    assert kept.recall(first, now=0) is not None  # shown: now the most recent
    kept.keep(fourth, LastPack(big, "{}"))
    assert kept.recall(second, now=0) is None
    assert all(kept.recall(s, now=0) is not None for s in (first, third, fourth))
    total = sum(p.stat().st_size for p in kept.directory.iterdir())
    assert total <= 45_000
