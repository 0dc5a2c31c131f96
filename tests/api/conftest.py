"""Fixtures of the API tests: a real store in a fresh directory per test."""

from __future__ import annotations

from pathlib import Path

import pytest
from cartonize.store import Store


@pytest.fixture
def store(tmp_path: Path) -> Store:
    """A migrated DuckDB store under the test's temporary directory."""
    fresh = Store(tmp_path / "data")
    fresh.migrate()
    return fresh
