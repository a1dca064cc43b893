"""The reply listener in the status bar: where it listens, start/stop, copy its ReplyPath.

When the port it wanted is taken, it says so and offers a free one with one click.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QToolButton, QWidget

from gwdesk.ui.plain_text import tooltip
from gwdesk.ui.reply_hub import ReplyHub
from gwdesk.ui.reply_state import ListenerState, ListenerStatus
from gwdesk.ui.tasks import TaskRunner
from gwdesk.ui.theme import Theme
from gwdesk.ui.widgets.elided_label import ElidedLabel
from gwdesk.ui.widgets.validity import set_role

TASK_KEY = "reply-listener-toggle"


class ListenerStatusWidget(QWidget):
    message = Signal(str)
    """A short confirmation for the status bar ("ReplyPath copied")."""

    def __init__(
        self, hub: ReplyHub, tasks: TaskRunner, theme: Theme, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.hub = hub
        self.tasks = tasks
        # An address and the system's error text; shortened with "…" on a narrow window.
        self.label = ElidedLabel()
        self.label.setAccessibleName("Reply listener")
        self._start_icon = theme.icon("listener")
        self._stop_icon = theme.icon("cancel")
        self.toggle_button = QToolButton()
        self.toggle_button.setAutoRaise(True)
        self.toggle_button.setAccessibleName("Start or stop the reply listener")
        self.copy_button = QToolButton()
        self.copy_button.setIcon(theme.icon("copy"))
        self.copy_button.setAutoRaise(True)
        self.copy_button.setAccessibleName("Copy the ReplyPath")
        self.copy_button.setToolTip(
            "Copy this console's ReplyPath (for two-way messages sent from elsewhere)"
        )
        self.offer_button = QToolButton()
        self.offer_button.setAccessibleName("Listen on the free port")
        self.offer_button.hide()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.label)
        layout.addWidget(self.offer_button)
        layout.addWidget(self.toggle_button)
        layout.addWidget(self.copy_button)
        self.toggle_button.clicked.connect(self.toggle)
        self.copy_button.clicked.connect(self.copy_reply_path)
        self.offer_button.clicked.connect(self.use_offered_port)
        hub.status_changed.connect(self.show_status)
        hub.route_changed.connect(self._route_changed)
        self.show_status(hub.status)

    def show_status(self, status: ListenerStatus | None = None) -> None:
        status = status or self.hub.status
        state = status.state
        self.label.setText(status.short)
        self.label.setToolTip(tooltip(status.long))
        role = {
            ListenerState.LISTENING: "ok",
            ListenerState.ERROR: "error",
        }.get(state, "hint")
        set_role(self.label, role)
        listening = state is ListenerState.LISTENING
        busy = state in (ListenerState.STARTING, ListenerState.STOPPING)
        self.toggle_button.setEnabled(state is not ListenerState.NO_PROFILE and not busy)
        self.toggle_button.setText("Stop" if listening else "Start")
        self.toggle_button.setIcon(self._stop_icon if listening else self._start_icon)
        self.toggle_button.setToolTip(
            "Stop the reply listener (replies then wait at the gateway)"
            if listening
            else "Start the reply listener"
        )
        self._route_changed()
        offer = status.suggestion if state is ListenerState.ERROR else None
        self.offer_button.setVisible(offer is not None)
        if offer is not None:
            self.offer_button.setText(f"Use port {offer}")
            self.offer_button.setToolTip(tooltip(status.message))

    def _route_changed(self) -> None:
        """The ReplyPath to copy: this console's listener's, or the team receiver's."""
        self.copy_button.setEnabled(self.hub.template is not None)
        self.copy_button.setToolTip(
            "Copy the team's ReplyPath (the office's receiver), for two-way messages sent "
            "from elsewhere"
            if self.hub.team_route
            else "Copy this console's ReplyPath (for two-way messages sent from elsewhere)"
        )

    def toggle(self) -> None:
        work = self.hub.stop() if self.hub.listening else self.hub.start()
        self.tasks.run(
            work, key=TASK_KEY, owner=self, context="starting or stopping the reply listener"
        )

    def use_offered_port(self) -> None:
        port = self.hub.status.suggestion
        if port is not None:
            self.tasks.run(
                self.hub.start(port),
                key=TASK_KEY,
                owner=self,
                context="starting the reply listener",
            )

    def copy_reply_path(self) -> None:
        template = self.hub.template
        if template is None:
            return
        QGuiApplication.clipboard().setText(template.render())
        self.message.emit("ReplyPath copied: paste it as the ReplyPath of a two-way message.")
