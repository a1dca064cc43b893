"""One profile's local store: the SQLite file and the stores that live in it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from gwdesk.logs.cache import LogCache
from gwdesk.store.background_writer import BackgroundWriter
from gwdesk.store.database import StoreError, connect
from gwdesk.store.drafts import DraftStore
from gwdesk.store.history import HistoryStore
from gwdesk.store.outbox import OutboxStore
from gwdesk.store.replies import ReplyStore


class LocalStore:
    def __init__(self, path: Path | str) -> None:
        self.path = path
        self.conn = connect(path)
        # Drafts and send history are written by a thread of its own, in order: the
        # console hands them over and never waits for another process's write lock.
        memory = str(path) == ":memory:"
        self.writer = BackgroundWriter(path, shared=self.conn if memory else None)
        self.drafts = DraftStore(self.conn, self.writer)
        self.history = HistoryStore(self.conn, self.writer)
        # The log cache: small reads here; syncs and the Logs tab open connections of their own.
        self.logs = LogCache(self.conn, path)
        # Its own connections: the reply listener writes from its own thread (group commit).
        self.replies = ReplyStore(path)
        # Its own connection too (synchronous=FULL); its writes run on worker threads.
        self.outbox = OutboxStore(path)

    def close(self) -> None:
        self.writer.close()  # first: what was handed over goes into the file (may wait)
        self.replies.close()
        self.outbox.close()
        self.conn.close()


def open_local(path: Path | str) -> LocalStore:
    """Open (and upgrade) a profile's store; `StoreError` naming the file when it cannot
    be used (damaged, not a database, unreadable), which is then left as it is."""
    try:
        return LocalStore(path)
    except (sqlite3.Error, OSError) as exc:
        raise StoreError(f"The store at {path} cannot be opened ({exc}).") from None
