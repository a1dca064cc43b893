"""The receiver's back-fill on start: the replies the gateway received while nothing
listened, fetched on a thread and loop of its own while the listener already answers.

Its result is an event (`backfill`, with what was fetched and what was missing) and,
with `--metrics`, counted; a failure is an event too, never a traceback over the
reply lines.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from datetime import UTC, datetime
from typing import Final

from gwdesk.cli.receiver_log import EventOutput
from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.replies import InboxClosed, ReplyInbox, backfill, suggested_start
from gwdesk.replies.backfill import BackfillResult
from gwdesk.replies.metrics import ReceiverMetrics

FINISH_GRACE: Final = 0.3
"""Seconds a stopping receiver gives a back-fill to finish before cancelling it."""


class Backfill:
    """One back-fill on a thread and loop of its own; `stop()` cancels it where it is (what it
    stored stays stored; the next start fetches the rest)."""

    def __init__(
        self,
        profile: Profile,
        password: Secret,
        inbox: ReplyInbox,
        out: EventOutput,
        metrics: ReceiverMetrics | None = None,
    ) -> None:
        self.profile = profile
        self.password = password
        self.inbox = inbox
        self.out = out
        self.metrics = metrics
        self._lock = threading.Lock()
        self._task: asyncio.Task[tuple[datetime, BackfillResult]] | None = None
        self._stopped = False
        self._thread = threading.Thread(target=self._target, name="gwdesk-backfill", daemon=True)

    def start(self) -> Backfill:
        self._thread.start()
        return self

    def stop(self, timeout: float) -> None:
        """Let a back-fill that is about to end say what it found (`FINISH_GRACE`), then
        cancel it; wait up to `timeout` seconds in all."""
        ends = time.monotonic() + timeout
        self._thread.join(min(timeout, FINISH_GRACE))
        with self._lock:
            self._stopped = True
            task = self._task
        if task is not None:
            with contextlib.suppress(RuntimeError):  # its loop has closed: it has ended
                task.get_loop().call_soon_threadsafe(task.cancel)
        self._thread.join(max(ends - time.monotonic(), 0.0))

    async def _run(self) -> tuple[datetime, BackfillResult]:
        from gwdesk.gateway.service import GatewayService

        async with GatewayService(self.profile, self.password) as service:
            start = suggested_start(self.inbox.store, datetime.now(UTC))
            return start, await backfill(service, self.inbox, start)

    async def _cancellable(self) -> tuple[datetime, BackfillResult]:
        with self._lock:
            if self._stopped:
                raise asyncio.CancelledError
            self._task = asyncio.ensure_future(self._run())
        return await self._task

    def _failed(self, message: str) -> None:
        if self.metrics is not None:
            self.metrics.backfill_failed()
        self.out.event("backfill", f"backfill failed: {message}", level="warning", ok=False)

    def _target(self) -> None:
        from gwdesk.gateway.errors import GatewayError

        try:
            start, result = asyncio.run(self._cancellable())
        except (InboxClosed, asyncio.CancelledError):
            return  # stopped meanwhile
        except GatewayError as exc:
            self._failed(exc.message)
            return
        except Exception as exc:  # a note, never a traceback over the reply lines
            self._failed(f"{type(exc).__name__}: {exc}")
            return
        if self.metrics is not None:
            self.metrics.backfilled(result.fetched, result.added)
        with self._lock:
            if self._stopped:
                return  # the receiver said "stopped": nothing after that
            self.out.event(
                "backfill",
                f"backfill since {start.astimezone(self.profile.zone):%Y-%m-%d %H:%M}: "
                f"{result.fetched} at the gateway, {result.added} were missing",
                ok=True,
                fetched=result.fetched,
                added=result.added,
            )
