"""What was sent and what became of it, newest first: the profile's, or the team's.

History rows are shared data: on a team's server every console lists every send, and
each row says which operator sent it. They are written by a `BackgroundWriter`
through the shared store's `Database` (drafts keep a writer of their own on the
local file), so a send never waits for the file's lock or the server.
"""

from __future__ import annotations

import functools
import json
import threading
from concurrent.futures import Future
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gwdesk.store.background_writer import BackgroundWriter
from gwdesk.store.database import store_methods
from gwdesk.store.engine import Database, Session
from gwdesk.store.shared import SharedData, database_for
from gwdesk.store.unreadable import Unreadable

HISTORY_WHAT = "the send history"
MAX_OPERATOR = 200


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    at: datetime
    channel: str
    recipients: str
    text: str
    ok: bool
    message_id: str | None = None
    batch_code: str | None = None
    status: str | None = None
    external_system_id: str | None = None
    detail: str = ""
    id: int | None = None
    operator: str = ""
    """Who sent it (a team's operator name; '' for a one-desk profile's older rows)."""


@dataclass(frozen=True, slots=True)
class Reached:
    """One send of a text and the numbers it reached (`HistoryStore.reached_with`)."""

    at: datetime
    operator: str
    numbers: frozenset[str]


@store_methods
class HistoryStore:
    """The console `queue`s its rows (the writer's thread writes them); `since` lists the
    queued ones too until they are stored, each once.

    `data`: where the rows are (a profile's path, its `SharedData`, or a `Database`
    another store of the profile opened); `writer` writes through the same place;
    `operator` is written with each row that does not name one."""

    def __init__(
        self,
        data: Path | str | SharedData | Database,
        writer: BackgroundWriter,
        *,
        operator: str = "",
    ) -> None:
        self.database, self._owned = database_for(data)
        self._writer = writer
        self.operator = operator[:MAX_OPERATOR]
        self._lock = threading.Lock()
        self._queued: list[HistoryEntry] = []
        self.unreadable = Unreadable("history")

    def close(self) -> None:
        if self._owned:
            self.database.close()

    def add(self, entry: HistoryEntry) -> HistoryEntry:
        """Write now, on this thread (it may wait for the file's write lock)."""
        entry = self._signed(entry)
        with self.database.session() as session:
            return _insert(session, entry)

    def queue(self, entry: HistoryEntry) -> Future[HistoryEntry]:
        """Hand the row to the writer thread and return at once; the future gives it
        with its id (a failure is reported by the writer)."""
        entry = replace(self._signed(entry), id=None)
        with self._lock:
            self._queued.append(entry)
        written = self._writer.submit(functools.partial(_insert, entry=entry), what=HISTORY_WHAT)
        written.add_done_callback(functools.partial(self._written, entry))
        return written

    def since(self, moment: datetime, limit: int = 1000) -> list[HistoryEntry]:
        start = moment.astimezone(UTC)
        with self._lock:  # first: a row written meanwhile is then found in the store
            queued = [e for e in self._queued if e.at.astimezone(UTC) >= start]
        with self.database.session() as session:
            rows = session.execute(
                "SELECT * FROM history WHERE at >= ? ORDER BY at DESC, id DESC LIMIT ?",
                (start.isoformat(), limit),
            ).fetchall()
        stored = self.unreadable.decoded(rows, _entry)
        if not queued:
            return stored
        written = {replace(e, id=None) for e in stored}
        merged = stored + [e for e in queued if e not in written]
        merged.sort(key=lambda e: e.at.astimezone(UTC), reverse=True)
        return merged[:limit]

    def reached_with(self, text: str, moment: datetime, limit: int = 200) -> list[Reached]:
        """The sends of exactly `text` since `moment`, newest first, each with the numbers
        it reached. A history row names a list by its count ("200 recipients") and its
        first lodged request's ExternalSystemId; the numbers are those of its outbox
        batch's lodged requests (a run and its "Send remaining" are one batch, told once).
        Rows not yet written by the writer thread count too."""
        start = moment.astimezone(UTC)
        with self._lock:
            queued = [e for e in self._queued if e.text == text and e.at.astimezone(UTC) >= start]
        with self.database.session() as session:
            rows = session.execute(
                "SELECT at, external_system_id, operator FROM history "
                "WHERE text = ? AND at >= ? AND external_system_id IS NOT NULL "
                "ORDER BY at DESC, id DESC LIMIT ?",
                (text, start.isoformat(), limit),
            ).fetchall()
            sends = [(at, str(r[1]), str(r[2] or "")) for r in rows if (at := _moment(r[0]))] + [
                (e.at, e.external_system_id, e.operator) for e in queued if e.external_system_id
            ]
            found: dict[int, Reached] = {}
            for at, external, operator in sorted(sends, key=lambda s: s[0], reverse=True):
                lodged = session.execute(
                    "SELECT b.id, b.created_us, e.recipients FROM outbox_entries m "
                    "JOIN outbox_batches b ON b.id = m.batch_id "
                    "JOIN outbox_entries e ON e.batch_id = b.id "
                    "WHERE m.external_system_id = ? AND e.state = 'lodged' "
                    "ORDER BY b.id DESC",
                    (external,),
                ).fetchall()
                if not lodged:
                    continue
                # An operator's own ExternalSystemId may name several sends: the last
                # one recorded before the row was written is the row's.
                made = int(at.astimezone(UTC).timestamp() * 1_000_000)
                before = [int(r[0]) for r in lodged if int(r[1] or 0) <= made]
                batch = max(before or [int(r[0]) for r in lodged])
                if batch in found:
                    continue
                numbers = frozenset(n for r in lodged if int(r[0]) == batch for n in _numbers(r[2]))
                found[batch] = Reached(at, operator, numbers)
        return list(found.values())

    def _signed(self, entry: HistoryEntry) -> HistoryEntry:
        if entry.operator or not self.operator:
            return entry
        return replace(entry, operator=self.operator)

    def _written(self, entry: HistoryEntry, _written: Future[HistoryEntry]) -> None:
        with self._lock:
            self._queued = [e for e in self._queued if e is not entry]


