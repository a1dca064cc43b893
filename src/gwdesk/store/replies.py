"""Customers' replies, stored once each, whichever way (and however often) they arrive.

A reply can reach the console three ways: the gateway's reply webhook (retried
until it is answered `OK`, so the same reply may come more than once), a keyword
forward, and the replies backfill. None of them carries an identifier the
others share, so a reply is known by its natural key: (from, to, received time
in whole UTC seconds, text). The webhook's `#RCVDDTS#` and the backfill's
`DateReceived` both have whole seconds, which is what makes the key meet.
A later copy that knows more (the backfill's MessageId, a keyword's ReplyId)
fills in what the stored row lacks.

A received time no gateway can mean (before 2000, or more than a day ahead of
this machine's clock) is not believed, but the reply is kept all the same: it is
stored as received when it was stored, with the time it claimed in
`received_claimed`, and that claim joins its key, so a retry is still stored once.
Refusing it would lose it: the gateway gives up after a few retries, and the
backfill lists it with the same time. So one bad clock cannot hide a reply or
move the start-up backfill's window (`latest_received_at`).

Writes go through their own connection with `synchronous=FULL`: an `OK` tells
the gateway to stop retrying, so an acknowledged reply must survive a power cut,
not just a crash. Group commit (see `gwdesk.replies.inbox`) keeps that affordable.
Reads use a second connection, so the console's views never wait on a commit.
"""

from __future__ import annotations

import dataclasses
import secrets
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final, Literal

from gwdesk.domain.numbers import DEFAULT_REGION
from gwdesk.domain.optout_words import Keywords
from gwdesk.domain.settings import LISTENER_PORT, LISTENER_SECRET, REPLIES_SEEN_UP_TO
from gwdesk.store.database import connect, store_methods
from gwdesk.store.optouts import ReplyKeyword, apply_replies, list_number
from gwdesk.store.settings import LockedConnection, StoredSettings

ReplySource = Literal["webhook", "keyword", "backfill"]
EARLIEST: Final = datetime(2000, 1, 1, tzinfo=UTC)
"""No reply reaching gwdesk was received before this; an earlier time is a gateway's error."""
FUTURE_TOLERANCE: Final = timedelta(days=1)
"""How far ahead of this machine's clock a reply's time may be and still be believed."""
SECRET_BYTES: Final = 24
"""`token_urlsafe(24)`: 32 URL-safe characters, 192 bits; survives any URL encoder unchanged."""
AUTO_CHECKPOINT_PAGES: Final = 1000
"""SQLite's default automatic checkpoint threshold, restored when checkpoints are not deferred."""
DEFAULT_BUSY_TIMEOUT: Final = 2.0
"""Seconds a commit waits for another writer of the file: well under the gateway's 10 s time-out."""
_COLUMNS: Final = (
    "id, from_number, to_number, text, received_at, sent_at, message_id, reply_id, keyword, "
    "source, stored_at, received_claimed"
)
_SELECT: Final = f"SELECT {_COLUMNS} FROM replies "  # noqa: S608 - constant columns
#: One multi-row INSERT per group: `{values}` is that many `_VALUES`; a row already stored
#: (its natural key taken) is skipped.
_INSERT_MANY: Final = (
    "INSERT INTO replies(from_number, to_number, received_at, text, sent_at, message_id, "
    "reply_id, keyword, source, stored_at, received_claimed) VALUES {values} "
    "ON CONFLICT DO NOTHING"
)
_NEW_KEYS: Final = (
    "SELECT id, from_number, to_number, received_at, text FROM replies WHERE id BETWEEN ? AND ?"
)
_VALUES: Final = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
ROWS_PER_INSERT: Final = 2900
"""11 values a row, under SQLite's 32,766 variables a statement."""
_BY_KEY: Final = "WHERE from_number = ? AND to_number = ? AND received_at = ? AND text = ?"
_BY_CLAIM: Final = "WHERE from_number = ? AND to_number = ? AND received_claimed = ? AND text = ?"
#: Completes a stored reply with what a later copy knows (only fields it lacked).
_FILL: Final = (
    "UPDATE replies SET sent_at = COALESCE(sent_at, ?), message_id = COALESCE(message_id, ?), "  # noqa: S608
    "reply_id = COALESCE(reply_id, ?), keyword = COALESCE(keyword, ?) WHERE id = ? "
    "RETURNING " + _COLUMNS
)


