"""A small dialog that changes one held send, saved through the core while it stays open.

Save runs the change (`change`, the core's call) as the dialog's task. What the core
refuses is shown at the field it names (`ValidationError.field`) and the dialog stays
open with everything typed; anything else that stops the change (another desk took or
cancelled the send meanwhile, the store is away) is said under the fields. Only a
change the core made closes the dialog, and `saved` carries the send as it now is.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.scheduled import ScheduledSend
from gwdesk.domain.errors import GatewayError, StoreError, ValidationError
from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.tasks import TaskRunner
from gwdesk.ui.widgets.field_errors import error_label, stacked
from gwdesk.ui.widgets.listing import hint_label
from gwdesk.ui.widgets.validity import set_invalid

SAVE_KEY = "scheduled-edit"
Invalid = Callable[[bool], None]
"""Marks a field as refused (True) or not."""


class EditDialog(QDialog):
    """One change of a held send (subclasses add their fields and `change`)."""

    saved = Signal(object)
    """The `ScheduledSend` as the change left it."""

    def __init__(
        self, title: str, explain: str, tasks: TaskRunner, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.tasks = tasks
        self.setWindowTitle(title)
        self.setMinimumWidth(440)
        self.explain = hint_label(explain, "What this changes")
        self.form = QFormLayout()
        # Each label over its field: a message box or a list of numbers wants the width.
        self.form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapAllRows)
        self.error = error_label("Why it was not changed")
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.save_button: QPushButton = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.explain)
        layout.addLayout(self.form, 1)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self._fields: dict[str, tuple[QWidget, PlainLabel, Invalid]] = {}

    def add_field(
        self, label: str, widget: QWidget, wire_fields: tuple[str, ...], invalid: Invalid
    ) -> PlainLabel:
        """`widget` under `label`, with its error line; the core's refusals naming any of
        `wire_fields` are shown there. The error line."""
        error = error_label(f"{label} error")
        self.form.addRow(label, stacked(widget, error))
        for name in wire_fields:
            self._fields[name] = (widget, error, invalid)
        return error

    def error_at(self, wire_field: str) -> PlainLabel:
        """The error line of the field the core names `wire_field`."""
        return self._fields[wire_field][1]

    async def change(self) -> ScheduledSend:
        """The core's change, with what was typed (raises its refusal)."""
        raise NotImplementedError

    @property
    def saving(self) -> bool:
        return self.tasks.running(SAVE_KEY, owner=self)

    def accept(self) -> None:
        """Save: the change is made by the core; the dialog closes only once it is."""
        if not self.saving:
            self.tasks.run(
                self._save(), key=SAVE_KEY, owner=self, context="changing a scheduled send"
            )

    def reject(self) -> None:
        """Cancel, unless a change is being saved (it may be made already: its end says)."""
        if not self.saving:
            super().reject()

    async def _save(self) -> None:
        self._clear()
        self.buttons.setEnabled(False)
        try:
            changed = await self.change()
        except ValidationError as exc:
            self._refuse(exc.message, exc.field)
        except (GatewayError, StoreError) as exc:
            self._refuse(str(exc), None)
        else:
            self.saved.emit(changed)
            super().accept()
        finally:
            self.buttons.setEnabled(True)

    def _refuse(self, text: str, wire_field: str | None) -> None:
        found = self._fields.get(wire_field or "")
        if found is None:
            self.error.setText(text)
            self.error.show()
            return
        widget, error, invalid = found
        error.setText(text)
        error.show()
        invalid(True)
        widget.setFocus()

    def _clear(self) -> None:
        self.error.hide()
        for _widget, error, invalid in self._fields.values():
            error.hide()
            invalid(False)


def mark(widget: QWidget) -> Invalid:
    """A field's marker through the stylesheet's `invalid` property."""
    return lambda invalid: set_invalid(widget, invalid)
