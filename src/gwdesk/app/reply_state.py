"""What the reply inbox reports and keeps: the listener's status and settings, the replies
handed to the views, backfill reports and the words for what it cannot do.

The flow (`gwdesk.app.reply_inbox`), the console's reply hub and the widgets that show
its state share these; the settings are read and written through their declarations
(`gwdesk.domain.settings`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final, Protocol, TypeVar

from gwdesk.domain.settings import (
    LISTENER_ENABLED,
    LISTENER_HOST,
    LISTENER_PORT,
    LISTENER_PUBLIC_HOST,
    Setting,
)
from gwdesk.store.replies import StoredReply
from gwdesk.store.stored_settings import StoredSettings

T = TypeVar("T")
LOOPBACK: Final = LISTENER_HOST.default
NO_TEAM_ROUTE: Final = (
    "The office's reply receiver has not published its ReplyPath yet: start "
    "`gwdesk listen --store postgresql://…` on the machine that receives the team's "
    "replies (see docs/team.md), then send again."
)
LISTENER_OFF: Final = "The reply listener is not running: start it in the status bar."
TEAM_STOPPED: Final = (
    "The office's reply receiver (gwdesk listen --store) takes the team's replies, and every "
    "console shows them. This console's own listener is off; start it only to take replies "
    "here as well."
)


class ListenerState(StrEnum):
    NO_PROFILE = "no_profile"
    STOPPED = "stopped"
    STARTING = "starting"
    LISTENING = "listening"
    STOPPING = "stopping"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class ListenerStatus:
    """What the status bar and the Replies tab show about the listener."""

    state: ListenerState
    address: str = ""
    """`http://127.0.0.1:8642` while listening."""
    message: str = ""
    """Why it is not listening (operator text), when it failed."""
    suggestion: int | None = None
    """A free port to offer when the one wanted was taken."""
    warning: str | None = None
    """Set when bound to an address other machines can reach."""
    team: bool = False
    """A team profile: the office's receiver takes the replies while this one is off."""

    @property
    def short(self) -> str:
        if self.state is ListenerState.STOPPED and self.team:
            return "Replies: office receiver"
        if self.state is ListenerState.LISTENING:
            return f"Replies: {self.address.removeprefix('http://')}"
        if self.state is ListenerState.ERROR:
            return "Replies: not listening"
        return {
            ListenerState.NO_PROFILE: "Replies: –",
            ListenerState.STOPPED: "Replies: stopped",
            ListenerState.STARTING: "Replies: starting…",
            ListenerState.STOPPING: "Replies: stopping…",
        }[self.state]

    @property
    def long(self) -> str:
        if self.state is ListenerState.LISTENING:
            text = f"The reply listener is listening on {self.address}."
            return f"{text}\n{self.warning}" if self.warning else text
        if self.state is ListenerState.ERROR:
            return self.message
        if self.state is ListenerState.STOPPED and self.team:
            return TEAM_STOPPED
        if self.state is ListenerState.STOPPED:
            return "The reply listener is stopped: replies wait at the gateway (Fetch missed "
            "replies, or start it, to get them)."
        if self.state is ListenerState.NO_PROFILE:
            return "No profile is connected."
        return self.short


@dataclass(frozen=True, slots=True)
class ListenerSettings:
    """Where the listener binds; kept per profile in its store."""

    host: str = LOOPBACK
    port: int | None = None
    """The port to ask for; None: the one the listener remembers (else its default)."""
    public_host: str | None = None
    """The host name put in the `ReplyPath` when it differs from `host` (a NAT, a proxy)."""
    enabled: bool = True
    """Start with the session; the operator's last start/stop decides."""


@dataclass(frozen=True, slots=True)
class ReplyDelivery:
    """One drain of the feed: what the views upsert, in storing order."""

    new: tuple[StoredReply, ...]
    updated: tuple[StoredReply, ...] = ()
    dropped: int = 0
    """Replies that overflowed the buffer: the views re-read the store instead."""

    def __len__(self) -> int:
        return len(self.new) + len(self.updated)


@dataclass(frozen=True, slots=True)
class BackfillReport:
    ok: bool
    text: str
    added: int = 0


class InboxEvents(Protocol):
    """What the reply inbox tells whoever shows it (the console's hub: as signals), on the
    event loop's thread."""

    def status_changed(self, status: ListenerStatus) -> None: ...

    def replies_arrived(self, delivery: ReplyDelivery) -> None:
        """At most one per drain of the feed (or per read of the team's replies)."""
        ...

    def unread_changed(self, unread: int) -> None: ...

    def backfill_finished(self, report: BackfillReport) -> None: ...

    def route_changed(self) -> None:
        """Where two-way sends route replies changed (`template`, `route_problem`)."""
        ...

    def unreadable_passed(self, count: int) -> None:
        """How many stored replies were passed over so far because this gwdesk cannot
        read them (a team profile); told when it grows."""
        ...

    def activity(self, what: str, ok: bool) -> None:
        """A gateway call made (the status bar's last activity)."""
        ...


def unreadable_text(count: int) -> str:
    """What the status bar says of the replies the team's catch-up passed over (`count` so
    far): one stored by another client in a form this gwdesk cannot read."""
    replies = "1 reply" if count == 1 else f"{count:,} replies"
    return f"{replies} could not be read (another desk's data this gwdesk cannot show); see the log"


class SettingsSource(Protocol):
    """Where the listener's settings are read from: the store, or a reader of its file."""

    def get(self, setting: Setting[T]) -> T: ...


def read_settings(settings: SettingsSource) -> ListenerSettings:
    return ListenerSettings(
        host=settings.get(LISTENER_HOST),
        port=settings.get(LISTENER_PORT),
        public_host=settings.get(LISTENER_PUBLIC_HOST),
        enabled=settings.get(LISTENER_ENABLED),
    )


def write_settings(settings: StoredSettings, chosen: ListenerSettings) -> None:
    settings.set(LISTENER_HOST, chosen.host)
    settings.set(LISTENER_PUBLIC_HOST, chosen.public_host or None)
    settings.set(LISTENER_ENABLED, chosen.enabled)
    if chosen.port is not None and chosen.port > 0:
        settings.set(LISTENER_PORT, chosen.port)
