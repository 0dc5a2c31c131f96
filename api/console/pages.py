"""Server-rendered console pages: sign-in, overview, pack playground, stored packs.

Pages live under `/plans/{plan_id}/console/`; the JSON management API keeps
`/plans/{plan_id}/connections` (see docs/console.md). Every page needs a session of the
plan's account; every POST needs the session's CSRF token. Errors on a page render as a
page (with the status code), never as the JSON error body of the API.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import quote

import falcon
import jinja2
from cartonize.errors import CartonizeError, PayloadTooLarge, TooManyRequests
from cartonize.models import PackResponse
from cartonize.service import KeyRing, PackLog
from cartonize.store import ApiKey, Clock, Store, utc_now
from cartonize.sync.crypto import SecretBox
from cartonize.sync.resources import library_resource, list_resources

from api.console.flash import FLASH_COOKIE, FLASH_SECONDS, Flash
from api.console.last_pack import LastPack, LastPacks
from api.console.session import SESSION_COOKIE, SIGN_IN_COOKIE, Session, SessionSigner
from api.resources import CONTROL_BODY_BYTES, PackResource, read_body

__all__ = ["Console", "ConsoleRedirect", "PageError"]

TEMPLATES = Path(__file__).parent / "templates"


SAMPLE_REQUEST = {
    "itemSets": [
        {
            "refId": 1,
            "name": "mug",
            "dimensions": {"x": 4, "y": 4, "z": 5},
            "weight": 1,
            "quantity": 6,
        },
        {
            "refId": 2,
            "name": "book",
            "dimensions": {"x": 9, "y": 6, "z": 1.5},
            "weight": 1.5,
            "quantity": 3,
        },
    ],
    "boxTypes": [
        {
            "refId": 100,
            "name": "small",
            "dimensions": {"x": 10, "y": 8, "z": 6},
            "weightMax": 30,
            "price": 120,
        },
        {
            "refId": 101,
            "name": "medium",
            "dimensions": {"x": 14, "y": 12, "z": 10},
            "weightMax": 50,
            "price": 180,
        },
    ],
}


class PageError(Exception):
    """A page cannot be shown: rendered as an error page with this status."""

    def __init__(self, status: int, title: str, detail: str) -> None:
        super().__init__(f"{status} {title}: {detail}")
        self.status = status
        self.title = title
        self.detail = detail


class ConsoleRedirect(Exception):
    """Send the browser elsewhere (303 See Other), e.g. to sign in."""

    def __init__(self, location: str) -> None:
        super().__init__(location)
        self.location = location


@dataclass
class Console:
    """What every page needs: the store, the pack service, sessions and templates."""

    store: Store
    #: The pack endpoint: the playground packs through its checks and limits.
    packer: PackResource
    log: PackLog
    keys: KeyRing
    signer: SessionSigner
    clock: Clock = utc_now
    secure_cookies: bool = False
    #: Dagster UI's address as browsers reach it ("": not known, runs are not linked).
    dagster_ui_url: str = ""
    #: Encrypts the one-time flash cookie of Post/Redirect/Get (`redirect_with`).
    box: SecretBox | None = None

    def now(self) -> float:
        """The app clock's time as a POSIX timestamp (session expiry)."""
        return self.clock().timestamp()

    def __post_init__(self) -> None:
        self.templates = jinja2.Environment(
            loader=jinja2.FileSystemLoader(TEMPLATES),
            autoescape=True,
            # Response fields are optional (exclude_none): a missing one renders empty.
            undefined=jinja2.Undefined,
        )

    # ------------------------------------------------------------------ plumbing

    def render(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        template: str,
        *,
        status: int = 200,
        **context: Any,
    ) -> None:
        """Render `template` into the response as HTML.

        Templates write their links as `{{ root }}/path`: `root` is the path prefix the
        service is mounted under (WSGI `SCRIPT_NAME`, e.g. gunicorn's `SCRIPT_NAME`
        setting behind a proxy), empty at the root of the site."""
        resp.status = status
        resp.content_type = falcon.MEDIA_HTML
        resp.set_header("Cache-Control", "no-store")
        resp.set_header("X-Frame-Options", "DENY")
        resp.set_header(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; style-src 'self'; "
            "script-src 'self'; frame-ancestors 'none'; form-action 'self'",
        )
        session = context.setdefault("session", None)
        # Every form of a signed-in page carries the session's CSRF token.
        context["csrf"] = self.signer.csrf_token(session) if session is not None else ""
        context.setdefault("nav", "")
        context.setdefault("progress", None)
        context["dagster_ui_url"] = self.dagster_ui_url
        context["root"] = req.root_path
        resp.text = self.templates.get_template(template).render(**context)

    def session(self, req: falcon.Request, plan_id: str) -> Session:
        """The signed-in session for this plan; redirects to sign-in when there is none.

        The session's key must still be active; its record is kept in
        `req.context.api_key` (packs made in the console are stored under it)."""
        session = self.signer.read(req.cookies.get(SESSION_COOKIE), self.now())
        key = self._active_key(session) if session is not None else None
        if session is None or key is None:
            # `next` is a path within the service, like every ConsoleRedirect target.
            here = req.path + (f"?{req.query_string}" if req.query_string else "")
            raise ConsoleRedirect(f"/sign-in?next={quote(here, safe='/?=&')}")
        if session.plan_id != plan_id:
            # Another plan's pages: do not say whether the plan exists.
            raise PageError(404, "Not found", "There is no such page for your plan.")
        req.context.api_key = key
        return session

    def _active_key(self, session: Session) -> ApiKey | None:
        return next(
            (
                key
                for key in self.store.list_keys(session.account_name)
                if key.stem == session.key_stem and key.active
            ),
            None,
        )

    def form(self, req: falcon.Request, limit: int = CONTROL_BODY_BYTES) -> dict[str, str]:
        """The posted urlencoded form fields; 413 when the body is longer than `limit`.

        The body is read (at most `limit` + 1 bytes) before it is parsed: `/sign-in` is
        open to anyone, and Falcon's form handler reads a body of any size."""
        try:
            raw = read_body(req, limit)
        except PayloadTooLarge:
            raise PageError(
                413, "Form too large", f"The form's limit is {limit:,} bytes."
            ) from None
        if not raw:
            return {}
        if req.content_type is None or not req.content_type.lower().startswith(
            falcon.MEDIA_URLENCODED
        ):
            raise PageError(400, "Bad request", "Send the form as a form.")
        try:
            fields = falcon.uri.parse_query_string(raw.decode("ascii"), keep_blank=True)
        except UnicodeDecodeError:
            raise PageError(400, "Bad request", "Send the form as a form.") from None
        # A repeated field is a list: only the first value counts.
        return {str(k): v if isinstance(v, str) else str(v[0]) for k, v in fields.items()}

    def checked_form(
        self, req: falcon.Request, session: Session, limit: int = CONTROL_BODY_BYTES
    ) -> dict[str, str]:
        """The posted form after its CSRF token was checked."""
        fields = self.form(req, limit)
        if not self.signer.check_csrf(session, fields.get("csrf_token")):
            raise PageError(
                403, "Form expired", "The form's security token did not match; reload the page."
            )
        return fields

    def set_cookie(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        name: str,
        value: str,
        max_age: int,
        path: str = "/",
    ) -> None:
        """Set a console cookie: HttpOnly, SameSite=Lax, Secure when served over HTTPS,
        for `path` within the service (under its path prefix, if any)."""
        resp.set_cookie(
            name,
            value,
            max_age=max_age,
            path=req.root_path + path,
            secure=self.secure_cookies,
            http_only=True,
            same_site="Lax",
        )

    # ------------------------------------------------------------------ flash

    def redirect_with(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        session: Session,
        target: str,
        **shown: Any,
    ) -> NoReturn:
        """Post/Redirect/Get: answer 303 to `target`, whose next GET shows `shown` (a
        notice, a new API secret, a run's progress) once (api/console/flash.py)."""
        value = self._flash().issue(session, target, shown, self.now())
        self.set_cookie(req, resp, FLASH_COOKIE, value, max_age=FLASH_SECONDS, path=target)
        raise ConsoleRedirect(target)

    def take_flash(
        self, req: falcon.Request, resp: falcon.Response, session: Session
    ) -> dict[str, Any]:
        """What `redirect_with` left for this page and session, the first time; else {}."""
        raw = req.cookies.get(FLASH_COOKIE)
        if raw is None:
            return {}
        payload = self._flash().read(raw)
        if payload is not None and payload.get("path") != req.path:
            return {}  # another page's, still on its way there
        resp.unset_cookie(FLASH_COOKIE, path=req.root_path + req.path)
        return {} if payload is None else self._flash().take(payload, session, self.now())

    def _flash(self) -> Flash:
        if self.box is None:
            raise RuntimeError("the console was built without a secret box: no flash")
        return Flash(self.box, Path(self.store.data_dir) / "console-flash")

    def last_packs(self) -> LastPacks:
        """Each session's last playground pack, kept for reloads (api/console/last_pack.py)."""
        if self.box is None:
            raise RuntimeError("the console was built without a secret box: no last packs")
        directory = Path(self.store.data_dir) / "console-playground"
        return LastPacks(self.box, directory, self.signer.lifetime_seconds)


