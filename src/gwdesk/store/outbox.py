"""The durable outbox: every send recorded before its request leaves, and what became of it.

A batch (one per send: a single message, a batch of 100,000, an MMS, a fax) groups
its entries, one per request: at most 100 recipients of a REST send with their own
ExternalSystemId, or one Lodge request. Each entry moves through

    pending -> in_flight -> lodged (MessageId / BatchCode)
                         -> failed (the reason; `retryable` when trying again can work)
                         -> unknown (the answer was lost and could not be settled)

and back to pending only when a status query proved it was not lodged (or a
failure is sent again). `lodged` is final: no transition leaves it, so nothing can
send a lodged request twice, whatever the caller believes. Every transition is one
short transaction guarded by the state it starts from (an `UPDATE ... WHERE state
IN (...)`, which two consoles racing for one entry cannot both pass), or one
savepoint of a group's transaction (`apply`: the runner's lanes' changes of a moment,
one commit for them all); none is held across an await (callers run these methods on
a worker thread).

The outbox is shared data (`gwdesk.store.shared`): a profile's file (WAL, opened
with `synchronous=FULL`, so an entry marked in flight stays marked even through a
power cut), or a team's PostgreSQL server, where a batch one console was sending
when it died can be resumed from another, still exactly once. The SQL is written
once for both; what differs is how a batch is claimed:

- A batch is "claimed" by the outbox instance sending or reconciling it; another
  leaves it alone while that one lives. In a file, a claim is the batch's `owner`
  (this instance's token) plus an OS lock file the process holds while it lives
  (`outbox_claims`). On a server, it is an advisory lock held by a connection this
  instance keeps for its life (`outbox_advisory`); `owner` still names the token,
  for display, and is shown only while the lock is held.
- A server can lose the claim's connection (restarted, the network cut) and with it
  the claim, without telling the holder, while another console may take the batch
  over. So on a server `begin` (pending -> in flight, the step before a request
  leaves) checks in its own transaction that the claim is still held by this
  instance's connection (`pg_locks`), and refuses with `OutboxBusy` when it is not:
  nothing more is sent from the batch until it is resumed (claimed again, which
  settles what was in flight first). An entry of a batch this instance did not claim
  begins only while no other console holds it. The other transitions record what
  already happened (an answer received) and are never refused for a lost claim.

Rows that cannot be read (edited or damaged files) come back with `damaged` set and
are never sent (`outbox_rows` holds the values and their decoding).
"""

from __future__ import annotations

import functools
import json
import threading
import time
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from gwdesk.store.background_writer import apply_all, as_store_error
from gwdesk.store.database import store_methods
from gwdesk.store.engine import Database, Session, SqliteDatabase
from gwdesk.store.outbox_claims import OutboxClaims, OwnerLocks
from gwdesk.store.outbox_holds import OutboxHolds
from gwdesk.store.outbox_reads import entry_in
from gwdesk.store.outbox_rows import (
    OPEN_STATES,
    SMS,
    EntryState,
    NewEntry,
    OutboxBatch,
    OutboxBusy,
    OutboxEntry,
    OutboxError,
    StateCount,
    TransitionError,
    body_json,
)
from gwdesk.store.shared import FileData, SharedData, database_for, server_of

if TYPE_CHECKING:
    import sqlite3

    from gwdesk.store.outbox_advisory import AdvisoryClaims

__all__ = [
    "OPEN_STATES",
    "SMS",
    "EntryState",
    "NewEntry",
    "OutboxBatch",
    "OutboxBusy",
    "OutboxEntry",
    "OutboxError",
    "OutboxStore",
    "StateCount",
    "Step",
    "TransitionError",
]