def utc_seconds(moment: datetime) -> datetime:
    """An aware time in UTC, whole seconds: the resolution every reply channel shares.

    A time beyond what UTC can hold (the first or last hours of years 1 and 9999
    with an offset) is held at that edge, which `plausible` then refuses to believe.
    """
    if moment.tzinfo is UTC and not moment.microsecond:
        return moment
    if moment.tzinfo is None:
        raise ValueError("reply times must be timezone-aware")
    try:
        return moment.astimezone(UTC).replace(microsecond=0)
    except OverflowError:
        edge = datetime.max if moment.year == datetime.max.year else datetime.min
        return edge.replace(microsecond=0, tzinfo=UTC)


def plausible(moment: datetime, now: datetime) -> bool:
    """Whether a reply can have been received (or sent) at `moment`, as seen at `now`.

    Not before `EARLIEST`, and not more than `FUTURE_TOLERANCE` ahead: a gateway's
    clock or zone may be off by hours, never by days.
    """
    return EARLIEST <= moment <= now + FUTURE_TOLERANCE


def _text(moment: datetime | None) -> str | None:
    return None if moment is None else utc_seconds(moment).isoformat()


def _time(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


@dataclass(frozen=True, slots=True)
class IncomingReply:
    """A reply as one channel delivered it, before it is stored."""

    from_number: str
    to_number: str
    text: str
    received_at: datetime
    """When the gateway received it; normalised to UTC whole seconds."""
    sent_at: datetime | None = None
    message_id: str | None = None
    """The message it answers (backfill `MessageId`, keyword `OriginalMessageId`)."""
    reply_id: str | None = None
    """The gateway's id of the reply, when the channel gives one (keyword forwards)."""
    keyword: str | None = None
    source: ReplySource = "webhook"
    received_claimed: str | None = None
    """Set by the store when `received_at` was not believable: the time the reply claimed."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "received_at", utc_seconds(self.received_at))
        if self.sent_at is not None:
            object.__setattr__(self, "sent_at", utc_seconds(self.sent_at))


@dataclass(frozen=True, slots=True)
class StoredReply:
    """A stored reply; `id` grows with storing order."""

    id: int
    from_number: str
    to_number: str
    text: str
    received_at: datetime
    sent_at: datetime | None
    message_id: str | None
    reply_id: str | None
    keyword: str | None
    source: ReplySource
    stored_at: datetime
    received_claimed: str | None = None
    """The received time the reply claimed, when it was not believable (`plausible`):
    `received_at` is then when it was stored."""

    def as_json(self) -> dict[str, object]:
        """Plain JSON fields (times ISO 8601 UTC), as `gwdesk listen --json` prints them."""
        return {
            "id": self.id,
            "from": self.from_number,
            "to": self.to_number,
            "text": self.text,
            "received_at": self.received_at.isoformat(),
            "sent_at": _text(self.sent_at),
            "message_id": self.message_id,
            "reply_id": self.reply_id,
            "keyword": self.keyword,
            "source": self.source,
            "stored_at": self.stored_at.isoformat(),
            "received_claimed": self.received_claimed,
        }


@dataclass(frozen=True, slots=True)
class AddResult:
    reply: StoredReply
    new: bool
    """False: the reply was already stored (a retry, or the same reply by another channel)."""
    updated: bool = False
    """An already stored reply gained a field it lacked (its MessageId, say)."""


@dataclass(frozen=True, slots=True)
class OptOutRules:
    """Whose opt-out list keyword replies change, and the keywords that change it."""

    account: str
    keywords: Keywords
    region: str = DEFAULT_REGION
    """How a reply's sender number is read when it is not international."""


@store_methods
class ReplyStore:
    """The `replies` table of a profile's file and the settings of its listener; safe to use
    from any thread. Every method raises `StoreError`s (`StoreBusy` when another writer held
    the file past the busy time-out), never the engine's errors."""

    def __init__(
        self,
        path: Path | str,
        *,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
        optouts: OptOutRules | None = None,
    ) -> None:
        self.path = path
        self.optouts = optouts
        """Keyword replies (STOP, START) change this account's opt-out list as they are
        stored, in the same transaction (None: the list is not kept, e.g. a bare listener)."""
        writer = connect(path)
        writer.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
        writer.execute("PRAGMA synchronous=FULL")
        self._writer = LockedConnection(writer)
        # An in-memory database exists once per connection: share it (and its lock).
        in_memory = str(path) == ":memory:"
        self._reader = self._writer if in_memory else LockedConnection(connect(path))
        self._maintenance: LockedConnection | None = None
        """For checkpoints, opened on the first one."""
        self._maintenance_lock = threading.Lock()
        self.settings = StoredSettings(self._writer, self._reader)
        """The profile's settings, through the listener's connections (port, secret, seen)."""

    def close(self) -> None:
        with self._maintenance_lock:
            sides = (self._writer, self._reader, self._maintenance)
        for side in {id(s.conn): s for s in sides if s is not None}.values():
            with side.lock:
                side.conn.close()

    # ---- checkpoints -----------------------------------------------------------------------

    def defer_checkpoints(self, deferred: bool = True) -> None:
        """Take WAL checkpoints off the commit path (the caller then calls `checkpoint`).

        A commit that crosses SQLite's automatic checkpoint threshold copies megabytes
        into the database file and syncs it before returning: tens of milliseconds
        during which every waiting `OK` waits too.
        """
        pages = 0 if deferred else AUTO_CHECKPOINT_PAGES
        with self._writer.lock:
            self._writer.conn.execute(f"PRAGMA wal_autocheckpoint={pages}")

    def checkpoint(self) -> None:
        """Copy what the WAL holds into the database file, beside the writer (PASSIVE)."""
        if str(self.path) == ":memory:":
            return
        with self._maintenance_lock:
            if self._maintenance is None:
                self._maintenance = LockedConnection(
                    sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
                )
            side = self._maintenance
        with side.lock:
            side.conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    # ---- writing ---------------------------------------------------------------------------

    def add(self, replies: Sequence[IncomingReply]) -> list[AddResult]:
        """Store `replies` in one transaction; each result says whether it was new.

        Raises `StoreError` (nothing of the batch stored) when the file cannot be
        written, e.g. `StoreBusy` when another writer holds it longer than the busy time-out.
        """
        stored_at = datetime.now(UTC)
        with self._writer.lock:
            conn = self._writer.conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                results = self._add_all(conn, replies, stored_at)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        return results

    def _add_all(
        self, conn: sqlite3.Connection, replies: Sequence[IncomingReply], stored_at: datetime
    ) -> list[AddResult]:
        """Insert the group in one statement, then complete the replies already stored.

        Every SQLite step hands the GIL to the listener's thread and waits to get it
        back, so the INSERT has no RETURNING (one step, not one per row): inside this
        write transaction the rows it adds get consecutive ids ending at
        `last_insert_rowid()`, and only when some rows were skipped are the new ids
        looked up.
        """
        replies = [believable(reply, stored_at) for reply in replies]
        rows = [_row(reply, stored_at) for reply in replies]
        inserted: dict[tuple[object, ...], int] = {}
        for start in range(0, len(rows), ROWS_PER_INSERT):
            chunk = rows[start : start + ROWS_PER_INSERT]
            before = conn.total_changes
            cursor = conn.execute(
                _INSERT_MANY.format(values=", ".join([_VALUES] * len(chunk))),
                [value for row in chunk for value in row],
            )
            added = conn.total_changes - before
            if not added:
                continue
            last = cursor.lastrowid  # the last row this statement inserted
            assert last is not None
            if added == len(chunk):
                for row_id, row in enumerate(chunk, start=last - added + 1):
                    inserted[row[:4]] = row_id
            else:
                found = conn.execute(_NEW_KEYS, (last - added + 1, last)).fetchall()
                inserted.update((tuple(key), row_id) for row_id, *key in found)
        results = []
        for reply, row in zip(replies, rows, strict=True):
            new_id = inserted.pop(row[:4], None)  # a reply repeated within the group is new once
            if new_id is not None:
                results.append(AddResult(_from_incoming(new_id, reply, stored_at), new=True))
            else:
                results.append(self._complete(conn, reply))
        if self.optouts is not None:
            self._apply_keywords(conn, self.optouts, results)
        return results

    @staticmethod
    def _apply_keywords(
        conn: sqlite3.Connection, rules: OptOutRules, results: Sequence[AddResult]
    ) -> None:
        """New keyword replies change the opt-out list, in the reply's own transaction."""
        found = []
        for result in results:
            if not result.new:
                continue
            reply = result.reply
            reading = rules.keywords.read(reply.text)
            if reading is not None:
                found.append(
                    ReplyKeyword(
                        reply.id,
                        list_number(reply.from_number, rules.region),
                        reply.received_at,
                        reply.source,
                        reading.intent,
                        reading.keyword,
                    )
                )
        if found:
            apply_replies(conn, rules.account, found)

    def _complete(self, conn: sqlite3.Connection, reply: IncomingReply) -> AddResult:
        """A reply already stored: fill in the fields the stored copy lacks, if any."""
        if reply.received_claimed is None:
            key = (reply.from_number, reply.to_number, _text(reply.received_at), reply.text)
            found = conn.execute(_SELECT + _BY_KEY, key).fetchone()
        else:
            claim = (reply.from_number, reply.to_number, reply.received_claimed, reply.text)
            found = conn.execute(_SELECT + _BY_CLAIM, claim).fetchone()
        known = _reply(found)
        fills = (
            (known.sent_at, reply.sent_at),
            (known.message_id, reply.message_id),
            (known.reply_id, reply.reply_id),
            (known.keyword, reply.keyword),
        )
        if not any(old is None and new is not None for old, new in fills):
            return AddResult(known, new=False)
        updated = conn.execute(
            _FILL,
            (_text(reply.sent_at), reply.message_id, reply.reply_id, reply.keyword, known.id),
        ).fetchone()
        return AddResult(_reply(updated), new=False, updated=True)

    def mark_seen(self, up_to_id: int) -> None:
        """The operator has seen every reply up to `up_to_id` (a watermark: it never goes back).

        A watermark rather than a flag per row: marking thousands seen is one write,
        and storing a reply touches no extra index.
        """
        self.settings.keep_highest(REPLIES_SEEN_UP_TO, max(up_to_id, 0))

    def seen_up_to(self) -> int:
        """Replies with an id above this have not been seen by the operator."""
        return self.settings.get(REPLIES_SEEN_UP_TO)

    # ---- the listener's settings -----------------------------------------------------------

    def secret(self) -> str:
        """The listener's secret path segment, made once per profile and kept.

        Kept so the `ReplyPath` configured at the gateway stays valid across restarts.
        """
        return self.settings.made_once(LISTENER_SECRET, lambda: secrets.token_urlsafe(SECRET_BYTES))

    def remembered_port(self) -> int | None:
        return self.settings.get(LISTENER_PORT)

    def remember_port(self, port: int) -> None:
        self.settings.set(LISTENER_PORT, port)

    # ---- reading ---------------------------------------------------------------------------

    def _select(self, clause: str, params: tuple[object, ...]) -> list[StoredReply]:
        with self._reader.lock:
            rows = self._reader.conn.execute(_SELECT + clause, params).fetchall()
        return [_reply(row) for row in rows]

    def count(self) -> int:
        with self._reader.lock:
            return int(self._reader.conn.execute("SELECT COUNT(*) FROM replies").fetchone()[0])

    def unseen_count(self) -> int:
        watermark = self.seen_up_to()
        with self._reader.lock:
            row = self._reader.conn.execute(
                "SELECT COUNT(*) FROM replies WHERE id > ?", (watermark,)
            ).fetchone()
        return int(row[0])

    def get(self, reply_id: int) -> StoredReply | None:
        found = self._select("WHERE id = ?", (reply_id,))
        return found[0] if found else None

    def latest(self, limit: int = 500) -> list[StoredReply]:
        """The newest replies by received time, newest first."""
        return self._select("ORDER BY received_at DESC, id DESC LIMIT ?", (limit,))

    def after(self, last_id: int, limit: int = 1000) -> list[StoredReply]:
        """Replies stored after `last_id`, oldest first: catching up after a missed feed."""
        return self._select("WHERE id > ? ORDER BY id LIMIT ?", (last_id, limit))

    def with_number(self, number: str, limit: int = 1000) -> list[StoredReply]:
        """One customer's replies, oldest first (a conversation)."""
        return self._select(
            "WHERE from_number = ? ORDER BY received_at, id LIMIT ?", (number, limit)
        )

    def search(self, needle: str, limit: int = 500) -> list[StoredReply]:
        """Replies whose text or numbers contain `needle` (case-insensitive), newest first."""
        pattern = "%" + needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        return self._select(
            "WHERE text LIKE ? ESCAPE '\\' OR from_number LIKE ? ESCAPE '\\' "
            "OR to_number LIKE ? ESCAPE '\\' ORDER BY received_at DESC, id DESC LIMIT ?",
            (pattern, pattern, pattern, limit),
        )

    def latest_received_at(self, now: datetime) -> datetime | None:
        """The newest received time not after `now`: a reply dated ahead of this machine's
        clock (stored by an earlier version) must not move a backfill's window."""
        with self._reader.lock:
            row = self._reader.conn.execute(
                "SELECT MAX(received_at) FROM replies WHERE received_at <= ?", (_text(now),)
            ).fetchone()
        return _time(row[0])


def believable(reply: IncomingReply, stored_at: datetime) -> IncomingReply:
    """`reply` as it is stored: a received time that is not `plausible` becomes the time
    it was stored (the claim kept), and such a sent time is dropped."""
    received_ok = plausible(reply.received_at, stored_at)
    sent_ok = reply.sent_at is None or plausible(reply.sent_at, stored_at)
    if received_ok and sent_ok:
        return reply
    return dataclasses.replace(
        reply,
        received_at=reply.received_at if received_ok else stored_at,
        received_claimed=None if received_ok else reply.received_at.isoformat(),
        sent_at=reply.sent_at if sent_ok else None,
    )


def _row(reply: IncomingReply, stored_at: datetime) -> tuple[object, ...]:
    """The INSERT's values; the first four are the natural key, as stored."""
    return (
        reply.from_number, reply.to_number, _text(reply.received_at), reply.text,
        _text(reply.sent_at), reply.message_id, reply.reply_id, reply.keyword, reply.source,
        stored_at.isoformat(), reply.received_claimed,
    )  # fmt: skip


def _from_incoming(row_id: int, reply: IncomingReply, stored_at: datetime) -> StoredReply:
    return StoredReply(
        id=row_id,
        from_number=reply.from_number,
        to_number=reply.to_number,
        text=reply.text,
        received_at=reply.received_at,
        sent_at=reply.sent_at,
        message_id=reply.message_id,
        reply_id=reply.reply_id,
        keyword=reply.keyword,
        source=reply.source,
        stored_at=stored_at,
        received_claimed=reply.received_claimed,
    )


def _reply(row: Any) -> StoredReply:
    return StoredReply(
        id=row[0],
        from_number=row[1],
        to_number=row[2],
        text=row[3],
        received_at=datetime.fromisoformat(row[4]),
        sent_at=_time(row[5]),
        message_id=row[6],
        reply_id=row[7],
        keyword=row[8],
        source=_source(row[9]),
        stored_at=datetime.fromisoformat(row[10]),
        received_claimed=row[11],
    )


def _source(value: str) -> ReplySource:
    if value == "keyword":
        return "keyword"
    if value == "backfill":
        return "backfill"
    return "webhook"
