"""What the reply hub reports and keeps, without Qt: listener status and settings,
deliveries, backfill reports, and the unread figures read from the profile's store.

The hub (`reply_hub.py`) and the widgets that show its state share these.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Final

from gwdesk.store.replies import SEEN_KEY, ReplyStore, StoredReply

LOOPBACK: Final = "127.0.0.1"
HOST_KEY: Final = "listener_host"
PUBLIC_HOST_KEY: Final = "listener_public_host"
ENABLED_KEY: Final = "listener_enabled"


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

    @property
    def short(self) -> str:
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


@dataclass(frozen=True, slots=True)
class UnreadFigures:
    seen_up_to: int
    latest_id: int
    unseen: int


def unread_figures(path: Path | str, above: int | None = None) -> UnreadFigures:
    """The seen watermark, the newest id and the unseen count, read in one snapshot.

    One snapshot, so that a reply stored while counting is either in all three
    figures or in none (the hub then adds those it was handed meanwhile).
    """
    if str(path) == ":memory:":
        return UnreadFigures(0, 0, 0)
    uri = Path(path).resolve().as_uri() + "?mode=ro"
    conn = sqlite3.connect(uri, uri=True, isolation_level=None)
    try:
        conn.execute("BEGIN")
        row = conn.execute("SELECT value FROM reply_meta WHERE key = ?", (SEEN_KEY,)).fetchone()
        seen = int(row[0]) if row is not None and str(row[0]).isdigit() else 0
        latest = conn.execute("SELECT COALESCE(MAX(id), 0) FROM replies").fetchone()[0]
        unseen = conn.execute(
            "SELECT COUNT(*) FROM replies WHERE id > ?", (seen if above is None else above,)
        ).fetchone()[0]
        conn.execute("COMMIT")
    finally:
        conn.close()
    return UnreadFigures(seen, int(latest), int(unseen))


def read_settings(store: ReplyStore) -> ListenerSettings:
    host = store.meta(HOST_KEY) or LOOPBACK
    return ListenerSettings(
        host=host,
        port=store.remembered_port(),
        public_host=store.meta(PUBLIC_HOST_KEY) or None,
        enabled=store.meta(ENABLED_KEY) != "0",
    )


def write_settings(store: ReplyStore, settings: ListenerSettings) -> None:
    store.set_meta(HOST_KEY, settings.host)
    store.set_meta(PUBLIC_HOST_KEY, settings.public_host or "")
    store.set_meta(ENABLED_KEY, "1" if settings.enabled else "0")
    if settings.port is not None and settings.port > 0:
        store.remember_port(settings.port)