#: To each state, the states an entry may reach it from.
SOURCES: Final[Mapping[EntryState, tuple[EntryState, ...]]] = {
    EntryState.IN_FLIGHT: (EntryState.PENDING,),
    EntryState.LODGED: (EntryState.IN_FLIGHT, EntryState.UNKNOWN),
    EntryState.UNKNOWN: (EntryState.IN_FLIGHT, EntryState.UNKNOWN),
    EntryState.FAILED: (
        EntryState.PENDING,
        EntryState.IN_FLIGHT,
        EntryState.UNKNOWN,
        EntryState.FAILED,
    ),
    EntryState.PENDING: (EntryState.IN_FLIGHT, EntryState.UNKNOWN, EntryState.FAILED),
}
MAX_LABEL: Final = 80
MAX_OPERATOR: Final = 200
BEGIN: Final = (
    "UPDATE outbox_entries SET state = 'in_flight', attempts = attempts + 1, sent_us = ?, "
    "updated_us = ?, reason = '' WHERE id = ? AND state = 'pending'"
)
OPEN_ENTRY: Final = (
    "e.batch_id = outbox_batches.id AND (e.state IN ('pending', 'in_flight', 'unknown') "
    "OR (e.state = 'failed' AND e.retryable = 1))"
)


def now_us() -> int:
    return time.time_ns() // 1000


