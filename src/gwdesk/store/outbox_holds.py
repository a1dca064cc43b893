"""Scheduled sends gwdesk holds: a recorded batch that is not sent before its time.

A batch recorded with `held_until_us` (`OutboxStore.record`) is left out of what is
resumed or settled (`batches(held=False)`) and shown as scheduled instead
(`batches(held=True)`). While it is held it can be changed (`retime`, `rewrite`) or
cancelled (`cancel`); `take` ends the hold when its time has come (or at once, to send
it now). Each of these is one transaction that first checks the hold in the row itself
(and locks the row on a team's server), so of a desk's edit, another's cancel and a
receiver's clock, exactly one wins: a send that was taken can no longer change, and a
cancelled one is never taken. Once taken, a batch is an ordinary one: its entries are
sent by the runner under its claim, exactly once, and resumed like any other if that
stops half-way.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from gwdesk.store.database import store_methods
from gwdesk.store.engine import Database, Session
from gwdesk.store.outbox_reads import OutboxReads, entries_in
from gwdesk.store.outbox_rows import (
    BATCH_SELECT,
    NewEntry,
    OutboxBatch,
    OutboxEntry,
    OutboxError,
    batch_from_row,
    body_json,
)


@dataclass(frozen=True, slots=True)
class Repeat:
    """A recurring send's next occurrence: held until `until_us`, as send `send_id`."""

    until_us: int
    send_id: str


_DUE: Final = (
    "WHERE gateway = ? AND closed = 0 AND held_until_us IS NOT NULL "
    "AND held_until_us >= ? AND held_until_us <= ? ORDER BY held_until_us, id LIMIT ?"
)
"""The held batches of a gateway due by a time, from another (`due`, `take_due`)."""
GONE = "This scheduled send is no longer waiting: it has started, or was cancelled."
STARTED = "Part of this scheduled send has been tried already; it can no longer change."


@store_methods
class OutboxHolds(OutboxReads):
    """The held batches of an outbox (see the module docstring); `OutboxStore` is one."""

    database: Database
    _clock: Callable[[], int]
    kind: str

    def next_due_us(self, gateway: str, since_us: int = 0) -> int | None:
        """The soonest time a held batch of `gateway` is due, of those due at or after
        `since_us` (None: nothing is held)."""
        with self.database.session() as session:
            row = session.execute(
                "SELECT MIN(held_until_us) FROM outbox_batches "
                "WHERE gateway = ? AND closed = 0 AND held_until_us IS NOT NULL "
                "AND held_until_us >= ?",
                (gateway, max(since_us, 0)),
            ).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def due(
        self, gateway: str, now_us: int, limit: int = 100, since_us: int = 0
    ) -> list[OutboxBatch]:
        """Held batches of `gateway` whose time has come, soonest first; only those due at
        or after `since_us` (the ones before it wait for the operator)."""
        return self._batches(_DUE, (gateway, max(since_us, 0), now_us, limit))

    def take(self, batch_id: int, now_us: int | None = None, then: Repeat | None = None) -> bool:
        """End a batch's hold so that it is sent: when its time has come by `now_us`, or
        at once (None: "send now"). False when it is not held any more (another desk or
        the receiver took it, or it was cancelled) or not yet due: then it must not be
        sent from here. `then`: a recurring send's next occurrence, recorded held in the
        same transaction (so a series neither stops nor doubles whoever takes it)."""
        with self.database.transaction() as session:
            return _take(session, batch_id, self._clock(), now_us, then)

    def take_due(
        self,
        gateway: str,
        now_us: int,
        *,
        since_us: int = 0,
        limit: int = 100,
        then: Callable[[OutboxBatch], Repeat | None] = lambda _batch: None,
    ) -> list[OutboxBatch]:
        """`take` the due batches of `gateway` (as `due` reads them) in one transaction:
        a crowd of sends falling due together costs one commit, not one each. On a
        team's server the rows another desk is taking are skipped, not waited for.
        `then` gives a recurring batch's next occurrence. The batches taken, soonest first."""
        lock = " FOR UPDATE SKIP LOCKED" if self.kind == "postgresql" else ""
        now = self._clock()
        taken = []
        with self.database.transaction() as session:
            rows = session.execute(
                f"{BATCH_SELECT}{_DUE}{lock}", (gateway, max(since_us, 0), now_us, limit)
            ).fetchall()
            for batch in (batch_from_row(row, {}) for row in rows):
                if _take(session, batch.id, now, now_us, then(batch)):
                    taken.append(batch)
        return taken

    def retime(self, batch_id: int, until_us: int) -> OutboxBatch:
        """Move a held batch to another time."""
        with self.database.transaction() as session:
            self._held_in(session, batch_id)
            session.execute(
                "UPDATE outbox_batches SET held_until_us = ?, updated_us = ? WHERE id = ?",
                (until_us, self._clock(), batch_id),
            )
        return self._batch_now(batch_id)

    def rewrite(
        self,
        batch_id: int,
        *,
        label: str,
        body: Mapping[str, Any] | None = None,
        entries: Sequence[NewEntry] | None = None,
    ) -> tuple[OutboxBatch, list[OutboxEntry]]:
        """Change what a held batch sends: every request's `body` (its text and options),
        or its requests themselves (`entries`: other recipients). Refused once any of
        its requests has been tried."""
        now = self._clock()
        with self.database.transaction() as session:
            self._held_in(session, batch_id)
            if entries is not None:
                if not entries or any(not e.recipients for e in entries):
                    raise OutboxError("A scheduled send needs at least one recipient.")
                session.execute("DELETE FROM outbox_entries WHERE batch_id = ?", (batch_id,))
                session.executemany(
                    "INSERT INTO outbox_entries(batch_id, seq, external_system_id, own_id, "
                    "recipients, recipient_count, body, created_us, updated_us) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            batch_id, e.seq, e.external_system_id, int(e.own_id),
                            json.dumps(list(e.recipients)), len(e.recipients),
                            body_json(e.body), now, now,
                        )
                        for e in entries
                    ],
                )  # fmt: skip
            if body is not None:
                session.execute(
                    "UPDATE outbox_entries SET body = ?, updated_us = ? WHERE batch_id = ?",
                    (body_json(body), now, batch_id),
                )
            session.execute(
                "UPDATE outbox_batches SET label = ?, updated_us = ? WHERE id = ?",
                (label, now, batch_id),
            )
            found = entries_in(session, "e.batch_id = ?", (batch_id,))
        return (self._batch_now(batch_id), found)

    def cancel(self, batch_id: int, reason: str) -> int:
        """Cancel a held batch before its time: its requests fail (never sent, not to
        be retried) with `reason`, and it closes. The number of requests cancelled."""
        now = self._clock()
        with self.database.transaction() as session:
            self._held_in(session, batch_id)
            count = session.execute(
                "UPDATE outbox_entries SET state = 'failed', retryable = 0, reason = ?, "
                "updated_us = ? WHERE batch_id = ? AND state = 'pending'",
                (reason, now, batch_id),
            ).rowcount
            session.execute(
                "UPDATE outbox_batches SET closed = 1, held_until_us = NULL, updated_us = ? "
                "WHERE id = ?",
                (now, batch_id),
            )
        return int(count)

    def _held_in(self, session: Session, batch_id: int) -> None:
        """Check, in the change's transaction, that the batch is held and untried (and
        lock its row on a server until the change commits)."""
        lock = " FOR UPDATE" if self.kind == "postgresql" else ""
        row = session.execute(
            f"SELECT held_until_us FROM outbox_batches WHERE id = ? AND closed = 0{lock}",  # noqa: S608 - fixed text
            (batch_id,),
        ).fetchone()
        if row is None or row[0] is None:
            raise OutboxError(GONE)
        tried = session.execute(
            "SELECT COUNT(*) FROM outbox_entries WHERE batch_id = ? "
            "AND (state <> 'pending' OR attempts > 0)",
            (batch_id,),
        ).fetchone()
        if tried is not None and int(tried[0]):
            raise OutboxError(STARTED)

    def _batch_now(self, batch_id: int) -> OutboxBatch:
        found = self._batches("WHERE id = ?", (batch_id,))
        if not found:
            raise OutboxError(GONE)
        return found[0]


