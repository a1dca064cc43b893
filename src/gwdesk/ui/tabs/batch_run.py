"""A batch send as a list of requests ("chunks") of at most 100, and what became of each.

Qt-free: the Batch tab renders it. Each chunk is sent with its own
`service.send(...)` call, a few at a time (the "lanes"). That is what makes Cancel
exact: cancelling lets the requests already on the wire finish (their outcome is
then known), and no lane takes another chunk. Cancelling one send of many chunks
would cut requests off mid-flight, leaving chunks that may or may not have been
lodged. It also keeps the GUI thread free: the service checks the numbers of each
send on the event loop, 100 at a time, not 100,000 at once.

A chunk whose answer was lost is settled by the service through its
ExternalSystemId; one it could not settle is marked uncertain and is looked up
again before "Send remaining" sends anything, so no recipient gets a message twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Final

from gwdesk.domain.models import Message
from gwdesk.gateway.errors import AuthenticationError, GatewayError, ValidationError
from gwdesk.gateway.sending import MAX_RECIPIENTS_PER_REQUEST, ChunkResult, Outgoing, chunked
from gwdesk.gateway.service import GatewayService

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

    @property
    def external_id(self) -> str:
        return self.result.external_system_id if self.result else ""

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


async def send_chunks(
    service: GatewayService,
    run: BatchRun,
    chunks: Sequence[Chunk],
    stop: asyncio.Event,
    changed: Changed,
) -> None:
    """Send `chunks` a few at a time until done or `stop` is set; never one twice at once."""
    queue = list(chunks)
    queue.reverse()
    for chunk in chunks:
        chunk.state = ChunkState.WAITING
        chunk.note = ""
        changed(chunk)

    async def lane() -> None:
        while queue and not stop.is_set() and not run.halted:
            chunk = queue.pop()
            chunk.state = ChunkState.SENDING
            chunk.sends += 1
            changed(chunk)
            outgoing = replace(run.template, recipients=chunk.recipients)
            try:
                outcome = await service.send(outgoing, concurrency=1)
            except GatewayError as exc:  # refused before any request: nothing was lodged
                chunk.state, chunk.note = ChunkState.FAILED, exc.message
                if _stops_everything(exc):
                    run.halted = exc.message
            except asyncio.CancelledError:
                # Cut off on the wire (the tab is closing): the outcome is unknown.
                chunk.state, chunk.note = ChunkState.UNCERTAIN, "interrupted while sending"
                changed(chunk)
                raise
            else:
                result = replace(outcome.chunks[0], index=chunk.index)
                apply_result(chunk, result)
                if result.error is not None and _stops_everything(result.error):
                    run.halted = result.error.message
            changed(chunk)

    run.sending = True
    try:
        lanes = max(1, min(run.concurrency, MAX_CONCURRENCY, len(queue) or 1))
        async with asyncio.TaskGroup() as group:  # one lane failing stops the others
            for _ in range(lanes):
                group.create_task(lane())
    finally:
        run.sending = False
        why = run.halted or "cancelled before it was sent"
        for chunk in queue:
            chunk.state, chunk.note = ChunkState.NOT_SENT, why
            changed(chunk)


def _stops_everything(error: GatewayError) -> bool:
    """Refusals every other chunk would meet too (the message, the options, the login)."""
    if isinstance(error, AuthenticationError):
        return True
    if not isinstance(error, ValidationError) or error.field is None:
        return False
    return not error.field.startswith("Recipient")


async def settle_uncertain(
    service: GatewayService, chunks: Sequence[Chunk], changed: Changed
) -> None:
    """Look uncertain chunks up by their ExternalSystemId: lodged, or surely not."""
    for chunk in chunks:
        if chunk.state is not ChunkState.UNCERTAIN or chunk.result is None:
            continue
        try:
            found = await service.status(external_system_id=chunk.result.external_system_id)
        except GatewayError as exc:
            chunk.note = f"still unknown ({exc.message})"
            changed(chunk)
            continue
        if found:
            apply_result(
                chunk, replace(chunk.result, found=tuple(found), resolved=True, error=None)
            )
        else:
            chunk.state, chunk.note = ChunkState.NOT_SENT, "the gateway has no message of it"
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
