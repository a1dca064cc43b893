"""Status tab: lookups by each key (REST and legacy Lodge) against the sandbox, errors at the field."""

from __future__ import annotations

import httpx
from PySide6.QtCore import Qt

from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.status.tab import COLUMN, LEGACY, StatusTab
from gwdesk.ui.widgets.validity import is_invalid
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
        await wait_until(lambda: not ui.tasks.running("status-lookup", owner=tab))
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


# ---- the legacy lookup (GetMessageStatusXML) ---------------------------------------------------


def legacy_tab(ui: UiBundle, qtbot) -> StatusTab:
    tab = StatusTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    tab.kind.setCurrentIndex(tab.kind.findData(LEGACY))
    return tab


def shown_columns(tab: StatusTab) -> list[str]:
    header = tab.table.horizontalHeader()
    return [
        str(tab.model.headerData(i, Qt.Orientation.Horizontal))
        for i in range(tab.model.columnCount())
        if not header.isSectionHidden(i)
    ]


async def test_a_legacy_lookup_shows_the_lodge_status_of_a_message_lodged_through_lodge(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    await ui.connect(sandbox)
    assert ui.session.service is not None
    lodged = await ui.session.service.lodge.lodge_sms_with_reply_xml(
        "0412 345 611", "Your table is ready", "EMAIL", "desk@example.com"
    )
    assert lodged.msg_id
    tab = legacy_tab(ui, qtbot)
    qtbot.keyClicks(tab.key_edit, lodged.msg_id)
    qtbot.keyClick(tab.key_edit, Qt.Key.Key_Return)
    await wait_until(lambda: tab.model.rowCount() == 1)
    row = tab.model.row_at(0)
    assert (row.phone_number, row.message_id, row.status) == (
        "61412345611",
        lodged.msg_id,
        "ACTIVE",
    )
    assert tab.model.index(0, COLUMN["Lodged"]).data()  # the time Lodge gave, shown
    assert shown_columns(tab) == ["Phone number", "Message ID", "Status", "Lodged", "Sent"]
    assert tab.summary.text() == "1 message: 1 ACTIVE"


async def test_a_legacy_lookup_of_an_unknown_id_says_so_at_the_field_and_keeps_it(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    await ui.connect(sandbox)
    tab = legacy_tab(ui, qtbot)
    tab.key_edit.setText("20990101000000000000")
    tab.look_up()
    await wait_until(lambda: not tab.error.isHidden())
    assert "does not know that message" in tab.error.text()
    assert is_invalid(tab.key_edit)
    assert tab.key_edit.text() == "20990101000000000000"
    assert tab.model.rowCount() == 0


async def test_a_legacy_lookup_of_a_non_numeric_id_is_answered_not_found(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    await ui.connect(sandbox)
    tab = legacy_tab(ui, qtbot)
    hostile = "<MsgID>1</MsgID> & 'x' \"y\""
    tab.key_edit.setText(hostile)
    tab.look_up()
    await wait_until(lambda: not tab.error.isHidden())
    assert "does not know that message" in tab.error.text()
    assert tab.key_edit.text() == hostile
    assert tab.model.rowCount() == 0


async def test_a_blank_legacy_lookup_asks_for_a_value_without_a_request(
    ui: UiBundle, qtbot
) -> None:
    tab = legacy_tab(ui, qtbot)
    tab.key_edit.setText("   ")
    tab.look_up()
    assert "Type the value" in tab.error.text()
    assert not ui.tasks.running("status-lookup", owner=tab)


async def test_a_value_with_control_characters_is_refused_before_any_request(
    ui: UiBundle, qtbot
) -> None:
    tab = legacy_tab(ui, qtbot)
    tab.key_edit.setText("2015122413\x0700812923")
    tab.look_up()
    assert "control characters" in tab.error.text()
    assert not ui.tasks.running("status-lookup", owner=tab)


async def test_editing_the_value_clears_the_error_at_the_field(ui: UiBundle, qtbot) -> None:
    tab = legacy_tab(ui, qtbot)
    tab.look_up()
    assert is_invalid(tab.key_edit)
    qtbot.keyClicks(tab.key_edit, "2")
    assert tab.error.isHidden()
    assert not is_invalid(tab.key_edit)


async def test_the_external_id_column_takes_the_spare_width_without_sideways_scrolling(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    await ui.connect(sandbox)
    lodge(sandbox, ["61412345678"], "ext-wide")
    tab = StatusTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    tab.resize(1260, 700)
    tab.show()
    tab.kind.setCurrentIndex(tab.kind.findData("external_system_id"))
    tab.key_edit.setText("ext-wide")
    tab.look_up()
    await wait_until(lambda: tab.model.rowCount() == 1)
    header = tab.table.horizontalHeader()
    assert header.sectionSize(COLUMN["External ID"]) > header.sectionSize(COLUMN["Tags"])
    assert header.length() <= tab.table.viewport().width()
    assert tab.table.horizontalScrollBar().maximum() == 0


async def test_the_empty_table_says_what_to_do_until_a_lookup_fills_it(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    await ui.connect(sandbox)
    message = lodge(sandbox, ["61412345678"], "ext-hint")["Message"]
    assert isinstance(message, dict)
    tab = StatusTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    tab.show()
    assert tab.empty.isVisible()
    assert "type it above" in tab.empty.text()
    tab.key_edit.setText(str(message["MessageId"]))
    tab.look_up()
    await wait_until(lambda: tab.model.rowCount() == 1)
    assert not tab.empty.isVisible()