def handle_page_error(
    console: Console,
) -> Callable[[falcon.Request, falcon.Response, Exception, Any], None]:
    """Falcon error handler rendering PageError and ConsoleRedirect for console routes."""

    def handler(req: falcon.Request, resp: falcon.Response, ex: Exception, params: Any) -> None:
        if isinstance(ex, ConsoleRedirect):
            resp.status = falcon.HTTP_303
            # Targets are paths within the service: under its path prefix, if any.
            resp.location = req.root_path + ex.location
            resp.text = ""
            return
        assert isinstance(ex, PageError)
        session = console.signer.read(req.cookies.get(SESSION_COOKIE), console.now())
        console.render(
            req,
            resp,
            "error.html",
            status=ex.status,
            title=ex.title,
            detail=ex.detail,
            session=session,
        )

    return handler


# ---------------------------------------------------------------------- sign-in / out


class SignInPage:
    """`/sign-in`: a form that takes an account API key and starts a session."""

    def __init__(self, console: Console) -> None:
        self._c = console

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Show the sign-in form."""
        self._show(req, resp, error=None)

    def _show(
        self, req: falcon.Request, resp: falcon.Response, error: str | None, status: int = 200
    ) -> None:
        token = self._c.signer.new_sign_in_token()
        self._c.set_cookie(req, resp, SIGN_IN_COOKIE, token, max_age=3600)
        self._c.render(
            req,
            resp,
            "sign_in.html",
            status=status,
            title="Sign in",
            sign_in_token=token,
            next=_safe_next(req.get_param("next")),
            error=error,
        )

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Check the key; on success set the session cookie and go to the plan's overview."""
        fields = self._c.form(req)
        cookie = req.cookies.get(SIGN_IN_COOKIE)
        token = fields.get("sign_in_token")
        if not cookie or not token or not _equal(cookie, token):
            raise PageError(403, "Form expired", "Reload the sign-in page and try again.")
        secret = fields.get("api_key", "").strip()
        key = self._c.keys.verify(secret) if secret else None
        account = self._c.store.account_by_id(key.account_id) if key else None
        if key is None or account is None:
            self._show(req, resp, error="That API key is unknown or revoked.", status=401)
            return
        _, value = self._c.signer.issue(
            key_stem=key.stem,
            account_id=account.id,
            account_name=account.name,
            plan_id=account.plan_id,
            now=self._c.now(),
        )
        self._c.set_cookie(
            req, resp, SESSION_COOKIE, value, max_age=self._c.signer.lifetime_seconds
        )
        resp.unset_cookie(SIGN_IN_COOKIE, path=req.root_path + "/")
        nxt = _safe_next(fields.get("next"))
        home = f"/plans/{account.plan_id}/console/"
        raise ConsoleRedirect(nxt if nxt.startswith(f"/plans/{account.plan_id}/") else home)


