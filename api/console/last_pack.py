"""The playground's last pack of each console session, kept on the server so a reload of
the playground shows it again (the request as typed and its result) until the session
packs again, starts over, signs out or ends.

One file per session, `console-playground/<sha256 of the session id>` in the data
directory (shared by every worker, as the store is), encrypted with the deployment's
secret box and naming its session and that session's expiry inside: a file read for
another session or after its session expired shows nothing. The request may be as large
as the pack endpoint's body limit and a result with pictures megabytes, so neither goes
in a cookie; the session cookie already names the file.

Limits (growth is bounded): a pack replaces its session's file (written beside it and
renamed over it, so a reader in another worker never sees half a file); a file is
deleted when its session starts over or signs out, when it is read after its session
expired, and by the sweep every write runs: files untouched for the session lifetime
(no session outlives that) and, past `MAX_TOTAL_BYTES` in all, the least recently shown
ones, oldest first (their next reload shows the sample request, as after starting over).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from cartonize.sync.crypto import CredentialError, SecretBox

from api.console.session import Session

__all__ = ["MAX_TOTAL_BYTES", "LastPack", "LastPacks"]

#: Bytes all sessions' last packs may take together before the least recently shown go.
MAX_TOTAL_BYTES = 256 * 1024 * 1024
_PURPOSE = "console playground"
_TEMP = ".writing-"


@dataclass(frozen=True)
class LastPack:
    """A session's last pack: the request as typed and the endpoint's JSON answer."""

    request: str
    response: str


class LastPacks:
    """Keeps, recalls and forgets each session's last playground pack in `directory`."""

    def __init__(
        self,
        box: SecretBox,
        directory: Path,
        lifetime_seconds: int,
        max_total_bytes: int = MAX_TOTAL_BYTES,
    ) -> None:
        self._box = box
        self.directory = directory
        self._lifetime = lifetime_seconds
        self._max_total = max_total_bytes

    def path(self, session: Session) -> Path:
        """The file of `session` (its id hashed: file names say nothing of the cookie)."""
        return self.directory / hashlib.sha256(session.sid.encode()).hexdigest()

    def keep(self, session: Session, pack: LastPack) -> None:
        """Make `pack` the session's last one, then sweep stale and surplus files."""
        self.directory.mkdir(parents=True, exist_ok=True)
        content = {
            "purpose": _PURPOSE,
            "sid": session.sid,
            "expires": session.expires,
            "request": pack.request,
            "response": pack.response,
        }
        token = self._box.encrypt(json.dumps(content, separators=(",", ":")))
        temp = self.directory / f"{_TEMP}{secrets.token_hex(8)}"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="ascii") as handle:
                handle.write(token)
            os.replace(temp, self.path(session))
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
        self._sweep(keep=self.path(session))

    def recall(self, session: Session, now: float) -> LastPack | None:
        """The session's last pack, or None (none kept, started over, expired, swept)."""
        path = self.path(session)
        try:
            token = path.read_text(encoding="ascii")
        except FileNotFoundError:
            return None
        try:
            content = json.loads(self._box.decrypt(token))
        except (CredentialError, ValueError):
            return None
        if (
            not isinstance(content, dict)
            or content.get("purpose") != _PURPOSE
            or content.get("sid") != session.sid
        ):
            return None
        expires, request, response = (
            content.get("expires"),
            content.get("request"),
            content.get("response"),
        )
        if not isinstance(expires, int) or expires <= now:
            path.unlink(missing_ok=True)
            return None
        if not isinstance(request, str) or not isinstance(response, str):
            return None
        with contextlib.suppress(FileNotFoundError):
            os.utime(path)  # shown: the size sweep removes the least recently shown first
        return LastPack(request, response)

    def forget(self, session: Session) -> None:
        """Start over: the session's playground shows the sample request again."""
        self.path(session).unlink(missing_ok=True)

    def _sweep(self, keep: Path) -> None:
        cutoff = time.time() - self._lifetime
        files: list[tuple[float, int, Path]] = []
        for path in self.directory.iterdir():
            try:
                stat = path.stat()
                # Untouched for a session's whole lifetime: its session has ended. A
                # temporary file that old was left by a worker killed while writing.
                if stat.st_mtime < cutoff:
                    path.unlink()
                    continue
            except FileNotFoundError:
                continue
            if path != keep and not path.name.startswith(_TEMP):
                files.append((stat.st_mtime, stat.st_size, path))
        total = sum(size for _, size, _ in files)
        with contextlib.suppress(FileNotFoundError):
            total += keep.stat().st_size
        for _, size, path in sorted(files):
            if total <= self._max_total:
                break
            path.unlink(missing_ok=True)
            total -= size
