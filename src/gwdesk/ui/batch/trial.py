"""Before a batch goes: every recipient's message previewed, and a test to the operator.

The preview (`PreviewDialog`, a window beside the tab) shows each recipient's own
message as a phone would, stepping through them and straight to those that cannot
be sent; the tab hands it the messages again while it is open. "Send a test to me"
has the flow send the first recipient's message (a template's, filled in) to the
operator's own number, a profile setting the flow reads off the GUI thread
(Opt-outs tab ▸ Rules), as a single message through the one pipeline (history and
all); the batch is not sent. What it comes to is said through signals: the tab
shows it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Final

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from gwdesk.app.list_send import (
    NO_OWN_NUMBER,
    ListSend,
    StoreError,
    ValidationError,
    trial_line,
)
from gwdesk.app.personal import PersonalPlan
from gwdesk.app.sms import SmsForm
from gwdesk.ui.tasks import TaskRunner, alive
from gwdesk.ui.theme import Theme
from gwdesk.ui.widgets.phone_preview import PreviewDialog, PreviewItem

TEST_KEY: Final = "batch-test"
OWN_KEY: Final = "batch-own-number"
PlanReady = Callable[[], Awaitable[PersonalPlan]]
"""The plan of what the tab shows (made now if the one shown is of other inputs)."""


def plan_items(plan: PersonalPlan) -> list[PreviewItem]:
    """Every recipient in row order: its message, or why it cannot be sent."""
    items = [
        PreviewItem(
            m.recipient.row,
            m.recipient.number,
            m.recipient.who,
            m.text,
            m.parts,
            m.encoding.value,
        )
        for m in plan.messages
    ]
    items.extend(PreviewItem(r.row, r.text, "", None, reason=r.reason) for r in plan.invalid)
    items.sort(key=lambda item: item.row)
    return items


def same_text_items(numbers: Sequence[str], text: str) -> list[PreviewItem]:
    """A message that is the same for all, as the preview steps through it."""
    return [PreviewItem(place, number, "", text) for place, number in enumerate(numbers, 1)]


class Trial(QObject):
    """The tab's preview window and its test to oneself."""

    said = Signal(str, str)
    """(a line for the outcome, its role)"""
    failed = Signal(str)
    refused = Signal(object)
    """A `ValidationError` naming the form's field."""
    tested = Signal(str)
    """The test went: the line for the status bar."""
    testing = Signal(bool)
    test_requested = Signal()
    """The preview's own "Send a test to me" was clicked."""

    def __init__(self, tasks: TaskRunner, theme: Theme, parent: QWidget) -> None:
        super().__init__(parent)
        self.tasks = tasks
        self.theme = theme
        self.dialog: PreviewDialog | None = None
        self.own_number = ""
        """The operator's own number (international digits; "" for none)."""

    @property
    def showing(self) -> bool:
        return self.dialog is not None and self.dialog.isVisible()

    def show_items(
        self, items: list[PreviewItem], sender: str, region: str, *, keep: bool = False
    ) -> None:
        """Show the messages (`keep`: at the recipient shown, the plan changed)."""
        if self.dialog is None:
            parent = self.parent()
            assert isinstance(parent, QWidget)
            self.dialog = PreviewDialog(self.theme, parent)
            self.dialog.panel.test_requested.connect(lambda: self.test_requested.emit())
        panel = self.dialog.panel
        at = panel.index if keep else 0
        panel.set_items(items, sender, region)
        panel.show_at(at)
        if not keep:
            self.dialog.show()
            self.dialog.raise_()

    # ---- a test to oneself ---------------------------------------------------------------

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
            self.said.emit(trial_line(own), "hint")
            end = await flow.trial(form, own, planned)
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
