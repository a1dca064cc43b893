"""The Batch tab's send as it goes: the flow's record, run and follow, as tasks of the tab.

A send the operator confirmed is recorded by the flow (every request in the outbox
before any leaves) and shown at once in the results, then run in lanes (Cancel sets
the run's stop event: the requests on the wire finish, no other starts); each entry
the runner hands over repaints its row, the rest at most every `REFRESH_MS`. While
it runs, the gateway's progress is followed (until every lodged message is
created, the operator stops it, or it gives up on each request). What the flow says
it came to goes out through signals: the tab shows it. The tasks are the tab's
(`owner`), so they end with it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Final, TypeVar, cast

from PySide6.QtCore import QObject, Signal

from gwdesk.app.list_send import (
    GatewayError,
    ListRun,
    ListSend,
    OutboxEntry,
    PreparedSend,
    StoreError,
    ValidationError,
    follow_end,
    sending_line,
)
from gwdesk.app.questions import plural
from gwdesk.app.scheduled import schedule_line
from gwdesk.app.sms import SmsMessage
from gwdesk.ui.batch.notices import Outcomes
from gwdesk.ui.batch.results import ResultsPanel
from gwdesk.ui.tasks import TaskRunner, alive
from gwdesk.ui.timers import single_shot

T = TypeVar("T")
SEND_KEY: Final = "batch-send"
FOLLOW_KEY: Final = "batch-follow"
REFRESH_MS: Final = 100
STOPPING: Final = "Stopping: the requests on the wire finish, no other starts…"
Recording = Callable[[], Awaitable[ListRun]]
"""How a confirmed send is recorded when not by `ListSend.record` (a resend to the failed)."""


class BatchSender(Outcomes):
    """Runs the shown list's sends and its following; says what they come to."""

    finished = Signal(object)
    """The run ended (a `RunEnd`)."""
    state_changed = Signal(bool)
    """Sending started or ended (True while it goes), or the run's rows moved on."""
    followed = Signal()
    """Following the list shown ended: its messages exist (or it gave up, or was stopped)."""

    def __init__(self, tasks: TaskRunner, results: ResultsPanel, owner: QObject) -> None:
        super().__init__(owner)
        self.tasks = tasks
        self.results = results
        self._stop: asyncio.Event | None = None
        self._stop_following: asyncio.Event | None = None
        self._run: ListRun | None = None
        self._refresh = single_shot(self, REFRESH_MS, self._refreshed)

    @property
    def owner(self) -> QObject:
        """Whose tasks the sends are: the tab's (its Qt parent; no reference of its own,
        so no cycle keeps a closed tab's wrapper alive)."""
        return cast(QObject, self.parent())

    @property
    def busy(self) -> bool:
        return self.tasks.running(SEND_KEY, owner=self.owner)

    @property
    def stopping(self) -> bool:
        return self._run is not None and self._run.stopping

    def start(
        self,
        flow: ListSend,
        prepared: PreparedSend | None,
        *,
        message: SmsMessage | None = None,
        lanes: int,
        record: Recording | None = None,
    ) -> None:
        """Record `prepared` (by `record` when given) and send it; None: send what the list
        shown has left (`message`: a same-for-all list's, as it is now)."""
        if self.busy:  # the same key would cancel the send on the wire
            return
        self._stop = asyncio.Event()
        self.tasks.run(
            self._send(flow, prepared, message, lanes, self._stop, record),
            key=SEND_KEY,
            owner=self.owner,
            context="sending a batch",
        )
        self.state_changed.emit(True)

    async def _send(
        self,
        flow: ListSend,
        prepared: PreparedSend | None,
        message: SmsMessage | None,
        lanes: int,
        stop: asyncio.Event,
        record: Recording | None = None,
    ) -> None:
        run, end = flow.run, None
        try:
            if prepared is not None and prepared.hold_until is not None:
                await self._schedule(flow, prepared)
                return
            if prepared is not None:
                self.tasks.cancel(FOLLOW_KEY, owner=self.owner)  # the last batch's is not shown
                self.results.show_run(None)
                self.said.emit(f"Recording {plural(prepared.recipients, 'recipient')}…", "hint")
                not_recorded = "The batch was not recorded, so nothing was sent"
                recording = record() if record is not None else flow.record(prepared)
                run = await self._attempt(recording, not_recorded)
                if run is None:
                    return
                self.results.show_run(run)
            if run is None:
                return
            self._run = run
            self.said.emit(sending_line(run), "hint")
            self._start_following(flow, run)
            end = await flow.run_due(
                message=message, lanes=lanes, stop=stop, on_change=self._changed
            )
        finally:
            if alive(self):
                self.results.refresh()
                if end is not None and flow.run is run:
                    self.said.emit(end.text, end.tone)
                    self.finished.emit(end)
                self.state_changed.emit(False)

    async def _schedule(self, flow: ListSend, prepared: PreparedSend) -> None:
        """Hold the send until its time (nothing goes now); say when, and where it waits."""
        self.said.emit(f"Scheduling {plural(prepared.recipients, 'recipient')}…", "hint")
        not_held = "The batch was not scheduled, so nothing will be sent"
        held = await self._attempt(flow.schedule(prepared), not_held)
        if held is not None:
            pace = prepared.later.pace if prepared.later else None
            self.said.emit(schedule_line(held, pace), "ok")

    async def _attempt(self, work: Awaitable[T], not_done: str) -> T | None:
        """What `work` comes to, or None once its refusal (at its field) or its failure
        (`not_done`, and why) is said."""
        try:
            return await work
        except ValidationError as exc:
            self.said.emit("", "hint")
            self.refused.emit(exc)
        except (GatewayError, StoreError) as exc:
            self.said.emit("", "hint")
            self.failed.emit(f"{not_done}: {exc}")
        return None

    def _changed(self, entry: OutboxEntry) -> None:
        """The runner handed an entry's new row (the run took it): repaint it."""
        if not alive(self):
            return
        self.results.entry_changed(entry)
        if not self._refresh.isActive():
            self._refresh.start()

    def _refreshed(self) -> None:
        self.results.refresh()
        self.state_changed.emit(self.busy)

    def cancel(self) -> None:
        """Stop before the next request (those on the wire finish)."""
        if self._stop is None or not self.busy:
            return
        self._stop.set()
        if self._run is not None:
            self._run.stopping = True
        self.said.emit(STOPPING, "hint")
        self.state_changed.emit(True)

    def reset(self) -> None:
        """The profile switched: nothing of the last one goes on."""
        for key in (SEND_KEY, FOLLOW_KEY):
            self.tasks.cancel(key, owner=self.owner)
        self._run = None
        self.results.show_run(None)

    # ---- following the gateway's progress ------------------------------------------------

    def _start_following(self, flow: ListSend, run: ListRun) -> None:
        if self.tasks.running(FOLLOW_KEY, owner=self.owner):
            return
        self._stop_following = asyncio.Event()
        self.tasks.run(
            self._follow_progress(flow, run, self._stop_following),
            key=FOLLOW_KEY,
            owner=self.owner,
            context="batch progress",
        )

    async def _follow_progress(self, flow: ListSend, run: ListRun, stop: asyncio.Event) -> None:
        self.results.following_started()
        try:
            await flow.follow(run, stop, on_change=self._changed)
        finally:
            if alive(self) and flow.run is run:
                self.results.following_ended(follow_end(run, stop.is_set()))
                self.followed.emit()

    def toggle_follow(self, flow: ListSend | None) -> None:
        """Stop following, or follow the list shown again (those given up on included)."""
        if self.tasks.running(FOLLOW_KEY, owner=self.owner):
            if self._stop_following is not None:
                self._stop_following.set()
        elif flow is not None and flow.run is not None:
            flow.run.progress.again()
            self._start_following(flow, flow.run)
