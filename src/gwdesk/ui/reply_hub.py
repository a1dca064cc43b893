"""The console's side of the reply listener: one per session, bridged to the GUI thread.

`gwdesk.replies` has no Qt; this is where it meets the console. For the active
profile the hub owns the `ReplyInbox` (the group-committing writer) and the
`ReplyListener` (its own thread and loop), and everything that blocks (binding,
starting and joining threads, store writes) runs as blocking work and every store
read through a reader of the profile's file (`gwdesk.ui.tasks`), never on the GUI
thread. Stored replies come back through a `FeedBuffer` that a 100 ms
timer drains: one `replies_arrived` signal per tick with everything stored since
the last, however many replies a second arrive.

The inbox lives as long as the session (started with the listener, or for a
backfill), the listener between start and stop. `Session.close` calls `shutdown`
before it closes the store the inbox writes into. The host (127.0.0.1 unless the
operator chose another interface, which comes with a warning), the public host
name and whether the listener should run are kept in the profile's store, beside
the port and secret the listener already remembers there, so the `ReplyPath`
configured at the gateway stays valid across restarts.

A team profile (its replies on the office's server) works differently: the office's
receiver (`gwdesk listen --store`) takes the replies, so this console's own listener
does not start by itself (the operator may still start it). Every "replies" change the
team hub reports (and the resync after a reconnection) makes the hub read what was
stored past the last reply it handed over (`ReplyCatchUp`, off the GUI thread, one read
at a time), and hand it to the views as a drain would; a row it cannot read (another
client wrote it) is passed over, and `unreadable_passed` says how many so far, so the
next reply still shows and the operator knows one did not. Two-way sends then route
replies to the ReplyPath the receiver published (`template`), read again on "settings"
changes.

`gwdesk.replies` (and so aiohttp) is imported when the listener first starts, not
when the console does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, TypeVar

from PySide6.QtCore import QObject, QTimer, Signal

from gwdesk.app.catch_up import ReplyCatchUp
from gwdesk.domain.settings import LISTENER_ENABLED, TEAM_REPLY_PATH
from gwdesk.gateway.errors import GatewayError
from gwdesk.store.changes import RESYNC
from gwdesk.store.database import StoreError
from gwdesk.store.replies import ReplyStore, StoredReply
from gwdesk.store.reply_queries import unread_figures
from gwdesk.ui.reply_state import (
    BackfillReport,
    ListenerSettings,
    ListenerState,
    ListenerStatus,
    ReplyDelivery,
    SettingsSource,
    read_settings,
    write_settings,
)
from gwdesk.ui.tasks import BlockingJob, StoreReads, off_thread
from gwdesk.ui.team_hub import Coalesced

if TYPE_CHECKING:
    from gwdesk.gateway.service import GatewayService
    from gwdesk.replies import FeedBuffer, ReplyInbox, ReplyListener, ReplyTemplate, Subscription
    from gwdesk.ui.session import Session

log = logging.getLogger("gwdesk.ui.replies")
T = TypeVar("T")
DRAIN_MS: Final = 100
"""How often stored replies are handed to the views: one batch per tick, not one per reply."""
NO_TEAM_ROUTE: Final = (
    "The office's reply receiver has not published its ReplyPath yet: start "
    "`gwdesk listen --store postgresql://…` on the machine that receives the team's "
    "replies (see docs/team.md), then send again."
)
LISTENER_OFF: Final = "The reply listener is not running: start it in the status bar."


@dataclass
class _Running:
    """The parts that belong to one session's store."""

    store: ReplyStore
    inbox: ReplyInbox
    buffer: FeedBuffer
    subscription: Subscription
    listener: ReplyListener | None = None
    busy: set[asyncio.Task[object]] = field(default_factory=set)


