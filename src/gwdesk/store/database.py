"""The console's local SQLite file: one per profile, versioned by `user_version`.

Each concern (drafts, sent history, the outbox, replies and log cache)
owns its tables and registers its migration steps here, so one file upgrades in
one place and a newer file is refused rather than misread.
"""

from __future__ import annotations

import functools
import inspect
import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final, TypeVar, cast

# The store's errors live in the domain (every layer catches them); named here as well,
# where the store's modules and callers of it have always taken them from.
from gwdesk.domain.errors import ReadInterrupted as ReadInterrupted
from gwdesk.domain.errors import StoreBusy as StoreBusy
from gwdesk.domain.errors import StoreError as StoreError
from gwdesk.domain.errors import StoreUnavailable as StoreUnavailable
from gwdesk.private_files import private_database

#: Migration steps in order; step N brings `user_version` from N to N+1.
MIGRATIONS: Final[tuple[str, ...]] = (
    """
    CREATE TABLE drafts (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
    );
    CREATE TABLE history (
        id INTEGER PRIMARY KEY,
        at TEXT NOT NULL,
        channel TEXT NOT NULL,
        recipients TEXT NOT NULL,
        text TEXT NOT NULL,
        ok INTEGER NOT NULL,
        message_id TEXT,
        batch_code TEXT,
        status TEXT,
        external_system_id TEXT,
        detail TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX history_at ON history(at);
    """,
    # Replies (gwdesk.store.replies): one row per reply, known by its natural key.
    """
    CREATE TABLE replies (
        id INTEGER PRIMARY KEY,
        from_number TEXT NOT NULL,
        to_number TEXT NOT NULL,
        text TEXT NOT NULL,
        received_at TEXT NOT NULL,
        sent_at TEXT,
        message_id TEXT,
        reply_id TEXT,
        keyword TEXT,
        source TEXT NOT NULL,
        stored_at TEXT NOT NULL,
        seen INTEGER NOT NULL DEFAULT 0
    );
    CREATE UNIQUE INDEX replies_natural_key ON replies(from_number, to_number, received_at, text);
    CREATE INDEX replies_received ON replies(received_at);
    CREATE INDEX replies_from ON replies(from_number, received_at);
    CREATE INDEX replies_unseen ON replies(id) WHERE seen = 0;
    CREATE TABLE reply_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    """,
    # Log cache (gwdesk.logs.cache): the account's log records, one row per messageId.
    # Times are UTC microseconds; log_text (FTS5) is filled per batch up to log_sync.indexed_to.
    """
    CREATE TABLE log_records (
        id INTEGER PRIMARY KEY,
        message_id TEXT NOT NULL UNIQUE,
        status TEXT NOT NULL,
        date_sent INTEGER,
        date_lodged INTEGER NOT NULL,
        receipt INTEGER,
        receipt_raw TEXT,
        sender TEXT,
        costcentre TEXT,
        from_number TEXT,
        to_number TEXT,
        subject TEXT,
        message TEXT,
        parts INTEGER,
        type TEXT,
        senderid INTEGER,
        senderserviceid INTEGER,
        replytype TEXT,
        replypath TEXT,
        tracking_id TEXT,
        batch_tracking_id TEXT,
        extra TEXT,
        synced INTEGER NOT NULL
    );
    CREATE INDEX log_records_lodged ON log_records(date_lodged);
    CREATE INDEX log_records_status ON log_records(status, date_lodged);
    CREATE INDEX log_records_type ON log_records(type, date_lodged);
    CREATE INDEX log_records_to ON log_records(to_number, date_lodged);
    CREATE VIRTUAL TABLE log_text USING fts5(
        message, subject, content='log_records', content_rowid='id',
        tokenize='unicode61 remove_diacritics 2', detail=none
    );
    CREATE TABLE log_sync (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        cursor INTEGER,
        at_cursor TEXT NOT NULL DEFAULT '[]',
        backfill TEXT,
        indexed_to INTEGER NOT NULL DEFAULT 0,
        synced_at INTEGER
    );
    INSERT INTO log_sync(id) VALUES (1);
    CREATE TRIGGER log_records_text_update AFTER UPDATE OF message, subject ON log_records
    WHEN (old.message IS NOT new.message OR old.subject IS NOT new.subject)
        AND old.id <= (SELECT indexed_to FROM log_sync WHERE id = 1)
    BEGIN
        INSERT INTO log_text(log_text, rowid, message, subject)
            VALUES ('delete', old.id, old.message, old.subject);
        INSERT INTO log_text(rowid, message, subject) VALUES (new.id, new.message, new.subject);
    END;
    CREATE TRIGGER log_records_text_delete AFTER DELETE ON log_records
    WHEN old.id <= (SELECT indexed_to FROM log_sync WHERE id = 1)
    BEGIN
        INSERT INTO log_text(log_text, rowid, message, subject)
            VALUES ('delete', old.id, old.message, old.subject);
    END;
    CREATE TABLE log_settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    """,
    # Replies, under a flood: indexes that take a group's rows in a few pages, not one each
    # (the natural key led by the received time; unread kept as a watermark in reply_meta).
    """
    DROP INDEX replies_natural_key;
    DROP INDEX replies_received;
    DROP INDEX replies_unseen;
    ALTER TABLE replies DROP COLUMN seen;
    CREATE UNIQUE INDEX replies_key ON replies(received_at, from_number, to_number, text);
    """,
    # Durable outbox (gwdesk.store.outbox): every send recorded before its request leaves.
    # A batch groups its requests ("entries", one per chunk of at most 100); times are UTC µs.
    """
    CREATE TABLE outbox_batches (
        id INTEGER PRIMARY KEY,
        send_id TEXT NOT NULL UNIQUE,
        gateway TEXT NOT NULL,
        channel TEXT NOT NULL,
        label TEXT NOT NULL DEFAULT '',
        baseline TEXT NOT NULL DEFAULT '[]',
        created_us INTEGER NOT NULL,
        updated_us INTEGER NOT NULL,
        closed INTEGER NOT NULL DEFAULT 0,
        owner TEXT
    );
    CREATE INDEX outbox_batches_open ON outbox_batches(gateway, id) WHERE closed = 0;
    CREATE TABLE outbox_entries (
        id INTEGER PRIMARY KEY,
        batch_id INTEGER NOT NULL REFERENCES outbox_batches(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        external_system_id TEXT,
        own_id INTEGER NOT NULL DEFAULT 1,
        recipients TEXT NOT NULL,
        recipient_count INTEGER NOT NULL,
        body TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending'
            CHECK (state IN ('pending', 'in_flight', 'lodged', 'failed', 'unknown')),
        attempts INTEGER NOT NULL DEFAULT 0,
        message_id TEXT,
        batch_code TEXT,
        found INTEGER NOT NULL DEFAULT 0,
        reason TEXT NOT NULL DEFAULT '',
        error_kind TEXT,
        retryable INTEGER NOT NULL DEFAULT 0,
        created_us INTEGER NOT NULL,
        updated_us INTEGER NOT NULL,
        sent_us INTEGER,
        UNIQUE (batch_id, seq)
    );
    CREATE UNIQUE INDEX outbox_entries_own_id ON outbox_entries(external_system_id)
        WHERE own_id = 1 AND external_system_id IS NOT NULL;
    CREATE INDEX outbox_entries_external ON outbox_entries(external_system_id);
    CREATE INDEX outbox_entries_state ON outbox_entries(batch_id, state);
    """,
    # Replies (gwdesk.store.replies): a received time no gateway can mean is kept aside;
    # the reply is stored as received when it was stored, and known by the time it claimed.
    """
    ALTER TABLE replies ADD COLUMN received_claimed TEXT;
    CREATE UNIQUE INDEX replies_claim ON replies(from_number, to_number, received_claimed, text)
        WHERE received_claimed IS NOT NULL;
    """,
    # Settings (gwdesk.store.stored_settings): one table, one JSON value per declared setting
    # (gwdesk.domain.settings). What reply_meta and log_settings held moves over.
    """
    CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO settings(name, value)
        SELECT 'listener.host', json_quote(value) FROM reply_meta
        WHERE key = 'listener_host' AND value <> '';
    INSERT INTO settings(name, value)
        SELECT 'listener.public_host', json_quote(value) FROM reply_meta
        WHERE key = 'listener_public_host' AND value <> '';
    INSERT INTO settings(name, value)
        SELECT 'listener.enabled', CASE value WHEN '0' THEN 'false' ELSE 'true' END
        FROM reply_meta WHERE key = 'listener_enabled';
    INSERT INTO settings(name, value)
        SELECT 'listener.port', CAST(CAST(value AS INTEGER) AS TEXT) FROM reply_meta
        WHERE key = 'listener_port' AND value <> '' AND value NOT GLOB '*[^0-9]*';
    INSERT INTO settings(name, value)
        SELECT 'listener.secret', json_quote(value) FROM reply_meta
        WHERE key = 'listener_secret';
    INSERT INTO settings(name, value)
        SELECT 'replies.seen_up_to', CAST(CAST(value AS INTEGER) AS TEXT) FROM reply_meta
        WHERE key = 'seen_up_to' AND value <> '' AND value NOT GLOB '*[^0-9]*';
    INSERT INTO settings(name, value)
        SELECT 'logs.header', value FROM log_settings WHERE key = 'header' AND json_valid(value);
    DROP TABLE reply_meta;
    DROP TABLE log_settings;
    """,
    # Opt-outs (gwdesk.store.optouts): each number's current state per gateway account, and
    # every change (times ISO 8601 UTC; `applied` 0 for a reply that came after a later change).
    """
    CREATE TABLE optouts (
        account TEXT NOT NULL,
        number TEXT NOT NULL,
        opted_out INTEGER NOT NULL,
        at TEXT NOT NULL,
        how TEXT NOT NULL,
        by_whom TEXT NOT NULL,
        keyword TEXT,
        reply_id INTEGER,
        reason TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (account, number)
    ) WITHOUT ROWID;
    CREATE INDEX optouts_at ON optouts(account, opted_out, at);
    CREATE TABLE optout_changes (
        id INTEGER PRIMARY KEY,
        account TEXT NOT NULL,
        number TEXT NOT NULL,
        opted_out INTEGER NOT NULL,
        at TEXT NOT NULL,
        how TEXT NOT NULL,
        by_whom TEXT NOT NULL,
        keyword TEXT,
        reply_id INTEGER,
        reason TEXT NOT NULL DEFAULT '',
        applied INTEGER NOT NULL
    );
    CREATE INDEX optout_changes_number ON optout_changes(account, number, at);
    """,
    # Outbox: the numbers a batch left out because they had opted out (JSON list).
    """
    ALTER TABLE outbox_batches ADD COLUMN excluded TEXT NOT NULL DEFAULT '[]';
    """,
    # Templates (gwdesk.store.templates) and contacts (gwdesk.store.contacts). Names are
    # unique by `name_key` (case folded in Python: SQLite folds ASCII only); a number
    # belongs to one contact; a contact's fields are a JSON object; times are UTC µs.
    """
    CREATE TABLE templates (
        name_key TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        text TEXT NOT NULL,
        updated_us INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE contacts (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        name_key TEXT NOT NULL,
        notes TEXT NOT NULL DEFAULT '',
        fields TEXT NOT NULL DEFAULT '{}',
        created_us INTEGER NOT NULL,
        updated_us INTEGER NOT NULL
    );
    CREATE INDEX contacts_name ON contacts(name_key, id);
    CREATE TABLE contact_numbers (
        number TEXT PRIMARY KEY,
        contact_id INTEGER NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
        position INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX contact_numbers_contact ON contact_numbers(contact_id, position);
    CREATE TABLE contact_groups (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        name_key TEXT NOT NULL UNIQUE
    );
    CREATE TABLE contact_members (
        group_id INTEGER NOT NULL REFERENCES contact_groups(id) ON DELETE CASCADE,
        contact_id INTEGER NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
        PRIMARY KEY (group_id, contact_id)
    ) WITHOUT ROWID;
    CREATE INDEX contact_members_contact ON contact_members(contact_id);
    """,
    # Team notes (gwdesk.store.team) and who did what: the same tables a team's PostgreSQL
    # server has (gwdesk.store.pg_schema), for the consoles of one workstation.
    """
    ALTER TABLE history ADD COLUMN operator TEXT NOT NULL DEFAULT '';
    ALTER TABLE outbox_batches ADD COLUMN operator TEXT NOT NULL DEFAULT '';
    CREATE TABLE audit (
        id INTEGER PRIMARY KEY,
        at TEXT NOT NULL,
        operator TEXT NOT NULL,
        console TEXT NOT NULL,
        action TEXT NOT NULL,
        subject TEXT NOT NULL DEFAULT '',
        detail TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX audit_at ON audit(at);
    CREATE TABLE consoles (
        id TEXT PRIMARY KEY,
        operator TEXT NOT NULL,
        host TEXT NOT NULL,
        started_at TEXT NOT NULL,
        seen_at TEXT NOT NULL,
        version TEXT NOT NULL
    );
    CREATE TABLE claims (
        subject TEXT NOT NULL,
        console TEXT NOT NULL,
        operator TEXT NOT NULL,
        until_us INTEGER NOT NULL,
        PRIMARY KEY (subject, console)
    );
    """,
    # Scheduled sends gwdesk holds (gwdesk.store.outbox_holds): a batch is held until its
    # time (UTC µs), then sent; NULL: not held (sent at once, or its time has come). A
    # recurring one names its rule (`domain.recurrence`, JSON; '' for none).
    """
    ALTER TABLE outbox_batches ADD COLUMN held_until_us INTEGER;
    ALTER TABLE outbox_batches ADD COLUMN recurrence TEXT NOT NULL DEFAULT '';
    CREATE INDEX outbox_batches_held ON outbox_batches(gateway, held_until_us)
        WHERE held_until_us IS NOT NULL AND closed = 0;
    """,
    # Conversations as work (gwdesk.store.conversations): a number's state and who it is
    # assigned to; each reader's own read marks (number '' covers every number).
    """
    CREATE TABLE conversations (
        number TEXT PRIMARY KEY,
        state TEXT NOT NULL DEFAULT 'open'
            CHECK (state IN ('open', 'waiting', 'done', 'snoozed')),
        snoozed_until TEXT,
        assigned_to TEXT,
        changed_at TEXT NOT NULL,
        changed_by TEXT NOT NULL DEFAULT '',
        CHECK ((state = 'snoozed') = (snoozed_until IS NOT NULL))
    ) WITHOUT ROWID;
    CREATE TABLE conversation_reads (
        reader TEXT NOT NULL,
        number TEXT NOT NULL,
        up_to INTEGER NOT NULL,
        PRIMARY KEY (reader, number)
    ) WITHOUT ROWID;
    """,
    # Keyword rules (gwdesk.store.rule_runs): each reply a rule acted on, once; the
    # forwards waiting for their endpoint; a conversation's tags.
    """
    CREATE TABLE rule_runs (
        reply_id INTEGER PRIMARY KEY,
        number TEXT NOT NULL,
        rule TEXT NOT NULL,
        runner TEXT NOT NULL,
        at_us INTEGER NOT NULL,
        replied INTEGER NOT NULL DEFAULT 0,
        outcome TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX rule_runs_replied ON rule_runs(number, at_us) WHERE replied = 1;
    CREATE TABLE rule_forwards (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        reply_id INTEGER NOT NULL UNIQUE,
        rule TEXT NOT NULL,
        url TEXT NOT NULL,
        body TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('waiting', 'delivered', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_us INTEGER NOT NULL,
        last_error TEXT NOT NULL DEFAULT '',
        changed_us INTEGER NOT NULL
    );
    CREATE INDEX rule_forwards_waiting ON rule_forwards(next_us) WHERE state = 'waiting';
    CREATE TABLE conversation_tags (
        number TEXT NOT NULL,
        tag TEXT NOT NULL,
        added_by TEXT NOT NULL,
        added_at TEXT NOT NULL,
        PRIMARY KEY (number, tag)
    ) WITHOUT ROWID;
    """,
)


