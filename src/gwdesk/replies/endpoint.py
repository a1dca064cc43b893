"""The listener's HTTP face: the secret path, the three call shapes, and hostile input.

One catch-all route answers every request, so a wrong path, a wrong secret and a
path that does not exist look identical (404) and the secret path cannot be
probed for. On the secret path, GET reads the query (reply webhook `HTTP`,
`HTTPGET`), POST reads a form body (`HTTPPOST`) or a JSON body (keyword forward),
anything else is a 405. Bodies are read with a size cap and a deadline; request
heads have their own cap and deadline (`connections.py`). No access log: every
request line carries the secret.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final
from zoneinfo import ZoneInfo

from aiohttp import web

from gwdesk.replies.connections import ConnectionGuard
from gwdesk.replies.health import HealthCheck
from gwdesk.replies.inbox import InboxClosed, ReplyInbox
from gwdesk.replies.parse import (
    ParamReader,
    Rejected,
    WebhookClock,
    decode_form,
    reply_from_keyword,
)
from gwdesk.replies.template import ReplyTemplate
from gwdesk.store.database import StoreBusy, StoreError, StoreUnavailable
from gwdesk.store.replies import IncomingReply

log = logging.getLogger("gwdesk.replies.endpoint")
FORM_TYPE: Final = "application/x-www-form-urlencoded"
JSON_TYPE: Final = "application/json"
ALLOWED: Final = "GET, POST"
UTF8_CHARSETS: Final = frozenset({"utf-8", "utf8", "us-ascii", "ascii"})


@dataclass(frozen=True, slots=True)
class ListenerLimits:
    """What the listener tolerates before it refuses a call or drops a connection."""

    max_body: int = 16 * 1024
    """Bytes of a POST body; a reply is at most a few KB even as JSON."""
    header_timeout: float = 10.0
    """Seconds a connection may take to send a whole request head (and may stay idle)."""
    body_timeout: float = 10.0
    """Seconds a request may take to send its body once its head has arrived."""
    max_connections: int = 1000
    """Open connections at most; see `ConnectionGuard` for how room is made."""
    linger: float = 2.0
    """Seconds spent discarding an unread body after a refusal, before the connection closes."""
    max_head: int = 64 * 1024
    """Bytes a connection may send towards its next complete request head: its line and
    headers (a gateway's are under 2 KB), and the body of the request before it, since
    aiohttp's parser does not say where a body ends (see `connections.py`)."""
    max_line: int = 16 * 1024
    """Bytes of the request line: a GET webhook carries the reply's text, percent-encoded."""
    max_field: int = 8190
    """Bytes of one header's name or value (aiohttp's default)."""
    max_headers: int = 64
    """Headers in one request; a gateway sends a handful, a proxy in front adds a few."""


class _ServerLog(logging.LoggerAdapter):  # type: ignore[type-arg]
    """aiohttp's own log lines, one line each and no traceback.

    aiohttp logs every malformed request (garbage bytes, a bad chunk size) as an
    error with a traceback; under attack that would be a flood of them. The
    caller has had its 400 already: a line at INFO says what happened.
    """

    def log(self, level: int, msg: object, *args: object, **kwargs: object) -> None:
        error = kwargs.get("exc_info")
        detail = ""
        if isinstance(error, BaseException):
            detail = f" ({type(error).__name__}: {str(error).strip()[:120]!r})"
        text = str(msg) % args if args else str(msg)
        self.logger.log(min(level, logging.INFO), "%s%s", text, detail)


REFUSALS: Final = {
    400: "malformed",
    404: "not_found",
    405: "method",
    408: "slow_body",
    413: "too_large",
    415: "content_type",
    500: "failed",
}
"""Why a call was refused, by its status: the reasons `ListenerCounts` counts (a fixed set,
so a metric's labels are too; 503s are counted by `_why_not_stored`'s kinds)."""
NOT_STORED: Final = ("stopping", "store_busy", "store_away", "store_refused")
HEALTH_PATH: Final = b"/healthz"


class ListenerCounts:
    """What the listener refused, by reason: counted on the listener's loop, read for
    metrics (every reason is there from the start, so a reader never sees the dict grow)."""

    def __init__(self) -> None:
        self.refused: dict[str, int] = dict.fromkeys([*REFUSALS.values(), *NOT_STORED], 0)

    def refuse(self, status: int, kind: str | None = None) -> None:
        self.refused[kind or REFUSALS.get(status, "failed")] += 1


def _text(status: int, reason: str) -> web.Response:
    return web.Response(status=status, text=reason + "\n", content_type="text/plain")


def _why_not_stored(exc: Exception) -> tuple[str, str]:
    """Why a reply was not stored, for the caller: what kind of trouble, never where the
    store is (a server's host and database are nobody's business outside the office; the
    inbox logs the whole error). With the kind `ListenerCounts` counts it as."""
    if isinstance(exc, InboxClosed):
        return "the listener is stopping", "stopping"
    if isinstance(exc, StoreBusy):
        return "the store is busy", "store_busy"
    if isinstance(exc, StoreUnavailable):
        return "the store cannot be reached", "store_away"
    return "the store refused it", "store_refused"


def _not_found() -> web.Response:
    return _text(404, "Not Found")


def _stopping() -> web.Response:
    response = _text(503, "The reply was not stored (the listener is stopping); try again.")
    response.headers["Retry-After"] = "1"
    response.force_close()
    return response


class ReplyEndpoint:
    """Handles requests on the listener's loop; stores through the inbox's writer thread."""

    def __init__(
        self,
        inbox: ReplyInbox,
        template: ReplyTemplate,
        zone: ZoneInfo,
        limits: ListenerLimits,
        counts: ListenerCounts | None = None,
        health: HealthCheck | None = None,
    ) -> None:
        """`counts`: where refusals are counted; `health`: what `GET /healthz` asks (None:
        no such path, a 404 like any other)."""
        self.inbox = inbox
        self.counts = counts or ListenerCounts()
        self.health = health
        self.template = template
        self.zone = zone
        self.limits = limits
        self._params = ParamReader(template, WebhookClock(zone))
        self._path = template.path.encode("ascii")
        self.guard = ConnectionGuard(limits.max_connections, limits.max_head)
        self.stopping = False
        """Set when the listener stops: a reply call then gets 503 (the gateway retries)."""

    def server(self) -> tuple[web.Server, Callable[[], asyncio.BaseProtocol]]:
        """aiohttp's low-level server (no router: one handler sees every path) and the
        protocol factory to serve it with; call on the listener's loop."""
        options: dict[str, Any] = {
            "logger": _ServerLog(log, {}),
            "access_log": None,
            "keepalive_timeout": self.limits.header_timeout,
            "lingering_time": self.limits.linger,
            "max_line_size": self.limits.max_line,
            "max_field_size": self.limits.max_field,
            "max_headers": self.limits.max_headers,
        }
        web_server = web.Server(self.handle, **options)
        return web_server, self.guard.factory(web_server, **options)

    async def handle(self, request: web.BaseRequest) -> web.StreamResponse:
        protocol = request.protocol
        self.guard.started(protocol)
        try:
            return await self._handle(request)
        finally:
            self.guard.finished(protocol)

    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        path = request.raw_path.partition("?")[0].encode("utf-8", "surrogateescape")
        if path == HEALTH_PATH and self.health is not None and request.method in ("GET", "HEAD"):
            return await self.health_response()
        if not hmac.compare_digest(path, self._path):
            self.counts.refuse(404)
            return _not_found()
        if self.stopping:
            self.counts.refuse(503, "stopping")
            return _stopping()
        try:
            reply = await self._reply(request)
            await self.inbox.add_async([reply])
        except Rejected as exc:
            self.counts.refuse(exc.status)
            log.info("refused a reply call: %d %s", exc.status, exc.reason)
            response = _text(exc.status, exc.reason)
            if exc.status == 405:
                response.headers["Allow"] = ALLOWED
            if exc.close:
                response.force_close()
            return response
        except (StoreError, InboxClosed) as exc:
            why, kind = _why_not_stored(exc)
            self.counts.refuse(503, kind)
            response = _text(503, f"The reply was not stored ({why}); try again.")
            response.headers["Retry-After"] = "1"
            return response
        except ConnectionError:
            self.counts.refuse(400)
            log.debug("a caller hung up before its request was complete")
            return _text(400, "The request was cut short.")
        except Exception:
            # Never a traceback page: the caller learns only that this end failed.
            self.counts.refuse(500)
            log.exception("a reply call failed unexpectedly")
            return _text(500, "The listener failed to handle this call.")
        return web.Response(body=b"OK", content_type="text/plain")

    async def health_response(self) -> web.Response:
        """200 `ok` when the writer runs and the store answers in time, else 503 naming the
        failing part (the check blocks, so it runs on the loop's executor)."""
        assert self.health is not None
        if self.stopping:
            return _text(503, "failing: stopping")
        health = await asyncio.get_running_loop().run_in_executor(None, self.health.check)
        return _text(200 if health.ok else 503, health.text)

    async def _reply(self, request: web.BaseRequest) -> IncomingReply:
        if request.method == "GET":
            return self._params.read(request.rel_url.raw_query_string)
        if request.method != "POST":
            raise Rejected(405, f"{request.method[:20]} is not accepted here; use {ALLOWED}")
        if "Content-Type" not in request.headers:
            raise Rejected(
                415, f"a POST needs a Content-Type: {FORM_TYPE} or {JSON_TYPE}", close=True
            )
        kind = request.content_type
        if kind not in (FORM_TYPE, JSON_TYPE):
            raise Rejected(
                415,
                f"{kind[:60]} is not accepted: a reply webhook posts {FORM_TYPE}, "
                f"a keyword forward {JSON_TYPE}",
                close=True,
            )
        charset = request.charset
        if charset is not None and charset.lower().replace("_", "-") not in UTF8_CHARSETS:
            raise Rejected(415, f"charset {charset[:20]} is not accepted; send UTF-8", close=True)
        body = await self._body(request)
        if kind == JSON_TYPE:
            return reply_from_keyword(body, self.zone)
        return self._params.read(decode_form(body))

    async def _body(self, request: web.BaseRequest) -> bytes:
        limit = self.limits.max_body
        length = request.content_length
        if length is not None and length > limit:
            raise Rejected(
                413, f"the body is {length} bytes; at most {limit} are accepted", close=True
            )
        data = bytearray()
        try:
            async with asyncio.timeout(self.limits.body_timeout):
                while len(data) <= limit:
                    chunk = await request.content.read(limit + 1 - len(data))
                    if not chunk:
                        break
                    data += chunk
        except TimeoutError:
            raise Rejected(
                408, f"the body did not arrive within {self.limits.body_timeout:g} s", close=True
            ) from None
        if len(data) > limit:
            raise Rejected(413, f"the body is over {limit} bytes", close=True)
        return bytes(data)
