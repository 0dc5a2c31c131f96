"""`python -m cartonize pack` as a user runs it: from a file, from stdin, and with bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cartonize.cli import EXIT_STORE_ERROR, main
from cartonize.store import Store

ROOT = Path(__file__).resolve().parents[1]

PACK = {
    "orderId": "C-1",
    "itemSets": [{"refId": 3, "dimensions": {"x": 2, "y": 2, "z": 2}, "weight": 1, "quantity": 4}],
    "boxTypes": [{"name": "S", "dimensions": {"x": 4, "y": 4, "z": 4}, "weightMax": 20}],
}


def run_cli(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    """Run `python -m cartonize ARGS` in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    return subprocess.run(
        [sys.executable, "-m", "cartonize", *args],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )


def assert_packed(result: subprocess.CompletedProcess[bytes]) -> None:
    """Exit 0 and a pretty-printed response with all four items in boxes."""
    assert result.returncode == 0, result.stderr.decode()
    response = json.loads(result.stdout)
    packed = [e["item"]["refId"] for b in response["boxes"] for e in b["box"]["items"]]
    assert (packed, response["orderId"]) == ([3, 3, 3, 3], "C-1")
    assert result.stdout.startswith(b"{\n  ")  # indented


def test_pack_from_file(tmp_path: Path) -> None:
    request = tmp_path / "request.json"
    request.write_text(json.dumps(PACK))
    assert_packed(run_cli("pack", str(request)))


def test_pack_from_stdin() -> None:
    assert_packed(run_cli("pack", "-", stdin=json.dumps(PACK).encode()))


@pytest.mark.parametrize(
    ("stdin", "code", "details"),
    [
        (b"{", 400, "Expecting"),
        (b"[]", 400, "got an array"),
        (b'{"usableSpace": 7}', 422, "usableSpace: must be a number <= 1 (got 7)"),
    ],
)
def test_invalid_input_prints_error_body_and_exits_2(stdin: bytes, code: int, details: str) -> None:
    result = run_cli("pack", "-", stdin=stdin)
    assert result.returncode == 2
    assert result.stdout == b""
    error = json.loads(result.stderr)
    assert error["code"] == code
    assert details in error["details"]


def test_missing_file_exits_2(tmp_path: Path) -> None:
    result = run_cli("pack", str(tmp_path / "absent.json"))
    assert result.returncode == 2
    assert json.loads(result.stderr)["message"] == "cannot read the request"


def test_subcommand_required() -> None:
    result = run_cli()
    assert result.returncode == 2
    assert b"COMMAND" in result.stderr


def test_accounts_and_keys_round_trip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CARTONIZE_DATA_DIR", str(tmp_path / "data"))
    assert main(["accounts", "create", "--name", "ACME", "--tier", "premium"]) == 0
    assert main(["accounts", "set-tier", "--name", "ACME", "--tier", "enterprise"]) == 0
    assert main(["keys", "create", "--account", "ACME", "--name", "ci"]) == 0
    created = capsys.readouterr().out
    secret = created.split("key: ")[1].split()[0]
    stem = secret[:10]
    assert main(["accounts", "list"]) == 0
    assert "ACME\ttier=enterprise" in capsys.readouterr().out
    assert main(["keys", "list", "--account", "ACME"]) == 0
    listed = capsys.readouterr().out
    assert f"{stem}\taccount=ACME\tname=ci\tactive" in listed and secret not in listed
    assert Store(tmp_path / "data").find_key(secret) is not None
    assert main(["keys", "revoke", stem]) == 0
    assert "revoked" in capsys.readouterr().out
    assert Store(tmp_path / "data").find_key(secret) is None
    assert main(["keys", "create", "--account", "NOBODY", "--name", "x"]) == EXIT_STORE_ERROR
    assert "no account named 'NOBODY'" in capsys.readouterr().err
