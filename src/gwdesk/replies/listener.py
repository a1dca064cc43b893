"""The reply listener: an aiohttp server on its own thread and event loop.

Its own loop keeps it answering while a GUI is busy (and keeps Qt out of it
entirely); storing happens on the inbox's writer thread. The socket is bound on
the caller's thread before the loop starts, so a taken port is reported at once,
with a free one to offer instead. It binds to 127.0.0.1 unless told otherwise;
any other address comes with a warning to show the operator, because then anyone
who can reach the machine and learns the secret path can add replies.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final
from zoneinfo import ZoneInfo

from aiohttp import web

from gwdesk.domain.profile import is_loopback
from gwdesk.replies.endpoint import ListenerCounts, ListenerLimits, ReplyEndpoint
from gwdesk.replies.feed import FeedCallback, Subscription
from gwdesk.replies.health import HealthCheck
from gwdesk.replies.inbox import ReplyInbox
from gwdesk.replies.template import DEFAULT_FIELDS, ReplyTemplate, public_address

log = logging.getLogger("gwdesk.replies.listener")
LOOPBACK: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8642
"""The port tried first when none is given or remembered for the profile."""
SUGGESTION_RANGE: Final = 20
WILDCARDS: Final = frozenset({"", "0.0.0.0", "::"})  # noqa: S104 - named to be recognised
BACKLOG: Final = 1024
SHUTDOWN_GRACE: Final = 2.0
"""Seconds requests in progress get to finish when the listener stops (by default)."""


class ListenerError(Exception):
    """The listener cannot start; the message says why and what to do."""


class PortInUseError(ListenerError):
    def __init__(self, host: str, port: int, suggestion: int | None) -> None:
        offer = f"; port {suggestion} is free" if suggestion else ""
        super().__init__(f"Port {port} on {host} is already in use{offer}.")
        self.port = port
        self.suggestion = suggestion


@dataclass(frozen=True, slots=True)
class MetricsPage:
    """`GET /metrics` on a port of its own (never the reply port, which a reverse proxy
    may publish): `render()` gives the body, on the listener's loop."""

    host: str
    port: int
    render: Callable[[], bytes]
    content_type: str


