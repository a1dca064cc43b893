"""One message to one recipient: the single send's decisions, for the console and the command line.

The Send tab (REST SMS, Lodge SMS, two-way, WAP push), the Fax / MMS tab, a
conversation's reply box and `gwdesk send --to NUMBER`, `wap`, `mms` and `fax` all
go through `SingleSend`, and only render what it says:

1. `check` (at the click, before any task starts): the form's values checked once
   (`gwdesk.app.sms`), a refusal raised at its wire field (`ValidationError`); a text
   with placeholders is kept as the template to fill;
2. `prepare`: the template filled from the fields of the contact holding the number
   (a placeholder with no value is refused at the message, never sent with a hole),
   what the send costs against the account's credits, and the one question a single
   send asks (`SendQuestion`: only when the credits do not cover it);
3. `send` (the question answered yes, if there was one): through `Sending`, which
   reads the opt-out list once (an opted-out number is refused, `OptedOutError`; a
   message marked purely factual goes, and says so), records the send in the outbox,
   has the runner make the request exactly once and writes the history;
4. a `SingleResult`: the outcome, why it was not sent if it was not, and what the
   console must read again (`Refresh`: the history rows, the contact's name, the
   balance).

A send given a `cancel` event stops waiting when it is set (a gateway that does not
answer): what that means for the outbox is `gwdesk.app.cancelled_send`'s, and the
result says what the cancel came to (`SingleResult.cancelled`, `cancel_text`).

When the store cannot be asked (a team's server away) nothing is sent
(`StoreAwayError`) and the form keeps its text: the console never clears a form on
an error. Qt-free.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Final

from gwdesk.app.cancelled_send import SETTLE_LIMIT, TOO_LATE, CancelWatch, settle_cancelled
from gwdesk.app.media import MediaForm, MediaMessage, failure_entry
from gwdesk.app.merge import MESSAGE_FIELD, fill_for_number
from gwdesk.app.personal import Cost
from gwdesk.app.questions import SendQuestion, credits_short, question
from gwdesk.app.scheduled import ScheduledSend, ScheduledSends
from gwdesk.app.send_history import message_history, shown_recipient
from gwdesk.app.send_values import StoreAwayError
from gwdesk.app.sending import Outcome, Sending, SingleMessage
from gwdesk.app.sms import Channel, SmsForm, recipient_field, refuse
from gwdesk.domain.errors import GatewayError
from gwdesk.domain.profile import LodgePort
from gwdesk.domain.segments import count_segments
from gwdesk.domain.templates import Template, TemplateError, parse_template
from gwdesk.store.contacts import ContactStore
from gwdesk.store.database import StoreError
from gwdesk.store.drafts import DraftStore
from gwdesk.store.history import HistoryEntry
from gwdesk.store.optouts import OptOut, list_number

__all__ = [
    "Checked",
    "HistoryEntry",
    "OptOut",
    "Prepared",
    "RecipientState",
    "Refresh",
    "SingleResult",
    "SingleSend",
    "parts_of",
    "saved_draft",
    "templated",
]
"""`OptOut` and `HistoryEntry` are the store's types the console shows (re-exported so the
console needs nothing from the store)."""

log = logging.getLogger("gwdesk.app.single_send")
QUESTION_TITLE: Final = "Send the message?"
SEND_ANYWAY: Final = "Send anyway"
NOT_SENT: Final = "It was not sent."
NOTHING_RECORDED: Final = "Cancelled by you before it was sent; not sent."


@dataclass(frozen=True, slots=True)
class Checked:
    """A single SMS or WAP push as checked at the click."""

    form: SmsForm
    """The form as it goes: a template with no placeholder already rendered (`{{` sent
    as one brace)."""
    single: SingleMessage
    template: Template | None = None
    """A text with placeholders: filled from the recipient's contact by `prepare`."""

    @property
    def recipient(self) -> str:
        return self.single.recipient


@dataclass(frozen=True, slots=True)
class Prepared:
    """A single send ready to go: its message as filled and checked, and its question."""

    form: SmsForm
    single: SingleMessage
    parts: int
    cost: Cost | None
    """None when there are no parts to pay for (a WAP push)."""
    question: SendQuestion | None
    """What must be answered yes before it is sent (None: it goes)."""


@dataclass(frozen=True, slots=True)
class Refresh:
    """What a send changed that a console shows, to be read again."""

    history: tuple[HistoryEntry, ...] = ()
    """Rows for the list of what this session sent (the send wrote them to the store)."""
    names: tuple[str, ...] = ()
    """Numbers whose contact names the list shows."""
    balance: bool = False
    """The account's credits changed: a cost shown must be asked again."""


