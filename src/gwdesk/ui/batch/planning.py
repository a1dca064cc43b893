"""The Batch tab's personal plan: every recipient's own text, made before anything is sent.

When the message is a template, each change that alters what recipients get (the
text, the recipients, a merge field's source, Marketing or Purely factual, the
profile's instruction) asks for a new plan after a short pause: the recipients are
gathered with their values (`app.merge.personal_recipients`, on a worker thread),
then `Sending.plan_personal` renders and checks every text (a worker thread again)
and leaves out who opted out. The plan feeds the totals, the merge fields, the
invalid list and the preview; Send takes the plan for what is on screen, making it
first if a change is still pending. A plan is compared by what it was made from,
big lists by identity (100,000 rows are never compared row by row).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Final

from PySide6.QtCore import QObject, QTimer, Signal

from gwdesk.app.merge import personal_recipients
from gwdesk.app.personal import PersonalPlan, Recipients
from gwdesk.app.sending import Sending
from gwdesk.app.sms import Channel, SmsForm, SmsMessage
from gwdesk.domain.templates import Template
from gwdesk.gateway.errors import GatewayError, ValidationError
from gwdesk.importing.decoding import ImportFailed
from gwdesk.importing.recipients import RecipientList
from gwdesk.importing.table import Table
from gwdesk.store.contacts import Contact, ContactStore
from gwdesk.store.database import StoreError
from gwdesk.ui.tasks import TaskRunner, alive, off_thread

PLAN_DELAY_MS: Final = 350
PLAN_KEY: Final = "batch-plan"


@dataclass(frozen=True, eq=False)
class PlanInputs:
    """What a plan is made from."""

    template: Template
    mapping: tuple[tuple[str, str | None], ...]
    table: Table | None
    column: int
    file_name: str
    pasted: RecipientList | None
    groups: tuple[tuple[str, tuple[Contact, ...]], ...]
    marketing: bool
    factual: bool
    instruction: str

    def same(self, other: PlanInputs | None) -> bool:
        return (
            other is not None
            and self.template.source == other.template.source
            and self.mapping == other.mapping
            and self.table is other.table
            and self.column == other.column
            and self.pasted is other.pasted
            and len(self.groups) == len(other.groups)
            and all(
                a[0] == b[0] and a[1] is b[1]
                for a, b in zip(self.groups, other.groups, strict=True)
            )
            and (self.marketing, self.factual, self.instruction)
            == (other.marketing, other.factual, other.instruction)
        )

    def form(self) -> SmsForm:
        """The options rendering depends on (the rest are checked when the send goes)."""
        return SmsForm(channel=Channel.REST_SMS, marketing=self.marketing, factual=self.factual)


@dataclass(frozen=True, slots=True)
class PlanFailure:
    """Why no plan could be made (shown in the totals; at its field when sending)."""

    message: str
    field: str | None = None


class Planner(QObject):
    """The plan for what the tab shows now; `planned` when it (or why not) changes."""

    planned = Signal()

    def __init__(self, tasks: TaskRunner, parent: QObject) -> None:
        super().__init__(parent)
        self.tasks = tasks
        self.plan: PersonalPlan | None = None
        self.recipients: Recipients | None = None
        """The gathered recipients of the plan (the merge fields' sources come from it)."""
        self.failure: PlanFailure | None = None
        self.inputs: PlanInputs | None = None
        """What `plan` (or `failure`) was made from."""
        self._wanted: PlanInputs | None = None
        self._context: tuple[Sending, ContactStore | None] | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(PLAN_DELAY_MS)
        self._timer.timeout.connect(self._start)

    def invalidate(self) -> None:
        """What the plan was made from changed outside its inputs (the contacts, the
        opt-out list): the next `want` makes it again (the plan shown stays meanwhile)."""
        self.inputs = None

    @property
    def pending(self) -> bool:
        """A plan of other inputs than the one shown is wanted (the shown one is old)."""
        return self._wanted is not None and not self._wanted.same(self.inputs)

    @property
    def busy(self) -> bool:
        return self._timer.isActive() or self.tasks.running(PLAN_KEY, owner=self)

    def clear(self) -> None:
        """No template (or no profile): no plan."""
        self._timer.stop()
        self.tasks.cancel(PLAN_KEY, owner=self)
        self._wanted = None
        changed = self.inputs is not None or self.plan is not None or self.failure is not None
        self.plan = self.recipients = self.failure = self.inputs = None
        if changed:
            self.planned.emit()

    def want(self, inputs: PlanInputs, sending: Sending, contacts: ContactStore | None) -> None:
        """Plan `inputs` after a pause, unless that plan is shown or on its way."""
        if inputs.same(self.inputs) or (inputs.same(self._wanted) and self.busy):
            return
        self._wanted = inputs
        self._context = (sending, contacts)
        self._timer.start()

    def _start(self) -> None:
        wanted, context = self._wanted, self._context
        if wanted is None or context is None:
            return
        self.tasks.run(
            self._plan(wanted, *context), key=PLAN_KEY, owner=self, context="rendering messages"
        )

    async def _plan(
        self, inputs: PlanInputs, sending: Sending, contacts: ContactStore | None
    ) -> None:
        recipients: Recipients | None = None
        try:
            recipients = await gather(inputs, sending.region, contacts)
            plan = await sending.plan_personal(inputs.form(), inputs.template, recipients)
        except (ValidationError, GatewayError) as exc:
            failure = PlanFailure(exc.message, _field(exc))
        except ImportFailed as exc:
            failure = PlanFailure(exc.message, "Recipients")
        except StoreError as exc:
            failure = PlanFailure(f"The contacts could not be read: {exc}")
        else:
            self._landed(inputs, recipients, plan, None)
            return
        # The recipients stay, when they were gathered: the merge fields offer their sources.
        self._landed(inputs, recipients, None, failure)

    def _landed(
        self,
        inputs: PlanInputs,
        recipients: Recipients | None,
        plan: PersonalPlan | None,
        failure: PlanFailure | None,
    ) -> None:
        if not alive(self):
            return
        if self._wanted is inputs:
            self._wanted = None
        self.inputs, self.recipients, self.plan, self.failure = inputs, recipients, plan, failure
        self.planned.emit()

    async def ready(
        self, inputs: PlanInputs, sending: Sending, contacts: ContactStore | None
    ) -> PersonalPlan:
        """The plan of `inputs` (made now when the one shown is of other inputs); its
        failure raised as `ValidationError` naming its field."""
        if not inputs.same(self.inputs):
            self._timer.stop()
            self.tasks.cancel(PLAN_KEY, owner=self)
            self._wanted = inputs
            await self._plan(inputs, sending, contacts)
        if self.failure is not None:
            raise ValidationError(self.failure.message, field=self.failure.field, status=None)
        assert self.plan is not None
        return self.plan


async def gather(inputs: PlanInputs, region: str, contacts: ContactStore | None) -> Recipients:
    """The recipients with their values (off the GUI thread)."""
    mapping = dict(inputs.mapping)

    def work() -> Recipients:
        return personal_recipients(
            inputs.template,
            mapping,
            region,
            contacts,
            table=inputs.table,
            column=inputs.column,
            file_name=inputs.file_name,
            pasted=inputs.pasted,
            groups=inputs.groups,
        )

    return await off_thread(work)


def with_options(plan: PersonalPlan, options: SmsMessage) -> PersonalPlan:
    """The plan carrying the options as checked when the send goes (From, Send at,
    replies, tags): its texts stay as they were rendered."""
    return replace(plan, message=replace(options, text=plan.template.source))


def _field(exc: GatewayError) -> str | None:
    return exc.field if isinstance(exc, ValidationError) else None


def group_members(
    groups: Mapping[str, tuple[Contact, ...]],
) -> tuple[tuple[str, tuple[Contact, ...]], ...]:
    return tuple(groups.items())
