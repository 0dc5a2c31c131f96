"""Gunicorn's worker timeout stays above the longest pack the endpoint allows."""

from __future__ import annotations

import os
import runpy
from pathlib import Path

import pytest

CONFIG = Path(__file__).resolve().parents[2] / "api" / "gunicorn.conf.py"


@pytest.mark.parametrize("max_timeout", ["30", "3600", "1.5"])
def test_worker_timeout_exceeds_the_pack_timeout(max_timeout: str) -> None:
    saved = os.environ.get("CARTONIZE_MAX_TIMEOUT")
    os.environ["CARTONIZE_MAX_TIMEOUT"] = max_timeout
    try:
        settings = runpy.run_path(str(CONFIG))
    finally:
        if saved is None:
            del os.environ["CARTONIZE_MAX_TIMEOUT"]
        else:
            os.environ["CARTONIZE_MAX_TIMEOUT"] = saved
    assert settings["timeout"] >= float(max_timeout) + 30
    assert settings["accesslog"] is None  # its lines would carry query strings
