"""The sandbox's SQLite state: accounts, tokens, messages, batches, replies, webhooks.

One connection, used from the server's event loop thread only. Times are integer
microseconds since the epoch (UTC). Within an account, `lodged_us` is strictly
increasing and `rank` numbers messages 1..n in that order, so log listings can
page and count by index lookups instead of scanning a million rows.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import sqlite3
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

SCHEMA_VERSION = 3
PREPAID = "prepaid"
POSTPAID = "postpaid"
ACCOUNT_TYPES = (PREPAID, POSTPAID)
#: Message credits a prepaid account starts with (or gets when it turns prepaid).
STARTING_CREDITS = 10_000
DEFAULT_CURRENCY = "AUD"

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS accounts (
    id INTEGER PRIMARY KEY,
    username TEXT NOT NULL UNIQUE,
    salt BLOB NOT NULL,
    pw_hash BLOB NOT NULL,
    balance_cents INTEGER NOT NULL DEFAULT 100000,
    currency TEXT NOT NULL DEFAULT 'AUD',
    default_from TEXT NOT NULL,
    message_count INTEGER NOT NULL DEFAULT 0,
    last_lodged_us INTEGER NOT NULL DEFAULT 0,
    account_type TEXT NOT NULL DEFAULT 'prepaid',
    message_credits INTEGER DEFAULT 10000,
    account_name TEXT,
    type_name TEXT
);
CREATE TABLE IF NOT EXISTS tokens (
    token_hash BLOB PRIMARY KEY,
    account_id INTEGER NOT NULL REFERENCES accounts(id),
    issued_us INTEGER NOT NULL,
    expires_us INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY,
    account_id INTEGER NOT NULL REFERENCES accounts(id),
    rank INTEGER NOT NULL,
    message_id TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,
    status TEXT NOT NULL,
    lodged_us INTEGER NOT NULL,
    sent_us INTEGER NOT NULL,
    receipt_us INTEGER,
    deliver_at_us INTEGER,
    final_status TEXT,
    sender TEXT NOT NULL,
    costcentre TEXT NOT NULL DEFAULT '',
    from_number TEXT NOT NULL,
    to_number TEXT NOT NULL,
    subject TEXT,
    message TEXT NOT NULL,
    parts INTEGER NOT NULL,
    service_id INTEGER NOT NULL,
    reply_type TEXT NOT NULL DEFAULT '',
    reply_path TEXT NOT NULL DEFAULT '',
    tracking_id TEXT NOT NULL,
    batch_tracking_id TEXT,
    batch_code TEXT,
    external_system_id TEXT,
    tags TEXT,
    url TEXT,
    attachments TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS messages_rank ON messages(account_id, rank);
CREATE INDEX IF NOT EXISTS messages_lodged ON messages(account_id, lodged_us);
CREATE INDEX IF NOT EXISTS messages_to ON messages(account_id, to_number, lodged_us);
CREATE INDEX IF NOT EXISTS messages_batch ON messages(batch_code, rank) WHERE batch_code IS NOT NULL;
CREATE INDEX IF NOT EXISTS messages_external
    ON messages(account_id, external_system_id) WHERE external_system_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS messages_pending
    ON messages(deliver_at_us) WHERE deliver_at_us IS NOT NULL AND receipt_us IS NULL;
CREATE TABLE IF NOT EXISTS batches (
    batch_code TEXT PRIMARY KEY,
    account_id INTEGER NOT NULL REFERENCES accounts(id),
    tracking_id TEXT NOT NULL,
    template TEXT NOT NULL,
    recipients TEXT NOT NULL,
    total INTEGER NOT NULL,
    created INTEGER NOT NULL DEFAULT 0,
    created_us INTEGER NOT NULL,
    done INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS replies (
    id INTEGER PRIMARY KEY,
    reply_id TEXT NOT NULL UNIQUE,
    account_id INTEGER NOT NULL REFERENCES accounts(id),
    message_id TEXT,
    from_number TEXT NOT NULL,
    to_number TEXT NOT NULL,
    text TEXT NOT NULL,
    keyword TEXT NOT NULL DEFAULT '',
    sent_us INTEGER NOT NULL,
    received_us INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS replies_received ON replies(account_id, received_us);
CREATE TABLE IF NOT EXISTS webhook_attempts (
    id INTEGER PRIMARY KEY,
    reply_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    method TEXT NOT NULL,
    url TEXT NOT NULL,
    body TEXT,
    attempt INTEGER NOT NULL,
    at_us INTEGER NOT NULL,
    http_status INTEGER,
    response TEXT,
    error TEXT,
    ok INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS webhook_attempts_reply ON webhook_attempts(reply_id, attempt);
CREATE TABLE IF NOT EXISTS keywords (
    account_id INTEGER NOT NULL REFERENCES accounts(id),
    keyword TEXT NOT NULL,
    url TEXT NOT NULL,
    PRIMARY KEY (account_id, keyword)
);
"""