class SignOutAction:
    """`POST /sign-out`: end the session (CSRF-checked)."""

    def __init__(self, console: Console) -> None:
        self._c = console

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        """Clear the session cookie and return to the sign-in page."""
        session = self._c.signer.read(req.cookies.get(SESSION_COOKIE), self._c.now())
        if session is not None:
            self._c.checked_form(req, session)
            self._c.last_packs().forget(session)
        resp.unset_cookie(SESSION_COOKIE, path=req.root_path + "/")
        raise ConsoleRedirect("/sign-in")


def _safe_next(value: str | None) -> str:
    # Only same-site paths: never an open redirect.
    if value and value.startswith("/") and not value.startswith("//") and "\\" not in value:
        return value
    return ""


def _equal(a: str, b: str) -> bool:
    import hmac

    return hmac.compare_digest(a.encode(), b.encode())


# ---------------------------------------------------------------------- plan pages


class OverviewPage:
    """`/plans/{plan_id}/console/`: the plan's account, its links and its latest packs."""

    def __init__(self, console: Console) -> None:
        self._c = console

    def on_get(self, req: falcon.Request, resp: falcon.Response, plan_id: str) -> None:
        """Show the overview."""
        session = self._c.session(req, plan_id)
        packs = self._c.log.find(
            session.account_id, order_id=None, request_id=None, limit=10, offset=0
        )
        self._c.render(
            req,
            resp,
            "overview.html",
            title="Overview",
            session=session,
            packs=packs,
        )


