"""The Replies tab shows conversations as work: state, assignment, filter, this operator's
unread figures, on a real profile file with replies posted to the real listener."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from gwdesk.app.conversations import Showing
from gwdesk.replies import ReplyTemplate
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.replies.conversations_list import NUMBER, NUMBER_ROLE, WHO
from gwdesk.ui.replies.tab import RepliesTab
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.conversations_support import fresh_listing, keystroke, states
from tests.ui.replies_support import CUSTOMER, post_reply, replies_tab

OTHER = "61499999999"
HOSTILE = "<b>Eve</b> <img src='/dev/zero'>\u202e"


async def tab_with_replies(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread, *senders: str
) -> tuple[RepliesTab, ReplyTemplate]:
    tab = await replies_tab(ui, qtbot, sandbox)
    template = ui.session.replies.template
    assert template is not None
    for number, sender in enumerate(senders):
        await post_reply(template, text=f"hello {number} from {sender}", sender=sender)
    await wait_until(lambda: tab.model is not None and tab.model.total == len(senders))
    await wait_until(lambda: tab.conversations.tree.topLevelItemCount() == len(set(senders)))
    return tab, template


async def open_first(tab: RepliesTab) -> None:
    tab.table.selectRow(0)
    work = tab.conversation.work
    await wait_until(lambda: work.kept is not None and work.state_label.text() != "")


def listed(tab: RepliesTab) -> list[tuple[str, str]]:
    tree = tab.conversations.tree
    return [
        (tree.topLevelItem(n).data(NUMBER, NUMBER_ROLE), tree.topLevelItem(n).text(WHO))
        for n in range(tree.topLevelItemCount())
    ]


async def test_ctrl_d_marks_the_conversation_shown_done_on_screen_and_in_the_record(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab, _template = await tab_with_replies(ui, qtbot, sandbox, CUSTOMER)
    await open_first(tab)
    work = tab.conversation.work
    assert work.state_label.text() == "Open · unassigned"

    await keystroke(qtbot, tab, tab.table, Qt.Key.Key_D)

    await wait_until(lambda: work.state_label.text() == "Done · unassigned")
    store = ui.session.store
    assert store is not None
    assert store.conversations.get(CUSTOMER).state == "done"
    await fresh_listing(tab.conversations)
    assert states(tab.conversations.tree) == ["Done"]


async def test_a_new_reply_reopens_a_done_conversation_and_it_is_shown_open(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab, template = await tab_with_replies(ui, qtbot, sandbox, CUSTOMER)
    await open_first(tab)
    work = tab.conversation.work
    work.done_button.click()
    await wait_until(lambda: work.state_label.text().startswith("Done"))

    await post_reply(template, text="One more thing", sender=CUSTOMER)

    await wait_until(lambda: work.state_label.text() == "Open · unassigned")
    await fresh_listing(tab.conversations)
    assert states(tab.conversations.tree) == ["Open"]


async def test_the_mine_filter_shows_only_conversations_assigned_to_this_operator(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab, _template = await tab_with_replies(ui, qtbot, sandbox, CUSTOMER, OTHER)
    work = tab.conversation.work
    tab.conversation.open(CUSTOMER)
    await wait_until(lambda: work.kept is not None)
    await keystroke(qtbot, tab, tab.table, Qt.Key.Key_M)
    await wait_until(lambda: work.state_label.text() == "Open · assigned to you")
    tab.conversation.open(OTHER)
    await wait_until(lambda: work.kept is not None and work.number == OTHER)
    work.assign("Sam")
    await wait_until(lambda: work.state_label.text() == "Open · assigned to Sam")
    conversations = tab.conversations

    await fresh_listing(conversations, lambda: conversations.show_only(Showing.MINE))

    assert listed(tab) == [(CUSTOMER, "you")]
    await fresh_listing(conversations, lambda: conversations.show_only(Showing.UNASSIGNED))
    assert listed(tab) == []
    await fresh_listing(conversations, lambda: conversations.show_only(Showing.ALL))
    assert len(listed(tab)) == 2


async def test_opening_a_conversation_lowers_this_operators_unread_and_mark_all_read_clears_it(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab, _template = await tab_with_replies(ui, qtbot, sandbox, CUSTOMER, OTHER, OTHER)
    label = tab.conversations.unread_label
    await wait_until(lambda: label.text() == "3 unread by you in 2")

    tab.conversations.tree.setCurrentItem(tab.conversations.tree.topLevelItem(0))  # OTHER's

    await wait_until(lambda: label.text() == "1 unread by you in 1")
    tab.conversations.mark_all_button.click()
    await wait_until(lambda: label.text() == "All read by you")
    store = ui.session.store
    assert store is not None
    assert store.conversations.unread() == (0, 0)


async def test_a_hostile_operators_name_is_shown_as_plain_text(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab, _template = await tab_with_replies(ui, qtbot, sandbox, CUSTOMER)
    await open_first(tab)
    work = tab.conversation.work

    work.assign(HOSTILE)

    await wait_until(lambda: "Eve" in work.state_label.text())
    assert work.state_label.text() == "Open · assigned to <b>Eve</b> <img src='/dev/zero'>"
    assert work.state_label.textFormat() == Qt.TextFormat.PlainText
    await fresh_listing(tab.conversations)
    assert listed(tab) == [(CUSTOMER, "<b>Eve</b> <img src='/dev/zero'>")]


async def test_an_assignment_to_no_name_at_all_is_refused_plainly(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab, _template = await tab_with_replies(ui, qtbot, sandbox, CUSTOMER)
    await open_first(tab)
    work = tab.conversation.work

    work.assign("\x00\x07")

    await wait_until(lambda: work.result_label.text() != "")
    assert work.result_label.text() == (
        "Not assigned: Name the operator to assign the conversation to."
    )
    assert work.state_label.text() == "Open · unassigned"


async def test_ctrl_l_snoozes_the_conversation_shown_for_an_hour(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab, _template = await tab_with_replies(ui, qtbot, sandbox, CUSTOMER)
    await open_first(tab)
    work = tab.conversation.work
    before = datetime.now(UTC)

    await keystroke(qtbot, tab, tab.table, Qt.Key.Key_L)

    await wait_until(lambda: work.state_label.text().startswith("Snoozed until"))
    store = ui.session.store
    assert store is not None
    kept = store.conversations.get(CUSTOMER)
    assert kept.state == "snoozed"
    assert kept.snoozed_until is not None
    assert timedelta(minutes=59) < kept.snoozed_until - before < timedelta(minutes=61)


async def test_snooze_until_tomorrow_is_nine_on_the_profiles_clock_and_shown_so(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab, _template = await tab_with_replies(ui, qtbot, sandbox, CUSTOMER)
    await open_first(tab)
    work = tab.conversation.work
    profile = ui.session.profile
    assert profile is not None

    work.morning_action.trigger()

    await wait_until(lambda: work.state_label.text().startswith("Snoozed until"))
    assert work.kept is not None
    until = work.kept.snoozed_until
    assert until is not None
    assert until.astimezone(profile.zone).time() == time(9)
    assert work.state_label.text().startswith(
        f"Snoozed until {until.astimezone(profile.zone):%d %b} 09:00"
    )
    await fresh_listing(tab.conversations)
    assert states(tab.conversations.tree) == [
        f"Snoozed {until.astimezone(profile.zone):%d %b} 09:00"
    ]


async def test_assign_to_lists_the_known_operators_as_plain_text_and_assigns_the_one_picked(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab, _template = await tab_with_replies(ui, qtbot, sandbox, CUSTOMER, OTHER)
    store = ui.session.store
    assert store is not None
    store.conversations.assign(OTHER, HOSTILE)  # a name the conversations already use
    tab.conversation.open(CUSTOMER)
    work = tab.conversation.work
    await wait_until(lambda: work.kept is not None)

    work.assign_button.click()
    dialog = work.assign_dialog
    assert dialog is not None
    me = work.flow.me if work.flow is not None else ""
    await wait_until(lambda: len(dialog.names()) == 2, 10, "the operators read")
    assert sorted(dialog.names()) == sorted(["<b>Eve</b> <img src='/dev/zero'>", me])
    shown = [dialog.list.item(row).text() for row in range(dialog.list.count())]
    assert "<b>Eve</b> <img src='/dev/zero'>" in shown
    dialog.list.setCurrentRow(1 + dialog.names().index("<b>Eve</b> <img src='/dev/zero'>"))
    dialog.ok_button.click()

    await wait_until(lambda: "Eve" in work.state_label.text())
    assert store.conversations.get(CUSTOMER).assigned_to == "<b>Eve</b> <img src='/dev/zero'>"


async def test_the_tab_title_and_the_tray_count_this_operators_unread_until_mark_all_read(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab, _template = await tab_with_replies(ui, qtbot, sandbox, CUSTOMER, OTHER, OTHER)
    await fresh_listing(tab.conversations)
    assert tab.display_title == "Replies (3)"
    assert tab.notifier.shown_unread == 3

    tab.conversations.mark_all_button.click()

    # The label, the title and the tray are set by one listing: once it says so, all do.
    await wait_until(lambda: tab.conversations.unread_label.text() == "All read by you")
    assert tab.display_title == "Replies"
    assert tab.notifier.shown_unread == 0


async def test_the_conversations_list_taking_the_focus_opens_no_conversation(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab, _template = await tab_with_replies(ui, qtbot, sandbox, CUSTOMER, OTHER)
    tab.show()
    tab.activateWindow()
    await wait_until(tab.isActiveWindow)

    tab.conversations.tree.setFocus()
    await wait_until(tab.conversations.tree.hasFocus)
    await fresh_listing(tab.conversations)

    assert tab.conversation.number is None
