"""A batch send as a list of requests ("chunks") of at most 100, and what became of each.

Qt-free: the Batch tab renders it. Before the first request leaves, the whole
batch is recorded in the profile's durable outbox (`OutboxSender.record_chunks`: one
entry per chunk, each with its own ExternalSystemId), so a batch interrupted by a
crash can be settled and resumed on the next start. The numbers were already checked
off the GUI thread by the import, and the recording runs on a worker thread too.

Chunks are then sent one outbox entry at a time, a few at once (the "lanes"). That
is what makes Cancel exact: cancelling lets the requests already on the wire finish
(their outcome is then known), and no lane takes another chunk. Cancelling one send
of many chunks would cut requests off mid-flight, leaving chunks that may or may not
have been lodged.

A chunk whose answer was lost is settled by the service through its
ExternalSystemId; one it could not settle is marked uncertain and is looked up
again before "Send remaining" sends anything, so no recipient gets a message twice.
The outbox enforces it as well: an entry that is not pending is never sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Final

from gwdesk.domain.models import Message
from gwdesk.gateway.errors import AuthenticationError, GatewayError, ValidationError
from gwdesk.gateway.outbox_records import Settled, result_of
from gwdesk.gateway.outbox_sender import OutboxSender
from gwdesk.gateway.sending import MAX_RECIPIENTS_PER_REQUEST, ChunkResult, Outgoing, chunked
from gwdesk.gateway.service import GatewayService
from gwdesk.store.database import StoreError
from gwdesk.store.outbox import OutboxBatch, OutboxBusy, OutboxEntry

log = logging.getLogger("gwdesk.ui.batch")
DEFAULT_CONCURRENCY: Final = 4
MAX_CONCURRENCY: Final = 16
FOLLOW_INTERVAL: Final = 1.0
FOLLOW_CONCURRENCY: Final = 2
FOLLOW_GIVE_UP: Final = 5


class ChunkState(StrEnum):
    WAITING = "waiting"
    SENDING = "sending"
    LODGED = "lodged"
    FAILED = "failed"
    UNCERTAIN = "uncertain"
    NOT_SENT = "not sent"


@dataclass(eq=False)
class Chunk:
    """One request of the batch: its recipients and what the gateway made of them."""

    index: int
    recipients: tuple[str, ...]
    state: ChunkState = ChunkState.WAITING
    result: ChunkResult | None = None
    sends: int = 0
    """How many times it was handed to the service (Send remaining adds one)."""
    created: int = 0
    """Messages the status endpoint shows for it so far."""
    status_failures: int = 0
    """Status queries in a row that failed; following gives up on it after a few."""
    note: str = ""
    entry_id: int | None = None
    """Its outbox entry, once the batch is recorded."""
    planned_id: str = ""
    """The ExternalSystemId the outbox gave it (known before it is sent)."""

    @property
    def external_id(self) -> str:
        return self.result.external_system_id if self.result else self.planned_id

    @property
    def reference(self) -> str:
        """BatchCode, or the MessageId of a one-recipient request, or what status found."""
        result = self.result
        if result is None or not result.lodged:
            return ""
        if result.batch_code:
            return result.batch_code
        if result.message is not None:
            return result.message.message_id
        if result.found:
            first = result.found[0].message_id
            return first if len(result.found) == 1 else f"{first} (+{len(result.found) - 1})"
        return ""

    @property
    def resolved(self) -> bool:
        return bool(self.result and self.result.resolved)

    @property
    def complete(self) -> bool:
        return self.state is ChunkState.LODGED and self.created >= len(self.recipients)

    def outcome(self) -> str:
        if self.state is ChunkState.LODGED:
            how = " (settled by status)" if self.resolved else ""
            again = " on a later send" if self.sends > 1 else ""
            return f"lodged{again}{how}"
        if self.note:
            return f"{self.state.value}: {self.note}"
        return self.state.value


@dataclass
class BatchRun:
    """Everything about one batch the tab shows; mutated on the GUI thread only."""

    template: Outgoing
    chunks: list[Chunk]
    concurrency: int = DEFAULT_CONCURRENCY
    sending: bool = False
    stopping: bool = False
    halted: str = ""
    """Why sending stopped early (authentication refused...), for the operator."""
    outbox: OutboxBatch | None = None
    """The batch's record in the durable outbox (set when it is first sent)."""

    @classmethod
    def plan(cls, template: Outgoing, numbers: Sequence[str], concurrency: int) -> BatchRun:
        parts = chunked(numbers, MAX_RECIPIENTS_PER_REQUEST)
        chunks = [Chunk(index, recipients) for index, recipients in enumerate(parts, start=1)]
        return cls(replace(template, recipients=()), chunks, concurrency)

    @property
    def recipients(self) -> int:
        return sum(len(c.recipients) for c in self.chunks)

    def count(self, *states: ChunkState) -> int:
        return sum(1 for c in self.chunks if c.state in states)

    def recipients_in(self, *states: ChunkState) -> int:
        return sum(len(c.recipients) for c in self.chunks if c.state in states)

    @property
    def created(self) -> int:
        return sum(c.created for c in self.chunks if c.state is ChunkState.LODGED)

    def remaining(self) -> list[Chunk]:
        """Chunks "Send remaining" would send (uncertain ones are looked up first)."""
        return [
            c
            for c in self.chunks
            if c.state in (ChunkState.NOT_SENT, ChunkState.FAILED, ChunkState.UNCERTAIN)
        ]

    @property
    def finished(self) -> bool:
        return not self.sending and not self.remaining()

    def follow_again(self) -> None:
        """The operator asked to follow again: requests given up on are asked about anew."""
        for chunk in self.chunks:
            if chunk.state is ChunkState.LODGED and not chunk.complete:
                chunk.status_failures = 0
                chunk.note = ""

    def following_due(self) -> list[Chunk]:
        return [
            c
            for c in self.chunks
            if c.state is ChunkState.LODGED
            and not c.complete
            and c.status_failures < FOLLOW_GIVE_UP
        ]