class PlaygroundPage:
    """`/plans/{plan_id}/console/playground`: edit a pack request, pack it, see the boxes."""

    def __init__(self, console: Console) -> None:
        self._c = console

    def on_get(self, req: falcon.Request, resp: falcon.Response, plan_id: str) -> None:
        """Show the editor with the session's last pack (the request as typed and its
        result), on every reload until the session packs again or starts over; else
        with a sample request."""
        session = self._c.session(req, plan_id)
        last = self._c.last_packs().recall(session, self._c.now())
        if last is not None:
            result = _result_view(PackResponse.model_validate_json(last.response))
            self._show(req, resp, session, last.request, result, None)
            return
        self._show(req, resp, session, json.dumps(SAMPLE_REQUEST, indent=2), None, None)

    def on_post(self, req: falcon.Request, resp: falcon.Response, plan_id: str) -> None:
        """Pack the posted request under the session's key, keep it and its result as
        the session's last pack, then redirect to the editor, which shows them
        (Post/Redirect/Get: a reload packs nothing). "Start over" forgets the last pack.
        A refused request is shown at once, with the endpoint's status: nothing was
        packed, so sending it again changes nothing (and the last pack is kept)."""
        session = self._c.session(req, plan_id)
        # The request may be as long as the endpoint's body limit, and three times that
        # once percent-encoded; the other fields are short.
        form_limit = 3 * self._c.packer.max_body_bytes + CONTROL_BODY_BYTES
        fields = self._c.checked_form(req, session, form_limit)
        target = f"/plans/{session.plan_id}/console/playground"
        if fields.get("action") == "start-over":
            self._c.last_packs().forget(session)
            raise ConsoleRedirect(target)
        text = fields.get("request", "")
        order = fields.get("orderId", "").strip()
        if fields.get("action") == "pack-order" and order:
            text = json.dumps(self._order_request(session, order), indent=2)
        try:
            # The endpoint's own checks: body size, item limit, the key's rate limit.
            key: ApiKey = req.context.api_key
            _, answer = self._c.packer.pack(req, text.encode(), session_key=key)
        except CartonizeError as error:
            if isinstance(error, TooManyRequests):
                resp.set_header("Retry-After", str(error.retry_after))
            problem = {"message": error.message, "details": error.details or ""}
            self._show(req, resp, session, text, None, problem, status=error.status)
            return
        # The request and the response (pictures included: megabytes) wait on the server,
        # not in a cookie (api/console/last_pack.py).
        self._c.last_packs().keep(session, LastPack(text, answer))
        raise ConsoleRedirect(target)

    def _order_request(self, session: Session, order_id: str) -> dict[str, Any]:
        """A request packing a library order into the account's cartons (when it has some)."""
        request: dict[str, Any] = {"orderId": order_id}
        if list_resources(self._c.store, session.account_id, "cartons"):
            request["boxTypeSets"] = ["customer"]
        return request

    def _orders(self, session: Session) -> list[str]:
        """Order ids of the account's orders resource (the default, else the newest)."""

        def read(con: Any) -> list[str]:
            resource_id = library_resource(con, session.account_id, "orders")
            if resource_id is None:
                return []
            rows = con.execute(
                "SELECT DISTINCT CAST(orderId AS VARCHAR) AS o FROM resource_orders "
                "WHERE resource_id = ? ORDER BY o LIMIT 500",
                [resource_id],
            ).fetchall()
            return [str(row[0]) for row in rows]

        result: list[str] = self._c.store.transaction(read)
        return result

    def _show(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        session: Session,
        text: str,
        result: dict[str, Any] | None,
        problem: dict[str, str] | None,
        status: int = 200,
    ) -> None:
        self._c.render(
            req,
            resp,
            "playground.html",
            status=status,
            title="Pack playground",
            session=session,
            request_text=text,
            result=result,
            problem=problem,
            orders=self._orders(session),
        )


