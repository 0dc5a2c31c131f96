"""Console pages for connections and resources.

They call the same sync functions as the JSON API (`cartonize.sync.*`), so a rule holds in
both places: what the API refuses with a 422, the editor shows next to the field.
"""

from __future__ import annotations

import json
from typing import Any, cast, get_args

import falcon
from cartonize import jsontext
from cartonize.errors import CartonizeError
from cartonize.store import Account, StoreError
from cartonize.sync.connections import (
    Connection,
    ConnectionFields,
    Frequency,
    connections_refusal,
    create_connection,
    delete_connection,
    get_connection,
    list_connections,
    read_log,
    regenerate_secret,
    update_connection,
)
from cartonize.sync.crypto import SecretBox
from cartonize.sync.mapping import DIM_CONVERSIONS, WEIGHT_CONVERSIONS
from cartonize.sync.resources import (
    RESOURCE_TYPES,
    ResourceType,
    count_rows,
    delete_resource,
    get_resource,
    list_resources,
    property_names,
    read_rows,
    rows_csv,
    set_default,
)
from pydantic import ValidationError

from api.console.pages import Console, ConsoleRedirect, PageError
from api.console.session import Session
from api.sync import LazyPullRuns

__all__ = [
    "ConnectionEditorPage",
    "ConnectionListPage",
    "ConnectionNewPage",
    "RegenerateCredentialsPage",
    "ResourceCsvDownload",
    "ResourceListPage",
    "ResourcePage",
    "RunStatusJson",
    "TriggerWebhookAction",
]

FREQUENCIES: tuple[str, ...] = get_args(Frequency)
PAGE_SIZE = 50

# Form field -> wire name of ConnectionFields (they are the same: camelCase).
TEXT_FIELDS = (
    "name",
    "resourceType",
    "newResourceBaseName",
    "thirdPartyApiUrl",
    "schemaRootPath",
    "timeZone",
)
OPTIONAL_CHOICES = ("syncFrequency", "dimConv", "weightConv")


def _connections_allowed(console: Console, session: Session) -> Account:
    account = console.store.account_by_id(session.account_id)
    if account is None:
        raise ConsoleRedirect("/sign-in")
    refusal = connections_refusal(console.store, account)
    if refusal is not None:
        raise PageError(
            403, "Connections are not available", refusal[0].upper() + refusal[1:] + "."
        )
    return account


def _connection_or_404(console: Console, session: Session, connection_id: int) -> Connection:
    found = get_connection(console.store, session.account_id, connection_id)
    if found is None:
        raise PageError(404, "Not found", f"There is no connection {connection_id} here.")
    return found


def _base(session: Session) -> str:
    return f"/plans/{session.plan_id}/console"


def _editor(session: Session, connection_id: int) -> str:
    return f"{_base(session)}/connections/{connection_id}"


def _progress(value: object) -> dict[str, str] | None:
    """A run's progress (status URL, page to return to) as a flash carried it."""
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        return None
    return {str(k): v for k, v in value.items()}


def _schedule_text(connection: Connection) -> str:
    if connection.frequency is None:
        return "manual only"
    if connection.start_at is None:
        # Only a start and a frequency together schedule pulls (docs/sync-schedules.md).
        return f"manual only ({connection.frequency} needs a start date)"
    start = connection.start_at.strftime("%Y-%m-%d %H:%M")
    return f"{connection.frequency} from {start} {connection.time_zone}"


class ConnectionListPage:
    """`/plans/{plan_id}/console/connections`: name, type, schedule, last run and status."""

    def __init__(self, console: Console) -> None:
        self._c = console

    def on_get(self, req: falcon.Request, resp: falcon.Response, plan_id: str) -> None:
        """The plan's connections with their latest log entry."""
        session = self._c.session(req, plan_id)
        account = _connections_allowed(self._c, session)
        rows = []
        for connection in list_connections(self._c.store, account.id):
            last = read_log(self._c.store, connection.id, limit=1, offset=0)
            rows.append(
                {
                    "c": connection,
                    "schedule": _schedule_text(connection),
                    "last": last[0] if last else None,
                }
            )
        self._c.render(
            req,
            resp,
            "connections.html",
            title="Connections",
            nav="connections",
            session=session,
            rows=rows,
        )


