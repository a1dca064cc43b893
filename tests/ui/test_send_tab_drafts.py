"""Send tab drafts: what the operator typed survives a rebuild, a restart and a profile switch."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from gwdesk.app.sms import Channel
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.main_window import MainWindow
from gwdesk.ui.send.tab import DRAFT_KEY, SendTab
from gwdesk.ui.widgets.reply_options import ReplyMode
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.screenshot_support import WINDOW, shot
from tests.ui.send_support import (
    fill,
    messages,
    send_and_wait,
    send_tab,
)


async def test_the_draft_survives_rebuilding_the_tab(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    fill(tab, "0412 345 678", "Half-written ‘draft’ 🙂")
    tab.form.sender_edit.setText("ACME")
    tab.form.replies.set_mode(ReplyMode.TWO_WAY)
    tab.form.replies.set_reply_type("EMAIL")
    tab.form.replies.path_edit.setText("replies@example.com")
    tab.form.external_id.setText("ref-9")
    tab.form.tags.setText("vip")
    when = (datetime.now(UTC) + timedelta(days=1)).replace(second=0, microsecond=0)
    tab.form.send_at.set_value(when)
    tab.keep_text.setChecked(True)
    tab.save_draft()
    tab.close()

    again = await send_tab(ui, qtbot)
    form = again.form
    assert form.recipient.text() == "0412 345 678"
    assert form.editor.text() == "Half-written ‘draft’ 🙂"
    assert form.sender_edit.text() == "ACME"
    assert form.replies.mode() is ReplyMode.TWO_WAY
    assert form.replies.reply() == ("EMAIL", "replies@example.com")
    assert (form.external_id.text(), form.tags.text()) == ("ref-9", "vip")
    assert form.send_at.value() == when
    assert again.keep_text.isChecked()


async def test_the_draft_is_saved_shortly_after_the_last_edit(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    store = ui.session.store
    assert store is not None
    qtbot.keyClicks(tab.form.editor.edit, "Typed")
    assert store.drafts.load(DRAFT_KEY).get("text") != "Typed"
    await wait_until(lambda: store.drafts.load(DRAFT_KEY).get("text") == "Typed", within=3)


async def test_the_draft_survives_a_restart(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    tab.form.set_channel(Channel.WAP_PUSH)
    tab.form.recipient.set_text("+61412345678")
    tab.form.wap_app.setText("Rewards")
    tab.form.wap_url.setText("https://example.com/rewards")
    tab.save_draft()
    await ui.session.close()  # the console quits: the store is closed
    await ui.connect(sandbox)  # and starts again on the same profile

    again = await send_tab(ui, qtbot)
    assert again.form.channel() is Channel.WAP_PUSH
    assert again.form.wap_url.text() == "https://example.com/rewards"
    assert again.form.wap_app.text() == "Rewards"


async def test_a_profile_switch_saves_the_last_edits_to_the_old_profile(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    qtbot.keyClicks(tab.form.editor.edit, "Typed just before switching")
    await ui.connect(sandbox)  # the same profile again: its store is closed and reopened
    assert tab.form.editor.text() == "Typed just before switching"


async def test_what_was_typed_before_the_gateway_connected_is_kept(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot)
    qtbot.keyClicks(tab.form.editor.edit, "Typed while the sandbox started")
    await ui.connect(sandbox)
    assert tab.form.editor.text() == "Typed while the sandbox started"
    assert ui.session.store is not None
    stored = ui.session.store.drafts.load(DRAFT_KEY)
    assert stored["text"] == "Typed while the sandbox started"


async def test_a_successful_send_clears_the_message_from_the_draft(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    fill(tab, "0412345678", "Gone after sending")
    tab.form.sender_edit.setText("ACME")
    await send_and_wait(tab)
    assert (tab.form.recipient.text(), tab.form.editor.text()) == ("", "")
    assert tab.form.sender_edit.text() == "ACME"
    assert ui.session.store is not None
    stored = ui.session.store.drafts.load(DRAFT_KEY)
    assert (stored["recipient"], stored["text"], stored["sender"]) == ("", "", "ACME")


async def test_keep_text_keeps_the_message_for_the_next_recipient(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    tab.keep_text.setChecked(True)
    fill(tab, "0412345678", "Same text for everyone")
    await send_and_wait(tab)
    assert tab.form.recipient.text() == ""
    assert tab.form.editor.text() == "Same text for everyone"


async def test_a_broken_draft_is_ignored(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await ui.connect(sandbox)
    assert ui.session.store is not None
    ui.session.store.drafts.save(
        DRAFT_KEY,
        {"channel": "fax", "text": 42, "recipient": ["x"], "send_at": "yesterday", "scheduled": 1},
    )
    tab = await send_tab(ui, qtbot)
    assert tab.form.channel() is Channel.REST_SMS
    assert (tab.form.editor.text(), tab.form.recipient.text()) == ("", "")
    assert not tab.form.send_at.is_scheduled()


async def test_screenshot_send(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot, screenshots_dir: Path | None, tmp_path: Path
) -> None:
    """Three sends in the history (two REST, one Lodge) and a scheduled two-way one composed."""
    await ui.connect(sandbox)
    settings = QSettings(str(tmp_path / "shot.ini"), QSettings.Format.IniFormat)
    window = MainWindow.build(ui.session, ui.tasks, ui.theme, settings, [SendTab])
    qtbot.addWidget(window)
    window.resize(WINDOW)
    window.show()
    tab = window.tab(SendTab)
    assert isinstance(tab, SendTab)
    for number, text in (
        ("0412 345 678", "Your order #1042 has shipped."),
        ("0412 345 679", "Reminder: your appointment is tomorrow at 10:30."),
    ):
        fill(tab, number, text)
        await send_and_wait(tab)
    fill(tab, "0412 345 670", "")
    tab.form.set_channel(Channel.LODGE_SMS)
    tab.form.editor.set_text("Hi")
    await send_and_wait(tab)
    sent = [(row["to_number"], row["message"], row["service_id"]) for row in messages(sandbox)]
    assert sent == [
        ("61412345678", "Your order #1042 has shipped.", 1),
        ("61412345679", "Reminder: your appointment is tomorrow at 10:30.", 1),
        ("61412345670", "Hi", 2),
    ]
    entries = tab.history.entries()
    assert [(e.text, e.ok) for e in entries] == [
        ("Hi", True),
        ("Reminder: your appointment is tomorrow at 10:30.", True),
        ("Your order #1042 has shipped.", True),
    ]
    tab.form.set_channel(Channel.REST_SMS)
    fill(
        tab, "0412 345 671", "Café ‘Le Petit’ is open until 22:00 tonight 🎉 Reply STOP to opt out."
    )
    tab.form.sender_edit.setText("LePetit")
    tab.form.replies.set_mode(ReplyMode.TWO_WAY)
    tab.form.replies.set_reply_type("HTTPPOST")
    tab.form.replies.path_edit.setText("https://hooks.example.com/sms?from=#FROM#&text=#MSG#")
    tab.form.send_at.set_value(datetime.now(UTC) + timedelta(hours=2))
    tab.form.tags.setText("promo, evening")
    tab.form.editor.refresh()
    assert tab.form.send_at.is_scheduled()
    assert tab.form.replies.mode() is ReplyMode.TWO_WAY
    await shot(window, screenshots_dir, "send.png", WINDOW)
    for widget in (tab.form.recipient, tab.form.editor, tab.form.replies.path_edit, tab.history):
        assert widget.isVisible(), widget
