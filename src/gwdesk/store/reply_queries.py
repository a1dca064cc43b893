"""Reading replies: windows of the reply table, searches, conversations and unread figures.

Plain functions of a `Reading` (a reader's connections, off the GUI thread), so the
console's models run them on their reader and tests call them directly; the
conversation joins the shared store's replies and history (`reading.shared`: the
profile's file, or the team's server) with this workstation's log cache
(`reading.sql`), in Python, so nothing above it writes SQL.

Replies are listed oldest first by (received time, id): a reply stored later
has a larger id, so the live case (replies received now) only ever appends at
the end, and the view can grow without being re-read. A search is one Python
predicate, used both as an SQL function over the stored rows and on replies as
they arrive, so a reply is shown live exactly when a re-read would show it. On a
team's server, where no Python runs, the same search is SQL (`lower`, which folds
case as Python's `casefold` does but for a few letters such as ß).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Final

from gwdesk.domain.number_search import NumberQuery, country_codes, number_query
from gwdesk.domain.numbers import DEFAULT_REGION
from gwdesk.domain.settings import REPLIES_SEEN_UP_TO
from gwdesk.store.reader import Reading
from gwdesk.store.replies import StoredReply

MAX_SEARCH: Final = 200
MATCH_FUNCTION: Final = "gwdesk_reply_match"
_COLUMNS: Final = "id, received_at, from_number, to_number, text, message_id"
_SEARCHED: Final = ("text", "from_number", "to_number")
_NUMBERS: Final = ("from_number", "to_number")
SECOND_FRACTION: Final = timedelta(microseconds=999_999)
CONVERSATION_LIMIT: Final = 500
"""Newest entries of each kind read for a conversation."""
EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
"""The log cache keeps times as UTC microseconds since this."""


@dataclass(frozen=True, slots=True)
class ReplyRow:
    """One row of the table: a stored reply and the text of the message it answers."""

    id: int
    received_at: datetime
    from_number: str
    to_number: str
    text: str
    message_id: str | None = None
    answers: str | None = None
    """The text of the message it answers, when that message is known here."""

    @property
    def key(self) -> tuple[str, int]:
        return (self.received_at.isoformat(), self.id)


def row_of(reply: StoredReply) -> ReplyRow:
    return ReplyRow(
        reply.id,
        reply.received_at,
        reply.from_number,
        reply.to_number,
        reply.text,
        reply.message_id,
    )


@dataclass(frozen=True)
class ReplySearch:
    """What the operator typed: text anywhere in the reply, or a phone number.

    A number may be typed the way people write it ("0412 345 678", "+61 412-345", a
    piece of it): it finds what every other search box finds
    (`gwdesk.domain.number_search`, read in `region`).
    """

    needle: str = ""
    region: str = DEFAULT_REGION
    _folded: str = field(init=False, repr=False, compare=False, default="")
    _number: NumberQuery | None = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        needle = " ".join(self.needle.split())[:MAX_SEARCH]
        object.__setattr__(self, "needle", needle)
        object.__setattr__(self, "_folded", needle.casefold())
        object.__setattr__(self, "_number", number_query(needle, self.region))

    @property
    def active(self) -> bool:
        return bool(self.needle)

    def matches(self, from_number: str, to_number: str, text: str) -> bool:
        if not self.needle:
            return True
        folded = self._folded
        if folded in text.casefold() or folded in from_number.casefold():
            return True
        if folded in to_number.casefold():
            return True
        number = self._number
        if number is not None:
            return any(number.matches(n, self.region) for n in (from_number, to_number))
        return False

    def matches_reply(self, reply: StoredReply) -> bool:
        return self.matches(reply.from_number, reply.to_number, reply.text)

    def where(self, reading: Reading) -> tuple[str, tuple[object, ...]]:
        """The SQL condition and its values (empty when nothing is searched): a file's
        reader runs `matches` itself, a server the same search in SQL."""
        if not self.needle:
            return "", ()
        file = reading.shared_file
        if file is None:
            return self._server_where()

        def match(from_number: str, to_number: str, text: str) -> int:
            return int(self.matches(from_number or "", to_number or "", text or ""))

        file.create_function(MATCH_FUNCTION, 3, match, deterministic=True)
        return f"WHERE {MATCH_FUNCTION}(from_number, to_number, text) ", ()

    def _server_where(self) -> tuple[str, tuple[object, ...]]:
        """`matches` in PostgreSQL's SQL (`strpos`: the needle is never a pattern)."""
        conditions = [f"strpos(lower({column}), lower(?)) > 0" for column in _SEARCHED]
        values: list[object] = [self.needle] * len(_SEARCHED)
        number = self._number
        if number is not None:
            code, trunk = country_codes(self.region)
            found = "= 1" if number.anchored else "> 0"
            for column in _NUMBERS:
                # The stored number's international digits, as `international` reads them.
                digits = f"regexp_replace({column}, '[^0-9]', '', 'g')"
                intl = (
                    f"CASE WHEN {column} LIKE '+%' THEN {digits} "
                    f"WHEN {digits} LIKE '00%' THEN substr({digits}, 3) "
                    f"WHEN ? <> '' AND strpos({digits}, ?) = 1 "
                    f"THEN ? || substr({digits}, ?) ELSE {digits} END"
                )
                conditions.append(f"strpos({intl}, ?) {found}")
                values += [trunk, trunk, code, len(trunk) + 1, number.digits]
        return f"WHERE ({' OR '.join(conditions)}) ", tuple(values)