class _EditorBase:
    def __init__(self, console: Console, box: SecretBox) -> None:
        self._c = console
        self._box = box

    def _show(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        session: Session,
        *,
        connection: Connection | None,
        values: dict[str, Any] | None = None,
        errors: dict[str, str] | None = None,
        secret: str | None = None,
        notice: str | None = None,
        progress: dict[str, str] | None = None,
        status: int = 200,
    ) -> None:
        log = read_log(self._c.store, connection.id, limit=20, offset=0) if connection else []
        self._c.render(
            req,
            resp,
            "connection_edit.html",
            status=status,
            title=f"Connection: {connection.name}" if connection else "New connection",
            nav="connections",
            session=session,
            # A stored connection shows its own values unless a refused form is shown again.
            v=values if values is not None else _values_of(connection) if connection else {},
            errors=errors or {},
            connection=connection,
            # Absolute, as the API's webhookUrl and restUrl: they are copied into other
            # systems, which cannot resolve a path.
            sync_base=f"{req.prefix}/sync-api/{connection.public_api_id}" if connection else "",
            secret=secret,
            notice=notice,
            progress=progress,
            log=log,
            resources=list_resources(self._c.store, session.account_id),
            resource_types=RESOURCE_TYPES,
            frequencies=FREQUENCIES,
            dim_convs=DIM_CONVERSIONS,
            weight_convs=WEIGHT_CONVERSIONS,
        )


def _values_of(connection: Connection) -> dict[str, Any]:
    return {
        "name": connection.name,
        "resourceType": connection.resource_type,
        "newResourceBaseName": connection.base_name,
        "resourceToUpdate": ""
        if connection.resource_to_update is None
        else str(connection.resource_to_update),
        "thirdPartyApiUrl": connection.url or "",
        "apiHeadersTemplate": json.dumps(connection.headers_template, indent=2)
        if connection.headers_template
        else "",
        "schemaRootPath": connection.schema_root_path or "",
        "schemaMap": json.dumps(connection.schema_map, indent=2) if connection.schema_map else "",
        "startAt": connection.start_at.strftime("%Y-%m-%dT%H:%M") if connection.start_at else "",
        "timeZone": connection.time_zone,
        "syncFrequency": connection.frequency or "",
        "dimConv": connection.dim_conv or "",
        "weightConv": connection.weight_conv or "",
        "keySet": connection.api_key_encrypted is not None,
        "tokenSet": connection.api_token_encrypted is not None,
    }


def _wire_from_form(
    form: dict[str, str], *, creating: bool
) -> tuple[dict[str, Any], dict[str, str]]:
    """The connection JSON a form describes, and errors found before model validation."""
    wire: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for name in TEXT_FIELDS:
        value = form.get(name, "").strip()
        wire[name] = value or None
    if not wire.get("timeZone"):
        wire["timeZone"] = "UTC"
    for name in OPTIONAL_CHOICES:
        wire[name] = form.get(name) or None
    target = form.get("resourceToUpdate", "").strip()
    wire["resourceToUpdate"] = int(target) if target.isdigit() else None
    wire["startAt"] = form.get("startAt") or None
    for name in ("apiHeadersTemplate", "schemaMap"):
        text = form.get(name, "").strip()
        if not text:
            wire[name] = None if name == "apiHeadersTemplate" else {}
            continue
        try:
            wire[name] = jsontext.loads(text, repeats="mark")
        except ValueError as exc:
            errors[name] = f"not valid JSON: {exc}"
            continue
        # As the JSON API answers 422: a key named twice with different values is not
        # read as its last one. Header values may be credentials: not shown.
        repeats = jsontext.repeats_details(wire[name], show_values=name != "apiHeadersTemplate")
        if repeats is not None:
            errors[name] = f"{repeats}: which value is meant is not clear; name each key once"
    for name, clear in (
        ("thirdPartyApiKey", "clearApiKey"),
        ("thirdPartyApiToken", "clearApiToken"),
    ):
        secret = form.get(name, "")
        if secret:
            wire[name] = secret
        elif form.get(clear) or creating:
            wire[name] = None
    return wire, errors


def _validated(wire: dict[str, Any]) -> tuple[ConnectionFields | None, dict[str, str]]:
    """The fields the form describes, or per-field messages from the same validation the
    JSON API applies."""
    try:
        return ConnectionFields.model_validate(wire).checked(), {}
    except ValidationError as exc:
        errors: dict[str, str] = {}
        for error in exc.errors():
            loc = [str(p) for p in error["loc"]]
            name = loc[0] if loc else "form"
            where = ".".join(loc[1:])
            message = error["msg"].removeprefix("Value error, ")
            errors.setdefault(name, f"{where}: {message}" if where else message)
        return None, errors
    except CartonizeError as exc:
        return None, _error_of(exc)


