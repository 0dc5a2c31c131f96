"""One-time messages of Post/Redirect/Get: what a form's answer shows on the page it
redirects to (a notice, a new API secret, a pull's progress), shown once.

The message travels in a cookie encrypted with the deployment's secret box, so a secret is
never in a URL, a log, or the browser's history, and bound to the session and the target
page. "Once" is kept on the server: issuing a message creates an empty token file
`console-flash/<nonce>` in the data directory (shared by every worker, as the store is);
showing it deletes that file, and only the request whose unlink succeeds shows it. A
reload, the back button or a copied cookie finds no file and shows nothing.
(The playground's last pack, too large for a cookie and shown on every reload, is kept
apart: api/console/last_pack.py.)
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
    ) -> str:
        """The cookie value carrying `shown` to `target` for `session`."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self._forget_stale()
        nonce = secrets.token_urlsafe(18)
        os.close(os.open(self.directory / nonce, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        payload = {
            "purpose": _PURPOSE,
            "nonce": nonce,
            "sid": session.sid,
            "path": target,
            "expires": int(now) + FLASH_SECONDS,
            "shown": shown,
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
        try:
            # Only the request whose unlink succeeds shows it.
            (self.directory / nonce).unlink()
        except FileNotFoundError:
            return {}  # shown already
        return shown

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
