"""`python -m cartonize.serve` (what `make run` runs): API, Dagster UI and daemon together."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from cartonize.serve import dagster_ui_url, free_port

ROOT = Path(__file__).resolve().parents[1]


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2.0).status_code == 200
    except httpx.TransportError:
        return False


def test_serve_runs_api_dagster_ui_and_daemon_and_stops_them_together(tmp_path: Path) -> None:
    api_port, ui_port = free_port(), free_port()
    env = {
        **os.environ,
        "CARTONIZE_DATA_DIR": str(tmp_path / "data"),
        "CARTONIZE_BIND": f"127.0.0.1:{api_port}",
        "CARTONIZE_DAGSTER_PORT": str(ui_port),
    }
    env.pop("DAGSTER_HOME", None)
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cartonize.serve"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 90
        api = ui = False
        while time.monotonic() < deadline and not (api and ui):
            assert proc.poll() is None, log.read_text()
            api = api or _answers(f"http://127.0.0.1:{api_port}/healthz")
            ui = ui or _answers(f"http://127.0.0.1:{ui_port}/server_info")
            time.sleep(0.5)
        assert api and ui, log.read_text()
        assert (tmp_path / "data" / "dagster" / "dagster.yaml").exists()
        assert "starting dagster-daemon" in log.read_text()
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
    assert code == 0, log.read_text()
    assert not _answers(f"http://127.0.0.1:{api_port}/healthz")


@pytest.mark.parametrize(
    ("env", "url"),
    [
        ({}, "http://127.0.0.1:3000"),
        (
            {"CARTONIZE_BIND": "192.0.2.7:8080", "CARTONIZE_DAGSTER_PORT": "3100"},
            "http://192.0.2.7:3100",
        ),
        ({"CARTONIZE_BIND": "[::1]:8080"}, "http://[::1]:3000"),
        # Every interface: no address a browser can be sent to, unless the operator says.
        ({"CARTONIZE_BIND": "0.0.0.0:8080"}, None),
        (
            {"CARTONIZE_BIND": "0.0.0.0:8080", "CARTONIZE_DAGSTER_UI_URL": "https://ops/dagster"},
            "https://ops/dagster",
        ),
        ({"CARTONIZE_DAGSTER_UI_URL": ""}, None),
        ({"CARTONIZE_DAGSTER": "0"}, None),
    ],
)
def test_the_console_learns_where_the_dagster_ui_it_starts_answers(
    env: dict[str, str], url: str | None
) -> None:
    assert dagster_ui_url(env) == url
