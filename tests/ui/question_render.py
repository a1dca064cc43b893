"""Render the Batch tab's question on a screen of a given size and scale, in its own process.

`QT_SCALE_FACTOR` and the offscreen screen's size are read once, when the
QApplication starts, so each size and scale is a process of its own:
`python -m tests.ui.question_render OUT.png TEXT` with `QT_QPA_PLATFORM` naming a screen
config and `QT_SCALE_FACTOR` set. The longest question a send can ask (every
concern, a long message holding markup, bidi and escape codes) is opened over a
window filling the screen; what does not fit is printed as a JSON list of problems
(empty: it fits), and the picture (the window with the box drawn where it opens) is
saved.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta

from PySide6.QtCore import QPoint, QRect
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QApplication, QLabel, QMainWindow, QPushButton, QWidget

from gwdesk.app.list_send import SendFacts, duplicate_of, question_for
from gwdesk.app.personal import Cost
from gwdesk.app.questions import SendQuestion
from gwdesk.store.history import Reached
from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.widgets.question import question_box

NOW = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
TEXTS = {
    "hostile": 'Dear {name}, <b>SALE</b> <img src="/dev/zero"> \u202eexe.pdf \x1b[31m today: '
    + "Ünïcödé wörds, and more of them " * 60,
    "unbroken": "W" * 2000,
}
"""The messages the question quotes: markup, bidi and escape codes in a long text, and a
text with no space to wrap at."""


def longest_question(text: str) -> SendQuestion:
    numbers = frozenset(f"614120{i:05d}" for i in range(200))
    earlier = [Reached(NOW - timedelta(hours=2), "", frozenset(list(numbers)[:198]))]
    facts = SendFacts(
        200,
        1400,
        invalid=3,
        lodged_before=120,
        duplicate=duplicate_of(numbers, earlier),
        cost=Cost(1400, 1400, 900),
        text=text,
    )
    question = question_for(facts, NOW)
    assert question is not None
    return question


def problems(box: QWidget, screen: QRect) -> list[str]:
    found = []
    frame = box.frameGeometry()
    if not screen.contains(frame):
        found.append(f"the box {frame} is not inside the screen {screen}")
    inside = box.rect()
    for child in box.findChildren(QWidget):
        if not child.isVisible():
            continue
        where = QRect(child.mapTo(box, QPoint(0, 0)), child.size())
        if not inside.contains(where):
            found.append(f"{type(child).__name__} {where} is outside the box {inside}")
        if isinstance(child, QPushButton):
            wanted = child.fontMetrics().horizontalAdvance(child.text())
            if wanted > child.width():
                found.append(f"the button {child.text()!r} is cut: {wanted} > {child.width()}")
        if isinstance(child, QLabel) and child.text() and child.wordWrap():
            needed = child.heightForWidth(child.width())
            if needed > child.height():
                found.append(f"a label is cut: {needed} > {child.height()} high")
    return found


def main(out: str, text: str) -> int:
    app = QApplication(sys.argv[:1])
    screen = app.primaryScreen().availableGeometry()
    window = QMainWindow()
    window.setCentralWidget(PlainLabel("The Batch tab sits here."))
    window.setGeometry(screen)
    window.show()
    question = longest_question(TEXTS[text])
    box, _yes = question_box(window, question.title, question.text(), question.yes)
    box.open()
    for _ in range(20):
        app.processEvents()
    picture = window.grab()
    painter = QPainter(picture)
    painter.drawPixmap(box.frameGeometry().topLeft() - window.geometry().topLeft(), box.grab())
    painter.end()
    picture.save(out)
    print(json.dumps(problems(box, screen)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
