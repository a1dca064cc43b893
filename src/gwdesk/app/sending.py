"""Sending, as the console and the command line ask for it: one use case per kind of send.

`Sending` is one profile's: each of its methods takes what was composed, checks it
once (`gwdesk.app.sms`, `gwdesk.app.media`), records it in the outbox, has the
`OutboxRunner` send it, writes the send history and returns one typed `Outcome`.
The Send tab, the Fax / MMS tab, a conversation's reply box, the Batch tab and
`gwdesk send`, `mms`, `fax` and `wap` all come through here (a single send by way of
its flow, `gwdesk.app.single_send`, which decides what it asks), and only render what
comes back. A refusal found by the checks is raised (`ValidationError`, naming the
field) before anything is recorded; anything after that is in the outcome.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from gwdesk.app.media import (
    Lodged,
    MediaForm,
    MediaMessage,
    Mode,
    check_media,
    failure_entry,
    history_entries,
    lodge_call,
    outbox_description,
)
from gwdesk.app.optouts import FACTUAL_NOTE, OptedOutError, OptOutGuard
from gwdesk.app.outbox import OutboxRunner
from gwdesk.app.personal import Cost, PersonalPlan, Recipients, cost_of, plan_personal
from gwdesk.app.recovery import Recovery
from gwdesk.app.send_history import list_history, message_history
from gwdesk.app.send_values import (
    DEFAULT_LANES,
    Attempt,
    Changed,
    RequestOutcome,
    Requests,
    RunReport,
    Transmit,
    chunked,
)
from gwdesk.app.sending_hours import SendingHours
from gwdesk.app.sms import Channel, Compliance, SmsForm, SmsMessage, check_sms, recipient_field
from gwdesk.domain.errors import GatewayError, ValidationError
from gwdesk.domain.models import LodgeResult, LodgeText
from gwdesk.domain.numbers import Rejected
from gwdesk.domain.templates import Template
from gwdesk.store.history import HistoryEntry, HistoryStore
from gwdesk.store.outbox import EntryState, OutboxBatch, OutboxEntry

Recorded = Callable[[OutboxBatch], None]
HistoryWrite = concurrent.futures.Future[HistoryEntry]
"""A history row handed to the store's writer thread: done once it is in the store."""


@dataclass(frozen=True, slots=True)
class SingleMessage:
    """A checked message to one recipient: what `send_message` sends."""

    message: SmsMessage
    recipient: str


@dataclass(frozen=True, slots=True)
class Outcome(Requests):
    """What one send came to: its batch in the outbox, each request's `RequestOutcome` (the
    outbox's rows as they now stand), and the history rows it wrote."""

    batch: OutboxBatch
    sent: tuple[RequestOutcome, ...]
    halted: str = ""
    cancelled: bool = False
    history: tuple[HistoryEntry, ...] = ()
    written: tuple[HistoryWrite, ...] = field(default=(), repr=False)
    """The history rows' writes (the store's writer thread does them)."""
    lodged_media: tuple[Lodged, ...] = ()
    """An MMS or fax: what Lodge said of each message."""
    rejected: tuple[Rejected, ...] = ()
    duplicates: int = 0

    @property
    def excluded(self) -> tuple[str, ...]:
        """Numbers left out because they had opted out."""
        return self.batch.excluded


HoursSource = Callable[[Sequence[str]], Awaitable[SendingHours | None]]


class ScheduleChanged(asyncio.Event):
    """`Sending.schedule_changed`: the event a desk's sender of due sends waits on
    (`scheduled.py`), which also tells each of its `listeners` when it is set (on the
    loop's thread: the console's Scheduled view reads the schedule again)."""

    def __init__(self) -> None:
        super().__init__()
        self.listeners: list[Callable[[], object]] = []

    def set(self) -> None:
        super().set()
        for listener in tuple(self.listeners):
            listener()


