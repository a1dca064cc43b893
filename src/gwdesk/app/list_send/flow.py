"""Sending to a list, as the Batch tab and `gwdesk send` ask for it: one flow, one profile's.

`ListSend` decides everything a list send (a message the same for all, a contact
group, personal messages from a file or contacts) goes through between the operator
and the one pipeline (`Sending`):

- its checks: the message (or, for personal messages, its options) at once, before
  any task starts, so a form shows the refusal as the operator clicks;
- its plan (`plan`: each recipient's own text, made and checked off the caller's
  thread), its screen against the opt-out list (`screen`), its cost;
- its question (`prepare_list`, `prepare_personal`): the policy's (`policy.py`),
  asked of every list send, with a send of the same text to most of the list
  within the profile's repeat window (`REPEAT_WINDOW_HOURS`, 24 hours unless the
  operator changed it) found in the profile's history;
- recording it (`record`), running it in lanes and again for what is left
  (`run_due`: cancel by the caller's event, settled by status first), following the
  gateway's progress (`follow`), and the words each comes to;
- the test to the operator's own number (`send_to_own_number`).

The console renders what it returns and forwards the operator's answers; the command
line answers the same questions with flags. When the store cannot be asked before a
send leaves (a team's server away), `StoreAwayError` is raised and nothing is
recorded.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field, replace
from datetime import datetime, timedelta
from typing import Final

from gwdesk.app.list_send.duplicates import DUPLICATE_WINDOW, Duplicate, duplicate_of
from gwdesk.app.list_send.planning import PlanFailure, PlanInputs, Planned, gather, with_options
from gwdesk.app.list_send.policy import SendFacts, question_for
from gwdesk.app.list_send.run import FollowEnd, ListRun, RunEnd, follow_end, run_end
from gwdesk.app.list_send.totals import Totals, list_totals, plan_totals
from gwdesk.app.optouts import Screened
from gwdesk.app.pacing import PACE_LEAD, Pace
from gwdesk.app.personal import Cost, PersonalPlan, Recipients
from gwdesk.app.questions import SendQuestion
from gwdesk.app.scheduled import Later, ScheduledSend, ScheduledSends
from gwdesk.app.send_history import shown_recipient
from gwdesk.app.send_values import DEFAULT_LANES, Changed, StoreAwayError
from gwdesk.app.sending import Outcome, Sending
from gwdesk.app.sending_hours import Outside
from gwdesk.app.sms import SmsForm, SmsMessage, check_message, check_options, refuse
from gwdesk.app.status import follow
from gwdesk.domain.errors import GatewayError, ValidationError
from gwdesk.domain.numbers import Rejected, display
from gwdesk.domain.segments import count_segments
from gwdesk.domain.settings import OWN_NUMBER, REPEAT_WINDOW_HOURS
from gwdesk.domain.templates import Template
from gwdesk.importing.decoding import ImportFailed
from gwdesk.importing.recipients import RecipientList
from gwdesk.store.contacts import Contact, ContactStore
from gwdesk.store.database import StoreError
from gwdesk.store.local import LocalStore
from gwdesk.store.outbox import OutboxBusy, OutboxEntry
from gwdesk.store.stored_settings import StoredSettings

TEST_NOTE: Final = "A test: the batch's first message, sent to the operator's own number."
NO_OWN_NUMBER: Final = "Say where tests go first: your own number, in the Opt-outs tab ▸ Rules."
NO_TEST: Final = "No recipient's message can be made, so there is no test."
Weigh = Callable[[int], Awaitable[Cost]]
"""The cost of so many parts (a caller's fresh answer, or the gateway asked)."""


@dataclass(frozen=True, slots=True)
class PreparedSend:
    """A list send checked, weighed and asked about, not yet recorded."""

    message: SmsMessage
    """A list's checked message; a personal send's options (each text is its own)."""
    numbers: tuple[str, ...]
    """A list's recipients (recording screens them against the opt-out list again)."""
    plan: PersonalPlan | None
    totals: Totals
    cost: Cost | None
    duplicate: Duplicate | None
    question: SendQuestion | None
    """What to ask before it goes (None: it goes without a question)."""
    recipients: int = 0
    """Those it will text (after the opt-out list)."""
    invalid: int = 0
    rejected: tuple[Rejected, ...] = ()
    duplicates: int = 0
    """Repeated numbers dropped from the list."""
    later: Later | None = None
    """A send for later gwdesk holds (`schedule`), or None: it goes now."""
    outside: Outside | None = None
    """Sent now: the recipients outside their sending hours (the question names them)."""

    @property
    def hold_until(self) -> datetime | None:
        return None if self.later is None else self.later.at


@dataclass(frozen=True, slots=True)
class OwnNumberTest:
    """What the test to the operator's own number came to."""

    ok: bool
    text: str
    report: str = ""
    """The line the status bar shows ('' for none)."""
    refused: ValidationError | None = None
    """A refusal naming the form's field (shown there)."""


@dataclass(eq=False, repr=False)
class ListSend:
    """One profile's list sends, and the list shown (`run`): see the module docstring."""

    sending: Sending
    _: KW_ONLY
    contacts: ContactStore | None = None
    settings: StoredSettings | None = None
    window: timedelta | None = None
    """How long a send of the same text counts as a duplicate for (None: the profile's
    setting, read at each send, so a change applies to the next one)."""
    run: ListRun | None = field(default=None, init=False)
    """The list shown: the last one recorded (None before the first)."""

    @classmethod
    def of(cls, sending: Sending, store: LocalStore) -> ListSend:
        """The flow over a profile's store (its contacts and settings)."""
        return cls(sending, contacts=store.contacts, settings=store.settings)

    def __repr__(self) -> str:
        return f"ListSend({self.sending!r})"

    # ---- checks: at once, before any task ------------------------------------------------

    def check_message(self, form: SmsForm) -> SmsMessage:
        """A same-for-all message checked (`ValidationError` naming its field)."""
        sending = self.sending
        return check_message(form, sending.region, sending.now(), sending.compliance)

    def check_options(self, form: SmsForm) -> SmsMessage:
        """A personal send's options checked (each text is checked by the plan)."""
        return check_options(form, self.sending.region, self.sending.now())

    def check_form(self, form: SmsForm, same_text: str, *, personal: bool = False) -> SmsMessage:
        """What the Batch tab composed, checked as it is sent: a personal send's options
        (`form` as typed: each text is the plan's), else the same-for-all message with
        `same_text` (the form's text with its placeholders, if any, left as typed)."""
        ScheduledSends(self.sending).check_form(form)
        if personal:
            return self.check_options(form)
        return self.check_message(replace(form, text=same_text))

    def later_of(self, form: SmsForm, pace: Pace | None = None) -> Later | None:
        """How the composed send goes later (None: now): held until its time, repeating by
        its rule, or spread at `pace` (from a moment after now when it has no time)."""
        if form.hold_until is None and pace is None:
            return None
        at = form.hold_until or self.sending.now() + PACE_LEAD
        return Later(at, ScheduledSends(self.sending).rule(form.repeat, at), pace)

    # ---- plan, screen, cost --------------------------------------------------------------

    async def plan(self, inputs: PlanInputs) -> Planned:
        """Every recipient's text made from `inputs`, or why it cannot be."""
        recipients: Recipients | None = None
        try:
            recipients = await asyncio.to_thread(gather, inputs, self.sending.region, self.contacts)
            plan = await self.sending.plan_personal(inputs.form(), inputs.template, recipients)
        except ValidationError as exc:
            failure = PlanFailure(exc.message, exc.field)
        except GatewayError as exc:
            failure = PlanFailure(exc.message)
        except ImportFailed as exc:
            failure = PlanFailure(exc.message, "Recipients")
        except StoreError as exc:
            failure = PlanFailure(f"The contacts could not be read: {exc}")
        else:
            return Planned(inputs, recipients, plan)
        return Planned(inputs, recipients, None, failure)

    async def plan_of(
        self, form: SmsForm, template: Template, recipients: Recipients
    ) -> PersonalPlan:
        """The plan of recipients already gathered (`gwdesk send --template`)."""
        return await self.sending.plan_personal(form, template, recipients)

    async def screen(self, numbers: Sequence[str], *, factual: bool) -> Screened | None:
        """The list against the opt-out list (None: the profile keeps none);
        `StoreAwayError` when it cannot be read."""
        guard = self.sending.guard
        if guard is None:
            return None
        return await guard.screen(numbers, factual=factual)

    async def cost(self, parts: int) -> Cost:
        """What `parts` cost against the account's credits (the gateway asked now)."""
        return await self.sending.cost_of_parts(parts)

    async def groups(self) -> list[tuple[str, int]]:
        """The address book's groups and their sizes (`StoreError` when unreadable)."""
        contacts = self.contacts
        return await asyncio.to_thread(contacts.groups) if contacts is not None else []

    async def members(self, names: Sequence[str]) -> dict[str, tuple[Contact, ...]]:
        """The members of these groups, by group (`StoreError` when unreadable)."""
        contacts = self.contacts
        if contacts is None:
            return {}

        def read() -> dict[str, tuple[Contact, ...]]:
            return {name: tuple(contacts.members(name)) for name in names}

        return await asyncio.to_thread(read)

    # ---- the question --------------------------------------------------------------------

    async def prepare_list(
        self,
        message: SmsMessage,
        recipients: RecipientList,
        *,
        screened: Screened | None = None,
        weigh: Weigh | None = None,
        later: Later | None = None,
    ) -> PreparedSend:
        """A same-for-all `message` to `recipients` weighed, and what it asks first
        (`screened`: the list's screen when the caller has it fresh; `later`: it is to be
        scheduled, `schedule`)."""
        numbers = tuple(recipients.numbers)
        if screened is None:
            screened = await self.screen(numbers, factual=message.factual)
        each = count_segments(message.text).parts
        totals = list_totals(recipients, screened or Screened(numbers), each)
        kept = numbers if screened is None or screened.factual else screened.kept
        cost = await (weigh or self.cost)(len(kept) * each)
        hours = None if later is not None else await self.sending.hours_for(kept)
        outside = hours.outside(kept, self.sending.now()) if hours is not None else None
        return self._asked(
            PreparedSend(
                message,
                numbers,
                None,
                totals,
                cost,
                await self._duplicate(message.text, kept),
                None,
                recipients=len(kept),
                invalid=len(recipients.invalid),
                rejected=tuple(Rejected(r.row - 1, r.text, r.reason) for r in recipients.invalid),
                duplicates=recipients.duplicates,
                later=later,
                outside=outside,
            )
        )

    async def prepare_personal(
        self, plan: PersonalPlan, *, weigh: Weigh | None = None, later: Later | None = None
    ) -> PreparedSend:
        """A personal send's plan weighed, and what it asks first."""
        if later is not None and later.pace is not None:
            raise refuse("A list of personal messages goes whole at its time, not spread.", "Pace")
        cost = await (weigh or self.cost)(plan.parts[2])
        reached = [m.recipient.number for m in plan.messages]
        return self._asked(
            PreparedSend(
                plan.message,
                (),
                plan,
                plan_totals(plan),
                cost,
                await self._duplicate(plan.history_message().text, reached),
                None,
                recipients=plan.recipients,
                invalid=len(plan.invalid),
                duplicates=plan.duplicates,
                later=later,
            )
        )

    def _asked(self, prepared: PreparedSend) -> PreparedSend:
        """The send with the question the policy asks of it."""
        facts = SendFacts(
            prepared.recipients,
            prepared.totals.parts or 0,
            invalid=prepared.invalid,
            lodged_before=self.run.lodged_before_more() if self.run is not None else 0,
            duplicate=prepared.duplicate,
            cost=prepared.cost,
            text=(plan.history_message() if (plan := prepared.plan) else prepared.message).text,
            later=prepared.later,
            outside=prepared.outside,
        )
        question = question_for(facts, self.sending.now())
        return replace(prepared, question=question)

    async def prepare_plan(
        self,
        plan: Awaitable[PersonalPlan],
        options: SmsMessage,
        *,
        weigh: Weigh | None = None,
        later: Later | None = None,
    ) -> PreparedSend:
        """`prepare_personal` of a plan still being made (the console's: made now when the
        one shown is of other inputs), carrying the options as checked now."""
        return await self.prepare_personal(
            with_options(await plan, options), weigh=weigh, later=later
        )

    async def _duplicate(self, text: str, numbers: Sequence[str]) -> Duplicate | None:
        """The earlier sends of `text` within the window that reached most of `numbers`
        (read off the caller's thread); `StoreAwayError` when the history cannot be read."""
        history = self.sending.history
        if history is None or not numbers:
            return None
        try:
            since = self.sending.now() - (self.window or await self.repeat_window())
            earlier = await asyncio.to_thread(history.reached_with, text, since)
        except StoreError as exc:
            raise StoreAwayError("The send history cannot be read", exc) from exc
        return duplicate_of(numbers, earlier)

    async def repeat_window(self) -> timedelta:
        """The profile's repeat window (`REPEAT_WINDOW_HOURS`; 24 hours without a store).
        `StoreError` when the setting cannot be read."""
        settings = self.settings
        if settings is None:
            return DUPLICATE_WINDOW
        hours: int = await asyncio.to_thread(settings.get, REPEAT_WINDOW_HOURS)
        return timedelta(hours=hours)

    # ---- recording and running -----------------------------------------------------------

    async def record(self, prepared: PreparedSend) -> ListRun:
        """Record the send in the outbox (before any of it is sent): the list shown from
        now on. `ValidationError` (naming the field) when nobody can be sent to,
        `StoreAwayError` when the outbox cannot take it."""
        self.run = None
        plan = prepared.plan
        if plan is not None:
            batch, entries = await self.sending.record_personal(plan)
            run = ListRun(batch, entries, personal=plan.history_message())
        else:
            batch, entries = await self.sending.record_list(prepared.message, prepared.numbers)
            run = ListRun(batch, entries, message=prepared.message)
        self.run = run
        return run

    async def schedule(self, prepared: PreparedSend) -> list[ScheduledSend]:
        """Hold the send in the outbox until its time instead of sending it (nothing goes
        now; the Scheduled tab and `gwdesk scheduled` change or cancel it until then): a
        list kept to its recipients' sending hours (in parts when they differ), a personal
        send whole at its time."""
        later = prepared.later
        if later is None:
            raise ValueError("a send for now is recorded and run, not scheduled")
        scheduled, message, numbers = (
            ScheduledSends(self.sending),
            prepared.message,
            prepared.numbers,
        )
        if prepared.plan is not None:
            return [await scheduled.schedule_personal(prepared.plan, later.at, later.every)]
        if later.pace is not None:
            return await scheduled.schedule_paced(message, numbers, later.at, later.pace)
        return await scheduled.schedule_in_hours(message, numbers, later.at, later.every)

    async def run_due(
        self,
        *,
        message: SmsMessage | None = None,
        lanes: int = DEFAULT_LANES,
        stop: asyncio.Event | None = None,
        on_change: Changed | None = None,
    ) -> RunEnd:
        """Send what the list shown has not lodged (all of it, after `record`): a
        same-for-all list with `message` (as composed now; by default as recorded), a
        personal send's entries each with their own text; each entry's new row is
        taken, then handed to `on_change`."""
        run = self.run
        if run is None:
            raise GatewayError("There is no batch to send.")

        def changed(entry: OutboxEntry) -> None:
            run.put(entry)
            if on_change is not None:
                on_change(entry)

        due = run.remaining()
        run.sending, run.stopping, run.halted = True, False, ""
        outcome: Outcome | None = None
        try:
            if run.personal is not None:
                outcome = await self.sending.run_personal(
                    run.batch, due, run.personal, lanes=lanes, stop=stop, on_change=changed
                )
            elif (message := message or run.message) is not None:
                outcome = await self.sending.run_list(
                    run.batch, due, message, lanes=lanes, stop=stop, on_change=changed
                )
        except OutboxBusy as exc:  # another window or gwdesk is sending this batch
            run.halted = str(exc)
        except StoreError as exc:
            run.halted = f"The outbox could not record the batch ({exc}), so nothing more was sent."
        except GatewayError as exc:
            run.halted = exc.message
        finally:
            run.sending = False
        for sent in outcome.sent if outcome is not None else ():
            changed(sent.entry)  # each row as it stands at the end
        return run_end(run, outcome)

    async def send(self, prepared: PreparedSend, *, lanes: int = DEFAULT_LANES) -> Outcome:
        """Record and send at once (the command line: nothing to show in between)."""
        if prepared.plan is not None:
            return await self.sending.send_personal(prepared.plan, lanes=lanes)
        return await self.sending.send_list(
            prepared.message,
            prepared.numbers,
            lanes=lanes,
            rejected=prepared.rejected,
            duplicates=prepared.duplicates,
        )

    async def follow(
        self, run: ListRun, stop: asyncio.Event, on_change: Changed | None = None
    ) -> FollowEnd:
        """Follow the gateway's progress on the run's lodged requests until every message
        is created, `stop` is set, or it gives up on each."""
        await follow(
            self.sending.runner.gateway,
            lambda: run.entries,
            run.progress,
            stop=stop,
            busy=lambda: run.sending,
            on_change=on_change,
        )
        return follow_end(run, stop.is_set())

    # ---- a test to oneself ---------------------------------------------------------------

    async def own_number(self) -> str:
        """Where tests go (international digits; '' when not set). `StoreError` when
        the setting cannot be read."""
        settings = self.settings
        if settings is None:
            return ""
        found: str = await asyncio.to_thread(settings.get, OWN_NUMBER)
        return found

    async def send_to_own_number(
        self, form: SmsForm, own: str, plan: PersonalPlan | None
    ) -> OwnNumberTest:
        """The first recipient's message (a plan's first text, else the form's) sent to
        `own` as a single message through the one pipeline (history and all); the list
        itself is not sent."""
        if plan is not None:
            if not plan.messages:
                return OwnNumberTest(False, NO_TEST)
            form = replace(form, text=plan.messages[0].text)
        try:
            outcome = await self.sending.send_message(
                replace(form, recipient=f"+{own}"), note=TEST_NOTE
            )
        except ValidationError as exc:
            return OwnNumberTest(False, exc.message, refused=exc)
        except GatewayError as exc:
            return OwnNumberTest(False, f"The test was not sent: {exc.message}")
        if outcome.ok:
            to = shown_recipient(outcome.sent[0])
            return OwnNumberTest(
                True, f"Test sent to {to}: the first recipient's message.", f"test sent to {to}"
            )
        error = outcome.error
        return OwnNumberTest(
            False, f"The test was not sent: {error.message if error else 'refused'}"
        )


def to_own_number_line(own: str) -> str:
    return f"Sending a test to {display(own)}…"