@dataclass(frozen=True, slots=True)
class Account:
    id: int
    username: str
    default_from: str


def hash_password(password: str, salt: bytes) -> bytes:
    """A salted digest: the sandbox keeps no plain passwords, even demo ones.

    A fast hash on purpose: every Basic-auth request verifies one, and the
    sandbox's passwords protect test data on loopback, not real accounts.
    """
    return hashlib.sha256(salt + password.encode("utf-8")).digest()


def token_digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


def make_private(path: Path) -> None:
    """The database file (and SQLite's files beside it) readable by its owner only.

    The sandbox's own copy of the client's rule (it shares no code with the
    client): folders it creates are 0700, the file is created 0600 whatever the
    umask, and one an earlier version left 0644 is tightened. A folder that
    already existed is left alone: `--db` may name any folder, the current one too.
    """
    missing = []
    folder = path.parent
    while not folder.exists() and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    for created in reversed(missing):
        with contextlib.suppress(FileExistsError):
            created.mkdir(mode=0o700)
        os.chmod(created, 0o700)
    os.close(os.open(path, os.O_RDONLY | os.O_CREAT, 0o600))
    for name in (str(path), f"{path}-wal", f"{path}-shm", f"{path}-journal"):
        with contextlib.suppress(FileNotFoundError):
            mode = stat.S_IMODE(os.stat(name).st_mode)
            if mode & 0o077:
                os.chmod(name, mode & 0o700)


def open_database(path: str | Path) -> sqlite3.Connection:
    """Open (creating if needed) the sandbox database with the schema in place."""
    if str(path) != ":memory:":
        make_private(Path(path))
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout=5000")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA cache_size=-65536")
    conn.executescript(SCHEMA)
    _add_account_columns(conn)
    conn.execute(
        "INSERT INTO meta(key, value) VALUES ('schema_version', ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value "
        "WHERE CAST(value AS INTEGER) < CAST(excluded.value AS INTEGER)",
        (str(SCHEMA_VERSION),),
    )
    return conn


#: Columns added to `accounts` after version 1, by the version that added them.
ADDED_ACCOUNT_COLUMNS: Final = {
    # version 2: a type and message credits (existing accounts become prepaid)
    "account_type": f"TEXT NOT NULL DEFAULT '{PREPAID}'",
    "message_credits": f"INTEGER DEFAULT {STARTING_CREDITS}",
    # version 3: the words Account/Info answers (NULL: the username, the type's own word)
    "account_name": "TEXT",
    "type_name": "TEXT",
}


def _add_account_columns(conn: sqlite3.Connection) -> None:
    """Versions 2 and 3: the columns `ADDED_ACCOUNT_COLUMNS` names, where missing."""

    def missing() -> list[str]:
        columns = {row["name"] for row in conn.execute("PRAGMA table_info(accounts)")}
        return [name for name in ADDED_ACCOUNT_COLUMNS if name not in columns]

    if not missing():
        return
    with transaction(conn):  # another process may be adding them: check again under the lock
        for name in missing():
            conn.execute(f"ALTER TABLE accounts ADD COLUMN {name} {ADDED_ACCOUNT_COLUMNS[name]}")


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on any exception."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def ensure_account(
    conn: sqlite3.Connection,
    username: str,
    password: str,
    default_from: str = "61400000000",
    account_type: str | None = None,
) -> Account:
    """Create the account, or set its password when it exists already.

    New accounts are prepaid with `STARTING_CREDITS`; `account_type` changes the type
    (see `set_account_type`), None leaves it as stored.
    """
    salt = secrets.token_bytes(16)
    digest = hash_password(password, salt)
    with transaction(conn):
        conn.execute(
            "INSERT INTO accounts(username, salt, pw_hash, default_from) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(username) DO UPDATE SET salt=excluded.salt, pw_hash=excluded.pw_hash",
            (username, salt, digest, default_from),
        )
    row = conn.execute(
        "SELECT id, username, default_from FROM accounts WHERE username = ?", (username,)
    ).fetchone()
    account = Account(row["id"], row["username"], row["default_from"])
    if account_type is not None:
        set_account_type(conn, account.id, account_type)
    return account


