"""One profile's reply inbox as the console shows it: the listener, the unread count, the
back-fill and what the views are handed, decided once for both kinds of profile.

`gwdesk.replies` has no notion of a console; this is the use case over it. For the
profile it was opened on, the flow owns the `ReplyInbox` (the group-committing writer,
started with the listener or for a back-fill) and the `ReplyListener` (its own thread
and loop, between start and stop). Everything that blocks (binding, starting and joining
threads, store writes, counts) goes through the `Handoff` it is given (the console's
`gwdesk.ui.tasks`), never on the loop. What was stored comes back through a
`FeedBuffer` the owner drains on a timer (`drain`): one `replies_arrived` per drain
with everything stored since the last, however many replies a second arrive.

Unread replies are those past the seen watermark (kept in the profile's file, so the
count survives a restart): counted from the store when the profile opens (a reply
handed over while that count is read still counts once), raised by every new reply
past the watermark, lowered by `mark_seen`. The host (127.0.0.1 unless the operator
chose another interface, which comes with a warning), the public host name and whether
the listener should run are kept in the profile's store, beside the port and secret the
listener remembers there, so the `ReplyPath` configured at the gateway stays valid
across restarts.

The keyword rules (`rules`, `app/rule_host.py`) run on every group this console's inbox
stores, from its start until `shutdown`: on a team with a receiver that serves the
profile the replies go there, and so do the rules (claims make a reply acted on once
whoever sees it).

What differs between a one-desk profile and a team's (who listens, where two-way sends
route replies, where new replies come from) is its `ReplyMode` (`reply_modes.py`),
picked once when the flow is made. `shutdown` stops everything before the profile's
store closes. `gwdesk.replies` (and so aiohttp) is imported when the inbox first
starts, not before.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from gwdesk.app.handoff import Handoff, cancel_and_wait
from gwdesk.app.reply_modes import ReplyMode, mode_for
from gwdesk.app.reply_state import (
    BackfillReport,
    InboxEvents,
    ListenerSettings,
    ListenerState,
    ListenerStatus,
    ReplyDelivery,
    read_settings,
    write_settings,
)
from gwdesk.app.rule_host import RulesAtWork, RulesStarter
from gwdesk.domain.errors import GatewayError
from gwdesk.domain.optout_words import Keywords
from gwdesk.domain.settings import LISTENER_ENABLED
from gwdesk.store.database import StoreError
from gwdesk.store.local import LocalStore
from gwdesk.store.replies import ReplyStore, StoredReply
from gwdesk.store.reply_queries import (
    ConversationEntry,
    Listing,
    ReplyRow,
    ReplySearch,
    conversation,
    fetch_window,
    listing,
    number_variants,
    position,
    row_of,
    unread_figures,
)

if TYPE_CHECKING:
    from gwdesk.gateway.service import GatewayService
    from gwdesk.replies import FeedBuffer, ReplyInbox, ReplyListener, ReplyTemplate, Subscription

__all__ = [
    "NO_PROFILE",
    "ConversationEntry",
    "Listing",
    "ReplyInboxFlow",
    "ReplyRow",
    "ReplySearch",
    "StoreError",
    "StoredReply",
    "conversation",
    "fetch_window",
    "listing",
    "number_variants",
    "position",
    "row_of",
]
"""The Replies view's reads (a window, a search's listing and position, a conversation)
are the store's queries, named here for the console, which reads through this module."""
log = logging.getLogger("gwdesk.replies")
NO_PROFILE = ListenerStatus(ListenerState.NO_PROFILE)


@dataclass
class _Running:
    """The inbox and what hangs off it, while it runs."""

    store: ReplyStore
    inbox: ReplyInbox
    buffer: FeedBuffer
    subscription: Subscription
    listener: ReplyListener | None = None
    busy: set[asyncio.Task[object]] = field(default_factory=set)
    """Back-fills writing into the inbox: cancelled and awaited before it closes."""


