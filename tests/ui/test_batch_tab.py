"""Batch tab against a real sandbox: requests of 100, cancel, send remaining, failures, imports."""

from __future__ import annotations

import asyncio
import csv
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from benchmarks.csv_import import write_file
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QMainWindow, QMessageBox

from gwdesk.app.list_send import SendFacts, question_for
from gwdesk.app.status import FOLLOW_GIVE_UP
from gwdesk.domain.settings import REPEAT_WINDOW_HOURS
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.outbox import EntryState
from gwdesk.ui.batch.results import OUTCOME_COLUMN
from gwdesk.ui.batch.tab import BatchTab
from gwdesk.ui.widgets.question import question_box
from tests.conftest import SandboxFactory
from tests.ui.batch_support import asked, confirm_send, idle, numbers, ready_tab, sent, yes_button
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.plain_text_support import tooltip_shows
from tests.ui.screenshot_support import WINDOW, shot


def lodged(tab: BatchTab) -> int:
    """Requests the tab shows lodged (0 before the batch is recorded)."""
    return tab.run.count(EntryState.LODGED) if tab.run is not None else 0


def lodged_requests(sandbox: SandboxThread) -> int:
    return int(sandbox.query("SELECT COUNT(*) FROM batches")[0][0])


def set_faults(sandbox: SandboxThread, spec: str) -> None:
    response = httpx.put(f"{sandbox.rest_url}/sandbox/faults", json={"spec": spec, "seed": 1})
    response.raise_for_status()


def message_count(sandbox: SandboxThread) -> int:
    return int(sandbox.query("SELECT COUNT(*) FROM messages")[0][0])


def repeated_recipients(sandbox: SandboxThread) -> list[tuple[str, int]]:
    return sandbox.query(
        "SELECT to_number, COUNT(*) FROM messages GROUP BY to_number HAVING COUNT(*) > 1"
    )


