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

The list is shared by a team (a profile's file, or the team's PostgreSQL server: the
same SQL on both, through `gwdesk.store.engine`). A change by hand records who made it
(`by_whom`, the console's operator) and writes an audit entry in its own transaction; a
customer's keyword needs none, its reply and the change's history say it all.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Final, TypeVar

from gwdesk.domain.number_search import number_query
from gwdesk.domain.numbers import DEFAULT_REGION, NumberError, normalise
from gwdesk.domain.operator import default_operator
from gwdesk.domain.optout_words import Intent
from gwdesk.store.database import StoreError
from gwdesk.store.engine import Database, Session, SqliteDatabase, containing
from gwdesk.store.shared import SharedData, shared_data
from gwdesk.store.team import write_audit
from gwdesk.store.unreadable import DECODE_ERRORS, Unreadable

MAX_REASON: Final = 500
MAX_NUMBER: Final = 32
UNREADABLE_AT: Final = datetime(1970, 1, 1, tzinfo=UTC)
IMPORT_ROWS: Final = 500
"""Numbers written per statement by an import."""
E = TypeVar("E", bound="OptOut")


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


@dataclass(frozen=True, slots=True, kw_only=True)
class OptOutChange(OptOut):
    """One entry of a number's history: the state it set, under its own id; `applied` is
    False for a reply that came too late (received before the state it would have changed)."""

    id: int
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


def one_line(reason: str) -> str:
    """A reason as the list keeps it: its words on one line, at most `MAX_REASON` long."""
    return " ".join(reason.split())[:MAX_REASON]


def list_number(number: str, region: str) -> str:
    """A number as the list keeps it: international digits, as the gateway writes them
    (a reply's sender that cannot be read as a number is kept as its digits)."""
    try:
        return normalise(number, region)
    except NumberError:
        return "".join(c for c in number if c.isdigit()) or number


def listable(number: str) -> bool:
    """Whether `number` can be on the list: digits only (a sender name, which no message
    can be sent to, has no place there), as a team's server checks it too."""
    return 0 < len(number) <= MAX_NUMBER and number.isascii() and number.isdigit()


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _entry(row: Any, kind: type[E], **more: Any) -> E:
    """A row of `optouts` or of `optout_changes` (`more`: what only the latter says) read."""
    return kind(
        number=row["number"],
        opted_out=bool(row["opted_out"]),
        at=_at(row["at"]),
        how=How(row["how"]),
        by=row["by_whom"],
        keyword=row["keyword"],
        reply_id=row["reply_id"],
        reason=row["reason"],
        **more,
    )


def _optout(row: Any) -> OptOut:
    return _entry(row, OptOut)


def kept_safe(row: Any) -> OptOut:
    """A current state that cannot be read, as the list keeps it: opted out (unless the row
    plainly says otherwise), so an unreadable row never lets a send through."""
    try:
        opted_out = int(row["opted_out"]) != 0
    except DECODE_ERRORS:
        opted_out = True
    return OptOut(
        number=str(row["number"]),
        opted_out=opted_out,
        at=UNREADABLE_AT,
        how=How.OPERATOR,
        by="(an entry that could not be read)",
        reason="this gwdesk could not read the list's entry for this number",
    )


def _change(row: Any) -> OptOutChange:
    return _entry(row, OptOutChange, id=row["id"], applied=bool(row["applied"]))


_CURRENT: Final = (
    "SELECT number, opted_out, at, how, by_whom, keyword, reply_id, reason FROM optouts "
)


def _record(
    session: Session,
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
    finds a later state). True when the current state changed. Inside a transaction.

    A team's server derives the current state, who and when itself (`pg_rules.py`): there
    the change is only appended, and the server says whether it applied."""
    stamp = at.astimezone(UTC).isoformat()
    change = (account, number, int(opted_out), stamp, how.value, by, keyword, reply_id, reason)
    if session.audited_by_server:
        row = session.execute(
            "INSERT INTO optout_changes(account, number, opted_out, at, how, by_whom, keyword, "
            "reply_id, reason, applied) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0) RETURNING applied",
            change,
        ).fetchone()
        return bool(row[0])
    current = session.execute(
        "SELECT opted_out, at FROM optouts WHERE account = ? AND number = ?", (account, number)
    ).fetchone()
    later = only_if_newer and current is not None and current["at"] > stamp
    # A first START is kept as a state too: a STOP received before it and arriving after it
    # (by the backfill) must not opt the number out.
    changes = not later and (current is None or bool(current["opted_out"]) != opted_out)
    session.execute(
        "INSERT INTO optout_changes(account, number, opted_out, at, how, by_whom, keyword, "
        "reply_id, reason, applied) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (*change, int(changes)),
    )
    if changes:
        session.execute(
            "INSERT INTO optouts(account, number, opted_out, at, how, by_whom, keyword, reply_id, "
            "reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(account, number) DO UPDATE SET "
            "opted_out = excluded.opted_out, at = excluded.at, how = excluded.how, "
            "by_whom = excluded.by_whom, keyword = excluded.keyword, "
            "reply_id = excluded.reply_id, reason = excluded.reason",
            change,
        )
    return changes


def apply_replies(session: Session, account: str, found: Sequence[ReplyKeyword]) -> int:
    """Apply newly stored keyword replies (inside the reply store's transaction); the
    number of states changed. Mentions change nothing (the console flags them)."""
    changed = 0
    for reply in sorted(found, key=lambda r: (r.received_at, r.reply_id)):
        if reply.intent is Intent.MENTION or not listable(reply.number):
            continue
        changed += _record(
            session,
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


@contextlib.contextmanager
def _failing_as(what: str) -> Iterator[None]:
    """The store's errors, saying what could not be done (the same kind: a server away
    stays `StoreUnavailable`)."""
    try:
        yield
    except OptOutError:
        raise
    except StoreError as exc:
        raise type(exc)(f"The opt-out list cannot be {what}: {exc}") from exc


class OptOutStore:
    """One account's opt-out list in a profile's shared store; safe to use from any thread.

    `operator` is who changes it by hand here (empty: the system user), `console` which
    console (both recorded with each change and its audit entry).
    """

    def __init__(
        self,
        data: Path | str | SharedData,
        account: str,
        *,
        operator: str = "",
        console: str = "",
        region: str = DEFAULT_REGION,
    ) -> None:
        self.data = shared_data(data)
        self.account = account
        self.region = region
        """Where a national number typed in a search is read."""
        self.operator = operator
        self.console = console
        with _failing_as("opened"):
            self._db: Database = self.data.open(durable=True)
        self.unreadable = Unreadable("optouts", key=lambda row: row["number"])
        """Current states that could not be read (kept as opted out, each logged once)."""
        self.unreadable_changes = Unreadable("optout_changes")

    @property
    def path(self) -> str:
        """Where the list is (a file, a server), for messages."""
        return self.data.where

    def __repr__(self) -> str:
        return f"OptOutStore({self.path!r}, account={self.account!r})"

    def close(self) -> None:
        self._db.close()

    def _current(self, row: Any) -> OptOut:
        try:
            return _optout(row)
        except DECODE_ERRORS as exc:
            self.unreadable.note(row, exc)
            return kept_safe(row)

    def _read(self, query: str, values: Sequence[object]) -> list[Any]:
        with _failing_as("read"), self._db.session() as session:
            return session.execute(query, values).fetchall()

    # ---- reading -----------------------------------------------------------------------

    def get(self, number: str) -> OptOut | None:
        rows = self._read(_CURRENT + "WHERE account = ? AND number = ?", (self.account, number))
        return self._current(rows[0]) if rows else None

    def opted_out(self, numbers: Iterable[str]) -> dict[str, OptOut]:
        """Of `numbers`, those opted out now, with why."""
        wanted = list(dict.fromkeys(numbers))
        found: dict[str, OptOut] = {}
        for start in range(0, len(wanted), IMPORT_ROWS):
            part = wanted[start : start + IMPORT_ROWS]
            marks = ", ".join("?" for _ in part)
            query = f"{_CURRENT}WHERE account = ? AND opted_out = 1 AND number IN ({marks})"
            for row in self._read(query, (self.account, *part)):
                found[row["number"]] = self._current(row)
        return found

    def opted_out_numbers(self) -> frozenset[str]:
        """Every number opted out now: what a big list is checked against, in one read."""
        query = "SELECT number FROM optouts WHERE account = ? AND opted_out = 1"
        with _failing_as("read"), self._db.session() as session:
            if isinstance(self._db, SqliteDatabase):
                cursor = self._db.conn.cursor()
                cursor.row_factory = None  # plain tuples: a Row per number costs half the time
                return frozenset(number for (number,) in cursor.execute(query, (self.account,)))
            return frozenset(row[0] for row in session.execute(query, (self.account,)))

    def count(self) -> tuple[int, int]:
        """(opted out now, opted in: resubscribed, or a START on the list)."""
        rows = self._read(
            "SELECT COALESCE(SUM(opted_out), 0), COUNT(*) - COALESCE(SUM(opted_out), 0) "
            "FROM optouts WHERE account = ?",
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
        """Newest change first; `search` is a number as typed (`domain.number_search`: its
        start, national or international, or a piece of it) or words of the reason (any
        case)."""
        clauses, values = ["account = ?"], [self.account]
        if not include_opted_in:
            clauses.append("opted_out = 1")
        needle = search.strip()
        if needle:
            number = number_query(needle, self.region, min_digits=1)
            if number is not None:
                clauses.append("number LIKE ?")
                values.append(number.like)
            else:
                clauses.append(
                    "(lower(reason) LIKE lower(?) ESCAPE '\\' "
                    "OR lower(keyword) LIKE lower(?) ESCAPE '\\' "
                    "OR lower(by_whom) LIKE lower(?) ESCAPE '\\')"
                )
                values.extend([containing(needle)] * 3)
        where = " AND ".join(clauses)
        query = f"{_CURRENT}WHERE {where} ORDER BY at DESC, number LIMIT ? OFFSET ?"
        return [self._current(row) for row in self._read(query, (*values, limit, offset))]

    def history(self, number: str) -> list[OptOutChange]:
        rows = self._read(
            "SELECT id, account, number, opted_out, at, how, by_whom, keyword, reply_id, reason, "
            "applied FROM optout_changes WHERE account = ? AND number = ? ORDER BY at, id",
            (self.account, number),
        )
        return self.unreadable_changes.decoded(rows, _change)

    # ---- changes by hand ---------------------------------------------------------------

    def _who(self, by: str | None) -> str:
        return by or self.operator or default_operator()

    def set(self, number: str, opted_out: bool, *, reason: str, by: str | None = None) -> OptOut:
        """An operator's change. Opting a number back in needs a reason (only the customer's
        own keyword resubscribes without one); the state as it now is."""
        reason = one_line(reason)
        if not opted_out and not reason:
            raise OptOutError(
                "Only the customer's own START resubscribes without a reason: say why "
                "(e.g. 'asked by phone on 3 March')."
            )
        who = self._who(by)
        now = datetime.now(UTC)
        with _failing_as("changed"), self._db.transaction() as session:
            _record(session, self.account, number, opted_out, now, How.OPERATOR, who, reason=reason)
            action = "opted out" if opted_out else "opted back in"
            write_audit(session, who, self.console, action, number, reason)
        found = self.get(number)
        assert found is not None
        return found

    def import_numbers(
        self,
        numbers: Iterable[str],
        *,
        reason: str,
        by: str | None = None,
        reasons: Mapping[str, str] | None = None,
    ) -> int:
        """Opt out every number of an imported list (numbers already checked and
        normalised), each with its own reason from `reasons` or else `reason`; how many
        were not opted out before."""
        who = self._who(by)
        reason = one_line(reason) or "imported"
        own = {number: one_line(why) for number, why in (reasons or {}).items()}
        now = datetime.now(UTC)
        added = 0
        listed = list(dict.fromkeys(numbers))
        with _failing_as("changed"), self._db.transaction() as session:
            for number in listed:
                why = own.get(number) or reason
                added += _record(
                    session, self.account, number, True, now, How.IMPORT, who, reason=why
                )
            write_audit(
                session, who, self.console, "imported opt-outs",
                f"{added} of {len(listed)} numbers newly opted out", reason,
            )  # fmt: skip
        return added
