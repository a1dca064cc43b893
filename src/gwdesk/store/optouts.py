"""The opt-out list of a gateway account: who said STOP, when, how, and every change since.

Each number has one current state (`optouts`) and a history (`optout_changes`). A
customer changes it by a keyword reply, which the reply store applies in the same
transaction that stores the reply (`apply_replies`): a reply stored once changes the
list once, whichever channel brought it and however often, and no reply path can
skip it. Replies change the state only in the order they were received: a STOP
received before the state's last change (a backfill bringing an old reply late)
is kept in the history but changes nothing. An operator changes it by hand with a
reason (a resubscription without the customer's own keyword must say why), or
imports a list.

Numbers are stored as the gateway writes them (international digits), so every
path that normalises a number finds the same row.
"""

from __future__ import annotations

import getpass
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

from gwdesk.domain.numbers import NumberError, normalise
from gwdesk.domain.optout_words import Intent
from gwdesk.store.database import StoreError, connect, transaction

MAX_REASON: Final = 500
IMPORT_ROWS: Final = 500
"""Numbers written per statement by an import."""


class How(StrEnum):
    """How a change was made."""

    REPLY = "reply (webhook)"
    KEYWORD = "keyword forward"
    BACKFILL = "replies backfill"
    OPERATOR = "operator"
    IMPORT = "import"


REPLY_SOURCES: Final = {"webhook": How.REPLY, "keyword": How.KEYWORD, "backfill": How.BACKFILL}
CUSTOMER: Final = "the customer"


class OptOutError(StoreError):
    """A change the list refuses (a resubscription with no reason, say); nothing changed."""


def utc_text(moment: datetime) -> str:
    """`3 Mar 2026 14:02 UTC`: how a change's time is told where no local zone applies
    (the command line, a refusal raised in the core)."""
    return f"{moment.astimezone(UTC):%-d %b %Y %H:%M} UTC"


@dataclass(frozen=True, slots=True)
class OptOut:
    """A number's current state."""

    number: str
    opted_out: bool
    at: datetime
    how: How
    by: str
    keyword: str | None = None
    reply_id: int | None = None
    reason: str = ""

    def describe(self, when_text: Callable[[datetime], str] = utc_text) -> str:
        """`opted out by replying STOP on 3 Mar 2026 14:02 UTC`; `when_text` tells the time
        (the console passes one in the operator's zone)."""
        when = when_text(self.at)
        verb = "opted out" if self.opted_out else "opted back in"
        if self.how in (How.REPLY, How.KEYWORD, How.BACKFILL):
            return f"{verb} by replying {self.keyword or 'a keyword'} on {when}"
        why = f" ({self.reason})" if self.reason else ""
        return f"{verb} by {self.by} on {when}{why}"


@dataclass(frozen=True, slots=True)
class OptOutChange:
    """One entry of a number's history; `applied` is False for a reply that came too late
    (received before the state it would have changed)."""

    id: int
    number: str
    opted_out: bool
    at: datetime
    how: How
    by: str
    keyword: str | None
    reply_id: int | None
    reason: str
    applied: bool


@dataclass(frozen=True, slots=True)
class ReplyKeyword:
    """A newly stored reply that reads as an opt-out or opt-in."""

    reply_id: int
    number: str
    received_at: datetime
    source: str
    intent: Intent
    keyword: str


def list_number(number: str, region: str) -> str:
    """A number as the list keeps it: international digits, as the gateway writes them
    (a reply's sender that cannot be read as a number is kept as its digits)."""
    try:
        return normalise(number, region)
    except NumberError:
        return "".join(c for c in number if c.isdigit()) or number


def operator_name() -> str:
    """Who is at this workstation (the OS user): what a change by hand is recorded under."""
    try:
        return getpass.getuser() or "operator"
    except (KeyError, OSError):
        return "operator"


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _optout(row: Any) -> OptOut:
    return OptOut(
        number=row["number"],
        opted_out=bool(row["opted_out"]),
        at=_at(row["at"]),
        how=How(row["how"]),
        by=row["by_whom"],
        keyword=row["keyword"],
        reply_id=row["reply_id"],
        reason=row["reason"],
    )


