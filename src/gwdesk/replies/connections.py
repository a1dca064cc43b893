"""The listener's connections: how many it holds, and how much of a request head each may hold.

aiohttp bounds one request line, one header and the number of headers, but not
their sum: 128 headers of 8 KB each is a megabyte per connection, held in memory
until the head ends. A thousand connections sending such heads without finishing
them cost gigabytes, and the listener shares the console's process. So the bytes
a connection sends before its next request head is complete are counted, and a
connection over its budget is answered 431 and closed: with `ConnectionGuard`'s
cap on connections, the memory held by unfinished requests is at most
`limit × budget`, whatever the callers do. The time a head may take is bounded
too (the server's keep-alive time-out, which aiohttp also applies to a
connection that has not yet sent a complete request).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Final

from aiohttp import web

log = logging.getLogger("gwdesk.replies.endpoint")

_REFUSED: Final = (
    b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
)
_TOO_LARGE_TEXT: Final = b"The request head is too large.\n"
_HEAD_TOO_LARGE: Final = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n"
    b"Content-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s"
    % (len(_TOO_LARGE_TEXT), _TOO_LARGE_TEXT)
)


class _Refused(asyncio.Protocol):
    """A connection turned away at once: every slot holds a request being handled."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if isinstance(transport, asyncio.WriteTransport):
            transport.write(_REFUSED)
        transport.close()


class HeadLimitedHandler(web.RequestHandler):
    """aiohttp's connection protocol, cut off when a request head runs over `budget` bytes.

    aiohttp's parser does not say where a request's body ends and the next head
    begins, so what is counted is every byte since the last complete head: the
    budget covers a head and the body before it.
    """

    def __init__(
        self,
        manager: web.Server,
        *,
        budget: int,
        busy: set[web.RequestHandler],
        **options: Any,
    ) -> None:
        super().__init__(manager, **options)
        self._budget = budget
        self._room = budget
        self._heads = 0
        self._busy = busy

    def data_received(self, data: bytes) -> None:
        heads = self._request_count
        if heads != self._heads:
            self._heads = heads
            self._room = self._budget
        if 0 < len(data) <= self._room:  # the usual read: it fits whole, so no copies of it
            self._room -= len(data)
            super().data_received(data)
            return
        while True:
            heads = self._request_count  # complete heads so far, however they were parsed
            if heads != self._heads:
                self._heads = heads
                self._room = self._budget
            if not data:
                return
            if self._room <= 0:
                self._cut_off()
                return
            # Never more than the room left reaches the parser, so it never holds more.
            piece, data = data[: self._room], data[self._room :]
            super().data_received(piece)
            self._room -= len(piece)

    def _cut_off(self) -> None:
        log.debug("cut off a request head over %d bytes", self._budget)
        transport = self.transport
        if transport is not None and self not in self._busy:  # else a response is under way
            transport.write(_HEAD_TOO_LARGE)
        self.force_close()


class ConnectionGuard:
    """At most `limit` open connections; room is made where an attacker would sit.

    When full, the connection closed is the oldest that never delivered a request
    (a slowloris client, an idle hoarder), else the oldest idle one; a request being
    handled is never cut. If every connection is busy the newcomer is turned away.
    """

    def __init__(self, limit: int, budget: int) -> None:
        self.limit = limit
        self.budget = budget
        """Bytes a connection may send towards one request head (see `HeadLimitedHandler`)."""
        self.busy: set[web.RequestHandler] = set()
        self._served: set[web.RequestHandler] = set()
        self._closing: set[web.RequestHandler] = set()

    def started(self, protocol: web.RequestHandler) -> None:
        self.busy.add(protocol)
        self._served.add(protocol)

    def finished(self, protocol: web.RequestHandler) -> None:
        self.busy.discard(protocol)

    def factory(self, web_server: web.Server, **options: Any) -> Callable[[], asyncio.BaseProtocol]:
        """Protocols for the listening socket; `options` are `web.RequestHandler`'s."""

        def make() -> asyncio.BaseProtocol:
            connections = web_server.connections  # in the order they were made
            live = set(connections)
            self._served &= live
            self._closing &= live
            open_ones = [c for c in connections if c not in self._closing]
            if len(open_ones) >= self.limit:
                idle = [c for c in open_ones if c not in self.busy]
                never_served = [c for c in idle if c not in self._served]
                victims = never_served or idle
                if not victims:
                    return _Refused()
                self._closing.add(victims[0])
                victims[0].force_close()
            return HeadLimitedHandler(
                web_server,
                budget=self.budget,
                busy=self.busy,
                loop=asyncio.get_running_loop(),
                **options,
            )

        return make
