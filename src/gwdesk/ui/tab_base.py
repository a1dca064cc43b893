"""What every tab shares: its services, and signal connections it drops when destroyed."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QMetaObject, SignalInstance
from PySide6.QtWidgets import QWidget

from gwdesk.ui.session import Session
from gwdesk.ui.tasks import TaskRunner
from gwdesk.ui.theme import Theme


class BaseTab(QWidget):
    """A main-window tab. Subclasses set `title` and `icon_name` and build their UI."""

    title = ""
    icon_name = ""

    def __init__(
        self, session: Session, tasks: TaskRunner, theme: Theme, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.tasks = tasks
        self.theme = theme
        self._connections: list[tuple[SignalInstance, QMetaObject.Connection]] = []
        self.connect_tracked(session.changed, self.on_session_changed)
        # A closure, not a bound method: by the time `destroyed` fires the tab is half gone.
        connections = self._connections
        self.destroyed.connect(lambda: drop_connections(connections))

    def connect_tracked(self, signal: SignalInstance, slot: Callable[..., Any]) -> None:
        """Connect to a signal of a longer-lived object; disconnected when the tab goes."""
        self._connections.append((signal, signal.connect(slot)))

    def on_session_changed(self) -> None:
        """The profile (and so the service and store) switched; reload what depends on it."""


def drop_connections(connections: list[tuple[SignalInstance, QMetaObject.Connection]]) -> None:
    # Qt has already cut connections whose receiver was the tab itself; PySide warns when
    # asked to cut those again, which is expected here and not worth a line on stderr.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for signal, connection in connections:
            with contextlib.suppress(RuntimeError, TypeError):  # the other side is gone
                signal.disconnect(connection)
    connections.clear()