def _change(row: Any) -> OptOutChange:
    return OptOutChange(
        id=row["id"],
        number=row["number"],
        opted_out=bool(row["opted_out"]),
        at=_at(row["at"]),
        how=How(row["how"]),
        by=row["by_whom"],
        keyword=row["keyword"],
        reply_id=row["reply_id"],
        reason=row["reason"],
        applied=bool(row["applied"]),
    )


_CURRENT: Final = (
    "SELECT number, opted_out, at, how, by_whom, keyword, reply_id, reason FROM optouts "
)


def _record(
    conn: sqlite3.Connection,
    account: str,
    number: str,
    opted_out: bool,
    at: datetime,
    how: How,
    by: str,
    *,
    keyword: str | None = None,
    reply_id: int | None = None,
    reason: str = "",
    only_if_newer: bool = False,
) -> bool:
    """Write a change (its history row always; the current state unless `only_if_newer`
    finds a later state). True when the current state changed. Inside a transaction."""
    stamp = at.astimezone(UTC).isoformat()
    current = conn.execute(
        "SELECT opted_out, at FROM optouts WHERE account = ? AND number = ?", (account, number)
    ).fetchone()
    later = only_if_newer and current is not None and current["at"] > stamp
    # A first START is kept as a state too: a STOP received before it and arriving after it
    # (by the backfill) must not opt the number out.
    changes = not later and (current is None or bool(current["opted_out"]) != opted_out)
    conn.execute(
        "INSERT INTO optout_changes(account, number, opted_out, at, how, by_whom, keyword, "
        "reply_id, reason, applied) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            account,
            number,
            int(opted_out),
            stamp,
            how.value,
            by,
            keyword,
            reply_id,
            reason,
            int(changes),
        ),
    )
    if changes:
        conn.execute(
            "INSERT INTO optouts(account, number, opted_out, at, how, by_whom, keyword, reply_id, "
            "reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(account, number) DO UPDATE SET "
            "opted_out = excluded.opted_out, at = excluded.at, how = excluded.how, "
            "by_whom = excluded.by_whom, keyword = excluded.keyword, "
            "reply_id = excluded.reply_id, reason = excluded.reason",
            (account, number, int(opted_out), stamp, how.value, by, keyword, reply_id, reason),
        )
    return changes


def apply_replies(conn: sqlite3.Connection, account: str, found: Sequence[ReplyKeyword]) -> int:
    """Apply newly stored keyword replies (inside the reply store's transaction); the
    number of states changed. Mentions change nothing (the console flags them)."""
    changed = 0
    for reply in sorted(found, key=lambda r: (r.received_at, r.reply_id)):
        if reply.intent is Intent.MENTION:
            continue
        changed += _record(
            conn,
            account,
            reply.number,
            reply.intent is Intent.OPT_OUT,
            reply.received_at,
            REPLY_SOURCES.get(reply.source, How.REPLY),
            CUSTOMER,
            keyword=reply.keyword,
            reply_id=reply.reply_id,
            only_if_newer=True,
        )
    return changed


