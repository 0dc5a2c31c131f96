"""The sync API: `POST|PUT|PATCH /sync-api/{public_api_id}/rest` (spec "Sync API"), the
webhook `GET /sync-api/{public_api_id}/webhook` and its run status
`GET /sync-api/{public_api_id}/runs/{run_id}`.

Answers use the sync API's own bodies: `{"error": ...}` for 400 and 401, and 200 with
`status` success or failure (details in the connection log). Order of checks: the secret
(401, compared in constant time), the plan (403), the body (400 `Invalid JSON payload`),
the row_key (400 `Invalid row_key format`); then the write, which is one transaction.

- POST: Resource to Update blank creates a new resource (`packResourceId`); set, upserts
  (as PATCH).
- PUT: overwrites the Resource to Update with the payload (an array of complete rows);
  when every record was rejected, a failure that keeps the old rows.
- PATCH: with a row_key, upserts; without, appends.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import TYPE_CHECKING, Any

import falcon
from cartonize import jsontext
from cartonize.store import Clock, Store
from cartonize.sync.connections import (
    Connection,
    Trigger,
    authenticate_secret,
    connection_by_id,
    connections_refusal,
)
from cartonize.sync.crypto import SecretBox
from cartonize.sync.mapping import Conversions, map_records
from cartonize.sync.writes import (
    Guard,
    WriteMode,
    WriteResult,
    log_refusal,
    none_usable,
    write_batch,
)

from api.resources import read_limited

if TYPE_CHECKING:
    from pipelines.runs import PullRuns

__all__ = [
    "LazyPullRuns",
    "SyncRestResource",
    "SyncRunResource",
    "SyncWebhookResource",
    "parse_row_key",
]

SECRET_HEADER = "X-Service-API-Secret"
SECRET_PARAM = "service_api_secret"
ROW_KEY_HEADER = "X-Service-Sync-Row-Key"
#: The same for a missing secret, a wrong one, another connection's and an unknown
#: public API id: a refusal must not tell which ids exist.
UNAUTHORIZED_DETAILS = (
    "send the connection's API secret in the X-Service-API-Secret header (or the "
    "service_api_secret parameter) of a URL with its public API id; this one was missing, "
    "or is not the secret of that connection (regenerated credentials replace it at once)"
)
FORBIDDEN_DETAILS = (
    "the connection's account may not use connections now: its plan is not premium or "
    "enterprise, or its connections were disabled; ask support"
)
# Dagster run ids are UUIDs.
_RUN_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class InvalidRowKey(ValueError):
    """row_key is neither a string nor a JSON array of strings."""


def parse_row_key(value: object, *, text: bool) -> list[str] | None:
    """A row key from the body (`text` False: a list or a string) or from a parameter or
    header (`text` True: a name, or JSON array text). None when absent."""
    if value is None:
        return None
    if text and isinstance(value, str):
        # JSON text (an array, or a quoted string) is decoded; any other JSON value is not
        # a row key, and neither is broken JSON. Bare text is one property name.
        raw = value
        try:
            value = jsontext.loads(raw)
        except ValueError:
            if raw.strip().startswith(("[", "{")):
                raise InvalidRowKey from None
        else:
            if not isinstance(value, str | list):
                raise InvalidRowKey
    if isinstance(value, str):
        names = [value.strip()]
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        names = [v.strip() for v in value]
    else:
        raise InvalidRowKey
    if not names or any(not name for name in names):
        raise InvalidRowKey
    return names


def _answer(resp: falcon.Response, status: int, body: dict[str, Any]) -> None:
    resp.status = status
    resp.content_type = falcon.MEDIA_JSON
    resp.text = json.dumps(body)


class SyncRestResource:
    """Writes into a connection's resource in the source's field names."""

    def __init__(self, store: Store, box: SecretBox, clock: Clock, max_body_bytes: int) -> None:
        self._store = store
        self._gate = _SecretGate(store, box)
        self._clock = clock
        self._max_body_bytes = max_body_bytes

    def on_post(self, req: falcon.Request, resp: falcon.Response, public_api_id: str) -> None:
        """Create a resource (Resource to Update blank) or upsert into it."""
        self._write(req, resp, public_api_id, "POST")

    def on_put(self, req: falcon.Request, resp: falcon.Response, public_api_id: str) -> None:
        """Overwrite the Resource to Update."""
        self._write(req, resp, public_api_id, "PUT")

    def on_patch(self, req: falcon.Request, resp: falcon.Response, public_api_id: str) -> None:
        """Upsert by row_key, or append without one."""
        self._write(req, resp, public_api_id, "PATCH")

    def _write(
        self, req: falcon.Request, resp: falcon.Response, public_api_id: str, method: str
    ) -> None:
        connection = self._gate.connection(req, resp, public_api_id)
        if connection is None:
            return
        raw = read_limited(req, self._max_body_bytes)
        if len(raw) > self._max_body_bytes:
            _answer(resp, 413, {"error": "Payload too large"})
            return
        try:
            body = _parse_body(raw)
        except _RepeatedKeys as exc:
            _answer(resp, 422, {"error": "Repeated JSON key", "details": str(exc)})
            return
        if body is None:
            _answer(resp, 400, {"error": "Invalid JSON payload"})
            return
        payload, body_row_key, single = body
        try:
            row_key = parse_row_key(body_row_key, text=False)
            if row_key is None:
                row_key = parse_row_key(req.get_param("row_key"), text=True)
            if row_key is None:
                row_key = parse_row_key(req.get_header(ROW_KEY_HEADER), text=True)
        except InvalidRowKey:
            _answer(resp, 400, {"error": "Invalid row_key format"})
            return
        trigger: Trigger = f"rest {method}"  # type: ignore[assignment]
        mode = _mode(method, connection, row_key)
        now = self._clock()
        refusal: str | None = None
        try:
            conversions = Conversions.parse(
                req.get_param("dim_conv") or req.get_header("X-Service-Dim-Conv") or None,
                req.get_param("weight_conv") or req.get_header("X-Service-Weight-Conv") or None,
            )
        except ValueError as exc:
            refusal = str(exc)
        else:
            if method == "PUT" and single:
                refusal = "PUT needs an array of complete objects as payload"
        if refusal is not None:
            # Refused before the write, whatever the connection's settings, so its
            # transaction checks only what any request is checked for first (the secret,
            # the connection, the plan); logged against the Resource to Update, answered
            # naming no resource.
            refused = WriteResult(
                "failure", connection.resource_to_update, received=len(payload), messages=[refusal]
            )
            result = log_refusal(
                self._store,
                connection,
                refused,
                trigger=trigger,
                now=now,
                guard=_secret_of(connection),
            )
            if not self._refused_by_guard(resp, connection, result):
                answer = dataclasses.replace(result, resource_id=None)
                _answer(resp, 200, _result_body(method, answer))
            return
        conversions_of_connection = not (conversions.dim or conversions.weight)
        if conversions_of_connection:
            conversions = connection.conversions
        guard = _prepared_with(connection, uses_its_conversions=conversions_of_connection)
        batch = map_records(payload, connection.schema_map, connection.resource_type, conversions)
        refused_all = none_usable(connection, batch) if mode == "overwrite" else None
        if refused_all is not None:
            # Written, it would empty the resource and call that a success. A failure,
            # answered as the spec's write table answers one: 200 with status failure
            # (clients check status), details in the log.
            result = log_refusal(
                self._store, connection, refused_all, trigger=trigger, now=now, guard=guard
            )
        else:
            result = write_batch(
                self._store,
                connection,
                batch,
                mode,
                trigger=trigger,
                now=now,
                row_key=row_key,
                guard=guard,
            )
        if not self._refused_by_guard(resp, connection, result):
            _answer(resp, 200, _result_body(method, result))

    def _refused_by_guard(
        self, resp: falcon.Response, connection: Connection, result: WriteResult
    ) -> bool:
        """Answer a write its guard refused (nothing was written): 401 or 403 as the
        request would have been answered had it come after the edit, 409 naming the
        settings that changed otherwise. False when the guard let the write go ahead."""
        if result.connection_gone:
            account = self._store.account_by_id(connection.account_id)
            if connection_by_id(self._store, connection.id) is not None and connections_refusal(
                self._store, account
            ):
                _answer(resp, 403, {"error": "Forbidden", "details": FORBIDDEN_DETAILS})
            else:
                _answer(resp, 401, {"error": "Unauthorized", "details": UNAUTHORIZED_DETAILS})
            return True
        if SECRET_SETTING in result.changed:
            _answer(resp, 401, {"error": "Unauthorized", "details": UNAUTHORIZED_DETAILS})
            return True
        if result.changed:
            _answer(resp, 409, {"error": "Connection changed", "details": result.messages[0]})
            return True
        return False


#: The name `_prepared_with` gives a regenerated API secret.
SECRET_SETTING = "API secret"


def _prepared_with(prepared: Connection, *, uses_its_conversions: bool) -> Guard:
    """The guard of a REST write: the settings its payload was mapped and its target
    chosen with (`prepared`, the connection its secret authenticated) that differ in the
    connection as the write's transaction reads it. The secret too: regenerating it
    invalidates the old one at once, a write it authenticated included."""

    def changed(current: Connection) -> list[str]:
        changes = [
            (SECRET_SETTING, current.secret_hash != prepared.secret_hash),
            ("Resource Type", current.resource_type != prepared.resource_type),
            ("Resource to Update", current.resource_to_update != prepared.resource_to_update),
            ("Schema Map", current.schema_map != prepared.schema_map),
            (
                "Unit Conversion",
                uses_its_conversions and current.conversions != prepared.conversions,
            ),
        ]
        return [name for name, differs in changes if differs]

    return changed


def _secret_of(prepared: Connection) -> Guard:
    """The guard of a REST write refused whatever the connection's settings: only a
    regenerated secret changes its answer (401, as for a write)."""

    def changed(current: Connection) -> list[str]:
        return [SECRET_SETTING] if current.secret_hash != prepared.secret_hash else []

    return changed


def _mode(method: str, connection: Connection, row_key: list[str] | None) -> WriteMode:
    if method == "POST" and connection.resource_to_update is None:
        return "create"
    if method == "PUT":
        return "overwrite"
    # POST with a Resource to Update is the same as PATCH (rule 2).
    return "upsert" if row_key else "append"


class _RepeatedKeys(ValueError):
    """The body names a key twice in one object with different values (422)."""


def _refuse_repeats(value: Any, root: str) -> None:
    found = jsontext.repeats_details(value, root)
    if found is None:
        return
    raise _RepeatedKeys(
        f"{found}: which value is meant is not clear, so nothing was written; send "
        "each key once in an object"
    )


def _parse_body(raw: bytes) -> tuple[list[Any], Any, bool] | None:
    """(records, row_key, payload was one object) or None when the payload is not JSON
    objects. A payload given as JSON text inside a string is parsed too. _RepeatedKeys
    when an object of the body (or of such a payload) repeats a key with different values.
    """
    try:
        body = jsontext.loads(raw, strict=False, repeats="mark")
    except ValueError:
        return None
    if not isinstance(body, dict) or "payload" not in body:
        return None
    _refuse_repeats(body, "")
    payload = body["payload"]
    if isinstance(payload, str):
        try:
            payload = jsontext.loads(payload, strict=False, repeats="mark")
        except ValueError:
            return None
        _refuse_repeats(payload, "payload")
    single = isinstance(payload, dict)
    records = [payload] if single else payload
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        return None
    return records, body.get("row_key"), single


def _result_body(method: str, result: WriteResult) -> dict[str, Any]:
    body: dict[str, Any] = {"status": result.status}
    if method == "POST":
        body["packResourceId"] = result.resource_id if result.status == "success" else None
    body.update(
        received=result.received,
        inserted=result.inserted,
        updated=result.updated,
        unchanged=result.unchanged,
        rejected=result.rejected,
    )
    if result.status == "failure" and result.messages:
        body["message"] = result.messages[0]
    return body


class LazyPullRuns:
    """`pipelines.runs.PullRuns` for a store, imported (with Dagster) on first use: a worker
    that never serves a webhook does not load Dagster."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._runs: PullRuns | None = None

    def get(self) -> PullRuns:
        """The store's PullRuns."""
        if self._runs is None:
            from pipelines.runs import PullRuns

            self._runs = PullRuns(self._store)
        return self._runs


