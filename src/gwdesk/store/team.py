"""Who is at the other desks, who is answering whom, and who did what: a team's shared notes.

- `Presence`: each console says it is there (its operator, host, version) when it starts
  and every `HEARTBEAT` seconds after; one not heard from for three heartbeats has gone
  (a console that died says nothing). `gwdesk team status` lists the live ones.
- `Claims`: advisory notes that an operator is typing a reply to a customer, one per
  console, each with an expiry, so two operators do not answer the same person twice.
  A note never blocks a send: it is shown to the others, and it lapses by itself when
  its console stops renewing it (a console that died renews nothing).
- `Audit`: who sent what, who changed an opt-out or a template, when; appended, never
  changed.

All three are written once against `Database` (`gwdesk.store.engine`): on a team's
PostgreSQL server they are shared by every console; in a profile's own file they serve
the consoles of one workstation.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from gwdesk.store.database import store_methods
from gwdesk.store.engine import Database, Session
from gwdesk.store.unreadable import Unreadable

HEARTBEAT: Final = 10.0
"""Seconds between a console's "still here"."""
GONE_AFTER: Final = 3 * HEARTBEAT
CLAIM_FOR: Final = 15.0
"""Seconds a typing note lasts unless renewed."""
MAX_TEXT: Final = 2000
SETTING_CHANGED: Final = "setting changed"
"""The audit action of a team setting's change (written by a team's server itself)."""


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


def now_us() -> int:
    return time.time_ns() // 1000


@dataclass(frozen=True, slots=True)
class Console:
    id: str
    operator: str
    host: str
    started_at: datetime
    seen_at: datetime
    version: str


@dataclass(frozen=True, slots=True)
class Claim:
    subject: str
    console: str
    operator: str
    until_us: int


@dataclass(frozen=True, slots=True)
class AuditEntry:
    id: int
    at: datetime
    operator: str
    console: str
    action: str
    subject: str
    detail: str


def write_audit(
    session: Session, operator: str, console: str, action: str, subject: str = "", detail: str = ""
) -> None:
    """Append an audit entry through `session`: inside a store's transaction, the entry and
    the change it tells of are written together or not at all. A team's server writes its
    own, stamped with the login that made the change (`Session.audited_by_server`)."""
    if session.audited_by_server:
        return
    session.execute(
        "INSERT INTO audit(at, operator, console, action, subject, detail) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (
            now_iso(),
            operator[:200],
            console[:100],
            action[:100],
            subject[:MAX_TEXT],
            detail[:MAX_TEXT],
        ),
    )


def _console(row: Any) -> Console:
    return Console(
        row[0],
        row[1],
        row[2],
        datetime.fromisoformat(row[3]),
        datetime.fromisoformat(row[4]),
        row[5],
    )


def _entry(row: Any) -> AuditEntry:
    return AuditEntry(
        int(row[0]), datetime.fromisoformat(row[1]), row[2], row[3], row[4], row[5], row[6]
    )


@store_methods
class Presence:
    """The consoles of a store (see the module docstring)."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self.unreadable = Unreadable("consoles")

    def arrive(self, console: str, operator: str, host: str, version: str) -> None:
        stamp = now_iso()
        with self.database.transaction() as session:
            session.execute(
                "INSERT INTO consoles(id, operator, host, started_at, seen_at, version) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET operator = excluded.operator, "
                "host = excluded.host, seen_at = excluded.seen_at, version = excluded.version",
                (console, operator[:200], host[:200], stamp, stamp, version[:40]),
            )

    def still_here(self, console: str) -> None:
        with self.database.session() as session:
            session.execute("UPDATE consoles SET seen_at = ? WHERE id = ?", (now_iso(), console))

    def leave(self, console: str) -> None:
        with self.database.transaction() as session:
            session.execute("DELETE FROM consoles WHERE id = ?", (console,))
            session.execute("DELETE FROM claims WHERE console = ?", (console,))

    def live(self, within: float = GONE_AFTER) -> list[Console]:
        """The consoles heard from in the last `within` seconds, the longest there first."""
        since = datetime.fromtimestamp(time.time() - within, UTC).isoformat()
        with self.database.session() as session:
            rows = session.execute(
                "SELECT id, operator, host, started_at, seen_at, version FROM consoles "
                "WHERE seen_at >= ? ORDER BY started_at, id",
                (since,),
            ).fetchall()
        return self.unreadable.decoded(rows, _console)


@store_methods
class Claims:
    """Advisory, expiring notes of who is answering whom (see the module docstring)."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def hold(self, subject: str, console: str, operator: str, seconds: float = CLAIM_FOR) -> None:
        """Note (or renew the note) that `console`'s operator is answering `subject`; lapsed
        notes of any console are swept on the way."""
        now = now_us()
        with self.database.transaction() as session:
            session.execute("DELETE FROM claims WHERE until_us <= ?", (now,))
            session.execute(
                "INSERT INTO claims(subject, console, operator, until_us) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(subject, console) DO UPDATE SET operator = excluded.operator, "
                "until_us = excluded.until_us",
                (subject[:200], console, operator[:200], now + int(seconds * 1_000_000)),
            )

    def release(self, subject: str, console: str) -> None:
        with self.database.session() as session:
            session.execute(
                "DELETE FROM claims WHERE subject = ? AND console = ?", (subject[:200], console)
            )

    def holders(self, subject: str, *, besides: str = "") -> list[Claim]:
        """Who is answering `subject` now (lapsed notes are nobody's), other than console
        `besides`, the first to start first."""
        with self.database.session() as session:
            rows = session.execute(
                "SELECT subject, console, operator, until_us FROM claims "
                "WHERE subject = ? AND until_us > ? AND console <> ? ORDER BY until_us, console",
                (subject[:200], now_us(), besides),
            ).fetchall()
        return [Claim(row[0], row[1], row[2], int(row[3])) for row in rows]


@store_methods
class Audit:
    """Who did what (see the module docstring): read here, written by the stores with each
    change (or by a team's server itself)."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self.unreadable = Unreadable("audit")

    def entries(
        self, *, after_id: int = 0, limit: int = 1000, action: str | None = None
    ) -> list[AuditEntry]:
        """The entries after `after_id`, oldest first (only those of `action`, if named)."""
        only, values = (
            ("", (after_id,)) if action is None else ("AND action = ? ", (after_id, action))
        )
        with self.database.session() as session:
            rows = session.execute(
                "SELECT id, at, operator, console, action, subject, detail FROM audit "  # noqa: S608 - constant SQL
                f"WHERE id > ? {only}ORDER BY id LIMIT ?",
                (*values, limit),
            ).fetchall()
        return self.unreadable.decoded(rows, _entry)

    def last_id(self) -> int:
        """The newest entry's id (0: none yet): where a reader that wants only what comes
        next starts."""
        with self.database.session() as session:
            row = session.execute("SELECT COALESCE(MAX(id), 0) FROM audit").fetchone()
        return int(row[0])
