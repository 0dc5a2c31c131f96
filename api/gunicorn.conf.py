"""Gunicorn settings of the pack endpoint; every value can be overridden on the command line.

Run: `gunicorn -c api/gunicorn.conf.py` from the repository root.
"""

import gc
import os
from typing import Any

wsgi_app = "api.app:get_app()"
bind = os.environ.get("CARTONIZE_BIND", "127.0.0.1:8080")
workers = int(os.environ.get("CARTONIZE_WORKERS", "2"))
# A worker is killed after `timeout` seconds of silence: keep it above the longest pack the
# endpoint allows (CARTONIZE_MAX_TIMEOUT, 30 s by default) plus time to render the response.
timeout = max(60, int(float(os.environ.get("CARTONIZE_MAX_TIMEOUT", "30"))) + 30)
# Access lines come from api.access_log as JSON, without query strings (keys could be there).
accesslog = None
# gunicorn 25+ opens a control socket at one path per user ($HOME/.gunicorn/gunicorn.ctl)
# shared by every gunicorn on the machine, outside the data directory: two services took
# it over from each other. Nothing here uses `gunicornc`; off.
control_socket_disable = True


def post_worker_init(worker: Any) -> None:
    """Move what loading the app left alive (about 75,000 objects: modules, pydantic and
    Dagster schemas) out of the collector's reach. A full collection then scans only what
    requests keep, not the app: without this each one took 46-150 ms, one every 400-500
    e-commerce packs, and that request waited for it (docs/benchmarks.md, "Garbage
    collection in the workers")."""
    gc.collect()
    gc.freeze()
    worker.log.info("froze %d objects the app loaded", gc.get_freeze_count())


def worker_exit(server: Any, worker: Any) -> None:
    """Hand the frozen objects back so the worker's exit finalises them (frozen, DuckDB's
    bindings report them as leaked)."""
    gc.unfreeze()
