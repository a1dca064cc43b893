"""The Batch tab's report against a sandbox that delivers (two numbers' deliveries fail):
its totals under the requests, each request's tally in "By status", Refresh, the CSV,
and "Resend to the failed…", which asks first and then sends to exactly the failed."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

from PySide6.QtWidgets import QMessageBox

from gwdesk.app.send_report import Fate
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.batch.report import REPORT_KEY
from gwdesk.ui.batch.results import BY_STATUS_COLUMN
from gwdesk.ui.batch.tab import BatchTab
from tests.conftest import SandboxFactory
from tests.contract.report_support import DELIVERING, LATE, fail_deliveries
from tests.ui.batch_support import confirm_send, idle, ready_tab, sent, yes_button
from tests.ui.conftest import UiBundle, wait_until

COUNT = 120
FAILING = ("61412000003", "61412000107")  # one in each request


def texted(sandbox: SandboxThread) -> Counter[str]:
    return Counter(n for (n,) in sandbox.query("SELECT to_number FROM messages"))


async def reported(tab: BatchTab, ui: UiBundle, within: float = 20.0) -> None:
    """Refresh (as the operator would) until no message awaits a final status."""
    panel = tab.report
    deadline = ui.loop.time() + within
    while True:
        await wait_until(lambda: not ui.tasks.running(REPORT_KEY, owner=panel), within)
        report = panel.report
        if report is not None and not report.totals[Fate.AWAITING] and report.totals.lodged:
            return
        assert ui.loop.time() < deadline, "the report never settled"
        panel.refresh_button.click()


async def sent_list(ui: UiBundle, sandbox: SandboxThread, qtbot) -> BatchTab:
    tab = await ready_tab(ui, sandbox, qtbot, count=COUNT)
    fail_deliveries(sandbox, FAILING)
    await confirm_send(tab)
    await sent(tab)
    await reported(tab, ui)
    return tab


async def resend_box(tab: BatchTab) -> QMessageBox:
    tab.report.resend_button.click()
    asking = tab.report.asking
    await wait_until(lambda: asking.box is not None and asking.box.isVisible(), 10, "asked")
    assert asking.box is not None
    return asking.box


async def test_the_report_shows_the_lists_totals_under_the_requests(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot
) -> None:
    sandbox = sandbox_factory(**DELIVERING)
    tab = await sent_list(ui, sandbox, qtbot)
    figures = tab.report.figures
    assert tab.report.isVisibleTo(tab)
    assert figures["delivered"].text() == f"{COUNT - 2} delivered"
    assert figures["failed"].text() == "2 failed"
    assert tab.report.note.text() == ""  # nothing awaits, nothing is unknown or not sent
    about = tab.report.refresh_button.toolTip()
    assert f"Batch {tab.run.batch.id}: statuses as of " in about
    model = tab.results.model
    assert model.index(0, BY_STATUS_COLUMN).data() == "99 delivered, 1 failed"
    assert model.index(1, BY_STATUS_COLUMN).data() == "19 delivered, 1 failed"
    await idle(tab, ui)


async def test_resend_to_the_failed_asks_and_a_no_sends_nothing(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot
) -> None:
    sandbox = sandbox_factory(**DELIVERING)
    tab = await sent_list(ui, sandbox, qtbot)
    before = texted(sandbox)
    box = await resend_box(tab)
    assert "2 recipients" in box.text()
    assert box.windowTitle() == "Resend to the failed?"
    box.reject()
    await wait_until(lambda: tab.totals.outcome.text() == "Not sent.", 10, "the no is said")
    assert texted(sandbox) == before
    assert not tab.sending
    await idle(tab, ui)


async def test_resend_to_the_failed_sends_to_exactly_the_failed(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot
) -> None:
    sandbox = sandbox_factory(**DELIVERING)
    tab = await sent_list(ui, sandbox, qtbot)
    first = tab.run.batch.id
    before = texted(sandbox)
    yes_button(await resend_box(tab)).click()
    await wait_until(lambda: (run := tab.run) and run.batch.id != first and not tab.sending, 20)
    await wait_until(lambda: sum(texted(sandbox).values()) == COUNT + 2, 20, "created")
    assert texted(sandbox) - before == Counter(FAILING)
    assert tab.run.recipients == 2
    await idle(tab, ui)


async def test_the_report_is_exported_with_every_recipient(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot, tmp_path: Path
) -> None:
    sandbox = sandbox_factory(**DELIVERING)
    tab = await sent_list(ui, sandbox, qtbot)
    path = tmp_path / "report.csv"
    tab.report.save(path)
    saved = "Report saved: 120 recipients in report.csv."
    await wait_until(lambda: tab.totals.outcome.text() == saved, 10, "saved")
    with path.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert Counter(r["Outcome"] for r in rows) == {"delivered": 118, "failed on delivery": 2}
    await idle(tab, ui)


async def test_a_list_whose_receipts_have_not_come_says_how_many_await(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot
) -> None:
    sandbox = sandbox_factory(**{**DELIVERING, **LATE})
    tab = await ready_tab(ui, sandbox, qtbot, count=COUNT)
    await confirm_send(tab)
    await sent(tab)
    panel = tab.report
    await wait_until(lambda: (r := panel.report) is not None and r.totals.lodged == COUNT, 20)
    assert panel.note.text() == f"{COUNT} awaiting"
    assert panel.figures["delivered"].text() == "0 delivered"
    assert not panel.resend_button.isEnabled()  # nobody failed (yet)
    await idle(tab, ui)
