"""One profile's local store: the SQLite file and the stores that live in it.

The log cache lives in the same file but belongs to the log feature
(`gwdesk.logs.cache.LogCache`, made from this store by whoever shows the log).
"""

from __future__ import annotations

from pathlib import Path

from gwdesk.domain.numbers import DEFAULT_REGION
from gwdesk.domain.optout_words import Keywords
from gwdesk.domain.settings import OPT_IN_KEYWORDS, OPT_OUT_KEYWORDS
from gwdesk.store.background_writer import BackgroundWriter
from gwdesk.store.contacts import ContactStore
from gwdesk.store.database import StoreError, connect, store_methods
from gwdesk.store.drafts import DraftStore
from gwdesk.store.history import HistoryStore
from gwdesk.store.optouts import OptOutStore
from gwdesk.store.outbox import OutboxStore
from gwdesk.store.replies import OptOutRules, ReplyStore
from gwdesk.store.settings import LockedConnection, StoredSettings
from gwdesk.store.templates import TemplateStore


@store_methods
class LocalStore:
    def __init__(
        self, path: Path | str, account: str | None = None, region: str = DEFAULT_REGION
    ) -> None:
        """`account`: the gateway account whose opt-out list the keyword replies stored
        here change (None: replies are stored and no list changes, as for a store
        opened only to read); `region` reads a reply's national sender number."""
        self.path = path
        self.account = account
        self.region = region
        self.conn = connect(path)
        # Drafts and send history are written by a thread of its own, in order: the
        # console hands them over and never waits for another process's write lock.
        memory = str(path) == ":memory:"
        self.writer = BackgroundWriter(path, shared=self.conn if memory else None)
        shared = self._locked = LockedConnection(self.conn)
        """The file's connection and the lock its users take (closing it takes it too)."""
        self.drafts = DraftStore(shared, self.writer)
        self.history = HistoryStore(self.conn, self.writer)
        self.settings = StoredSettings(shared)
        """The profile's settings (`gwdesk.domain.settings`, those kept in the profile store)."""
        self.templates = TemplateStore(shared)
        # Its own connections: the reply listener writes from its own thread (group commit).
        self.replies = ReplyStore(path)
        self.optouts = OptOutStore(path, account or "")
        self.apply_optout_keywords()
        # Its own connection: an import is one long transaction, off the GUI thread.
        self.contacts = ContactStore(path, self.optouts)
        # Its own connection too (synchronous=FULL); its writes run on worker threads.
        self.outbox = OutboxStore(path)

    def apply_optout_keywords(self) -> OptOutRules | None:
        """Read the profile's keywords (a setting) into the rules the reply store applies
        as it stores each reply; call again after the operator changes them."""
        if self.account is None:
            return None
        opt_out: tuple[str, ...] = self.settings.get(OPT_OUT_KEYWORDS)
        opt_in: tuple[str, ...] = self.settings.get(OPT_IN_KEYWORDS)
        rules = OptOutRules(self.account, Keywords(opt_out, opt_in), self.region)
        self.replies.optouts = rules  # one reference swap: the writer thread reads it per group
        return rules

    def close(self) -> None:
        self.writer.close()  # first: what was handed over goes into the file (may wait)
        self.replies.close()
        self.optouts.close()
        self.contacts.close()
        self.outbox.close()
        with self._locked.lock:  # never while a worker thread is in the middle of a statement
            self.conn.close()


def open_local(
    path: Path | str, account: str | None = None, region: str = DEFAULT_REGION
) -> LocalStore:
    """Open (and upgrade) a profile's store; `StoreError` naming the file when it cannot
    be used (damaged, not a database, unreadable), which is then left as it is."""
    try:
        return LocalStore(path, account, region)
    except (StoreError, OSError) as exc:
        raise StoreError(f"The store at {path} cannot be opened ({exc}).") from None
