"""The Batch tab's one question before a list goes: weighed by the flow, shown, answered.

Every list send asks (`gwdesk.app.list_send.policy`): the flow weighs the send off
the GUI thread (the opt-out screen, the cost against the credits, a send of the
same text to most of the list within the profile's repeat window) and says what it
asks; this shows that question as a window-modal dialog (plain text: the message
and names in it are data) and hands a yes on (`confirmed`). While the question is
open, another Send or Ctrl+Enter opens no second one.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Final

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QMessageBox, QWidget

from gwdesk.app.list_send import GatewayError, ListSend, PreparedSend, StoreError, ValidationError
from gwdesk.ui.batch.notices import Outcomes
from gwdesk.ui.tasks import TaskRunner, alive
from gwdesk.ui.widgets.question import answered, question_box

ASK_KEY: Final = "batch-ask"
NOT_SENT: Final = "Not sent."


class SendAsking(Outcomes):
    """Weighs a send, asks its question, and says yes on (`confirmed`)."""

    confirmed = Signal(object, object)
    """(the flow, the `PreparedSend`): the operator said yes."""

    def __init__(self, tasks: TaskRunner, parent: QWidget) -> None:
        super().__init__(parent)
        self.tasks = tasks
        self.box: QMessageBox | None = None
        """The question open now, if any."""

    @property
    def asking(self) -> bool:
        """Whether the question is open now."""
        box = self.box
        return box is not None and alive(box) and box.isVisible()

    def ask(self, flow: ListSend, prepared: Awaitable[PreparedSend]) -> None:
        """Weigh the send (`prepared`), then ask; a weighing under way is replaced."""
        self.tasks.run(
            self._ask(flow, prepared), key=ASK_KEY, owner=self, context="weighing the batch"
        )

    def cancel(self) -> None:
        self.tasks.cancel(ASK_KEY, owner=self)

    async def _ask(self, flow: ListSend, prepared: Awaitable[PreparedSend]) -> None:
        try:
            ready = await prepared
        except ValidationError as exc:
            self.said.emit("", "hint")
            self.refused.emit(exc)
            return
        except (GatewayError, StoreError) as exc:
            self.said.emit("", "hint")
            self.failed.emit(exc.message if isinstance(exc, GatewayError) else str(exc))
            return
        question = ready.question
        if question is not None:
            parent = self.parent()
            assert isinstance(parent, QWidget)
            box, yes = question_box(parent, question.title, question.text(), question.yes)
            self.box = box
            box.finished.connect(lambda _result: setattr(self, "box", None))
            self.said.emit("", "hint")
            if not await answered(box, yes):
                self.said.emit(NOT_SENT, "hint")
                return
        self.confirmed.emit(flow, ready)
