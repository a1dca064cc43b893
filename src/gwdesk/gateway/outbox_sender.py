"""Every send through the durable outbox: recorded before it leaves, settled after a crash.

`OutboxSender` puts a profile's `GatewayService` and its `OutboxStore` together; the
console's Send, Batch and Fax/MMS tabs and the command line send through it, never
around it. For each request:

1. the whole send is recorded first (every chunk pending, with its ExternalSystemId,
   recipients, message and options) in one transaction;
2. an entry is marked in flight (committed) just before its request leaves;
3. its outcome is recorded when known: lodged, failed (with the reason), or unknown
   when the answer was lost and `Sender` could not settle it.

After a crash, an entry left in flight or unknown is settled (`reconcile`) by status
queries on its ExternalSystemId before anything is resent: messages found mean it
was lodged; nothing found by queries spanning `RetryPolicy.resolve_window` (a
batch's messages appear in the background, and a gateway that restarted may still
be loading it) means it surely was not, and it goes back to pending; a status
query that fails leaves it unknown, and it is not resent. `resume` then sends what is pending
(and failures that may pass, such as 503s). Lodge requests (MMS, fax, Lodge SMS,
WAP push) carry no ExternalSystemId, so an interrupted one is left for the operator
to check, never resent by itself.

Database work runs on worker threads (`asyncio.to_thread`), one short transaction
each, so neither the event loop nor a transaction waits on the network, and the
event loop (the console's GUI thread) never waits on the database: every outbox
write, the batch claims included, can wait out SQLite's busy timeout (5 s) while
another process writes the file.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any, Final, ParamSpec, TypeVar

from gwdesk.domain.numbers import RecipientCheck
from gwdesk.gateway.errors import (
    AuthenticationError,
    GatewayError,
)
from gwdesk.gateway.outbox_records import (
    LodgeVerdict,
    Reconciled,
    ReconcileReport,
    ResumeReport,
    Settled,
    outgoing_body,
    outgoing_from_body,
    record_result,
    result_of,
)
from gwdesk.gateway.sending import (
    ChunkResult,
    Outgoing,
    SendOutcome,
    SendPlan,
    new_send_id,
    not_attempted,
    ours,
    recipient_digits,
)
from gwdesk.gateway.service import GatewayService
from gwdesk.store.database import StoreError
from gwdesk.store.outbox import (
    SMS,
    EntryState,
    NewEntry,
    OutboxBatch,
    OutboxBusy,
    OutboxEntry,
    OutboxStore,
)

log = logging.getLogger("gwdesk.gateway.outbox")
T = TypeVar("T")
P = ParamSpec("P")
SETTLE_CONCURRENCY: Final = 16
NO_CHECK: Final = RecipientCheck((), (), 0)
LODGE_MANUAL: Final = (
    "The Lodge interface has no ExternalSystemId to look this request up by, so gwdesk "
    "cannot tell whether it was lodged: check the account's log (Logs tab, or gwdesk logs "
    "--recipient NUMBER), then send it again if needed and discard this entry."
)
LODGE_NOT_SENT: Final = (
    "gwdesk stopped before this Lodge request was sent; its files are not kept in the "
    "outbox, so send it again from the Fax / MMS or Send tab."
)


def _label(text: str) -> str:
    return " ".join(text.split())[:80]


class OutboxSender:
    """Sends of one profile, each recorded in its outbox first (see the module docstring)."""

    def __init__(
        self,
        service: GatewayService,
        outbox: OutboxStore,
        gateway: str,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.service = service
        self.outbox = outbox
        self.gateway = gateway
        self.clock = clock

    def __repr__(self) -> str:
        return f"OutboxSender(gateway={self.gateway!r}, outbox={self.outbox!r})"

    async def _db(self, call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        return await asyncio.to_thread(functools.partial(call, *args, **kwargs))

    # ---- recording ---------------------------------------------------------------------

    async def record_plan(self, plan: SendPlan) -> tuple[OutboxBatch, list[OutboxEntry]]:
        """Record a prepared REST send: one pending entry per request of at most 100."""
        body = outgoing_body(plan.outgoing)
        entries = [
            NewEntry(index, recipients, body, plan.external_id(index), plan.own_id)
            for index, recipients in plan.parts()
        ]
        return await self._db(
            self.outbox.record,
            gateway=self.gateway,
            channel=SMS,
            label=_label(plan.outgoing.text),
            send_id=plan.send_id,
            entries=entries,
            baseline=plan.baseline,
        )

    async def record_chunks(
        self,
        template: Outgoing,
        parts: Sequence[tuple[int, tuple[str, ...]]],
        *,
        baseline: Collection[str] = (),
    ) -> tuple[OutboxBatch, list[OutboxEntry]]:
        """Record a batch whose numbers are already checked (the Batch tab's import did)."""
        plan = SendPlan(template, NO_CHECK, new_send_id(), frozenset(baseline))
        body = outgoing_body(template)
        entries = [
            NewEntry(index, recipients, body, plan.external_id(index), plan.own_id)
            for index, recipients in parts
        ]
        return await self._db(
            self.outbox.record,
            gateway=self.gateway,
            channel=SMS,
            label=_label(template.text),
            send_id=plan.send_id,
            entries=entries,
            baseline=plan.baseline,
        )

    async def reopen(self, entry_ids: Sequence[int], template: Outgoing) -> list[OutboxEntry]:
        """Failed or pending entries made ready to send with `template`'s message and
        options ("Send remaining"); the entries now pending."""

        def work() -> list[OutboxEntry]:
            opened = self.outbox.reopen(entry_ids, outgoing_body(template))
            found = [self.outbox.entry(entry_id) for entry_id in opened]
            return [e for e in found if e is not None]

        return await self._db(work)

    @contextlib.asynccontextmanager
    async def claimed(self, batch_id: int) -> AsyncIterator[None]:
        """Hold a batch while sending or settling it (`OutboxBusy` when someone else does).

        Claiming and releasing are writes, which wait out SQLite's busy timeout while
        another connection (the command line, a sync) holds the file's write lock, so
        they run on a worker thread, never on the event loop's (in the console, the
        GUI thread). Cancelling cannot leave a claim behind: neither write is cancelled
        once started, and a claim that lands after its waiter was cancelled is released.
        """
        loop = asyncio.get_running_loop()
        claim = loop.run_in_executor(None, self.outbox.claim, batch_id)
        try:
            await asyncio.shield(claim)
        except asyncio.CancelledError:
            claim.add_done_callback(functools.partial(self._release_late, batch_id))
            raise
        try:
            yield
        finally:
            await asyncio.shield(loop.run_in_executor(None, self.outbox.release, batch_id))

    def _release_late(self, batch_id: int, claim: asyncio.Future[None]) -> None:
        """A claim whose waiter was cancelled: let go of it if it was taken."""
        if claim.cancelled() or claim.exception() is not None:
            return
        asyncio.get_running_loop().run_in_executor(None, self.outbox.release, batch_id)

    # ---- sending -----------------------------------------------------------------------

    async def send(
        self,
        outgoing: Outgoing,
        *,
        skip_invalid: bool = False,
        checked: RecipientCheck | None = None,
        concurrency: int = 4,
        on_chunk: Callable[[ChunkResult], None] | None = None,
    ) -> tuple[SendOutcome, OutboxBatch]:
        """Check (unless `checked` is given: `Sender.prepare`), record, then send every
        request: `GatewayService.send`, made durable."""
        plan = await self.service.sender.prepare(
            outgoing, skip_invalid=skip_invalid, checked=checked
        )
        batch, entries = await self.record_plan(plan)
        async with self.claimed(batch.id):
            results = await self.send_entries(
                batch, entries, concurrency=concurrency, on_chunk=on_chunk
            )
        return (SendOutcome(tuple(results), plan.check.rejected, plan.check.duplicates), batch)

    def plan_for(self, batch: OutboxBatch, entry: OutboxEntry) -> SendPlan:
        """The plan an entry was recorded with; ValueError when its record is unusable."""
        if entry.damaged:
            raise ValueError(entry.damaged)
        return SendPlan(outgoing_from_body(entry.body), NO_CHECK, batch.send_id, batch.baseline)

    async def send_entry(self, batch: OutboxBatch, entry: OutboxEntry) -> ChunkResult:
        """Send one pending entry (the caller holds the batch's claim).

        The entry is marked in flight first; one that is no longer pending is not sent,
        and its recorded state comes back instead (so a stale view cannot send twice).
        """
        external_id = entry.external_system_id or ""
        try:
            plan = self.plan_for(batch, entry)
        except ValueError as exc:
            reason = f"The outbox record of this request is damaged ({exc}); it was not sent."
            await self._db(self.outbox.give_up, entry.id, reason)
            return ChunkResult(entry.seq, external_id, entry.recipients, error=GatewayError(reason))
        try:
            started, current = await self._db(self.outbox.begin, entry.id)
        except (StoreError, sqlite3.Error) as exc:
            reason = f"The outbox could not record this request ({exc}), so it was not sent."
            return ChunkResult(entry.seq, external_id, entry.recipients, error=GatewayError(reason))
        if not started:
            return result_of(current)
        result = await self.service.sender.run_chunk(
            plan, entry.seq, entry.recipients, external_id=entry.external_system_id
        )
        await self._finish(entry, result)
        return result

    async def _finish(self, entry: OutboxEntry, result: ChunkResult) -> None:
        """Record what became of a request; a store failure leaves it in flight (settled
        on the next start) rather than losing the outcome the caller gets."""
        try:
            await self._db(record_result, self.outbox, entry.id, result)
        except (StoreError, sqlite3.Error) as exc:
            log.warning("outbox entry %d: outcome not recorded: %s", entry.id, exc)

    async def send_entries(
        self,
        batch: OutboxBatch,
        entries: Sequence[OutboxEntry],
        *,
        concurrency: int = 4,
        on_chunk: Callable[[ChunkResult], None] | None = None,
    ) -> list[ChunkResult]:
        """Send pending entries a few at a time (the caller holds the claim). After an
        authentication refusal the rest are not attempted and stay pending."""
        gate = asyncio.Semaphore(max(1, concurrency))
        stop: list[GatewayError] = []

        async def run(entry: OutboxEntry) -> ChunkResult:
            async with gate:
                if stop:
                    result = ChunkResult(
                        entry.seq,
                        entry.external_system_id or "",
                        entry.recipients,
                        error=not_attempted(stop[0]),
                    )
                else:
                    result = await self.send_entry(batch, entry)
                    if isinstance(result.error, AuthenticationError):
                        stop.append(result.error)
            if on_chunk is not None:
                on_chunk(result)
            return result

        return list(await asyncio.gather(*(run(e) for e in entries)))

    # ---- reconciling -------------------------------------------------------------------

    async def open_batches(self) -> list[OutboxBatch]:
        """This gateway's batches with something left to do, newest first."""
        return await self._db(self.outbox.batches, gateway=self.gateway)

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
                async with self.claimed(batch.id):
                    settled.extend(await self.settle_batch(batch, on_settled=on_settled))
            except OutboxBusy:
                busy.append(batch.id)
        return ReconcileReport(tuple(settled), tuple(busy))

    async def settle_batch(
        self,
        batch: OutboxBatch,
        entries: Sequence[OutboxEntry] | None = None,
        *,
        on_settled: Callable[[Reconciled], None] | None = None,
    ) -> list[Reconciled]:
        """Settle a claimed batch's unsettled entries (or the given ones), a few at a time."""
        if entries is None:
            entries = await self._db(self.outbox.unsettled, batch.id)
        gate = asyncio.Semaphore(SETTLE_CONCURRENCY)

        async def one(entry: OutboxEntry) -> Reconciled:
            async with gate:
                result = await self.settle(batch, entry)
            if on_settled is not None:
                on_settled(result)
            return result

        return list(await asyncio.gather(*(one(e) for e in entries)))

    async def settle(self, batch: OutboxBatch, entry: OutboxEntry) -> Reconciled:
        """Learn whether one interrupted entry was lodged, and record it."""

        def outcome(what: Settled, detail: str, found: int = 0) -> Reconciled:
            return Reconciled(
                batch.id,
                entry.id,
                entry.seq,
                entry.external_system_id,
                entry.recipient_count,
                what,
                detail,
                found,
            )

        if entry.damaged:
            detail = f"Damaged outbox record ({entry.damaged}); it is not sent again."
            await self._db(self.outbox.give_up, entry.id, detail)
            return outcome(Settled.DAMAGED, detail)
        if entry.channel != SMS or entry.external_system_id is None:
            await self._db(self.outbox.unknown, entry.id, reason=LODGE_MANUAL)
            return outcome(Settled.MANUAL, LODGE_MANUAL)
        external_id = entry.external_system_id
        if entry.own_id and entry.sharing > 1:
            detail = (
                f"ExternalSystemId {external_id} is held by {entry.sharing} outbox records, so "
                "their messages cannot be told apart; none is sent again. Check it with gwdesk "
                "status --external-id, then discard the batch."
            )
            await self._db(self.outbox.unknown, entry.id, reason=detail)
            return outcome(Settled.UNKNOWN, detail)
        wanted = None if entry.own_id else recipient_digits(entry.recipients)
        policy = self.service.retrier.policy
        # Looked for over a whole window now, however long ago it was sent: a gateway
        # that was down or restarted may still be loading the batch it accepted.
        deadline = self.clock() + policy.resolve_window
        delay = policy.resolve_first_delay
        while True:
            try:
                messages = await self.service.rest.status(external_system_id=external_id)
            except GatewayError as exc:
                detail = (
                    f"Its status could not be asked ({exc.message}); it is not sent again "
                    "until a status query can tell."
                )
                await self._db(self.outbox.unknown, entry.id, reason=detail)
                return outcome(Settled.UNKNOWN, detail)
            mine = ours(messages, batch.baseline, wanted)
            if mine:
                detail = f"The gateway already has {len(mine)} message(s) of it: it was lodged."
                await self._db(
                    self.outbox.lodged,
                    entry.id,
                    message_id=mine[0].message_id,
                    found=len(mine),
                    reason="found by a status query after the send was interrupted",
                )
                return outcome(Settled.LODGED, detail, len(mine))
            now = self.clock()
            if now >= deadline:
                detail = "The gateway has no message of it: it was not lodged."
                await self._db(self.outbox.requeue, entry.id, reason=detail)
                return outcome(Settled.NOT_LODGED, detail)
            await self.service.retrier.sleep(min(delay, deadline - now))
            delay = min(delay * 2, policy.resolve_max_delay)

    # ---- resuming ----------------------------------------------------------------------

    async def resume(
        self,
        batch_ids: Collection[int] | None = None,
        *,
        concurrency: int = 4,
        on_chunk: Callable[[ChunkResult], None] | None = None,
        on_settled: Callable[[Reconciled], None] | None = None,
    ) -> ResumeReport:
        """Settle, then send what is left of this gateway's open batches (oldest first)."""
        settled: list[Reconciled] = []
        sent: list[ChunkResult] = []
        busy: list[int] = []
        worked: list[int] = []
        given_up = 0
        for batch in reversed(await self.open_batches()):
            if batch_ids is not None and batch.id not in batch_ids:
                continue
            try:
                async with self.claimed(batch.id):
                    worked.append(batch.id)
                    settled.extend(await self.settle_batch(batch, on_settled=on_settled))
                    given_up += await self._requeue_retryable(batch)
                    pending = await self._db(self.outbox.entries, batch.id, [EntryState.PENDING])
                    sendable = []
                    for entry in pending:
                        if entry.channel == SMS and not entry.damaged:
                            sendable.append(entry)
                            continue
                        given_up += 1
                        reason = LODGE_NOT_SENT if not entry.damaged else entry.damaged
                        await self._db(self.outbox.give_up, entry.id, reason)
                    sent.extend(
                        await self.send_entries(
                            batch, sendable, concurrency=concurrency, on_chunk=on_chunk
                        )
                    )
            except OutboxBusy:
                busy.append(batch.id)
        return ResumeReport(
            ReconcileReport(tuple(settled), tuple(busy)), tuple(sent), tuple(worked), given_up
        )

    async def _requeue_retryable(self, batch: OutboxBatch) -> int:
        """Failures that may pass (503s, time-outs, a refused login) go back to pending."""
        damaged = 0
        for entry in await self._db(self.outbox.entries, batch.id, [EntryState.FAILED]):
            if not entry.retryable:
                continue
            if entry.damaged or entry.channel != SMS:
                damaged += 1
                await self._db(self.outbox.give_up, entry.id, entry.damaged or LODGE_NOT_SENT)
                continue
            await self._db(
                self.outbox.requeue, entry.id, reason=f"sent again after: {entry.reason}"
            )
        return damaged

    async def discard(self, batch_id: int) -> int:
        """Give up what a batch has left (nothing is sent); the number of entries given up."""
        async with self.claimed(batch_id):
            return await self._db(self.outbox.discard, batch_id)

    # ---- Lodge requests ----------------------------------------------------------------

    async def lodge(
        self,
        channel: str,
        recipients: Sequence[str],
        description: Mapping[str, Any],
        call: Callable[[], Awaitable[T]],
        judge: Callable[[T], LodgeVerdict],
    ) -> T:
        """Record a Lodge request (MMS, fax, Lodge SMS, WAP push), make it, record its fate.

        Lodge has no ExternalSystemId, so only the description is kept (not the files):
        an interrupted one is left for the operator to check.
        """
        label = str(description.get("label") or description.get("text") or channel)
        batch, entries = await self._db(
            self.outbox.record,
            gateway=self.gateway,
            channel=channel,
            label=_label(label),
            send_id=f"{new_send_id()}-{channel}",
            entries=[NewEntry(1, tuple(recipients), description, None, own_id=False)],
        )
        entry = entries[0]
        async with self.claimed(batch.id):
            await self._db(self.outbox.begin, entry.id)
            try:
                answer = await call()
            except GatewayError as exc:
                if exc.maybe_processed:
                    await self._db(self.outbox.unknown, entry.id, reason=exc.message)
                else:
                    await self._db(
                        self.outbox.failed,
                        entry.id,
                        reason=exc.message,
                        error_kind=exc.kind,
                        retryable=False,
                    )
                raise
            verdict = judge(answer)
            if verdict.ok:
                await self._db(
                    self.outbox.lodged,
                    entry.id,
                    message_id=verdict.message_id,
                    found=1 if verdict.message_id else 0,
                    reason=verdict.detail,
                )
            else:
                await self._db(self.outbox.failed, entry.id, reason=verdict.detail, retryable=False)
            return answer
