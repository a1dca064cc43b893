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
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Final

from gwdesk.app.pacing import Pace
from gwdesk.app.personal import PersonalPlan
from gwdesk.app.send_values import chunk_id, chunked, new_send_id
from gwdesk.app.sending import Outcome, Sending
from gwdesk.app.sms import Channel, SmsForm, SmsMessage, check_message, refuse
from gwdesk.domain.errors import GatewayError, InputRefused, ValidationError
from gwdesk.domain.numbers import display
from gwdesk.domain.recurrence import Recurrence, RecurrenceKind
from gwdesk.domain.wire_time import epoch_us, from_epoch_us
from gwdesk.store.database import StoreError
from gwdesk.store.outbox import NewEntry, OutboxBatch, OutboxEntry, OutboxError
from gwdesk.store.outbox_holds import GONE, Repeat
from gwdesk.store.outbox_rows import body_json

log = logging.getLogger("gwdesk.app.scheduled")
MISSED_AFTER: Final = timedelta(minutes=2)
"""A send more than this late when a console opens was missed (asked before it goes)."""
DUE_LANES: Final = 8
"""Due sends sent at once (each a batch of its own: a crowd falling due in one minute)."""
DUE_PAGE: Final = 200
"""Due sends read at a time."""
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
    """The message it sends (None: its record cannot be read, so it is never sent); a
    personal send's first text."""
    personal: bool = False
    """Each recipient gets a text of their own (a template filled per recipient): its
    text and recipients cannot be changed, only its time."""
    every: Recurrence | None = None
    """A recurring send's rule (this is its next occurrence); None for a one-off."""


@dataclass(frozen=True, slots=True)
class Later:
    """How a send for later goes: gwdesk holds it until `at`; then again by `every`, or
    spread at `pace` (a list)."""

    at: datetime
    every: Recurrence | None = None
    pace: Pace | None = None