class ReplyInboxFlow:
    """The reply inbox of one opened profile (see the module docstring)."""

    def __init__(
        self,
        store: LocalStore,
        zone: ZoneInfo,
        service: GatewayService | None,
        handoff: Handoff,
        events: InboxEvents,
        rules: RulesStarter | None = None,
    ) -> None:
        self._store = store
        self._zone = zone
        self._service = service
        self._handoff = handoff
        self._events = events
        self._mode: ReplyMode = mode_for(store, handoff, events, self._caught_up)
        self._status = NO_PROFILE
        self._running: _Running | None = None
        self._lock = asyncio.Lock()
        """Starts, stops and the shutdown, one at a time."""
        self._closed = False
        self._unread = 0
        self._seen_up_to = 0
        self._latest_id = 0
        self._counting: list[int] | None = None
        """Ids handed over while the unread figures are read (None when they are not)."""
        self.backfilling = False
        self._rules_starter = rules
        self._rules: RulesAtWork | None = None
        """The keyword rules at work on what this console's inbox stores, while it runs."""
        self._rules_open = contextlib.AsyncExitStack()

    def open(self) -> None:
        """The profile is open: say the listener is stopped, count what is unread and
        start following what the mode follows."""
        self._set_status(self._mode.stopped())
        self._mode.open()
        self._recount()

    # ---- state -------------------------------------------------------------------------------

    @property
    def status(self) -> ListenerStatus:
        return self._status

    @property
    def listening(self) -> bool:
        return self._status.state is ListenerState.LISTENING

    @property
    def template(self) -> ReplyTemplate | None:
        """Where two-way sends route replies (None: nowhere yet, `route_problem` says why)."""
        running = self._running
        listener = running.listener if running is not None else None
        info = listener.info if listener is not None else None
        return self._mode.route(info.template if info is not None else None)

    @property
    def team_route(self) -> bool:
        return self._mode.team_route

    @property
    def route_problem(self) -> str:
        return "" if self.template is not None else self._mode.route_problem

    @property
    def inbox(self) -> ReplyInbox | None:
        return self._running.inbox if self._running is not None else None

    @property
    def unread(self) -> int:
        return self._unread

    @property
    def latest_id(self) -> int:
        """The newest reply id this flow knows of (stored, or handed over since)."""
        return self._latest_id

    @property
    def unreadable(self) -> int:
        return self._mode.unreadable

    def _set_status(self, status: ListenerStatus) -> None:
        if status != self._status:
            self._status = status
            self._events.status_changed(status)
            self._events.route_changed()

    def _set_unread(self, count: int) -> None:
        count = max(count, 0)
        if count != self._unread:
            self._unread = count
            self._events.unread_changed(count)

    # ---- unread --------------------------------------------------------------------------------

    def _recount(self) -> None:
        """Read the unread figures off the loop; replies handed over meanwhile still count."""
        self._counting = []
        self._handoff.background(self._count(), "counting unread replies")

    async def _count(self) -> None:
        try:
            figures = await self._handoff.read(unread_figures, key="unread")
        except asyncio.CancelledError:
            return  # a newer count, or the profile closed
        except StoreError as exc:
            if not self._closed:
                log.warning("unread replies could not be counted: %s", exc)
                self._counting = None
            return
        if self._closed:
            return
        arrived = self._counting or []
        self._counting = None
        self._seen_up_to = max(self._seen_up_to, figures.seen_up_to)
        self._latest_id = max(self._latest_id, figures.latest_id)
        later = sum(1 for reply_id in arrived if reply_id > figures.latest_id)
        self._set_unread(figures.unseen + later)
        self._mode.counted(figures.latest_id)

    def mark_seen(self, up_to: int | None = None) -> None:
        """The operator has seen every reply up to `up_to` (default: the newest known)."""
        up_to = self._latest_id if up_to is None else up_to
        if self._closed or up_to <= self._seen_up_to:
            return
        self._seen_up_to = up_to
        if up_to >= self._latest_id:
            self._set_unread(0)
        self._handoff.background(self._save_seen(up_to), "marking replies seen")

    async def _save_seen(self, up_to: int) -> None:
        replies = self._store.replies
        try:
            await self._handoff.blocking(lambda: replies.mark_seen(up_to))
            if up_to >= self._latest_id:
                return
            figures = await self._handoff.read(lambda reading: unread_figures(reading, up_to))
        except asyncio.CancelledError:
            return  # the profile closed meanwhile
        except StoreError as exc:
            log.warning("replies could not be marked as seen: %s", exc)
            return
        if not self._closed and self._seen_up_to == up_to:
            self._set_unread(figures.unseen)

    # ---- what the views are handed ------------------------------------------------------------

    def drain(self) -> None:
        """Hand what was stored since the last drain to the views, in one delivery."""
        running = self._running
        if running is not None:
            self._deliver(running.buffer)

    def _deliver(self, buffer: FeedBuffer) -> None:
        drained = buffer.drain()
        if self._rules is not None:
            self._rules.take(drained.new)
        self._hand_over(self._mode.from_feed(drained.new), drained.updated, drained.dropped)

    def _caught_up(self, new: list[StoredReply]) -> None:
        self._hand_over(new, [], 0)

    def _hand_over(self, new: list[StoredReply], updated: list[StoredReply], dropped: int) -> None:
        if not new and not updated and not dropped:
            return
        if new:
            self._latest_id = max(self._latest_id, max(reply.id for reply in new))
            unseen = [r.id for r in new if r.id > self._seen_up_to]
            if self._counting is not None:
                self._counting.extend(unseen)
            self._set_unread(self._unread + len(unseen))
        if dropped and self._running is not None:
            self._recount()
        self._events.replies_arrived(ReplyDelivery(tuple(new), tuple(updated), dropped))

    @property
    def keywords(self) -> Keywords:
        """The keywords replies are read by now (the profile's, as last applied): what the
        views badge a reply by."""
        rules = self._store.replies.optouts
        return rules.keywords if rules is not None else Keywords()

    async def opted_out_numbers(self) -> frozenset[str]:
        """Every number on the opt-out list now (one read): what the views mark."""
        return await self._handoff.blocking(self._store.optouts.opted_out_numbers)

    def tables_changed(self, tables: frozenset[str]) -> None:
        """The team's server says what changed (nothing for a one-desk profile)."""
        if not self._closed and self._mode.tables_changed(tables):
            self._recount()

    # ---- the listener --------------------------------------------------------------------------

    async def settings(self) -> ListenerSettings:
        """The profile's listener settings."""
        return await self._handoff.read(read_settings)

    async def autostart(self) -> None:
        """After the profile is connected: listen (unless the operator stopped it, or the
        office's receiver listens for the team), then back-fill."""
        try:
            settings = await self.settings()
            if self._mode.listens_on_connect(settings):
                await self.start()
            else:
                await self._ensure_inbox()
        except (StoreError, asyncio.CancelledError):
            if self._closed:
                return  # the profile was closed meanwhile
            raise
        if self._running is not None and not self._closed:
            await self.backfill()

    async def _ensure_inbox(self) -> _Running | None:
        """The inbox, started (it may run without the listener, for a back-fill)."""
        if self._running is not None or self._closed:
            return self._running
        store = self._store.replies

        def start() -> _Running:
            from gwdesk.replies import FeedBuffer, ReplyInbox

            inbox = ReplyInbox(store)
            buffer = FeedBuffer()
            subscription = inbox.subscribe(buffer)
            inbox.start()
            return _Running(store, inbox, buffer, subscription)

        running = await self._handoff.blocking(start, undo=lambda r: r.inbox.close())
        if self._closed or self._running is not None:
            await self._handoff.blocking(running.inbox.close)
            return self._running
        self._running = running
        if self._rules_starter is not None and self._rules is None:
            self._rules = await self._rules_open.enter_async_context(self._rules_starter())
        return running

    async def start(self, port: int | None = None) -> ListenerStatus:
        """Start listening (on `port`, else the profile's); the outcome is also `status`."""
        async with self._lock:
            return await self._start(port)

    async def _start(self, port: int | None) -> ListenerStatus:
        if self.listening or self._closed:
            return self._status
        self._set_status(ListenerStatus(ListenerState.STARTING))
        running = await self._ensure_inbox()
        if running is None or self._closed:
            return self._status
        try:
            settings = await self.settings()
        except StoreError as exc:
            if not self._closed:
                message = f"The profile store failed: {exc}."
                self._set_status(ListenerStatus(ListenerState.ERROR, message=message))
            return self._status
        zone = self._zone

        def bind() -> ReplyListener:
            from gwdesk.replies import ReplyListener

            listener = ReplyListener(
                running.inbox,
                zone,
                host=settings.host,
                port=port if port is not None else settings.port,
                public_host=settings.public_host,
            )
            listener.start()
            running.store.settings.set(LISTENER_ENABLED, True)
            return listener

        from gwdesk.replies import ListenerError, PortInUseError

        try:
            listener = await self._handoff.blocking(bind, undo=lambda bound: bound.stop())
        except PortInUseError as exc:
            message = f"{exc} Use the free port, or choose one in Listener settings."
            status = ListenerStatus(ListenerState.ERROR, message=message, suggestion=exc.suggestion)
            self._set_status(status)
            return self._status
        except ListenerError as exc:
            self._set_status(ListenerStatus(ListenerState.ERROR, message=str(exc)))
            return self._status
        except StoreError as exc:
            message = f"The profile store failed: {exc}."
            self._set_status(ListenerStatus(ListenerState.ERROR, message=message))
            return self._status
        if self._closed or self._running is not running:
            await self._handoff.blocking(listener.stop)
            return self._status
        running.listener = listener
        info = listener.info
        assert info is not None
        self._set_status(
            ListenerStatus(ListenerState.LISTENING, address=info.address, warning=info.warning)
        )
        return self._status

    async def stop(self) -> None:
        """Stop listening because the operator asked: remembered, so a restart stays stopped."""
        async with self._lock:
            running = self._running
            if running is None or running.listener is None:
                return
            self._set_status(ListenerStatus(ListenerState.STOPPING))
            listener, running.listener = running.listener, None

            def halt() -> None:
                listener.stop()
                with contextlib.suppress(StoreError):
                    running.store.settings.set(LISTENER_ENABLED, False)

            await self._handoff.blocking(halt)
            if self._running is running:
                self._set_status(self._mode.stopped())

    async def configure(self, settings: ListenerSettings) -> None:
        """Save new settings; a running listener restarts with them."""
        replies = self._store.replies
        await self._handoff.blocking(lambda: write_settings(replies.settings, settings))
        if self.listening:
            await self.stop()
            await self.start()

    async def shutdown(self) -> None:
        """The profile is closing: stop everything before its store closes (not remembered:
        the listener starts again with the profile)."""
        self._closed = True
        self._mode.close()
        async with self._lock:
            await self._handoff.settle()
            running, self._running = self._running, None
            if running is None:
                self._set_status(NO_PROFILE)
                return
            await cancel_and_wait(list(running.busy))
            listener = running.listener

            def halt() -> None:
                if listener is not None:
                    listener.stop()
                running.subscription.cancel()
                running.inbox.close()

            await self._handoff.blocking(halt)
            self._deliver(running.buffer)
            self._rules = None
            await self._rules_open.aclose()  # after the last group was handed over
            self._set_status(NO_PROFILE)

    # ---- back-fill -----------------------------------------------------------------------------

    async def backfill(self) -> BackfillReport:
        """Fetch the replies the gateway received while nobody listened, and merge them."""
        service = self._service
        running = await self._ensure_inbox()
        if service is None or running is None:
            report = BackfillReport(False, "No profile is connected.")
            self._events.backfill_finished(report)
            return report
        task = asyncio.current_task()
        if task is not None:
            running.busy.add(task)
        self.backfilling = True
        try:
            report = await self._backfill(service, running)
        finally:
            self.backfilling = False
            if task is not None:
                running.busy.discard(task)
        if self._running is running:
            self._events.backfill_finished(report)
        return report

    async def _backfill(self, service: GatewayService, running: _Running) -> BackfillReport:
        from gwdesk.replies import InboxClosed, backfill, suggested_start

        store = running.store
        try:
            start = await self._handoff.blocking(lambda: suggested_start(store, datetime.now(UTC)))
            result = await backfill(service, running.inbox, start)
        except GatewayError as exc:
            self._events.activity(f"missed replies: {exc.message}", False)
            return BackfillReport(False, f"Missed replies could not be fetched: {exc.message}")
        except (InboxClosed, StoreError) as exc:
            return BackfillReport(False, f"Missed replies could not be stored: {exc}")
        since = start.astimezone().strftime("%d %b %H:%M")
        if result.added:
            text = f"Fetched {result.added} missed repl{'y' if result.added == 1 else 'ies'}"
        else:
            text = "No missed replies"
        self._events.activity("missed replies fetched", True)
        return BackfillReport(True, f"{text} since {since}", result.added)
