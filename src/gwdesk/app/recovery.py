"""After a crash: settle what was interrupted, then resume or discard what is left.

An entry left in flight or unknown (a crash, a kill, a lost answer) is settled
(`Recovery.reconcile`) by status queries on its ExternalSystemId before anything is
resent: messages found mean it was lodged; nothing found by queries spanning
`RetryPolicy.resolve_window` (a batch's messages appear in the background, and a
gateway that restarted may still be loading it) means it surely was not, and it goes
back to pending; a status query that fails leaves it unknown, and it is not resent.
`resume` then sends what is pending (and failures that may pass, such as 503s)
through the runner. Lodge requests carry no ExternalSystemId and their files are not
kept: an interrupted one is left for the operator to check, never resent by itself.
An entry the operator cancelled while it was sent (`OPERATOR_CANCELLED`) is settled the
same way but never goes back to pending: not found, it fails for good, saying it was
cancelled before the gateway took it.

The console's Outbox window and `gwdesk outbox` both use this; what they report is
the entries as the outbox holds them after the check.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Final

from gwdesk.app.outbox import OutboxRunner
from gwdesk.app.send_values import (
    CANCELLED_NOT_SENT,
    OPERATOR_CANCELLED,
    SETTLED_BY_STATUS,
    RequestOutcome,
    Requests,
    RunReport,
)
from gwdesk.domain.errors import GatewayError
from gwdesk.store.outbox import OPEN_STATES as OPEN_STATES
from gwdesk.store.outbox import SMS, OutboxBusy
from gwdesk.store.outbox import EntryState as EntryState
from gwdesk.store.outbox import OutboxBatch as OutboxBatch
from gwdesk.store.outbox import OutboxEntry as OutboxEntry

SETTLE_CONCURRENCY: Final = 16
LODGE_MANUAL: Final = (
    "The Lodge interface has no ExternalSystemId to look this request up by, so gwdesk "
    "cannot tell whether it was lodged: check the account's log (Logs tab, or gwdesk logs "
    "--recipient NUMBER), then send it again if needed and discard this entry."
)
LODGE_NOT_SENT: Final = (
    "gwdesk stopped before this Lodge request was sent; its files are not kept in the "
    "outbox, so send it again from the Fax / MMS or Send tab."
)
FOUND_BY_STATUS: Final = "found by a status query after the send was interrupted"
#: The reasons a lodged entry keeps when a status query, not its own answer, told.
BY_STATUS: Final = (SETTLED_BY_STATUS, FOUND_BY_STATUS)
#: What a check found, by the state it left the entry in (a Lodge entry stays unknown).
FINDINGS: Final = ("lodged", "not lodged", "still unknown", "check by hand", "damaged record")


@dataclass(frozen=True, slots=True)
class Reconciled:
    """One interrupted entry after its check: as the outbox now holds it, and why."""

    entry: OutboxEntry
    detail: str = ""
    found: int = 0

    @property
    def outcome(self) -> str:
        """One of `FINDINGS`, read from the entry's state."""
        state = self.entry.state
        if state is EntryState.LODGED:
            return "lodged"
        if state is EntryState.PENDING or cancelled(self.entry, EntryState.FAILED):
            return "not lodged"
        if state is EntryState.FAILED:
            return "damaged record"
        return "still unknown" if self.entry.channel == SMS else "check by hand"


@dataclass(frozen=True, slots=True)
class ReconcileReport:
    settled: tuple[Reconciled, ...] = ()
    busy: tuple[int, ...] = ()
    """Batches another running gwdesk is working on (left alone)."""

    def count(self, outcome: str) -> int:
        return sum(1 for r in self.settled if r.outcome == outcome)

    def summary(self) -> str:
        """One line for a status bar or a command line."""
        if not self.settled:
            return "no interrupted send to check"
        parts = [f"{self.count(o)} {o}" for o in FINDINGS if self.count(o)]
        noun = "request" if len(self.settled) == 1 else "requests"
        return f"{len(self.settled)} interrupted {noun} checked: {', '.join(parts)}"


