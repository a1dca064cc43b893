"""Reading the durable outbox: its batches (with their entries counted by state) and
entries, as values (`outbox_rows`); the reading half of `outbox.OutboxStore`.

On a team's server a batch shows its owner only while that owner's claim lives (the
advisory lock of its connection): a console that died leaves a batch anyone may resume.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from gwdesk.store.database import store_methods
from gwdesk.store.engine import Database, Session
from gwdesk.store.outbox_rows import (
    BATCH_SELECT,
    COUNT_SELECT,
    ENTRY_SELECT,
    EntryState,
    OutboxBatch,
    OutboxEntry,
    StateCount,
    batch_from_row,
    entry_from_row,
    state_of,
)

if TYPE_CHECKING:
    from gwdesk.store.outbox_advisory import AdvisoryClaims


@store_methods
class OutboxReads:
    """The outbox's batches and entries as they stand (see `outbox.OutboxStore`)."""

    database: Database
    _server: AdvisoryClaims | None
    """A team server's claims (None: a profile's file)."""

    def batch(self, batch_id: int) -> OutboxBatch | None:
        found = self._batches("WHERE id = ?", (batch_id,))
        return found[0] if found else None

    def batches(
        self,
        *,
        gateway: str | None = None,
        open_only: bool = True,
        held: bool | None = None,
        limit: int = 500,
    ) -> list[OutboxBatch]:
        """Newest first: the open ones (something left to do), or all with `open_only=False`;
        only the scheduled sends still held (`held`), or only the others (`held=False`)."""
        clauses, values = [], []
        if open_only:
            clauses.append("closed = 0")
        if held is not None:
            clauses.append(f"held_until_us IS {'NOT ' if held else ''}NULL")
        if gateway is not None:
            clauses.append("gateway = ?")
            values.append(gateway)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        return self._batches(f"{where} ORDER BY id DESC LIMIT ?", (*values, limit))

    def _batches(self, tail: str, values: tuple[Any, ...]) -> list[OutboxBatch]:
        with self.database.session() as session:
            rows = session.execute(BATCH_SELECT + tail, values).fetchall()
            ids = [int(r["id"]) for r in rows]
            counts: dict[int, dict[EntryState, StateCount]] = {i: {} for i in ids}
            for start in range(0, len(ids), 500):
                part = ids[start : start + 500]
                marks = ", ".join("?" for _ in part)
                query = f"{COUNT_SELECT} WHERE batch_id IN ({marks}) GROUP BY batch_id, state"
                for row in session.execute(query, part):
                    state = state_of(row[1])
                    if state is None:
                        state = EntryState.UNKNOWN
                    old = counts[int(row[0])].get(state, StateCount())
                    counts[int(row[0])][state] = StateCount(
                        old.entries + int(row[2]), old.recipients + int(row[3])
                    )
        batches = [batch_from_row(row, counts[int(row["id"])]) for row in rows]
        if self._server is None or not any(b.owner for b in batches):
            return batches
        live = self._server.holders([b.id for b in batches if b.owner])
        return [b if b.owner is None or b.id in live else _unowned(b) for b in batches]

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
        with self.database.session() as session:
            return entries_in(session, where, values)


def entries_in(session: Session, where: str, values: tuple[Any, ...]) -> list[OutboxEntry]:
    """Entries read in a session already lent (inside a change's transaction)."""
    query = f"{ENTRY_SELECT} WHERE {where} ORDER BY e.batch_id, e.seq"
    rows = session.execute(query, values).fetchall()
    return [entry_from_row(row) for row in rows]


def entry_in(session: Session, entry_id: int) -> OutboxEntry | None:
    """One entry as it stands in `session` (its transaction's own changes included)."""
    found = entries_in(session, "e.id = ?", (entry_id,))
    return found[0] if found else None


def _unowned(batch: OutboxBatch) -> OutboxBatch:
    """A batch whose claim's holder is gone (its console died, its connection dropped)."""
    return replace(batch, owner=None)