def store_error(exc: sqlite3.Error) -> StoreError:
    """The store's error for an engine error, with the engine's words."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF == sqlite3.SQLITE_INTERRUPT:
        kind: type[StoreError] = ReadInterrupted
    elif is_busy(exc):
        kind = StoreBusy
    elif isinstance(exc, sqlite3.OperationalError):
        kind = ReadInterrupted if str(exc) == "interrupted" else StoreUnavailable
    else:
        kind = StoreError
    error = kind(str(exc) or type(exc).__name__)
    error.__cause__ = exc
    return error


@contextmanager
def store_errors() -> Iterator[None]:
    """Raise the store's errors for the engine's inside the block."""
    try:
        yield
    except sqlite3.Error as exc:
        raise store_error(exc) from exc


F = TypeVar("F", bound=Callable[..., Any])


def raising_store_errors(function: F) -> F:
    """`function` with the engine's errors raised as the store's (`store_errors`)."""

    @functools.wraps(function)
    def translated(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except sqlite3.Error as exc:
            raise store_error(exc) from exc

    return cast(F, translated)


C = TypeVar("C", bound=type)


def store_methods(cls: C) -> C:
    """Every public method of a store class (and opening it) raises the store's errors, never
    the engine's.

    A class decorator rather than one per method, so a method added later cannot
    forget it.
    """
    for name, member in list(vars(cls).items()):
        public = not name.startswith("_") or name == "__init__"
        if not public or not inspect.isfunction(member):
            continue
        setattr(cls, name, raising_store_errors(member))
    return cls


def slug(name: str) -> str:
    """A file-system-safe name for a profile's database file."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "profile"
    return cleaned[:60]


