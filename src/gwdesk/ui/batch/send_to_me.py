"""The Batch tab's "Send a test to me": the first recipient's message, to the operator.

The flow sends the first recipient's message (a template's, filled in) to the
operator's own number, a profile setting the flow reads off the GUI thread
(Opt-outs tab ▸ Rules), as a single message through the one pipeline (history and
all); the batch is not sent. What it comes to is said through signals: the tab
shows it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from gwdesk.app.list_send import (
    NO_OWN_NUMBER,
    ListSend,
    StoreError,
    ValidationError,
    to_own_number_line,
)
from gwdesk.app.personal import PersonalPlan
from gwdesk.app.sms import SmsForm
from gwdesk.ui.batch.notices import Outcomes
from gwdesk.ui.tasks import TaskRunner, alive

TEST_KEY: Final = "batch-test"
OWN_KEY: Final = "batch-own-number"
PlanReady = Callable[[], Awaitable[PersonalPlan]]
"""The plan of what the tab shows (made now if the one shown is of other inputs)."""


class SendToMe(Outcomes):
    """The tab's test to the operator's own number, and that number."""

    tested = Signal(str)
    """The test went: the line for the status bar."""
    testing = Signal(bool)

    def __init__(self, tasks: TaskRunner, parent: QWidget) -> None:
        super().__init__(parent)
        self.tasks = tasks
        self.own_number = ""
        """The operator's own number (international digits; "" for none)."""

    def send_test(self, flow: ListSend, form: SmsForm, plan: PlanReady | None) -> None:
        """Send the first recipient's message (`form`'s text, or the plan's first) to the
        operator's own number."""
        if not self.own_number:
            self.failed.emit(NO_OWN_NUMBER)
            return
        self.tasks.run(
            self._send_test(flow, form, plan, self.own_number),
            key=TEST_KEY,
            owner=self,
            context="sending a test",
        )

    async def _send_test(
        self, flow: ListSend, form: SmsForm, plan: PlanReady | None, own: str
    ) -> None:
        self.testing.emit(True)
        try:
            try:
                planned = await plan() if plan is not None else None
            except ValidationError as exc:
                self.refused.emit(exc)
                return
            self.said.emit(to_own_number_line(own), "hint")
            end = await flow.send_to_own_number(form, own, planned)
        finally:
            if alive(self):
                self.testing.emit(False)
        if end.refused is not None:
            self.said.emit("", "hint")
            self.refused.emit(end.refused)
        elif not end.ok:
            self.said.emit("", "hint")
            self.failed.emit(end.text)
        else:
            self.said.emit(end.text, "ok")
            self.tested.emit(end.report)

    def read_own_number(self, flow: ListSend | None) -> None:
        """Read the setting again (the profile switched, or its rules were saved)."""
        self.own_number = ""
        if flow is not None:
            self.tasks.run(
                self._read_own_number(flow), key=OWN_KEY, owner=self, context="reading your number"
            )

    async def _read_own_number(self, flow: ListSend) -> None:
        try:
            own = await flow.own_number()
        except StoreError as exc:
            self.failed.emit(f"Your own number could not be read: {exc}")
            return
        if alive(self):
            self.own_number = own

    def cancel(self) -> None:
        self.tasks.cancel(TEST_KEY, owner=self)
