"""One console's link to its team's server: who it is, that it is there, and what changed.

A team profile's console (or `gwdesk listen --store`) is one of several clients of the
office's PostgreSQL server. `TeamLink` is everything it does as a member, beside its
ordinary store reads and writes:

- presence: it arrives with its operator's name, host and version, says it is still
  there every `HEARTBEAT` seconds from a thread of its own, and leaves when closed
  (a console that dies just stops being heard from);
- the change feed (`gwdesk.store.changes.ChangeFeed`): `on_change(tables)` whenever
  another client committed to a shared table, `{"*"}` after every (re)connection
  (re-read everything past your last position), and `on_state(connected)` when the
  server goes away or comes back. Both are called on the feed's thread: the console
  passes them to its event loop;
- typing notes (`gwdesk.store.team.Claims`): `typing(subject)` notes (and renews) that
  this operator is answering a customer, `typists(subject)` lists the others who are.

Every method but the callbacks blocks on the server: the console calls them off its
GUI thread. A server that is away makes the heartbeat log and try again, never stop.

Beside the link: which shared tables a view of the opt-out list or the address book
follows (`OPTOUT_TABLES`, `CONTACT_TABLES`), and the server's name as the console shows
it (`server_name`, never a password); the store's types a view of the team needs
(`Console`, `Claim`, `Audit`, `RESYNC`, `StoreError`) are re-exported from here.
"""

from __future__ import annotations

import logging
import socket
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

from gwdesk import __version__
from gwdesk.store.changes import RESYNC, ChangeFeed
from gwdesk.store.database import StoreError
from gwdesk.store.engine import Database
from gwdesk.store.team import CLAIM_FOR, HEARTBEAT, Audit, Claim, Claims, Console, Presence

__all__ = [
    "CONTACT_TABLES",
    "OPTOUT_TABLES",
    "RESYNC",
    "Audit",
    "Claim",
    "Console",
    "Member",
    "StoreError",
    "TeamLink",
    "conversation_subject",
    "server_name",
]
log = logging.getLogger("gwdesk.team")
OPTOUT_TABLES: Final = frozenset({"optouts", "optout_changes"})
"""The shared tables the opt-out list is read from: another desk's change to it."""
CONTACT_TABLES: Final = frozenset({"contacts", "contact_numbers", "contact_members"})
"""The shared tables the address book is read from."""


def server_name(store_url: str | None) -> str:
    """The team server's host, as the status bar names it (never a password)."""
    if not store_url:
        return ""
    try:
        return urlsplit(store_url).hostname or "localhost"
    except ValueError:
        return "the team's server"


@dataclass(frozen=True, slots=True)
class Member:
    """Who this client is to the others."""

    operator: str
    console: str = field(default_factory=lambda: uuid.uuid4().hex)
    host: str = field(default_factory=socket.gethostname)
    version: str = __version__


def conversation_subject(number: str) -> str:
    """What a typing note is about: one customer's conversation."""
    return f"conversation:{number}"


class TeamLink:
    """A member's presence, change feed and typing notes (see the module docstring)."""

    def __init__(
        self,
        database: Database,
        member: Member,
        *,
        on_change: Callable[[frozenset[str]], None],
        on_state: Callable[[bool], None] = lambda _connected: None,
        connect: Callable[[], Any],
        heartbeat: float = HEARTBEAT,
    ) -> None:
        """`database`: the server's pool; `connect` opens the feed's own connection
        (`PostgresDatabase.connect`)."""
        self.member = member
        self.presence = Presence(database)
        self.claims = Claims(database)
        self._feed = ChangeFeed(connect, on_change, self._state(on_state))
        self._heartbeat = heartbeat
        self._stop = threading.Event()
        self._beats = threading.Thread(target=self._beat, name="gwdesk-presence", daemon=True)
        self._arrived = False

    @property
    def connected(self) -> bool:
        return self._feed.connected

    def start(self) -> TeamLink:
        """Arrive (blocking; a server that is away is retried by the heartbeat) and start
        the feed and the heartbeat."""
        self._arrive()
        self._feed.start()
        self._beats.start()
        return self

    def _state(self, on_state: Callable[[bool], None]) -> Callable[[bool], None]:
        def told(connected: bool) -> None:
            if connected and not self._arrived:
                self._arrive()
            on_state(connected)

        return told

    def _arrive(self) -> None:
        member = self.member
        try:
            self.presence.arrive(member.console, member.operator, member.host, member.version)
        except StoreError as exc:
            log.info("team: not arrived yet (%s)", exc)
            self._arrived = False
        else:
            self._arrived = True

    def _beat(self) -> None:
        while not self._stop.wait(self._heartbeat):
            if not self._arrived:
                self._arrive()
                continue
            try:
                self.presence.still_here(self.member.console)
            except StoreError as exc:
                log.info("team: heartbeat missed (%s)", exc)

    def typing(self, subject: str, seconds: float = CLAIM_FOR) -> None:
        """Note that this operator is answering `subject` (renew it while they type)."""
        self.claims.hold(subject, self.member.console, self.member.operator, seconds)

    def done_typing(self, subject: str) -> None:
        self.claims.release(subject, self.member.console)

    def typists(self, subject: str) -> list[Claim]:
        """The other operators answering `subject` now."""
        return self.claims.holders(subject, besides=self.member.console)

    def close(self) -> None:
        """Stop the feed and the heartbeat and leave (best effort: a server that is away
        lets this console's row lapse by itself)."""
        self._stop.set()
        self._feed.close()
        if self._beats.is_alive():
            self._beats.join(timeout=5)
        try:
            self.presence.leave(self.member.console)
        except StoreError as exc:
            log.info("team: left without saying so (%s)", exc)
