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


async def test_a_spread_list_asks_with_its_pace_and_is_held_in_parts(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await ready_tab(ui, sandbox, qtbot, count=25)
    assert ui.session.profile is not None
    when = inside_sending_hours(ui.session.profile.zone)
    tab.compose.send_at.set_value(when)
    tab.compose.pace_box.setCurrentIndex(tab.compose.pace_box.findData(600))
    tab.send()
    box = await asked(tab)
    assert "Spread at 600 an hour (10 every minute): 3 parts" in box.text()
    yes_button(box).click()
    outcome = tab.totals.outcome
    await wait_until(lambda: outcome.text().startswith("Spread 25 recipients in 3 parts"))
    helds = await ScheduledSends(ui.session.require_sending()).listed()
    assert [(len(h.recipients), h.due) for h in helds] == [
        (10, when),
        (10, when + timedelta(minutes=1)),
        (5, when + timedelta(minutes=2)),
    ]
    assert message_count(sandbox) == 0
    await idle(tab, ui)


async def test_a_weekly_batch_is_held_with_its_rule(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await ready_tab(ui, sandbox, qtbot, count=3)
    assert ui.session.profile is not None
    when = inside_sending_hours(ui.session.profile.zone)
    tab.compose.send_at.set_value(when)
    tab.compose.send_at.set_repeat("weekly")
    tab.send()
    box = await asked(tab)
    assert "Then every " in box.text()
    yes_button(box).click()
    await wait_until(lambda: tab.totals.outcome.text().startswith("Scheduled for 3 recipients"))
    [held] = await ScheduledSends(ui.session.require_sending()).listed()
    assert held.every is not None
    assert (held.every.kind.value, held.due) == ("weekly", when)
    await idle(tab, ui)