class OptOutStore:
    """One account's opt-out list in a profile's file; safe to use from any thread."""

    def __init__(self, path: Path | str, account: str) -> None:
        self.path = path
        self.account = account
        self._conn = connect(path)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OptOutStore({str(self.path)!r}, account={self.account!r})"

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _read(self, query: str, values: Sequence[object]) -> list[Any]:
        try:
            with self._lock:
                return self._conn.execute(query, values).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"The opt-out list cannot be read: {exc}") from exc

    # ---- reading -----------------------------------------------------------------------

    def get(self, number: str) -> OptOut | None:
        rows = self._read(_CURRENT + "WHERE account = ? AND number = ?", (self.account, number))
        return _optout(rows[0]) if rows else None

    def opted_out(self, numbers: Iterable[str]) -> dict[str, OptOut]:
        """Of `numbers`, those opted out now, with why."""
        wanted = list(dict.fromkeys(numbers))
        found: dict[str, OptOut] = {}
        for start in range(0, len(wanted), IMPORT_ROWS):
            part = wanted[start : start + IMPORT_ROWS]
            marks = ", ".join("?" for _ in part)
            query = f"{_CURRENT}WHERE account = ? AND opted_out = 1 AND number IN ({marks})"
            for row in self._read(query, (self.account, *part)):
                found[row["number"]] = _optout(row)
        return found

    def opted_out_numbers(self) -> frozenset[str]:
        """Every number opted out now: what a big list is checked against, in one read."""
        try:
            with self._lock:
                cursor = self._conn.cursor()
                cursor.row_factory = None  # plain tuples: a Row per number costs half the time
                cursor.execute(
                    "SELECT number FROM optouts WHERE account = ? AND opted_out = 1",
                    (self.account,),
                )
                return frozenset(number for (number,) in cursor)
        except sqlite3.Error as exc:
            raise StoreError(f"The opt-out list cannot be read: {exc}") from exc

    def count(self) -> tuple[int, int]:
        """(opted out now, opted in: resubscribed, or a START on the list)."""
        rows = self._read(
            "SELECT TOTAL(opted_out), COUNT(*) - TOTAL(opted_out) FROM optouts WHERE account = ?",
            (self.account,),
        )
        return (int(rows[0][0]), int(rows[0][1]))

    def listing(
        self,
        search: str = "",
        *,
        include_opted_in: bool = False,
        limit: int = 1000,
        offset: int = 0,
    ) -> list[OptOut]:
        """Newest change first; `search` matches digits of the number or words of the reason."""
        clauses, values = ["account = ?"], [self.account]
        if not include_opted_in:
            clauses.append("opted_out = 1")
        needle = search.strip()
        if needle:
            digits = "".join(c for c in needle if c.isdigit())
            if digits and digits == needle.replace(" ", "").lstrip("+"):
                clauses.append("number LIKE ?")
                values.append(f"%{digits}%")
            else:
                clauses.append("(reason LIKE ? OR keyword LIKE ? OR by_whom LIKE ?)")
                values.extend([f"%{needle}%"] * 3)
        where = " AND ".join(clauses)
        query = f"{_CURRENT}WHERE {where} ORDER BY at DESC, number LIMIT ? OFFSET ?"
        return [_optout(row) for row in self._read(query, (*values, limit, offset))]

    def history(self, number: str) -> list[OptOutChange]:
        rows = self._read(
            "SELECT * FROM optout_changes WHERE account = ? AND number = ? ORDER BY at, id",
            (self.account, number),
        )
        return [_change(row) for row in rows]

    # ---- changes by hand ---------------------------------------------------------------

    def set(self, number: str, opted_out: bool, *, reason: str, by: str | None = None) -> OptOut:
        """An operator's change. Opting a number back in needs a reason (only the customer's
        own keyword resubscribes without one); the state as it now is."""
        reason = " ".join(reason.split())[:MAX_REASON]
        if not opted_out and not reason:
            raise OptOutError(
                "Only the customer's own START resubscribes without a reason: say why "
                "(e.g. 'asked by phone on 3 March')."
            )
        now = datetime.now(UTC)
        try:
            with self._lock, transaction(self._conn):
                _record(
                    self._conn, self.account, number, opted_out, now, How.OPERATOR,
                    by or operator_name(), reason=reason,
                )  # fmt: skip
        except sqlite3.Error as exc:
            raise StoreError(f"The opt-out list cannot be changed: {exc}") from exc
        found = self.get(number)
        assert found is not None
        return found

    def import_numbers(self, numbers: Iterable[str], *, reason: str, by: str | None = None) -> int:
        """Opt out every number of an imported list (numbers already checked and
        normalised); how many were not opted out before."""
        who = by or operator_name()
        reason = " ".join(reason.split())[:MAX_REASON] or "imported"
        now = datetime.now(UTC)
        added = 0
        try:
            with self._lock, transaction(self._conn):
                for number in dict.fromkeys(numbers):
                    added += _record(
                        self._conn, self.account, number, True, now, How.IMPORT, who, reason=reason
                    )
        except sqlite3.Error as exc:
            raise StoreError(f"The opt-out list cannot be changed: {exc}") from exc
        return added
