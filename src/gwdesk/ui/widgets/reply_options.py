"""Where replies go: one way, two way (`ReplyType` + `ReplyPath`), or a `HEADER` sender.

`HEADER` is not a reply route at all (it makes `ReplyPath` the sender name the
recipient sees), so it is offered as its own choice with its own field rather than
as one more reply type; the two-way path and the sender name are kept apart so
switching between them never sends a URL as a sender name.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Final, Protocol

from PySide6.QtCore import Qt, Signal, SignalInstance
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from gwdesk.replies.template import ReplyTemplate
from gwdesk.ui.widgets.drafts import Draft, draft_text
from gwdesk.ui.widgets.validity import set_invalid


class ListenerSource(Protocol):
    """Where replies can be routed (the replies hub): the console's listener's template
    while it listens, or for a team profile the office's receiver's; whether it is the
    team's; why there is none; and a signal when that changes. A protocol, so this
    widget (shared by the Send and Batch tabs) knows no tab's code."""

    @property
    def template(self) -> ReplyTemplate | None: ...

    @property
    def team_route(self) -> bool: ...

    @property
    def route_problem(self) -> str: ...

    @property
    def route_changed(self) -> SignalInstance: ...


class ReplyMode(StrEnum):
    ONE_WAY = "one_way"
    TWO_WAY = "two_way"
    HEADER = "header"


#: The contract's two-way reply types (HEADER is the separate sender choice).
REPLY_TYPES: Final = ("HTTP", "HTTPGET", "HTTPPOST", "EMAIL", "WWW", "TCP/IP")
PATH_HINTS: Final = {
    "HTTP": "https://example.com/sms?from=#FROM#&text=#MSG#",
    "HTTPGET": "https://example.com/sms?from=#FROM#&text=#MSG#",
    "HTTPPOST": "https://example.com/sms?from=#FROM#&text=#MSG#",
    "EMAIL": "replies@example.com",
    "WWW": "where the web portal files the replies",
    "TCP/IP": "host:port that receives the replies",
}
TYPE_TIPS: Final = {
    "HTTP": "The gateway calls the URL with GET for each reply (webhook).",
    "HTTPGET": "The gateway calls the URL with GET for each reply (webhook).",
    "HTTPPOST": "The gateway POSTs the URL's query as a form for each reply (webhook).",
    "EMAIL": "Replies are emailed to the address.",
    "WWW": "Replies are kept for the gateway's web portal.",
    "TCP/IP": "Replies are delivered over a TCP/IP connection.",
}
PATH_TIP: Final = (
    "Webhook URLs may hold placeholders the gateway fills in: #FROM#, #TO#, #MSG#, "
    "#SENTDTS#, #RCVDDTS#."
)
LISTENER_TYPE: Final = "HTTP"
"""The reply type the console's own listener is given: a GET webhook per reply."""
LISTENER_TIP: Final = (
    "Two way, with this console's reply listener as the ReplyPath: the answers appear "
    "in the Replies tab."
)
LISTENER_OFF_TIP: Final = (
    "The reply listener is not running: start it in the status bar to use it here."
)
LISTENER_TEXT: Final = "Use this console's listener"
TEAM_TEXT: Final = "Use the team's receiver"
TEAM_TIP: Final = (
    "Two way, with the office's reply receiver as the ReplyPath: the answers appear in "
    "every console's Replies tab."
)
SENDER_TIP: Final = (
    "ReplyType HEADER: this becomes the sender the recipient sees (a number of 8 to 15 "
    "digits, or a name of up to 11 letters, digits, spaces, '.', '_' or '-')."
)


