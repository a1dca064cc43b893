"""The Batch tab's question, answered as an operator does: every list send asks first."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QPushButton

from gwdesk.ui.batch.tab import BatchTab
from tests.ui.conftest import wait_until


async def asked(tab: BatchTab, within: float = 10.0) -> QMessageBox:
    """The question the send asks, once the flow has weighed it and it shows."""
    await wait_until(lambda: tab.confirm_box is not None and tab.confirm_box.isVisible(), within)
    assert tab.confirm_box is not None
    return tab.confirm_box


def yes_button(box: QMessageBox) -> QPushButton:
    """The button that sends (its role is the accepting one; Cancel is the default)."""
    accept = QMessageBox.ButtonRole.AcceptRole
    [yes] = [b for b in box.buttons() if box.buttonRole(b) is accept]
    assert isinstance(yes, QPushButton)
    return yes


async def confirm_send(tab: BatchTab, within: float = 10.0) -> str:
    """Press Send and answer the question yes; the question's text as it was asked (read
    before the click: the box is deleted once answered)."""
    tab.send()
    box = await asked(tab, within)
    text = box.text()
    yes_button(box).click()
    return text
