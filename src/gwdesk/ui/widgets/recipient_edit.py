"""A phone number field that says, while it is typed, what the gateway will receive.

Operators type national numbers, international ones with `+` and spaces, or digits
pasted from elsewhere; the field shows the normalised international form (read in
the profile's region) or the reason the number cannot be used, so a typo is seen
before Send rather than after. A second line (`set_notice`) tells what the form
learnt about the number elsewhere (that it opted out, say); it goes as soon as the
number is edited. A number that belongs to a contact shows the contact's name beside
it (`set_contact_name`, once the tab has looked it up).
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLineEdit, QVBoxLayout, QWidget

from gwdesk.domain.numbers import DEFAULT_REGION, NumberError, display, normalise
from gwdesk.ui.plain_text import PlainLabel
from gwdesk.ui.widgets.validity import set_invalid, set_role

#: Reasons that only mean "not finished yet" while the field still has focus.
_UNFINISHED = ("too short", "it has no digits")


class RecipientEdit(QWidget):
    """Line edit + feedback line; `number()` is the normalised digits or None."""

    changed = Signal()

    def __init__(
        self,
        region: str = DEFAULT_REGION,
        parent: QWidget | None = None,
        *,
        accessible_name: str = "Recipient number",
    ) -> None:
        super().__init__(parent)
        self.region = region
        self.edit = QLineEdit()
        self.edit.setAccessibleName(accessible_name)
        self.edit.setClearButtonEnabled(True)
        self.edit.setMaxLength(200)
        self.feedback = PlainLabel()
        self.feedback.setAccessibleName(f"{accessible_name} check")
        self.feedback.setWordWrap(True)
        self.notice = PlainLabel()
        self.notice.setAccessibleName(f"{accessible_name} notice")
        self.notice.setWordWrap(True)
        self.notice.hide()
        self.setFocusProxy(self.edit)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.edit)
        layout.addWidget(self.feedback)
        layout.addWidget(self.notice)
        self.edit.textChanged.connect(self._typed)
        self.edit.editingFinished.connect(self.update_feedback)
        self._number: str | None = None
        self._reason = ""
        self._contact: tuple[str, str] | None = None
        """(number, the name of the contact holding it)."""
        self.set_region(region)

    def set_region(self, region: str) -> None:
        self.region = region
        self.edit.setPlaceholderText(
            f"e.g. 0412 345 678 (read in region {region}) or +61 412 345 678"
        )
        self.edit.setToolTip(
            f"A national number is read as a number of region {region} (the profile's "
            "region); an international one starts with + or its country code."
        )
        self.update_feedback()

    def text(self) -> str:
        return self.edit.text()

    def set_text(self, text: str) -> None:
        self.edit.setText(text)
        self.update_feedback()

    def number(self) -> str | None:
        """International digits without `+`, or None when empty or unusable."""
        return self._number

    def reason(self) -> str:
        """Why the number cannot be used ("" when it can, or when empty)."""
        return self._reason

    def check(self) -> str:
        """The normalised number; raises `NumberError` with the reason."""
        return normalise(self.edit.text(), self.region)

    def set_invalid(self, invalid: bool) -> None:
        set_invalid(self.edit, invalid)

    def set_notice(self, text: str, role: str = "warning") -> None:
        """A line under the check about the number as typed now ("" hides it)."""
        self.notice.setText(text)
        set_role(self.notice, role)
        self.notice.setVisible(bool(text))

    def set_contact_name(self, number: str, name: str) -> None:
        """The contact holding `number` is `name` ("" for none): shown while it is typed."""
        self._contact = (number, name) if name else None
        self.update_feedback()

    def contact_name(self) -> str:
        """The name of the contact holding the number typed ("" when none is known)."""
        contact = self._contact
        return contact[1] if contact is not None and contact[0] == self._number else ""

    def _typed(self) -> None:
        self.set_notice("")  # it was about the number as it was
        self.update_feedback()
        self.changed.emit()

    def update_feedback(self) -> None:
        text = self.edit.text()
        if not text.strip():
            self._number, self._reason = None, ""
            self.feedback.setText(
                f"National numbers are read in region {self.region}; "
                "the gateway gets international digits."
            )
            set_role(self.feedback, "hint")
            self.set_invalid(False)
            return
        try:
            self._number = normalise(text, self.region)
        except NumberError as exc:
            self._number, self._reason = None, exc.reason
            typing = self.edit.hasFocus() and exc.reason in _UNFINISHED
            self.feedback.setText(f"Not usable yet: {exc.reason}." if typing else exc.args[0])
            set_role(self.feedback, "hint" if typing else "error")
            self.set_invalid(not typing)
            return
        self._reason = ""
        name = self.contact_name()
        beside = f" · {name}" if name else ""
        self.feedback.setText(f"✓ {display(self._number)}{beside}  (sent as {self._number})")
        set_role(self.feedback, "ok")
        self.set_invalid(False)
