"""Falcon WSGI app of the pack endpoint; run by gunicorn (see gunicorn.conf.py)."""
