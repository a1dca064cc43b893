"""A single send the operator cancelled while it waited: stopped, then settled once.

A gateway that does not answer keeps a send waiting for its read time-out, and then
for the runner's status window: minutes in which the operator can do nothing. So a
single send (`gwdesk.app.single_send`) can be cancelled. What a cancel means is
decided here, in keeping with the outbox's exactly-once design (`gwdesk.app.outbox`):

1. the send's task is cancelled: the request on the wire is dropped (its connection
   closed) and the runner lets go of the batch;
2. the batch's entries are then settled, once, under the batch's claim: an entry still
   pending was never sent, and fails for good; an entry in flight (or whose answer
   was lost) is first marked as the operator's cancel (`OPERATOR_CANCELLED`, durable
   before anything is asked), then settled by status queries on its ExternalSystemId
   (`Recovery.settle_entry`, bounded by `SETTLE_LIMIT`): found at the gateway, it is
   lodged (the cancel came too late); not found, it failed ("Cancelled by you before
   the gateway took it; not sent"); the status unanswerable, it stays unknown, to be
   settled by a status query once the gateway answers;
3. whichever it came to, the outbox never sends it again by itself: `Recovery` settles
   a cancelled entry it finds open by status and fails it when it was not lodged,
   instead of sending it again.

Lodge requests carry no ExternalSystemId: a cancelled one left in flight stays unknown
for the operator to check (the account's log), as any interrupted Lodge request does.
Qt-free.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from types import TracebackType
from typing import Final

from gwdesk.app.outbox import OutboxRunner
from gwdesk.app.recovery import Recovery
from gwdesk.app.send_values import (
    CANCELLED_NOT_SENT,
    OPERATOR_CANCELLED,
    RequestOutcome,
    RunReport,
)
from gwdesk.domain.errors import AmbiguousSendError, GatewayError
from gwdesk.store.database import StoreError
from gwdesk.store.outbox import EntryState, OutboxBatch, OutboxBusy, OutboxEntry

log = logging.getLogger("gwdesk.app.cancelled_send")
#: Seconds the status queries settling a cancelled send may take before it is left
#: unknown (the gateway does not answer those either): a little over the runner's
#: status window, so an answering gateway always gets its whole window.
SETTLE_LIMIT: Final = 10.0
#: How long a settle waits for the batch's claim the cancelled task is letting go of.
CLAIM_WAIT: Final = 2.0
NOT_STARTED: Final = "Cancelled by you before it was sent; not sent."
CHECKING: Final = (
    "Cancelled by you while the gateway had it; a status query settles whether it took it."
)
TOO_LATE: Final = "Your cancel came too late: the gateway had already taken the message."


class CancelWatch:
    """`async with CancelWatch(cancel) as watch:` around a send: setting `cancel`
    cancels the send where it waits (the runner lets go of the batch on its way out)
    and the block ends quietly, `watch.interrupted` set and `watch.batch` the batch the
    send had recorded (None: nothing, so nothing was sent). The send runs in the
    caller's own task, as it would without the watch; a cancel of that task from
    elsewhere (its window closing) still ends it."""

    def __init__(self, cancel: asyncio.Event) -> None:
        self.cancel = cancel
        self.batch: OutboxBatch | None = None
        self.interrupted = False
        self._task: asyncio.Task[object] | None = None
        self._watcher: asyncio.Future[None] | None = None
        self._cancelling = False

    def recorded(self, batch: OutboxBatch) -> None:
        """Told by the send once its batch is in the outbox."""
        self.batch = batch

    async def __aenter__(self) -> CancelWatch:
        self._task = asyncio.current_task()
        self._watcher = asyncio.ensure_future(self._watch())
        return self

    async def _watch(self) -> None:
        await self.cancel.wait()
        assert self._task is not None
        self._cancelling = True
        self._task.cancel()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        if self._watcher is not None:
            self._watcher.cancel()
        if not self._cancelling or exc_type is not asyncio.CancelledError:
            return False
        assert self._task is not None
        if self._task.uncancel() > 0:
            return False  # cancelled from elsewhere too: the send goes with its task
        self.interrupted = True
        return True


async def settle_cancelled(
    runner: OutboxRunner, batch: OutboxBatch, *, limit: float = SETTLE_LIMIT
) -> RunReport:
    """What a cancelled send's entries came to, each settled once (module docstring)."""
    try:
        async with contextlib.AsyncExitStack() as stack:
            await _claim(runner, batch.id, stack)
            entries = await runner.db(runner.outbox.entries, batch.id)
            sent = [await _settle(runner, batch, entry, limit) for entry in entries]
    except OutboxBusy as exc:
        log.warning("cancelled batch %d left to its holder: %s", batch.id, exc)
        entries = await runner.db(runner.outbox.entries, batch.id)
        why = (
            "Cancelled by you, but another window holds this send in the outbox; it is "
            "settled there, and never sent again by gwdesk without a status query."
        )
        sent = [_as_found(entry, why) for entry in entries]
    return RunReport(batch, tuple(sent), cancelled=True)


async def _claim(runner: OutboxRunner, batch_id: int, stack: contextlib.AsyncExitStack) -> None:
    """Take the batch's claim, waiting a moment for it: a task cancelled while it took
    the claim lets go of it a moment later (`OutboxBusy` when it is still held)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + CLAIM_WAIT
    while True:
        try:
            await stack.enter_async_context(runner.claimed(batch_id))
            return
        except OutboxBusy:
            if loop.time() >= deadline:
                raise
        await asyncio.sleep(0.05)


async def _settle(
    runner: OutboxRunner, batch: OutboxBatch, entry: OutboxEntry, limit: float
) -> RequestOutcome:
    db, outbox = runner.db, runner.outbox
    try:
        if entry.state is EntryState.PENDING:
            now = await db(
                outbox.failed,
                entry.id,
                reason=NOT_STARTED,
                error_kind=OPERATOR_CANCELLED,
                retryable=False,
            )
            return RequestOutcome(now, error=GatewayError(NOT_STARTED))
        if entry.state in (EntryState.IN_FLIGHT, EntryState.UNKNOWN):
            marked = await db(
                outbox.unknown, entry.id, reason=CHECKING, error_kind=OPERATOR_CANCELLED
            )
            settled = await Recovery(runner).settle_entry(batch, marked, limit=limit)
            return _as_found(settled.entry, settled.detail)
    except StoreError as exc:  # moved meanwhile (its own write landed late), or the file
        log.warning("cancelled entry %d: %s", entry.id, exc)
        found = await db(outbox.entry, entry.id)
        return _as_found(found or entry, CHECKING)
    return _as_found(entry, entry.reason)


def _as_found(entry: OutboxEntry, detail: str) -> RequestOutcome:
    """An entry as the settle left it, with the error a single send's result reads."""
    if entry.state is EntryState.LODGED:
        return RequestOutcome(entry)
    if entry.state is EntryState.FAILED:
        return RequestOutcome(entry, error=GatewayError(entry.reason or CANCELLED_NOT_SENT))
    return RequestOutcome(
        entry,
        error=AmbiguousSendError(
            detail or entry.reason,
            external_system_id=entry.external_system_id,
            recipients=entry.recipients,
        ),
    )
