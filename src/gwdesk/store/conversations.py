"""Conversations as work: each customer's number open, waiting, done or snoozed, assigned
to an operator or to none, and each operator's own read marks.

A conversation is one customer's number (`reply_queries.conversation`): it needs no row
until someone changes it (a number without one is open and nobody's). Its key is the
number as international digits without `+`, as a reply's sender is stored either way.

- **State**: a new reply from the customer re-opens a done, waiting or snoozed one, in
  the reply's own transaction (`reopen_for_replies`, called by `ReplyStore.add` on a
  file; on a team's server a trigger on `replies` does it, `pg_conversations.py`). A
  snoozed one whose time has passed reads as open.
- **Who**: every change stamps `changed_by` and writes an audit entry in the same
  transaction. On a team's server the change goes through `gwdesk_conversation`, which
  stamps the login's own name and audits it itself: a client cannot forge either.
- **Read marks** are an operator's, not a console's: per reader (the operator's name on
  a file, the login on a server, where row-level security keeps each login to its own),
  the newest reply id read per number, and one mark for every number (`''`: "mark all
  read"), so the unread count scans only the replies after it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from gwdesk.domain.operator import operator_name
from gwdesk.store.database import StoreError, store_methods
from gwdesk.store.engine import Database, Session
from gwdesk.store.team import now_iso, write_audit

OPEN: Final = "open"
WAITING: Final = "waiting"
DONE: Final = "done"
SNOOZED: Final = "snoozed"
STATES: Final = (OPEN, WAITING, DONE, SNOOZED)
ALL_READ: Final = ""
"""The read mark that covers every number ("mark all read")."""
THE_CUSTOMER: Final = "the customer"
"""Who re-opens a conversation by replying."""
NUMBER: Final = re.compile(r"[0-9]{1,32}")
LISTED: Final = 2000
"""Conversations a listing reads at most (the most recent first)."""

_LISTING: Final = (
    "SELECT ltrim(r.from_number, '+') AS number, COUNT(*) AS replies, MAX(r.id) AS last_id, "
    "MAX(r.received_at) AS last_at, "
    "SUM(CASE WHEN r.id > ? AND r.id > COALESCE(m.up_to, 0) THEN 1 ELSE 0 END) AS unread "
    "FROM replies r LEFT JOIN conversation_reads m "
    "ON m.reader = ? AND m.number = ltrim(r.from_number, '+') "
    "GROUP BY ltrim(r.from_number, '+') ORDER BY MAX(r.id) DESC LIMIT ?"
)
_UNREAD: Final = (
    "SELECT COUNT(DISTINCT ltrim(r.from_number, '+')), COUNT(*) FROM replies r "
    "LEFT JOIN conversation_reads m ON m.reader = ? AND m.number = ltrim(r.from_number, '+') "
    "WHERE r.id > ? AND r.id > COALESCE(m.up_to, 0)"
)
_MARK: Final = (
    "INSERT INTO conversation_reads(reader, number, up_to) VALUES (?, ?, ?) "
    "ON CONFLICT(reader, number) DO UPDATE SET up_to = CASE "
    "WHEN excluded.up_to > conversation_reads.up_to THEN excluded.up_to "
    "ELSE conversation_reads.up_to END"
)
_STATE_COLUMNS: Final = "number, state, snoozed_until, assigned_to, changed_at, changed_by"


class ConversationError(StoreError):
    """A change the store does not take (a state it does not know, a snooze in the past,
    a number that is not one); the message says why."""


@dataclass(frozen=True, slots=True)
class ConversationState:
    """What is kept of one conversation (a number without a row: open, nobody's)."""

    number: str
    state: str = OPEN
    """As it reads now: a snooze whose time has passed reads as open."""
    snoozed_until: datetime | None = None
    assigned_to: str | None = None
    changed_at: datetime | None = None
    changed_by: str = ""
    tags: tuple[str, ...] = ()
    """Its tags, in the order they were added (`get` reads them; a listing does not)."""


@dataclass(frozen=True, slots=True)
class ConversationRow:
    """A conversation as a listing shows it: its state and this reader's unread replies."""

    kept: ConversationState
    replies: int
    last_reply_id: int
    last_received: datetime | None
    """None: the newest reply's time cannot be read (a damaged row: listed, not dropped)."""
    unread: int


def check_number(number: str) -> str:
    """The conversation's key: international digits, without `+`."""
    bare = number.strip().lstrip("+")
    if not NUMBER.fullmatch(bare):
        raise ConversationError(f"{number[:40]!r} is not a customer's number (digits only).")
    return bare


def reads_as(state: str, until: datetime | None, now: datetime) -> str:
    """A snoozed conversation whose time has come reads as open."""
    if state == SNOOZED and (until is None or until <= now):
        return OPEN
    return state


def _kept(row: Any, now: datetime) -> ConversationState:
    until = _moment(row[2])
    return ConversationState(
        str(row[0]),
        reads_as(str(row[1]), until, now),
        until if row[1] == SNOOZED and until is not None and until > now else None,
        row[3],
        _moment(row[4]),
        str(row[5]),
    )


def _moment(value: object) -> datetime | None:
    """A kept time, or None when there is none or it cannot be read (a row another tool
    wrote: the conversation is still listed, never an error)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def reopen_for_replies(session: Session, first_id: int, last_id: int) -> None:
    """The replies `first_id`..`last_id` (one transaction's, on a file) re-open their
    conversations that are not open, each change audited as the customer's. A team's
    server does this itself (a trigger on `replies`)."""
    if session.audited_by_server or last_id < first_id:
        return
    reopened = session.execute(
        "UPDATE conversations SET state = ?, snoozed_until = NULL, changed_at = ?, "
        "changed_by = ? WHERE state <> ? AND number IN (SELECT ltrim(from_number, '+') "
        "FROM replies WHERE id BETWEEN ? AND ?) RETURNING number",
        (OPEN, now_iso(), THE_CUSTOMER, OPEN, first_id, last_id),
    ).fetchall()
    for (number,) in reopened:
        write_audit(session, THE_CUSTOMER, "", "conversation reopened", number, "a new reply")


@store_methods
class ConversationStore:
    """The conversations of a profile's file or a team's server; safe from any thread.

    `operator`: who works here (the name an assignment to "me" gives, and, on a file,
    whose read marks these are); `console`: this opening, for the audit."""

    def __init__(self, database: Database, *, operator: str = "", console: str = "") -> None:
        self.database = database
        self.operator = operator_name(operator)
        self.console = console
        self._reader: str | None = None

    # ---- reading -----------------------------------------------------------------------

    def reader(self) -> str:
        """Whose read marks these are: the operator's name on a file; on a server, the
        login (the server's row-level security keeps each login to its own)."""
        if self._reader is None:
            if self.database.kind == "postgresql":
                with self.database.session() as session:
                    self._reader = str(session.execute("SELECT session_user").fetchone()[0])
            else:
                self._reader = self.operator
        return self._reader

    def get(self, number: str, *, now: datetime | None = None) -> ConversationState:
        number = check_number(number)
        with self.database.session() as session, session.snapshot():
            row = session.execute(
                f"SELECT {_STATE_COLUMNS} FROM conversations WHERE number = ?",  # noqa: S608
                (number,),
            ).fetchone()
            tags = tuple(
                str(tag)
                for (tag,) in session.execute(
                    "SELECT tag FROM conversation_tags WHERE number = ? ORDER BY added_at, tag",
                    (number,),
                ).fetchall()
            )
        kept = ConversationState(number) if row is None else _kept(row, now or datetime.now(UTC))
        return dataclasses.replace(kept, tags=tags) if tags else kept

    def listing(self, *, now: datetime | None = None, limit: int = LISTED) -> list[ConversationRow]:
        """Every number that replied (the latest reply first), with its state and this
        reader's unread replies, read at one moment."""
        now = now or datetime.now(UTC)
        reader = self.reader()
        with self.database.session() as session, session.snapshot():
            everyone = self._all_read(session, reader)
            rows = session.execute(_LISTING, (everyone, reader, limit)).fetchall()
            kept = {
                str(row[0]): _kept(row, now)
                for row in session.execute(
                    f"SELECT {_STATE_COLUMNS} FROM conversations"  # noqa: S608
                ).fetchall()
            }
        return [
            ConversationRow(
                kept.get(str(row[0]), ConversationState(str(row[0]))),
                int(row[1]),
                int(row[2]),
                _moment(row[3]),
                int(row[4] or 0),
            )
            for row in rows
        ]

    def unread(self) -> tuple[int, int]:
        """This reader's unread conversations and replies."""
        reader = self.reader()
        with self.database.session() as session, session.snapshot():
            row = session.execute(_UNREAD, (reader, self._all_read(session, reader))).fetchone()
        return (int(row[0]), int(row[1]))

    @staticmethod
    def _all_read(session: Session, reader: str) -> int:
        row = session.execute(
            "SELECT up_to FROM conversation_reads WHERE reader = ? AND number = ?",
            (reader, ALL_READ),
        ).fetchone()
        return 0 if row is None else int(row[0])

    def operators(self) -> list[str]:
        """The operators a conversation can be assigned to, by the record's names, sorted:
        on a team's server its current operators (not its receivers), else those the
        conversations have named (assigned to, changed by) and this one."""
        with self.database.session() as session:
            if self.database.kind == "postgresql":
                rows = session.execute(
                    "SELECT display FROM operators WHERE kind <> 'receiver' AND removed_at IS NULL"
                ).fetchall()
                if rows:
                    return sorted({str(row[0]) for row in rows}, key=str.casefold)
            rows = session.execute(
                "SELECT assigned_to FROM conversations WHERE assigned_to IS NOT NULL "
                "UNION SELECT changed_by FROM conversations"
            ).fetchall()
        names = {str(row[0]) for row in rows} | {self.operator}
        names -= {"", THE_CUSTOMER}
        return sorted(names, key=str.casefold)

    # ---- read marks --------------------------------------------------------------------

    def mark_read(self, number: str, up_to: int | None = None) -> int:
        """This reader has read `number`'s replies up to `up_to` (by default its newest);
        a mark never goes back. The mark kept."""
        number = check_number(number)
        with self.database.transaction() as session:
            if up_to is None:
                row = session.execute(
                    "SELECT COALESCE(MAX(id), 0) FROM replies WHERE from_number IN (?, ?)",
                    (number, f"+{number}"),
                ).fetchone()
                up_to = int(row[0])
            session.execute(_MARK, (self.reader(), number, max(up_to, 0)))
        return up_to

    def mark_all_read(self) -> int:
        """Every reply stored now is read, for this reader. The mark kept."""
        with self.database.transaction() as session:
            up_to = int(session.execute("SELECT COALESCE(MAX(id), 0) FROM replies").fetchone()[0])
            session.execute(_MARK, (self.reader(), ALL_READ, up_to))
        return up_to

    # ---- changes -----------------------------------------------------------------------

    def set_state(
        self, number: str, state: str, *, until: datetime | None = None
    ) -> ConversationState:
        """Open, waiting, done, or snoozed `until` a time to come; audited."""
        number = check_number(number)
        if state not in STATES:
            raise ConversationError(f"{state[:40]!r} is not a conversation's state.")
        if state == SNOOZED:
            if until is None or until.tzinfo is None or until <= datetime.now(UTC):
                raise ConversationError("A conversation is snoozed until a time to come.")
            until_text: str | None = until.astimezone(UTC).isoformat()
        else:
            until_text = None
        with self.database.transaction() as session:
            self._state_in(session, number, state, until_text)
        return self.get(number)

    def _state_in(self, session: Session, number: str, state: str, until: str | None) -> None:
        if session.audited_by_server:
            session.execute(
                "SELECT gwdesk_conversation(?, ?, ?, NULL, false)", (number, state, until)
            )
        else:
            self._change_on_file(session, number, state, until, None, assign=False)

    def assign(self, number: str, operator: str | None) -> ConversationState:
        """Assign `number` to `operator` (by the name the record gives them), or to nobody
        (None); audited. A team's server takes only a current operator's name."""
        number = check_number(number)
        name = operator_name(operator) if operator is not None else None
        if operator is not None and not name:
            raise ConversationError("Name the operator to assign the conversation to.")
        with self.database.transaction() as session:
            self._assign_in(session, number, name)
        return self.get(number)

    def _assign_in(self, session: Session, number: str, name: str | None) -> None:
        if session.audited_by_server:
            session.execute("SELECT gwdesk_conversation(?, NULL, NULL, ?, true)", (number, name))
        else:
            self._change_on_file(session, number, None, None, name, assign=True)

    def tag(self, number: str, tag: str) -> list[str]:
        """Tag `number`'s conversation (a word or two, kept once); audited. Its tags."""
        number = check_number(number)
        with self.database.transaction() as session:
            self._tag_in(session, number, tag)
        return self.tags([number]).get(number, [])

    def _tag_in(self, session: Session, number: str, tag: str) -> None:
        cleaned = " ".join(tag.split())[:40]
        if not cleaned or any(ord(ch) < 32 or ord(ch) == 127 for ch in tag):
            raise ConversationError("A tag is a word or two of plain text.")
        if session.audited_by_server:
            session.execute("SELECT gwdesk_conversation_tag(?, ?)", (number, cleaned))
            return
        added = session.execute(
            "INSERT INTO conversation_tags(number, tag, added_by, added_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT(number, tag) DO NOTHING",
            (number, cleaned, self.operator, now_iso()),
        ).rowcount
        if added:
            write_audit(
                session, self.operator, self.console, "conversation tagged", number, cleaned
            )

    def apply(self, changes: Sequence[tuple[str, str, str]]) -> None:
        """Several changes in one transaction (keyword rules on a group of replies):
        each `(number, what, value)`, `what` one of `assign`, `state` (open, waiting or
        done) and `tag`; audited each. One refused refuses them all (the caller then
        makes them one at a time)."""
        with self.database.transaction() as session:
            for number, what, value in changes:
                key = check_number(number)
                if what == "assign":
                    self._assign_in(session, key, operator_name(value) or None)
                elif what == "state" and value in (OPEN, WAITING, DONE):
                    self._state_in(session, key, value, None)
                elif what == "tag":
                    self._tag_in(session, key, value)
                else:
                    raise ConversationError(f"{what[:20]!r} {value[:40]!r} is not a change.")

    def tags(self, numbers: list[str]) -> dict[str, list[str]]:
        """The tags of each of `numbers` that has any, in the order they were added."""
        if not numbers:
            return {}
        marks = ", ".join("?" for _ in numbers)
        with self.database.session() as session:
            rows = session.execute(
                f"SELECT number, tag FROM conversation_tags WHERE number IN ({marks}) "  # noqa: S608
                "ORDER BY added_at, tag",
                [check_number(number) for number in numbers],
            ).fetchall()
        found: dict[str, list[str]] = {}
        for number, tag in rows:
            found.setdefault(str(number), []).append(str(tag))
        return found

    def _change_on_file(
        self,
        session: Session,
        number: str,
        state: str | None,
        until: str | None,
        assignee: str | None,
        *,
        assign: bool,
    ) -> None:
        """The file's copy of `gwdesk_conversation`: the row changed, stamped, audited."""
        stamp = now_iso()
        session.execute(
            "INSERT INTO conversations(number, state, changed_at, changed_by) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(number) DO NOTHING",
            (number, OPEN, stamp, self.operator),
        )
        old = session.execute(
            "SELECT state, snoozed_until, assigned_to FROM conversations WHERE number = ?",
            (number,),
        ).fetchone()
        if assign:
            if old[2] == assignee:
                return
            session.execute(
                "UPDATE conversations SET assigned_to = ?, changed_at = ?, changed_by = ? "
                "WHERE number = ?",
                (assignee, stamp, self.operator, number),
            )
            action, detail = (
                ("conversation assigned", assignee)
                if assignee
                else ("conversation unassigned", old[2] or "")
            )
        else:
            if old[0] == state and old[1] == until:
                return
            session.execute(
                "UPDATE conversations SET state = ?, snoozed_until = ?, changed_at = ?, "
                "changed_by = ? WHERE number = ?",
                (state, until, stamp, self.operator, number),
            )
            action = "conversation reopened" if state == OPEN else f"conversation {state}"
            detail = until or f"was {old[0]}"
        write_audit(session, self.operator, self.console, action, number, detail)
