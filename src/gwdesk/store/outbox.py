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
short transaction guarded by the state it starts from; none is held across an
await (callers run these methods on a worker thread). The file is the profile's
store (WAL); this class opens its own connection with `synchronous=FULL`, so an
entry marked in flight stays marked even through a power cut, and a `threading.Lock`
so one instance can be used from several threads.

A batch is "claimed" by the outbox instance sending or reconciling it (see
`outbox_claims`): another gwdesk process leaves it alone while that one lives.
Rows that cannot be read (edited or damaged files) come back with `damaged` set and
are never sent (`outbox_rows` holds the values and their decoding).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from gwdesk.store.database import StoreError, connect, store_methods, transaction
from gwdesk.store.outbox_claims import OwnerLocks
from gwdesk.store.outbox_rows import (
    BATCH_SELECT,
    COUNT_SELECT,
    ENTRY_SELECT,
    OPEN_STATES,
    SMS,
    EntryState,
    NewEntry,
    OutboxBatch,
    OutboxEntry,
    StateCount,
    batch_from_row,
    entry_from_row,
    state_of,
)

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


class OutboxError(StoreError):
    """The outbox refused a change; the message says why (nothing was sent)."""


class OutboxBusy(OutboxError):
    """Another running gwdesk (or another window of this one) is sending the batch."""


class TransitionError(OutboxError):
    """An entry was not in a state the change may start from (it moved meanwhile)."""

    def __init__(self, entry_id: int, wanted: EntryState, found: str | None) -> None:
        where = f"it is {found}" if found is not None else "it does not exist"
        super().__init__(f"Outbox entry {entry_id} cannot become {wanted.value}: {where}.")
        self.entry_id = entry_id
        self.found = found


def now_us() -> int:
    return time.time_ns() // 1000