FIELD_NAMES = {
    *TEXT_FIELDS,
    *OPTIONAL_CHOICES,
    "resourceToUpdate",
    "schemaMap",
    "apiHeadersTemplate",
    "startAt",
    "thirdPartyApiKey",
    "thirdPartyApiToken",
}


def _error_of(exc: CartonizeError) -> dict[str, str]:
    """A refusal's `details` ("field: why") as a message next to that field."""
    detail = exc.details or exc.message
    name, _, message = detail.partition(": ")
    return {name: message} if name in FIELD_NAMES and message else {"form": detail}


class ConnectionNewPage(_EditorBase):
    """`/plans/{plan_id}/console/connections/new`: create; shows the API secret once."""

    def on_get(self, req: falcon.Request, resp: falcon.Response, plan_id: str) -> None:
        """An empty editor."""
        session = self._c.session(req, plan_id)
        _connections_allowed(self._c, session)
        values = {"resourceType": "items", "timeZone": "UTC"}
        self._show(req, resp, session, connection=None, values=values)

    def on_post(self, req: falcon.Request, resp: falcon.Response, plan_id: str) -> None:
        """Validate and create; the editor it redirects to is the only place the secret
        shows, once."""
        session = self._c.session(req, plan_id)
        account = _connections_allowed(self._c, session)
        form = self._c.checked_form(req, session)
        wire, errors = _wire_from_form(form, creating=True)
        fields = None
        if not errors:
            fields, errors = _validated(wire)
        if fields is not None:
            try:
                connection, secret = create_connection(
                    self._c.store, self._box, account.id, fields, self._c.clock()
                )
            except CartonizeError as exc:
                errors = _error_of(exc)
            else:
                # Post/Redirect/Get: the editor shows the secret once; a reload of it
                # creates nothing and shows the secret no more.
                self._c.redirect_with(
                    req,
                    resp,
                    session,
                    _editor(session, connection.id),
                    secret=secret,
                    notice="Connection created.",
                )
        self._show(req, resp, session, values=form, errors=errors, connection=None, status=422)


class ConnectionEditorPage(_EditorBase):
    """`/plans/{plan_id}/console/connections/{connection_id}`: view, edit, delete, log."""

    def on_get(
        self, req: falcon.Request, resp: falcon.Response, plan_id: str, connection_id: int
    ) -> None:
        """The editor with the connection's values and its log, and once what the form
        that redirected here left to show (a notice, a new secret, a run's progress)."""
        session = self._c.session(req, plan_id)
        _connections_allowed(self._c, session)
        connection = _connection_or_404(self._c, session, connection_id)
        shown = self._c.take_flash(req, resp, session)
        secret, notice, progress = shown.get("secret"), shown.get("notice"), shown.get("progress")
        self._show(
            req,
            resp,
            session,
            connection=connection,
            secret=secret if isinstance(secret, str) else None,
            notice=notice if isinstance(notice, str) else None,
            progress=_progress(progress),
        )

    def on_post(
        self, req: falcon.Request, resp: falcon.Response, plan_id: str, connection_id: int
    ) -> None:
        """Save changes (`action=save`) or delete (`action=delete`, confirmed)."""
        session = self._c.session(req, plan_id)
        account = _connections_allowed(self._c, session)
        connection = _connection_or_404(self._c, session, connection_id)
        form = self._c.checked_form(req, session)
        if form.get("action") == "delete":
            if form.get("confirm") != "yes":
                raise PageError(400, "Not deleted", "Tick the confirmation box to delete.")
            delete_connection(self._c.store, account.id, connection_id)
            raise ConsoleRedirect(_base(session) + "/connections")
        wire, errors = _wire_from_form(form, creating=False)
        # Credentials left blank keep the stored ones: they are not part of this check.
        errors = (
            errors
            or _validated(
                {**wire, **{k: None for k in ("thirdPartyApiKey", "thirdPartyApiToken")}}
            )[1]
        )
        if not errors:
            try:
                updated = update_connection(
                    self._c.store, self._box, account.id, connection_id, wire, self._c.clock()
                )
            except CartonizeError as exc:
                errors = _error_of(exc)
            else:
                if updated is None:
                    raise PageError(404, "Not found", "The connection was deleted meanwhile.")
                self._c.redirect_with(
                    req, resp, session, _editor(session, connection_id), notice="Saved."
                )
        values = {
            **form,
            "keySet": connection.api_key_encrypted is not None,
            "tokenSet": connection.api_token_encrypted is not None,
        }
        self._show(
            req, resp, session, values=values, errors=errors, connection=connection, status=422
        )