def set_account_type(
    conn: sqlite3.Connection, account_id: int, account_type: str, credits: int | None = None
) -> None:
    """Make an account prepaid (keeping its credits, or `STARTING_CREDITS` if it had none,
    or `credits` when given) or postpaid (no credits at all)."""
    if account_type not in ACCOUNT_TYPES:
        raise ValueError(f"an account is {' or '.join(ACCOUNT_TYPES)}, not {account_type!r}")
    if account_type == POSTPAID and credits is not None:
        raise ValueError("a postpaid account has no message credits")
    with transaction(conn):
        conn.execute(
            "UPDATE accounts SET account_type = ?, message_credits = CASE WHEN ? = ? THEN NULL "
            "ELSE COALESCE(?, message_credits, ?) END WHERE id = ?",
            (account_type, account_type, POSTPAID, credits, STARTING_CREDITS, account_id),
        )


#: The words the account resources answer with that the control API may change: its
#: name for each, how it is set, and what None puts back.
ACCOUNT_WORDS: Final = {
    # AccountName; NULL: the username
    "name": ("UPDATE accounts SET account_name = ? WHERE id = ?", None),
    # AccountType; NULL: the type's own word
    "type_name": ("UPDATE accounts SET type_name = ? WHERE id = ?", None),
    # the balance's Currency
    "currency": ("UPDATE accounts SET currency = ? WHERE id = ?", DEFAULT_CURRENCY),
}


def set_account_words(
    conn: sqlite3.Connection, account_id: int, words: dict[str, str | None]
) -> None:
    """Change what the account resources say of an account (`ACCOUNT_WORDS`: a word None
    goes back to its default); the sandbox's own rules still follow its type."""
    unknown = set(words) - set(ACCOUNT_WORDS)
    if unknown:
        raise ValueError(f"no account word {sorted(unknown)[0]!r}")
    if not words:
        return
    with transaction(conn):
        for word, value in words.items():
            statement, default = ACCOUNT_WORDS[word]
            conn.execute(statement, (default if value is None else value, account_id))


def verify_password(conn: sqlite3.Connection, username: str, password: str) -> Account | None:
    row = conn.execute(
        "SELECT id, username, default_from, salt, pw_hash FROM accounts WHERE username = ?",
        (username,),
    ).fetchone()
    if row is None:
        return None
    if not secrets.compare_digest(hash_password(password, row["salt"]), row["pw_hash"]):
        return None
    return Account(row["id"], row["username"], row["default_from"])


def account_by_id(conn: sqlite3.Connection, account_id: int) -> Account | None:
    row = conn.execute(
        "SELECT id, username, default_from FROM accounts WHERE id = ?", (account_id,)
    ).fetchone()
    return None if row is None else Account(row["id"], row["username"], row["default_from"])


def renumber_ranks(conn: sqlite3.Connection, account_id: int) -> None:
    """Re-establish rank = position by lodged time (after inserting older records)."""
    with transaction(conn):
        conn.execute(
            "UPDATE messages SET rank = -rank WHERE account_id = ?",
            (account_id,),
        )
        conn.execute(
            "WITH ordered AS (SELECT id, ROW_NUMBER() OVER (ORDER BY lodged_us, id) AS r "
            "FROM messages WHERE account_id = ?) "
            "UPDATE messages SET rank = (SELECT r FROM ordered WHERE ordered.id = messages.id) "
            "WHERE account_id = ?",
            (account_id, account_id),
        )
        conn.execute(
            "UPDATE accounts SET message_count = (SELECT COUNT(*) FROM messages WHERE account_id = ?),"
            " last_lodged_us = COALESCE((SELECT MAX(lodged_us) FROM messages WHERE account_id = ?),"
            " last_lodged_us) WHERE id = ?",
            (account_id, account_id, account_id),
        )
