"""The console sends scheduled sends while it is open, and asks once about those whose
time passed while it was closed: Send now sends them, Review leaves them held (and the
sends not missed still go)."""

from __future__ import annotations

from datetime import timedelta

from PySide6.QtWidgets import QMainWindow
from pytestqt.qtbot import QtBot

from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.scheduled.serving import ScheduledServing
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.scheduled_support import (
    NUMBERS,
    answer_no,
    answer_yes,
    core,
    held_while_closed,
    lodged,
    schedule,
)


def serving(
    ui: UiBundle, qtbot: QtBot, reviewed: list[bool]
) -> tuple[QMainWindow, ScheduledServing]:
    window = QMainWindow()
    qtbot.addWidget(window)
    window.show()
    served = ScheduledServing(window, ui.session, ui.tasks, review=lambda: reviewed.append(True))
    return window, served


async def question_of(served: ScheduledServing) -> str:
    await wait_until(lambda: served.question is not None and served.question.isVisible(), 15)
    assert served.question is not None
    return served.question.text()


async def test_a_send_missed_while_closed_is_asked_about_and_review_leaves_it_held(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    missed = await held_while_closed(ui, sandbox, "Missed at nine", late=timedelta(hours=1))
    await held_while_closed(ui, sandbox, "Due a moment ago", late=timedelta(seconds=20))
    reviewed: list[bool] = []
    _window, served = serving(ui, qtbot, reviewed)

    await ui.connect(sandbox)
    text = await question_of(served)
    assert text.startswith("1 scheduled send was due while gwdesk was closed (")
    assert served.question is not None
    answer_no(served.question)  # Review them

    await wait_until(lambda: served.started, 10, "serving started")
    assert reviewed == [True]
    await wait_until(lambda: lodged(sandbox, "Due a moment ago") == list(NUMBERS), 20)
    assert [s.batch_id for s in await core(ui).listed()] == [missed.batch_id]
    assert lodged(sandbox, "Missed at nine") == []


async def test_send_now_at_the_missed_question_sends_the_missed_send(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    await held_while_closed(ui, sandbox, "Late but wanted", late=timedelta(hours=3))
    await held_while_closed(ui, sandbox, "Also late", late=timedelta(hours=1))
    reviewed: list[bool] = []
    _window, served = serving(ui, qtbot, reviewed)

    await ui.connect(sandbox)
    text = await question_of(served)
    assert text.startswith("2 scheduled sends were due while gwdesk was closed (earliest ")
    assert served.question is not None
    answer_yes(served.question)  # Send them now

    await wait_until(lambda: lodged(sandbox, "Late but wanted") == list(NUMBERS), 20)
    await wait_until(lambda: lodged(sandbox, "Also late") == list(NUMBERS), 20)
    assert reviewed == []
    assert await core(ui).listed() == []


async def test_nothing_missed_is_asked_nothing_and_a_send_goes_at_its_time(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    window, served = serving(ui, qtbot, [])
    await ui.connect(sandbox)
    await wait_until(lambda: served.started, 10, "serving started")
    assert served.question is None
    held = await schedule(ui, "At its time")
    assert lodged(sandbox, "At its time") == []
    sending = ui.session.sending
    assert sending is not None
    assert held.due is not None
    due = held.due
    sending.now = lambda: due  # its time comes

    core(ui).changed.set()  # the serving looks again now, as after any change
    await wait_until(lambda: lodged(sandbox, "At its time") == list(NUMBERS), 20)
    await wait_until(lambda: "went: 3 recipients lodged" in window.statusBar().currentMessage())


async def test_serving_stops_when_the_profile_closes(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread
) -> None:
    _window, served = serving(ui, qtbot, [])
    await ui.connect(sandbox)
    await wait_until(lambda: served.started, 10, "serving started")

    await ui.session.close()

    assert served.serving is None
    assert not served.started