@dataclass(frozen=True, slots=True)
class Listing:
    """How many replies a search finds, and the key of the last (newest) of them."""

    total: int
    last: tuple[str, int] | None
    read_up_to: int
    """The largest id stored when this was read: later replies are not in it."""


def listing(reading: Reading, search: ReplySearch) -> Listing:
    """Read inside a snapshot (with the windows) for figures that agree."""
    where, values = search.where(reading)
    shared = reading.shared
    newest = shared.execute("SELECT COALESCE(MAX(id), 0) FROM replies").fetchone()[0]
    total = shared.execute("SELECT COUNT(*) FROM replies " + where, values).fetchone()[0]  # noqa: S608
    last = shared.execute(
        f"SELECT received_at, id FROM replies {where}ORDER BY received_at DESC, id DESC LIMIT 1",  # noqa: S608
        values,
    ).fetchone()
    return Listing(int(total), None if last is None else (str(last[0]), int(last[1])), int(newest))


def fetch_window(reading: Reading, search: ReplySearch, offset: int, limit: int) -> list[ReplyRow]:
    where, values = search.where(reading)
    rows = reading.shared.execute(
        f"SELECT {_COLUMNS} FROM replies {where}ORDER BY received_at, id LIMIT ? OFFSET ?",  # noqa: S608
        (*values, limit, offset),
    ).fetchall()
    answered = answered_texts(reading, {row[5] for row in rows if row[5]})
    return [
        ReplyRow(
            int(row[0]),
            datetime.fromisoformat(row[1]),
            row[2],
            row[3],
            row[4],
            row[5],
            answered.get(row[5]) if row[5] else None,
        )
        for row in rows
    ]


def position(reading: Reading, search: ReplySearch, key: tuple[str, int]) -> int:
    """The row number `key` has (or would have) in the search's listing."""
    where, values = search.where(reading)
    glue = "AND" if where else "WHERE"
    found = reading.shared.execute(
        f"SELECT COUNT(*) FROM replies {where}{glue} (received_at < ? OR "  # noqa: S608
        "(received_at = ? AND id < ?))",
        (*values, key[0], key[0], key[1]),
    ).fetchone()[0]
    return int(found)


def answered_texts(reading: Reading, message_ids: Iterable[str]) -> dict[str, str]:
    """The texts of sent messages by MessageId: the log cache, then the team's history."""
    wanted = sorted(set(message_ids))
    found: dict[str, str] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        for message_id, text in reading.sql.execute(
            f"SELECT message_id, message FROM log_records WHERE message_id IN ({marks})",  # noqa: S608
            chunk,
        ):
            if text:
                found[message_id] = text
        for message_id, text in reading.shared.execute(
            f"SELECT message_id, text FROM history WHERE message_id IN ({marks})",  # noqa: S608
            chunk,
        ):
            found.setdefault(message_id, text)
    return found