def _insert(session: Session, entry: HistoryEntry) -> HistoryEntry:
    rows = session.execute(
        "INSERT INTO history(at, channel, recipients, text, ok, message_id, batch_code, "
        "status, external_system_id, detail, operator) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id, operator",
        (
            entry.at.astimezone(UTC).isoformat(), entry.channel, entry.recipients,
            entry.text, int(entry.ok), entry.message_id, entry.batch_code, entry.status,
            entry.external_system_id, entry.detail, entry.operator[:MAX_OPERATOR],
        ),
    ).fetchall()  # fmt: skip
    # A team's server names an operator's own login itself: the row as it was written.
    return replace(entry, id=int(rows[0][0]), operator=rows[0][1])


def _moment(text: object) -> datetime | None:
    """A row's time; None when it cannot be read (an edited row is passed over)."""
    try:
        found = datetime.fromisoformat(str(text))
    except ValueError:
        return None
    return found if found.tzinfo is not None else None


def _numbers(text: object) -> tuple[str, ...]:
    """An outbox entry's recipients (a JSON list); () when it cannot be read."""
    try:
        loaded = json.loads(str(text))
    except (json.JSONDecodeError, TypeError):
        return ()
    return tuple(str(n) for n in loaded) if isinstance(loaded, list) else ()


def _entry(row: Any) -> HistoryEntry:
    return HistoryEntry(
        at=datetime.fromisoformat(row["at"]),
        channel=row["channel"],
        recipients=row["recipients"],
        text=row["text"],
        ok=bool(row["ok"]),
        message_id=row["message_id"],
        batch_code=row["batch_code"],
        status=row["status"],
        external_system_id=row["external_system_id"],
        detail=row["detail"],
        id=int(row["id"]),
        operator=row["operator"] or "",
    )
