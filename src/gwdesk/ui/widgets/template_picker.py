"""The template picker: fill a message from a saved template, save the text as one, manage them.

One button ("Templates ▾") beside each message box that takes templates (the Send
tab, the Batch tab, a conversation's reply box). Its menu lists the profile's saved
templates (`gwdesk.app.template_editing`: a name each, the text in the tooltip);
choosing one fills the message (`chosen`). "Save the text as a template…" asks for
a name in the template editor (`template_editor.py`, and before replacing one), and
"Manage templates…" opens a list to use, edit (name and text) or delete them. Every read and write of the store runs off the GUI thread;
what happened is said through `said`, for the host's result line. Names and texts
are the operator's: shown as plain text everywhere.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Final

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.template_editing import (
    SavedTemplate,
    TemplateExists,
    TemplateNameError,
    TemplateStore,
    name_key,
    rename_template,
    save_edited,
)
from gwdesk.domain.errors import StoreError
from gwdesk.domain.templates import TemplateError
from gwdesk.ui.plain_text import PlainLabel, plain_box, tooltip, visible
from gwdesk.ui.tasks import TaskRunner, alive, off_thread
from gwdesk.ui.theme import Theme
from gwdesk.ui.widgets.fitting import fit_on_screen
from gwdesk.ui.widgets.message_editor import Ucs2Highlighter
from gwdesk.ui.widgets.template_editor import TemplateEditor
from gwdesk.ui.widgets.validity import set_role

#: Templates listed in the menu itself; Manage lists them all.
IN_MENU: Final = 30
LIST_KEY: Final = "templates-list"
CHANGE_KEY: Final = "templates-change"
TIP_CHARS: Final = 600


def menu_text(name: str) -> str:
    """A name as a menu item shows it: `&` is not a mnemonic, control codes are visible."""
    return visible(name).replace("&", "&&")


class TemplatePicker(QToolButton):
    """The button and its menu; `current_text()` is the message as typed now."""

    chosen = Signal(str)
    """A template's text, to put in the message."""
    said = Signal(str, str)
    """(what happened, role: ok, hint or error)."""
    listed = Signal()
    """The templates were read again (`templates`)."""

    def __init__(
        self,
        tasks: TaskRunner,
        theme: Theme,
        current_text: Callable[[], str],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.tasks = tasks
        self.theme = theme
        self.current_text = current_text
        self.store: TemplateStore | None = None
        self.templates: list[SavedTemplate] = []
        self.prompt: TemplateEditor | None = None
        """The name being asked for (open while the operator types it)."""
        self.question: QMessageBox | None = None
        self.dialog: TemplatesDialog | None = None
        self.setText("Templates")
        self.setIcon(theme.icon("template"))
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setAccessibleName("Templates")
        self.setToolTip(
            "Fill the message from a saved template, save this text as one, or manage them. "
            "A placeholder such as {first name} takes each recipient's own value."
        )
        self.menu_ = QMenu(self)
        self.menu_.setToolTipsVisible(True)
        self.menu_.aboutToShow.connect(self._menu_showing)
        self.setMenu(self.menu_)
        self._fill_menu()

    # ---- the listing -----------------------------------------------------------------------

    def set_store(self, store: TemplateStore | None) -> None:
        """The profile's templates (None: no profile yet)."""
        self.store = store
        self.templates = []
        self.setEnabled(store is not None)
        self._fill_menu()
        self.refresh()

    def refresh(self) -> asyncio.Task[None] | None:
        store = self.store
        if store is None:
            return None
        return self.tasks.run(
            self._read(store), key=LIST_KEY, owner=self, context="reading the templates"
        )

    async def _read(self, store: TemplateStore) -> None:
        try:
            found = await off_thread(store.listing)
        except StoreError as exc:
            self.said.emit(f"The templates could not be read: {exc}", "error")
            return
        if not alive(self) or store is not self.store:
            return
        self.templates = found
        self._fill_menu()
        self.listed.emit()

    def _menu_showing(self) -> None:
        self._fill_menu()
        self.refresh()  # another box may have changed them: the menu follows when read

    def _fill_menu(self) -> None:
        menu = self.menu_
        menu.clear()
        if not self.templates:
            empty = menu.addAction("No saved templates yet")
            empty.setEnabled(False)
        for saved in self.templates[:IN_MENU]:
            action = menu.addAction(menu_text(saved.name))
            action.setToolTip(tooltip(saved.text[:TIP_CHARS]))
            action.triggered.connect(lambda _on=False, name=saved.name: self.choose(name))
        if len(self.templates) > IN_MENU:
            more = menu.addAction(f"{len(self.templates) - IN_MENU} more under Manage templates…")
            more.setEnabled(False)
        menu.addSeparator()
        save = menu.addAction("Save the text as a template…")
        save.triggered.connect(self.ask_name)
        manage = menu.addAction("Manage templates…")
        manage.triggered.connect(self.manage)

    def saved(self, name: str) -> SavedTemplate | None:
        return next((t for t in self.templates if name_key(t.name) == name_key(name)), None)

    def choose(self, name: str) -> None:
        """Put the template's text in the message."""
        saved = self.saved(name)
        if saved is None:
            self.said.emit(f"There is no template called {name!r} any more.", "error")
            return
        self.chosen.emit(saved.text)
        self.said.emit(f"Filled in from the template {saved.name!r}.", "hint")

    # ---- saving ----------------------------------------------------------------------------

    def ask_name(self) -> None:
        """Open the editor on the message's text: a name, then save it under it."""
        if not self.current_text().strip():
            self.said.emit("Type the message first: an empty template is not kept.", "error")
            return
        self.edit_in_dialog(None, "", self.current_text())

    def edit_in_dialog(self, old: str | None, name: str, text: str) -> TemplateEditor:
        """The editor for a new template (`old` None) or the saved `old`."""
        editor = TemplateEditor(self.window(), old=old, name=name, text=text)
        editor.submitted.connect(
            lambda was, new, body: self.save_edit(editor, was or None, new, body)
        )
        editor.finished.connect(lambda _result: self._editor_closed(editor))
        self.prompt = editor
        editor.open()
        return editor

    def _editor_closed(self, editor: TemplateEditor) -> None:
        if self.prompt is editor:
            self.prompt = None
        editor.deleteLater()

    def save_edit(
        self, editor: TemplateEditor, old: str | None, name: str, text: str, replace: bool = False
    ) -> asyncio.Task[None] | None:
        """Keep what the editor holds; it closes once kept, or says why not at the field."""
        store = self.store
        if store is None:
            return None
        return self.tasks.run(
            self._save_edit(store, editor, old, name, text, replace),
            key=CHANGE_KEY,
            owner=self,
            context="saving a template",
        )

    async def _save_edit(
        self,
        store: TemplateStore,
        editor: TemplateEditor,
        old: str | None,
        name: str,
        text: str,
        replace: bool,
    ) -> None:
        try:
            saved = await off_thread(lambda: save_edited(store, old, name, text, replace=replace))
        except TemplateExists:
            if alive(editor):
                self.ask(
                    f"A template called {name.strip()!r} is kept already. Replace its text "
                    "with this one?",
                    "Replace",
                    lambda: self.save_edit(editor, old, name, text, replace=True),
                )
            return
        except TemplateError as exc:
            if alive(editor):
                editor.refused("text", f"Not a usable template: {exc}")
            return
        except TemplateNameError as exc:
            if alive(editor):
                editor.refused("name", str(exc))
            return
        except StoreError as exc:
            self.said.emit(f"Not saved: {exc}", "error")
            return
        if alive(editor):
            editor.accept()
        self.said.emit(f"Saved as the template {saved.name!r}.", "ok")
        await self._read(store)

    def save(self, name: str, *, replace: bool = False) -> asyncio.Task[None] | None:
        """Keep the message's text as the template `name` (asks before replacing one)."""
        store, text = self.store, self.current_text()
        if store is None:
            return None
        return self.tasks.run(
            self._save(store, name, text, replace),
            key=CHANGE_KEY,
            owner=self,
            context="saving a template",
        )

    async def _save(self, store: TemplateStore, name: str, text: str, replace: bool) -> None:
        try:
            saved = await off_thread(lambda: store.add(name, text, replace=replace))
        except TemplateExists:
            if alive(self):
                self.ask(
                    f"A template called {name.strip()!r} is kept already. Replace its text "
                    "with this message?",
                    "Replace",
                    lambda: self.save(name, replace=True),
                )
            return
        except TemplateError as exc:
            self.said.emit(f"Not saved: the text is not a usable template: {exc}", "error")
            return
        except (TemplateNameError, StoreError) as exc:
            self.said.emit(f"Not saved: {exc}", "error")
            return
        self.said.emit(f"Saved as the template {saved.name!r}.", "ok")
        await self._read(store)

    # ---- renaming and deleting -------------------------------------------------------------

    def rename(self, old: str, new: str) -> asyncio.Task[None] | None:
        store = self.store
        if store is None:
            return None
        return self.tasks.run(
            self._change(store, lambda: rename_template(store, old, new), f"Renamed to {new!r}."),
            key=CHANGE_KEY,
            owner=self,
            context="renaming a template",
        )

    def delete(self, name: str) -> asyncio.Task[None] | None:
        store = self.store
        if store is None:
            return None
        return self.tasks.run(
            self._change(store, lambda: store.remove(name), f"The template {name!r} is deleted."),
            key=CHANGE_KEY,
            owner=self,
            context="deleting a template",
        )

    async def _change(self, store: TemplateStore, work: Callable[[], object], done: str) -> None:
        try:
            await off_thread(work)
        except (TemplateNameError, StoreError) as exc:
            self.said.emit(f"Not changed: {exc}", "error")
            return
        self.said.emit(done, "ok")
        await self._read(store)

    def ask(self, text: str, yes: str, then: Callable[[], object]) -> None:
        """A plain-text question; `then` runs when the operator answers `yes`."""
        box = QMessageBox(QMessageBox.Icon.Question, "Templates", text, parent=self.window())
        accept = box.addButton(yes, QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)

        def finished(_result: int) -> None:
            self.question = None
            if box.clickedButton() is accept:
                then()
            box.deleteLater()

        box.finished.connect(finished)
        self.question = box
        plain_box(box).open()

    def manage(self) -> None:
        if self.dialog is None:
            self.dialog = TemplatesDialog(self, self.theme)
        self.dialog.show_list()
        self.dialog.show()
        self.dialog.raise_()
        self.refresh()


class TemplatesDialog(QDialog):
    """Every saved template: use one, rename it, delete it."""

    def __init__(self, picker: TemplatePicker, theme: Theme) -> None:
        super().__init__(picker.window())
        self.picker = picker
        self.setWindowTitle("Templates")
        fit_on_screen(self, QSize(720, 420))
        self.names = QListWidget()
        self.names.setAccessibleName("Saved templates")
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setAccessibleName("Template text")
        highlighter = Ucs2Highlighter(self.text.document())
        highlighter.templates = True
        self.empty = PlainLabel("No saved templates yet: type a message and save it.")
        self.empty.setProperty("role", "hint")
        self.use_button = QPushButton(theme.icon("send"), "Use")
        self.use_button.setToolTip("Fill the message with this template")
        self.rename_button = QPushButton("&Edit…")
        self.rename_button.setToolTip("Change the template's name or text")
        self.delete_button = QPushButton("Delete…")
        self.note = PlainLabel("")
        self.note.setWordWrap(True)
        self.note.setAccessibleName("Templates result")
        buttons = QVBoxLayout()
        for button in (self.use_button, self.rename_button, self.delete_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        body = QHBoxLayout()
        body.addWidget(self.names, 2)
        body.addWidget(self.text, 3)
        body.addLayout(buttons)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.empty)
        layout.addLayout(body, 1)
        layout.addWidget(self.note)
        layout.addWidget(close)
        self.names.currentRowChanged.connect(lambda _row: self._selected())
        self.use_button.clicked.connect(self.use)
        self.rename_button.clicked.connect(self.ask_rename)
        self.delete_button.clicked.connect(self.ask_delete)
        picker.listed.connect(self.show_list)
        picker.said.connect(self._said)
        self.show_list()

    def show_list(self) -> None:
        chosen = self.chosen()
        self.names.clear()
        for saved in self.picker.templates:
            item = QListWidgetItem(visible(saved.name))
            item.setData(Qt.ItemDataRole.UserRole, saved.name)
            item.setToolTip(tooltip(saved.text[:TIP_CHARS]))
            self.names.addItem(item)
        self.empty.setVisible(not self.picker.templates)
        names = [t.name for t in self.picker.templates]
        self.select(chosen if chosen in names else (names[0] if names else None))
        self._selected()

    def select(self, name: str | None) -> None:
        for row in range(self.names.count()):
            if self.names.item(row).data(Qt.ItemDataRole.UserRole) == name:
                self.names.setCurrentRow(row)
                return

    def chosen(self) -> str | None:
        item = self.names.currentItem()
        value = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        return value if isinstance(value, str) else None

    def _selected(self) -> None:
        name = self.chosen()
        saved = self.picker.saved(name) if name else None
        self.text.setPlainText(saved.text if saved else "")
        for button in (self.use_button, self.rename_button, self.delete_button):
            button.setEnabled(saved is not None)

    def use(self) -> None:
        name = self.chosen()
        if name:
            self.picker.choose(name)
            self.accept()

    def ask_rename(self) -> None:
        """Edit the chosen template's name and text in the editor."""
        name = self.chosen()
        saved = self.picker.saved(name) if name else None
        if saved is not None:
            self.picker.edit_in_dialog(saved.name, saved.name, saved.text)

    def ask_delete(self) -> None:
        name = self.chosen()
        if name is not None:
            self.picker.ask(
                f"Delete the template {name!r}? Messages already sent are not affected.",
                "Delete",
                lambda: self.picker.delete(name),
            )

    def _said(self, text: str, role: str) -> None:
        self.note.setText(text)
        set_role(self.note, role)
