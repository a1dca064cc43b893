"""One profile's local store: the SQLite file and the stores that live in it.

The log cache lives in the same file but belongs to the log feature
(`gwdesk.logs.cache.LogCache`, made from this store by whoever shows the log).
"""

from __future__ import annotations

import uuid
from pathlib import Path

from gwdesk.domain.numbers import DEFAULT_REGION
from gwdesk.domain.optout_words import Keywords
from gwdesk.domain.settings import OPT_IN_KEYWORDS, OPT_OUT_KEYWORDS
from gwdesk.store.background_writer import BackgroundWriter
from gwdesk.store.contacts import ContactStore
from gwdesk.store.conversations import ConversationStore
from gwdesk.store.database import StoreError, connect, store_methods
from gwdesk.store.drafts import DraftStore
from gwdesk.store.engine import SqliteDatabase
from gwdesk.store.history import HistoryStore
from gwdesk.store.optouts import OptOutStore
from gwdesk.store.outbox import OutboxStore
from gwdesk.store.replies import OptOutRules, ReplyStore
from gwdesk.store.rule_runs import RuleRuns
from gwdesk.store.shared import FileData, SharedData
from gwdesk.store.stored_settings import LockedConnection, StoredSettings
from gwdesk.store.templates import TemplateStore


@store_methods
class LocalStore:
    def __init__(
        self,
        path: Path | str,
        account: str | None = None,
        region: str = DEFAULT_REGION,
        *,
        shared: SharedData | None = None,
        operator: str = "",
        console: str | None = None,
    ) -> None:
        """`account`: the gateway account whose opt-out list the keyword replies stored
        here change (None: replies are stored and no list changes, as for a store
        opened only to read); `region` reads a reply's national sender number;
        `shared`: the team's server (None: this file holds everything); `operator`: who
        works here, as history, audit entries and opt-out changes name them (a team's
        server names them itself); `console`: this opening's id (a new one by default)."""
        self.path = path
        self.account = account
        self.region = region
        self.operator = operator
        self.console = console or uuid.uuid4().hex
        """This opening of the profile, as the team's presence, claims and audit know it."""
        self.conn = connect(path)
        self.team = shared is not None
        """Whether the shared data is on a team's server (closed with this store)."""
        self.shared: SharedData = shared if shared is not None else FileData(path)
        """Where the profile's shared data lives: replies, history, the outbox, opt-outs,
        templates, contacts, the team's settings."""
        # Drafts and send history are written by a thread of its own, in order: the
        # console hands them over and never waits for another process's write lock.
        memory = str(path) == ":memory:"
        self.writer = BackgroundWriter(path, shared=self.conn if memory else None)
        locked = self._locked = LockedConnection(self.conn)
        """The file's connection and the lock its users take (closing it takes it too)."""
        self.drafts = DraftStore(locked, self.writer)
        here = SqliteDatabase(self.conn, locked.lock)
        self._server = self.shared.open() if self.team else None
        """The team's server, borrowed from its pool by the stores opened here."""
        team = self._server if self._server is not None else here
        self.history_writer = self.writer if self._server is None else BackgroundWriter(team)
        """History rows' writer: the drafts' own on a one-desk profile, the server's in a team."""
        self.history = HistoryStore(team, self.history_writer, operator=operator)
        self.settings = StoredSettings(here, self._server)
        """The profile's settings (`gwdesk.domain.settings`, those kept in the profile store)."""
        self.templates = TemplateStore(team, operator=operator, console=self.console)
        self.conversations = ConversationStore(team, operator=operator, console=self.console)
        """Conversations as work: states, assignment, this operator's read marks."""
        self.rule_runs = RuleRuns(team, runner=operator)
        """What the keyword rules did: runs claimed once, forwards waiting."""
        # Its own connections: the reply listener writes from its own thread (group commit).
        self.replies = ReplyStore(self.shared, local=path)
        self.optouts = OptOutStore(
            self.shared, account or "", operator=operator, console=self.console, region=region
        )
        self.apply_optout_keywords()
        # Its own connection: an import is one long transaction, off the GUI thread.
        self.contacts = ContactStore(self.shared, self.optouts, region=region)
        # Its own connection too (synchronous=FULL on a file; claims held on a server's
        # connection of its own); its writes run on worker threads.
        self.outbox = OutboxStore(self.shared, operator=operator)

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

    @property
    def writers(self) -> tuple[BackgroundWriter, ...]:
        """Every writer thread of the profile (whoever reports their failures sets each)."""
        if self.history_writer is self.writer:
            return (self.writer,)
        return (self.writer, self.history_writer)

    def close(self) -> None:
        for writer in self.writers:  # first: what was handed over gets written (may wait)
            writer.close()
        self.replies.close()
        self.optouts.close()
        self.contacts.close()
        self.outbox.close()
        self.history.close()
        self.templates.close()
        with self._locked.lock:  # never while a worker thread is in the middle of a statement
            self.conn.close()
        if self._server is not None:
            self._server.close()
        if self.team:
            self.shared.close()  # the pool every shared store borrowed


def open_local(
    path: Path | str,
    account: str | None = None,
    region: str = DEFAULT_REGION,
    *,
    shared: SharedData | None = None,
    operator: str = "",
    console: str | None = None,
) -> LocalStore:
    """Open (and upgrade) a profile's store; `StoreError` naming the file when it cannot
    be used (damaged, not a database, unreadable), which is then left as it is. Once
    open, the store owns `shared` (closes it); until then its caller does."""
    try:
        return LocalStore(path, account, region, shared=shared, operator=operator, console=console)
    except (StoreError, OSError) as exc:
        raise StoreError(f"The store at {path} cannot be opened ({exc}).") from None
