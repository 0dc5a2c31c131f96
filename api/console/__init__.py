"""The management console: server-rendered pages under `/plans/{plan_id}/console/`."""

from __future__ import annotations

from pathlib import Path

import falcon
from cartonize.service import KeyRing, PackLog
from cartonize.store import Clock, Store
from cartonize.sync.crypto import SecretBox

from api.console.pages import (
    Console,
    ConsoleRedirect,
    OverviewPage,
    PageError,
    PlaygroundPage,
    SignInPage,
    SignOutAction,
    StoredPackPage,
    handle_page_error,
)
from api.console.session import SessionSigner, load_signing_key
from api.console.sync_pages import (
    ConnectionEditorPage,
    ConnectionListPage,
    ConnectionNewPage,
    RegenerateCredentialsPage,
    ResourceCsvDownload,
    ResourceListPage,
    ResourcePage,
    RunStatusJson,
    TriggerWebhookAction,
)
from api.resources import PackResource
from api.sync import LazyPullRuns

__all__ = ["Console", "add_console"]

STATIC = Path(__file__).parent / "static"


def add_console(
    app: falcon.App[falcon.Request, falcon.Response],
    *,
    store: Store,
    packer: PackResource,
    log: PackLog,
    keys: KeyRing,
    box: SecretBox,
    runs: LazyPullRuns,
    clock: Clock,
    secure_cookies: bool,
    webhook_wait: float,
    dagster_ui_url: str = "",
) -> Console:
    """Add the console's routes, static files and page error handlers to `app`."""
    signer = SessionSigner(lambda: load_signing_key(Path(store.data_dir)))
    console = Console(
        store=store,
        packer=packer,
        log=log,
        keys=keys,
        signer=signer,
        clock=clock,
        secure_cookies=secure_cookies,
        dagster_ui_url=dagster_ui_url,
        box=box,
    )
    app.add_static_route("/console-static", str(STATIC))
    app.add_route("/sign-in", SignInPage(console))
    app.add_route("/sign-out", SignOutAction(console))
    base = "/plans/{plan_id}/console"
    app.add_route(base + "/", OverviewPage(console))
    app.add_route(base + "/playground", PlaygroundPage(console))
    app.add_route(base + "/packs/{pack_uuid}", StoredPackPage(console))
    app.add_route(base + "/connections", ConnectionListPage(console))
    app.add_route(base + "/connections/new", ConnectionNewPage(console, box))
    app.add_route(base + "/connections/{connection_id:int}", ConnectionEditorPage(console, box))
    app.add_route(
        base + "/connections/{connection_id:int}/credentials",
        RegenerateCredentialsPage(console, box),
    )
    app.add_route(
        base + "/connections/{connection_id:int}/trigger",
        TriggerWebhookAction(console, box, runs, webhook_wait),
    )
    app.add_route(
        base + "/connections/{connection_id:int}/runs/{run_id}", RunStatusJson(console, runs)
    )
    app.add_route(base + "/resources", ResourceListPage(console))
    app.add_route(base + "/resources/{resource_id:int}", ResourcePage(console))
    app.add_route(base + "/resources/{resource_id:int}/csv", ResourceCsvDownload(console))
    handler = handle_page_error(console)
    app.add_error_handler(PageError, handler)
    app.add_error_handler(ConsoleRedirect, handler)
    return console
