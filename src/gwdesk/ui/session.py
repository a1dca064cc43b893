"""The active profile and what belongs to it: the gateway service and the local store.

Tabs never build services themselves; they are handed the `Session` and listen
for `changed`, so switching profile (or starting on the sandbox) is one place.

The rules a send and a keyword reply follow (the opt-out keywords, the marketing default
and instruction) are the session's: read again when the operator saves new ones
(`apply_rules`) and, for a team profile, whenever the team's settings changed at any desk
(the team hub's feed, or a reconnection), whichever tabs are open; `rules_changed` then
tells the tabs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from gwdesk.app.profile_data import (
    Answering,
    GatewayService,
    LocalStore,
    ProfileData,
    compliance_of,
    locate,
    open_profile,
    sending_for,
)
from gwdesk.app.scheduled import ScheduledSends
from gwdesk.app.sending import Sending
from gwdesk.app.team import CONTACT_TABLES
from gwdesk.domain.errors import GatewayError, StoreError
from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.paths import AppPaths
from gwdesk.ui.reply_hub import ReplyHub
from gwdesk.ui.tasks import CoalescingRead, off_thread, to_gui_thread
from gwdesk.ui.team_hub import TableWatch, TeamHub

ServiceFactory = Callable[[Profile, Secret], GatewayService]
NOT_CONNECTED = "No gateway is connected yet: choose a profile first."


class Session(QObject):
    """Holds the current profile's service and store; emits `changed` when they switch."""

    changed = Signal()
    activity = Signal(str, bool)
    """(what happened, ok) after each gateway call a tab reports: drives the status bar."""
    closing = Signal()
    """The store is about to close: tabs hand over what they have not saved yet (drafts)."""
    rules_changed = Signal()
    """The profile's opt-out keywords or marketing rules changed (`apply_rules`, or the
    team's settings at another desk)."""
    contacts_changed = Signal()
    """The address book changed (the Contacts tab): names beside numbers are read again."""
    answering_changed = Signal(object)
    """(`Answering`) the profile's gateway stopped answering, or answers again: the
    watch on its client (`GatewayService.health`) said so, on the GUI thread's loop."""
    sent = Signal(object)
    """A send of this console ended (its `Outcome`), from any tab: the log sync and the
    credits follow."""
    schedule_changed = Signal()
    """The profile's scheduled sends changed here (one scheduled, edited, cancelled, sent
    now, or sent at its time): the Scheduled view reads them again."""

    def __init__(self, paths: AppPaths, service_factory: ServiceFactory) -> None:
        super().__init__()
        self.paths = paths
        self._factory = service_factory
        self.profile: Profile | None = None
        self.service: GatewayService | None = None
        self.store: LocalStore | None = None
        self.data: ProfileData | None = None
        self.sending: Sending | None = None
        """Every send of the profile: the application core's use cases, over its outbox."""
        self.scheduled: ScheduledSends | None = None
        """The profile's scheduled sends (over `sending`): what the Scheduled view lists and
        changes, and what the console sends when due (`ui/scheduled/serving.py`)."""
        self.is_sandbox = False
        self.password_kept_for_session = False
        self.team = TeamHub(self)
        """The link to the team's server of a team profile (idle for the others); made
        before the reply hub, which follows its changes."""
        # Another desk's change to the address book is one of ours to every view of it.
        TableWatch(self.team, CONTACT_TABLES, self.contacts_changed.emit, self)
        self._team_rules: CoalescingRead[LocalStore] | None = None
        """Reads the team's rules again (one read at a time) while a team profile is open."""
        TableWatch(self.team, {"settings"}, self._team_settings_changed, self)
        self.replies = ReplyHub(self)
        """The profile's reply listener and inbox (started by the controller, or on request)."""
        self._unwatch: Callable[[], None] | None = None
        self.log_sync: QObject | None = None
        """The session's log cache sync (`ui.log_sync.session_sync` makes it on the first
        ask and keeps it here)."""

    @property
    def active(self) -> bool:
        return self.service is not None

    @property
    def answering(self) -> Answering:
        """Whether the gateway answers now (it does, as far as anyone knows, without one)."""
        return self.service.health.state if self.service is not None else Answering()

    def silent_for(self) -> float:
        """Seconds the gateway has not answered (0 while it answers)."""
        if self.service is None:
            return 0.0
        health = self.service.health
        return health.state.waited(health.clock())

    def require(self) -> tuple[GatewayService, LocalStore]:
        """The service and store, or an operator-facing error when no profile is active yet."""
        if self.service is None or self.store is None:
            raise GatewayError(NOT_CONNECTED)
        return (self.service, self.store)

    def require_sending(self) -> Sending:
        """The profile's sends, or an operator-facing error when none is active yet."""
        if self.sending is None:
            raise GatewayError(NOT_CONNECTED)
        return self.sending

    async def activate(
        self,
        profile: Profile,
        password: Secret,
        *,
        sandbox: bool = False,
        store_password: Secret | None = None,
    ) -> None:
        """Close the current profile and open `profile` (`store_password`: its team
        server's). A store that cannot be opened raises `StoreError` naming it, and leaves
        nothing open."""
        await self.close()
        data = locate(profile, sandbox=sandbox, paths=self.paths)
        try:
            self.store = await open_store(data, store_password)
        except StoreError:
            self.changed.emit()  # the previous profile is closed: the views say so
            raise
        # A draft or history row given up by the store's writer thread: once, in the status bar.
        given_up = to_gui_thread(asyncio.get_running_loop(), self, self._report_failure)
        for writer in self.store.writers:
            writer.on_failure = given_up
        self.service = self._factory(profile, password)
        self._unwatch = self.service.health.subscribe(self.answering_changed.emit)
        self.data = data
        self.sending = sending_for(self.service, self.store, data)
        self.sending.on_outcome = self.sent.emit
        self.scheduled = ScheduledSends(self.sending)
        self.scheduled.changed.listeners.append(self.schedule_changed.emit)
        self.profile = profile
        self.is_sandbox = sandbox
        if self.store.team:
            store, sending = self.store, self.sending
            self._team_rules = CoalescingRead(
                lambda: _reread_rules(store, sending), self._rules_read, "the team's rules"
            )
        self.changed.emit()

    async def apply_rules(self) -> None:
        """The operator changed the opt-out rules in the store's settings: keyword replies
        are read by the new keywords from now on, and sends get the new marketing rules."""
        store, sending = self.store, self.sending
        if store is None or sending is None:
            return
        await off_thread(lambda: _reread_rules(store, sending))
        self._rules_read(store)

    def _team_settings_changed(self) -> None:
        """The team's settings changed (at any desk), or may have: follow them."""
        if self._team_rules is not None:
            self._team_rules.request()

    def _rules_read(self, store: LocalStore) -> None:
        if store is self.store:
            self.rules_changed.emit()

    def report(self, what: str, ok: bool) -> None:
        self.activity.emit(what, ok)

    def _report_failure(self, what: str) -> None:
        self.report(what, False)

    async def close(self) -> None:
        if self.store is not None:
            self.closing.emit()  # the tabs queue their last drafts; store.close writes them
        if self._team_rules is not None:
            self._team_rules.stop()
            self._team_rules = None
        await self.replies.shutdown()  # first: its inbox writes into the store
        await self.team.shutdown()  # before the pool its link borrows closes
        if self._unwatch is not None:
            self._unwatch()
            self._unwatch = None
        service, store = self.service, self.store
        self.service = self.store = self.profile = None
        self.data = self.sending = self.scheduled = None
        self.is_sandbox = False
        if service is not None:
            await service.aclose()
        if store is not None:
            # Waits (off the GUI thread) for a worker's write and for the queued drafts.
            await off_thread(store.close)


def _reread_rules(store: LocalStore, sending: Sending) -> LocalStore:
    """Keyword replies read by the store's keywords from now on, sends by its marketing
    rules. Blocking: reads of the store."""
    store.apply_optout_keywords()
    sending.compliance = compliance_of(store)
    return store


async def open_store(data: ProfileData, store_password: Secret | None = None) -> LocalStore:
    """Open (and upgrade) a profile's file, and its team's server if it has one, on a
    worker thread, never the GUI thread: each of the file's connections takes the write
    lock to check its migrations, which another process (`gwdesk send`, a second console)
    may hold for seconds, and a server may be slow to answer. Cancelled meanwhile, the
    store is closed once open: nobody else would."""
    password = store_password.reveal() if store_password is not None else None
    return await off_thread(lambda: open_profile(data, password), undo=LocalStore.close)
