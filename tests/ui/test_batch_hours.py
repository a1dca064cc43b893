"""The Batch tab's question names the recipients a list sent now would reach outside the
office's sending hours, on their clock (the profile's zone here: Australia/Sydney)."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from PySide6.QtWidgets import QMessageBox

from gwdesk.domain.settings import QUIET_HOURS
from gwdesk.sandbox.server import SandboxThread
from tests.ui.batch_support import asked, idle, ready_tab
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.screenshot_support import shot


def hours_away_from_now() -> dict[str, object]:
    """A one-hour window that the present hour in Sydney is not in."""
    hour = datetime.now(ZoneInfo("Australia/Sydney")).hour
    start = 18 if hour < 12 else 6
    window = {"start": f"{start:02d}:00", "end": f"{start + 1:02d}:00"}
    return {"weekdays": window, "weekends": window}


async def test_a_list_sent_outside_the_sending_hours_names_them_in_its_question(
    ui: UiBundle, sandbox: SandboxThread, qtbot, screenshots_dir: Path | None
) -> None:
    tab = await ready_tab(ui, sandbox, qtbot, count=12)
    store = ui.session.store
    assert store is not None
    await asyncio.to_thread(store.settings.set, QUIET_HOURS, hours_away_from_now())
    tab.send()
    box = await asked(tab)
    assert "All 12 recipients are outside the office's sending hours" in box.text()
    assert "Send now anyway?" in box.text()
    await shot(box, screenshots_dir, "batch-outside-hours.png")
    box.button(QMessageBox.StandardButton.Cancel).click()
    await wait_until(lambda: tab.totals.outcome.text() == "Not sent.")
    assert tab.run is None
    await idle(tab, ui)


async def test_a_list_sent_inside_the_sending_hours_asks_nothing_of_them(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    if datetime.now(ZoneInfo("Australia/Sydney")).strftime("%H:%M") == "23:59":
        pytest.skip("the one minute of the day no window can hold")
    tab = await ready_tab(ui, sandbox, qtbot, count=12)
    store = ui.session.store
    assert store is not None
    always = {"start": "00:00", "end": "23:59"}
    await asyncio.to_thread(
        store.settings.set, QUIET_HOURS, {"weekdays": always, "weekends": always}
    )
    tab.send()
    box = await asked(tab)
    assert "Recipients: 12" in box.text()
    assert "sending hours" not in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    await idle(tab, ui)
