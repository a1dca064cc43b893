"""Scheduled sends gwdesk holds: recorded now, sent at their time, changeable until then.

A send for later is recorded in the outbox at once (checked, screened for opt-outs,
costed like any send) but held (`store/outbox_holds.py`): nothing reaches the gateway
before its time, so the operator can still change its text, time or recipients, send it
now or cancel it. When its time comes, whoever serves the profile takes it (a console
that is open, or in team mode the office's receiver, `gwdesk listen --store`): taking
ends the hold in one transaction, so exactly one of them sends it, and from then on it
is an ordinary batch of the runner, opt-outs looked up again before each request,
written to history, resumed like any other if it stops half-way.

A one-desk profile sends only while a console (or `gwdesk scheduled run`) is running:
sends whose time passed while nothing ran are `missed`, and the console asks before
sending them late. The clock is the `Sending`'s (`now`), so tests move time by hand.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Final

from gwdesk.app.send_values import chunk_id, chunked, epoch_us, from_epoch_us
from gwdesk.app.sending import Outcome, Sending
from gwdesk.app.sms import Channel, SmsForm, SmsMessage, check_message, refuse
from gwdesk.domain.errors import ValidationError
from gwdesk.store.outbox import NewEntry, OutboxBatch, OutboxEntry, OutboxError

MISSED_AFTER: Final = timedelta(minutes=2)
"""A send more than this late when a console opens was missed (asked before it goes)."""
NAP: Final = timedelta(seconds=30)
"""The longest wait between looks at the schedule: another desk's change is seen by then."""
FURTHEST: Final = timedelta(days=366)
"""How far ahead a send may be scheduled."""


@dataclass(frozen=True, slots=True)
class ScheduledSend:
    """A held send as the Scheduled view and `gwdesk scheduled` show it."""

    batch_id: int
    due: datetime | None
    """When it goes (None: the time in its record cannot be read; it waits for the
    operator)."""
    text: str
    recipients: tuple[str, ...]
    operator: str
    """Who scheduled it."""
    created: datetime
    message: SmsMessage | None
    """The message it sends (None: its record cannot be read, so it is never sent)."""