@store_methods
class OutboxStore(OutboxHolds, OutboxClaims):
    """The outbox of a profile's store file, or of a team's server: recording and the
    transitions here, claims and reading in the classes below it (`OutboxClaims`,
    `OutboxReads`).

    `data`: a profile's path, its `SharedData`, or a `Database` already open on it;
    `operator` is recorded with each batch (who sent it)."""

    def __init__(
        self,
        data: Path | str | SharedData | Database,
        *,
        clock: Callable[[], int] = now_us,
        operator: str = "",
    ) -> None:
        self._clock = clock
        self.operator = operator[:MAX_OPERATOR]
        self._lock = threading.Lock()
        self.database, self._owned = database_for(data, durable=True)
        self.kind = self.database.kind
        self.path: Path | str = (
            data.path
            if isinstance(data, FileData)
            else data
            if isinstance(data, Path | str)
            else self.database.location
        )
        if self._owned and isinstance(self.database, SqliteDatabase):
            self.database.conn.execute("PRAGMA foreign_keys=ON")
        self.token = uuid.uuid4().hex
        self._owners: OwnerLocks | None = None
        self._server: AdvisoryClaims | None = None
        if self.kind == "sqlite":
            folder = None if str(self.path) in ("", ":memory:") else Path(f"{self.path}.owners")
            self._owners = OwnerLocks(folder, self.token) if folder is not None else None
        else:
            from gwdesk.store.outbox_advisory import AdvisoryClaims
            from gwdesk.store.postgres import PostgresDatabase

            server = server_of(data)
            if not isinstance(server, PostgresDatabase):
                raise OutboxError(f"The outbox cannot claim batches on {self.database.location}.")
            self._server = AdvisoryClaims(server)
        self._active: set[int] = set()
        """Batches this instance is sending or reconciling now."""

    def __repr__(self) -> str:
        return f"OutboxStore({str(self.path)!r})"

    @property
    def conn(self) -> sqlite3.Connection:
        """The profile file's connection (a team's server has none: `AttributeError`)."""
        if not isinstance(self.database, SqliteDatabase):
            raise AttributeError("a team's outbox has no file connection")
        return self.database.conn

    def close(self) -> None:
        with self._lock:
            self._active.clear()
            if self._server is not None:
                self._server.close()
            if self._owners is not None:
                self._owners.release()
        if self._owned:
            self.database.close()

    # ---- recording ---------------------------------------------------------------------

    def record(
        self,
        *,
        gateway: str,
        channel: str,
        label: str,
        send_id: str,
        entries: Sequence[NewEntry],
        baseline: Iterable[str] = (),
        excluded: Sequence[str] = (),
        held_until_us: int | None = None,
        recurrence: str = "",
    ) -> tuple[OutboxBatch, list[OutboxEntry]]:
        """Record a batch and all its entries (pending) in one transaction; held until
        `held_until_us` (a scheduled send, recurring by `recurrence`: `outbox_holds`)."""
        if not entries:
            raise OutboxError("A batch needs at least one request.")
        now = self._clock()
        rows = []
        for entry in entries:
            if not entry.recipients:
                raise OutboxError(f"Request {entry.seq} has no recipient.")
            rows.append(
                (
                    entry.seq,
                    entry.external_system_id,
                    int(entry.own_id),
                    json.dumps(list(entry.recipients)),
                    len(entry.recipients),
                    body_json(entry.body),
                    now,
                    now,
                )
            )
        with self.database.transaction() as session:
            made = session.execute(
                "INSERT INTO outbox_batches(send_id, gateway, channel, label, baseline, "
                "excluded, created_us, updated_us, operator, held_until_us, recurrence) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(send_id) DO NOTHING RETURNING id",
                (
                    send_id, gateway, channel, label[:MAX_LABEL], json.dumps(sorted(baseline)),
                    json.dumps(list(excluded)), now, now, self.operator, held_until_us, recurrence,
                ),
            ).fetchall()  # fmt: skip
            if not made:
                raise OutboxError("This send is already in the outbox; nothing was sent again.")
            batch_id = int(made[0][0])
            added = session.executemany(
                "INSERT INTO outbox_entries(batch_id, seq, external_system_id, own_id, "
                "recipients, recipient_count, body, created_us, updated_us) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                [(batch_id, *row) for row in rows],
            )
            if added != len(rows):
                raise OutboxError(_refusal(session, entries))
        batch = self.batch(batch_id)
        assert batch is not None
        return (batch, self.entries(batch_id))

    # ---- transitions -------------------------------------------------------------------

    def begin(self, entry_id: int) -> tuple[bool, OutboxEntry]:
        """Mark an entry in flight just before its request leaves.

        (True, entry) when it was pending; (False, entry as it is) otherwise, and then
        the request must not be made. On a team's server, `OutboxBusy` when this
        instance lost its claim on the batch, or another console holds it (see the
        module docstring): nothing changed, and nothing may be sent.
        """
        with self.database.transaction() as session:
            return self._begin(session, entry_id)

    def _begin(self, session: Session, entry_id: int) -> tuple[bool, OutboxEntry]:
        now = self._clock()
        if self._server is None:
            moved = session.execute(f"{BEGIN} RETURNING batch_id", (now, now, entry_id))
        else:
            from gwdesk.store.outbox_advisory import BEGIN_GUARD

            with self._lock:
                active, pid = sorted(self._active), self._server.pid
            moved = session.execute(
                f"{BEGIN} AND {BEGIN_GUARD} RETURNING batch_id",
                (now, now, entry_id, active, pid),
            )
        batches = moved.fetchall()
        if batches:
            session.execute(
                "UPDATE outbox_batches SET updated_us = ? WHERE id = ?",
                (now, int(batches[0][0])),
            )
        entry = entry_in(session, entry_id)
        if entry is None:
            raise TransitionError(entry_id, EntryState.IN_FLIGHT, None)
        if not batches and self._server is not None and entry.state is EntryState.PENDING:
            raise self._not_held(entry.batch_id)
        return (bool(batches), entry)

    def apply(self, steps: Sequence[Step]) -> list[tuple[Any, BaseException | None]]:
        """Several changes in one transaction (one commit: on a file, one sync to disk),
        each in a savepoint of its own, so one refused (`TransitionError`, `OutboxBusy`)
        leaves the others; each step's (result, None) or (None, error), in order. The
        file's lock busy, or the transaction failing, raises for them all (none made).
        Results as the methods of the steps' names return them."""
        with self.database.transaction() as session:
            done = apply_all(session, [functools.partial(self._step, step) for step in steps])
        return [
            (result, None if error is None else as_store_error(error)) for result, error in done
        ]

    def _step(self, step: Step, session: Session) -> Any:
        if step.name == "begin":
            excluding = step.values.get("excluding")
            if excluding:  # who opted out left out first; an entry left with nobody fails
                entry = self._exclude(session, step.entry_id, excluding, step.values["reason"])
                if entry.state is not EntryState.PENDING:
                    return (False, entry)
            return self._begin(session, step.entry_id)
        return self._moved(session, step.entry_id, *_CHANGES[step.name](**step.values))

    def lodged(
        self,
        entry_id: int,
        *,
        message_id: str | None = None,
        batch_code: str | None = None,
        found: int = 0,
        reason: str = "",
    ) -> OutboxEntry:
        return self._move(entry_id, *_lodged(message_id, batch_code, found, reason))

    def failed(
        self, entry_id: int, *, reason: str, error_kind: str | None = None, retryable: bool = False
    ) -> OutboxEntry:
        return self._move(entry_id, *_failed(reason, error_kind, retryable))

    def unknown(self, entry_id: int, *, reason: str, error_kind: str | None = None) -> OutboxEntry:
        """Its answer lost and not settled; `error_kind` marks why, kept until it is
        settled (None: the mark it had stays, such as the operator's cancel)."""
        return self._move(entry_id, *_unknown(reason, error_kind))

    def requeue(
        self, entry_id: int, *, reason: str = "", body: Mapping[str, Any] | None = None
    ) -> OutboxEntry:
        """Back to pending: proved not lodged, or a failure to be sent again."""
        if body is None:
            return self._move(entry_id, EntryState.PENDING, "reason = ?", (reason,))
        return self._move(
            entry_id, EntryState.PENDING, "reason = ?, body = ?", (reason, body_json(body))
        )

    def set_body(self, entry_id: int, body: Mapping[str, Any]) -> bool:
        """Replace what a pending entry will send (the operator edited the message)."""
        with self.database.session() as session:
            return bool(
                session.execute(
                    "UPDATE outbox_entries SET body = ?, updated_us = ? "
                    "WHERE id = ? AND state = 'pending'",
                    (body_json(body), self._clock(), entry_id),
                ).rowcount
            )

    def reopen(self, entry_ids: Sequence[int], body: Mapping[str, Any] | None) -> list[int]:
        """Make failed or pending entries ready to send with `body` ("Send remaining" with
        the message as it is now; None: each with its own, as a personal send's entries
        are); the ids that are now pending, waiting their turn (why they were not sent
        before no longer holds). Entries in flight, unknown or lodged are left as they are."""
        text = None if body is None else body_json(body)
        now = self._clock()
        opened: list[int] = []
        batches: set[int] = set()
        with self.database.transaction() as session:
            for entry_id in entry_ids:
                moved = session.execute(
                    "UPDATE outbox_entries SET state = 'pending', body = COALESCE(?, body), "
                    "reason = '', updated_us = ? "
                    "WHERE id = ? AND state IN ('pending', 'failed') RETURNING batch_id",
                    (text, now, entry_id),
                ).fetchall()
                if moved:
                    opened.append(entry_id)
                    batches.add(int(moved[0][0]))
            for batch_id in sorted(batches):
                _touch(session, batch_id, now)
        return opened

    def give_up(self, entry_id: int, reason: str) -> OutboxEntry:
        """Failed for good, whatever state it claims (but lodged): a damaged row, or a Lodge
        request that cannot be sent again from the outbox. The entry as it now is."""
        now = self._clock()
        with self.database.transaction() as session:
            moved = session.execute(
                "UPDATE outbox_entries SET state = 'failed', reason = ?, retryable = 0, "
                "updated_us = ? WHERE id = ? AND state <> 'lodged' RETURNING batch_id",
                (reason, now, entry_id),
            ).fetchall()
            if moved:
                _touch(session, int(moved[0][0]), now)
        return self._read(entry_id, EntryState.FAILED)

    def exclude(self, entry_id: int, numbers: Collection[str], reason: str) -> OutboxEntry:
        """Leave `numbers` out of a pending entry before it is sent (they opted out since
        it was recorded); an entry left with nobody fails for good. The entry as it now is."""
        with self.database.transaction() as session:
            return self._exclude(session, entry_id, numbers, reason)

    def _exclude(
        self, session: Session, entry_id: int, numbers: Collection[str], reason: str
    ) -> OutboxEntry:
        now = self._clock()
        row = session.execute(
            "SELECT recipients, batch_id FROM outbox_entries WHERE id = ? "  # noqa: S608 - fixed text
            f"AND state = 'pending'{self._for_update}",
            (entry_id,),
        ).fetchone()
        if row is None:
            raise TransitionError(entry_id, EntryState.PENDING, None)
        batch_id = int(row["batch_id"])
        recipients = [n for n in json.loads(row["recipients"]) if n not in numbers]
        left_out = [n for n in json.loads(row["recipients"]) if n in numbers]
        if recipients:
            session.execute(
                "UPDATE outbox_entries SET recipients = ?, recipient_count = ?, reason = ?, "
                "updated_us = ? WHERE id = ?",
                (json.dumps(recipients), len(recipients), reason, now, entry_id),
            )
        else:
            session.execute(
                "UPDATE outbox_entries SET state = 'failed', retryable = 0, reason = ?, "
                "updated_us = ? WHERE id = ?",
                (reason, now, entry_id),
            )
        batch = session.execute(
            f"SELECT excluded FROM outbox_batches WHERE id = ?{self._for_update}",  # noqa: S608
            (batch_id,),
        ).fetchone()
        known = json.loads(batch["excluded"] or "[]") if batch is not None else []
        known.extend(n for n in left_out if n not in known)
        session.execute(
            "UPDATE outbox_batches SET excluded = ? WHERE id = ?", (json.dumps(known), batch_id)
        )
        _touch(session, batch_id, now)
        return self._read_in(session, entry_id, EntryState.PENDING)

    @property
    def _for_update(self) -> str:
        """Lock the rows read for a change (a file's transaction holds the whole file)."""
        return " FOR UPDATE" if self.kind == "postgresql" else ""

    def note(self, entry_ids: Sequence[int], reason: str) -> None:
        """Say why pending entries were not sent (a run was cancelled or halted)."""
        now = self._clock()
        with self.database.transaction() as session:
            session.executemany(
                "UPDATE outbox_entries SET reason = ?, updated_us = ? "
                "WHERE id = ? AND state = 'pending'",
                [(reason, now, entry_id) for entry_id in entry_ids],
            )

    def discard(self, batch_id: int, reason: str = "discarded by the operator") -> int:
        """Give up on what a batch has left: its open and failed entries become failed,
        not retryable, and the batch closes. The caller holds its claim."""
        now = self._clock()
        with self.database.transaction() as session:
            count = session.execute(
                "UPDATE outbox_entries SET state = 'failed', retryable = 0, reason = ?, "
                "updated_us = ? WHERE batch_id = ? AND state <> 'lodged' "
                "AND NOT (state = 'failed' AND retryable = 0)",
                (reason, now, batch_id),
            ).rowcount
            session.execute(
                "UPDATE outbox_batches SET closed = 1, updated_us = ? WHERE id = ?",
                (now, batch_id),
            )
        return int(count)

    def _move(
        self, entry_id: int, state: EntryState, assignments: str, values: tuple[Any, ...]
    ) -> OutboxEntry:
        """Move an entry to `state` from one of its `SOURCES`; the entry as it now is."""
        with self.database.transaction() as session:
            return self._moved(session, entry_id, state, assignments, values)

    def _moved(
        self,
        session: Session,
        entry_id: int,
        state: EntryState,
        assignments: str,
        values: tuple[Any, ...],
    ) -> OutboxEntry:
        sources = SOURCES[state]
        marks = ", ".join("?" for _ in sources)
        now = self._clock()
        moved = session.execute(
            f"UPDATE outbox_entries SET state = ?, {assignments}, updated_us = ? "  # noqa: S608 - fixed text
            f"WHERE id = ? AND state IN ({marks}) RETURNING batch_id",
            (state.value, *values, now, entry_id, *(s.value for s in sources)),
        ).fetchall()
        if not moved:
            row = session.execute(
                "SELECT state FROM outbox_entries WHERE id = ?", (entry_id,)
            ).fetchone()
            raise TransitionError(entry_id, state, None if row is None else str(row[0]))
        _touch(session, int(moved[0][0]), now)
        return self._read_in(session, entry_id, state)

    def _read(self, entry_id: int, state: EntryState) -> OutboxEntry:
        entry = self.entry(entry_id)
        if entry is None:
            raise TransitionError(entry_id, state, None)
        return entry

    def _read_in(self, session: Session, entry_id: int, state: EntryState) -> OutboxEntry:
        entry = entry_in(session, entry_id)
        if entry is None:
            raise TransitionError(entry_id, state, None)
        return entry


