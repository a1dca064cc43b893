"""Auto-reply mode: simulated customers answer two-way sends, so demos see replies flow.

A two-way send is one lodged with any ReplyType other than `HEADER` (HTTP, HTTPGET
and HTTPPOST ones also cause a webhook; the others still show in the replies
backfill). One worker task replies in due-time order from a bounded heap, at most
`rate` replies a second, and answers only a seeded fraction of batch messages, so
a 10,000-recipient batch yields a steady trickle rather than a burst.

Some simulated customers opt out (STOP, "stop please"); one who did answers the next
message to their number with START, so a new user sees the console's opt-out list
change both ways. One mentions "stop" without meaning it, which changes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import logging
import random
import sqlite3
from typing import Any, Final

from aiohttp import web

from gwdesk.sandbox.engine import Engine, now_us
from gwdesk.sandbox.state import STATE

log = logging.getLogger("gwdesk.sandbox.autoreply")

CANNED_REPLIES: Final = (
    "Yes, that works for me",
    "Thanks! See you then.",
    "Can we make it Thursday instead?",
    "OK",
    "Who is this?",
    "STOP",
    "stop please",
    "Please don't stop my deliveries",
    "Running 10 min late, sorry 🙏",
    "Yes please 👍",
    "Merci, à demain !",
    "No thanks",
    "Call me back when you can",
    "Confirmed ✅",
)
OPTING_OUT: Final = frozenset({"STOP", "stop please"})
"""Canned replies that opt out; the customer's next answer is `OPTING_IN`."""
OPTING_IN: Final = "START"
DEFAULT_RATE: Final = 5.0
"""Auto-replies a second, at most."""
BATCH_FRACTION: Final = 0.2
"""Share of batch messages that get an answer (seeded draw per message)."""
MAX_PENDING: Final = 1000
"""Scheduled auto-replies held at once; messages beyond it go unanswered."""
MAX_AHEAD_US: Final = 10 * 60 * 1_000_000
"""Messages scheduled further ahead than this get no auto-reply."""
JITTER: Final = (1.0, 1.5)
"""The delay is multiplied by a seeded draw from this range: never sooner than asked."""
MAX_DELAY: Final = 3600.0
MAX_RATE: Final = 1000.0


def is_two_way(message: sqlite3.Row) -> bool:
    return bool(message["reply_type"]) and message["reply_type"] != "HEADER"


class AutoReplier:
    """Schedules and makes the simulated customers' replies."""

    def __init__(
        self,
        engine: Engine,
        rng: random.Random,
        *,
        enabled: bool,
        delay: float,
        rate: float = DEFAULT_RATE,
    ) -> None:
        self._engine = engine
        self._rng = rng
        self.enabled = enabled
        self.delay = delay
        self.rate = rate
        self._heap: list[tuple[int, int, str]] = []
        """(due_us, sequence, message_id): the earliest due reply on top."""
        self._sequence = itertools.count()
        self._next_slot_us = 0
        self._wakeup = asyncio.Event()
        self.unanswered = 0
        """Two-way messages passed over because the pending heap was full."""
        self._stopped: set[str] = set()
        """Numbers whose simulated customer opted out (their next answer opts back in)."""

    def settings(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "delay": self.delay,
            "rate": self.rate,
            "pending": len(self._heap),
        }

    def configure(
        self, *, enabled: bool | None = None, delay: float | None = None, rate: float | None = None
    ) -> None:
        """Change the mode; switching it off drops the replies not yet made."""
        if delay is not None:
            self.delay = delay
        if rate is not None:
            self.rate = rate
            self._next_slot_us = 0
        if enabled is not None:
            self.enabled = enabled
            if not enabled:
                self._heap.clear()
                self._next_slot_us = 0
        self._wakeup.set()

    def on_lodged(self, message: sqlite3.Row) -> None:
        """Engine listener: maybe schedule a customer's answer to a new message."""
        if not self.enabled or not is_two_way(message) or message["final_status"] == "FAILED":
            return
        if message["batch_code"] is not None and self._rng.random() >= BATCH_FRACTION:
            return
        now = now_us()
        start = max(now, message["sent_us"])
        if start - now > MAX_AHEAD_US:
            return
        if len(self._heap) >= MAX_PENDING:
            self.unanswered += 1
            return
        due = start + int(self.delay * self._rng.uniform(*JITTER) * 1_000_000)
        due = max(due, self._next_slot_us)
        self._next_slot_us = due + int(1_000_000 / self.rate)
        heapq.heappush(self._heap, (due, next(self._sequence), message["message_id"]))
        self._wakeup.set()

    async def run(self) -> None:
        """The worker: sleep until the earliest reply is due, make it, repeat."""
        while True:
            self._wakeup.clear()
            if not self._heap:
                await self._wakeup.wait()
                continue
            due, _, message_id = self._heap[0]
            wait = (due - now_us()) / 1_000_000
            if wait > 0:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(wait):
                        await self._wakeup.wait()
                continue
            heapq.heappop(self._heap)
            self._reply_to(message_id)

    def answer(self, number: str) -> str:
        """What the customer at `number` answers: START after their own STOP, else a
        seeded pick of the canned replies."""
        if number in self._stopped:
            self._stopped.discard(number)
            return OPTING_IN
        text = self._rng.choice(CANNED_REPLIES)
        if text in OPTING_OUT:
            self._stopped.add(number)
        return text

    def _reply_to(self, message_id: str) -> None:
        message = self._engine.message(message_id)
        if message is None:
            return
        try:
            self._engine.create_reply(text=self.answer(str(message["to_number"])), message=message)
        except sqlite3.Error:
            log.exception("auto-reply to %s failed", message_id)


AUTO_REPLIER: web.AppKey[AutoReplier] = web.AppKey("gwdesk_auto_replier", AutoReplier)


def register(app: web.Application) -> None:
    """Listen for lodged messages; the worker runs as long as the app."""
    state = app[STATE]
    # Its own generator, seeded from the sandbox seed, so that switching auto-reply on
    # does not change the engine's seeded draws (MessageIds, delivery outcomes).
    seed = None if state.config.seed is None else f"auto-reply:{state.config.seed}"
    replier = AutoReplier(
        state.engine,
        random.Random(seed),
        enabled=state.config.auto_reply,
        delay=state.config.auto_reply_delay,
    )
    app[AUTO_REPLIER] = replier
    state.engine.lodge_listeners.append(replier.on_lodged)
    tasks: list[asyncio.Task[None]] = []

    async def start(app: web.Application) -> None:
        tasks.append(state.spawn(replier.run(), "auto-reply"))

    async def stop(app: web.Application) -> None:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    app.on_startup.append(start)
    app.on_cleanup.append(stop)
