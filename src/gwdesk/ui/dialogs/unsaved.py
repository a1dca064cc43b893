"""Changes typed into a form and not saved yet: asked about before they would be lost.

The profiles dialog keeps one profile's form; switching to another profile, starting a
new one or closing the dialog would drop what was typed. `UnsavedChanges` remembers
whether the form was edited since it was filled, and before such a step asks: Save
(the step goes on once the save worked), Discard (it goes on), or Cancel (nothing
happens, the typing stays). The question is non-modal to the event loop (`open`, never
`exec`), its words plain text.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QMessageBox, QWidget

from gwdesk.ui.plain_text import plain_box


class UnsavedChanges:
    """Whether a form holds unsaved typing, and the question before it is dropped."""

    def __init__(self, parent: QWidget, save: Callable[[], bool]) -> None:
        self._parent = parent
        self._save = save
        self.edited = False
        self.question: QMessageBox | None = None

    def filled(self) -> None:
        """The form was filled from what is kept: nothing to lose."""
        self.edited = False

    def typed(self) -> None:
        self.edited = True

    def before(self, what: str, then: Callable[[], None]) -> None:
        """Run `then` now if nothing would be lost, else once the operator said so."""
        if not self.edited:
            then()
            return
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Unsaved changes",
            f"{what} has changes that are not saved. Save them first?",
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
            self._parent,
        )
        box.setDefaultButton(QMessageBox.StandardButton.Save)
        box.setEscapeButton(QMessageBox.StandardButton.Cancel)

        def answered(_code: int) -> None:
            self.question = None
            clicked = box.standardButton(box.clickedButton())
            box.deleteLater()
            if clicked == QMessageBox.StandardButton.Discard or (
                clicked == QMessageBox.StandardButton.Save and self._save()
            ):
                self.edited = False
                then()

        box.finished.connect(answered)
        self.question = box
        plain_box(box).open()