def connect(path: Path | str) -> sqlite3.Connection:
    """Open (and upgrade) a store; `:memory:` for throw-away use."""
    if str(path) != ":memory:":
        private_database(path)  # the file holds the listener's secret: owner only
    with store_errors():
        conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA busy_timeout=5000")
        try:
            _when_unlocked(lambda: conn.execute("PRAGMA journal_mode=WAL"))
            conn.execute("PRAGMA synchronous=NORMAL")
            _when_unlocked(lambda: migrate(conn))
        except BaseException:
            conn.close()
            raise
    return conn


BUSY_CODES: Final = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})


def is_busy(exc: BaseException) -> bool:
    """Whether `exc` means another connection holds the lock (worth trying again)."""
    if isinstance(exc, StoreBusy):
        return True
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in BUSY_CODES
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def _when_unlocked(step: Callable[[], object], patience: float = 5.0) -> None:
    """Run `step`, again while SQLite says "locked" without waiting (up to `patience` s).

    Openers racing on a new file can get SQLITE_BUSY at once, without the busy
    timeout: switching the file to WAL, or reading while another opener does, is
    refused rather than waited for. Both steps are safe to repeat.
    """
    deadline = time.monotonic() + patience
    delay = 0.005
    while True:
        try:
            step()
            return
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


