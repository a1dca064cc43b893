"""The keyword rules window's tests: hostile rules, and runs recorded as a runner does
(through the store's own `RuleRuns`)."""

from __future__ import annotations

import asyncio
from typing import Final

from pytestqt.qtbot import QtBot

from gwdesk.app.rule_editing import RulesFlow
from gwdesk.domain.profile import Profile
from gwdesk.domain.reply_rules import Draft
from gwdesk.store.local import LocalStore
from gwdesk.ui.rules.dialog import RulesDialog
from tests.ui.conftest import UiBundle, wait_until

HOSTILE_NAME: Final = "<b>x</b> \u202eevil\u202c"
"""Markup and a bidi override in a rule's name (the rules allow both: they are text)."""
HOSTILE_ERROR: Final = "\x1b[31m<b>refused</b>\x1b[0m \u202e" + "e" * 300
LONG_VALUE: Final = "*" + "appointment " * 15 + "*"
PROFILE: Final = Profile(
    name="Harbour Dental",
    rest_url="https://api.gateway.example.com/",
    username="operator",
    timezone="Australia/Sydney",
    region="AU",
)
RULES: Final = (
    Draft("Hours", "whole", "HOURS", reply="We are open 9 to 5, Monday to Friday.", per_day=2),
    Draft("Booking", "first word", "BOOK", assign="alice", state="waiting", tag="booking"),
    Draft(HOSTILE_NAME, "pattern", LONG_VALUE, tag="<i>appointment</i>"),
)


async def add_rules(flow: RulesFlow, *drafts: Draft) -> None:
    for draft in drafts:
        await asyncio.to_thread(flow.add, draft)


async def opened(ui: UiBundle, qtbot: QtBot, flow: RulesFlow, rows: int) -> RulesDialog:
    """The rules window shown with `rows` rules read."""
    dialog = RulesDialog(flow, ui.tasks)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.reload()
    await wait_until(lambda: dialog.table.rowCount() == rows, 10, f"{rows} rules listed")
    return dialog


def cell(dialog: RulesDialog, row: int, column: int) -> str:
    item = dialog.table.item(row, column)
    assert item is not None
    return item.text()


async def record_runs(store: LocalStore) -> None:
    """Two replies acted on: one answered, one forwarded to an endpoint that failed for
    good (its last error hostile and long), and one forward still waiting."""
    runs = store.rule_runs

    def record() -> None:
        runs.claim(101, "61412345678", "Hours", reply_per_day=2)
        runs.finish(101, "replied: We are open 9 to 5 \x1b[31m<b>sure</b>")
        runs.claim(102, "61412345679", "Forward", forward=("https://crm.example.com/h", "{}"))
        runs.finish(102, "forward queued")
        taken = runs.take_forward(1_000_000)
        assert taken is not None
        runs.forward_done(taken.id, error=HOSTILE_ERROR)
        runs.claim(103, "61412345670", "Forward", forward=("https://crm.example.com/h", "{}"))

    await asyncio.to_thread(record)
