"""The key file behind stored credentials and API secrets (`cartonize.sync.crypto`)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from cartonize.sync.crypto import CredentialError, SecretBox


@pytest.mark.parametrize(
    ("content", "says"),
    [(b"not a key\n", "does not hold a base64 key"), (base64.b64encode(b"x" * 7), "32-byte")],
    ids=["damaged", "short"],
)
def test_a_key_file_that_holds_no_key_is_a_credential_error_naming_it(
    tmp_path: Path, content: bytes, says: str
) -> None:
    # A damaged file raised binascii.Error ("Incorrect padding") from every use of the box:
    # hashing a REST write's secret or saving a connection's key failed naming neither the
    # file nor the key, unlike a key of the wrong length.
    key_file = tmp_path / "sync.key"
    key_file.write_bytes(content)
    box = SecretBox(key_file)
    for use in (lambda: box.hash_secret("s"), lambda: box.encrypt("t")):
        with pytest.raises(CredentialError, match=says) as caught:
            use()
        assert str(key_file) in str(caught.value)


def test_a_missing_key_file_is_created_once_and_reused(tmp_path: Path) -> None:
    key_file = tmp_path / "keys" / "sync.key"
    token = SecretBox(key_file).encrypt("secret")
    assert SecretBox(key_file).decrypt(token) == "secret"
    key_file.write_bytes(base64.b64encode(bytes(32)) + b"\n")
    with pytest.raises(CredentialError):
        SecretBox(key_file).decrypt(token)
