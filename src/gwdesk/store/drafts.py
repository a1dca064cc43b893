"""Composed-but-unsent text that must survive a failed send, a crash and a restart."""

from __future__ import annotations

import functools
import json
import sqlite3
import threading
from concurrent.futures import Future
from typing import Any

from gwdesk.store.background_writer import BackgroundWriter
from gwdesk.store.database import store_methods
from gwdesk.store.engine import Session
from gwdesk.store.stored_settings import LockedConnection

DRAFT_WHAT = "the draft"


@store_methods
class DraftStore:
    """Drafts by key (one per editor), stored as JSON objects of field values.

    The console `queue`s its drafts: the store's writer thread saves them, and `load`
    answers with a queued draft until it is in the file, so a tab rebuilt (or a profile
    switched back) meanwhile still gets the newest text.
    """

    def __init__(self, conn: LockedConnection, writer: BackgroundWriter) -> None:
        self._db = conn
        """The profile file's connection, used under its lock (the store may close it)."""
        self._writer = writer
        self._lock = threading.Lock()
        self._queued: dict[str, tuple[object, str]] = {}
        """key -> (token, JSON) of the newest draft handed to the writer and not written yet."""

    def load(self, key: str) -> dict[str, Any]:
        with self._lock:
            queued = self._queued.get(key)
        if queued is not None:
            return _parse(queued[1])
        with self._db.lock:
            row = self._db.conn.execute("SELECT value FROM drafts WHERE key = ?", (key,)).fetchone()
        return {} if row is None else _parse(row["value"])

    def save(self, key: str, fields: dict[str, Any]) -> None:
        """Write now, on this thread (it may wait for the file's write lock)."""
        with self._db.lock:
            _upsert(self._db.conn, key, json.dumps(fields, ensure_ascii=False))

    def queue(self, key: str, fields: dict[str, Any]) -> Future[None]:
        """Hand the draft to the writer thread and return at once; a newer draft of the
        same key replaces it if it is not written yet. A failure is reported by the
        writer, and the draft stays what `load` answers."""
        value = json.dumps(fields, ensure_ascii=False)
        token = object()
        with self._lock:
            self._queued[key] = (token, value)
        written = self._writer.submit(
            functools.partial(_upsert, key=key, value=value), key=("draft", key), what=DRAFT_WHAT
        )
        written.add_done_callback(functools.partial(self._written, key, token))
        return written

    def clear(self, key: str) -> None:
        with self._db.lock:
            self._db.conn.execute("DELETE FROM drafts WHERE key = ?", (key,))

    def _written(self, key: str, token: object, written: Future[None]) -> None:
        if written.exception() is not None:
            return  # not in the file: the newest text stays here for `load`
        with self._lock:
            queued = self._queued.get(key)
            if queued is not None and queued[0] is token:
                del self._queued[key]


def _upsert(conn: Session | sqlite3.Connection, key: str, value: str) -> None:
    """On the store's connection (`save`), or in the writer's transaction (`queue`)."""
    conn.execute(
        "INSERT INTO drafts(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
        "value = excluded.value, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
        (key, value),
    )


def _parse(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}