@dataclass(frozen=True, slots=True)
class Step:
    """One change for `OutboxStore.apply`: the name of the method that makes it alone
    (begin, lodged, failed, unknown), the entry, the method's keywords; a begin's
    `excluding` and `reason` first leave out numbers that opted out (`exclude`)."""

    name: Literal["begin", "lodged", "failed", "unknown"]
    entry_id: int
    values: Mapping[str, Any] = field(default_factory=dict)


Change = tuple[EntryState, str, tuple[Any, ...]]


def _lodged(
    message_id: str | None = None, batch_code: str | None = None, found: int = 0, reason: str = ""
) -> Change:
    return (
        EntryState.LODGED,
        "message_id = ?, batch_code = ?, found = ?, reason = ?, error_kind = NULL",
        (message_id, batch_code, found, reason),
    )


def _failed(reason: str, error_kind: str | None = None, retryable: bool = False) -> Change:
    return (
        EntryState.FAILED,
        "reason = ?, error_kind = ?, retryable = ?",
        (reason, error_kind, int(retryable)),
    )


def _unknown(reason: str, error_kind: str | None = None) -> Change:
    return (
        EntryState.UNKNOWN,
        "reason = ?, error_kind = COALESCE(?, error_kind)",
        (reason, error_kind),
    )


