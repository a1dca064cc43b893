"""What this console sent and what became of it, newest first."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, replace
from datetime import UTC, datetime


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


class HistoryStore:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def add(self, entry: HistoryEntry) -> HistoryEntry:
        cursor = self._conn.execute(
            "INSERT INTO history(at, channel, recipients, text, ok, message_id, batch_code, "
            "status, external_system_id, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                entry.at.astimezone(UTC).isoformat(), entry.channel, entry.recipients,
                entry.text, int(entry.ok), entry.message_id, entry.batch_code, entry.status,
                entry.external_system_id, entry.detail,
            ),
        )  # fmt: skip
        return replace(entry, id=cursor.lastrowid)

    def since(self, moment: datetime, limit: int = 1000) -> list[HistoryEntry]:
        rows = self._conn.execute(
            "SELECT * FROM history WHERE at >= ? ORDER BY at DESC, id DESC LIMIT ?",
            (moment.astimezone(UTC).isoformat(), limit),
        ).fetchall()
        return [_entry(row) for row in rows]


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
