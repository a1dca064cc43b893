"""Composed-but-unsent text that must survive a failed send, a crash and a restart."""

from __future__ import annotations

import json
import sqlite3
from typing import Any


class DraftStore:
    """Drafts by key (one per editor), stored as JSON objects of field values."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def load(self, key: str) -> dict[str, Any]:
        row = self._conn.execute("SELECT value FROM drafts WHERE key = ?", (key,)).fetchone()
        if row is None:
            return {}
        try:
            value = json.loads(row["value"])
        except json.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}

    def save(self, key: str, fields: dict[str, Any]) -> None:
        self._conn.execute(
            "INSERT INTO drafts(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
            "value = excluded.value, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
            (key, json.dumps(fields, ensure_ascii=False)),
        )

    def clear(self, key: str) -> None:
        self._conn.execute("DELETE FROM drafts WHERE key = ?", (key,))