class RegenerateCredentialsPage(_EditorBase):
    """`.../connections/{id}/credentials`: confirm, then a new API secret, shown once."""

    def on_get(
        self, req: falcon.Request, resp: falcon.Response, plan_id: str, connection_id: int
    ) -> None:
        """The confirmation page."""
        session = self._c.session(req, plan_id)
        _connections_allowed(self._c, session)
        connection = _connection_or_404(self._c, session, connection_id)
        self._c.render(
            req,
            resp,
            "regenerate.html",
            title="Regenerate credentials",
            nav="connections",
            session=session,
            connection=connection,
        )

    def on_post(
        self, req: falcon.Request, resp: falcon.Response, plan_id: str, connection_id: int
    ) -> None:
        """Replace the secret (the old one stops working at once); the editor it redirects
        to shows the new one once."""
        session = self._c.session(req, plan_id)
        account = _connections_allowed(self._c, session)
        self._c.checked_form(req, session)
        done = regenerate_secret(
            self._c.store, self._box, account.id, connection_id, self._c.clock()
        )
        if done is None:
            raise PageError(404, "Not found", f"There is no connection {connection_id} here.")
        connection, secret = done
        self._c.redirect_with(
            req,
            resp,
            session,
            _editor(session, connection.id),
            secret=secret,
            notice="New credentials made: the previous API secret no longer works.",
        )


# ---------------------------------------------------------------------- resources


class ResourceListPage:
    """`/plans/{plan_id}/console/resources?type=`: the library by type."""

    def __init__(self, console: Console) -> None:
        self._c = console

    def on_get(self, req: falcon.Request, resp: falcon.Response, plan_id: str) -> None:
        """Resources of one type (all types when none is chosen)."""
        session = self._c.session(req, plan_id)
        chosen = req.get_param("type")
        if chosen is not None and chosen not in RESOURCE_TYPES:
            raise PageError(404, "Not found", f"There is no resource type {chosen!r}.")
        resources = list_resources(
            self._c.store, session.account_id, cast(ResourceType | None, chosen)
        )
        self._c.render(
            req,
            resp,
            "resources.html",
            title="Resources",
            nav="resources",
            session=session,
            resources=resources,
            chosen=chosen,
            resource_types=RESOURCE_TYPES,
        )


class ResourcePage:
    """`/plans/{plan_id}/console/resources/{resource_id}`: paged rows, default, delete."""

    def __init__(self, console: Console) -> None:
        self._c = console

    def on_get(
        self, req: falcon.Request, resp: falcon.Response, plan_id: str, resource_id: int
    ) -> None:
        """One page of the resource's rows."""
        session = self._c.session(req, plan_id)
        notice = self._c.take_flash(req, resp, session).get("notice")
        self._show(
            req, resp, session, resource_id, notice=notice if isinstance(notice, str) else None
        )

    def _show(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        session: Session,
        resource_id: int,
        notice: str | None,
        status: int = 200,
    ) -> None:
        resource = get_resource(self._c.store, session.account_id, resource_id)
        if resource is None:
            raise PageError(404, "Not found", f"There is no resource {resource_id} here.")
        offset = max(0, req.get_param_as_int("offset") or 0)
        rows, total = self._c.store.transaction(
            lambda con: (
                read_rows(con, resource.type, resource.id, limit=PAGE_SIZE, offset=offset),
                count_rows(con, resource.type, resource.id),
            )
        )
        columns = property_names(resource.type)
        self._c.render(
            req,
            resp,
            "resource.html",
            status=status,
            title=f"Resource: {resource.name}",
            nav="resources",
            session=session,
            resource=resource,
            columns=columns,
            rows=[[_cell(row.get(name)) for name in columns] for row in rows],
            offset=offset,
            total=total,
            page_size=PAGE_SIZE,
            notice=notice,
        )

    def on_post(
        self, req: falcon.Request, resp: falcon.Response, plan_id: str, resource_id: int
    ) -> None:
        """`action=default` marks it the account's default; `action=delete` (confirmed)."""
        session = self._c.session(req, plan_id)
        form = self._c.checked_form(req, session)
        action = form.get("action")
        if action == "default":
            if set_default(self._c.store, session.account_id, resource_id) is None:
                raise PageError(404, "Not found", f"There is no resource {resource_id} here.")
            self._c.redirect_with(
                req,
                resp,
                session,
                f"{_base(session)}/resources/{resource_id}",
                notice="Marked as the default.",
            )
        if action == "delete":
            if form.get("confirm") != "yes":
                raise PageError(400, "Not deleted", "Tick the confirmation box to delete.")
            try:
                deleted = delete_resource(self._c.store, session.account_id, resource_id)
            except StoreError as exc:
                raise PageError(409, "Not deleted", str(exc)) from None
            if not deleted:
                raise PageError(404, "Not found", f"There is no resource {resource_id} here.")
            raise ConsoleRedirect(_base(session) + "/resources")
        raise PageError(400, "Bad request", "Unknown action.")


