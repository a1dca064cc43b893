"""The console sends the profile's scheduled sends as they fall due, while it is open.

For each profile the session opens, `ScheduledServing` first asks the core which sends
were missed (due while nothing ran: a one-desk profile whose console was closed). If
any were, it asks once: Send now (they go at once, late) or Review (the Scheduled tab
is shown, and they stay held until the operator sends, moves or cancels each; every
send due after them goes at its time). Then it serves (`ScheduledSends.serve`) until
the profile's session closes. Each send that goes is said in the status bar, and the
session's `sent` follows it as it follows any send (`Sending.on_outcome`: the log sync
and the credits); the Scheduled view reads the schedule again. A store that cannot be
read now (a team's server away) stops nothing: it is said, and tried again later.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import datetime
from typing import Final

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QMainWindow, QMessageBox

from gwdesk.app.scheduled import NAP, ScheduledSend, ScheduledSends
from gwdesk.app.scheduled_view import missed_question, review_since, went_text
from gwdesk.app.sending import Outcome
from gwdesk.domain.errors import GatewayError, StoreError
from gwdesk.ui.scheduled.questions import missed_box
from gwdesk.ui.session import Session
from gwdesk.ui.tasks import TaskRunner, alive
from gwdesk.ui.widgets.question import answered

log = logging.getLogger("gwdesk.ui.scheduled")
SERVE_KEY: Final = "scheduled-serve"
MESSAGE_MS: Final = 20_000
RETRY_S: Final = NAP.total_seconds()
"""How long serving waits before trying a store that could not be read again."""


class ScheduledServing(QObject):
    """Serves the session's scheduled sends (see the module docstring)."""

    def __init__(
        self,
        window: QMainWindow,
        session: Session,
        tasks: TaskRunner,
        *,
        review: Callable[[], object] = lambda: None,
    ) -> None:
        """`review`: shows the Scheduled tab (the operator chose to review missed sends)."""
        super().__init__(window)
        self.window = window
        self.review = review
        self.session = session
        self.tasks = tasks
        self.serving: ScheduledSends | None = None
        """The profile's scheduled sends being served now (None: none)."""
        self.since: datetime | None = None
        """Where serving started after the missed question: sends due before it wait for
        the operator (None: every due send goes)."""
        self.question: QMessageBox | None = None
        """The missed question while it is open."""
        self.started = False
        """Serving has begun for the current profile (after the question, if one was asked)."""
        self._stop: asyncio.Event | None = None
        session.changed.connect(self._session_changed)
        session.closing.connect(self.stop)

    def _session_changed(self) -> None:
        scheduled = self.session.scheduled
        if scheduled is self.serving:
            return
        self.stop()
        if scheduled is None:
            return
        stop = self._stop = asyncio.Event()
        self.serving = scheduled
        self.tasks.run(
            self._serve(scheduled, stop),
            key=SERVE_KEY,
            owner=self,
            context="sending scheduled sends",
        )

    def stop(self) -> None:
        """Serve no more (the profile's session is closing): a send under way is
        interrupted, and the outbox settles it when the profile opens again."""
        if self._stop is not None:
            self._stop.set()
            self._stop = None
        self.serving = None
        self.started = False
        self.since = None
        self.tasks.cancel(SERVE_KEY, owner=self)

    async def _serve(self, scheduled: ScheduledSends, stop: asyncio.Event) -> None:
        missed = await self._missed(scheduled, stop)
        if missed is None:
            return
        since = None
        if missed and not await self._send_missed(missed, scheduled.now()):
            since = review_since(missed)
            self.review()
        self.since, self.started = since, True
        while not stop.is_set():
            try:
                await scheduled.serve(stop, since=since, told=self._told)
            except (StoreError, GatewayError) as exc:
                self._say(f"Scheduled sends could not be looked at: {exc}. Trying again soon.")
                await _pause(stop, RETRY_S)

    async def _missed(
        self, scheduled: ScheduledSends, stop: asyncio.Event
    ) -> list[ScheduledSend] | None:
        """The sends missed while nothing ran, read before anything is sent (None: the
        session closed first)."""
        while not stop.is_set():
            try:
                return await scheduled.missed()
            except (StoreError, GatewayError) as exc:
                self._say(f"Scheduled sends could not be read: {exc}. Trying again soon.")
                await _pause(stop, RETRY_S)
        return None

    async def _send_missed(self, missed: list[ScheduledSend], now: datetime) -> bool:
        """Ask once: True to send the missed ones now, False to review them."""
        box, send, _review = missed_box(self.window, missed_question(missed, now))
        self.question = box
        try:
            return await answered(box, send)
        finally:
            self.question = None

    def _told(self, outcome: Outcome) -> None:
        text, ok = went_text(outcome)
        (log.info if ok else log.warning)("%s", text)
        self._say(text)
        self.session.schedule_changed.emit()

    def _say(self, text: str) -> None:
        if alive(self.window):
            self.window.statusBar().showMessage(text, MESSAGE_MS)


async def _pause(stop: asyncio.Event, seconds: float) -> None:
    """Wait `seconds`, or less when `stop` is set meanwhile."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)
