"""Fixtures of the pipeline tests: the loopback third-party source."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from dagster import DagsterInstance

from tests.sync.third_party import ThirdPartyServer


@pytest.fixture(scope="session")
def _pipeline_source_server() -> Iterator[ThirdPartyServer]:
    with ThirdPartyServer() as server:
        yield server


@pytest.fixture
def third_party(_pipeline_source_server: ThirdPartyServer) -> ThirdPartyServer:
    """The running loopback source, with no scripted failures and an empty request log."""
    _pipeline_source_server.reset()
    return _pipeline_source_server


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[DagsterInstance]:
    """An ephemeral Dagster instance whose artifacts live in the test's directory."""
    with DagsterInstance.ephemeral(tempdir=str(tmp_path / "dagster")) as fresh:
        yield fresh
