"""A forwarding rule's new signing secret, shown once.

The secret is made when the rule is added and kept in this machine's keyring only;
whoever runs the endpoint needs it to check the HMAC header. It is shown here, in a
read-only field the operator can select and copy, with a note that it is not shown
again: never logged, never in a tooltip, cleared from the field when the window closes
(the window is deleted then too).
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gwdesk.domain.models import Secret
from gwdesk.ui.plain_text import PlainLabel, window_title
from gwdesk.ui.widgets.fitting import fit_on_screen

NOT_AGAIN = (
    "Copy this secret now into the endpoint's settings: it is not shown again. gwdesk keeps "
    "it in this computer's keyring only; the endpoint checks each forward's signature with it."
)


class SecretDialog(QDialog):
    """The secret of rule `rule` in a selectable read-only field, until closed."""

    def __init__(self, rule: str, secret: Secret, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.setWindowTitle(window_title(f"Signing secret of rule {rule}"))
        self.setModal(True)
        heading = PlainLabel(f"The forwards of rule {rule!r} are signed with this secret:")
        heading.setWordWrap(True)
        self.field = QLineEdit(secret.reveal())
        self.field.setAccessibleName("Signing secret")
        self.field.setReadOnly(True)
        self.field.setMinimumWidth(
            self.field.fontMetrics().horizontalAdvance(self.field.text()) + 16
        )
        self.field.selectAll()
        self.copy_button = QPushButton("&Copy")
        self.copy_button.setAccessibleName("Copy the signing secret")
        self.copy_button.clicked.connect(self.copy)
        self.note = PlainLabel(NOT_AGAIN)
        self.note.setAccessibleName("The secret is not shown again")
        self.note.setWordWrap(True)
        self.note.setProperty("role", "warning")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        row = QHBoxLayout()
        row.addWidget(self.field, 1)
        row.addWidget(self.copy_button)
        layout = QVBoxLayout(self)
        layout.addWidget(heading)
        layout.addLayout(row)
        layout.addWidget(self.note)
        layout.addStretch(1)
        layout.addWidget(buttons)
        self.finished.connect(self.field.clear)
        fit_on_screen(self, QSize(620, 220))

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.field.text())
