"""One-time messages of Post/Redirect/Get: what a form's answer shows on the page it
redirects to (a notice, a new API secret, a pull's progress), shown once.

The message travels in a cookie encrypted with the deployment's secret box, so a secret is
never in a URL, a log, or the browser's history, and bound to the session and the target
page. "Once" is kept on the server: issuing a message creates an empty token file
`console-flash/<nonce>` in the data directory (shared by every worker, as the store is);
showing it deletes that file, and only the request whose unlink succeeds shows it. A
reload, the back button or a copied cookie finds no file and shows nothing.

What is too large for a cookie (the playground's request and its pack result, up to
the endpoint's body limit and more) is `stored`: encrypted with the same box into the token
file itself, not the cookie, and read back with it; the cookie then only names the file.
The file goes when it is shown (or after `2 * FLASH_SECONDS` unshown), as every token does.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import time
from pathlib import Path
from typing import Any

from cartonize.sync.crypto import CredentialError, SecretBox

from api.console.session import Session

__all__ = ["FLASH_COOKIE", "FLASH_SECONDS", "Flash"]

#: The cookie carrying a message to the page a form redirected to.
FLASH_COOKIE = "cartonize_flash"
#: How long a message waits for its page: browsers follow a 303 at once.
FLASH_SECONDS = 120
_PURPOSE = "console flash"
_NONCE = re.compile(r"[A-Za-z0-9_-]{24}")


class Flash:
    """Issues and takes one-time messages; token files live in `directory`."""

    def __init__(self, box: SecretBox, directory: Path) -> None:
        self._box = box
        self.directory = directory

    def issue(
        self,
        session: Session,
        target: str,
        shown: dict[str, Any],
        now: float,
        stored: dict[str, Any] | None = None,
    ) -> str:
        """The cookie value carrying `shown` to `target` for `session`; `stored` (what may
        be too large for a cookie) waits in the token file and joins `shown` there."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self._forget_stale()
        nonce = secrets.token_urlsafe(18)
        fd = os.open(self.directory / nonce, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as token:
            if stored is not None:
                token.write(self._box.encrypt(json.dumps(stored, separators=(",", ":"))))
        payload = {
            "purpose": _PURPOSE,
            "nonce": nonce,
            "sid": session.sid,
            "path": target,
            "expires": int(now) + FLASH_SECONDS,
            "shown": shown,
            "stored": stored is not None,
        }
        return self._box.encrypt(json.dumps(payload, separators=(",", ":")))

    def read(self, value: str) -> dict[str, Any] | None:
        """The message in a cookie value, or None when it is not one of ours."""
        try:
            payload = json.loads(self._box.decrypt(value))
        except (CredentialError, ValueError):
            return None
        if not isinstance(payload, dict) or payload.get("purpose") != _PURPOSE:
            return None
        return payload

    def take(self, payload: dict[str, Any], session: Session, now: float) -> dict[str, Any]:
        """What `payload` (read for this page) shows: its contents the first time for its
        own session before it expires, else {}."""
        nonce, expires, shown = payload.get("nonce"), payload.get("expires"), payload.get("shown")
        if (
            payload.get("sid") != session.sid
            or not isinstance(nonce, str)
            or not _NONCE.fullmatch(nonce)
            or not isinstance(expires, int)
            or expires <= now
            or not isinstance(shown, dict)
        ):
            return {}
        path = self.directory / nonce
        try:
            # Read before the unlink that claims it: the file is whole once the cookie
            # naming it exists, and only the request whose unlink succeeds shows it.
            content = path.read_text(encoding="ascii") if payload.get("stored") else ""
            path.unlink()
        except FileNotFoundError:
            return {}  # shown already
        if not content:
            return shown
        try:
            stored = json.loads(self._box.decrypt(content))
        except (CredentialError, ValueError):
            return {}
        return {**shown, **stored} if isinstance(stored, dict) else {}

    def _forget_stale(self) -> None:
        # Messages whose redirect was never followed; there are only as many files as
        # forms answered in the last FLASH_SECONDS.
        cutoff = time.time() - 2 * FLASH_SECONDS
        for path in self.directory.iterdir():
            try:
                if path.stat().st_mtime < cutoff:
                    path.unlink()
            except FileNotFoundError:
                pass
