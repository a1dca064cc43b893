"""The console's timers, built one way.

Most of the console's timers are single-shot: typing in a search box, a burst of
replies or a draft that changed starts one, and starting it again pushes the slot
back, so the slot runs once after the last change (`single_shot`); what must wait
for the events queued now (a show event's own layout) runs after them (`after_events`). A few tick for as
long as their owner lives (`repeating`). Both are children of their owner, so they
stop with it; neither crosses threads (that is `ui/tasks.py`'s).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer


def single_shot(owner: QObject, ms: int, slot: Callable[[], object]) -> QTimer:
    """A stopped timer that runs `slot` once, `ms` after it was last started."""
    timer = QTimer(owner)
    timer.setSingleShot(True)
    timer.setInterval(ms)
    timer.timeout.connect(slot)
    return timer


def after_events(owner: QObject, slot: Callable[[], object]) -> None:
    """Run `slot` once the events queued now are handled (not at all if `owner` goes)."""
    QTimer.singleShot(0, owner, slot)


def repeating(
    owner: QObject, ms: int, slot: Callable[[], object], *, running: bool = True
) -> QTimer:
    """A timer that runs `slot` every `ms` until it is stopped or its owner goes
    (`running`: started now, else when its owner starts it)."""
    timer = QTimer(owner)
    timer.setInterval(ms)
    timer.timeout.connect(slot)
    if running:
        timer.start()
    return timer
