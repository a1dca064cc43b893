"""A customer who says STOP is never texted again from the console: through the sandbox.

A two-way message goes from the Send tab with the console's listener as its
ReplyPath; the sandbox's customer replies STOP, and the sandbox calls the console's
listener with it (a real webhook over loopback). From then on the Send tab, the
conversation's reply box and the Batch tab all leave that number out, and say why.
"""

from __future__ import annotations

import asyncio
import csv
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.local import LocalStore
from gwdesk.store.optouts import How
from gwdesk.store.outbox import EntryState
from gwdesk.ui.batch.tab import BatchTab
from gwdesk.ui.replies.tab import RepliesTab
from gwdesk.ui.replies.table import OPT_OUT
from gwdesk.ui.send.tab import SendTab
from gwdesk.ui.widgets.reply_options import ReplyMode
from tests.sandbox.webhook_receiver import make_reply, wait_until_delivered
from tests.ui.batch_support import confirm_send
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.replies_support import start_listener
from tests.ui.screenshot_support import WINDOW, in_window, shot
from tests.ui.send_support import fill, message_count, messages, send_and_wait, send_tab

CUSTOMER = "61412345678"
TYPED = "0412 345 678"
INSTRUCTION = "Reply STOP to opt out"


def store_of(ui: UiBundle) -> LocalStore:
    assert ui.session.store is not None
    return ui.session.store


async def reply_by_webhook(sandbox: SandboxThread, text: str) -> dict[str, Any]:
    """The customer answers the last message sent; the sandbox calls its ReplyPath until
    it is answered OK (waited for: the reply is stored when this returns)."""
    [(message_id,)] = sandbox.query("SELECT message_id FROM messages ORDER BY id DESC LIMIT 1")

    def reply() -> dict[str, Any]:
        made = make_reply(sandbox, message_id=message_id, text=text)
        attempts = wait_until_delivered(sandbox, made["ReplyId"], timeout=20)  # retries too
        assert attempts, "the sandbox called the ReplyPath"
        assert attempts[-1]["Ok"], attempts
        return made

    return await asyncio.get_running_loop().run_in_executor(None, reply)


async def two_way_send(ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread) -> SendTab:
    """The Send tab, after a two-way message to the customer routed to this console."""
    tab = await send_tab(ui, qtbot, sandbox)
    await start_listener(ui)
    fill(tab, TYPED, "Your order is ready for pick-up. Reply with any question.")
    tab.form.replies.use_listener()
    await send_and_wait(tab)
    assert message_count(sandbox) == 1
    return tab


async def opted_out(ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread) -> SendTab:
    """The Send tab, after the customer replied STOP to a two-way message."""
    tab = await two_way_send(ui, qtbot, sandbox)
    await reply_by_webhook(sandbox, "STOP")
    await wait_until(lambda: store_of(ui).optouts.get(CUSTOMER) is not None)
    return tab


