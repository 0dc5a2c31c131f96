"""Gunicorn settings of the pack endpoint; every value can be overridden on the command line.

Run: `gunicorn -c api/gunicorn.conf.py` from the repository root.
"""

import os

wsgi_app = "api.app:get_app()"
bind = os.environ.get("CARTONIZE_BIND", "127.0.0.1:8080")
workers = int(os.environ.get("CARTONIZE_WORKERS", "2"))
# A worker is killed after `timeout` seconds of silence: keep it above the longest pack the
# endpoint allows (CARTONIZE_MAX_TIMEOUT, 30 s by default) plus time to render the response.
timeout = max(60, int(float(os.environ.get("CARTONIZE_MAX_TIMEOUT", "30"))) + 30)
# Access lines come from api.access_log as JSON, without query strings (keys could be there).
accesslog = None
