"""Status tab: lookups by each key against the sandbox, errors at the field, auto-refresh."""

from __future__ import annotations

import httpx
from PySide6.QtCore import Qt

from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.tabs.status import StatusTab
from tests.ui.conftest import UiBundle, wait_until


def lodge(sandbox: SandboxThread, recipients: list[str], external_id: str) -> dict[str, object]:
    response = httpx.post(
        f"{sandbox.rest_url}/v2/message/send",
        json={"Message": "Hello", "Recipients": recipients, "ExternalSystemId": external_id},
        auth=("demo", "demo"),
    )
    data: dict[str, object] = response.json()["Data"]
    return data


async def test_a_message_id_lookup_shows_the_message(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    await ui.connect(sandbox)
    message = lodge(sandbox, ["61412345678"], "ext-1")["Message"]
    assert isinstance(message, dict)
    tab = StatusTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    qtbot.keyClicks(tab.key_edit, message["MessageId"])
    qtbot.keyClick(tab.key_edit, Qt.Key.Key_Return)
    await wait_until(lambda: tab.model.rowCount() == 1)
    assert tab.model.row_at(0).phone_number == "61412345678"
    assert tab.summary.text() == "1 message: 1 ACTIVE"


async def test_a_batch_code_lookup_lists_every_message_of_the_batch(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    await ui.connect(sandbox)
    code = lodge(sandbox, ["61412345678", "61412345679", "61412345670"], "ext-2")["BatchCode"]
    tab = StatusTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    tab.kind.setCurrentIndex(tab.kind.findData("batch_code"))
    tab.key_edit.setText(str(code))
    for _ in range(50):
        tab.look_up()
        await wait_until(lambda: not ui.tasks.running("status-lookup"))
        if tab.model.rowCount() == 3:
            break
    assert {m.external_system_id for m in tab.model.rows} == {"ext-2"}


async def test_an_unknown_message_id_says_so_and_keeps_the_input(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    await ui.connect(sandbox)
    tab = StatusTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    tab.key_edit.setText("20990101000000000000")
    tab.look_up()
    await wait_until(lambda: not tab.error.isHidden())
    assert "20990101000000000000" in tab.key_edit.text()
    assert tab.model.rowCount() == 0


async def test_looking_up_nothing_asks_for_a_value(ui: UiBundle, qtbot) -> None:
    tab = StatusTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    tab.look_up()
    assert not tab.error.isHidden()
    assert "Type the value" in tab.error.text()