async def test_a_batch_of_250_arrives_in_three_requests(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await ready_tab(ui, sandbox, qtbot)
    assert tab.totals.figures["requests"].text() == "3"
    await confirm_send(tab)
    await sent(tab)
    assert lodged_requests(sandbox) == 3
    assert tab.results.lodged_bar.value() == tab.results.lodged_bar.maximum() == 3
    assert [e.state for e in tab.run.entries] == [EntryState.LODGED] * 3
    await wait_until(lambda: message_count(sandbox) == 250, 20, "batches loaded")
    groups = sandbox.query(
        "SELECT external_system_id, COUNT(*) FROM messages GROUP BY external_system_id"
    )
    assert sorted(n for _id, n in groups) == [50, 100, 100]
    assert {e.external_system_id for e in tab.run.entries} == {g[0] for g in groups}
    await idle(tab, ui)


async def test_a_batch_is_written_to_history_once_as_the_outbox_holds_it(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await ready_tab(ui, sandbox, qtbot)
    started = datetime.now(UTC) - timedelta(seconds=1)
    await confirm_send(tab)
    await sent(tab)  # a row the tab wrote itself would be queued by now
    assert ui.session.store is not None
    assert tab.run is not None
    rows = [e for e in ui.session.store.history.since(started) if e.channel == "REST batch"]
    assert [(r.recipients, r.text, r.ok, r.detail) for r in rows] == [
        ("250 recipients", "Hello from the batch tab", True, "250 of 250 recipients lodged")
    ]
    first = tab.run.entries[0]
    assert (rows[0].batch_code, rows[0].external_system_id) == (
        first.batch_code,
        first.external_system_id,
    )
    await idle(tab, ui)


async def test_batch_progress_is_followed_until_every_message_is_created(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await ready_tab(ui, sandbox, qtbot)
    await confirm_send(tab)
    await sent(tab)
    await wait_until(lambda: tab.run.created == 250, 20, "every message created")
    await wait_until(lambda: tab.results.created_bar.value() == 250)
    assert tab.results.created_bar.maximum() == 250
    model = tab.results.model
    assert [model.data(model.index(row, 3)) for row in range(3)] == [
        e.batch_code for e in tab.run.entries
    ]
    assert all(e.batch_code for e in tab.run.entries)
    assert [model.data(model.index(row, 6)) for row in range(3)] == [
        "100 / 100",
        "100 / 100",
        "50 / 50",
    ]
    await idle(tab, ui)


async def test_follow_progress_gives_up_when_status_fails_and_asks_again_when_told(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot
) -> None:
    sandbox = sandbox_factory(faults="status:404=1")  # no status endpoint, for now
    tab = await ready_tab(ui, sandbox, qtbot)
    await confirm_send(tab)
    await sent(tab)
    assert tab.run is not None
    await wait_until(
        lambda: not ui.tasks.running("batch-follow", owner=tab), 30, "following gave up"
    )
    assert len(tab.run.given_up()) == 3
    assert tab.results.follow_label.text() == "Not following: 3 requests gave no progress."
    assert not tab.results.follow_button.isHidden()
    assert tab.results.follow_button.text() == "Follow progress"
    assert tab.run.created < 250  # a one-off answer names a batch, not its messages
    assert FOLLOW_GIVE_UP > 1

    await asyncio.to_thread(set_faults, sandbox, "")
    tab.results.follow_button.click()

    await wait_until(lambda: tab.run is not None and tab.run.created == 250, 20)
    label = tab.results.follow_label  # said once the following ends, after the last count
    await wait_until(lambda: label.text() == "Every lodged message is created.", 20)
    assert tab.run.given_up() == []
    await idle(tab, ui)


async def test_cancel_stops_before_the_next_request_and_send_remaining_completes_it(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot
) -> None:
    sandbox = sandbox_factory(faults="send:latency=0.3")
    tab = await ready_tab(ui, sandbox, qtbot)
    tab.set_parallel(1)
    await confirm_send(tab)
    await wait_until(lambda: lodged(tab) == 1, 10, "first request lodged")
    tab.cancel_send()
    await sent(tab)
    done = tab.run.count(EntryState.LODGED)
    assert done < 3
    assert lodged_requests(sandbox) == done
    assert tab.run.count(EntryState.PENDING) == 3 - done
    model = tab.results.model
    assert [model.data(model.index(row, OUTCOME_COLUMN)) for row in range(done, 3)] == [
        "not sent: cancelled before it was sent"
    ] * (3 - done)
    assert "Send remaining" in tab.totals.outcome.text()
    assert tab.totals.remaining_button.isEnabled()
    assert tab.compose.editor.text() == "Hello from the batch tab"

    tab.send_remaining()
    await sent(tab)
    assert tab.run.count(EntryState.LODGED) == 3
    await wait_until(lambda: message_count(sandbox) == 250, 20, "batches loaded")
    assert repeated_recipients(sandbox) == []
    assert lodged_requests(sandbox) == 3
    await idle(tab, ui)


async def test_a_failed_request_is_listed_and_the_rest_stay_lodged(
    ui: UiBundle, sandbox_factory: SandboxFactory, qtbot
) -> None:
    # The second request is on the wire for 1.5 s: time enough, on a loaded machine too,
    # to make the gateway refuse the third before it arrives (faults are drawn on arrival).
    sandbox = sandbox_factory(faults="send:latency=1.5")
    tab = await ready_tab(ui, sandbox, qtbot)
    tab.set_parallel(1)
    await confirm_send(tab)
    await wait_until(lambda: lodged(tab) == 1, 10, "first request lodged")
    await asyncio.to_thread(set_faults, sandbox, "send:503=1")
    await sent(tab, 30)
    entries = tab.run.entries
    assert entries[0].state is EntryState.LODGED
    assert entries[2].state is EntryState.FAILED
    assert (entries[2].external_system_id or "").startswith("gwd-")
    assert tab.results.model.data(tab.results.model.index(2, OUTCOME_COLUMN)).startswith("failed: ")
    failed = tab.run.count(EntryState.FAILED)
    noun = "request" if failed == 1 else "requests"
    assert f"{failed} {noun} failed" in tab.results.lodged_label.text()
    assert "Send remaining" in tab.totals.outcome.text()

    await asyncio.to_thread(set_faults, sandbox, "")
    tab.send_remaining()
    await sent(tab)
    assert tab.run.count(EntryState.LODGED) == 3
    model = tab.results.model
    assert model.data(model.index(2, OUTCOME_COLUMN)) == "lodged on a later send"
    assert tab.run.entries[2].attempts == 2
    await wait_until(lambda: message_count(sandbox) == 250, 20, "batches loaded")
    assert repeated_recipients(sandbox) == []
    await idle(tab, ui)


async def test_a_refused_sender_is_shown_at_from_and_nothing_typed_is_lost(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await ready_tab(ui, sandbox, qtbot, count=120)
    tab.compose.sender_edit.setText("Shop\u202e")  # a hidden character: refused everywhere
    tab.send()
    assert tab.compose.error_text("sender")
    assert not tab.sending  # refused before anything is recorded
    assert tab.run is None
    assert tab.compose.editor.text() == "Hello from the batch tab"
    assert tab.recipients.result is not None
    assert len(tab.recipients.result.numbers) == 120
    assert ui.session.store is not None
    assert ui.session.store.outbox.batches(open_only=False) == []
    assert lodged_requests(sandbox) == 0
    await idle(tab, ui)


async def test_ctrl_enter_opens_the_question_and_sends_nothing(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await ready_tab(ui, sandbox, qtbot, count=3)
    qtbot.keyClick(tab.compose.editor.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    box = await asked(tab)
    assert "Recipients: 3" in box.text()
    qtbot.keyClick(tab.compose.editor.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert tab.confirm_box is box  # pressed again: still the one question, nothing sent
    assert not tab.sending
    assert tab.run is None
    assert ui.session.store is not None
    assert ui.session.store.outbox.batches(open_only=False) == []
    assert lodged_requests(sandbox) == 0
    box.button(QMessageBox.StandardButton.Cancel).click()
    await wait_until(lambda: tab.totals.outcome.text() == "Not sent.")
    assert lodged_requests(sandbox) == 0
    assert tab.compose.editor.text() == "Hello from the batch tab"
    await idle(tab, ui)


async def test_ctrl_enter_then_yes_sends_the_batch(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await ready_tab(ui, sandbox, qtbot, count=3)
    qtbot.keyClick(tab.compose.editor.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    yes_button(await asked(tab)).click()
    await sent(tab)
    assert lodged_requests(sandbox) == 1
    assert tab.compose.editor.text() == "Hello from the batch tab"
    await idle(tab, ui)


async def test_sending_right_after_typing_waits_for_the_check(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await ready_tab(ui, sandbox, qtbot, count=3)
    tab.recipients.paste.appendPlainText("0412 999 999")
    tab.send()
    assert "still being checked" in tab.recipients.error.text()
    assert tab.run is None
    await wait_until(lambda: not tab.recipients.pending())
    assert tab.totals.figures["valid"].text() == "4"
    await idle(tab, ui)


async def test_the_message_and_pasted_list_survive_a_restart(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await ready_tab(ui, sandbox, qtbot, count=3)
    tab.compose.tags.setText("spring")
    tab.save_draft()
    again = BatchTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(again)
    assert again.compose.editor.text() == "Hello from the batch tab"
    assert again.compose.tags.text() == "spring"
    assert again.recipients.paste.toPlainText() == "\n".join(numbers(3))
    await idle(tab, ui)


async def test_an_empty_message_is_refused_before_anything_is_sent(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await ready_tab(ui, sandbox, qtbot, count=3)
    tab.compose.editor.set_text("   ")
    tab.send()
    assert "empty" in tab.compose.error_text("text")
    assert tab.run is None
    await idle(tab, ui)


async def test_a_batch_is_confirmed_with_its_figures_first(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await ready_tab(ui, sandbox, qtbot, count=12)
    tab.send()
    box = await asked(tab)  # once the flow has weighed the send (off the GUI thread)
    assert isinstance(box, QMessageBox)
    assert box.isVisible()
    assert "Recipients: 12\nSMS parts: 12\nCost: 12 credits;" in box.text()
    assert "Message: “Hello from the batch tab”" in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert tab.confirm_box is None  # the box has finished: its answer is taken
    assert tab.run is None
    await wait_until(lambda: tab.totals.outcome.text() == "Not sent.")
    tab.send()
    box = await asked(tab)
    send_button = next(b for b in box.buttons() if b.text() == "Send to 12 recipients")
    send_button.click()
    await sent(tab)
    assert lodged_requests(sandbox) == 1
    await idle(tab, ui)


async def test_invalid_rows_are_listed_with_reasons_and_exported(
    ui: UiBundle, sandbox: SandboxThread, qtbot, tmp_path: Path
) -> None:
    await ui.connect(sandbox)
    tab = BatchTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    source = tmp_path / "people.csv"
    source.write_text(
        "Name;Mobile\nAnn;0412 345 678\nEvil;=cmd|' /C calc'!A0\nBo;0412 345\nAnn again;+61412345678\n",
        encoding="cp1252",
    )
    tab.recipients.import_path(source)
    await wait_until(lambda: tab.recipients.result is not None and not tab.recipients.busy)
    assert tab.recipients.column_combo.currentText() == "2: Mobile"
    rows = tab.recipients.invalid.model.rows
    assert [(r.row, r.text) for r in rows] == [(3, "=cmd|' /C calc'!A0"), (4, "0412 345")]
    assert tab.totals.figures["duplicates"].text() == "1"
    exported = tmp_path / "invalid.csv"
    tab.recipients.export_invalid(exported)
    await wait_until(lambda: "Saved 2 rows" in tab.recipients.invalid.export_note.text())
    with exported.open(encoding="utf-8-sig", newline="") as handle:
        lines = list(csv.reader(handle))
    assert lines[1][:2] == ["3", "'=cmd|' /C calc'!A0"]
    await idle(tab, ui)


async def test_choosing_another_column_checks_it_instead(
    ui: UiBundle, sandbox: SandboxThread, qtbot, tmp_path: Path
) -> None:
    await ui.connect(sandbox)
    tab = BatchTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    source = tmp_path / "two.csv"
    source.write_text("Mobile,Home\n0412 345 678,(02) 9876 5432\n", encoding="utf-8")
    tab.recipients.import_path(source)
    await wait_until(lambda: tab.recipients.result is not None and not tab.recipients.busy)
    assert tab.recipients.result.numbers == ("61412345678",)
    tab.recipients.column_combo.setCurrentIndex(1)
    tab.recipients.recheck_file()
    await wait_until(lambda: tab.recipients.result.numbers == ("61298765432",))
    await idle(tab, ui)


async def test_a_hostile_file_says_why_and_keeps_the_list(
    ui: UiBundle, sandbox: SandboxThread, qtbot, tmp_path: Path
) -> None:
    tab = await ready_tab(ui, sandbox, qtbot, count=5)
    junk = tmp_path / "photo.csv"
    junk.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    tab.recipients.import_path(junk)
    await wait_until(lambda: not tab.recipients.error.isHidden())
    assert "PNG image" in tab.recipients.error.text()
    tab.recipients.sources.setCurrentIndex(0)
    assert len(tab.recipients.result.numbers) == 5
    await idle(tab, ui)


async def test_a_100000_row_import_runs_off_the_gui_thread(
    ui: UiBundle, sandbox: SandboxThread, qtbot, tmp_path: Path
) -> None:
    await ui.connect(sandbox)
    tab = BatchTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    path = await asyncio.to_thread(write_file, tmp_path / "big.csv", 100_000)
    ticks = 0

    def tick() -> None:
        nonlocal ticks
        ticks += 1

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(20)
    started = asyncio.get_running_loop().time()
    tab.recipients.import_path(path)
    await wait_until(lambda: tab.recipients.result is not None and not tab.recipients.busy, 60)
    elapsed = asyncio.get_running_loop().time() - started
    timer.stop()
    assert tab.recipients.last_job_thread != threading.main_thread().ident
    assert ticks >= 0.5 * elapsed / 0.02  # the GUI kept ticking all along
    assert len(tab.recipients.result.numbers) > 80_000
    assert (
        tab.totals.figures["requests"].text()
        == f"{-(-len(tab.recipients.result.numbers) // 100):,}"
    )
    await idle(tab, ui)


async def test_an_import_can_be_cancelled_and_the_previous_list_stays(
    ui: UiBundle, sandbox: SandboxThread, qtbot, tmp_path: Path
) -> None:
    tab = await ready_tab(ui, sandbox, qtbot, count=5)
    path = tmp_path / "big.csv"
    await asyncio.to_thread(path.write_text, "Mobile\n" + "\n".join(numbers(200_000)))
    tab.recipients.import_path(path)
    await wait_until(lambda: tab.recipients.busy)
    tab.recipients.cancel()
    await wait_until(lambda: not tab.recipients.busy, 30)
    assert "Cancelled" in tab.recipients.error.text()
    assert tab.recipients.table is None
    tab.recipients.sources.setCurrentIndex(0)
    assert len(tab.recipients.result.numbers) == 5
    await idle(tab, ui)


async def test_screenshot_batch(
    ui: UiBundle, sandbox: SandboxThread, qtbot, tmp_path: Path, screenshots_dir: Path | None
) -> None:
    await ui.connect(sandbox)
    window = QMainWindow()
    qtbot.addWidget(window)
    tab = BatchTab(ui.session, ui.tasks, ui.theme)
    window.setCentralWidget(tab)
    window.resize(WINDOW)
    window.show()
    source = tmp_path / "customers.csv"
    rows = [("Name", "Mobile", "Suburb")]
    rows += [(f"Customer {i}", n, "Surry Hills") for i, n in enumerate(numbers(240))]
    rows[17] = ("Olivia Brown", "0412 345", "Newtown")
    rows[60] = ("Jack Nguyen", "n/a", "Glebe")
    rows[99] = ("Zoë Müller", "=cmd|' /C calc'!A0", "Redfern")
    rows[150] = ("Mia García", rows[10][1], "Erskineville")
    with source.open("w", encoding="utf-8-sig", newline="") as handle:
        csv.writer(handle).writerows(rows)
    tab.recipients.import_path(source)
    await wait_until(lambda: tab.recipients.result is not None and not tab.recipients.busy)
    tab.compose.editor.set_text(
        "Hi from Harbour Dental: your check-up is due. Reply YES to book, or call 02 9876 5432."
    )
    tab.compose.sender_edit.setText("HarbourDent")
    tab.compose.tags.setText("recall,march")
    tab.send()
    box = await asked(tab)  # the rows that cannot be sent to
    assert "3 recipients cannot be sent to" in box.text()
    next(b for b in box.buttons() if b.text() == "Send to 236 recipients").click()
    await sent(tab)
    await wait_until(lambda: tab.run.created == tab.run.recipients, 20)
    await wait_until(lambda: not ui.tasks.running("batch-follow", owner=tab))
    assert tab.run.count(EntryState.LODGED) == 3
    await idle(tab, ui)
    await shot(window, screenshots_dir, "batch.png", WINDOW)


async def test_an_imported_file_is_named_and_described_as_plain_text(
    ui: UiBundle, sandbox: SandboxThread, qtbot, tmp_path: Path
) -> None:
    await ui.connect(sandbox)
    tab = BatchTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    source = tmp_path / "<b>clients<i> exported from the CRM on 2026-03-02 at 09-30.csv"
    source.write_text("Name,Mobile\nAnn,0412 345 678\n", encoding="utf-8")
    tab.recipients.import_path(source)
    await wait_until(lambda: tab.recipients.result is not None and not tab.recipients.busy)
    title = tab.recipients.file_label
    assert title.textFormat() == Qt.TextFormat.PlainText
    assert title.text().startswith("<b>clients<i> exported")
    assert title.text().endswith(" · 1 row")
    assert tooltip_shows(title.toolTip()) == str(source)
    assert tab.recipients.file_details.text() == "Read as UTF-8 · comma-separated · header row"
    await idle(tab, ui)


async def test_from_tags_and_the_send_at_zone_have_room_at_1280(ui: UiBundle, qtbot) -> None:
    tab = BatchTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    tab.resize(1260, 700)
    tab.show()
    qtbot.waitExposed(tab)
    compose = tab.compose
    assert compose.sender_edit.width() >= 300
    assert compose.tags.width() >= 300
    zone = compose.send_at.zone_label
    assert zone.height() < 2 * zone.fontMetrics().lineSpacing()  # one line, not wrapped


# ---- every list send asks first --------------------------------------------------------------


def clean_sheet(path: Path, count: int) -> Path:
    """A clean CSV: a name and a distinct mobile on every row."""
    rows = [f"Patient {i},0412 {i // 1000:03d} {i % 1000:03d}" for i in range(count)]
    path.write_text("Name,Mobile\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


async def test_a_clean_200_row_csv_is_asked_about_before_anything_goes(
    ui: UiBundle, sandbox: SandboxThread, qtbot, tmp_path: Path
) -> None:
    await ui.connect(sandbox)
    tab = BatchTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    tab.compose.editor.set_text("The clinic is closed on Monday.")
    tab.recipients.import_path(clean_sheet(tmp_path / "patients.csv", 200))
    await wait_until(lambda: tab.recipients.table is not None and not tab.recipients.pending())
    assert tab.totals.figures["invalid"].text() == "0"
    tab.send()
    box = await asked(tab)
    assert box.windowTitle() == "Send the batch?"
    assert "Recipients: 200\nSMS parts: 200\nCost: 200 credits; " in box.text()
    assert "credits left of" in box.text()
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
    assert lodged_requests(sandbox) == 0  # nothing goes while the question is open
    box.button(QMessageBox.StandardButton.Cancel).click()
    await wait_until(lambda: tab.totals.outcome.text() == "Not sent.")
    assert tab.run is None
    assert lodged_requests(sandbox) == 0
    await idle(tab, ui)


async def test_the_same_list_and_text_again_is_named_in_the_question(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await ready_tab(ui, sandbox, qtbot, count=3)
    first = await confirm_send(tab)
    assert "This text was sent" not in first
    await sent(tab)
    await idle(tab, ui)
    tab.send()
    box = await asked(tab)
    assert box.text().endswith(
        "This text was sent just now to all 3 of these recipients. Send it to them again?"
    )
    box.button(QMessageBox.StandardButton.Cancel).click()
    await wait_until(lambda: tab.totals.outcome.text() == "Not sent.")
    assert lodged_requests(sandbox) == 1
    await idle(tab, ui)


async def later(ui: UiBundle, hours: int) -> None:
    """The session's clock moved on `hours` (the history keeps the real time)."""
    sending = ui.session.sending
    assert sending is not None
    moved = datetime.now(UTC) + timedelta(hours=hours)
    sending.now = lambda: moved


async def test_the_same_list_after_the_window_is_not_named(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await ready_tab(ui, sandbox, qtbot, count=3)
    await confirm_send(tab)
    await sent(tab)
    await idle(tab, ui)
    await later(ui, 25)  # the default window is 24 hours
    tab.send()
    box = await asked(tab)
    assert "Recipients: 3" in box.text()
    assert "This text was sent" not in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    await wait_until(lambda: tab.totals.outcome.text() == "Not sent.")
    await idle(tab, ui)


async def test_the_profiles_repeat_window_is_honoured(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await ready_tab(ui, sandbox, qtbot, count=3)
    await confirm_send(tab)
    await sent(tab)
    await idle(tab, ui)
    assert ui.session.store is not None
    ui.session.store.settings.set(REPEAT_WINDOW_HOURS, 48)
    await later(ui, 25)
    tab.send()
    box = await asked(tab)
    assert "This text was sent 25 hours ago to all 3 of these recipients." in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    await wait_until(lambda: tab.totals.outcome.text() == "Not sent.")
    await idle(tab, ui)


async def test_markup_and_long_text_in_the_question_show_as_plain_text(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await ready_tab(ui, sandbox, qtbot, count=3)
    tab.compose.editor.set_text('<b>Sale</b> <img src="/dev/zero"> &amp; ' + "x" * 900)
    tab.send()
    box = await asked(tab)
    assert box.textFormat() == Qt.TextFormat.PlainText
    first = box.text().splitlines()[0]
    assert first.startswith('Message: “<b>Sale</b> <img src="/dev/zero"> &amp; xxx')
    assert first.endswith("…” (940 characters)")  # cut: a long text cannot push the buttons off
    box.button(QMessageBox.StandardButton.Cancel).click()
    await wait_until(lambda: tab.totals.outcome.text() == "Not sent.")
    await idle(tab, ui)


async def test_bidi_and_escape_codes_in_the_question_show_as_symbols(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    tab = await ready_tab(ui, sandbox, qtbot, count=3)
    tab.compose.editor.set_text("Sale \u202eexe.pdf \x1b[31m today")
    tab.send()
    box = await asked(tab)
    assert box.textFormat() == Qt.TextFormat.PlainText
    assert box.text().splitlines()[0] == "Message: “Sale \ufffdexe.pdf ␛[31m today”"
    box.button(QMessageBox.StandardButton.Cancel).click()
    await wait_until(lambda: tab.totals.outcome.text() == "Not sent.")
    assert lodged_requests(sandbox) == 0
    await idle(tab, ui)


def test_a_question_holding_control_codes_shows_them_as_symbols(qtbot) -> None:
    """Whatever the core puts in a question (a template, a name) is data on screen."""
    parent = QMainWindow()
    qtbot.addWidget(parent)
    hostile = "Hi {name} \u202eexe.pdf \x1b]0;pwned\x07 <b>x</b>"
    question = question_for(SendFacts(2, 2, text=hostile), datetime.now(UTC))
    assert question is not None
    box, _yes = question_box(parent, question.title, question.text(), question.yes)
    assert box.textFormat() == Qt.TextFormat.PlainText
    assert "\u202e" not in box.text()
    assert "\x1b" not in box.text()
    assert "␛]0;pwned␇ <b>x</b>" in box.text()
    box.deleteLater()