class StoredPackPage:
    """`/plans/{plan_id}/console/packs/{pack_uuid}`: one stored pack of the account."""

    def __init__(self, console: Console) -> None:
        self._c = console

    def on_get(
        self, req: falcon.Request, resp: falcon.Response, plan_id: str, pack_uuid: str
    ) -> None:
        """Show the stored request's totals, pictures and items."""
        session = self._c.session(req, plan_id)
        record = self._c.log.get(pack_uuid)
        if record is None or record.account_id != session.account_id:
            raise PageError(404, "Not found", "No pack of your account has this packUuid.")
        response = PackResponse.model_validate_json(record.response_json)
        self._c.render(
            req,
            resp,
            "pack.html",
            title=f"Pack {pack_uuid}",
            session=session,
            record=record,
            request_text=json.dumps(json.loads(record.request_json), indent=2),
            result=_result_view(response),
        )


def _result_view(response: PackResponse) -> dict[str, Any]:
    """What the result partial shows: totals, and per box its picture and items."""
    wire = response.model_dump(mode="json", by_alias=True, exclude_none=True)
    # With imageFormat png the pictures are in `images`, by box index, already base64.
    pngs = {i["boxIndex"]: i["data"] for i in wire.get("images", []) if i.get("format") == "png"}
    boxes = []
    for index, entry in enumerate(wire.get("boxes", [])):
        box = entry["box"]
        picture = None
        if box.get("svg"):
            picture = "data:image/svg+xml;base64," + base64.b64encode(box["svg"].encode()).decode()
        elif index in pngs:
            picture = "data:image/png;base64," + pngs[index]
        items = [wrapped["item"] for wrapped in box.get("items", [])]
        boxes.append({"box": box, "picture": picture, "units": items})
    return {"wire": wire, "boxes": boxes, "leftovers": wire.get("leftovers", [])}