class ScheduledSends:
    """One profile's scheduled sends (see the module docstring)."""

    def __init__(self, sending: Sending) -> None:
        self.sending = sending
        self.runner = sending.runner
        self.outbox = sending.runner.outbox
        self.changed = ScheduleChanged()
        """Set when this desk changes the schedule, so that `serve` looks again at once
        (and its `listeners` told: the console's Scheduled view reads it again)."""

    def now(self) -> datetime:
        return self.sending.now()

    # ---- scheduling and changing -----------------------------------------------------------

    async def schedule(
        self, message: SmsMessage, numbers: Sequence[str], at: datetime
    ) -> ScheduledSend:
        """Record a checked REST message to `numbers`, held until `at` (opted-out numbers
        left out now, and looked up again when it goes)."""
        due = self.check_time(at)
        if message.channel is not Channel.REST_SMS:
            raise refuse("gwdesk schedules REST SMS only.", "SendAt")
        batch, entries = await self.sending.record_list(
            replace(message, send_at=None), numbers, held_until=due
        )
        self.changed.set()
        return _shown(batch, entries)

    def check_time(self, at: datetime) -> datetime:
        """A send's time as the schedule keeps it (UTC), or the refusal to show at SendAt."""
        if at.tzinfo is None:
            raise refuse("Give the time with its zone.", "SendAt")
        now = self.now()
        if at <= now:
            raise refuse("That time has passed: pick a later one, or send now.", "SendAt")
        if at - now > FURTHEST:
            raise refuse("A send can be scheduled up to a year ahead.", "SendAt")
        return at.astimezone(UTC)

    async def listed(self) -> list[ScheduledSend]:
        """This account's held sends, soonest first."""
        batches = await self.runner.db(self.outbox.batches, gateway=self.runner.account, held=True)
        found = [_shown(b, await self.runner.db(self.outbox.entries, b.id)) for b in batches]
        return sorted(found, key=lambda s: (s.due is not None, s.due or s.created, s.batch_id))

    async def show(self, batch_id: int) -> ScheduledSend:
        batch = await self.runner.db(self.outbox.batch, batch_id)
        if batch is None or batch.held_until_us is None or batch.gateway != self.runner.account:
            raise OutboxError(f"No send {batch_id} is scheduled on this account.")
        return _shown(batch, await self.runner.db(self.outbox.entries, batch_id))

    async def retime(self, batch_id: int, at: datetime) -> ScheduledSend:
        await self.show(batch_id)
        batch = await self.runner.db(self.outbox.retime, batch_id, epoch_us(self.check_time(at)))
        self.changed.set()
        return _shown(batch, await self.runner.db(self.outbox.entries, batch_id))

    async def rewrite_text(self, batch_id: int, text: str) -> ScheduledSend:
        """Give a held send another text, checked as the Send tab checks it."""
        held = await self.show(batch_id)
        message = _message(held)
        form = SmsForm(
            text=text,
            sender=message.source or "",
            reply=(message.reply_type, message.reply_path or "") if message.reply_type else None,
            external_id=message.external_id or "",
            tags=message.tags or "",
            marketing=message.marketing,
            factual=message.factual,
        )
        checked = check_message(form, self.sending.region, self.now(), self.sending.compliance)
        batch, entries = await self.runner.db(
            self.outbox.rewrite, batch_id, label=checked.text[:80], body=checked.to_json()
        )
        self.changed.set()
        return _shown(batch, entries)

    async def rewrite_recipients(self, batch_id: int, numbers: Sequence[str]) -> ScheduledSend:
        """Send a held send to other (checked) numbers instead; opted-out ones left out."""
        held = await self.show(batch_id)
        message = _message(held)
        kept = list(dict.fromkeys(numbers))
        if self.sending.guard is not None and kept:
            kept = list((await self.sending.guard.screen(kept, factual=message.factual)).kept)
        if not kept:
            raise ValidationError(
                "None of those numbers may be texted: nothing was changed.",
                field="Recipients",
                status=None,
            )
        held_batch = await self.runner.db(self.outbox.batch, batch_id)
        if held_batch is None:
            raise OutboxError(f"No send {batch_id} is scheduled on this account.")
        send_id = held_batch.send_id
        entries = [
            NewEntry(seq, part, message.to_json(), message.external_id or chunk_id(send_id, seq),
                     own_id=not message.external_id)
            for seq, part in enumerate(chunked(kept), start=1)
        ]  # fmt: skip
        batch, rewritten = await self.runner.db(
            self.outbox.rewrite, batch_id, label=held_batch.label, entries=entries
        )
        self.changed.set()
        return _shown(batch, rewritten)

    async def cancel(self, batch_id: int, who: str = "") -> int:
        """Cancel a held send: nothing of it is sent; the requests it would have made."""
        await self.show(batch_id)
        by = f" by {who}" if who else ""
        count = await self.runner.db(
            self.outbox.cancel, batch_id, f"cancelled{by} before its time; never sent"
        )
        self.changed.set()
        return count

    # ---- sending ---------------------------------------------------------------------------

    async def send_now(self, batch_id: int) -> Outcome:
        """Send a held send at once (the operator asked)."""
        held = await self.show(batch_id)
        if not await self.runner.db(self.outbox.take, batch_id, None):
            raise OutboxError("This scheduled send is no longer waiting: someone took it.")
        self.changed.set()
        return await self._run(held)

    async def missed(self) -> list[ScheduledSend]:
        """Held sends whose time passed more than `MISSED_AFTER` ago: nothing was running
        to send them (a one-desk profile with its console closed)."""
        late = self.now() - MISSED_AFTER
        return [s for s in await self.listed() if s.due is not None and s.due <= late]

    async def run_due(self, since: datetime | None = None) -> list[Outcome]:
        """Send every held send whose time has come (only those due at or after `since`
        when given: the missed ones the operator chose to review stay held), each taken
        first, so that of every desk and receiver doing this, one sends it."""
        now = self.now()
        outcomes = []
        after = 0 if since is None else epoch_us(since)
        due_now = await self.runner.db(
            self.outbox.due, self.runner.account, epoch_us(now), since_us=after
        )
        for batch in due_now:
            due = _time(batch.held_until_us)
            if since is not None and (due is None or due < since):
                continue
            if not await self.runner.db(self.outbox.take, batch.id, epoch_us(now)):
                continue  # another desk or the receiver took it, or it changed meanwhile
            entries = await self.runner.db(self.outbox.entries, batch.id)
            outcomes.append(await self._run(_shown(batch, entries)))
        return outcomes

    async def next_due(self, since: datetime | None = None) -> datetime | None:
        """When the next held send is due (of those due at or after `since`, when given:
        the missed ones held for the operator are not waited for)."""
        after = 0 if since is None else epoch_us(since)
        return _time(
            await self.runner.db(self.outbox.next_due_us, self.runner.account, since_us=after)
        )

    async def serve(
        self,
        stop: asyncio.Event,
        *,
        since: datetime | None = None,
        told: Callable[[Outcome], object] | None = None,
    ) -> None:
        """Send held sends as they fall due until `stop` is set (a console while it is
        open, the receiver): wakes at the next one's time, at least every `NAP`, and at
        once when this desk changes the schedule (`changed`)."""
        while not stop.is_set():
            self.changed.clear()
            for outcome in await self.run_due(since):
                if told is not None:
                    told(outcome)
            upcoming = await self.next_due(since)
            wait = NAP if upcoming is None else min(NAP, max(upcoming - self.now(), timedelta()))
            await _first(stop, self.changed, wait.total_seconds())

    async def _run(self, held: ScheduledSend) -> Outcome:
        message = _message(held)
        batch = await self.runner.db(self.outbox.batch, held.batch_id)
        assert batch is not None
        entries = await self.runner.db(self.outbox.entries, held.batch_id)
        return await self.sending.run_list(batch, entries, message)