@pytest.fixture
def sydney_time(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The operator's zone is Sydney's (the test machine's is UTC)."""
    monkeypatch.setenv("TZ", "Australia/Sydney")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


# ---- the list --------------------------------------------------------------------------------


async def test_a_stop_by_webhook_opts_the_number_out(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await opted_out(ui, qtbot, sandbox)
    found = store_of(ui).optouts.get(CUSTOMER)
    assert found is not None
    assert (found.opted_out, found.how, found.keyword) == (True, How.REPLY, "STOP")


async def test_the_same_stop_fetched_by_the_backfill_afterwards_adds_nothing(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await opted_out(ui, qtbot, sandbox)
    store = store_of(ui)
    report = await ui.session.replies.backfill()
    assert report.ok, report.text
    assert "No missed replies" in report.text
    assert store.replies.count() == 1
    assert [c.applied for c in store.optouts.history(CUSTOMER)] == [True]


async def test_start_by_webhook_resubscribes_and_the_send_tab_sends_again(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await opted_out(ui, qtbot, sandbox)
    await reply_by_webhook(sandbox, "Start")
    found = store_of(ui).optouts.get(CUSTOMER)
    assert found is not None
    assert not found.opted_out
    fill(tab, TYPED, "Welcome back")
    await send_and_wait(tab)
    assert message_count(sandbox) == 2
    assert tab.status_label.text().startswith("Sent to")


async def test_please_dont_stop_does_not_opt_out(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await two_way_send(ui, qtbot, sandbox)
    await reply_by_webhook(sandbox, "Please don't stop my order")
    assert store_of(ui).replies.count() == 1
    assert store_of(ui).optouts.get(CUSTOMER) is None
    fill(tab, TYPED, "Your order ships today")
    await send_and_wait(tab)
    assert message_count(sandbox) == 2


# ---- the Send tab ----------------------------------------------------------------------------


async def test_the_to_field_says_the_number_opted_out_as_it_is_typed(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await opted_out(ui, qtbot, sandbox)
    tab.form.recipient.set_text("+61 412 345 678")
    notice = tab.form.recipient.notice
    await wait_until(lambda: not notice.isHidden() and notice.text())
    assert notice.text().startswith("+61 412 345 678 opted out by replying STOP on ")
    assert "purely factual" in notice.text()
    tab.form.recipient.set_text("0412 345 679")  # another number: the notice goes at once
    assert notice.isHidden()


async def test_the_opt_out_is_told_in_the_operators_time(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot, sydney_time: None
) -> None:
    tab = await opted_out(ui, qtbot, sandbox)
    tab.form.recipient.set_text(TYPED)
    notice = tab.form.recipient.notice
    await wait_until(lambda: bool(notice.text()))
    assert "UTC" not in notice.text()
    assert " AEST" in notice.text() or " AEDT" in notice.text()


async def test_a_send_to_the_opted_out_number_is_refused_at_to_and_keeps_the_text(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await opted_out(ui, qtbot, sandbox)
    fill(tab, TYPED, "Last chance: 20% off")
    await send_and_wait(tab)
    assert message_count(sandbox) == 1
    assert "opted out by replying STOP" in tab.form.error_text("recipient")
    assert tab.status_label.text().startswith("Not sent: 61412345678 opted out")
    assert tab.form.editor.text() == "Last chance: 20% off"
    assert len(store_of(ui).outbox.batches(open_only=False)) == 1  # nothing recorded


async def test_a_purely_factual_message_reaches_the_opted_out_number_and_is_recorded(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await opted_out(ui, qtbot, sandbox)
    fill(tab, TYPED, "Your parcel was delivered at 10:02.")
    tab.form.marking.factual.setChecked(True)
    await send_and_wait(tab)
    assert message_count(sandbox) == 2
    history = store_of(ui).history

    def marked() -> bool:
        return any(
            "purely factual" in e.detail for e in history.since(datetime(2000, 1, 1, tzinfo=UTC))
        )

    await wait_until(marked, message="the history row says the message was marked factual")
    assert not tab.form.marking.factual.isChecked()  # the mark was for that message


async def test_a_marketing_message_carries_the_instruction_and_counts_it(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    text = "x" * 150  # one part alone; two with the instruction
    fill(tab, TYPED, text)
    assert tab.form.editor.info().parts == 1
    tab.form.marking.marketing.setChecked(True)
    assert tab.form.editor.info().parts == 2
    assert INSTRUCTION in tab.form.editor.appended_label.text()
    await send_and_wait(tab)
    [sent] = messages(sandbox)
    assert sent["message"] == f"{text}\n{INSTRUCTION}"


async def test_a_marketing_message_from_a_sender_name_is_refused_at_from(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    fill(tab, TYPED, "Half price today")
    tab.form.sender_edit.setText("ACME")
    tab.form.marking.marketing.setChecked(True)
    assert "reply STOP" in tab.form.error_text("sender")  # as it is typed
    tab.send()
    assert not tab.sending()
    assert message_count(sandbox) == 0
    assert "reply STOP" in tab.form.error_text("sender")


# ---- ACMA's sender rules at the field ---------------------------------------------------------


@pytest.mark.parametrize(
    ("sender", "said", "role"),
    [
        ("ACME_", "may not start or end with a space or an underscore", "error"),
        (" ACME", "may not start or end with a space or an underscore", "error"),
        ("Unverified", '"Unverified" is what phones show', "error"),
        ("12", "may not be all digits", "error"),
        ("Café Rio", "plain ASCII", "error"),
        ("A" * 51, "at most 50 characters", "error"),
        ("HarbourDental", "13 characters: phones show at most 11", "warning"),
        ("A", "One character", "warning"),
        ("0412 34", "The sender number is not usable", "error"),
    ],
)
async def test_each_sender_rule_is_shown_at_from_as_it_is_typed(
    ui: UiBundle, qtbot: QtBot, sender: str, said: str, role: str
) -> None:
    tab = await send_tab(ui, qtbot)
    tab.form.sender_edit.setMaxLength(64)
    tab.form.sender_edit.setText(sender)
    label = tab.form.sender_error
    assert said in label.text()
    assert label.property("role") == role
    assert not label.isHidden()


async def test_a_sender_name_on_a_two_way_message_warns_that_no_reply_can_come(
    ui: UiBundle, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot)
    tab.form.sender_edit.setText("ACME")
    assert tab.form.sender_error.isHidden()
    tab.form.replies.set_mode(ReplyMode.TWO_WAY)
    assert "Replies cannot come back to a sender name" in tab.form.sender_error.text()
    assert tab.form.sender_error.property("role") == "warning"


async def test_a_sender_number_and_an_empty_sender_say_nothing(ui: UiBundle, qtbot: QtBot) -> None:
    tab = await send_tab(ui, qtbot)
    tab.form.sender_edit.setText("0412 345 678")
    assert tab.form.sender_error.isHidden()
    tab.form.sender_edit.setText("")
    assert tab.form.sender_error.isHidden()


async def test_a_header_sender_name_is_read_by_the_same_rules(ui: UiBundle, qtbot: QtBot) -> None:
    tab = await send_tab(ui, qtbot)
    tab.form.replies.set_mode(ReplyMode.HEADER)
    tab.form.replies.sender_edit.setText("Unverified")
    assert '"Unverified" is what phones show' in tab.form.error_text("reply_path")


# ---- the conversation ------------------------------------------------------------------------


async def conversation_tab(ui: UiBundle, qtbot: QtBot) -> RepliesTab:
    tab = RepliesTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    await wait_until(lambda: tab.model is not None and tab.model.total == 1, 20, "the reply listed")
    tab.open_conversation(CUSTOMER)
    return tab


async def test_the_conversation_says_the_number_opted_out_and_by_what(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await opted_out(ui, qtbot, sandbox)
    tab = await conversation_tab(ui, qtbot)
    banner = tab.conversation.optout_label
    await wait_until(lambda: not banner.isHidden(), 20, "the opt-out shown above the transcript")
    assert banner.text().startswith("+61 412 345 678 opted out by replying STOP on ")


async def test_the_reply_box_refuses_the_opted_out_number_and_keeps_the_text(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await opted_out(ui, qtbot, sandbox)
    pane = (await conversation_tab(ui, qtbot)).conversation
    pane.editor.set_text("Are you sure? We have a deal for you")
    pane.send()
    await wait_until(lambda: not pane.sending(), 20, "the send settled")
    assert "opted out by replying STOP" in pane.result_label.text()
    assert pane.result_label.text().endswith("Your text is kept.")
    assert pane.editor.text() == "Are you sure? We have a deal for you"
    assert message_count(sandbox) == 1


async def test_the_reply_box_sends_a_reply_marked_purely_factual(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await opted_out(ui, qtbot, sandbox)
    pane = (await conversation_tab(ui, qtbot)).conversation
    pane.editor.set_text("You will get no more messages from us.")
    pane.factual_box.setChecked(True)
    pane.send()
    await wait_until(lambda: not pane.sending(), 20, "the send settled")
    assert pane.result_label.text().startswith("Sent to"), pane.result_label.text()
    assert message_count(sandbox) == 2
    assert not pane.factual_box.isChecked()


# ---- the Replies table -------------------------------------------------------------------------


async def test_the_replies_table_badges_stop_and_marks_the_opted_out_number(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await opted_out(ui, qtbot, sandbox)
    tab = await conversation_tab(ui, qtbot)
    model = tab.model
    assert model is not None
    await wait_until(lambda: model.opted_out_now(model.row(0)))
    assert model.index(0, OPT_OUT).data() == "STOP"
    assert "opted the number out" in model.index(0, OPT_OUT).data(3)  # tooltip


async def test_a_reply_that_mentions_stop_is_flagged_for_the_operator(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await two_way_send(ui, qtbot, sandbox)
    await reply_by_webhook(sandbox, "Please don't stop my order")
    tab = await conversation_tab(ui, qtbot)
    assert tab.model is not None
    assert tab.model.index(0, OPT_OUT).data() == "mentions STOP"
    assert not tab.model.opted_out_now(tab.model.row(0))


# ---- the Batch tab -----------------------------------------------------------------------------


def batch_numbers(count: int) -> list[str]:
    """`count` numbers, the opted-out customer's among them (as typed in a list)."""
    numbers = [f"0412 {i // 1000:03d} {i % 1000:03d}" for i in range(count - 1)]
    numbers.insert(count // 2, TYPED)
    return numbers


async def batch_tab(ui: UiBundle, qtbot: QtBot, count: int = 250) -> BatchTab:
    tab = BatchTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    tab.compose.editor.set_text("Our spring sale starts today.")
    tab.recipients.paste.setPlainText("\n".join(batch_numbers(count)))
    tab.recipients.check_paste()
    await wait_until(lambda: tab.recipients.result is not None and not tab.recipients.busy)
    return tab


async def stop_following(ui: UiBundle, tab: BatchTab) -> None:
    """No task of the tab may outlive the test's loop: stop following the batch's progress."""
    if ui.tasks.running("batch-follow", owner=tab):
        tab.results.follow_button.click()
    await wait_until(lambda: not ui.tasks.running("batch-follow", owner=tab))


async def test_the_batch_totals_say_one_opted_out_number_is_excluded(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await opted_out(ui, qtbot, sandbox)
    tab = await batch_tab(ui, qtbot)
    await wait_until(lambda: tab.totals.figures["excluded"].text() == "1")
    assert tab.totals.figures["valid"].text() == "250"
    assert tab.totals.figures["total_parts"].text() == "249"
    assert tab.totals.optout_line.text().startswith("Opted out: 1 excluded")
    assert not tab.totals.export_excluded_button.isHidden()


async def test_a_250_row_batch_with_the_number_lodges_249_and_says_1_excluded(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await opted_out(ui, qtbot, sandbox)
    tab = await batch_tab(ui, qtbot)
    await confirm_send(tab)
    await wait_until(lambda: tab.run is not None and not tab.sending, 30, "the batch sent")
    assert tab.run is not None
    assert tab.run.recipients_in(EntryState.LODGED) == 249
    assert tab.run.batch.excluded == (CUSTOMER,)
    assert "1 opted-out recipient excluded" in tab.totals.outcome.text()
    await wait_until(lambda: message_count(sandbox) == 250, 30, "the sandbox made 249 more")
    to_customer = sandbox.query("SELECT COUNT(*) FROM messages WHERE to_number = ?", (CUSTOMER,))
    assert to_customer == [(1,)]  # the two-way message before the STOP, nothing since
    await stop_following(ui, tab)


async def test_the_batchs_opted_out_recipients_export_as_csv(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot, tmp_path: Path
) -> None:
    await opted_out(ui, qtbot, sandbox)
    tab = await batch_tab(ui, qtbot, count=20)
    await wait_until(lambda: tab.totals.figures["excluded"].text() == "1")
    target = tmp_path / "excluded.csv"
    tab.totals.export_excluded(target)
    await wait_until(lambda: "Saved 1 to excluded.csv" in tab.totals.optout_line.text())
    rows = list(csv.reader(target.read_text(encoding="utf-8-sig").splitlines()))
    assert rows[0][:2] == ["Number", "State"]
    assert rows[1][:2] == [CUSTOMER, "opted out"]
    assert rows[1][5] == "STOP"


async def test_marking_the_batch_purely_factual_keeps_the_opted_out_number(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await opted_out(ui, qtbot, sandbox)
    tab = await batch_tab(ui, qtbot, count=20)
    await wait_until(lambda: tab.totals.figures["excluded"].text() == "1")
    tab.compose.marking.factual.setChecked(True)
    await wait_until(lambda: tab.totals.figures["excluded"].text() == "0")
    assert tab.totals.figures["total_parts"].text() == "20"
    assert "purely factual" in tab.totals.optout_line.text()


async def test_a_marketing_batch_from_a_sender_name_is_refused_at_from(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await ui.connect(sandbox)
    tab = await batch_tab(ui, qtbot, count=5)
    tab.compose.sender_edit.setText("ACME")
    tab.compose.marking.marketing.setChecked(True)
    assert "reply STOP" in tab.compose.error_text("sender")
    tab.send()
    assert not tab.sending
    assert message_count(sandbox) == 0


async def test_the_batch_counts_the_instruction_of_a_marketing_message(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await ui.connect(sandbox)
    tab = await batch_tab(ui, qtbot, count=5)
    tab.compose.editor.set_text("y" * 150)
    assert tab.totals.figures["parts"].text() == "1"
    tab.compose.marking.marketing.setChecked(True)
    await wait_until(lambda: tab.totals.figures["parts"].text() == "2")
    assert tab.totals.figures["total_parts"].text() == "10"


async def test_the_batch_from_field_shows_the_sender_rules(ui: UiBundle, qtbot: QtBot) -> None:
    tab = BatchTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    tab.compose.sender_edit.setText("HarbourDental")
    assert "phones show at most 11" in tab.compose.error_text("sender")
    assert tab.compose.sender_error.property("role") == "warning"


# ---- pictures ----------------------------------------------------------------------------------


async def test_screenshot_batch_with_exclusions(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot, screenshots_dir: Path | None
) -> None:
    await opted_out(ui, qtbot, sandbox)
    store_of(ui).optouts.set("61412000007", True, reason="<b>angry</b> \x1b[31mcall\x1b[0m")
    tab = await batch_tab(ui, qtbot)
    window = in_window(qtbot, tab)
    await wait_until(lambda: tab.totals.figures["excluded"].text() == "2")
    await confirm_send(tab)
    await wait_until(lambda: tab.run is not None and not tab.sending, 30)
    await stop_following(ui, tab)
    assert "2 opted-out recipients excluded" in tab.totals.outcome.text()
    await shot(window, screenshots_dir, "batch-excluded.png", WINDOW)


async def test_screenshot_send_tab_with_an_opted_out_recipient_and_sender_warnings(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot, screenshots_dir: Path | None
) -> None:
    tab = await opted_out(ui, qtbot, sandbox)
    window = in_window(qtbot, tab)
    tab.form.replies.set_mode(ReplyMode.TWO_WAY)
    fill(tab, TYPED, "Spring sale: 20% off everything this weekend <b>only</b>!")
    tab.form.sender_edit.setText("HarbourDental")
    tab.form.marking.marketing.setChecked(True)
    await wait_until(lambda: bool(tab.form.recipient.notice.text()))
    await shot(window, screenshots_dir, "send-opted-out.png", WINDOW)


async def test_screenshot_replies_with_opt_out_badges(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot, screenshots_dir: Path | None
) -> None:
    await two_way_send(ui, qtbot, sandbox)
    for text in (
        "Is my order ready?",
        "Please don't stop my order <b>ever</b> \x1b[2J",
        "STOP",
        "start again please",
        "Stop!! \u202eevil",
    ):
        await reply_by_webhook(sandbox, text)
    tab = RepliesTab(ui.session, ui.tasks, ui.theme)
    window = in_window(qtbot, tab)
    model = tab.model
    assert model is not None
    await wait_until(lambda: model.total == 5)
    await wait_until(lambda: model.opted_out_now(model.row(4)))
    badges = [model.index(row, OPT_OUT).data() for row in range(5)]
    assert badges == ["opted out", "mentions STOP", "STOP", "START", "STOP"]
    tab.open_conversation(CUSTOMER)
    await wait_until(lambda: not tab.conversation.optout_label.isHidden())
    await shot(window, screenshots_dir, "replies-opt-outs.png", WINDOW)