class Sending:
    """One profile's sends (see the module docstring)."""

    def __init__(
        self,
        runner: OutboxRunner,
        history: HistoryStore | None,
        region: str,
        *,
        compliance: Compliance | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.runner = runner
        self.recovery = Recovery(runner)
        self.history = history
        self.region = region
        self.compliance = compliance or Compliance()
        """The profile's marketing rules: the default and the opt-out instruction."""
        self.now = now
        self.hours_source: HoursSource | None = None
        """The office's sending hours for a list of recipients (`sending_hours.py`); None:
        no store says them, so nothing is held for them."""
        self.schedule_changed = ScheduleChanged()
        """Set when a send is scheduled or a scheduled one changes (`scheduled.py`): the
        desk's sender of due sends looks again at once."""
        self.on_outcome: Callable[[Outcome], object] | None = None
        """Told every send's outcome as it ends (the console's session: the log sync
        and the credits follow sends); called on the loop the send ran on."""

    async def hours_for(self, numbers: Sequence[str]) -> SendingHours | None:
        """The sending hours that apply to `numbers` (None: off, or no store)."""
        source = self.hours_source
        return None if source is None else await source(numbers)

    @property
    def guard(self) -> OptOutGuard | None:
        """The account's opt-out list (the runner asks it again before each request)."""
        return self.runner.guard

    def __repr__(self) -> str:
        return f"Sending({self.runner!r})"

    # ---- one message -------------------------------------------------------------------

    def check_message(self, form: SmsForm) -> SingleMessage:
        """Check a single message (at once, before any task starts: a form shows the
        refusal as the operator clicks); `send_message` takes what this returns."""
        message, recipient = check_sms(form, self.region, self.now(), self.compliance)
        if message.channel is not Channel.REST_SMS:
            self.runner.gateway.lodge  # noqa: B018 - a clear error when the profile has no Lodge
        return SingleMessage(message, recipient)

    async def send_message(
        self, form: SmsForm | SingleMessage, *, note: str = "", recorded: Recorded | None = None
    ) -> Outcome:
        """One SMS (REST or Lodge) or WAP push to one recipient, checked first unless
        `check_message` already did. `note` goes into the history row's detail;
        `recorded` is told the batch once it is in the outbox (a cancel settles it).

        The opt-out list is read once, here, just before the send is recorded: an
        opted-out recipient is refused with nothing recorded (`OptedOutError`), and the
        runner, told so, does not read it again a moment later."""
        single = form if isinstance(form, SingleMessage) else self.check_message(form)
        message, recipient = single.message, single.recipient
        if self.guard is not None:
            wire = recipient_field(message.channel)
            if await self.guard.check_one(recipient, wire, factual=message.factual):
                note = f"{FACTUAL_NOTE} {note}".strip()
        if message.channel is Channel.REST_SMS:
            batch, entries = await self.runner.record_sms(
                [(message, (recipient,))], label=message.text
            )
            _tell(recorded, batch)
            report = await self.runner.run(batch, entries, screened=True)
        else:
            batch, entries = await self.runner.record_lodge(
                message.channel.outbox, [recipient], message.to_json()
            )
            _tell(recorded, batch)
            report = await self.runner.run(batch, entries, transmit=self._lodge(message))
        rows = [message_history(message, sent, self.now(), note) for sent in report.sent]
        return self.outcome(report, rows)

    def _lodge(self, message: SmsMessage) -> Transmit:
        """The Lodge call of a Lodge SMS or WAP push entry."""

        async def transmit(_batch: OutboxBatch, entry: OutboxEntry) -> Attempt:
            lodge = self.runner.gateway.lodge
            try:
                answer: LodgeText | LodgeResult
                if message.channel is Channel.WAP_PUSH:
                    answer = await lodge.send_wap_push(
                        entry.recipients[0], message.wap_app, message.wap_url
                    )
                else:
                    answer = await lodge.send_sms(
                        entry.recipients[0],
                        message.text,
                        reply_type=message.reply_type,
                        reply_path=message.reply_path,
                    )
            except GatewayError as exc:
                return Attempt(error=exc)
            return lodge_attempt(answer)

        return transmit

    # ---- MMS and fax -------------------------------------------------------------------

    def check_media(self, form: MediaForm) -> MediaMessage:
        """Check an MMS or fax (at once, as `check_message`); `send_media` takes it."""
        message = check_media(form, self.region)
        self.runner.gateway.lodge  # noqa: B018 - a clear error when the profile has no Lodge
        return message

    async def send_media(
        self, form: MediaForm | MediaMessage, *, recorded: Recorded | None = None
    ) -> Outcome:
        """An MMS (files, URL, multi-MMS) or a fax, through Lodge (`recorded`: as for
        `send_message`)."""
        message = form if isinstance(form, MediaMessage) else self.check_media(form)
        lodge = self.runner.gateway.lodge
        if self.guard is not None and message.mode is not Mode.FAX:
            # An MMS reaches a phone: a STOP counts for it as for an SMS.
            found = await self.guard.lookup(message.recipients)
            if found:
                raise OptedOutError(next(iter(found.values())), media_field(message))
        batch, entries = await self.runner.record_lodge(
            message.mode.channel.lower(), message.recipients, outbox_description(message)
        )
        _tell(recorded, batch)

        async def transmit(_batch: OutboxBatch, _entry: OutboxEntry) -> Attempt:
            try:
                lodged = await lodge_call(lodge, message)
            except GatewayError as exc:
                return Attempt(error=exc)
            return media_attempt(lodged)

        report = await self.runner.run(batch, entries, transmit=transmit)
        at = self.now()
        sent = report.sent[0] if report.sent else None
        lodged = sent.answer if sent is not None and isinstance(sent.answer, list) else []
        if lodged:
            rows = history_entries(message, lodged, at)
        else:
            error = sent.error if sent is not None and sent.error else GatewayError("not sent")
            rows = [failure_entry(message, error, at)]
        return self.outcome(report, rows, lodged_media=tuple(lodged))

    # ---- lists -------------------------------------------------------------------------

    async def record_list(
        self,
        message: SmsMessage,
        numbers: Sequence[str],
        *,
        held_until: datetime | None = None,
        recurrence: str = "",
    ) -> tuple[OutboxBatch, list[OutboxEntry]]:
        """Record a checked list (the numbers were checked by the import) in requests of
        at most 100, before any of it is sent (held until `held_until`: `scheduled.py`)."""
        if message.channel is not Channel.REST_SMS:
            raise GatewayError("A list is sent over REST only.")
        excluded: tuple[str, ...] = ()
        if self.guard is not None:
            screened = await self.guard.screen(numbers, factual=message.factual)
            numbers, excluded = screened.kept, screened.excluded_numbers
            if not numbers and len(excluded) == 1:  # one recipient: say who and why
                raise OptedOutError(screened.excluded[0], "Recipients")
            if not numbers:
                raise ValidationError(
                    f"Every one of the {len(excluded):,} recipients has opted out; nothing was sent.",
                    field="Recipients",
                    status=None,
                )
        return await self.runner.record_sms(
            [(message, part) for part in chunked(numbers)],
            label=message.text,
            excluded=excluded,
            held_until=held_until,
            recurrence=recurrence,
        )

    async def send_list(
        self,
        message: SmsMessage,
        numbers: Sequence[str],
        *,
        lanes: int = DEFAULT_LANES,
        stop: asyncio.Event | None = None,
        on_change: Changed | None = None,
        rejected: Sequence[Rejected] = (),
        duplicates: int = 0,
    ) -> Outcome:
        """Record, then send a list (`gwdesk send`); the Batch tab records and runs apart,
        so that it can show the requests before they go."""
        batch, entries = await self.record_list(message, numbers)
        outcome = await self.run_list(
            batch, entries, message, lanes=lanes, stop=stop, on_change=on_change
        )
        return _with_check(outcome, rejected, duplicates)

    async def run_list(
        self,
        batch: OutboxBatch,
        entries: Sequence[OutboxEntry],
        message: SmsMessage,
        *,
        lanes: int = DEFAULT_LANES,
        stop: asyncio.Event | None = None,
        on_change: Changed | None = None,
    ) -> Outcome:
        """Send a recorded list's `entries` ("Send remaining" passes what is left).

        Entries whose outcome is unknown are settled by status first, never resent
        blindly; failed ones are sent again with `message` as it is now.
        """
        return await self._run_recorded(
            batch, entries, message, message, lanes=lanes, stop=stop, on_change=on_change
        )

    async def _run_recorded(
        self,
        batch: OutboxBatch,
        entries: Sequence[OutboxEntry],
        message: SmsMessage | None,
        shown: SmsMessage,
        *,
        lanes: int,
        stop: asyncio.Event | None,
        on_change: Changed | None,
    ) -> Outcome:
        """`run_list`, and `run_personal` (`message` None: each entry keeps its own text;
        `shown` is what the history row says was sent)."""
        unsettled = [e for e in entries if e.state in (EntryState.IN_FLIGHT, EntryState.UNKNOWN)]
        settled: dict[int, OutboxEntry] = {}
        if unsettled:
            async with self.runner.claimed(batch.id):
                for found in await self.recovery.settle(batch, unsettled):
                    settled[found.entry.id] = found.entry
                    if on_change is not None:
                        on_change(found.entry)
        current = [settled.get(e.id, e) for e in entries]
        body = None if message is None else message.to_json()
        # Entries just recorded with this message are ready as they are: reading a big
        # list back would only make a second copy of its recipients.
        waiting = {
            e.id
            for e in current
            if e.state is EntryState.PENDING
            and not e.reason
            and (body is None or dict(e.body) == body)
        }
        due = [
            e.id
            for e in current
            if e.state in (EntryState.PENDING, EntryState.FAILED) and e.id not in waiting
        ]
        reopened = {e.id: e for e in await self.runner.reopen(due, message)}
        if on_change is not None:
            for entry in reopened.values():  # failed ones are pending again, waiting their turn
                on_change(entry)
        ready = [
            e if e.id in waiting else reopened[e.id]
            for e in current
            if e.id in waiting or e.id in reopened
        ]
        report = await self.runner.run(batch, ready, lanes=lanes, stop=stop, on_change=on_change)
        rows = [
            list_history(shown, batch, report, await self._all(batch, current, report), self.now())
        ]
        return self.outcome(report, rows)

    # ---- personal messages -------------------------------------------------------------

    async def plan_personal(
        self, form: SmsForm, template: Template, recipients: Recipients
    ) -> PersonalPlan:
        """Make and check every recipient's text (on a worker thread), then leave out who
        opted out (unless the message is purely factual): what will be sent, before
        anything is. The options' refusal is raised (`ValidationError`) as a single
        send's is; each recipient's is in the plan."""
        plan = await asyncio.to_thread(
            plan_personal,
            form,
            template,
            recipients,
            self.region,
            now=self.now(),
            compliance=self.compliance,
        )
        if self.guard is not None and plan.messages:
            numbers = [m.recipient.number for m in plan.messages]
            screened = await self.guard.screen(numbers, factual=plan.message.factual)
            if not screened.factual:
                plan = plan.without(screened.excluded)
        return plan

    async def cost(self, plan: PersonalPlan) -> Cost:
        """What the send will cost, and whether the account's credits cover it (where the
        gateway reports credits); asked before sending."""
        return await self.cost_of_parts(plan.parts[2])

    async def cost_of_parts(self, parts: int) -> Cost:
        """What `parts` SMS parts will cost against the account's credits (a single
        message's, or a list's: recipients times parts)."""
        try:
            funds = await self.runner.gateway.funds()
        except GatewayError as exc:
            return Cost(parts, note=f"The account's credits could not be read: {exc.message}")
        return cost_of(parts, funds)

    async def record_personal(
        self, plan: PersonalPlan, *, held_until: datetime | None = None, recurrence: str = ""
    ) -> tuple[OutboxBatch, list[OutboxEntry]]:
        """Record a plan: each distinct text with up to 100 of its recipients per request,
        each request keeping its own text, before any of it is sent (held until
        `held_until`: `scheduled.py`)."""
        if not plan.messages:
            if plan.excluded:
                raise ValidationError(
                    f"Every one of the {len(plan.excluded):,} recipients that could be sent to "
                    "has opted out; nothing was sent.",
                    field="Recipients",
                    status=None,
                )
            raise ValidationError(
                "No recipient can be sent to; nothing was sent.", field="Recipients", status=None
            )
        return await self.runner.record_sms(
            plan.requests(),
            label=plan.template.source,
            excluded=[o.number for o in plan.excluded],
            held_until=held_until,
            recurrence=recurrence,
        )

    async def run_personal(
        self,
        batch: OutboxBatch,
        entries: Sequence[OutboxEntry],
        shown: SmsMessage,
        *,
        lanes: int = DEFAULT_LANES,
        stop: asyncio.Event | None = None,
        on_change: Changed | None = None,
    ) -> Outcome:
        """Send a recorded personal send's `entries` (what is left of it, again): each
        with its own text; unknown ones settled by status first. `shown` is what the
        history row says was sent (`PersonalPlan.history_message`)."""
        return await self._run_recorded(
            batch, entries, None, shown, lanes=lanes, stop=stop, on_change=on_change
        )

    async def send_personal(
        self,
        plan: PersonalPlan,
        *,
        lanes: int = DEFAULT_LANES,
        stop: asyncio.Event | None = None,
        on_change: Changed | None = None,
    ) -> Outcome:
        """Record, then send a plan (`gwdesk send --template`); the console records and
        runs apart, so that it can show the requests before they go."""
        batch, entries = await self.record_personal(plan)
        outcome = await self.run_personal(
            batch, entries, plan.history_message(), lanes=lanes, stop=stop, on_change=on_change
        )
        rejected = [Rejected(row.row - 1, row.text, row.reason) for row in plan.invalid]
        return _with_check(outcome, rejected, plan.duplicates)

    async def _all(
        self, batch: OutboxBatch, given: Sequence[OutboxEntry], report: RunReport
    ) -> list[OutboxEntry]:
        """The batch's entries as they now stand: those given (the whole batch, when it
        was just recorded) with what the run made of them, or read back otherwise."""
        if len(given) != batch.entries:
            return await self.runner.db(self.runner.outbox.entries, batch.id)
        now = {s.entry.id: s.entry for s in report.sent}
        return [now.get(e.id, e) for e in given]

    # ---- outcomes ----------------------------------------------------------------------

    def outcome(
        self, report: RunReport, rows: Sequence[HistoryEntry], lodged_media: Sequence[Lodged] = ()
    ) -> Outcome:
        """A run's outcome, its history rows handed to the store's writer thread."""
        written: list[HistoryWrite] = []
        if self.history is not None:
            written = [self.history.queue(row) for row in rows]  # by the store's writer thread
        outcome = Outcome(
            report.batch,
            report.sent,
            report.halted,
            report.cancelled,
            tuple(rows),
            tuple(written),
            tuple(lodged_media),
        )
        if self.on_outcome is not None:
            self.on_outcome(outcome)
        return outcome


def _tell(recorded: Recorded | None, batch: OutboxBatch) -> None:
    if recorded is not None:
        recorded(batch)


def media_field(message: MediaMessage) -> str:
    return "Messages" if message.mode is Mode.MULTI_MMS else "PhoneNumber"


def _with_check(outcome: Outcome, rejected: Sequence[Rejected], duplicates: int) -> Outcome:
    return replace(outcome, rejected=tuple(rejected), duplicates=duplicates)


def lodge_attempt(answer: LodgeText | LodgeResult) -> Attempt:
    """A Lodge answer to a Lodge SMS or WAP push, as the outbox records it."""
    if isinstance(answer, LodgeText):
        detail = f"Lodge answered {answer.text!r} (a text operation returns no MessageId)."
        if answer.ok:
            return Attempt(detail=detail, attempts=1, answer=answer)
        refused = GatewayError(f"The gateway refused the message: {answer.text}"[:300])
        return Attempt(error=refused, attempts=1, answer=answer)
    if answer.ok:
        detail = f"Lodge accepted it (Result {answer.result})."
        return Attempt(message_id=answer.msg_id, detail=detail, attempts=1, answer=answer)
    reason = answer.error_msg or f"result {answer.result}"
    return Attempt(error=GatewayError(f"The gateway refused the message: {reason}"), answer=answer)


def media_attempt(lodged: Sequence[Lodged]) -> Attempt:
    """An MMS or fax answer: lodged when any message was (none may be sent again blindly),
    with the per-message results handed back as the answer."""
    good = [item for item in lodged if item.ok]
    first = next((item.message_id for item in good if item.message_id), None)
    many = f"{len(good)} of {len(lodged)} lodged"
    detail = lodged[0].detail[:300] if len(lodged) == 1 else many
    if not good:
        return Attempt(error=GatewayError(detail), attempts=1, answer=list(lodged))
    return Attempt(message_id=first, detail=detail, attempts=1, answer=list(lodged))