@dataclass(frozen=True, slots=True)
class ResumeReport(Requests):
    """What settling and sending an account's open batches came to."""

    reconcile: ReconcileReport
    sent: tuple[RequestOutcome, ...] = ()
    batches: tuple[int, ...] = ()
    """Batches worked on."""
    given_up: int = 0
    """Entries that could not be sent (damaged rows, Lodge requests)."""

    @property
    def busy(self) -> tuple[int, ...]:
        return self.reconcile.busy


def cancelled(entry: OutboxEntry, *states: EntryState) -> bool:
    """Whether the operator cancelled the entry while it was sent (and it is in one of
    `states`, if any are given): it is never sent again by the outbox itself."""
    return entry.error_kind == OPERATOR_CANCELLED and (not states or entry.state in states)


def settled_by_status(entry: OutboxEntry) -> bool:
    """Whether a lodged entry was shown lodged by a status query (its answer was lost,
    or a crash interrupted it) rather than by its own answer."""
    return entry.state is EntryState.LODGED and entry.reason in BY_STATUS


class Recovery:
    """Settling, resuming and discarding a profile's open batches (module docstring)."""

    def __init__(self, runner: OutboxRunner) -> None:
        self.runner = runner
        self.outbox = runner.outbox

    async def open_batches(self) -> list[OutboxBatch]:
        """This account's batches with something left to do, newest first."""
        return await self.runner.db(self.outbox.batches, gateway=self.runner.account, held=False)

    async def reconcile(
        self,
        batch_ids: Collection[int] | None = None,
        *,
        on_settled: Callable[[Reconciled], None] | None = None,
    ) -> ReconcileReport:
        """Settle every entry left in flight or unknown (by status queries); send nothing."""
        settled: list[Reconciled] = []
        busy: list[int] = []
        for batch in reversed(await self.open_batches()):
            if batch_ids is not None and batch.id not in batch_ids:
                continue
            if not batch.count(EntryState.IN_FLIGHT, EntryState.UNKNOWN):
                continue
            try:
                async with self.runner.claimed(batch.id):
                    settled.extend(await self.settle(batch, on_settled=on_settled))
            except OutboxBusy:
                busy.append(batch.id)
        return ReconcileReport(tuple(settled), tuple(busy))

    async def settle(
        self,
        batch: OutboxBatch,
        entries: Sequence[OutboxEntry] | None = None,
        *,
        on_settled: Callable[[Reconciled], None] | None = None,
    ) -> list[Reconciled]:
        """Settle a claimed batch's unsettled entries (or the given ones), a few at a time."""
        if entries is None:
            entries = await self.runner.db(self.outbox.unsettled, batch.id)
        gate = asyncio.Semaphore(SETTLE_CONCURRENCY)

        async def one(entry: OutboxEntry) -> Reconciled:
            async with gate:
                result = await self.settle_entry(batch, entry)
            if on_settled is not None:
                on_settled(result)
            return result

        return list(await asyncio.gather(*(one(e) for e in entries)))

    async def settle_entry(
        self, batch: OutboxBatch, entry: OutboxEntry, *, limit: float | None = None
    ) -> Reconciled:
        """Learn whether one interrupted entry was lodged, and record it (`limit`: the
        seconds the status queries may take before it stays unknown)."""
        db, outbox = self.runner.db, self.outbox
        if entry.damaged:
            detail = f"Damaged outbox record ({entry.damaged}); it is not sent again."
            return Reconciled(await db(outbox.give_up, entry.id, detail), detail)
        if entry.channel != SMS or entry.external_system_id is None:
            return Reconciled(await db(outbox.unknown, entry.id, reason=LODGE_MANUAL), LODGE_MANUAL)
        if entry.own_id and entry.sharing > 1:
            detail = (
                f"ExternalSystemId {entry.external_system_id} is held by {entry.sharing} outbox "
                "records, so their messages cannot be told apart; none is sent again. Check it "
                "with gwdesk status --external-id, then discard the batch."
            )
            return Reconciled(await db(outbox.unknown, entry.id, reason=detail), detail)
        try:
            async with asyncio.timeout(limit):
                mine = await self.runner.lodged_by_status(batch, entry)
        except (GatewayError, TimeoutError) as exc:
            why = exc.message if isinstance(exc, GatewayError) else f"no answer in {limit:g} s"
            detail = (
                f"Its status could not be asked ({why}); it is not sent again "
                "until a status query can tell."
            )
            if cancelled(entry):
                detail = (
                    f"Cancelled by you while the gateway had it, and its status could not be "
                    f"asked ({why}). It is settled by a status query once the gateway "
                    "answers, and never sent again."
                )
            return Reconciled(await db(outbox.unknown, entry.id, reason=detail), detail)
        if mine:
            detail = f"The gateway already has {len(mine)} message(s) of it: it was lodged."
            now = await db(
                outbox.lodged,
                entry.id,
                message_id=mine[0].message_id,
                found=len(mine),
                reason=FOUND_BY_STATUS,
            )
            return Reconciled(now, detail, len(mine))
        if cancelled(entry):
            failed = await db(
                outbox.failed,
                entry.id,
                reason=CANCELLED_NOT_SENT,
                error_kind=OPERATOR_CANCELLED,
                retryable=False,
            )
            return Reconciled(failed, CANCELLED_NOT_SENT)
        detail = "The gateway has no message of it: it was not lodged."
        return Reconciled(await db(outbox.requeue, entry.id, reason=detail), detail)

    async def resume(
        self,
        batch_ids: Collection[int] | None = None,
        *,
        lanes: int = 4,
        on_change: Callable[[OutboxEntry], None] | None = None,
        on_settled: Callable[[Reconciled], None] | None = None,
    ) -> ResumeReport:
        """Settle, then send what is left of this account's open batches (oldest first)."""
        settled: list[Reconciled] = []
        sent: list[RequestOutcome] = []
        busy: list[int] = []
        worked: list[int] = []
        given_up = 0
        for batch in reversed(await self.open_batches()):
            if batch_ids is not None and batch.id not in batch_ids:
                continue
            try:
                async with self.runner.claimed(batch.id):
                    worked.append(batch.id)
                    settled.extend(await self.settle(batch, on_settled=on_settled))
                    given_up += await self._requeue_retryable(batch)
                    sendable, dropped = await self._sendable(batch)
                    given_up += dropped
                    report: RunReport = await self.runner.run(
                        batch, sendable, lanes=lanes, on_change=on_change, claim=False
                    )
                    sent.extend(report.sent)
            except OutboxBusy:
                busy.append(batch.id)
        return ResumeReport(
            ReconcileReport(tuple(settled), tuple(busy)), tuple(sent), tuple(worked), given_up
        )

    async def _sendable(self, batch: OutboxBatch) -> tuple[list[OutboxEntry], int]:
        """The pending entries the outbox can send again itself; the others are given up."""
        db, outbox = self.runner.db, self.outbox
        sendable, given_up = [], 0
        for entry in await db(outbox.entries, batch.id, [EntryState.PENDING]):
            if entry.channel == SMS and not entry.damaged:
                sendable.append(entry)
                continue
            given_up += 1
            await db(outbox.give_up, entry.id, entry.damaged or LODGE_NOT_SENT)
        return sendable, given_up

    async def _requeue_retryable(self, batch: OutboxBatch) -> int:
        """Failures that may pass (503s, time-outs, a refused login) go back to pending."""
        db, outbox = self.runner.db, self.outbox
        damaged = 0
        for entry in await db(outbox.entries, batch.id, [EntryState.FAILED]):
            if not entry.retryable:
                continue
            if entry.damaged or entry.channel != SMS:
                damaged += 1
                await db(outbox.give_up, entry.id, entry.damaged or LODGE_NOT_SENT)
                continue
            await db(outbox.requeue, entry.id, reason=f"sent again after: {entry.reason}")
        return damaged

    async def discard(self, batch_id: int) -> int:
        """Give up what a batch has left (nothing is sent); the number of entries given up."""
        async with self.runner.claimed(batch_id):
            return await self.runner.db(self.outbox.discard, batch_id)
