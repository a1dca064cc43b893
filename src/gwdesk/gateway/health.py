"""Whether the gateway answers: a watch on every exchange of one profile's pooled client.

A hung gateway otherwise shows only as a send that says "Sending…" for minutes while
the status bar stays green. Every request of the profile's client (REST, the Lodge
calls and the WSDL, which share it) passes through `WatchedTransport`, which starts a
clock for it: a request with no answer after `NOT_ANSWERING_AFTER` seconds makes the
watch say the gateway is not answering (which host, since when); any answer from that
host makes it say it answers again; a request that fails or is cancelled only stops its
clock (it proves nothing either way). "No answer for" counts from when the oldest
waiting request left, or from the host's last answer if that came later: a host that
answers one request while another waits is silent again `NOT_ANSWERING_AFTER` seconds
after its last answer. An answer is the status line and headers: a body
that trickles in is the exchange's own time-outs' business.

The watch is one object per profile (`GatewayService.health`), never module state; it
tells its subscribers on the event loop's thread, only when its verdict changes.
Qt-free.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import httpx

log = logging.getLogger("gwdesk.gateway.health")
#: Seconds a request may wait for its answer before the gateway counts as not answering.
NOT_ANSWERING_AFTER: Final = 3.0
Clock = Callable[[], float]


@dataclass(frozen=True, slots=True)
class Answering:
    """The watch's verdict: the gateway answers, or `host` has not since `since`."""

    answering: bool = True
    host: str = ""
    since: float = 0.0
    """When (by the watch's clock) the oldest request waiting for the host left, or the
    host last answered, whichever is later: "no answer for" counts from here."""

    def waited(self, now: float) -> float:
        """Seconds without an answer (0 while it answers)."""
        return 0.0 if self.answering else max(0.0, now - self.since)


Listener = Callable[[Answering], None]


@dataclass(slots=True)
class _Waiting:
    host: str
    started: float


class GatewayHealth:
    """One profile's watch (see the module docstring)."""

    def __init__(self, *, after: float = NOT_ANSWERING_AFTER, clock: Clock = time.monotonic):
        self.after = after
        self.clock = clock
        self.state = Answering()
        self._waiting: dict[int, _Waiting] = {}
        self._answered: dict[str, float] = {}
        """The last answer of each host, by the watch's clock."""
        self._listeners: list[Listener] = []
        self._timer: asyncio.TimerHandle | None = None
        self._ids = itertools.count(1)

    def __repr__(self) -> str:
        return f"GatewayHealth({self.state!r}, waiting={len(self._waiting)})"

    @property
    def waiting(self) -> int:
        """Requests waiting for their answer now."""
        return len(self._waiting)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener` with each new verdict; returns what unsubscribes it."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    # ---- the transport's three events -------------------------------------------------

    def started(self, host: str) -> int:
        """A request left for `host`: its clock starts; the token stops it."""
        token = next(self._ids)
        self._waiting[token] = _Waiting(host, self.clock())
        if self._timer is None:  # a timer set is due no later than this request's look
            self._schedule()
        return token

    def answered(self, token: int) -> None:
        """Its answer arrived: the host answers."""
        waiting = self._waiting.pop(token, None)
        if waiting is None:
            return
        self._answered[waiting.host] = self.clock()
        if not self.state.answering or self._timer is None:
            self._judge()
        elif not self._waiting:
            self._cancel_timer()
        # Else nothing can have changed but through a look already due: the timer set
        # fires no later than any waiting request's, and then judges and sets the next.

    def ended(self, token: int) -> None:
        """It failed or was cancelled without an answer: its clock stops, nothing more."""
        self._waiting.pop(token, None)
        if not self._waiting:
            self._cancel_timer()

    def close(self) -> None:
        """The profile is closing: no timer left behind, nobody told any more."""
        self._cancel_timer()
        self._waiting.clear()
        self._listeners.clear()

    # ---- the verdict ------------------------------------------------------------------

    def _silent_from(self, waiting: _Waiting) -> float:
        """Since when a waiting request's host has said nothing: the request left, or
        the host last answered (any request) after that."""
        return max(waiting.started, self._answered.get(waiting.host, waiting.started))

    def _judge(self) -> None:
        now = self.clock()
        overdue = [
            (self._silent_from(w), w.host)
            for w in self._waiting.values()
            if now >= self._silent_from(w) + self.after
        ]
        verdict = Answering()
        if overdue:
            since, host = min(overdue)
            verdict = Answering(False, host, since)
        if verdict != self.state:
            self.state = verdict
            if verdict.answering:
                log.info("the gateway answers again")
            else:
                log.warning("%s is not answering", verdict.host)
            for listener in list(self._listeners):
                listener(verdict)
        self._schedule()

    def _schedule(self) -> None:
        """Look again when the next waiting request has waited `after` seconds since its
        host last said anything."""
        now = self.clock()
        due = [
            at
            for at in (self._silent_from(w) + self.after for w in self._waiting.values())
            if at > now
        ]
        self._cancel_timer()
        if not due:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._timer = loop.call_later(min(due) - now, self._judge)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class WatchedTransport(httpx.AsyncBaseTransport):
    """The client's transport with the watch on every request (see the module docstring)."""

    def __init__(self, inner: httpx.AsyncBaseTransport, health: GatewayHealth) -> None:
        self.inner = inner
        self.health = health

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        token = self.health.started(request.url.host)
        try:
            response = await self.inner.handle_async_request(request)
        except BaseException:
            self.health.ended(token)
            raise
        self.health.answered(token)
        return response

    async def aclose(self) -> None:
        self.health.close()
        await self.inner.aclose()
