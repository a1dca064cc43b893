"""The Batch tab's question, answered as an operator does: every list send asks first."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QPushButton

from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.batch.tab import BatchTab
from tests.ui.conftest import UiBundle, wait_until


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


def numbers(count: int) -> list[str]:
    return [f"0412 {i // 1000:03d} {i % 1000:03d}" for i in range(count)]


async def ready_tab(ui: UiBundle, sandbox: SandboxThread, qtbot, count: int = 250) -> BatchTab:
    await ui.connect(sandbox)
    tab = BatchTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    tab.compose.editor.set_text("Hello from the batch tab")
    tab.recipients.paste.setPlainText("\n".join(numbers(count)))
    tab.recipients.check_paste()
    await wait_until(lambda: tab.recipients.result is not None and not tab.recipients.busy)
    return tab


async def sent(tab: BatchTab, within: float = 20.0) -> None:
    await wait_until(lambda: tab.run is not None and not tab.sending, within, "send finished")


async def idle(tab: BatchTab, ui: UiBundle) -> None:
    """Stop following and let every task of the tab end: none may outlive the test's loop."""
    if ui.tasks.running("batch-follow", owner=tab):
        tab.results.follow_button.click()
    keys = ("batch-send", "batch-follow")
    panel = ("batch-recipients", "batch-export")  # the recipients panel's own tasks

    def busy() -> bool:
        return any(ui.tasks.running(k, owner=tab) for k in keys) or any(
            ui.tasks.running(k, owner=tab.recipients) for k in panel
        )

    await wait_until(lambda: not busy(), 20, "tab idle")
