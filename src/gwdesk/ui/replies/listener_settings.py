"""Where the reply listener listens: this machine only (the default), or a chosen interface.

Any address other than loopback lets other machines reach the listener, so
choosing one is explicit and the dialog says plainly what that means before it is
saved. The port is kept per profile: the ReplyPath configured at the gateway
carries it.
"""

from __future__ import annotations

from typing import Final

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from gwdesk.domain.profile import is_loopback
from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.reply_state import LOOPBACK, ListenerSettings
from gwdesk.ui.widgets.fitting import screen_room
from gwdesk.ui.widgets.validity import set_invalid

ALL_INTERFACES: Final = "0.0.0.0"  # noqa: S104 - offered as a choice, with a warning
HOSTS: Final = (
    (LOOPBACK, "127.0.0.1: this machine only (recommended)"),
    (ALL_INTERFACES, "0.0.0.0: every network interface"),
)
DEFAULT_PORT_TEXT: Final = "remembered (8642 at first)"
REMOTE_WARNING: Final = (
    "Other machines will be able to reach the listener. Anyone who learns its ReplyPath "
    "can add replies, and the calls are not encrypted: put a TLS reverse proxy or a tunnel "
    "in front unless this network is trusted."
)


def remote_warning(host: str) -> str:
    return "" if is_loopback(host) else REMOTE_WARNING


class ListenerSettingsDialog(QDialog):
    def __init__(self, settings: ListenerSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Reply listener settings")
        self.host_combo = QComboBox()
        self.host_combo.setEditable(True)
        self.host_combo.setAccessibleName("Listen on")
        for host, label in HOSTS:
            self.host_combo.addItem(label, host)
        index = self.host_combo.findData(settings.host)
        if index >= 0:
            self.host_combo.setCurrentIndex(index)
        else:
            self.host_combo.setEditText(settings.host)
        self.port_spin = QSpinBox()
        self.port_spin.setAccessibleName("Port")
        self.port_spin.setRange(0, 65535)
        self.port_spin.setSpecialValueText(DEFAULT_PORT_TEXT)
        self.port_spin.setValue(settings.port or 0)
        self.port_spin.setToolTip("1024 to 65535; the ReplyPath configured at the gateway has it")
        self.public_edit = QLineEdit(settings.public_host or "")
        self.public_edit.setAccessibleName("Address in the ReplyPath")
        self.public_edit.setPlaceholderText("as above (e.g. replies.example.com behind a proxy)")
        self.warning = PlainLabel()  # quotes the address typed
        self.warning.setWordWrap(True)
        self.warning.setProperty("role", "warning")
        self.warning.setAccessibleName("Warning")
        self.error = PlainLabel()
        self.error.setProperty("role", "error")
        self.error.setWordWrap(True)
        self.error.hide()

        form = QFormLayout()
        host_label = QLabel("&Listen on")
        host_label.setBuddy(self.host_combo)
        port_label = QLabel("&Port")
        port_label.setBuddy(self.port_spin)
        public_label = QLabel("&Address in ReplyPath")
        public_label.setBuddy(self.public_edit)
        form.addRow(host_label, self.host_combo)
        form.addRow(port_label, self.port_spin)
        form.addRow(public_label, self.public_edit)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.warning)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self._enabled = settings.enabled
        self.host_combo.currentTextChanged.connect(lambda _text: self._host_changed())
        self._host_changed()
        self.setMinimumWidth(min(520, screen_room(self).width()))

    def host(self) -> str:
        """The address chosen: an offered one by its label, or what was typed."""
        text = self.host_combo.currentText().strip()
        index = self.host_combo.findText(text)
        return str(self.host_combo.itemData(index)) if index >= 0 else text

    def _host_changed(self) -> None:
        text = remote_warning(self.host()) if self.host() else ""
        self.warning.setText(text)
        self.warning.setVisible(bool(text))
        set_invalid(self.host_combo, False)
        self.error.hide()

    def settings(self) -> ListenerSettings:
        port = self.port_spin.value()
        return ListenerSettings(
            host=self.host(),
            port=port or None,
            public_host=self.public_edit.text().strip() or None,
            enabled=self._enabled,
        )

    def accept(self) -> None:
        host = self.host()
        problem = ""
        if not host or not plain_address(host):
            problem = "Type an address of this machine, e.g. 127.0.0.1."
        elif 0 < self.port_spin.value() < 1024:
            problem = "Ports below 1024 need administrator rights: use 1024 to 65535."
        public = self.public_edit.text().strip()
        if public and not plain_address(public):
            problem = "The address in the ReplyPath is a host name or IP address only."
        if problem:
            self.error.setText(problem)
            self.error.show()
            set_invalid(self.host_combo, True)
            return
        super().accept()


def plain_address(text: str) -> bool:
    """A host name or IP address only: no URL parts, spaces or hidden characters, and short
    enough for a host name (what the listener's settings keep, `domain/settings.py`)."""
    return len(text) <= 253 and text.isprintable() and not any(c in text for c in "/?#@ ")