class ReplyHub(QObject):
    """The reply listener, inbox and feed of the session's profile, for the console's views."""

    status_changed = Signal(object)
    """`ListenerStatus`, whenever it changes."""
    replies_arrived = Signal(object)
    """`ReplyDelivery`: at most one per drain tick."""
    unread_changed = Signal(int)
    backfill_finished = Signal(object)
    """`BackfillReport` of a backfill on start or on demand."""
    route_changed = Signal()
    """Where two-way sends route replies changed (`template`, `route_problem`)."""
    unreadable_passed = Signal(int)
    """How many stored replies the team's catch-up has passed over so far (this profile)
    because this gwdesk cannot read them; emitted when it grows."""

    def __init__(self, session: Session, *, drain_ms: int = DRAIN_MS) -> None:
        super().__init__(session)
        self._session = session
        self._status = ListenerStatus(ListenerState.NO_PROFILE)
        self._running: _Running | None = None
        self._lock = asyncio.Lock()
        self._generation = 0
        self._unread = 0
        self._seen_up_to = 0
        self._latest_id = 0
        self._counting: list[int] | None = None
        """Ids delivered while the unread count is being read (None when it is not)."""
        self.backfilling = False
        self._chores: set[asyncio.Task[None]] = set()
        self._starts: set[BlockingJob[Any]] = set()
        """Starts (threads, a port) under way, each undone if its caller goes away."""
        self._reads: StoreReads | None = None
        """Reads of the session's store (counts, settings), off the GUI thread."""
        self._team = False
        """The profile's replies are on a team's server (see the module docstring)."""
        self._catch_up: ReplyCatchUp | None = None
        self._catching: Coalesced[tuple[list[StoredReply], int]] | None = None
        self._unreadable = 0
        """Replies the catch-up passed over, unreadable (`unreadable_passed`)."""
        self._route_read: Coalesced[ReplyTemplate | None] | None = None
        self._team_template: ReplyTemplate | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(drain_ms)
        self._timer.timeout.connect(self.drain)
        session.changed.connect(self._session_changed)
        session.team.changed.connect(self._team_changed)

    # ---- state -----------------------------------------------------------------------------

    @property
    def status(self) -> ListenerStatus:
        return self._status

    @property
    def listening(self) -> bool:
        return self._status.state is ListenerState.LISTENING

    @property
    def template(self) -> ReplyTemplate | None:
        """Where two-way sends route replies: the listener's `ReplyPath` template while it
        listens; for a team profile, the one the office's receiver published (or None)."""
        if self._team:
            return self._team_template
        running = self._running
        if running is None or running.listener is None or running.listener.info is None:
            return None
        return running.listener.info.template

    @property
    def team_route(self) -> bool:
        """Replies are routed to the office's receiver (a team profile), not this console."""
        return self._team

    @property
    def route_problem(self) -> str:
        """Why there is no `template` to route replies to ("" when there is)."""
        if self.template is not None:
            return ""
        return NO_TEAM_ROUTE if self._team else LISTENER_OFF

    @property
    def inbox(self) -> ReplyInbox | None:
        return self._running.inbox if self._running is not None else None

    @property
    def unread(self) -> int:
        return self._unread

    @property
    def latest_id(self) -> int:
        """The newest reply id this hub knows of (stored, or delivered since)."""
        return self._latest_id

    def _set_status(self, status: ListenerStatus) -> None:
        if status != self._status:
            self._status = status
            self.status_changed.emit(status)
            self.route_changed.emit()

    def _stopped(self) -> ListenerStatus:
        return ListenerStatus(ListenerState.STOPPED, team=self._team)

    def _set_unread(self, count: int) -> None:
        count = max(count, 0)
        if count != self._unread:
            self._unread = count
            self.unread_changed.emit(count)

    async def _started(self, work: Callable[[], T], undo: Callable[[T], object]) -> T:
        """`work()` (which starts threads or binds a port) as blocking work: if the caller is
        cancelled meanwhile, what it started is undone once it finishes, and `shutdown`
        waits for that, so nothing outlives the store it writes into."""
        job: BlockingJob[T] = BlockingJob()
        self._starts.add(job)
        try:
            result = await job.run(lambda _job: work(), undo=undo)
        except asyncio.CancelledError:
            raise  # the job stays tracked until `shutdown` has settled it
        except BaseException:
            self._starts.discard(job)
            raise
        self._starts.discard(job)
        return result

    async def _settle_starts(self) -> None:
        """Wait for starts still under way and undo them (their caller has gone)."""
        while self._starts:
            job = self._starts.pop()
            try:
                await job.settle()
            except Exception as exc:
                log.debug("an abandoned start failed (nothing to undo): %s", exc)

    # ---- the session -------------------------------------------------------------------------

    def _session_changed(self) -> None:
        """A new profile: count its unread replies (the listener starts when asked to)."""
        self._generation += 1
        self._unread = self._seen_up_to = self._latest_id = self._unreadable = 0
        self.unread_changed.emit(0)
        if self._reads is not None:
            self._reads.close()
            self._reads.deleteLater()
            self._reads = None
        store = self._session.store
        self._stop_team()
        self._team = store is not None and store.team
        self._set_status(self._stopped() if store else ListenerStatus(ListenerState.NO_PROFILE))
        if store is not None:
            self._reads = StoreReads(store.path, "replies-hub", self, shared=store.shared)
            if self._team:
                self._start_team(store.replies, store.settings)
            self._recount()

    def _recount(self) -> None:
        """Read the unread count off the GUI thread; replies delivered meanwhile still count."""
        generation = self._generation
        reads = self._reads
        if reads is None:
            return
        self._counting = []

        async def count() -> None:
            try:
                figures = await reads.fetch(unread_figures, key="unread")
            except asyncio.CancelledError:
                return  # a newer count, or the profile closed
            except StoreError as exc:
                if generation == self._generation:
                    log.warning("unread replies could not be counted: %s", exc)
                    self._counting = None
                return
            if generation != self._generation:
                return
            arrived = self._counting or []
            self._counting = None
            self._seen_up_to = max(self._seen_up_to, figures.seen_up_to)
            self._latest_id = max(self._latest_id, figures.latest_id)
            later = sum(1 for reply_id in arrived if reply_id > figures.latest_id)
            self._set_unread(figures.unseen + later)
            if self._team and self._catch_up is None and self._catching is not None:
                # Views read the store as it is now; from here on, what others store.
                self._catch_up = ReplyCatchUp(self._session_replies(), figures.latest_id)
                self._catching.request()

        self._track(count())

    def _session_replies(self) -> ReplyStore:
        store = self._session.store
        assert store is not None
        return store.replies

    # ---- a team's replies ----------------------------------------------------------------------

    def _start_team(self, replies: ReplyStore, settings: SettingsSource) -> None:
        """Follow the team's server: replies others stored, and the receiver's ReplyPath."""

        def read_new() -> tuple[list[StoredReply], int]:
            """What others stored since, and how many rows were passed over so far."""
            catch_up = self._catch_up
            if catch_up is None:
                return ([], 0)
            return (catch_up.read(), catch_up.unreadable)

        def read_route() -> ReplyTemplate | None:
            from gwdesk.replies.template import ReplyTemplate, TemplateError, team_route

            published = settings.get(TEAM_REPLY_PATH)
            if not published:
                return None
            try:
                return team_route(ReplyTemplate.parse(published))
            except TemplateError as exc:
                log.warning("the team's published ReplyPath is not usable: %s", exc)
                return None

        self._catching = Coalesced(read_new, self._caught_up, "replies stored by the team")
        self._route_read = Coalesced(read_route, self._route_read_done, "the team's ReplyPath")
        self._route_read.request()

    def _stop_team(self) -> None:
        for reads in (self._catching, self._route_read):
            if reads is not None:
                reads.stop()
        self._catching = self._route_read = None
        self._catch_up = None
        if self._team_template is not None:
            self._team_template = None
            self.route_changed.emit()

    def _team_changed(self, tables: frozenset[str]) -> None:
        """The team hub says what changed on the server: read what concerns replies."""
        if not self._team:
            return
        everything = RESYNC in tables
        reading = self._catching if self._catch_up is not None else None
        if (everything or "replies" in tables) and reading is not None:
            reading.request()
        if (everything or "settings" in tables) and self._route_read is not None:
            self._route_read.request()

    @property
    def unreadable(self) -> int:
        """Replies passed over so far because they could not be read (a team profile)."""
        return self._unreadable

    def _caught_up(self, read: tuple[list[StoredReply], int]) -> None:
        replies, unreadable = read
        if unreadable > self._unreadable:
            self._unreadable = unreadable
            self.unreadable_passed.emit(unreadable)
        if replies:
            self._hand_over(replies, [], 0)

    def _route_read_done(self, template: ReplyTemplate | None) -> None:
        if template != self._team_template:
            self._team_template = template
            self.route_changed.emit()

    def _track(self, work: Coroutine[object, object, None]) -> None:
        """Run small bookkeeping work (counts, watermarks) that nobody waits for."""
        task = asyncio.ensure_future(work)
        self._chores.add(task)
        task.add_done_callback(self._chores.discard)

    # ---- starting and stopping ----------------------------------------------------------------

    async def settings(self) -> ListenerSettings:
        """The profile's listener settings (defaults when no profile is connected)."""
        reads = self._reads
        if self._session.store is None or reads is None:
            return ListenerSettings()
        return await reads.fetch(read_settings)

    async def autostart(self) -> None:
        """After a profile is connected: listen (unless the operator stopped it, or the
        office's receiver listens for the team), then backfill."""
        if self._session.store is None:
            return
        generation = self._generation
        try:
            settings = await self.settings()
            if settings.enabled and not self._team:
                await self.start()
            else:
                await self._ensure_inbox()
        except (StoreError, asyncio.CancelledError):
            if generation != self._generation:
                return  # the profile was closed meanwhile
            raise
        if self._running is not None and generation == self._generation:
            await self.backfill()

    async def _ensure_inbox(self) -> _Running | None:
        """The session's inbox, started (it may run without the listener, for a backfill)."""
        if self._running is not None:
            return self._running
        session_store = self._session.store
        if session_store is None:
            return None
        store = session_store.replies
        generation = self._generation

        def start() -> _Running:
            from gwdesk.replies import FeedBuffer, ReplyInbox

            inbox = ReplyInbox(store)
            buffer = FeedBuffer()
            subscription = inbox.subscribe(buffer)
            inbox.start()
            return _Running(store, inbox, buffer, subscription)

        running = await self._started(start, undo=lambda r: r.inbox.close())
        if generation != self._generation or self._running is not None:
            await off_thread(running.inbox.close)
            return self._running
        self._running = running
        self._timer.start()
        return running

    async def start(self, port: int | None = None) -> ListenerStatus:
        """Start listening (on `port`, else the profile's); the outcome is also `status`."""
        async with self._lock:
            return await self._start(port)

    async def _start(self, port: int | None) -> ListenerStatus:
        session = self._session
        profile = session.profile
        if self.listening or profile is None or session.store is None:
            return self._status
        generation = self._generation
        self._set_status(ListenerStatus(ListenerState.STARTING))
        running = await self._ensure_inbox()
        if running is None or generation != self._generation:
            return self._status
        store = running.store
        try:
            settings = await self.settings()
        except StoreError as exc:
            if generation == self._generation:
                message = f"The profile store failed: {exc}."
                self._set_status(ListenerStatus(ListenerState.ERROR, message=message))
            return self._status
        zone = profile.zone

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
            store.settings.set(LISTENER_ENABLED, True)
            return listener

        from gwdesk.replies import ListenerError, PortInUseError

        try:
            listener = await self._started(bind, undo=lambda bound: bound.stop())
        except PortInUseError as exc:
            self._set_status(
                ListenerStatus(
                    ListenerState.ERROR,
                    message=f"{exc} Use the free port, or choose one in Listener settings.",
                    suggestion=exc.suggestion,
                )
            )
            return self._status
        except ListenerError as exc:
            self._set_status(ListenerStatus(ListenerState.ERROR, message=str(exc)))
            return self._status
        except StoreError as exc:
            self._set_status(
                ListenerStatus(ListenerState.ERROR, message=f"The profile store failed: {exc}.")
            )
            return self._status
        if generation != self._generation or self._running is not running:
            await off_thread(listener.stop)
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

            await off_thread(halt)
            if self._running is running:
                self._set_status(self._stopped())

    async def configure(self, settings: ListenerSettings) -> None:
        """Save new settings; a running listener restarts with them."""
        store = self._session.store
        if store is None:
            raise GatewayError("No profile is connected.")
        await off_thread(lambda: write_settings(store.replies.settings, settings))
        if self.listening:
            await self.stop()
            await self.start()

    async def shutdown(self) -> None:
        """The session is closing: stop everything before its store closes (not remembered)."""
        self._generation += 1
        if self._reads is not None:
            self._reads.close()
            self._reads.deleteLater()
            self._reads = None
        self._stop_team()
        self._team = False
        async with self._lock:
            await self._settle_starts()
            running, self._running = self._running, None
            if running is None:
                self._set_status(ListenerStatus(ListenerState.NO_PROFILE))
                return
            current = asyncio.current_task()
            busy = [task for task in running.busy if task is not current]
            for task in busy:
                task.cancel()
            for task in busy:
                with contextlib.suppress(BaseException):
                    await task
            listener = running.listener

            def halt() -> None:
                if listener is not None:
                    listener.stop()
                running.subscription.cancel()
                running.inbox.close()

            await off_thread(halt)
            self._timer.stop()
            self._deliver(running.buffer)
            self._set_status(ListenerStatus(ListenerState.NO_PROFILE))

    # ---- backfill ----------------------------------------------------------------------------

    async def backfill(self) -> BackfillReport:
        """Fetch the replies the gateway received while nobody listened, and merge them."""
        service = self._session.service
        running = await self._ensure_inbox()
        if service is None or running is None:
            report = BackfillReport(False, "No profile is connected.")
            self.backfill_finished.emit(report)
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
            self.backfill_finished.emit(report)
        return report

    async def _backfill(self, service: GatewayService, running: _Running) -> BackfillReport:
        from gwdesk.replies import InboxClosed, backfill, suggested_start

        store = running.store
        try:
            start = await off_thread(lambda: suggested_start(store, datetime.now(UTC)))
            result = await backfill(service, running.inbox, start)
        except GatewayError as exc:
            self._session.report(f"missed replies: {exc.message}", False)
            return BackfillReport(False, f"Missed replies could not be fetched: {exc.message}")
        except (InboxClosed, StoreError) as exc:
            return BackfillReport(False, f"Missed replies could not be stored: {exc}")
        since = start.astimezone().strftime("%d %b %H:%M")
        if result.added:
            text = f"Fetched {result.added} missed repl{'y' if result.added == 1 else 'ies'}"
        else:
            text = "No missed replies"
        self._session.report("missed replies fetched", True)
        return BackfillReport(True, f"{text} since {since}", result.added)

    # ---- the feed ----------------------------------------------------------------------------

    def drain(self) -> None:
        """Hand what was stored since the last tick to the views, in one signal."""
        running = self._running
        if running is not None:
            self._deliver(running.buffer)

    def _deliver(self, buffer: FeedBuffer) -> None:
        drained = buffer.drain()
        # A team's new replies, this console's included, come from the server's feed
        # (`_caught_up`), in the order they were committed: handed over once, from there.
        new = [] if self._team else drained.new
        self._hand_over(new, drained.updated, drained.dropped)

    def _hand_over(self, new: list[StoredReply], updated: list[StoredReply], dropped: int) -> None:
        if not new and not updated and not dropped:
            return
        delivery = ReplyDelivery(tuple(new), tuple(updated), dropped)
        if new:
            newest = max(reply.id for reply in new)
            self._latest_id = max(self._latest_id, newest)
            unseen = [r.id for r in new if r.id > self._seen_up_to]
            if self._counting is not None:
                self._counting.extend(unseen)
            self._set_unread(self._unread + len(unseen))
        if dropped and self._running is not None:
            self._recount()
        self.replies_arrived.emit(delivery)

    # ---- unread ------------------------------------------------------------------------------

    def mark_seen(self, up_to: int | None = None) -> None:
        """The operator has seen every reply up to `up_to` (default: the newest known)."""
        up_to = self._latest_id if up_to is None else up_to
        store = self._session.store
        if store is None or up_to <= self._seen_up_to:
            return
        self._seen_up_to = up_to
        replies = store.replies
        reads = self._reads
        generation = self._generation
        if up_to >= self._latest_id:
            self._set_unread(0)

        async def save() -> None:
            try:
                await off_thread(lambda: replies.mark_seen(up_to))
                if up_to >= self._latest_id or reads is None:
                    return
                figures = await reads.fetch(lambda reading: unread_figures(reading, up_to))
            except asyncio.CancelledError:
                return  # the profile closed meanwhile
            except StoreError as exc:
                log.warning("replies could not be marked as seen: %s", exc)
                return
            if generation == self._generation and self._seen_up_to == up_to:
                self._set_unread(figures.unseen)

        self._track(save())
