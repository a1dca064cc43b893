"""What this console sent and what became of it, newest first."""

from __future__ import annotations

import functools
import sqlite3
import threading
from concurrent.futures import Future
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from gwdesk.store.background_writer import BackgroundWriter
from gwdesk.store.database import store_methods

HISTORY_WHAT = "the send history"


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


@store_methods
class HistoryStore:
    """The console `queue`s its rows (the store's writer thread writes them); `since`
    lists the queued ones too until they are in the file, each once."""

    def __init__(self, conn: sqlite3.Connection, writer: BackgroundWriter) -> None:
        self._conn = conn
        self._writer = writer
        self._lock = threading.Lock()
        self._queued: list[HistoryEntry] = []

    def add(self, entry: HistoryEntry) -> HistoryEntry:
        """Write now, on this thread (it may wait for the file's write lock)."""
        return _insert(self._conn, entry)

    def queue(self, entry: HistoryEntry) -> Future[HistoryEntry]:
        """Hand the row to the writer thread and return at once; the future gives it
        with its id (a failure is reported by the writer)."""
        entry = replace(entry, id=None)
        with self._lock:
            self._queued.append(entry)
        written = self._writer.submit(functools.partial(_insert, entry=entry), what=HISTORY_WHAT)
        written.add_done_callback(functools.partial(self._written, entry))
        return written

    def since(self, moment: datetime, limit: int = 1000) -> list[HistoryEntry]:
        start = moment.astimezone(UTC)
        with self._lock:  # first: a row written meanwhile is then found in the file
            queued = [e for e in self._queued if e.at.astimezone(UTC) >= start]
        rows = self._conn.execute(
            "SELECT * FROM history WHERE at >= ? ORDER BY at DESC, id DESC LIMIT ?",
            (start.isoformat(), limit),
        ).fetchall()
        stored = [_entry(row) for row in rows]
        if not queued:
            return stored
        written = {replace(e, id=None) for e in stored}
        merged = stored + [e for e in queued if e not in written]
        merged.sort(key=lambda e: e.at.astimezone(UTC), reverse=True)
        return merged[:limit]

    def _written(self, entry: HistoryEntry, _written: Future[HistoryEntry]) -> None:
        with self._lock:
            self._queued = [e for e in self._queued if e is not entry]


def _insert(conn: sqlite3.Connection, entry: HistoryEntry) -> HistoryEntry:
    cursor = conn.execute(
        "INSERT INTO history(at, channel, recipients, text, ok, message_id, batch_code, "
        "status, external_system_id, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            entry.at.astimezone(UTC).isoformat(), entry.channel, entry.recipients,
            entry.text, int(entry.ok), entry.message_id, entry.batch_code, entry.status,
            entry.external_system_id, entry.detail,
        ),
    )  # fmt: skip
    return replace(entry, id=cursor.lastrowid)


def _entry(row: sqlite3.Row) -> HistoryEntry:
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
        id=row["id"],
    )
