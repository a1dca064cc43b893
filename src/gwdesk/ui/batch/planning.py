"""The Batch tab's personal plan, kept current: each recipient's own text, made off the GUI thread.

When the message is a template, each change that alters what recipients get (the
text, the recipients, a merge field's source, Marketing or Purely factual, the
profile's instruction) asks for a new plan after a short pause; the flow makes it
(`ListSend.plan`: the recipients gathered with their values, every text rendered
and checked, who opted out left out). The plan feeds the totals, the merge fields,
the invalid list and the preview; Send takes the plan for what is on screen, making
it first if a change is still pending. A plan is compared by what it was made from
(`PlanInputs.same`).
"""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import QObject, Signal

from gwdesk.app.list_send import (
    ListSend,
    PlanFailure,
    PlanInputs,
    Planned,
    ValidationError,
    group_members,
)
from gwdesk.app.personal import PersonalPlan, Recipients
from gwdesk.domain.templates import Template
from gwdesk.ui.batch.compose import BatchCompose
from gwdesk.ui.batch.merge import MergeBox
from gwdesk.ui.batch.recipients import FILE, RecipientsPanel
from gwdesk.ui.tasks import TaskRunner, alive
from gwdesk.ui.timers import single_shot

PLAN_DELAY_MS: Final = 350
PLAN_KEY: Final = "batch-plan"


def inputs_of(
    template: Template, panel: RecipientsPanel, compose: BatchCompose, merge: MergeBox
) -> PlanInputs:
    """What the plan of the tab as it stands is made from."""
    table = panel.table if panel.source() == FILE else None
    marketing, factual = compose.marked()
    return PlanInputs(
        template=template,
        mapping=tuple(sorted(merge.mapping().items())),
        table=table,
        column=table.column if table is not None else 0,
        file_name=panel.file_path.name if table is not None and panel.file_path else "",
        pasted=None if table is not None else panel.base(),
        groups=group_members(panel.group_members),
        marketing=marketing,
        factual=factual,
        instruction=compose.compliance.instruction,
    )


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
        self._flow: ListSend | None = None
        self._timer = single_shot(self, PLAN_DELAY_MS, self._start)

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

    def want(self, inputs: PlanInputs, flow: ListSend) -> None:
        """Plan `inputs` after a pause, unless that plan is shown or on its way."""
        if inputs.same(self.inputs) or (inputs.same(self._wanted) and self.busy):
            return
        self._wanted = inputs
        self._flow = flow
        self._timer.start()

    def _start(self) -> None:
        wanted, flow = self._wanted, self._flow
        if wanted is None or flow is None:
            return
        self.tasks.run(
            self._plan(wanted, flow), key=PLAN_KEY, owner=self, context="rendering messages"
        )

    async def _plan(self, inputs: PlanInputs, flow: ListSend) -> None:
        planned = await flow.plan(inputs)
        if alive(self):
            self._landed(planned)

    def _landed(self, planned: Planned) -> None:
        if self._wanted is planned.inputs:
            self._wanted = None
        self.inputs, self.recipients = planned.inputs, planned.recipients
        self.plan, self.failure = planned.plan, planned.failure
        self.planned.emit()

    async def ready(self, inputs: PlanInputs, flow: ListSend) -> PersonalPlan:
        """The plan of `inputs` (made now when the one shown is of other inputs); its
        failure raised as `ValidationError` naming its field."""
        if not inputs.same(self.inputs):
            self._timer.stop()
            self.tasks.cancel(PLAN_KEY, owner=self)
            self._wanted = inputs
            await self._plan(inputs, flow)
        if self.failure is not None:
            raise ValidationError(self.failure.message, field=self.failure.field, status=None)
        assert self.plan is not None
        return self.plan
