"""The console's side of a team's server: one per session, bridged to the GUI thread.

For a team profile (its shared data on the office's PostgreSQL server) the hub runs the
session's `TeamLink` (`gwdesk.app.team`): presence, the change feed, typing notes.
The link calls back on threads of its own; the hub hands every call to the GUI thread
through the event loop (`tasks.to_gui_thread`), and there says:

- `changed(tables)`: the shared tables another client (or this one) committed to, a
  frozenset of names; `{"*"}` after every (re)connection, when everything past a
  view's last position must be read again. Views subscribe with `TableWatch`;
- `connection_changed(connected)`, with `lost_at` the moment it was lost;
- `consoles_changed(consoles)`: who is connected, read again (off the GUI thread) when
  the consoles table changes;
- `settings_changed(changes)`: the team settings changed (at this desk or another) since
  the last this console told, each in plain words (`gwdesk.app.setting_changes`), read
  from the record (off the GUI thread) when the settings table changes or after a
  reconnection. Changes made before the console connected are not told: it starts from
  the record's last entry.

Starting the link (it says it is there: a write) and stopping it (threads joined, a
goodbye written) run off the GUI thread; `Session.close` calls `shutdown` before the
store whose pool the link borrows closes. A profile without a server has no link: the
hub stays idle and says nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from PySide6.QtCore import QObject, Signal

from gwdesk.app.setting_changes import SettingChange, SettingChanges
from gwdesk.app.team import (
    RESYNC,
    Audit,
    Claim,
    Console,
    Member,
    StoreError,
    TeamLink,
    server_name,
)
from gwdesk.ui.tasks import (
    BackgroundTasks,
    BlockingJob,
    CoalescingRead,
    off_thread,
    to_gui_thread,
)

if TYPE_CHECKING:
    from gwdesk.ui.session import Session

log = logging.getLogger("gwdesk.ui.team")
CONNECTION_HEARD: Final = "connection"
"""What the link told: whether it is connected."""
TABLES_HEARD: Final = "tables"
"""What the link told: which shared tables changed."""


class TableWatch(QObject):
    """How a view follows the shared tables it shows: `slot()` is called (on the GUI
    thread) when one of `tables` changed, or everything may have (a reconnection). A
    child of `owner`, so the subscription ends when the view goes; nobody polls."""

    def __init__(
        self, team: TeamHub, tables: Iterable[str], slot: Callable[[], object], owner: QObject
    ) -> None:
        super().__init__(owner)
        self.tables = frozenset(tables)
        self._slot = slot
        team.changed.connect(self._changed)

    def _changed(self, changed: frozenset[str]) -> None:
        if RESYNC in changed or self.tables & changed:
            self._slot()


class TeamHub(QObject):
    """The session's link to its team's server, for the console's views."""

    changed = Signal(object)
    """frozenset[str]: the shared tables that changed (`{"*"}`: re-read everything)."""
    connection_changed = Signal(bool)
    consoles_changed = Signal(object)
    """list[Console]: the consoles heard from lately, the longest there first."""
    settings_changed = Signal(object)
    """list[SettingChange]: team settings changed since the last told, oldest first."""

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self._session = session
        self._generation = 0
        self._link: TeamLink | None = None
        self._starting: BlockingJob[TeamLink] | None = None
        self._link_starts = BackgroundTasks()
        """The link's start (blocking on the server), awaited by nobody."""
        self._consoles_read: CoalescingRead[list[Console]] | None = None
        self._settings_read: CoalescingRead[list[SettingChange]] | None = None
        self.server = ""
        """The team server's host name ("" for a profile without one)."""
        self.connected: bool | None = None
        """None until the link has first connected (or failed to)."""
        self.lost_at: datetime | None = None
        """When the connection was lost (local time), while it is."""
        self.consoles: list[Console] = []
        session.changed.connect(self._session_changed)

    @property
    def active(self) -> bool:
        """Whether the session's profile has a team server."""
        return bool(self.server)

    @property
    def link(self) -> TeamLink | None:
        return self._link

    # ---- the session -------------------------------------------------------------------------

    def _session_changed(self) -> None:
        store, data = self._session.store, self._session.data
        self._reset()
        if store is None or data is None or not store.team:
            return
        self.server = server_name(data.store_url)
        generation = self._generation
        self._consoles_read = CoalescingRead(self._read_consoles, self._show_consoles, "consoles")
        database: Any = getattr(store.shared, "database", None)
        changes = SettingChanges(Audit(database)) if database is not None else None
        if changes is not None:
            self._settings_read = CoalescingRead(
                changes.read, self._show_setting_changes, "the team's setting changes"
            )
        if database is not None:
            member = Member(store.operator, console=store.console)
            starting = self._start(database, member, generation, changes)
            self._link_starts.start(starting, "the team link's start")

    def _reset(self) -> None:
        self._generation += 1
        for reads in (self._consoles_read, self._settings_read):
            if reads is not None:
                reads.stop()
        self._consoles_read = self._settings_read = None
        was_active = self.active
        self.server = ""
        self.connected = None
        self.lost_at = None
        self.consoles = []
        if was_active:
            self.consoles_changed.emit([])

    async def _start(
        self, database: Any, member: Member, generation: int, changes: SettingChanges | None
    ) -> None:
        """`database`: the team server's (`PostgresDatabase`: its pool, and `connect` for
        the feed's own connection)."""
        # The link's threads hand each call to the GUI thread (dropped once the hub is gone).
        tell = to_gui_thread(asyncio.get_running_loop(), self, self._on_heard)

        def start() -> TeamLink:
            if changes is not None:
                # Before the feed listens: every change after this one is told.
                try:
                    changes.begin()
                except StoreError as exc:
                    log.info("team: setting changes not read yet (%s)", exc)
            return TeamLink(
                database,
                member,
                on_change=lambda tables: tell(generation, TABLES_HEARD, tables),
                on_state=lambda connected: tell(generation, CONNECTION_HEARD, connected),
                connect=database.connect,
            ).start()

        job: BlockingJob[TeamLink] = BlockingJob()
        self._starting = job
        try:
            link = await job.run(lambda _job: start(), undo=TeamLink.close)
        except asyncio.CancelledError:
            return  # `shutdown` settles the job (and closes the link it made)
        except StoreError as exc:
            log.warning("team: the link did not start: %s", exc)
            return
        finally:
            if self._starting is job:
                self._starting = None
        if generation != self._generation:
            await off_thread(link.close)
            return
        self._link = link
        # The feed's first "everything may have changed" may have come before the link
        # was here to read with: read who is connected now (a lone console counts itself).
        if self._consoles_read is not None:
            self._consoles_read.request()

    def _on_heard(self, generation: int, what: str, value: object) -> None:
        if generation != self._generation:
            return  # a link of a profile closed since
        if what == CONNECTION_HEARD:
            connected = bool(value)
            if connected:
                self.lost_at = None
            elif self.lost_at is None:
                self.lost_at = datetime.now()
            self.connected = connected
            self.connection_changed.emit(connected)
            return
        tables = frozenset(value) if isinstance(value, frozenset | set) else frozenset()
        if (RESYNC in tables or "consoles" in tables) and self._consoles_read is not None:
            self._consoles_read.request()
        if (RESYNC in tables or "settings" in tables) and self._settings_read is not None:
            self._settings_read.request()
        self.changed.emit(tables)

    # ---- who is there ------------------------------------------------------------------------

    def _read_consoles(self) -> list[Console]:
        link = self._link
        return link.presence.live() if link is not None else []

    def _show_consoles(self, consoles: list[Console]) -> None:
        self.consoles = consoles
        self.consoles_changed.emit(consoles)

    # ---- what changed in the team's settings -------------------------------------------------

    def _show_setting_changes(self, changes: list[SettingChange]) -> None:
        if changes:
            self.settings_changed.emit(changes)

    # ---- typing notes (each blocks on the server: run off the GUI thread) ----------------------

    async def typing(self, subject: str) -> None:
        """Note (or renew the note) that this operator is answering `subject`."""
        await self._note(lambda link: link.typing(subject), "written")

    async def done_typing(self, subject: str) -> None:
        await self._note(lambda link: link.done_typing(subject), "released")

    async def _note(self, change: Callable[[TeamLink], None], done: str) -> None:
        """A typing note changed on the server; one that cannot be is only logged (a note
        lapses by itself)."""
        link = self._link
        if link is not None:
            try:
                await off_thread(lambda: change(link))
            except StoreError as exc:
                log.info("team: typing note not %s (%s)", done, exc)

    async def typists(self, subject: str) -> list[Claim]:
        """The other operators answering `subject` now ([] without a server, or while it is
        away)."""
        link = self._link
        if link is None:
            return []
        try:
            return await off_thread(lambda: link.typists(subject))
        except StoreError as exc:
            log.info("team: typing notes not read (%s)", exc)
            return []

    # ---- closing -----------------------------------------------------------------------------

    async def shutdown(self) -> None:
        """The session is closing: stop the link (it leaves) before the store's pool closes."""
        self._reset()
        link, self._link = self._link, None
        starting, self._starting = self._starting, None
        await self._link_starts.cancel()  # its job is settled below: the link it made closed once
        if starting is not None:
            with contextlib.suppress(Exception):
                await starting.settle()
        if link is not None:
            await off_thread(link.close)
