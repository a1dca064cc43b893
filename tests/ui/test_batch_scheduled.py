"""The Batch tab's send for later: asked as a schedule, held by gwdesk, nothing sent now."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from gwdesk.app.scheduled import ScheduledSends
from gwdesk.sandbox.server import SandboxThread
from tests.hours_support import inside_sending_hours
from tests.ui.batch_support import asked, idle, ready_tab, yes_button
from tests.ui.conftest import UiBundle, wait_until


def message_count(sandbox: SandboxThread) -> int:
    return int(sandbox.query("SELECT COUNT(*) FROM messages")[0][0])


async def test_a_batch_for_later_asks_to_schedule_then_is_held_and_nothing_is_sent(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await ready_tab(ui, sandbox, qtbot, count=12)
    assert ui.session.profile is not None
    when = inside_sending_hours(ui.session.profile.zone)
    tab.compose.send_at.set_value(when)
    tab.send()
    box = await asked(tab)
    assert f"It goes at {when.astimezone():%a %d %b %Y %H:%M}" in box.text()
    yes = yes_button(box)
    assert yes.text() == "Schedule for 12 recipients"
    yes.click()
    outcome = tab.totals.outcome
    await wait_until(lambda: outcome.text().startswith("Scheduled for 12 recipients"))
    [held] = await ScheduledSends(ui.session.require_sending()).listed()
    assert (len(held.recipients), held.due, held.text) == (12, when, "Hello from the batch tab")
    assert tab.run is None
    assert message_count(sandbox) == 0
    await idle(tab, ui)


async def test_a_batch_for_later_declined_is_not_scheduled(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await ready_tab(ui, sandbox, qtbot, count=3)
    tab.compose.send_at.set_value(datetime.now(UTC) + timedelta(hours=2))
    tab.send()
    box = await asked(tab)
    box.reject()
    await wait_until(lambda: tab.totals.outcome.text() == "Not sent.")
    assert await ScheduledSends(ui.session.require_sending()).listed() == []
    await idle(tab, ui)
