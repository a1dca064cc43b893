"""Fax / MMS tab: MMS with attachments, MMS by URL, multi-MMS and eFax, through Lodge.

A segmented choice picks what to send; the three MMS kinds share one form (so
switching between them keeps the subject, text and attachments), the fax has its
own. Everything is checked before any request (the gateway layer's own checks, see
`fax_mms_request`), and a refusal is shown at the input or attachment it is about.
Sends go through the profile's preferred Lodge port, which the tab shows; results
are listed like the Send tab's and recorded in the profile's history as `MMS` or
`FAX`. Checking and sending are the single send's flow's (`gwdesk.app.single_send`):
the tab hands it the view's values and renders what it says.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Final

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QButtonGroup,
    QHBoxLayout,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.media import MODE_TIPS, PORT_LABELS, MediaMessage, Mode, summary, target_of
from gwdesk.app.single_send import HistoryEntry, SingleResult, SingleSend
from gwdesk.domain.errors import GatewayError, ValidationError
from gwdesk.domain.numbers import DEFAULT_REGION
from gwdesk.domain.profile import LodgePort
from gwdesk.ui.fax_mms.forms import ComposeForm, FaxForm, MmsForm
from gwdesk.ui.plain_text import PlainLabel, tooltip
from gwdesk.ui.session import NOT_CONNECTED, Session
from gwdesk.ui.tab_base import BaseTab
from gwdesk.ui.tasks import TaskRunner
from gwdesk.ui.theme import Theme
from gwdesk.ui.widgets.history_view import HistoryView
from gwdesk.ui.widgets.panes import column, on_ctrl_enter, panes, titled
from gwdesk.ui.widgets.send_controls import busy_bar, cancel_button, result_line, send_button
from gwdesk.ui.widgets.sent_statuses import SentStatuses
from gwdesk.ui.widgets.validity import set_role

SEND_TASK: Final = "fax-mms-send"
CHANNELS: Final = ("MMS", "FAX")
READY_TEXT: Final = "Ctrl+Enter sends from any field."
MODE_ICONS: Final = {
    Mode.MMS: "attach",
    Mode.MMS_URL: "import",
    Mode.MULTI_MMS: "batch",
    Mode.FAX: "fax",
}
SEGMENT_STYLE: Final = """
QToolButton[segment="true"] {
    padding: 5px 14px; border: 1px solid palette(mid); border-radius: 0;
    background: palette(button);
}
QToolButton[segment="true"]:checked {
    background: palette(highlight); color: palette(highlighted-text);
    border-color: palette(highlight); font-weight: 600;
}
QToolButton[segment="true"]:hover:!checked { background: palette(alternate-base); }
QToolButton[first="true"] { border-top-left-radius: 4px; border-bottom-left-radius: 4px; }
QToolButton[last="true"] { border-top-right-radius: 4px; border-bottom-right-radius: 4px; }
"""


class FaxMmsTab(BaseTab):
    title = "Fax / MMS"
    icon_name = "mms"

    def __init__(
        self, session: Session, tasks: TaskRunner, theme: Theme, parent: QWidget | None = None
    ) -> None:
        super().__init__(session, tasks, theme, parent)
        # Before the tab has children: set after them, it styles every one of them again.
        self.setStyleSheet(SEGMENT_STYLE)
        self._started = datetime.now(UTC)
        self.mode = Mode.MMS
        self.flow: SingleSend | None = None
        """The profile's single sends (None: no profile is active)."""

        self.mode_group = QButtonGroup(self)
        self.mode_group.setExclusive(True)
        self.mode_buttons: dict[Mode, QToolButton] = {}
        segments = QHBoxLayout()
        segments.setSpacing(0)
        for number, mode in enumerate(Mode, 1):
            button = QToolButton()
            button.setText(mode.label)
            button.setIcon(theme.icon(MODE_ICONS[mode]))
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            button.setCheckable(True)
            button.setProperty("segment", True)
            button.setProperty("first", number == 1)
            button.setProperty("last", number == len(Mode))
            button.setShortcut(QKeySequence(f"Alt+{number}"))
            button.setToolTip(f"{MODE_TIPS[mode]} (Alt+{number})")
            button.setAccessibleName(f"{mode.label} mode")
            button.toggled.connect(lambda on, m=mode: self._mode_toggled(m, on))
            self.mode_group.addButton(button)
            self.mode_buttons[mode] = button
            segments.addWidget(button)
        self.port_label = PlainLabel()
        self.port_label.setAccessibleName("Lodge port")

        self.mms = MmsForm(tasks, theme)
        self.fax = FaxForm(tasks, theme)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.mms)
        self.stack.addWidget(self.fax)

        self.status_label = result_line(READY_TEXT)
        self.busy = busy_bar()
        self.cancel_button = cancel_button(
            theme, "Stop waiting for the gateway. It may already have lodged the message."
        )
        self.send_button = send_button(theme, "Send MMS", "Send through Lodge (Ctrl+Enter)", 130)
        # Lodge has no ExternalSystemId; the detail goes beside the table, so that the
        # short results area still shows several sends.
        self.history = HistoryView(
            empty_text="Nothing sent from this tab yet.\n"
            "Each MMS and fax appears here with the gateway's MsgID or answer.",
            detail_beside=True,
            external_ids=False,
        )
        SentStatuses(self.history, session, tasks)  # statuses follow the log sync

        top = QHBoxLayout()
        top.addLayout(segments)
        top.addStretch(1)
        top.addWidget(self.port_label)
        actions = QHBoxLayout()
        actions.addWidget(self.status_label, 1)
        actions.addWidget(self.busy)
        actions.addWidget(self.cancel_button)
        actions.addWidget(self.send_button)
        splitter = panes(
            Qt.Orientation.Vertical,
            column(top, (self.stack, 1), actions),
            titled("Sent this session", self.history),
            stretch=(3, 1),
            sizes=(500, 160),
        )
        QVBoxLayout(self).addWidget(splitter)

        self.send_button.clicked.connect(self.send)
        self.cancel_button.clicked.connect(self.cancel)
        self.mms.submit_requested.connect(self.send)
        self.fax.submit_requested.connect(self.send)
        on_ctrl_enter(self, self.send)
        self.mode_buttons[Mode.MMS].setChecked(True)
        self._attach_session()

    # ---- modes and the session ---------------------------------------------------------

    def form(self) -> ComposeForm:
        return self.fax if self.mode is Mode.FAX else self.mms

    def _mode_toggled(self, mode: Mode, on: bool) -> None:
        if on:
            self.set_mode(mode)

    def set_mode(self, mode: Mode) -> None:
        self.mode = mode
        if not self.mode_buttons[mode].isChecked():
            self.mode_buttons[mode].setChecked(True)
        if mode is not Mode.FAX:
            self.mms.set_mode(mode)
        self.stack.setCurrentWidget(self.form())
        if not self.sending():
            self.send_button.setText(f"Send {'fax' if mode is Mode.FAX else mode.label}")
            self._show_status(READY_TEXT, "hint")
        self._update_port()

    def on_session_changed(self) -> None:
        self.tasks.cancel(SEND_TASK, owner=self)
        self._set_sending(False)
        self._attach_session()

    def _attach_session(self) -> None:
        profile = self.session.profile
        region = profile.region if profile else DEFAULT_REGION
        self.mms.set_region(region)
        self.fax.set_region(region)
        self._update_port()
        sending, store = self.session.sending, self.session.store
        contacts = store.contacts if store is not None else None
        self.flow = SingleSend(sending, contacts) if sending is not None else None
        self.history.set_entries(self.flow.sent_since(self._started, CHANNELS) if self.flow else [])

    def _update_port(self) -> None:
        profile = self.session.profile
        if profile is None:
            text, role, tip = "Not connected: choose a profile (File ▸ Profiles…).", "hint", ""
        elif not profile.lodge_url:
            text = "This profile has no Lodge URL: add one in File ▸ Profiles… to send these."
            role, tip = "error", ""
        else:
            port = PORT_LABELS[profile.lodge_port]
            text, role = f"Via Lodge · {port} (the profile's port)", "hint"
            if self.mode is Mode.MULTI_MMS and profile.lodge_port not in ("soap11", "soap12"):
                text = (
                    f"Via Lodge · SOAP 1.1 (multi-MMS documents need SOAP; the profile uses {port})"
                )
            tip = f"Lodge service: {profile.lodge_url}"
        self.port_label.setText(text)
        self.port_label.setToolTip(tooltip(tip))
        set_role(self.port_label, role)

    # ---- sending -----------------------------------------------------------------------

    def sending(self) -> bool:
        return self.tasks.running(SEND_TASK, owner=self)

    def send(self) -> None:
        """Check the view and send it; a refusal points at its input, with no request made."""
        if self.sending():
            return
        form = self.form()
        form.clear_errors()
        values = self.fax.values() if self.mode is Mode.FAX else self.mms.values()
        flow = self.flow
        try:
            if flow is None:
                raise GatewayError(NOT_CONNECTED)
            message = flow.check_media(values)
        except ValidationError as exc:
            self._refused(exc)
            return
        except GatewayError as exc:
            self._show_status(exc.message, "error")
            return
        self._set_sending(True, message, flow.lodge_port)
        self.tasks.run(
            self._send(flow, self.session.store, message),
            key=SEND_TASK,
            owner=self,
            context=f"sending {message.describe()}",
        )

    async def _send(self, flow: SingleSend, store: object, message: MediaMessage) -> None:
        try:
            result = await flow.send_media(message)
        except GatewayError as exc:
            self._set_sending(False)
            self._show_status(f"Not sent: {exc.message}", "error")
            return
        except asyncio.CancelledError:
            raise  # cancelled by the operator (the tab shows it) or the tab is going away
        except Exception:
            self._set_sending(False)
            self._show_status(
                "The send failed unexpectedly; everything you entered is kept.", "error"
            )
            raise
        self._set_sending(False)
        self._record(store, result.refresh.history)
        self._show_outcome(message, result)

    def _show_outcome(self, message: MediaMessage, result: SingleResult) -> None:
        lodged = result.outcome.lodged_media
        if lodged:
            text, ok = summary(message, lodged)
            self._show_status(text, "ok" if ok else "error")
            self.session.report(text, ok)
            return
        error = result.error or GatewayError("It was not sent.")
        self.session.report(f"{message.mode.label} not sent: {error.message}", False)
        if isinstance(error, ValidationError):
            self._refused(error)
        else:
            self._show_status(f"Not sent: {error.message}", "error")

    def cancel(self) -> None:
        if not self.sending():
            return
        self.tasks.cancel(SEND_TASK, owner=self)
        self._set_sending(False)
        self._show_status(
            "Cancelled. The gateway may already have lodged it: check the Logs tab "
            "before sending again. Everything you entered is kept.",
            "error",
        )

    def _set_sending(
        self, sending: bool, request: MediaMessage | None = None, port: LodgePort | None = None
    ) -> None:
        self.stack.setEnabled(not sending)
        for button in self.mode_buttons.values():
            button.setEnabled(not sending)
        self.send_button.setEnabled(not sending)
        self.busy.setVisible(sending)
        self.cancel_button.setVisible(sending)
        if sending and request is not None:
            self.send_button.setText("Sending…")
            shown = PORT_LABELS[port] if port is not None else "Lodge"
            if request.mode is Mode.MULTI_MMS and port is not None:
                shown = shown if port in ("soap11", "soap12") else PORT_LABELS["soap11"]
            self._show_status(f"Sending {request.describe()} via Lodge ({shown})…", "hint")
        else:
            self.send_button.setText(f"Send {'fax' if self.mode is Mode.FAX else self.mode.label}")

    def _record(self, store: object, entries: Sequence[HistoryEntry]) -> None:
        """Into this session's list (the send wrote the profile's history); the first
        message ends on top."""
        if store is not self.session.store:
            return
        for entry in reversed(entries):
            self.history.add(entry)

    def _refused(self, exc: ValidationError) -> None:
        """At its input (focused, marked) when there is one, and in the result line."""
        self.form().show_error(target_of(exc.field), exc.message)
        self._show_status(f"Not sent: {exc.message}", "error")

    def _show_status(self, text: str, role: str) -> None:
        self.status_label.setText(text)
        set_role(self.status_label, role)
