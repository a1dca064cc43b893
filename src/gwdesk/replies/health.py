"""Is the receiver working: its writer thread runs and its store answers, within a bound.

Asked by `GET /healthz` (a load balancer's or monitor's question) and by the receiver's
watchdog before each ping to systemd. The answer names the failing part only ("store",
"writer"): never where the store is or why, which is for the receiver's own log.

The store's probe (`ReplyStore.ping`) runs on a thread of its own and is waited for at
most `bound` seconds: a store that went away may hold a query for far longer (a pool's
connection wait, a server that no longer answers), and the question must be answered
in time. One probe at a time: while one is still waiting, a question waits for that
one (no pile of threads behind a dead server).
"""

from __future__ import annotations

import concurrent.futures
import threading
from dataclasses import dataclass
from typing import Final

from gwdesk.replies.inbox import ReplyInbox
from gwdesk.store.database import StoreError

HEALTH_BOUND: Final = 1.0
"""Seconds the store has to answer a probe before the receiver counts as failing."""


@dataclass(frozen=True, slots=True)
class Health:
    failing: str | None = None
    """The part that fails ("writer", "store"), None when all works."""

    @property
    def ok(self) -> bool:
        return self.failing is None

    @property
    def text(self) -> str:
        return "ok" if self.failing is None else f"failing: {self.failing}"


class HealthCheck:
    """`check()` from any thread: blocks `bound` seconds at most."""

    def __init__(self, inbox: ReplyInbox, bound: float = HEALTH_BOUND) -> None:
        self.inbox = inbox
        self.bound = bound
        self._lock = threading.Lock()
        self._probe: concurrent.futures.Future[None] | None = None

    def check(self) -> Health:
        if not self.inbox.writer_alive:
            return Health("writer")
        with self._lock:
            probe = self._probe
            if probe is None or probe.done():
                probe = self._probe = self._start_probe()
        try:
            probe.result(self.bound)
        except concurrent.futures.TimeoutError:
            return Health("store")
        except (StoreError, Exception):  # a closed or broken store is as good as away
            return Health("store")
        return Health()

    def _start_probe(self) -> concurrent.futures.Future[None]:
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        store = self.inbox.store

        def probe() -> None:
            try:
                store.ping()
            except BaseException as exc:  # handed to whoever asks, never lost on this thread
                future.set_exception(exc)
            else:
                future.set_result(None)

        threading.Thread(target=probe, name="gwdesk-health-probe", daemon=True).start()
        return future
