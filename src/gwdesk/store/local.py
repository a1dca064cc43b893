"""One profile's local store: the SQLite file and the stores that live in it.

The log cache lives in the same file but belongs to the log feature
(`gwdesk.logs.cache.LogCache`, made from this store by whoever shows the log).
"""

from __future__ import annotations

from pathlib import Path

from gwdesk.store.background_writer import BackgroundWriter
from gwdesk.store.database import StoreError, connect, store_methods
from gwdesk.store.drafts import DraftStore
from gwdesk.store.history import HistoryStore
from gwdesk.store.outbox import OutboxStore
from gwdesk.store.replies import ReplyStore
from gwdesk.store.settings import LockedConnection, StoredSettings


@store_methods
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
        self.settings = StoredSettings(LockedConnection(self.conn))
        """The profile's settings (`gwdesk.domain.settings`, those kept in the profile store)."""
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
    except (StoreError, OSError) as exc:
        raise StoreError(f"The store at {path} cannot be opened ({exc}).") from None