class ScheduledSends:
    """One profile's scheduled sends (see the module docstring)."""

    def __init__(self, sending: Sending) -> None:
        self.sending = sending
        self.runner = sending.runner
        self.outbox = sending.runner.outbox
        self.changed = sending.schedule_changed
        """Set when this desk changes the schedule, so that `serve` looks again at once
        (and its `listeners` told: the console's Scheduled view reads it again); the
        `Sending`'s, so every flow over it shares it."""

    def now(self) -> datetime:
        return self.sending.now()

    # ---- scheduling and changing -----------------------------------------------------------

    async def schedule(
        self,
        message: SmsMessage,
        numbers: Sequence[str],
        at: datetime,
        every: Recurrence | None = None,
    ) -> ScheduledSend:
        """Record a checked REST message to `numbers`, held until `at` (opted-out numbers
        left out now, and looked up again when it goes); `every`: again by that rule (each
        occurrence a scheduled send of its own, recorded as the one before it is taken),
        whose first occurrence is `at`."""
        due = self.check_time(at)
        if message.channel is not Channel.REST_SMS:
            raise refuse("gwdesk schedules REST SMS only.", "SendAt")
        batch, entries = await self.sending.record_list(
            replace(message, send_at=None), numbers, held_until=due, recurrence=_rule(every, due)
        )
        self.changed.set()
        return _shown(batch, entries)

    async def schedule_in_hours(
        self,
        message: SmsMessage,
        numbers: Sequence[str],
        at: datetime,
        every: Recurrence | None = None,
    ) -> list[ScheduledSend]:
        """`schedule`, kept to the recipients' sending hours (`sending_hours.py`): one
        scheduled send per moment its recipients may first be reached at or after `at`.
        A recurring send is not split: its time must suit every recipient's hours."""
        due = self.check_time(at)
        hours = await self.sending.hours_for(numbers)
        parts = hours.split(numbers, due) if hours is not None else [(due, tuple(numbers))]
        if every is not None and parts != [(due, tuple(numbers))]:
            raise refuse(
                "That time is outside some recipients' sending hours, and a recurring send "
                "goes to all of them at once: pick a time inside their hours.",
                "SendAt",
            )
        return [await self.schedule(message, part, moment, every) for moment, part in parts]

    async def schedule_paced(
        self, message: SmsMessage, numbers: Sequence[str], start: datetime, pace: Pace
    ) -> list[ScheduledSend]:
        """A list spread over time (`pacing.py`): parts of `pace.chunk` recipients, one
        every `pace.interval` from `start` (the pace clock stopped outside the sending
        hours), each held as a scheduled send of its own and kept to its recipients'
        hours like any send for later."""
        due = self.check_time(start)
        hours = await self.sending.hours_for(numbers)
        parts = chunked(list(dict.fromkeys(numbers)), pace.chunk)
        helds = []
        for moment, part in zip(pace.times(due, len(parts), hours), parts, strict=True):
            split = hours.split(part, moment) if hours is not None else [(moment, part)]
            for when, numbers_then in split:
                helds.append(await self.schedule(message, numbers_then, when))
        return helds

    async def schedule_personal(
        self, plan: PersonalPlan, at: datetime, every: Recurrence | None = None
    ) -> ScheduledSend:
        """Record a personal send's plan (a text per recipient), held until `at` (`every`
        as for `schedule`)."""
        due = self.check_time(at)
        batch, entries = await self.sending.record_personal(
            plan, held_until=due, recurrence=_rule(every, due)
        )
        self.changed.set()
        return _shown(batch, entries)

    def rule(self, repeat: str, first: datetime) -> Recurrence | None:
        """A send's repeat (`SmsForm.repeat`) as a rule on the profile's clock, first at
        `first` (None: once); refused at SendAt when it cannot be kept."""
        if not repeat:
            return None
        zone = self.runner.gateway.profile.timezone
        try:
            return Recurrence(RecurrenceKind(repeat), first, zone)
        except (InputRefused, ValueError) as exc:
            raise refuse(f"It cannot repeat {repeat}: {exc}", "SendAt") from None

    def check_time(self, at: datetime) -> datetime:
        return check_hold(at, self.now())

    def check_form(self, form: SmsForm) -> None:
        """A composed send's time for later (`hold_until`, `repeat`), checked at the click
        for the Send and Batch tabs alike, each refusal at SendAt: kept by gwdesk or by
        the gateway, not both; REST only; a time that can be kept; a repeat that can be
        kept, from a first time."""
        if form.hold_until is None:
            if form.repeat:
                raise refuse("A send repeats from its first time: schedule it.", "SendAt")
            return
        if form.send_at is not None:
            raise refuse("Schedule with gwdesk or with the gateway, not both.", "SendAt")
        if form.channel is not Channel.REST_SMS:
            raise refuse("gwdesk schedules REST SMS only.", "SendAt")
        self.check_time(form.hold_until)
        self.rule(form.repeat, form.hold_until)

    async def listed(self) -> list[ScheduledSend]:
        """This account's held sends, soonest first."""
        batches = await self.runner.db(self.outbox.batches, gateway=self.runner.account, held=True)
        found = [_shown(b, await self.runner.db(self.outbox.entries, b.id)) for b in batches]
        return sorted(found, key=lambda s: (s.due is not None, s.due or s.created, s.batch_id))

    async def show(self, batch_id: int) -> ScheduledSend:
        """One held send; `OutboxError` when there is none by that id on this account, or
        it is no longer waiting (sent, being sent, or cancelled)."""
        return _shown(*await self._held(batch_id))

    async def _held(self, batch_id: int) -> tuple[OutboxBatch, list[OutboxEntry]]:
        """`show`'s batch and its requests, as read (the same refusals)."""
        batch = await self.runner.db(self.outbox.batch, batch_id)
        if batch is None or batch.gateway != self.runner.account:
            raise OutboxError(f"No send #{batch_id} is scheduled on this account.")
        if batch.held_until_us is None:
            raise OutboxError(
                f"Send #{batch_id} is no longer waiting: it was sent, is being sent, or was "
                "cancelled. Nothing was changed."
            )
        return batch, await self.runner.db(self.outbox.entries, batch_id)

    async def retime(self, batch_id: int, at: datetime) -> ScheduledSend:
        await self.show(batch_id)
        batch = await self.runner.db(self.outbox.retime, batch_id, epoch_us(self.check_time(at)))
        self.changed.set()
        return _shown(batch, await self.runner.db(self.outbox.entries, batch_id))

    async def rewrite_text(self, batch_id: int, text: str) -> ScheduledSend:
        """Give a held send another text, checked as the Send tab checks it."""
        checked = self._checked_text(await self.show(batch_id), text)
        batch, entries = await self.runner.db(
            self.outbox.rewrite, batch_id, label=checked.text[:80], body=checked.to_json()
        )
        self.changed.set()
        return _shown(batch, entries)

    def _checked_text(self, held: ScheduledSend, text: str) -> SmsMessage:
        """`held`'s message with another text, checked as the Send tab checks it."""
        message = _same_for_all(held)
        form = SmsForm(
            text=text,
            sender=message.source or "",
            reply=(message.reply_type, message.reply_path or "") if message.reply_type else None,
            external_id=message.external_id or "",
            tags=message.tags or "",
            marketing=message.marketing,
            factual=message.factual,
        )
        return check_message(form, self.sending.region, self.now(), self.sending.compliance)

    async def edit(
        self,
        batch_id: int,
        *,
        text: str | None = None,
        at: datetime | None = None,
        numbers: Sequence[str] | None = None,
    ) -> ScheduledSend:
        """Change any of a held send's text, time and recipients (`gwdesk scheduled
        edit`): the time and the text are checked before anything is written, and the
        recipients (which may all have opted out) are changed first, so that a refusal
        leaves the send as it was."""
        held = await self.show(batch_id)
        if text is None and at is None and numbers is None:
            raise ValidationError(
                "Say what to change: the text, the time or the recipients.", status=None
            )
        if at is not None:
            self.check_time(at)
        if text is not None:
            self._checked_text(held, text)
        if numbers is not None:
            held = await self.rewrite_recipients(batch_id, numbers)
        if text is not None:
            held = await self.rewrite_text(batch_id, text)
        if at is not None:
            held = await self.retime(batch_id, at)
        return held

    async def rewrite_recipients(self, batch_id: int, numbers: Sequence[str]) -> ScheduledSend:
        """Send a held send to other (checked) numbers instead; opted-out ones left out."""
        held_batch, held_entries = await self._held(batch_id)
        message = _same_for_all(_shown(held_batch, held_entries))
        kept = list(dict.fromkeys(numbers))
        if self.sending.guard is not None and kept:
            kept = list((await self.sending.guard.screen(kept, factual=message.factual)).kept)
        if not kept:
            raise ValidationError(
                "None of those numbers may be texted: nothing was changed.",
                field="Recipients",
                status=None,
            )
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
        await self.show(batch_id)
        if not await self.runner.db(self.outbox.take, batch_id, None):
            raise OutboxError("This scheduled send is no longer waiting: someone took it.")
        self.changed.set()
        return await self._run(batch_id)

    async def missed(self) -> list[ScheduledSend]:
        """Held sends whose time passed more than `MISSED_AFTER` ago: nothing was running
        to send them (a one-desk profile with its console closed)."""
        late = self.now() - MISSED_AFTER
        return [s for s in await self.listed() if s.due is not None and s.due <= late]

    async def run_due(
        self, since: datetime | None = None, within: timedelta | None = None
    ) -> list[Outcome]:
        """Send every held send whose time has come, each taken first, so that of every
        desk and receiver doing this, one sends it; `DUE_LANES` at a time (each its own
        batch under its own claim), soonest first. Only those due at or after `since`
        when given (the missed ones the operator chose to review stay held), and only
        those late by at most `within` (the receiver: one that came back after an
        outage leaves the sends it missed to a person, as a console asks about them)."""
        now = self.now()
        since = _floor(since, within, now)
        after = 0 if since is None else epoch_us(since)
        lanes = asyncio.Semaphore(DUE_LANES)

        async def send(batch: OutboxBatch) -> Outcome | None:
            async with lanes:
                try:
                    return await self._run(batch.id)
                except (GatewayError, StoreError) as exc:  # left open: resumed as any batch is
                    log.warning("scheduled send %s stopped: %s", batch.id, exc)
                    return None

        outcomes: list[Outcome] = []
        while True:  # a page at a time, taken in one transaction: the next page differs
            taken = await self.runner.db(
                self.outbox.take_due,
                self.runner.account,
                epoch_us(now),
                since_us=after,
                limit=DUE_PAGE,
                then=lambda batch: _next(batch, _time(batch.held_until_us)),
            )
            results = await asyncio.gather(*map(send, taken))
            outcomes.extend(o for o in results if o is not None)
            if len(taken) < DUE_PAGE:
                return outcomes

    async def run_on_time(self) -> tuple[list[Outcome], list[ScheduledSend]]:
        """Send, once, every held send that is due and not missed (`gwdesk scheduled run`
        without `--missed`); the missed ones, left held for the operator, returned with
        the outcomes."""
        missed = await self.missed()
        if not missed:
            return await self.run_due(), []
        latest = max(s.due for s in missed if s.due is not None)
        # Every send due at or before the latest missed one was missed too (same clock).
        return await self.run_due(since=latest + timedelta(microseconds=1)), missed

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
        within: timedelta | None = None,
        told: Callable[[Outcome], object] | None = None,
    ) -> None:
        """Send held sends as they fall due until `stop` is set (a console while it is
        open, the receiver; `since` and `within` as for `run_due`): wakes at the next
        one's time, at least every `NAP`, and at once when this desk changes the
        schedule (`changed`)."""
        while not stop.is_set():
            self.changed.clear()
            try:
                for outcome in await self.run_due(since, within):
                    if told is not None:
                        told(outcome)
            except (GatewayError, StoreError) as exc:  # the gateway or store away: again later
                log.warning("scheduled sends not sent now: %s", exc)
            upcoming = await self.next_due(_floor(since, within, self.now()))
            wait = NAP if upcoming is None else min(NAP, max(upcoming - self.now(), timedelta()))
            await _first(stop, self.changed, wait.total_seconds())

    async def _run(self, batch_id: int) -> Outcome:
        """Send a taken send as an ordinary list: the same text to all, or each entry its
        own (a personal send; its history row shows the template). Read once, here."""
        batch = await self.runner.db(self.outbox.batch, batch_id)
        if batch is None:
            raise OutboxError(GONE)
        entries = await self.runner.db(self.outbox.entries, batch_id)
        held = _shown(batch, entries)
        message = _message(held)
        if held.personal:
            shown = replace(message, text=batch.label)
            return await self.sending.run_personal(batch, entries, shown)
        return await self.sending.run_list(batch, entries, message)