def _take(
    session: Session, batch_id: int, now: int, due_by_us: int | None, then: Repeat | None
) -> bool:
    """End a batch's hold in `session` when it is held (and due by `due_by_us`, if given),
    recording its next occurrence (`then`) with it; whether it was taken."""
    due = "" if due_by_us is None else " AND held_until_us >= 0 AND held_until_us <= ?"
    taken = session.execute(
        "UPDATE outbox_batches SET held_until_us = NULL, updated_us = ? "  # noqa: S608 - fixed text
        f"WHERE id = ? AND closed = 0 AND held_until_us IS NOT NULL{due} RETURNING send_id",
        (now, batch_id) + (() if due_by_us is None else (due_by_us,)),
    ).fetchall()
    if taken and then is not None:
        _repeat(session, batch_id, str(taken[0][0]), then, now)
    return bool(taken)


def _repeat(session: Session, batch_id: int, sent_as: str, then: Repeat, now: int) -> None:
    """Record batch `batch_id`'s next occurrence: the same requests, held until then, as
    send `then.send_id` (the ExternalSystemIds gwdesk made take the new send's name)."""
    made = session.execute(
        "INSERT INTO outbox_batches(send_id, gateway, channel, label, baseline, excluded, "
        "created_us, updated_us, operator, held_until_us, recurrence) "
        "SELECT ?, gateway, channel, label, baseline, excluded, ?, ?, operator, ?, recurrence "
        "FROM outbox_batches WHERE id = ? RETURNING id",
        (then.send_id, now, now, then.until_us, batch_id),
    ).fetchall()
    rows = session.execute(
        "SELECT seq, external_system_id, own_id, recipients, recipient_count, body "
        "FROM outbox_entries WHERE batch_id = ? ORDER BY seq",
        (batch_id,),
    ).fetchall()
    session.executemany(
        "INSERT INTO outbox_entries(batch_id, seq, external_system_id, own_id, recipients, "
        "recipient_count, body, created_us, updated_us) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (int(made[0][0]), row[0], _renamed(row[1], int(row[2]), sent_as, then.send_id),
             row[2], row[3], row[4], row[5], now, now)
            for row in rows
        ],
    )  # fmt: skip


def _renamed(external: str | None, own: int, old: str, new: str) -> str | None:
    if external is None or not own or not external.startswith(old):
        return external
    return new + external[len(old) :]