class _SecretGate:
    """The secret and plan checks every sync API request passes (401, then 403)."""

    def __init__(self, store: Store, box: SecretBox) -> None:
        self.store = store
        self.box = box

    def connection(
        self, req: falcon.Request, resp: falcon.Response, public_api_id: str
    ) -> Connection | None:
        """The authenticated connection, or None after answering 401 or 403."""
        secret = req.get_header(SECRET_HEADER) or req.get_param(SECRET_PARAM)
        connection = authenticate_secret(self.store, self.box, public_api_id, secret)
        if connection is None:
            _answer(resp, 401, {"error": "Unauthorized", "details": UNAUTHORIZED_DETAILS})
            return None
        req.context.key_stem = connection.secret_stem
        if connections_refusal(self.store, self.store.account_by_id(connection.account_id)):
            _answer(resp, 403, {"error": "Forbidden", "details": FORBIDDEN_DETAILS})
            return None
        return connection


def _status_url(req: falcon.Request, public_api_id: str, run_id: str) -> str:
    return f"{req.prefix}/sync-api/{public_api_id}/runs/{run_id}"


class SyncWebhookResource:
    """`GET /sync-api/{public_api_id}/webhook`: pull from the source now, as a Dagster run.

    Waits up to `wait` seconds: a finished run answers 200 with its status and figures
    (`failure` is still 200, as for writes; the reason is in `message` and the log); a run
    still going answers 202 with `run_id` and `status_url`.
    """

    def __init__(self, store: Store, box: SecretBox, runs: LazyPullRuns, wait: float) -> None:
        self._gate = _SecretGate(store, box)
        self._runs = runs
        self._wait = wait

    def on_get(self, req: falcon.Request, resp: falcon.Response, public_api_id: str) -> None:
        """Start the pull and wait for it (up to the configured time)."""
        connection = self._gate.connection(req, resp, public_api_id)
        if connection is None:
            return
        runs = self._runs.get()
        run_id = runs.start(connection, "webhook")
        status = runs.wait(run_id, self._wait)
        body = status.to_wire() if status else {"status": "queued", "run_id": run_id}
        body["status_url"] = _status_url(req, public_api_id, run_id)
        _answer(resp, 200 if status and status.done else 202, body)


class SyncRunResource:
    """`GET /sync-api/{public_api_id}/runs/{run_id}`: the state and figures of a pull run."""

    def __init__(self, store: Store, box: SecretBox, runs: LazyPullRuns) -> None:
        self._gate = _SecretGate(store, box)
        self._runs = runs

    def on_get(
        self, req: falcon.Request, resp: falcon.Response, public_api_id: str, run_id: str
    ) -> None:
        """The run's status; 404 for a run that is not this connection's."""
        connection = self._gate.connection(req, resp, public_api_id)
        if connection is None:
            return
        status = self._runs.get().status(run_id) if _RUN_ID.fullmatch(run_id) else None
        if status is None or status.connection_id != connection.id:
            _answer(
                resp,
                404,
                {"error": "Not found", "details": "no pull run of this connection has this id"},
            )
            return
        body = status.to_wire()
        body["status_url"] = _status_url(req, public_api_id, run_id)
        _answer(resp, 200, body)