Changed = Callable[[Chunk], None]


def _uncertain(error: GatewayError | None) -> bool:
    return error is not None and error.maybe_processed


def apply_result(chunk: Chunk, result: ChunkResult) -> None:
    chunk.result = result
    if result.lodged:
        chunk.state = ChunkState.LODGED
        chunk.note = ""
        if result.message is not None:
            chunk.created = 1
        elif result.found:
            chunk.created = len(result.found)
        return
    error = result.error
    chunk.state = ChunkState.UNCERTAIN if _uncertain(error) else ChunkState.FAILED
    chunk.note = error.message if error is not None else "failed"


async def record(sender: OutboxSender, run: BatchRun) -> OutboxBatch:
    """Record the whole batch in the outbox (once), before any of it is sent."""
    if run.outbox is None:
        parts = [(c.index, c.recipients) for c in run.chunks]
        batch, entries = await sender.record_chunks(run.template, parts)
        by_index = {e.seq: e for e in entries}
        for chunk in run.chunks:
            entry = by_index[chunk.index]
            chunk.entry_id, chunk.planned_id = entry.id, entry.external_system_id or ""
        run.outbox = batch
    return run.outbox


async def send_chunks(
    sender: OutboxSender,
    run: BatchRun,
    chunks: Sequence[Chunk],
    stop: asyncio.Event,
    changed: Changed,
) -> None:
    """Send `chunks` a few at a time until done or `stop` is set; never one twice at once.

    The batch is recorded in the outbox first; "Send remaining" sends the chunks'
    entries again with the message as it is now (`run.template`).
    """
    queue = list(chunks)
    queue.reverse()
    for chunk in chunks:
        chunk.state = ChunkState.WAITING
        chunk.note = ""
        changed(chunk)
    run.sending = True
    try:
        first = run.outbox is None
        batch = await record(sender, run)
        entries = await sender.reopen(
            [c.entry_id for c in chunks if c.entry_id is not None],
            replace(run.template, recipients=()),
        )
        if first:
            log.info("batch recorded in the outbox as batch %d", batch.id)
        ready = {e.id: e for e in entries}
        async with sender.claimed(batch.id):
            await _lanes(sender, run, batch, queue, ready, stop, changed)
    except OutboxBusy as exc:
        run.halted = str(exc)
    except (StoreError, sqlite3.Error) as exc:
        run.halted = f"The outbox could not record the batch ({exc}), so nothing more was sent."
    finally:
        run.sending = False
        why = run.halted or "cancelled before it was sent"
        for chunk in queue:
            chunk.state, chunk.note = ChunkState.NOT_SENT, why
            changed(chunk)


