"""Before a batch goes: every recipient's message previewed, as a phone shows it.

The preview (`PreviewDialog`, a window beside the tab) shows each recipient's own
message, stepping through them and straight to those that cannot be sent; the tab
hands it the messages again while it is open. Its "Send a test to me" is forwarded
(`test_requested`): the tab has the test sent (`send_to_me`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from gwdesk.app.personal import PersonalPlan
from gwdesk.ui.theme import Theme
from gwdesk.ui.widgets.phone_preview import PreviewDialog, PreviewItem


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


class PreviewWindow(QObject):
    """The tab's preview window, made when it is first opened."""

    test_requested = Signal()
    """The preview's own "Send a test to me" was clicked."""

    def __init__(self, theme: Theme, parent: QWidget) -> None:
        super().__init__(parent)
        self.theme = theme
        self.dialog: PreviewDialog | None = None

    @property
    def showing(self) -> bool:
        return self.dialog is not None and self.dialog.isVisible()

    def show_items(
        self,
        items: list[PreviewItem],
        sender: str,
        region: str,
        scheduled: datetime | None = None,
        *,
        keep: bool = False,
    ) -> None:
        """Show the messages arriving at `scheduled` (None: at once; `keep`: at the
        recipient shown, the plan changed)."""
        if self.dialog is None:
            parent = self.parent()
            assert isinstance(parent, QWidget)
            self.dialog = PreviewDialog(self.theme, parent)
            self.dialog.panel.test_requested.connect(lambda: self.test_requested.emit())
        panel = self.dialog.panel
        at = panel.index if keep else 0
        panel.set_items(items, sender, region, scheduled)
        panel.show_at(at)
        if not keep:
            self.dialog.show()
            self.dialog.raise_()
