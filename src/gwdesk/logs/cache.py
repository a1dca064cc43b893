"""The local log cache: the account's log records in the profile's SQLite file.

A record is stored once, by `messageId`, and rewritten only when something in it
changed (its status, mostly), so re-reading a page is cheap. Big work never runs on
the GUI's connection: the sync writes through a `LogCacheWriter` (its own connection,
one worker thread, one transaction per batch of 1,000 to 8,000 records) and the Logs
tab reads through connections of its own (`gwdesk.store.reader`); WAL lets them overlap.
Like every store module, it raises the store's errors (`StoreError`), never the engine's.

Full-text search (`log_text`, FTS5 over message and subject, external content,
`detail=none`: word-prefix queries need no positions) is filled at each commit with
one `INSERT … SELECT` of the rows above the `indexed_to` watermark, inside the same
transaction: four times cheaper than a per-row trigger, and never out of step. Rows
are never deleted except by `clear()`, so row ids only grow and the watermark is
exact. Times are stored as UTC microseconds (integers that sort and compare).

The sync state (one row of `log_sync`) is written in the same transaction as the
records it describes, so an interrupted sync resumes where its last batch ended.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from gwdesk.logs.rows import ROW_COLUMNS, SELECT_COLUMNS, mend
from gwdesk.store.database import StoreError, store_methods
from gwdesk.store.local import LocalStore
from gwdesk.store.reader import is_file_path


def keeps_cache(path: Path | str) -> bool:
    """Whether the profile's file at `path` can keep a log cache: worker threads need
    their own connections, so an in-memory store has none."""
    return is_file_path(path)


UPSERT: Final = (
    f"INSERT INTO log_records({', '.join(ROW_COLUMNS)}) "  # noqa: S608 - constant columns
    f"VALUES ({', '.join('?' * len(ROW_COLUMNS))}) "
    "ON CONFLICT(message_id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in ROW_COLUMNS[1:])
    + " WHERE ("
    + ", ".join(ROW_COLUMNS[1:-1])
    + ") IS NOT ("
    + ", ".join(f"excluded.{c}" for c in ROW_COLUMNS[1:-1])
    + ")"
)
INSERT: Final = UPSERT.split(" ON CONFLICT")[0]
INDEX_TEXT: Final = (
    "INSERT INTO log_text(rowid, message, subject) "
    "SELECT id, message, subject FROM log_records WHERE id > ?"
)
#: The filter and sort indexes (as the migration made them). A big first sync drops
#: them and builds them once at its end: sorting a million entries once costs a
#: third of keeping the index in step row by row (see `LogCacheSync`).
SECONDARY_INDEXES: Final = (
    ("log_records_status", "log_records(status, date_lodged)"),
    ("log_records_type", "log_records(type, date_lodged)"),
    ("log_records_to", "log_records(to_number, date_lodged)"),
)
#: Page cache of a worker connection (KiB, negative as SQLite wants it): the random
#: inserts into the recipient index stay in memory during a million-record sync.
WRITER_CACHE_KIB: Final = 96 * 1024
WRITER_CHECKPOINT_PAGES: Final = 8192


class LogCacheError(StoreError):
    """The log cache cannot be used; the message says why."""


@dataclass(frozen=True, slots=True)
class Backfill:
    """A first sync by pages (newest first) under way: where to resume it."""

    cursor: int
    """`dateLodged` (UTC µs) of the newest record when the first page was read."""
    at_cursor: tuple[str, ...]
    page_size: int
    total: int
    """`totalRecords` when the first page was read: what the pages must add up to."""
    pages_done: int

    def to_json(self) -> str:
        return json.dumps(
            {
                "cursor": self.cursor,
                "at_cursor": list(self.at_cursor),
                "page_size": self.page_size,
                "total": self.total,
                "pages_done": self.pages_done,
            }
        )

    @classmethod
    def from_json(cls, text: str | None) -> Backfill | None:
        if not text:
            return None
        try:
            data = json.loads(text)
            return cls(
                int(data["cursor"]),
                tuple(str(m) for m in data["at_cursor"]),
                int(data["page_size"]),
                int(data["total"]),
                int(data["pages_done"]),
            )
        except (ValueError, KeyError, TypeError):
            return None  # an unreadable resume point: the first sync starts over


@dataclass(frozen=True, slots=True)
class SyncState:
    cursor: int | None
    """`dateLodged` (UTC µs) of the newest record held; None before the first full sync."""
    at_cursor: frozenset[str]
    """MessageIds held that were lodged exactly at `cursor` (the `known` of `since`)."""
    backfill: Backfill | None
    synced_at: int | None
    """When the last sync finished (UTC µs)."""


@dataclass(frozen=True, slots=True)
class WriteResult:
    received: int
    inserted: int
    updated: int
    dropped: int
    """Records without a messageId or a readable dateLodged."""


def now_us() -> int:
    return time.time_ns() // 1000


def _state(conn: sqlite3.Connection) -> SyncState:
    row = conn.execute(
        "SELECT cursor, at_cursor, backfill, synced_at FROM log_sync WHERE id = 1"
    ).fetchone()
    if row is None:
        return SyncState(None, frozenset(), None, None)
    try:
        known = frozenset(str(m) for m in json.loads(row[1] or "[]"))
    except (ValueError, TypeError):
        known = frozenset()
    return SyncState(row[0], known, Backfill.from_json(row[2]), row[3])


@store_methods
class LogCache:
    """The log cache of a profile's store as the GUI thread sees it: small reads, and where
    the file is (big reads go through a `StoreReader`, writes through a `LogCacheWriter`)."""

    def __init__(self, store: LocalStore) -> None:
        self._conn = store.conn
        self.path = store.path

    @property
    def usable(self) -> bool:
        return keeps_cache(self.path)

    def state(self) -> SyncState:
        return _state(self._conn)

    def total(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM log_records").fetchone()[0])

    def record(self, message_id: str) -> dict[str, Any] | None:
        """Every stored value of one record (the detail pane), by column name."""
        row = self._conn.execute(
            f"SELECT {', '.join(SELECT_COLUMNS)}, synced FROM log_records "  # noqa: S608
            "WHERE message_id = ?",
            (message_id,),
        ).fetchone()
        if row is None:
            return None
        return dict(zip((*SELECT_COLUMNS, "synced"), tuple(row), strict=True))

    def writer(self) -> LogCacheWriter:
        if not self.usable:
            raise LogCacheError("The log cache needs a profile data file, not an in-memory store.")
        return LogCacheWriter(self.path)


@store_methods
class LogCacheWriter:
    """Batches of records on a connection of its own, for one worker thread.

    `write(..., commit=False)` leaves the transaction open so the next batch joins
    it: a first sync commits every few pages, because each commit rewrites every
    index page the batch touched (a third of the write cost at one page a commit).
    Made in (or handed to) one worker thread and used only there; `close()` last
    (it commits what is open).
    """

    def __init__(self, path: Path | str) -> None:
        self.conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA busy_timeout=10000")
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute(f"PRAGMA cache_size=-{WRITER_CACHE_KIB}")
        # Fewer, larger checkpoints: an index page changed by many batches is copied once.
        self.conn.execute(f"PRAGMA wal_autocheckpoint={WRITER_CHECKPOINT_PAGES}")

    def close(self) -> None:
        try:
            if self.conn.in_transaction:
                self.commit()
            # Statistics are an optimisation; closing must not fail over them.
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("PRAGMA analysis_limit=1000")
                self.conn.execute("PRAGMA optimize")
        finally:
            self.conn.close()

    def state(self) -> SyncState:
        return _state(self.conn)

    def commit(self) -> None:
        """Index the new rows' text and commit (nothing happens outside a transaction)."""
        conn = self.conn
        if not conn.in_transaction:
            return
        try:
            indexed = conn.execute("SELECT indexed_to FROM log_sync WHERE id = 1").fetchone()[0]
            top = conn.execute("SELECT COALESCE(MAX(id), 0) FROM log_records").fetchone()[0]
            if top > indexed:
                conn.execute(INDEX_TEXT, (indexed,))
                conn.execute("UPDATE log_sync SET indexed_to = ? WHERE id = 1", (top,))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _upsert(self, rows: Sequence[tuple[Any, ...]]) -> tuple[int, int]:
        """(inserted, updated). Rows known to be new take a plain INSERT: an UPSERT of a
        new row costs twice as much in SQLite 3.40."""
        latest = {row[0]: row for row in rows}  # one row per messageId; the last one wins
        ids = list(latest)
        existing: set[str] = set()
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            existing.update(
                r[0]
                for r in self.conn.execute(
                    "SELECT message_id FROM log_records WHERE message_id IN "  # noqa: S608
                    f"({', '.join('?' * len(part))})",
                    part,
                )
            )
        fresh = [row for key, row in latest.items() if key not in existing]
        known = [row for key, row in latest.items() if key in existing]
        try:
            self.conn.execute("SAVEPOINT batch")
            return self._insert(fresh, known)
        except (sqlite3.ProgrammingError, sqlite3.InterfaceError):
            # A value SQLite cannot bind (an object where text belongs): mend and redo.
            self.conn.execute("ROLLBACK TO batch")
            return self._insert([mend(r) for r in fresh], [mend(r) for r in known])
        finally:
            self.conn.execute("RELEASE batch")

    def _insert(
        self, fresh: list[tuple[Any, ...]], known: list[tuple[Any, ...]]
    ) -> tuple[int, int]:
        if fresh:
            self.conn.executemany(INSERT, fresh)
        updated = max(0, self.conn.executemany(UPSERT, known).rowcount) if known else 0
        return len(fresh), updated

    def write(
        self,
        rows: Sequence[tuple[Any, ...]],
        *,
        cursor: tuple[int, Iterable[str]] | None = None,
        advance_only: bool = False,
        backfill: Backfill | bool | None = False,
        touch: Iterable[str] = (),
        finished: bool = False,
        dropped: int = 0,
        commit: bool = True,
    ) -> WriteResult:
        """Upsert `rows` (`ROW_COLUMNS` order) and move the sync state, in one transaction.

        `cursor` (µs, messageIds at it) replaces the cursor (with `advance_only`, only
        a later one does, and one equal to it adds its messageIds); `backfill` replaces
        the first-sync resume point (None clears it; False leaves it); `touch` marks
        records as just checked; `finished` stamps the end of a sync.
        """
        conn = self.conn
        if not conn.in_transaction:
            conn.execute("BEGIN IMMEDIATE")
        try:
            inserted, updated = self._upsert(rows)
            stamp = now_us()
            conn.executemany(
                "UPDATE log_records SET synced = ? WHERE message_id = ?",
                ((stamp, m) for m in touch),
            )
            if cursor is not None:
                self._move_cursor(cursor[0], set(cursor[1]), advance_only)
            if backfill is not False:
                text = backfill.to_json() if isinstance(backfill, Backfill) else None
                conn.execute("UPDATE log_sync SET backfill = ? WHERE id = 1", (text,))
            if finished:
                conn.execute("UPDATE log_sync SET synced_at = ? WHERE id = 1", (stamp,))
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        if commit:
            self.commit()
        return WriteResult(len(rows) + dropped, inserted, updated, dropped)

    def _move_cursor(self, moment: int, known: set[str], advance_only: bool) -> None:
        if advance_only:
            current = _state(self.conn)
            if current.cursor is not None and moment < current.cursor:
                return
            if current.cursor == moment:
                known |= current.at_cursor
        self.conn.execute(
            "UPDATE log_sync SET cursor = ?, at_cursor = ? WHERE id = 1",
            (moment, json.dumps(sorted(known))),
        )

    def drop_indexes(self) -> None:
        """Drop the filter and sort indexes for a bulk load (`ensure_indexes` puts them back)."""
        self.commit()
        for name, _on in SECONDARY_INDEXES:
            self.conn.execute(f"DROP INDEX IF EXISTS {name}")

    def missing_indexes(self) -> list[str]:
        present = {
            r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
        }
        return [name for name, _on in SECONDARY_INDEXES if name not in present]

    def ensure_indexes(self) -> None:
        """Build any filter or sort index that is missing."""
        self.commit()
        for name, on in SECONDARY_INDEXES:
            self.conn.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {on}")

    def count_through(self, cursor: int) -> int:
        """Records lodged at or before `cursor`: what a first sync by pages must have got."""
        row = self.conn.execute(
            "SELECT COUNT(*) FROM log_records WHERE date_lodged <= ?", (cursor,)
        ).fetchone()
        return int(row[0])

    def recent_window(self, window: int) -> int | None:
        """`dateLodged` of the `window`-th newest record; None when fewer are held."""
        row = self.conn.execute(
            "SELECT date_lodged FROM log_records ORDER BY date_lodged DESC LIMIT 1 OFFSET ?",
            (max(0, window - 1),),
        ).fetchone()
        return None if row is None else int(row[0])

    def oldest_active(self, since: int | None) -> int | None:
        """The oldest ACTIVE record lodged at or after `since` (UTC µs), if any.

        A status change does not move a record's `dateLodged`, so `since` paging never
        shows it again: re-reading from here picks up the changes of recent records.
        """
        row = self.conn.execute(
            "SELECT MIN(date_lodged) FROM log_records WHERE status = 'ACTIVE' AND date_lodged >= ?",
            (since if since is not None else -(2**62),),
        ).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def stale_active(self, before: int, limit: int) -> list[str]:
        """ACTIVE records lodged before `before`, least recently checked first."""
        rows = self.conn.execute(
            "SELECT message_id FROM log_records WHERE status = 'ACTIVE' AND date_lodged < ? "
            "ORDER BY synced LIMIT ?",
            (before, limit),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def clear(self) -> None:
        """Forget every record and the sync state (the next sync starts from scratch)."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("UPDATE log_sync SET indexed_to = 0")
            conn.execute("DELETE FROM log_records")
            conn.execute("INSERT INTO log_text(log_text) VALUES ('delete-all')")
            conn.execute(
                "UPDATE log_sync SET cursor = NULL, at_cursor = '[]', backfill = NULL, "
                "synced_at = NULL WHERE id = 1"
            )
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