@dataclass(frozen=True, slots=True)
class SingleResult:
    """What a single send came to, and what to read again."""

    outcome: Outcome
    refresh: Refresh
    scheduled: ScheduledSend | None = None
    """A send for later gwdesk now holds (nothing was sent: `outcome` has no request)."""

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def error(self) -> GatewayError | None:
        """Why it was not lodged (a `ValidationError` names its field); None when it was,
        or when it was scheduled."""
        if self.scheduled is not None or (self.outcome.ok and self.outcome.error is None):
            return None
        return self.outcome.error or GatewayError(NOT_SENT)

    @property
    def to(self) -> str:
        """The recipient as the gateway wrote it (as scheduled, for a send for later)."""
        if self.scheduled is not None:
            return self.scheduled.recipients[0] if self.scheduled.recipients else ""
        return shown_recipient(self.outcome.sent[0]) if self.outcome.sent else ""

    @property
    def cancelled(self) -> bool:
        """The operator cancelled it while it was sent (`cancel_text` says what came of it)."""
        return self.outcome.cancelled

    @property
    def cancel_text(self) -> str:
        """What a cancel came to, in words ('' when it was not cancelled): too late (the
        gateway had taken it: it was sent), not sent, or not known yet."""
        if not self.cancelled:
            return ""
        error = self.error
        return TOO_LATE if error is None else error.message


@dataclass(frozen=True, slots=True)
class RecipientState:
    """What the console says of a number as it is typed: its opt-out and its contact."""

    number: str
    """As the opt-out list and the address book keep it."""
    optout: OptOut | None
    name: str = ""


def templated(form: SmsForm) -> tuple[SmsForm, Template | None]:
    """The form with a template that has no placeholder rendered (`{{` as one brace), and
    the template when it has placeholders; refused at the message when the text cannot
    be read as a template. A WAP push has no text to fill."""
    if form.channel is Channel.WAP_PUSH or ("{" not in form.text and "}" not in form.text):
        return form, None
    try:
        parsed = parse_template(form.text)
    except TemplateError as exc:
        raise refuse(f"Not a usable template: {exc}", MESSAGE_FIELD) from None
    if parsed.personal:
        return form, parsed
    return replace(form, text=parsed.render({})), None


def parts_of(single: SingleMessage) -> int:
    """The SMS parts a message is paid for (a WAP push: none)."""
    text = single.message.text
    return count_segments(text).parts if text else 0


