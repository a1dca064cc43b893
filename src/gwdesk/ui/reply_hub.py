"""The console's side of the reply inbox: one per session, its flow's events as signals.

What the Replies view and its hub show (the listener and its problems, the unread count,
the back-fill, a team's catch-up and the route two-way sends take) is decided by
`gwdesk.app.reply_inbox.ReplyInboxFlow`, one per opened profile. The hub makes that
flow when the session's profile changes, hands it the console's way across threads
(`tasks.FlowHandoff`), drains its feed every 100 ms (one `replies_arrived` per tick,
however many replies a second arrive), forwards the team's change notices to it, and
emits what it tells as signals. The flow runs on the GUI thread's event loop, so every
signal is emitted there. `Session.close` calls `shutdown` before the store the inbox
writes into closes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from PySide6.QtCore import QObject, Signal

from gwdesk.app.reply_inbox import NO_PROFILE, ReplyInboxFlow
from gwdesk.app.reply_state import (
    NO_TEAM_ROUTE,
    BackfillReport,
    ListenerSettings,
    ListenerStatus,
    ReplyDelivery,
)
from gwdesk.app.rule_host import console_rules
from gwdesk.domain.optout_words import Keywords
from gwdesk.profiles import PasswordVault
from gwdesk.ui.tasks import BackgroundTasks, FlowHandoff
from gwdesk.ui.timers import repeating

if TYPE_CHECKING:
    from gwdesk.replies import ReplyInbox, ReplyTemplate
    from gwdesk.ui.session import Session

__all__ = ["DRAIN_MS", "NO_TEAM_ROUTE", "ReplyHub"]
DRAIN_MS: Final = 100
"""How often stored replies are handed to the views: one batch per tick, not one per reply."""
NO_PROFILE_TEXT: Final = "No profile is connected."


class ReplyHub(QObject):
    """The reply listener, inbox and feed of the session's profile, for the console's views."""

    status_changed = Signal(object)
    """`ListenerStatus`, whenever it changes."""
    replies_arrived = Signal(object)
    """`ReplyDelivery`: at most one per drain tick."""
    unread_changed = Signal(int)
    backfill_finished = Signal(object)
    """`BackfillReport` of a back-fill on start or on demand."""
    route_changed = Signal()
    """Where two-way sends route replies changed (`template`, `route_problem`)."""
    unreadable_passed = Signal(int)
    """How many stored replies the team's catch-up has passed over so far (this profile)
    because this gwdesk cannot read them; emitted when it grows."""

    def __init__(self, session: Session, *, drain_ms: int = DRAIN_MS) -> None:
        super().__init__(session)
        self.session = session
        self._flow: ReplyInboxFlow | None = None
        self._leftovers = BackgroundTasks()
        """Shutdowns of a flow the session moved past without closing it first."""
        self._timer = repeating(self, drain_ms, self.drain, running=False)
        session.changed.connect(self._session_changed)
        session.team.changed.connect(self._team_changed)

    # ---- state -------------------------------------------------------------------------------

    @property
    def status(self) -> ListenerStatus:
        return self._flow.status if self._flow is not None else NO_PROFILE

    @property
    def listening(self) -> bool:
        return self._flow is not None and self._flow.listening

    @property
    def template(self) -> ReplyTemplate | None:
        """Where two-way sends route replies: the listener's `ReplyPath` template while it
        listens; for a team profile, the one the office's receiver published (or None)."""
        return self._flow.template if self._flow is not None else None

    @property
    def team_route(self) -> bool:
        """Replies are routed to the office's receiver (a team profile), not this console."""
        return self._flow is not None and self._flow.team_route

    @property
    def route_problem(self) -> str:
        """Why there is no `template` to route replies to ("" when there is)."""
        return self._flow.route_problem if self._flow is not None else NO_PROFILE_TEXT

    @property
    def inbox(self) -> ReplyInbox | None:
        return self._flow.inbox if self._flow is not None else None

    @property
    def unread(self) -> int:
        return self._flow.unread if self._flow is not None else 0

    @property
    def latest_id(self) -> int:
        """The newest reply id this hub knows of (stored, or delivered since)."""
        return self._flow.latest_id if self._flow is not None else 0

    @property
    def unreadable(self) -> int:
        """Replies passed over so far because they could not be read (a team profile)."""
        return self._flow.unreadable if self._flow is not None else 0

    @property
    def backfilling(self) -> bool:
        return self._flow is not None and self._flow.backfilling

    @property
    def keywords(self) -> Keywords:
        """The keywords replies are read by now (a reply's badge)."""
        return self._flow.keywords if self._flow is not None else Keywords()

    # ---- the session -------------------------------------------------------------------------

    def _session_changed(self) -> None:
        """A new profile: a flow of its own (the listener starts when asked to)."""
        old, self._flow = self._flow, None
        if old is not None:  # not shut down by the session first: stop it all the same
            self._leftovers.start(old.shutdown(), "closing the previous profile's replies")
        self._timer.stop()
        self.unread_changed.emit(0)
        session, store = self.session, self.session.store
        if store is None or session.profile is None:
            self.status_changed.emit(NO_PROFILE)
            self.route_changed.emit()
            return
        handoff = FlowHandoff(self, store.path, "replies-hub", shared=store.shared)
        told = _Signals(self)
        rules = console_rules(store, session.sending, session.profile, PasswordVault())
        flow = ReplyInboxFlow(
            store, session.profile.zone, session.service, handoff, told, rules=rules
        )
        self._flow = flow
        self._timer.start()
        flow.open()

    def _team_changed(self, tables: frozenset[str]) -> None:
        if self._flow is not None:
            self._flow.tables_changed(tables)

    # ---- what the views ask ------------------------------------------------------------------

    async def settings(self) -> ListenerSettings:
        """The profile's listener settings (defaults when no profile is connected)."""
        return await self._flow.settings() if self._flow is not None else ListenerSettings()

    async def autostart(self) -> None:
        """After a profile is connected: listen (unless the operator stopped it, or the
        office's receiver listens for the team), then back-fill."""
        if self._flow is not None:
            await self._flow.autostart()

    async def start(self, port: int | None = None) -> ListenerStatus:
        """Start listening (on `port`, else the profile's); the outcome is also `status`."""
        return await self._flow.start(port) if self._flow is not None else NO_PROFILE

    async def stop(self) -> None:
        """Stop listening because the operator asked: remembered, so a restart stays stopped."""
        if self._flow is not None:
            await self._flow.stop()

    async def configure(self, settings: ListenerSettings) -> None:
        """Save new settings; a running listener restarts with them (without a profile
        there is nowhere to keep them, and the settings cannot be opened)."""
        if self._flow is not None:
            await self._flow.configure(settings)

    async def backfill(self) -> BackfillReport:
        """Fetch the replies the gateway received while nobody listened, and merge them."""
        if self._flow is None:
            report = BackfillReport(False, NO_PROFILE_TEXT)
            self.backfill_finished.emit(report)
            return report
        return await self._flow.backfill()

    async def opted_out_numbers(self) -> frozenset[str]:
        """Every number on the opt-out list now (none without a profile); `StoreError`."""
        return await self._flow.opted_out_numbers() if self._flow is not None else frozenset()

    def drain(self) -> None:
        """Hand what was stored since the last tick to the views, in one signal."""
        if self._flow is not None:
            self._flow.drain()

    def mark_seen(self, up_to: int | None = None) -> None:
        """The operator has seen every reply up to `up_to` (default: the newest known)."""
        if self._flow is not None:
            self._flow.mark_seen(up_to)

    async def shutdown(self) -> None:
        """The session is closing: stop everything before its store closes (not remembered)."""
        flow = self._flow
        await self._leftovers.wait()
        if flow is not None:
            await flow.shutdown()  # still the hub's flow meanwhile: its last delivery lands
        if self._flow is flow:
            self._flow = None
        self._timer.stop()


class _Signals:
    """What the flow tells (`gwdesk.app.reply_state.InboxEvents`), emitted as the hub's
    signals; the flow runs on the GUI thread's loop, so they are emitted there."""

    def __init__(self, hub: ReplyHub) -> None:
        self._hub = hub

    def status_changed(self, status: ListenerStatus) -> None:
        self._hub.status_changed.emit(status)

    def replies_arrived(self, delivery: ReplyDelivery) -> None:
        self._hub.replies_arrived.emit(delivery)

    def unread_changed(self, unread: int) -> None:
        self._hub.unread_changed.emit(unread)

    def backfill_finished(self, report: BackfillReport) -> None:
        self._hub.backfill_finished.emit(report)

    def route_changed(self) -> None:
        self._hub.route_changed.emit()

    def unreadable_passed(self, count: int) -> None:
        self._hub.unreadable_passed.emit(count)

    def activity(self, what: str, ok: bool) -> None:
        self._hub.session.report(what, ok)
