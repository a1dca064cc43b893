"""The conversation's strip (`ui/replies/work.py`) and its dialogs with answers that land
late: a store whose reads are held until the test lets them go, so the order in which
answers land is the test's, not the machine's."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import datetime
from typing import cast
from zoneinfo import ZoneInfo

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from gwdesk.app.conversations import ConversationsFlow
from gwdesk.store.conversations import ConversationState, ConversationStore
from gwdesk.ui.replies.work import ConversationWork
from tests.ui.conftest import UiBundle, wait_until

NUMBER = "61412345678"
PERTH = ZoneInfo("Australia/Perth")


class HeldStore:
    """A conversation store whose first read waits until `release` is set."""

    operator = "Alex"

    def __init__(self) -> None:
        self.kept = ConversationState(NUMBER)
        self.release = threading.Event()
        self.reads = 0
        self.snoozed: datetime | None = None

    def get(self, number: str) -> ConversationState:
        self.reads += 1
        seen = self.kept
        if self.reads == 1:
            self.release.wait(10)
        return seen  # as it was when the read began

    def set_state(
        self, number: str, state: str, *, until: datetime | None = None
    ) -> ConversationState:
        self.kept = replace(self.kept, state=state, snoozed_until=until)
        self.snoozed = until
        return self.kept


def strip(ui: UiBundle, qtbot: QtBot, store: HeldStore) -> ConversationWork:
    work = ConversationWork(ui.tasks)
    qtbot.addWidget(work)
    work.set_flow(ConversationsFlow(cast(ConversationStore, store), zone=PERTH))
    return work


async def test_a_read_that_began_before_a_change_does_not_overwrite_it(
    ui: UiBundle, qtbot: QtBot
) -> None:
    store = HeldStore()
    work = strip(ui, qtbot, store)
    work.show_number(NUMBER)  # its read is held: it saw the conversation open
    await wait_until(lambda: store.reads == 1)

    work.done()
    await wait_until(lambda: work.state_label.text() == "Done · unassigned")
    store.release.set()

    await wait_until(lambda: store.reads == 2, 10, "one more read after the change")
    await wait_until(lambda: work._reading is None)
    assert work.state_label.text() == "Done · unassigned"


async def test_snooze_until_a_time_picked_is_read_on_the_profiles_clock(
    ui: UiBundle, qtbot: QtBot
) -> None:
    store = HeldStore()
    store.release.set()
    work = strip(ui, qtbot, store)
    work.show_number(NUMBER)
    await wait_until(lambda: work.kept is not None)
    work.ask_until()
    dialog = work.snooze_dialog
    assert dialog is not None
    picked = datetime(2099, 5, 1, 9, 30)
    dialog.edit.setDateTime(
        dialog.edit.dateTime().fromString("2099-05-01 09:30", "yyyy-MM-dd HH:mm")
    )

    dialog.accept()

    await wait_until(lambda: store.snoozed is not None)
    assert store.snoozed == picked.replace(tzinfo=PERTH)
    await wait_until(lambda: work.state_label.text().startswith("Snoozed until 01 May 09:30"))


async def test_the_strip_names_a_conversations_tags_as_plain_text(
    ui: UiBundle, qtbot: QtBot
) -> None:
    store = HeldStore()
    store.release.set()
    store.kept = replace(store.kept, tags=("refund", "<b>vip</b>"))
    work = strip(ui, qtbot, store)
    work.show_number(NUMBER)
    await wait_until(lambda: "tagged" in work.state_label.text())
    assert work.state_label.text() == "Open · tagged refund, <b>vip</b> · unassigned"
    assert work.state_label.textFormat() == Qt.TextFormat.PlainText