class SingleSend:
    """One profile's single sends (see the module docstring)."""

    def __init__(
        self,
        sending: Sending,
        contacts: ContactStore | None = None,
        *,
        settle_limit: float = SETTLE_LIMIT,
    ) -> None:
        self.sending = sending
        self.contacts = contacts
        """The address book a template is filled from and names are read in."""
        self.settle_limit = settle_limit
        """Seconds a cancelled send's status may take before it is left unknown."""

    def __repr__(self) -> str:
        return f"SingleSend({self.sending!r})"

    @property
    def lodge_port(self) -> LodgePort:
        """The Lodge port a media send goes through (the profile's)."""
        return self.sending.runner.gateway.lodge.port

    # ---- an SMS or a WAP push ------------------------------------------------------------

    def check(self, form: SmsForm, *, placeholders: bool = True) -> Checked:
        """The form checked (`ValidationError` at its field; `GatewayError` when a Lodge
        send has no Lodge service). `placeholders` False: the text goes as written, braces
        and all (a command line's MESSAGE to one number, as it always has)."""
        form, template = templated(form) if placeholders else (form, None)
        checked = Checked(form, self.sending.check_message(form), template)
        ScheduledSends(self.sending).check_form(form)
        return checked

    async def filled(self, checked: Checked) -> Checked:
        """The template filled from the fields of the contact holding the number, and
        checked again (as it is when there is no template); `ValidationError` at the
        message for a placeholder with no value, `StoreAwayError` when the contacts
        cannot be read."""
        template, contacts = checked.template, self.contacts
        if template is None:
            return checked
        number = checked.recipient
        try:
            text = await asyncio.to_thread(fill_for_number, template, number, contacts)
        except StoreError as exc:
            raise StoreAwayError("The contacts cannot be read", exc) from exc
        form = replace(checked.form, text=text)
        return Checked(form, self.sending.check_message(form))

    async def prepare(self, checked: Checked, *, fresh: Cost | None = None) -> Prepared:
        """Fill, cost and decide the question. `fresh`: an answer about the account's
        credits the caller read a moment ago (the console's cost line), weighed against
        this send's parts instead of asking the gateway again."""
        done = await self.filled(checked)
        parts = parts_of(done.single)
        cost = None
        if parts:
            cost = fresh.for_parts(parts) if fresh is not None else await self.cost(parts)
        asked = question(QUESTION_TITLE, 1, parts, cost, [credits_short(cost)], SEND_ANYWAY)
        return Prepared(done.form, done.single, parts, cost, asked)

    async def cost(self, parts: int) -> Cost:
        """What `parts` cost against the account's credits, asked now."""
        return await self.sending.cost_of_parts(parts)

    async def send(
        self,
        prepared: Prepared,
        *,
        answered: bool = False,
        note: str = "",
        cancel: asyncio.Event | None = None,
    ) -> SingleResult:
        """Send it (`answered`: the operator, or a flag, said yes to its question). `note`
        goes into the history row's detail; `cancel` set stops waiting for it (the
        module docstring). Refused before anything is recorded: `OptedOutError`,
        `StoreAwayError`; the outcome says the rest."""
        if prepared.question is not None and not answered:
            raise ValueError(f"unanswered: {prepared.question.title}")
        single = prepared.single
        if prepared.form.hold_until is not None:
            return await self._schedule(single, prepared.form.hold_until, prepared.form.repeat)
        async with CancelWatch(cancel or asyncio.Event()) as watch:
            outcome = await self.sending.send_message(single, note=note, recorded=watch.recorded)
            return self._result(outcome, (single.recipient,))
        if watch.batch is None:
            raise GatewayError(NOTHING_RECORDED)
        report = await settle_cancelled(self.sending.runner, watch.batch, limit=self.settle_limit)
        at = self.sending.now()
        rows = [message_history(single.message, sent, at, note) for sent in report.sent]
        return self._result(self.sending.outcome(report, rows), (single.recipient,))

    async def _schedule(self, single: SingleMessage, at: datetime, repeat: str) -> SingleResult:
        """Hold it in the outbox until `at` (`gwdesk.app.scheduled`), kept to the
        recipient's sending hours, repeating by `repeat`: nothing is sent now."""
        if self.sending.guard is not None:  # refused now rather than left out at its time
            wire = recipient_field(single.message.channel)
            await self.sending.guard.check_one(
                single.recipient, wire, factual=single.message.factual
            )
        scheduled = ScheduledSends(self.sending)
        [held] = await scheduled.schedule_in_hours(
            single.message, (single.recipient,), at, scheduled.rule(repeat, at)
        )
        batch = await self.sending.runner.db(self.sending.runner.outbox.batch, held.batch_id)
        assert batch is not None
        return SingleResult(Outcome(batch, ()), Refresh(), scheduled=held)

    # ---- an MMS or a fax -----------------------------------------------------------------

    def check_media(self, form: MediaForm) -> MediaMessage:
        """An MMS or fax checked at the click (`ValidationError` at its input). They ask
        nothing: Lodge reports no price for them."""
        return self.sending.check_media(form)

    async def send_media(
        self, message: MediaMessage, *, cancel: asyncio.Event | None = None
    ) -> SingleResult:
        """Through Lodge (an MMS reaching an opted-out number is refused first); `cancel`
        as for `send` (Lodge cannot be asked about it: one cancelled on the wire stays
        unknown, for the operator to check in the account's log)."""
        async with CancelWatch(cancel or asyncio.Event()) as watch:
            outcome = await self.sending.send_media(message, recorded=watch.recorded)
            return self._result(outcome, message.recipients)
        if watch.batch is None:
            raise GatewayError(NOTHING_RECORDED)
        report = await settle_cancelled(self.sending.runner, watch.batch, limit=self.settle_limit)
        at = self.sending.now()
        rows = [
            failure_entry(message, sent.error or GatewayError(NOT_SENT), at)
            for sent in report.sent
            if not sent.lodged
        ]
        return self._result(self.sending.outcome(report, rows), message.recipients)

    def _result(self, outcome: Outcome, numbers: Sequence[str]) -> SingleResult:
        refresh = Refresh(outcome.history, tuple(numbers), balance=bool(outcome.sent))
        return SingleResult(outcome, refresh)

    # ---- what the console shows beside the form ------------------------------------------

    async def recipient(self, number: str) -> RecipientState | None:
        """The number's opt-out and its contact's name (None when the list cannot be
        read now: the send itself would say so)."""
        listed = list_number(number, self.sending.region)
        guard = self.sending.guard
        try:
            found = (await guard.lookup([listed])).get(listed) if guard is not None else None
        except StoreAwayError as exc:
            log.warning("the opt-out list could not be read: %s", exc)
            return None
        names = await self.names([listed])
        return RecipientState(listed, found, names.get(listed, ""))

    async def names(self, numbers: Iterable[str]) -> dict[str, str]:
        """The contact names of `numbers` (none when the address book cannot be read now:
        the numbers are shown alone)."""
        contacts, wanted = self.contacts, list(numbers)
        if contacts is None or not wanted:
            return {}
        try:
            return await asyncio.to_thread(contacts.names, wanted)
        except StoreError as exc:
            log.warning("contacts' names could not be read: %s", exc)
            return {}

    def sent_since(self, moment: datetime, channels: Iterable[str]) -> list[HistoryEntry]:
        """This profile's history rows of `channels` since `moment`, newest first (none
        when it cannot be read now). Reads the store: the caller's thread waits."""
        history, wanted = self.sending.history, set(channels)
        if history is None:
            return []
        try:
            return [e for e in history.since(moment) if e.channel in wanted]
        except StoreError as exc:
            log.warning("the send history could not be read: %s", exc)
            return []


def saved_draft(drafts: DraftStore, key: str) -> dict[str, Any]:
    """A compose form's saved draft, or an empty one when the profile's file cannot be
    read now (said in the log): the form then starts empty rather than not at all."""
    try:
        return drafts.load(key)
    except StoreError as exc:
        log.warning("the %s draft could not be read: %s", key, exc)
        return {}
