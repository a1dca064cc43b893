"""Drives the real console (`gwdesk.ui.app.main --sandbox`) offscreen, for the crash test.

    python -m tests.resilience.console_driver send COUNT     paste COUNT numbers, send
    python -m tests.resilience.console_driver resume         click Resume in the Outbox window

It creates the QApplication, starts a timer that plays the operator, then hands
over to the console's own `main` (window, session, embedded sandbox child, outbox
check: all as an operator gets them). What it sees goes to stdout, one JSON object
a line. `send` never ends by itself: the test kills it with SIGKILL mid-batch.
`resume` waits for the Outbox window the start-up check opens, resumes the batch,
reports, and stays open until SIGTERM (the console's clean quit).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

TEXT = "Console crash test: your order has shipped"


def say(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


def numbers(count: int) -> list[str]:
    return [f"0412 {i // 1000:03d} {i % 1000:03d}" for i in range(count)]


class Operator:
    """One step every 50 ms: find the window, then do the next thing the phase needs."""

    def __init__(self, phase: str, count: int) -> None:
        self.phase = phase
        self.count = count
        self.done: set[str] = set()

    def window(self) -> Any:
        from gwdesk.ui.main_window import MainWindow

        found = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)]
        return found[0] if found else None

    def step(self) -> None:
        window = self.window()
        if window is None:
            return
        if self.phase == "send":
            self.send(window)
        else:
            self.resume(window)

    def send(self, window: Any) -> None:
        from gwdesk.ui.batch.tab import BatchTab

        tab = window.tab(BatchTab)
        if not tab.session.active:
            return
        if "paste" not in self.done:
            self.done.add("paste")
            tab.set_parallel(1)
            tab.compose.editor.set_text(TEXT)
            tab.recipients.paste.setPlainText("\n".join(numbers(self.count)))
            tab.recipients.check_paste()
            return
        ready = tab.recipients.result is not None and not tab.recipients.busy
        if ready and "send" not in self.done:
            self.done.add("send")
            say(phase="send", valid=len(tab.recipients.result.numbers))
            tab.send()
            return
        box = tab.confirm_box
        asking = box is not None and box.isVisible()
        if "send" in self.done and "confirm" not in self.done and asking:
            self.done.add("confirm")  # every list send asks: the operator says yes
            accept = QMessageBox.ButtonRole.AcceptRole
            next(b for b in box.buttons() if box.buttonRole(b) is accept).click()

    def resume(self, window: Any) -> None:
        from gwdesk.ui.outbox.dialog import RESUME_KEY, OutboxDialog

        dialogs = [d for d in window.findChildren(OutboxDialog) if d.isVisible()]
        if not dialogs:
            return
        dialog = dialogs[0]
        if "resume" not in self.done and dialog.table.rowCount():
            self.done.add("resume")
            settled = [dialog.settled.item(i).text() for i in range(dialog.settled.count())]
            say(
                phase="found",
                status=window.statusBar().currentMessage(),
                settled=settled,
                rows=dialog.table.rowCount(),
                to_send=dialog.table.item(0, 5).text(),
            )
            dialog.resume_button.click()
            return
        finished = "resume" in self.done and not dialog.tasks.running(RESUME_KEY, owner=dialog)
        if finished and "report" not in self.done:
            self.done.add("report")
            say(phase="resumed", state=dialog.state.text(), rows=dialog.table.rowCount())


def main(argv: list[str]) -> int:
    phase = argv[0]
    count = int(argv[1]) if len(argv) > 1 else 0
    app = QApplication(sys.argv[:1])
    operator = Operator(phase, count)
    timer = QTimer()
    timer.setInterval(50)
    timer.timeout.connect(operator.step)
    timer.start()
    from gwdesk.ui import app as console

    code = console.main(["--sandbox"])
    timer.stop()
    del app
    return int(code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