class ScheduleChanged(asyncio.Event):
    """`ScheduledSends.changed`: the event `serve` waits on, which also tells each of its
    `listeners` when it is set (on the loop's thread)."""

    def __init__(self) -> None:
        super().__init__()
        self.listeners: list[Callable[[], object]] = []

    def set(self) -> None:
        super().set()
        for listener in tuple(self.listeners):
            listener()


def _shown(batch: OutboxBatch, entries: Sequence[OutboxEntry]) -> ScheduledSend:
    message: SmsMessage | None = None
    if entries and not any(e.damaged for e in entries):
        with contextlib.suppress(ValueError):
            message = SmsMessage.from_json(entries[0].body)
    return ScheduledSend(
        batch_id=batch.id,
        due=_time(batch.held_until_us),
        text=message.text if message is not None else batch.label,
        recipients=tuple(n for e in entries for n in e.recipients),
        operator=batch.operator,
        created=from_epoch_us(batch.created_us),
        message=message,
    )


def _message(held: ScheduledSend) -> SmsMessage:
    if held.message is None:
        raise OutboxError(
            "This scheduled send's record cannot be read, so it is never sent: cancel it."
        )
    return held.message


def _time(us: int | None) -> datetime | None:
    return None if us is None or us < 0 else from_epoch_us(us)


async def _first(stop: asyncio.Event, changed: asyncio.Event, seconds: float) -> None:
    """Wait until `stop` or `changed` is set, or `seconds` pass."""
    waits = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(changed.wait())]
    try:
        await asyncio.wait(waits, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()
