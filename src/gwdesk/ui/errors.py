"""Unexpected exceptions: logged, shown once in a dialog, never fatal.

Gateway errors meant for the operator are shown where they happened (at the
field, in a tab's result area); only what nobody expected comes here. Repeats of
the same failure within a short time are logged but not shown again, so a
failing timer cannot bury the operator in dialogs.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
import traceback
from collections.abc import Callable
from types import TracebackType
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QMessageBox, QWidget

from gwdesk.ui.plain_text import plain_box

log = logging.getLogger("gwdesk.ui")
REPEAT_WINDOW = 30.0


class ErrorReporter(QObject):
    """The one place unexpected exceptions go (asyncio, slots, sys.excepthook)."""

    reported = Signal(str)

    def __init__(self, *, show_dialogs: bool = True, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.show_dialogs = show_dialogs
        self.errors: list[BaseException] = []
        self._last_shown: dict[str, float] = {}
        self.dialog_parent: Callable[[], QWidget | None] = lambda: None

    def report(self, exc: BaseException, context: str = "") -> None:
        self.errors.append(exc)
        summary = f"{type(exc).__name__}: {exc}"
        log.error(
            "unexpected error%s: %s\n%s",
            f" in {context}" if context else "",
            summary,
            "".join(traceback.format_exception(exc)),
        )
        self.reported.emit(summary)
        now = time.monotonic()
        if now - self._last_shown.get(summary, -REPEAT_WINDOW) < REPEAT_WINDOW:
            return
        self._last_shown[summary] = now
        if self.show_dialogs:
            self._show(exc, context)

    def _show(self, exc: BaseException, context: str) -> None:
        box = QMessageBox(self.dialog_parent())
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("gwdesk: something went wrong")
        where = f" while {context}" if context else ""
        box.setText(
            f"An unexpected error happened{where}. Your work is kept; "
            "you can carry on or try again."
        )
        box.setInformativeText(f"{type(exc).__name__}: {exc}"[:500])
        box.setDetailedText("".join(traceback.format_exception(exc))[-8000:])
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        plain_box(box).open()

    def install(self, loop: asyncio.AbstractEventLoop) -> None:
        """Route the event loop's and the interpreter's unhandled exceptions here."""

        def loop_handler(_loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
            exc = context.get("exception")
            if isinstance(exc, BaseException):
                self.report(exc, str(context.get("message", "")))
            else:
                log.error("event loop: %s", context.get("message"))

        def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
            if issubclass(kind, KeyboardInterrupt):
                sys.__excepthook__(kind, exc, tb)
                return
            self.report(exc.with_traceback(tb))

        loop.set_exception_handler(loop_handler)
        sys.excepthook = hook