class ResourceCsvDownload:
    """`/plans/{plan_id}/console/resources/{resource_id}/csv`: the rows as a CSV file."""

    def __init__(self, console: Console) -> None:
        self._c = console

    def on_get(
        self, req: falcon.Request, resp: falcon.Response, plan_id: str, resource_id: int
    ) -> None:
        """Download every row."""
        session = self._c.session(req, plan_id)
        resource = get_resource(self._c.store, session.account_id, resource_id)
        if resource is None:
            raise PageError(404, "Not found", f"There is no resource {resource_id} here.")
        resp.content_type = "text/csv; charset=utf-8"
        safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in resource.name)
        resp.downloadable_as = f"{safe or 'resource'}-{resource.id}.csv"
        resp.text = rows_csv(self._c.store, resource)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


class TriggerWebhookAction(_EditorBase):
    """`POST .../connections/{id}/trigger`: the Trigger Webhook button.

    Starts the same Dagster pull run as `GET /sync-api/{id}/webhook`, waits up to the
    webhook wait for it, and redirects to the editor, which shows its outcome once; for a
    longer run its progress, which the page polls through `.../runs/{run_id}`.
    """

    def __init__(self, console: Console, box: SecretBox, runs: LazyPullRuns, wait: float) -> None:
        super().__init__(console, box)
        self._runs = runs
        self._wait = wait

    def on_post(
        self, req: falcon.Request, resp: falcon.Response, plan_id: str, connection_id: int
    ) -> None:
        """Start the pull; the editor it redirects to shows what became of it."""
        session = self._c.session(req, plan_id)
        _connections_allowed(self._c, session)
        self._c.checked_form(req, session)
        connection = _connection_or_404(self._c, session, connection_id)
        runs = self._runs.get()
        run_id = runs.start(connection, "webhook")
        status = runs.wait(run_id, self._wait)
        editor = _editor(session, connection_id)
        progress = None
        if status is not None and status.done:
            notice = (
                f"Pull {status.status}: {status.received} received, {status.inserted} inserted, "
                f"{status.updated} updated, {status.rejected} rejected"
                + (f". {status.message}" if status.message else ".")
            )
        else:
            # The editor says so, with the run linked to its Dagster page when the UI's
            # address is known, as the connection log links it.
            notice = None
            progress = {"url": f"{editor}/runs/{run_id}", "done": editor, "run_id": run_id}
        # The editor shows the outcome (or follows the run) once: a reload starts no pull.
        self._c.redirect_with(req, resp, session, editor, notice=notice, progress=progress)


class RunStatusJson:
    """`GET .../connections/{id}/runs/{run_id}`: a pull run's status for the page's poller."""

    def __init__(self, console: Console, runs: LazyPullRuns) -> None:
        self._c = console
        self._runs = runs

    def on_get(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        plan_id: str,
        connection_id: int,
        run_id: str,
    ) -> None:
        """The run's state as JSON (404 for another connection's run)."""
        session = self._c.session(req, plan_id)
        _connection_or_404(self._c, session, connection_id)
        status = self._runs.get().status(run_id)
        if status is None or status.connection_id != connection_id:
            raise PageError(404, "Not found", "No such run for this connection.")
        resp.content_type = falcon.MEDIA_JSON
        resp.set_header("Cache-Control", "no-store")
        resp.text = json.dumps({**status.to_wire(), "dagster_status": status.dagster_status})
