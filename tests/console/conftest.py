"""A real service under gunicorn and a real headless Chromium for the console's tests."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cartonize.store import Store
from playwright.sync_api import Browser, Page, sync_playwright

from tests.api.test_gunicorn import free_port, wait_until_serving
from tests.sync.third_party import ThirdPartyServer

ROOT = Path(__file__).resolve().parents[2]
GUNICORN = Path(sys.executable).with_name("gunicorn")
CHROMIUM = Path(os.environ.get("CARTONIZE_CHROMIUM", "/usr/bin/chromium"))


@dataclass(frozen=True)
class Service:
    """The running service: where it answers and the store behind it."""

    base_url: str
    store: Store
    data_dir: Path


@pytest.fixture(scope="session")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """The app under gunicorn (2 workers) on a fresh data directory."""
    scratch = tmp_path_factory.mktemp("console")
    data_dir = scratch / "data"
    store = Store(data_dir)
    store.migrate()
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "python"), str(ROOT)]),
        "CARTONIZE_DATA_DIR": str(data_dir),
        "CARTONIZE_PACK_FLUSH_SECONDS": "0",
        # The third-party source of the pull tests is on loopback.
        "CARTONIZE_SYNC_ALLOW_HOSTS": "127.0.0.1",
        "DAGSTER_HOME": str(scratch / "dagster"),
    }
    log = scratch / "gunicorn.log"
    command = [
        str(GUNICORN),
        "-c",
        "api/gunicorn.conf.py",
        "--workers",
        "2",
        "--bind",
        f"127.0.0.1:{port}",
        "api.app:get_app()",
    ]
    with log.open("wb") as log_file:
        server = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log_file, stderr=subprocess.STDOUT
        )
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(base_url + "/healthz", server, log)
        yield Service(base_url, store, data_dir)
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture(scope="session")
def third_party() -> Iterator[ThirdPartyServer]:
    """The loopback third-party JSON source (tests/sync/third_party.py)."""
    with ThirdPartyServer() as server:
        yield server


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """Debian's Chromium, headless, driven by Playwright."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: `make chromium` installs Debian's chromium package")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"]
        )
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh browser context (no cookies) at a laptop's screen size."""
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()