@dataclass(frozen=True, slots=True)
class ListenerInfo:
    host: str
    port: int
    template: ReplyTemplate
    warning: str | None
    """Set when bound to an address other machines can reach."""
    metrics_port: int | None = None
    """Where `GET /metrics` answers (on the metrics page's host), when it does."""

    @property
    def address(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{shown}:{self.port}"


def remote_warning(host: str) -> str | None:
    if is_loopback(host):
        return None
    where = "every network interface" if host in WILDCARDS else host
    return (
        f"The reply listener is reachable from other machines ({where}): anyone who learns "
        "its ReplyPath can add replies, and the calls are not encrypted. Bind to 127.0.0.1 "
        "and put a TLS reverse proxy or tunnel in front unless this network is trusted."
    )


def _address(host: str, port: int) -> tuple[int, tuple[object, ...]]:
    try:
        infos = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as exc:
        raise ListenerError(f"Cannot listen on {host!r}: {exc.strerror}.") from None
    family, _, _, _, address = infos[0]
    return family, address


def _try_bind(host: str, port: int) -> socket.socket:
    family, address = _address(host, port)
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except BaseException:
        sock.close()
        raise
    return sock


def suggest_free_port(host: str, taken: int) -> int | None:
    """A port near `taken` that is free right now (else any free one the system offers)."""
    candidates = [p for p in range(taken + 1, taken + 1 + SUGGESTION_RANGE) if p < 65536]
    for candidate in [*candidates, 0]:
        try:
            with _try_bind(host, candidate) as probe:
                return int(probe.getsockname()[1])
        except (OSError, ListenerError):
            continue
    return None


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on (host, port), or a `ListenerError` that says what to do."""
    try:
        sock = _try_bind(host, port)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise PortInUseError(host, port, suggest_free_port(host, port)) from None
        if exc.errno == errno.EACCES:
            raise ListenerError(
                f"Port {port} needs administrator rights; use a port above 1023."
            ) from None
        if exc.errno == errno.EADDRNOTAVAIL:
            raise ListenerError(f"{host} is not an address of this machine.") from None
        raise ListenerError(f"Cannot listen on {host}:{port}: {exc.strerror or exc}.") from None
    sock.listen(BACKLOG)
    sock.setblocking(False)
    return sock


class ReplyListener:
    """Start, stop and describe the listener; replies go into `inbox`.

    `port=None` uses the port remembered for the profile (else `DEFAULT_PORT`), so
    the `ReplyPath` configured at the gateway keeps working across restarts; the
    port actually bound is remembered, unless an ephemeral one (0) was asked for.
    `zone` is the gateway account's time zone, in which webhook times are read.
    """

    def __init__(
        self,
        inbox: ReplyInbox,
        zone: ZoneInfo,
        *,
        host: str = LOOPBACK,
        port: int | None = None,
        public_host: str | None = None,
        public_url: str | None = None,
        fields: tuple[tuple[str, str], ...] = DEFAULT_FIELDS,
        limits: ListenerLimits | None = None,
        counts: ListenerCounts | None = None,
        health: HealthCheck | None = None,
        metrics: MetricsPage | None = None,
    ) -> None:
        """`public_host`: the host name the ReplyPath gives (default: the bound one);
        `public_url`: the whole address instead (`https://replies.example.org`, a
        reverse proxy in front: its scheme and port too). `counts`: where refusals are
        counted; `health`: what `GET /healthz` asks (none: no such path); `metrics`: a
        second port for `GET /metrics`."""
        self.inbox = inbox
        self.zone = zone
        self.host = host
        self.port = port
        self.public_host = public_host
        self.public = public_address(public_url) if public_url else None
        self.fields = fields
        self.limits = limits or ListenerLimits()
        self.counts = counts or ListenerCounts()
        self.health = health
        self.metrics = metrics
        self._info: ListenerInfo | None = None
        self._endpoint: ReplyEndpoint | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._grace = SHUTDOWN_GRACE

    @property
    def running(self) -> bool:
        return self._info is not None

    @property
    def info(self) -> ListenerInfo | None:
        return self._info

    @property
    def requests_in_progress(self) -> int:
        """Requests being handled right now (waiting for their body or their commit)."""
        return len(self._endpoint.guard.busy) if self._endpoint is not None else 0

    @property
    def template(self) -> ReplyTemplate:
        if self._info is None:
            raise ListenerError("The reply listener is not running.")
        return self._info.template

    def _template(self, port: int, secret: str) -> ReplyTemplate:
        """The ReplyPath the gateway is given: this listener's address, or the public one."""
        if self.public is not None:
            scheme, host, public_port = self.public
            return ReplyTemplate(host, public_port, secret, self.fields, scheme)
        advertised = self.public_host or (
            socket.gethostname() if self.host in WILDCARDS else self.host
        )
        return ReplyTemplate.generate(advertised, port, secret, self.fields)

    def responsive(self, timeout: float) -> bool:
        """Whether the listener's loop runs a callback within `timeout` seconds (a loop
        that is blocked or gone answers no gateway either)."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or not thread.is_alive():
            return False
        turned = threading.Event()
        try:
            loop.call_soon_threadsafe(turned.set)
        except RuntimeError:  # closed
            return False
        return turned.wait(timeout)

    def subscribe(self, callback: FeedCallback) -> Subscription:
        """Batches of stored replies, delivered on the writer thread (see `gwdesk.replies.feed`)."""
        return self.inbox.subscribe(callback)

    def start(self, timeout: float = 10.0) -> ListenerInfo:
        """Bind and serve (starting the inbox if need be); a running listener is left as is.

        Raises `PortInUseError` (with a free port to offer) or `ListenerError`.
        """
        if self._info is not None:
            return self._info
        store = self.inbox.store
        wanted = self.port if self.port is not None else store.remembered_port() or DEFAULT_PORT
        sock = bind(self.host, wanted)
        metrics_sock: socket.socket | None = None
        try:
            port = int(sock.getsockname()[1])
            template = self._template(port, store.secret())
            if self.metrics is not None:
                metrics_sock = bind(self.metrics.host, self.metrics.port)
        except BaseException:
            sock.close()
            raise
        endpoint = ReplyEndpoint(
            self.inbox, template, self.zone, self.limits, self.counts, self.health
        )
        self.inbox.start()
        ready = threading.Event()
        failure: list[BaseException] = []
        loop = asyncio.new_event_loop()
        thread = threading.Thread(
            target=self._run,
            args=(loop, sock, endpoint, ready, failure, metrics_sock),
            name="gwdesk-reply-listener",
            daemon=True,
        )
        thread.start()
        if not ready.wait(timeout) or failure:
            sock.close()
            if metrics_sock is not None:
                metrics_sock.close()
            if thread.is_alive() and not loop.is_closed():
                loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout)
            reason = failure[0] if failure else "it did not start in time"
            raise ListenerError(f"The reply listener could not start: {reason}.")
        self._loop, self._thread, self._endpoint = loop, thread, endpoint
        if wanted != 0:
            store.remember_port(port)
        metrics_port = int(metrics_sock.getsockname()[1]) if metrics_sock is not None else None
        self._info = ListenerInfo(
            self.host, port, template, remote_warning(self.host), metrics_port
        )
        log.info("reply listener on %s", self._info.address)
        return self._info

    def stop(self, timeout: float = 10.0, grace: float = SHUTDOWN_GRACE) -> None:
        """Stop accepting, let requests in progress finish for up to `grace` seconds (new
        ones meanwhile are answered 503), close the socket."""
        loop, thread, endpoint = self._loop, self._thread, self._endpoint
        self._info = self._loop = self._thread = self._endpoint = None
        if loop is None or thread is None:
            return
        if endpoint is not None:
            endpoint.stopping = True
        self._grace = grace
        if thread.is_alive():
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout)

    def __enter__(self) -> ReplyListener:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- the listener thread ---------------------------------------------------------------

    def _run(
        self,
        loop: asyncio.AbstractEventLoop,
        sock: socket.socket,
        endpoint: ReplyEndpoint,
        ready: threading.Event,
        failure: list[BaseException],
        metrics_sock: socket.socket | None,
    ) -> None:
        asyncio.set_event_loop(loop)

        async def open_servers() -> list[tuple[web.Server, asyncio.Server]]:
            web_server, factory = endpoint.server()
            opened = [(web_server, await loop.create_server(factory, sock=sock, backlog=BACKLOG))]
            if metrics_sock is not None and self.metrics is not None:
                page = web.Server(_metrics_handler(self.metrics, endpoint), access_log=None)
                opened.append((page, await loop.create_server(page, sock=metrics_sock)))
            return opened

        try:
            servers = loop.run_until_complete(open_servers())
        except Exception as exc:
            failure.append(exc)
            ready.set()
            loop.close()
            return
        ready.set()
        try:
            loop.run_forever()
        finally:
            for web_server, server in servers:
                loop.run_until_complete(self._shutdown(server, web_server, self._grace))
            leftovers = asyncio.all_tasks(loop)
            for task in leftovers:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*leftovers, return_exceptions=True))
            loop.close()

    @staticmethod
    async def _shutdown(server: asyncio.Server, web_server: web.Server, grace: float) -> None:
        """Stop accepting, close idle connections, give requests in progress `grace` seconds
        (one still waiting then is cancelled: not acknowledged, so the gateway retries)."""
        server.close()
        web_server.pre_shutdown()
        try:
            async with asyncio.timeout(grace):
                await web_server.shutdown(grace)
                await server.wait_closed()
        except TimeoutError:
            log.debug("reply listener connections still open at shutdown")


def _metrics_handler(
    page: MetricsPage, endpoint: ReplyEndpoint
) -> Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]:
    """The metrics port's one page (and `/healthz`, for a monitor that only reaches it)."""

    async def handle(request: web.BaseRequest) -> web.StreamResponse:
        if request.method not in ("GET", "HEAD"):
            return web.Response(status=405, text="GET only\n", headers={"Allow": "GET"})
        if request.path == "/metrics":
            body = page.render()
            return web.Response(body=body, headers={"Content-Type": page.content_type})
        if request.path == "/healthz" and endpoint.health is not None:
            return await endpoint.health_response()
        return web.Response(status=404, text="Not Found\n")

    return handle