def migrate(conn: sqlite3.Connection) -> None:
    """Bring the file up to date; safe when two processes open a new file at once.

    Each step takes the write lock first and only then reads `user_version`, so a
    process that waited for another's step sees it done and skips it instead of
    running it a second time (and failing on `table already exists`).
    """
    check_version(conn.execute("PRAGMA user_version").fetchone()[0])
    for step in range(len(MIGRATIONS)):
        with transaction(conn):
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            check_version(version)
            if version > step:
                continue
            for statement in statements(MIGRATIONS[step]):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {step + 1}")


def check_version(version: int) -> None:
    if version > len(MIGRATIONS):
        raise StoreError(
            f"This data file was written by a newer gwdesk (version {version}); update gwdesk."
        )


def statements(script: str) -> Iterator[str]:
    """Split a migration script into complete statements (triggers and quoted `;` included)."""
    pending = ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \n\t;"):
                yield pending.strip()
            pending = ""
    if pending.strip(" \n\t;"):
        raise StoreError("A migration step ends in an incomplete statement.")


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


@contextmanager
def savepoint(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A transaction inside one already open (`SqliteDatabase.group`): undone alone."""
    conn.execute("SAVEPOINT nested")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK TO SAVEPOINT nested")
        conn.execute("RELEASE SAVEPOINT nested")
        raise
    conn.execute("RELEASE SAVEPOINT nested")