def scheduled_line(held: ScheduledSend) -> str:
    """What a console says once a send is scheduled: when (the operator's clock), to whom,
    and where it waits."""
    count = len(held.recipients)
    to = display(held.recipients[0]) if count == 1 else f"{count:,} recipients"
    when = "a time that cannot be read"
    if held.due is not None:
        local = held.due.astimezone()
        when = f"{local:%a %d %b %H:%M} (your time)"
    return (
        f"Scheduled for {to} at {when}: gwdesk holds it until then; change or cancel it "
        "in the Scheduled tab."
    )


def _floor(since: datetime | None, within: timedelta | None, now: datetime) -> datetime | None:
    """The earliest time a due send may have to be sent (`run_due`'s `since` and
    `within`): the later of `since` and `within` before now; None: any."""
    if within is None:
        return since
    return now - within if since is None else max(since, now - within)


def _rule(every: Recurrence | None, first: datetime) -> str:
    """A recurrence as the outbox keeps it ('' for a one-off); its first occurrence must
    be the send's own time."""
    if every is None:
        return ""
    if every.first != first:
        raise refuse("A recurring send starts at its first occurrence.", "SendAt")
    return json.dumps(every.to_json())


def recurrence_of(batch: OutboxBatch) -> Recurrence | None:
    """A held batch's rule (None: a one-off, or a rule that cannot be read: it then ends
    with this occurrence, rather than repeat by a guess)."""
    if not batch.recurrence:
        return None
    try:
        return Recurrence.from_json(json.loads(batch.recurrence))
    except (ValueError, TypeError):
        return None