class ReplyOptions(QWidget):
    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.one_way = QRadioButton("One way")
        self.one_way.setToolTip("Replies from the recipient are not routed anywhere.")
        self.two_way = QRadioButton("Two way")
        self.two_way.setToolTip("Replies are routed to the path below (ReplyType + ReplyPath).")
        self.header = QRadioButton("Sender name (HEADER)")
        self.header.setToolTip(SENDER_TIP)
        self.group = QButtonGroup(self)
        for button, mode in (
            (self.one_way, ReplyMode.ONE_WAY),
            (self.two_way, ReplyMode.TWO_WAY),
            (self.header, ReplyMode.HEADER),
        ):
            button.setAccessibleName(f"Replies: {button.text()}")
            button.setProperty("mode", mode.value)
            self.group.addButton(button)
        self.one_way.setChecked(True)

        self.type_combo = QComboBox()
        self.type_combo.setAccessibleName("Reply type")
        for kind in REPLY_TYPES:
            self.type_combo.addItem(kind, kind)
            self.type_combo.setItemData(
                self.type_combo.count() - 1, TYPE_TIPS[kind], Qt.ItemDataRole.ToolTipRole
            )
        self.type_combo.setToolTip("ReplyType: how the gateway hands replies on")
        self.path_edit = QLineEdit()
        self.path_edit.setAccessibleName("Reply path")
        self.path_edit.setToolTip(PATH_TIP)
        self.path_edit.setMaxLength(2000)
        self.sender_edit = QLineEdit()
        self.sender_edit.setAccessibleName("Sender name")
        self.sender_edit.setPlaceholderText("e.g. ACME or 61400000000")
        self.sender_edit.setToolTip(SENDER_TIP)
        self.sender_edit.setMaxLength(64)
        self.one_way_note = QLabel("Replies are not routed: choose Two way to receive them.")
        self.one_way_note.setProperty("role", "hint")

        two_way_page = QWidget()
        row = QHBoxLayout(two_way_page)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.type_combo)
        row.addWidget(self.path_edit, 1)
        header_page = QWidget()
        header_row = QHBoxLayout(header_page)
        header_row.setContentsMargins(0, 0, 0, 0)
        header_row.addWidget(self.sender_edit, 1)
        note_page = QWidget()
        note_row = QHBoxLayout(note_page)
        note_row.setContentsMargins(0, 0, 0, 0)
        note_row.addWidget(self.one_way_note, 1)
        self.pages = QStackedWidget()
        self.pages.addWidget(note_page)
        self.pages.addWidget(two_way_page)
        self.pages.addWidget(header_page)

        radios = QHBoxLayout()
        radios.setContentsMargins(0, 0, 0, 0)
        radios.addWidget(self.one_way)
        radios.addWidget(self.two_way)
        radios.addWidget(self.header)
        radios.addStretch(1)
        self.listener_button = QPushButton(LISTENER_TEXT)
        self.listener_button.setAccessibleName(LISTENER_TEXT)
        self.listener_button.hide()  # until a listener is attached (`attach_listener`)
        self._hub: ListenerSource | None = None
        radios.addWidget(self.listener_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(radios)
        layout.addWidget(self.pages)

        self.listener_button.clicked.connect(self.use_listener)
        self.group.buttonToggled.connect(self._mode_toggled)
        self.type_combo.currentIndexChanged.connect(self._type_changed)
        self.path_edit.textChanged.connect(lambda _text: self.changed.emit())
        self.sender_edit.textChanged.connect(lambda _text: self.changed.emit())
        self._type_changed()

    # ---- the console's own listener -------------------------------------------------------

    def attach_listener(self, hub: ListenerSource) -> None:
        """Offer the console's reply listener as this message's reply route."""
        self._hub = hub
        self.listener_button.show()
        hub.route_changed.connect(self._listener_changed)
        self._listener_changed()

    def _listener_changed(self, *_args: object) -> None:
        hub = self._hub
        routed = hub is not None and hub.template is not None
        team = hub is not None and hub.team_route
        text = TEAM_TEXT if team else LISTENER_TEXT
        self.listener_button.setText(text)
        self.listener_button.setAccessibleName(text)
        self.listener_button.setEnabled(routed)
        if routed:
            self.listener_button.setToolTip(TEAM_TIP if team else LISTENER_TIP)
        else:
            self.listener_button.setToolTip(hub.route_problem if team and hub else LISTENER_OFF_TIP)

    def use_listener(self) -> None:
        """Two way, ReplyType HTTP, ReplyPath: the listener's template (placeholders and all)."""
        template = self._hub.template if self._hub is not None else None
        if template is None:
            return
        self.set_mode(ReplyMode.TWO_WAY)
        self.set_reply_type(LISTENER_TYPE)
        self.path_edit.setText(template.render())

    # ---- value -------------------------------------------------------------------------

    def mode(self) -> ReplyMode:
        checked = self.group.checkedButton()
        return ReplyMode(str(checked.property("mode"))) if checked else ReplyMode.ONE_WAY

    def set_mode(self, mode: ReplyMode) -> None:
        button = {
            ReplyMode.ONE_WAY: self.one_way,
            ReplyMode.TWO_WAY: self.two_way,
            ReplyMode.HEADER: self.header,
        }[mode]
        button.setChecked(True)

    def reply_type(self) -> str:
        return str(self.type_combo.currentData() or "")

    def set_reply_type(self, kind: str) -> None:
        index = self.type_combo.findData(kind)
        if index >= 0:
            self.type_combo.setCurrentIndex(index)

    def reply(self) -> tuple[str, str] | None:
        """(ReplyType, ReplyPath) as typed, or None for a one-way message."""
        mode = self.mode()
        if mode is ReplyMode.TWO_WAY:
            return (self.reply_type(), self.path_edit.text().strip())
        if mode is ReplyMode.HEADER:
            return ("HEADER", self.sender_edit.text().strip())
        return None

    def draft(self) -> dict[str, str]:
        """The route as a draft keeps it (both fields: switching modes loses neither)."""
        return {
            "reply_mode": self.mode().value,
            "reply_type": self.reply_type(),
            "reply_path": self.path_edit.text(),
            "header_sender": self.sender_edit.text(),
        }

    def restore(self, data: Draft) -> None:
        """The route from a draft; a mode or type it does not know reads as the default."""
        mode, modes = data.get("reply_mode"), {m.value: m for m in ReplyMode}
        self.set_mode(
            modes.get(mode, ReplyMode.ONE_WAY) if isinstance(mode, str) else ReplyMode.ONE_WAY
        )
        kind = data.get("reply_type")
        if isinstance(kind, str) and kind in REPLY_TYPES:
            self.set_reply_type(kind)
        self.path_edit.setText(draft_text(data, "reply_path", 2000))
        self.sender_edit.setText(draft_text(data, "header_sender", 64))

    def path_widget(self) -> QLineEdit:
        """The field a `ReplyPath` error is about in the current mode."""
        return self.sender_edit if self.mode() is ReplyMode.HEADER else self.path_edit

    # ---- channel limits ----------------------------------------------------------------

    def limit_types(self, allowed: Iterable[str], why: str) -> None:
        """Disable the reply types a channel does not take, saying why in their tooltip."""
        allowed = set(allowed)
        model = self.type_combo.model()
        assert isinstance(model, QStandardItemModel)
        for row, kind in enumerate(REPLY_TYPES):
            item = model.item(row)
            usable = kind in allowed
            item.setEnabled(usable)
            item.setToolTip(TYPE_TIPS[kind] if usable else f"{TYPE_TIPS[kind]} {why}")
        if self.reply_type() not in allowed:
            first = next((k for k in REPLY_TYPES if k in allowed), None)
            if first is not None:
                self.set_reply_type(first)

    def set_invalid_type(self, invalid: bool) -> None:
        set_invalid(self.type_combo, invalid)

    def _mode_toggled(self, _button: object, checked: bool) -> None:
        if not checked:
            return
        mode = self.mode()
        self.pages.setCurrentIndex(
            {ReplyMode.ONE_WAY: 0, ReplyMode.TWO_WAY: 1, ReplyMode.HEADER: 2}[mode]
        )
        self.changed.emit()

    def _type_changed(self) -> None:
        self.path_edit.setPlaceholderText(PATH_HINTS.get(self.reply_type(), ""))
        self.changed.emit()