async def _lanes(
    sender: OutboxSender,
    run: BatchRun,
    batch: OutboxBatch,
    queue: list[Chunk],
    ready: dict[int, OutboxEntry],
    stop: asyncio.Event,
    changed: Changed,
) -> None:
    async def lane() -> None:
        while queue and not stop.is_set() and not run.halted:
            chunk = queue.pop()
            chunk.state = ChunkState.SENDING
            chunk.sends += 1
            changed(chunk)
            entry = ready.get(chunk.entry_id) if chunk.entry_id is not None else None
            try:
                if entry is None:
                    stored = await asyncio.to_thread(sender.outbox.entry, chunk.entry_id or 0)
                    if stored is None:
                        raise GatewayError("This request is missing from the outbox; not sent.")
                    result = result_of(stored)
                else:
                    result = await sender.send_entry(batch, entry)
            except GatewayError as exc:
                chunk.state, chunk.note = ChunkState.FAILED, exc.message
            except asyncio.CancelledError:
                # Cut off on the wire (the tab is closing): the outcome is unknown (the
                # outbox keeps it in flight, settled on the next start).
                chunk.state, chunk.note = ChunkState.UNCERTAIN, "interrupted while sending"
                changed(chunk)
                raise
            else:
                result = replace(result, index=chunk.index)
                apply_result(chunk, result)
                if result.error is not None and _stops_everything(result.error):
                    run.halted = result.error.message
            changed(chunk)

    lanes = max(1, min(run.concurrency, MAX_CONCURRENCY, len(queue) or 1))
    async with asyncio.TaskGroup() as group:  # one lane failing stops the others
        for _ in range(lanes):
            group.create_task(lane())


def _stops_everything(error: GatewayError) -> bool:
    """Refusals every other chunk would meet too (the message, the options, the login)."""
    if isinstance(error, AuthenticationError):
        return True
    if not isinstance(error, ValidationError) or error.field is None:
        return False
    return not error.field.startswith("Recipient")


async def settle_uncertain(
    sender: OutboxSender, run: BatchRun, chunks: Sequence[Chunk], changed: Changed
) -> None:
    """Look uncertain chunks up by their ExternalSystemId: lodged, or surely not."""
    uncertain = [c for c in chunks if c.state is ChunkState.UNCERTAIN and c.entry_id is not None]
    batch = run.outbox
    if not uncertain or batch is None:
        return
    try:
        async with sender.claimed(batch.id):
            for chunk in uncertain:
                entry = await asyncio.to_thread(sender.outbox.entry, chunk.entry_id or 0)
                if entry is None:
                    continue
                settled = await sender.settle(batch, entry)
                if settled.outcome is Settled.LODGED:
                    now = await asyncio.to_thread(sender.outbox.entry, entry.id)
                    if now is not None:
                        apply_result(chunk, replace(result_of(now), index=chunk.index))
                elif settled.outcome is Settled.NOT_LODGED:
                    chunk.state, chunk.note = (
                        ChunkState.NOT_SENT,
                        "the gateway has no message of it",
                    )
                else:
                    chunk.note = settled.detail
                changed(chunk)
    except (StoreError, sqlite3.Error) as exc:
        for chunk in uncertain:
            chunk.note = f"still unknown (the outbox: {exc})"
            changed(chunk)


async def _created(service: GatewayService, chunk: Chunk) -> list[Message]:
    result = chunk.result
    assert result is not None
    if result.batch_code:
        return await service.status(batch_code=result.batch_code)
    return await service.status(external_system_id=result.external_system_id)


async def follow(
    service: GatewayService, run: BatchRun, stop: asyncio.Event, changed: Changed
) -> None:
    """Poll the status endpoint for each lodged chunk until its messages are all created."""
    gate = asyncio.Semaphore(FOLLOW_CONCURRENCY)

    async def look(chunk: Chunk) -> None:
        async with gate:
            if stop.is_set():
                return
            try:
                messages = await _created(service, chunk)
            except GatewayError as exc:
                log.info("status of request %d: %s", chunk.index, exc.message)
                chunk.status_failures += 1
                if chunk.status_failures >= FOLLOW_GIVE_UP:
                    chunk.note = f"progress unknown: {exc.message}"
                    changed(chunk)
                return
        chunk.status_failures = 0
        chunk.created = max(chunk.created, min(len(messages), len(chunk.recipients)))
        changed(chunk)

    while not stop.is_set():
        due = run.following_due()
        if not due and not run.sending:
            return
        await asyncio.gather(*(look(c) for c in due))
        if not run.following_due() and not run.sending:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), FOLLOW_INTERVAL)