_CHANGES: Final[Mapping[str, Callable[..., Change]]] = {
    "lodged": _lodged,
    "failed": _failed,
    "unknown": _unknown,
}


def _touch(session: Session, batch_id: int, now: int) -> None:
    """Keep the batch's time and `closed` flag current, in the transaction of the change.

    Two statements: the first takes the batch's row lock (on a server, concurrent
    changes of one batch's entries queue here), so the second, a statement of its own,
    reads every entry as the changes committed before it left them, and the last to
    commit always sees them all."""
    session.execute("UPDATE outbox_batches SET updated_us = ? WHERE id = ?", (now, batch_id))
    session.execute(
        "UPDATE outbox_batches SET closed = CASE WHEN EXISTS ("  # noqa: S608 - fixed text
        f"SELECT 1 FROM outbox_entries e WHERE {OPEN_ENTRY}) THEN 0 ELSE 1 END WHERE id = ?",
        (batch_id,),
    )


def _refusal(session: Session, entries: Sequence[NewEntry]) -> str:
    """Why a batch's entries could not all be recorded (the transaction is rolled back)."""
    own = [e.external_system_id for e in entries if e.own_id and e.external_system_id]
    for start in range(0, len(own), 500):
        part = own[start : start + 500]
        marks = ", ".join("?" for _ in part)
        taken = session.execute(
            "SELECT 1 FROM outbox_entries WHERE own_id = 1 "  # noqa: S608 - placeholders only
            f"AND external_system_id IN ({marks}) LIMIT 1",
            part,
        ).fetchone()
        if taken is not None:
            return (
                "An ExternalSystemId of this send is already in the outbox, so its outcome "
                "could not be told apart from the earlier send's; nothing was sent."
            )
    return "The outbox refused the send (two of its requests share a place); nothing was sent."