def _next(batch: OutboxBatch, due: datetime | None) -> Repeat | None:
    """A recurring batch's next occurrence, recorded as this one is taken."""
    rule = recurrence_of(batch)
    following = rule.after(due) if rule is not None and due is not None else None
    return None if following is None else Repeat(epoch_us(following), new_send_id())


def schedule_line(helds: Sequence[ScheduledSend], pace: Pace | None = None) -> str:
    """`scheduled_line`, for a send kept to sending hours in one part or several, or
    spread at `pace`."""
    if pace is not None and helds:
        times = [h.due for h in helds if h.due is not None]
        count = sum(len(h.recipients) for h in helds)
        return (
            f"Spread {count:,} recipients in {len(helds):,} parts at {pace.describe()}, from "
            f"{min(times).astimezone():%a %d %b %H:%M} to {max(times).astimezone():%a %d %b %H:%M} "
            "(your time): gwdesk holds the parts until then; see them in the Scheduled tab."
        )
    if len(helds) == 1:
        return scheduled_line(helds[0])
    parts = "; ".join(
        f"{len(h.recipients):,} at {h.due.astimezone():%a %d %b %H:%M}" for h in helds if h.due
    )
    return (
        f"Scheduled in {len(helds)} parts by the recipients' sending hours ({parts}, your "
        "time): gwdesk holds them until then; change or cancel them in the Scheduled tab."
    )


