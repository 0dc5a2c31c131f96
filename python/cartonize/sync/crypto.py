"""Key material of the sync layer: encryption of third-party credentials, hashing of API secrets.

A connection's third-party key and token must be sent to the source, so they are stored
encrypted (Fernet: AES-128-CBC + HMAC-SHA256). Its API secret only has to be recognised,
so only a keyed hash (HMAC-SHA256) is stored. Both keys derive (HKDF) from one 32-byte
master key in a file outside the database: `CARTONIZE_SYNC_KEY_FILE`, default `sync.key`
in the data directory, created with mode 0600 on first use. A copy of the database
without that file reveals no credential.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import os
import secrets
import threading
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

__all__ = ["KEY_FILE", "CredentialError", "SecretBox"]

KEY_FILE = "sync.key"
_MASTER_BYTES = 32


class CredentialError(Exception):
    """A stored credential cannot be decrypted (the key file changed or is missing)."""


def _derive(master: bytes, purpose: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=purpose).derive(master)


class SecretBox:
    """Encrypts credentials and hashes secrets with keys derived from one master key file."""

    def __init__(self, key_file: Path | str) -> None:
        self.key_file = Path(key_file)
        self._keys: tuple[Fernet, bytes] | None = None
        self._lock = threading.Lock()

    def _load(self) -> tuple[Fernet, bytes]:
        # Read on first use, so that an app whose data directory is broken still starts
        # (and reports it through /readyz).
        with self._lock:
            if self._keys is None:
                master = _load_or_create(self.key_file)
                fernet = Fernet(base64.urlsafe_b64encode(_derive(master, b"cartonize credentials")))
                self._keys = (fernet, _derive(master, b"cartonize secret hash"))
            return self._keys

    @property
    def _fernet(self) -> Fernet:
        return self._load()[0]

    @property
    def _hash_key(self) -> bytes:
        return self._load()[1]

    @classmethod
    def for_data_dir(cls, data_dir: Path | str, environ: dict[str, str] | None = None) -> SecretBox:
        """The box of a deployment: `CARTONIZE_SYNC_KEY_FILE`, else `sync.key` in `data_dir`."""
        env = os.environ if environ is None else environ
        return cls(env.get("CARTONIZE_SYNC_KEY_FILE") or Path(data_dir) / KEY_FILE)

    def encrypt(self, text: str) -> str:
        """Ciphertext of `text` as ASCII."""
        return self._fernet.encrypt(text.encode()).decode("ascii")

    def decrypt(self, token: str) -> str:
        """The text `encrypt` was given; CredentialError when the key does not fit."""
        try:
            return self._fernet.decrypt(token.encode("ascii")).decode()
        except (InvalidToken, ValueError) as exc:
            raise CredentialError("a stored credential cannot be decrypted with this key") from exc

    def hash_secret(self, secret: str) -> str:
        """Keyed hash (HMAC-SHA256 hex) of an API secret."""
        return hmac.new(self._hash_key, secret.encode(), hashlib.sha256).hexdigest()

    def secret_matches(self, secret: str, stored_hash: str) -> bool:
        """Whether `secret` hashes to `stored_hash`, compared in constant time."""
        return hmac.compare_digest(self.hash_secret(secret), stored_hash)


def _load_or_create(path: Path) -> bytes:
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written to a private temporary file, then linked into place: link fails if another
    # process created the key first, and then everybody uses that one.
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(base64.b64encode(secrets.token_bytes(_MASTER_BYTES)) + b"\n")
            file.flush()
            os.fsync(file.fileno())
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return _read(path)


def _read(path: Path) -> bytes:
    try:
        master = base64.b64decode(path.read_bytes().strip(), validate=True)
    except ValueError as exc:  # binascii.Error: not base64 (a damaged or foreign file)
        raise CredentialError(f"{path} does not hold a base64 key") from exc
    if len(master) != _MASTER_BYTES:
        raise CredentialError(f"{path} does not hold a {_MASTER_BYTES}-byte key")
    return master