# ---- conversations ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConversationEntry:
    at: datetime
    incoming: bool
    """A reply from the customer (True) or a message sent to them (False)."""
    text: str
    status: str | None = None
    ok: bool = True
    """False for a send that failed."""
    message_id: str | None = None
    reply_id: int | None = None
    order_at: datetime | None = None
    """Where it goes in time order, when finer than `at` (see `conversation`)."""
    operator: str = ""
    """Who sent it, for a message sent from a console of the team ("" when unknown)."""


def number_variants(number: str) -> tuple[str, str]:
    """The ways one number may be stored: with and without the international `+`."""
    bare = number.strip().lstrip("+")
    return (bare, f"+{bare}")


def conversation(
    reading: Reading, number: str, limit: int = CONVERSATION_LIMIT
) -> list[ConversationEntry]:
    """Replies from `number` and messages sent to it, oldest first (the newest `limit`)."""
    variants = number_variants(number)
    shared = reading.shared
    entries: list[ConversationEntry] = []
    for reply_id, received, stored, text, message_id in shared.execute(
        "SELECT id, received_at, stored_at, text, message_id FROM replies "
        "WHERE from_number IN (?, ?) ORDER BY received_at DESC, id DESC LIMIT ?",
        (*variants, limit),
    ):
        at = datetime.fromisoformat(received)
        # The received time has whole seconds; when this console stored the reply (within
        # that second, for one that came live) places it against a send in the same second.
        order_at = min(max(datetime.fromisoformat(stored), at), at + SECOND_FRACTION)
        entries.append(
            ConversationEntry(at, True, text, None, True, message_id, reply_id, order_at)
        )
    known: set[str] = set()
    sends: list[ConversationEntry] = []
    for at, text, ok, status, message_id, operator in shared.execute(
        "SELECT at, text, ok, status, message_id, operator FROM history "
        "WHERE recipients IN (?, ?) ORDER BY at DESC, id DESC LIMIT ?",
        (*variants, limit),
    ):
        if message_id:
            known.add(message_id)
        sends.append(
            ConversationEntry(
                datetime.fromisoformat(at),
                False,
                text,
                status,
                bool(ok),
                message_id,
                operator=operator or "",
            )
        )
    entries.extend(_with_logged_status(reading, sends))
    for message_id, lodged, sent, text, status in reading.sql.execute(
        "SELECT message_id, date_lodged, date_sent, message, status FROM log_records "
        "WHERE to_number IN (?, ?) ORDER BY date_lodged DESC LIMIT ?",
        (*variants, limit),
    ):
        if message_id in known or text is None:
            continue
        moment = EPOCH + timedelta(
            microseconds=sent if sent is not None and sent > lodged else lodged
        )
        entries.append(ConversationEntry(moment, False, text, status, True, message_id))
    entries.sort(key=lambda e: (e.order_at or e.at, e.incoming))
    return entries[-limit:]


def _with_logged_status(
    reading: Reading, sends: list[ConversationEntry]
) -> list[ConversationEntry]:
    """Sends as recorded, each that went showing the status the log cache holds of it
    now (DELIVERED where the send said ACTIVE): one statement for them all."""
    ids = sorted({e.message_id for e in sends if e.ok and e.message_id})
    if not ids:
        return sends
    marks = ", ".join("?" * len(ids))
    held = dict(
        reading.sql.execute(
            f"SELECT message_id, status FROM log_records WHERE message_id IN ({marks})",  # noqa: S608
            ids,
        ).fetchall()
    )
    return [
        replace(e, status=held[e.message_id])
        if e.ok and e.message_id and held.get(e.message_id)
        else e
        for e in sends
    ]


# ---- unread ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class UnreadFigures:
    seen_up_to: int
    latest_id: int
    unseen: int


def unread_figures(reading: Reading, above: int | None = None) -> UnreadFigures:
    """The seen watermark, the newest id and the unseen count (above `above`, else the
    watermark), read in one snapshot: a reply stored while counting is either in all
    three figures or in none (the hub then adds those it was handed meanwhile)."""
    with reading.snapshot():
        seen = reading.get(REPLIES_SEEN_UP_TO)
        shared = reading.shared
        latest = shared.execute("SELECT COALESCE(MAX(id), 0) FROM replies").fetchone()[0]
        unseen = shared.execute(
            "SELECT COUNT(*) FROM replies WHERE id > ?", (seen if above is None else above,)
        ).fetchone()[0]
    return UnreadFigures(seen, int(latest), int(unseen))
