"""The conversation view: sent messages and replies interleaved, and the reply box."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

from pytestqt.qtbot import QtBot

from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.history import HistoryEntry
from gwdesk.store.outbox import EntryState
from gwdesk.ui.replies.table import IN_REPLY_TO
from gwdesk.ui.send.tab import SendTab
from gwdesk.ui.widgets.reply_options import ReplyMode
from tests.sandbox.webhook_receiver import make_reply
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.replies_support import CUSTOMER, post_reply, replies_tab, start_listener
from tests.ui.send_support import fill, messages, send_and_wait


def sent_entry(at: datetime, text: str, message_id: str) -> HistoryEntry:
    return HistoryEntry(
        at=at,
        channel="SMS (REST)",
        recipients=CUSTOMER,
        text=text,
        ok=True,
        message_id=message_id,
        status="DELIVERED",
    )


def cache_record(path: object, message_id: str, at: datetime, text: str) -> None:
    """A send made elsewhere (a batch, another tool), as a log sync stores it."""
    conn = sqlite3.connect(str(path))
    try:
        conn.execute(
            "INSERT INTO log_records(message_id, status, date_lodged, to_number, message, synced) "
            "VALUES (?, 'DELIVERED', ?, ?, ?, 0)",
            (message_id, int(at.timestamp() * 1_000_000), CUSTOMER, text),
        )
        conn.commit()
    finally:
        conn.close()


async def test_the_conversation_interleaves_sent_messages_and_replies_in_time_order(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await replies_tab(ui, qtbot, sandbox)
    template = ui.session.replies.template
    store = ui.session.store
    assert template is not None
    assert store is not None
    t0 = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
    store.history.add(sent_entry(t0, "Your appointment is Friday 10:30. Reply YES.", "m-1"))
    cache_record(store.path, "m-2", t0 + timedelta(minutes=20), "Reminder: tomorrow 10:30")
    cache_record(store.path, "m-1", t0, "the same send, also in the log cache")
    await post_reply(template, text="Can we make it 11?", received=t0 + timedelta(minutes=10))
    await post_reply(template, text="YES", received=t0 + timedelta(minutes=30))
    await post_reply(template, text="someone else", sender="61499999999")
    await wait_until(lambda: tab.model.total == 3)

    tab.table.selectRow(0)
    await wait_until(lambda: len(tab.conversation.entries) == 4)
    entries = tab.conversation.entries
    assert [(e.incoming, e.text) for e in entries] == [
        (False, "Your appointment is Friday 10:30. Reply YES."),
        (True, "Can we make it 11?"),
        (False, "Reminder: tomorrow 10:30"),
        (True, "YES"),
    ]
    assert tab.conversation.title.text() == "Conversation with +61 412 345 678"
    shown = tab.conversation.transcript.toPlainText()
    assert (
        shown.index("Can we make it 11?")
        < shown.index("Reminder: tomorrow")
        < shown.index("\nYES\n")
    )


async def test_a_new_reply_from_the_open_number_joins_its_conversation(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await replies_tab(ui, qtbot, sandbox)
    template = ui.session.replies.template
    assert template is not None
    await post_reply(template, text="First")
    await wait_until(lambda: tab.model.total == 1)
    tab.table.selectRow(0)
    await wait_until(lambda: len(tab.conversation.entries) == 1)

    await post_reply(template, text="<b>Second</b> & more")  # shown as typed, not as markup
    await wait_until(lambda: len(tab.conversation.entries) == 2)
    assert "<b>Second</b> & more" in tab.conversation.transcript.toPlainText()


async def test_the_reply_box_sends_to_the_number_and_routes_its_answer_here(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await replies_tab(ui, qtbot, sandbox)
    template = ui.session.replies.template
    assert template is not None
    await post_reply(template, text="Is the shop open Sunday?")
    await wait_until(lambda: tab.model.total == 1)
    tab.table.selectRow(0)
    await wait_until(lambda: len(tab.conversation.entries) == 1)

    tab.conversation.editor.set_text("Yes, 10 to 4. See you!")
    tab.conversation.send()
    await wait_until(lambda: not tab.conversation.sending(), 20)

    [row] = messages(sandbox)
    assert (row["to_number"], row["message"]) == (CUSTOMER, "Yes, 10 to 4. See you!")
    assert (row["reply_type"], row["reply_path"]) == ("HTTP", template.render())
    assert tab.conversation.editor.text() == ""
    assert tab.conversation.result_label.text() == "Sent to +61 412 345 678."
    await wait_until(lambda: len(tab.conversation.entries) == 2)
    assert [e.incoming for e in tab.conversation.entries] == [True, False]


async def test_a_reply_from_the_conversation_is_recorded_in_the_outbox(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await replies_tab(ui, qtbot, sandbox)
    template = ui.session.replies.template
    assert template is not None
    await post_reply(template, text="Still open?")
    await wait_until(lambda: tab.model.total == 1)
    tab.table.selectRow(0)
    await wait_until(lambda: len(tab.conversation.entries) == 1)

    tab.conversation.editor.set_text("Until six.")
    tab.conversation.send()
    await wait_until(lambda: not tab.conversation.sending(), 20)

    assert ui.session.store is not None
    [batch] = ui.session.store.outbox.batches(open_only=False)
    [entry] = ui.session.store.outbox.entries(batch.id)
    [(message_id,)] = sandbox.query("SELECT message_id FROM messages")
    assert (entry.state, entry.message_id) == (EntryState.LODGED, message_id)


async def test_a_reply_that_fails_to_send_keeps_its_text_and_says_why(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await replies_tab(ui, qtbot, sandbox)
    template = ui.session.replies.template
    assert template is not None
    await post_reply(template, text="Hello?")
    await wait_until(lambda: tab.model.total == 1)
    tab.table.selectRow(0)
    await wait_until(lambda: tab.conversation.number == CUSTOMER)
    sandbox.stop()  # the gateway is gone

    tab.conversation.editor.set_text("Sorry for the wait, we are on it.")
    tab.conversation.send()
    await wait_until(lambda: not tab.conversation.sending(), 30)

    assert tab.conversation.editor.text() == "Sorry for the wait, we are on it."
    assert tab.conversation.result_label.text().startswith("Not sent: ")
    assert tab.conversation.result_label.text().endswith("Your text is kept.")
    assert tab.conversation.send_button.isEnabled()


async def test_a_reply_box_refusal_is_local_and_keeps_the_text(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await replies_tab(ui, qtbot, sandbox)
    template = ui.session.replies.template
    assert template is not None
    await post_reply(template, text="Hello?")
    await wait_until(lambda: tab.model.total == 1)
    tab.table.selectRow(0)
    await wait_until(lambda: tab.conversation.number == CUSTOMER)

    tab.conversation.editor.set_text("   ")
    tab.conversation.send()

    assert tab.conversation.result_label.text().startswith("Not sent: ")
    assert messages(sandbox) == []


async def test_a_two_way_send_and_its_reply_through_the_sandbox_reach_the_view_and_conversation(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await replies_tab(ui, qtbot, sandbox)
    send = SendTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(send)
    fill(send, "0412 345 678", "Your table for 4 is booked at 7pm. Reply YES to confirm.")
    send.form.replies.listener_button.click()
    assert send.form.replies.mode() is ReplyMode.TWO_WAY
    await send_and_wait(send)
    [row] = messages(sandbox)
    message_id = send.history.entries()[0].message_id
    assert message_id is not None

    make_reply(sandbox, message_id=message_id, text="YES, thanks!")

    await wait_until(lambda: tab.model.total == 1, 10, "the reply in the table")
    reply = tab.model.row(0)
    assert reply is not None
    assert (reply.from_number, reply.text) == (CUSTOMER, "YES, thanks!")
    tab.table.selectRow(0)
    await wait_until(lambda: len(tab.conversation.entries) == 2)
    assert [(e.incoming, e.text) for e in tab.conversation.entries] == [
        (False, row["message"]),
        (True, "YES, thanks!"),
    ]

    await ui.session.replies.backfill()  # the backfill knows which message it answers
    await wait_until(lambda: tab.model.index(0, IN_REPLY_TO).data() == row["message"])


async def test_the_conversation_box_is_off_until_a_reply_is_chosen(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await replies_tab(ui, qtbot, sandbox, listen=False)
    assert not tab.conversation.send_button.isEnabled()
    assert not tab.conversation.editor.isEnabled()
    await start_listener(ui)
    assert tab.conversation.route_box.isEnabled()
