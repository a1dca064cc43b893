"""One profile's local store: the SQLite file and the stores that live in it."""

from __future__ import annotations

from pathlib import Path

from gwdesk.store.database import connect
from gwdesk.store.drafts import DraftStore
from gwdesk.store.history import HistoryStore
from gwdesk.store.logcache import LogCache
from gwdesk.store.outbox import OutboxStore
from gwdesk.store.replies import ReplyStore


class LocalStore:
    def __init__(self, path: Path | str) -> None:
        self.path = path
        self.conn = connect(path)
        self.drafts = DraftStore(self.conn)
        self.history = HistoryStore(self.conn)
        # The log cache: small reads here; syncs and the Logs tab open connections of their own.
        self.logs = LogCache(self.conn, path)
        # Its own connections: the reply listener writes from its own thread (group commit).
        self.replies = ReplyStore(path)
        # Its own connection too (synchronous=FULL); its writes run on worker threads.
        self.outbox = OutboxStore(path)

    def close(self) -> None:
        self.replies.close()
        self.outbox.close()
        self.conn.close()