@store_methods
class OutboxStore:
    """The outbox of one profile's store file."""

    def __init__(self, path: Path | str, *, clock: Callable[[], int] = now_us) -> None:
        self.path = path
        self._clock = clock
        self._lock = threading.Lock()
        self.conn = connect(path)
        self.conn.execute("PRAGMA synchronous=FULL")
        self.conn.execute("PRAGMA foreign_keys=ON")
        self.token = uuid.uuid4().hex
        folder = None if str(path) == ":memory:" else Path(f"{path}.owners")
        self._owners = OwnerLocks(folder, self.token) if folder is not None else None
        self._active: set[int] = set()
        """Batches this instance is sending or reconciling now."""

    def __repr__(self) -> str:
        return f"OutboxStore({str(self.path)!r})"

    def close(self) -> None:
        with self._lock:
            self._active.clear()
            self.conn.close()
            if self._owners is not None:
                self._owners.release()

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
    ) -> tuple[OutboxBatch, list[OutboxEntry]]:
        """Record a batch and all its entries (pending) in one transaction."""
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
                    json.dumps(dict(entry.body), ensure_ascii=False, default=str),
                    now,
                    now,
                )
            )
        with self._lock, transaction(self.conn):
            try:
                cursor = self.conn.execute(
                    "INSERT INTO outbox_batches(send_id, gateway, channel, label, baseline, "
                    "excluded, created_us, updated_us) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        send_id, gateway, channel, label[:MAX_LABEL],
                        json.dumps(sorted(baseline)), json.dumps(list(excluded)), now, now,
                    ),
                )  # fmt: skip
                batch_id = int(cursor.lastrowid or 0)
                self.conn.executemany(
                    "INSERT INTO outbox_entries(batch_id, seq, external_system_id, own_id, "
                    "recipients, recipient_count, body, created_us, updated_us) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(batch_id, *row) for row in rows],
                )
            except sqlite3.IntegrityError as exc:
                raise OutboxError(_integrity_message(exc)) from None
        batch = self.batch(batch_id)
        assert batch is not None
        return (batch, self.entries(batch_id))

    # ---- transitions -------------------------------------------------------------------

    def begin(self, entry_id: int) -> tuple[bool, OutboxEntry]:
        """Mark an entry in flight just before its request leaves.

        (True, entry) when it was pending; (False, entry as it is) otherwise, and then
        the request must not be made.
        """
        now = self._clock()
        with self._lock:
            changed = self.conn.execute(
                "UPDATE outbox_entries SET state = 'in_flight', attempts = attempts + 1, "
                "sent_us = ?, updated_us = ?, reason = '' WHERE id = ? AND state = 'pending'",
                (now, now, entry_id),
            ).rowcount
            if changed:
                self._touch(entry_id, now)
        entry = self.entry(entry_id)
        if entry is None:
            raise TransitionError(entry_id, EntryState.IN_FLIGHT, None)
        return (bool(changed), entry)

    def lodged(
        self,
        entry_id: int,
        *,
        message_id: str | None = None,
        batch_code: str | None = None,
        found: int = 0,
        reason: str = "",
    ) -> OutboxEntry:
        return self._move(
            entry_id,
            EntryState.LODGED,
            "message_id = ?, batch_code = ?, found = ?, reason = ?, error_kind = NULL",
            (message_id, batch_code, found, reason),
        )

    def failed(
        self, entry_id: int, *, reason: str, error_kind: str | None = None, retryable: bool = False
    ) -> OutboxEntry:
        return self._move(
            entry_id,
            EntryState.FAILED,
            "reason = ?, error_kind = ?, retryable = ?",
            (reason, error_kind, int(retryable)),
        )

    def unknown(self, entry_id: int, *, reason: str) -> OutboxEntry:
        return self._move(entry_id, EntryState.UNKNOWN, "reason = ?", (reason,))

    def requeue(
        self, entry_id: int, *, reason: str = "", body: Mapping[str, Any] | None = None
    ) -> OutboxEntry:
        """Back to pending: proved not lodged, or a failure to be sent again."""
        if body is None:
            return self._move(entry_id, EntryState.PENDING, "reason = ?", (reason,))
        text = json.dumps(dict(body), ensure_ascii=False, default=str)
        return self._move(entry_id, EntryState.PENDING, "reason = ?, body = ?", (reason, text))

    def set_body(self, entry_id: int, body: Mapping[str, Any]) -> bool:
        """Replace what a pending entry will send (the operator edited the message)."""
        text = json.dumps(dict(body), ensure_ascii=False, default=str)
        with self._lock:
            return bool(
                self.conn.execute(
                    "UPDATE outbox_entries SET body = ?, updated_us = ? "
                    "WHERE id = ? AND state = 'pending'",
                    (text, self._clock(), entry_id),
                ).rowcount
            )

    def reopen(self, entry_ids: Sequence[int], body: Mapping[str, Any] | None) -> list[int]:
        """Make failed or pending entries ready to send with `body` ("Send remaining" with
        the message as it is now; None: each with its own, as a personal send's entries
        are); the ids that are now pending, waiting their turn (why they were not sent
        before no longer holds). Entries in flight, unknown or lodged are left as they are."""
        text = None if body is None else json.dumps(dict(body), ensure_ascii=False, default=str)
        now = self._clock()
        opened = []
        with self._lock, transaction(self.conn):
            for entry_id in entry_ids:
                if self.conn.execute(
                    "UPDATE outbox_entries SET state = 'pending', body = COALESCE(?, body), "
                    "reason = '', updated_us = ? "
                    "WHERE id = ? AND state IN ('pending', 'failed')",
                    (text, now, entry_id),
                ).rowcount:
                    opened.append(entry_id)
            if opened:
                self._touch(opened[0], now)
        return opened

    def give_up(self, entry_id: int, reason: str) -> OutboxEntry:
        """Failed for good, whatever state it claims (but lodged): a damaged row, or a Lodge
        request that cannot be sent again from the outbox. The entry as it now is."""
        now = self._clock()
        with self._lock:
            self.conn.execute(
                "UPDATE outbox_entries SET state = 'failed', reason = ?, retryable = 0, "
                "updated_us = ? WHERE id = ? AND state IS NOT 'lodged'",
                (reason, now, entry_id),
            )
            self._touch(entry_id, now)
        return self._read(entry_id, EntryState.FAILED)

    def exclude(self, entry_id: int, numbers: Collection[str], reason: str) -> OutboxEntry:
        """Leave `numbers` out of a pending entry before it is sent (they opted out since
        it was recorded); an entry left with nobody fails for good. The entry as it now is."""
        now = self._clock()
        with self._lock, transaction(self.conn):
            row = self.conn.execute(
                "SELECT recipients, batch_id FROM outbox_entries WHERE id = ? AND state = 'pending'",
                (entry_id,),
            ).fetchone()
            if row is None:
                raise TransitionError(entry_id, EntryState.PENDING, None)
            recipients = [n for n in json.loads(row["recipients"]) if n not in numbers]
            left_out = [n for n in json.loads(row["recipients"]) if n in numbers]
            if recipients:
                self.conn.execute(
                    "UPDATE outbox_entries SET recipients = ?, recipient_count = ?, reason = ?, "
                    "updated_us = ? WHERE id = ?",
                    (json.dumps(recipients), len(recipients), reason, now, entry_id),
                )
            else:
                self.conn.execute(
                    "UPDATE outbox_entries SET state = 'failed', retryable = 0, reason = ?, "
                    "updated_us = ? WHERE id = ?",
                    (reason, now, entry_id),
                )
            batch = self.conn.execute(
                "SELECT excluded FROM outbox_batches WHERE id = ?", (row["batch_id"],)
            ).fetchone()
            known = json.loads(batch["excluded"] or "[]") if batch is not None else []
            known.extend(n for n in left_out if n not in known)
            self.conn.execute(
                "UPDATE outbox_batches SET excluded = ? WHERE id = ?",
                (json.dumps(known), row["batch_id"]),
            )
            self._touch(entry_id, now)
        return self._read(entry_id, EntryState.PENDING)

    def note(self, entry_ids: Sequence[int], reason: str) -> None:
        """Say why pending entries were not sent (a run was cancelled or halted)."""
        now = self._clock()
        with self._lock, transaction(self.conn):
            self.conn.executemany(
                "UPDATE outbox_entries SET reason = ?, updated_us = ? "
                "WHERE id = ? AND state = 'pending'",
                [(reason, now, entry_id) for entry_id in entry_ids],
            )

    def discard(self, batch_id: int, reason: str = "discarded by the operator") -> int:
        """Give up on what a batch has left: its open and failed entries become failed,
        not retryable, and the batch closes. The caller holds its claim."""
        now = self._clock()
        with self._lock, transaction(self.conn):
            count = self.conn.execute(
                "UPDATE outbox_entries SET state = 'failed', retryable = 0, reason = ?, "
                "updated_us = ? WHERE batch_id = ? AND state <> 'lodged' "
                "AND NOT (state = 'failed' AND retryable = 0)",
                (reason, now, batch_id),
            ).rowcount
            self.conn.execute(
                "UPDATE outbox_batches SET closed = 1, updated_us = ? WHERE id = ?",
                (now, batch_id),
            )
        return int(count)

    def _move(
        self, entry_id: int, state: EntryState, assignments: str, values: tuple[Any, ...]
    ) -> OutboxEntry:
        """Move an entry to `state` from one of its `SOURCES`; the entry as it now is."""
        sources = SOURCES[state]
        marks = ", ".join("?" for _ in sources)
        now = self._clock()
        with self._lock:
            changed = self.conn.execute(
                f"UPDATE outbox_entries SET state = ?, {assignments}, updated_us = ? "  # noqa: S608 - fixed text
                f"WHERE id = ? AND state IN ({marks})",
                (state.value, *values, now, entry_id, *(s.value for s in sources)),
            ).rowcount
            if not changed:
                row = self.conn.execute(
                    "SELECT state FROM outbox_entries WHERE id = ?", (entry_id,)
                ).fetchone()
                raise TransitionError(entry_id, state, None if row is None else str(row[0]))
            self._touch(entry_id, now)
        return self._read(entry_id, state)

    def _read(self, entry_id: int, state: EntryState) -> OutboxEntry:
        entry = self.entry(entry_id)
        if entry is None:
            raise TransitionError(entry_id, state, None)
        return entry

    def _touch(self, entry_id: int, now: int) -> None:
        """Keep the batch's time and `closed` flag current (under the lock)."""
        self.conn.execute(
            "UPDATE outbox_batches SET updated_us = ?, closed = NOT EXISTS ("
            "SELECT 1 FROM outbox_entries e WHERE e.batch_id = outbox_batches.id AND "
            "(e.state IN ('pending', 'in_flight', 'unknown') OR (e.state = 'failed' "
            "AND e.retryable = 1))) WHERE id = (SELECT batch_id FROM outbox_entries WHERE id = ?)",
            (now, entry_id),
        )

    # ---- claims ------------------------------------------------------------------------

    def claim(self, batch_id: int) -> None:
        """Take a batch for sending or reconciling; `OutboxBusy` when someone alive has it."""
        with self._lock:
            if batch_id in self._active:
                raise OutboxBusy(f"Outbox batch {batch_id} is already being sent in this window.")
            if self._owners is not None:
                try:
                    self._owners.hold()
                except OSError as exc:
                    raise OutboxError(f"The outbox cannot be locked: {exc}.") from None
            with transaction(self.conn):
                row = self.conn.execute(
                    "SELECT owner FROM outbox_batches WHERE id = ?", (batch_id,)
                ).fetchone()
                if row is None:
                    raise OutboxError(f"There is no outbox batch {batch_id}.")
                owner = row[0]
                if (
                    isinstance(owner, str)
                    and owner != self.token
                    and self._owners is not None
                    and self._owners.alive(owner)
                ):
                    raise OutboxBusy(
                        f"Outbox batch {batch_id} is being sent by another running gwdesk; "
                        "try again when it has finished."
                    )
                self.conn.execute(
                    "UPDATE outbox_batches SET owner = ? WHERE id = ?", (self.token, batch_id)
                )
            self._active.add(batch_id)

    def release(self, batch_id: int) -> None:
        """Let go of a batch. Never raises: a store closed meanwhile (the profile switched)
        has already let go, as its lock file went with it."""
        with self._lock:
            self._active.discard(batch_id)
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute(
                    "UPDATE outbox_batches SET owner = NULL WHERE id = ? AND owner = ?",
                    (batch_id, self.token),
                )

    def busy(self, batch_id: int) -> bool:
        """Whether this instance is working on the batch now."""
        with self._lock:
            return batch_id in self._active

    # ---- reading -----------------------------------------------------------------------

    def batch(self, batch_id: int) -> OutboxBatch | None:
        found = self._batches("WHERE id = ?", (batch_id,))
        return found[0] if found else None

    def batches(
        self, *, gateway: str | None = None, open_only: bool = True, limit: int = 500
    ) -> list[OutboxBatch]:
        """Newest first: the open ones (something left to do), or all with `open_only=False`."""
        clauses, values = [], []
        if open_only:
            clauses.append("closed = 0")
        if gateway is not None:
            clauses.append("gateway = ?")
            values.append(gateway)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        return self._batches(f"{where} ORDER BY id DESC LIMIT ?", (*values, limit))

    def _batches(self, tail: str, values: tuple[Any, ...]) -> list[OutboxBatch]:
        with self._lock:
            rows = self.conn.execute(BATCH_SELECT + tail, values).fetchall()
            ids = [int(r["id"]) for r in rows]
            counts: dict[int, dict[EntryState, StateCount]] = {i: {} for i in ids}
            for start in range(0, len(ids), 500):
                part = ids[start : start + 500]
                marks = ", ".join("?" for _ in part)
                query = f"{COUNT_SELECT} WHERE batch_id IN ({marks}) GROUP BY batch_id, state"
                for row in self.conn.execute(query, part):
                    state = state_of(row[1])
                    if state is None:
                        state = EntryState.UNKNOWN
                    old = counts[int(row[0])].get(state, StateCount())
                    counts[int(row[0])][state] = StateCount(
                        old.entries + int(row[2]), old.recipients + int(row[3])
                    )
        return [batch_from_row(row, counts[int(row["id"])]) for row in rows]

    def entry(self, entry_id: int) -> OutboxEntry | None:
        found = self._entries("e.id = ?", (entry_id,))
        return found[0] if found else None

    def entries(
        self, batch_id: int, states: Collection[EntryState] | None = None
    ) -> list[OutboxEntry]:
        """A batch's entries in order (only those in `states` when given)."""
        if states is None:
            return self._entries("e.batch_id = ?", (batch_id,))
        marks = ", ".join("?" for _ in states)
        return self._entries(
            f"e.batch_id = ? AND e.state IN ({marks})", (batch_id, *(s.value for s in states))
        )

    def unsettled(self, batch_id: int) -> list[OutboxEntry]:
        """Entries whose outcome must be learnt before anything is resent: in flight (the
        sender stopped) or unknown, and any whose state cannot be read."""
        return self._entries(
            "e.batch_id = ? AND e.state NOT IN ('pending', 'lodged', 'failed')", (batch_id,)
        )

    def _entries(self, where: str, values: tuple[Any, ...]) -> list[OutboxEntry]:
        with self._lock:
            query = f"{ENTRY_SELECT} WHERE {where} ORDER BY e.batch_id, e.seq"
            rows = self.conn.execute(query, values).fetchall()
        return [entry_from_row(row) for row in rows]


def _integrity_message(exc: sqlite3.IntegrityError) -> str:
    text = str(exc)
    if "external_system_id" in text:
        return (
            "An ExternalSystemId of this send is already in the outbox, so its outcome could "
            "not be told apart from the earlier send's; nothing was sent."
        )
    if "send_id" in text:
        return "This send is already in the outbox; nothing was sent again."
    return f"The outbox refused the send ({text}); nothing was sent."
