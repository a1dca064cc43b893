"""A team's keyword rules in two consoles on a real PostgreSQL server: the rules are the
team's setting, so a rule added at one desk shows in the other desk's open rules window,
and what the rules did is the server's, seen from any desk."""

from __future__ import annotations

import asyncio

from gwdesk.domain.reply_rules import Draft
from gwdesk.profiles import PasswordVault
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.rules.dialog import RulesDialog
from gwdesk.ui.rules.opener import RulesOpener
from tests.ui.conftest import wait_until
from tests.ui.team.conftest import Console, Desks

HOURS = Draft("<b>Hours</b>", "whole", "HOURS", reply="We are open 9 to 5.")


async def rules_window(console: Console) -> tuple[RulesOpener, RulesDialog]:
    """The console's File ▸ Keyword rules… window, open."""
    opener = RulesOpener(console.window, console.session, console.window.tasks, PasswordVault())
    opener.open_dialog()
    dialog = opener.dialog
    assert dialog is not None
    return opener, dialog


async def test_a_rule_added_at_one_desk_shows_in_the_other_desks_rules_window(
    desks: Desks, sandbox: SandboxThread, pg_url: str
) -> None:
    alex = await desks.open(sandbox, "Alex desk", "Alex", pg_url)
    sam = await desks.open(sandbox, "Sam desk", "Sam", pg_url)
    _, at_sam = await rules_window(sam)
    opener, _at_alex = await rules_window(alex)
    flow = opener.flow()
    assert flow is not None

    await asyncio.to_thread(flow.add, HOURS)

    await wait_until(lambda: at_sam.table.rowCount() == 1, 20, "the rule at Sam's desk")
    item = at_sam.table.item(0, 1)
    assert item is not None
    assert item.text() == "<b>Hours</b>"


async def test_a_failed_forward_recorded_on_the_server_shows_at_another_desk(
    desks: Desks, sandbox: SandboxThread, pg_url: str
) -> None:
    alex = await desks.open(sandbox, "Alex desk", "Alex", pg_url)
    sam = await desks.open(sandbox, "Sam desk", "Sam", pg_url)
    _, at_sam = await rules_window(sam)
    at_sam.pages.setCurrentWidget(at_sam.done_list)
    store = alex.session.store
    assert store is not None
    runs = store.rule_runs

    def record() -> None:
        runs.claim(7, "61412345678", "CRM", forward=("https://crm.example.com/h", "{}"))
        taken = runs.take_forward(1_000_000)
        assert taken is not None
        runs.forward_done(taken.id, error="503 from <b>crm</b>")

    await asyncio.to_thread(record)
    at_sam.done_list.refresh_button.click()
    forwards = at_sam.done_list.forwards_table

    def failed() -> bool:
        state = forwards.item(0, 2)
        return state is not None and state.text() == "failed"

    await wait_until(failed, 20, "the failed forward at Sam's desk")
    error = forwards.item(0, 4)
    assert error is not None
    assert error.text() == "503 from <b>crm</b>"
    assert forwards.rowCount() == 1
