"""Helpers shared by the Send tab tests: build the tab, fill it, send, read the sandbox."""

from __future__ import annotations

from typing import Any

from pytestqt.qtbot import QtBot

from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.send.tab import SendTab
from tests.ui.conftest import UiBundle, wait_until

MESSAGE_COLUMNS = (
    "to_number, message, from_number, reply_type, reply_path, external_system_id, tags, "
    "sent_us, lodged_us, service_id, type, subject, url"
)


async def send_tab(ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread | None = None) -> SendTab:
    if sandbox is not None:
        await ui.connect(sandbox)
    tab = SendTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    return tab


def fill(tab: SendTab, recipient: str, text: str) -> None:
    tab.form.recipient.set_text(recipient)
    tab.form.editor.set_text(text)


async def send_and_wait(tab: SendTab, within: float = 20.0) -> None:
    tab.send()
    await wait_until(lambda: not tab.sending(), within, "the send to finish")


def messages(sandbox: SandboxThread) -> list[dict[str, Any]]:
    names = [c.strip() for c in MESSAGE_COLUMNS.split(",")]
    rows = sandbox.query(f"SELECT {MESSAGE_COLUMNS} FROM messages ORDER BY id")
    return [dict(zip(names, row, strict=True)) for row in rows]


def message_count(sandbox: SandboxThread) -> int:
    count: int = sandbox.query("SELECT COUNT(*) FROM messages")[0][0]
    return count
