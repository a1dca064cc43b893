"""Before a batch goes: every recipient's message previewed, and a test to the operator.

The preview (`PreviewDialog`, a window beside the tab) shows each recipient's own
message as a phone would, stepping through them and straight to those that cannot
be sent; it follows the plan while open. "Send a test to me" sends the first
recipient's message (a template's, filled in) to the operator's own number, a
profile setting read from the store off the GUI thread (Opt-outs tab ▸ Rules), as a
single message through the one pipeline (history and all); the batch is not sent.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Final, cast

from PySide6.QtCore import QObject

from gwdesk.app.sending import Sending, shown_recipient
from gwdesk.app.sms import with_instruction
from gwdesk.domain.numbers import display
from gwdesk.domain.settings import OWN_NUMBER
from gwdesk.gateway.errors import GatewayError, ValidationError
from gwdesk.store.database import StoreError
from gwdesk.ui.batch.planning import PlanInputs
from gwdesk.ui.batch.totals import preview_items, same_text_items
from gwdesk.ui.tasks import alive, off_thread
from gwdesk.ui.widgets.phone_preview import PreviewDialog
from gwdesk.ui.widgets.reply_options import ReplyMode

if TYPE_CHECKING:
    from gwdesk.ui.batch.tab import BatchTab

TEST_KEY: Final = "batch-test"
OWN_KEY: Final = "batch-own-number"
TEST_NOTE: Final = "A test: the batch's first message, sent to the operator's own number."
NO_OWN_NUMBER: Final = "Say where tests go first: your own number, in the Opt-outs tab ▸ Rules."


class Trial(QObject):
    """The tab's preview window and its test to oneself."""

    def __init__(self, tab: BatchTab) -> None:
        super().__init__(tab)
        self.dialog: PreviewDialog | None = None
        self.own_number = ""
        """The operator's own number (international digits; "" for none)."""

    @property
    def tab(self) -> BatchTab:
        """The tab it belongs to: its Qt parent (no reference of its own, so no cycle
        keeps a closed tab's wrapper alive)."""
        return cast("BatchTab", self.parent())

    def sender_shown(self) -> str:
        """What a recipient's phone names as the sender (From, or the HEADER name)."""
        compose = self.tab.compose
        if compose.replies.mode() is ReplyMode.HEADER:
            return compose.replies.sender_edit.text()
        return compose.sender_edit.text()

    def open_preview(self) -> None:
        tab = self.tab
        if self.dialog is None:
            self.dialog = PreviewDialog(tab.theme, tab)
            self.dialog.panel.test_requested.connect(self.send_test)
        if self.fill(keep=False):
            self.dialog.show()
            self.dialog.raise_()

    def follow(self) -> None:
        """The plan changed: an open preview shows the new messages, at the same place."""
        if self.dialog is not None and self.dialog.isVisible():
            self.fill(keep=True)

    def fill(self, *, keep: bool) -> bool:
        tab, dialog = self.tab, self.dialog
        if dialog is None:
            return False
        panel = dialog.panel
        at = panel.index if keep else 0
        if tab.personal_template() is not None:
            planner = tab.planner
            if planner.plan is None:
                tab.show_error(
                    planner.failure.message
                    if planner.failure is not None
                    else "The messages are still being made: preview them in a moment."
                )
                return False
            items = preview_items(planner.plan)
        else:
            result = tab.recipients.result
            text = tab.same_text()
            if tab.compose.marking.marketing.isChecked() and text.strip():
                text = with_instruction(text, tab.compose.compliance.instruction)
            items = same_text_items(result.numbers if result else (), text)
        panel.set_items(items, self.sender_shown(), tab.compose.region)
        panel.show_at(at)
        return True

    # ---- a test to oneself -------------------------------------------------------------

    def send_test(self) -> None:
        tab = self.tab
        tab.clear_errors()
        if not self.own_number:
            tab.show_error(NO_OWN_NUMBER)
            return
        try:
            sending = tab.session.require_sending()
        except GatewayError as exc:
            tab.show_error(exc.message)
            return
        template = tab.personal_template()
        inputs = tab.plan_inputs(template) if template is not None else None
        tab.tasks.run(
            self._send_test(sending, inputs, self.own_number),
            key=TEST_KEY,
            owner=self,
            context="sending a test",
        )

    async def _send_test(self, sending: Sending, inputs: PlanInputs | None, own: str) -> None:
        tab = self.tab
        tab.test_button.setEnabled(False)
        try:
            if inputs is not None:
                store = tab.session.store
                plan = await tab.planner.ready(inputs, sending, store.contacts if store else None)
                if not plan.messages:
                    tab.show_error("No recipient's message can be made, so there is no test.")
                    return
                text = plan.messages[0].text
            else:
                text = tab.same_text()
            form = replace(tab.compose.form(), recipient=f"+{own}", text=text)
            tab.say(f"Sending a test to {display(own)}…", "hint")
            outcome = await sending.send_message(form, note=TEST_NOTE)
        except ValidationError as exc:
            tab.say("", "hint")
            tab.show_gateway_error(exc)
            return
        except GatewayError as exc:
            tab.say("", "hint")
            tab.show_error(f"The test was not sent: {exc.message}")
            return
        finally:
            if alive(tab):
                tab.test_button.setEnabled(True)
        if outcome.ok:
            to = shown_recipient(outcome.sent[0])
            tab.say(f"Test sent to {to}: the first recipient's message.", "ok")
            tab.session.report(f"test sent to {to}", True)
            tab.cost.forget()
        else:
            error = outcome.error
            tab.show_error(f"The test was not sent: {error.message if error else 'refused'}")

    def read_own_number(self) -> None:
        """Read the setting again (the profile switched, or its rules were saved)."""
        self.own_number = ""
        self.tab.tasks.run(
            self._read_own_number(), key=OWN_KEY, owner=self, context="reading your number"
        )

    async def _read_own_number(self) -> None:
        store = self.tab.session.store
        if store is None:
            return
        try:
            own = await off_thread(lambda: store.settings.get(OWN_NUMBER))
        except StoreError as exc:
            self.tab.show_error(f"Your own number could not be read: {exc}")
            return
        if alive(self) and store is self.tab.session.store:
            self.own_number = own

    def cancel(self) -> None:
        self.tab.tasks.cancel(TEST_KEY, owner=self)
