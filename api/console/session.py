"""Console sessions: a signed cookie naming the API key that signed in, and CSRF tokens.

The cookie carries no secret: a random session id, the key's stem, its account and an
expiry, signed with HMAC-SHA256 under a key kept in the data directory (created on first
use, mode 0600, shared by every worker). Every page re-checks that the key is still active,
so revoking the key ends its console sessions at once; signing out clears the cookie.

CSRF: every form carries a token derived from the session id (synchronizer token, no
server state); the sign-in form, which has no session yet, uses a double-submit cookie.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SESSION_COOKIE", "SIGN_IN_COOKIE", "Session", "SessionSigner", "load_signing_key"]

SESSION_COOKIE = "cartonize_session"
SIGN_IN_COOKIE = "cartonize_sign_in"
KEY_FILE = "console-session.key"


def load_signing_key(data_dir: Path) -> bytes:
    """The console's HMAC key from `data_dir`, created (0600) by whichever worker is first."""
    path = data_dir / KEY_FILE
    data_dir.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    else:
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_bytes(32).hex().encode())
    # A worker that lost the race may read before the winner wrote: wait for 64 hex chars.
    for _ in range(100):
        text = path.read_text().strip()
        if len(text) == 64:
            return bytes.fromhex(text)
        time.sleep(0.01)
    raise RuntimeError(f"{path} does not hold a 32-byte hex key; delete it to make a new one")


@dataclass(frozen=True)
class Session:
    """A signed-in console user: which key, which account, until when."""

    sid: str
    key_stem: str
    account_id: int
    account_name: str
    plan_id: str
    expires: int


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class SessionSigner:
    """Issues and checks session cookies and CSRF tokens under one HMAC key."""

    def __init__(self, key: bytes | Callable[[], bytes], lifetime_seconds: int = 8 * 3600) -> None:
        # A callable is read on first use: the app starts (and /readyz can say 503) even
        # when the data directory is not usable yet.
        self._key: bytes | None = key if isinstance(key, bytes) else None
        self._load = key if callable(key) else None
        self.lifetime_seconds = lifetime_seconds

    def _secret(self) -> bytes:
        if self._key is None:
            assert self._load is not None
            self._key = self._load()
        return self._key

    def _mac(self, purpose: str, payload: str) -> str:
        digest = hmac.new(self._secret(), f"{purpose}:{payload}".encode(), hashlib.sha256).digest()
        return _b64(digest)

    def issue(
        self, *, key_stem: str, account_id: int, account_name: str, plan_id: str, now: float
    ) -> tuple[Session, str]:
        """A new session and its cookie value."""
        session = Session(
            sid=secrets.token_urlsafe(18),
            key_stem=key_stem,
            account_id=account_id,
            account_name=account_name,
            plan_id=plan_id,
            expires=int(now) + self.lifetime_seconds,
        )
        payload = _b64(
            json.dumps(
                [
                    session.sid,
                    session.key_stem,
                    session.account_id,
                    session.account_name,
                    session.plan_id,
                    session.expires,
                ],
                separators=(",", ":"),
            ).encode()
        )
        return session, f"{payload}.{self._mac('session', payload)}"

    def read(self, cookie: str | None, now: float) -> Session | None:
        """The session in a cookie value, or None if absent, forged, malformed or expired."""
        if not cookie or cookie.count(".") != 1:
            return None
        payload, mac = cookie.split(".")
        if not hmac.compare_digest(mac, self._mac("session", payload)):
            return None
        try:
            sid, stem, account_id, account_name, plan_id, expires = json.loads(_unb64(payload))
        except (ValueError, TypeError, binascii.Error):
            return None
        if not isinstance(expires, int) or expires <= now:
            return None
        return Session(
            str(sid), str(stem), int(account_id), str(account_name), str(plan_id), expires
        )

    def csrf_token(self, session: Session) -> str:
        """The token every form of this session must send back."""
        return self._mac("csrf", session.sid)

    def check_csrf(self, session: Session, token: str | None) -> bool:
        """Whether `token` is this session's CSRF token (constant-time)."""
        return token is not None and hmac.compare_digest(token, self.csrf_token(session))

    @staticmethod
    def new_sign_in_token() -> str:
        """A random double-submit token for the sign-in form."""
        return secrets.token_urlsafe(24)