def check_hold(at: datetime, now: datetime) -> datetime:
    """A send's time as the schedule keeps it (UTC), or the refusal to show at SendAt."""
    if at.tzinfo is None:
        raise refuse("Give the time with its zone.", "SendAt")
    if at <= now:
        raise refuse("That time has passed: pick a later one, or send now.", "SendAt")
    if at - now > FURTHEST:
        raise refuse("A send can be scheduled up to a year ahead.", "SendAt")
    return at.astimezone(UTC)


def _shown(batch: OutboxBatch, entries: Sequence[OutboxEntry]) -> ScheduledSend:
    message: SmsMessage | None = None
    if entries and not any(e.damaged for e in entries):
        with contextlib.suppress(ValueError):
            read = [SmsMessage.from_json(e.body) for e in entries]  # each must read
            message = read[0]
    personal = len({body_json(e.body) for e in entries}) > 1
    return ScheduledSend(
        batch_id=batch.id,
        due=_time(batch.held_until_us),
        text=message.text if message is not None else batch.label,
        recipients=tuple(n for e in entries for n in e.recipients),
        operator=batch.operator,
        created=from_epoch_us(batch.created_us),
        message=message,
        personal=personal,
        every=recurrence_of(batch),
    )


def _same_for_all(held: ScheduledSend) -> SmsMessage:
    """The message of a send whose text and recipients may change (not a personal one)."""
    if held.personal:
        raise OutboxError(
            "Each recipient of this send gets a text of their own, made from a template: "
            "only its time can change. Cancel it and schedule it again to change more."
        )
    return _message(held)


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
