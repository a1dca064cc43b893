"""Contact groups as recipients of the Batch tab: chosen from a menu, their members read off the GUI thread.

The address book's groups (and their sizes) are offered in a menu; the members of
the chosen ones are read through the flow (a worker thread) and join the list,
each at its first number. Group names come from the address book: shown as plain
text.
"""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QMenu, QToolButton, QWidget

from gwdesk.app.list_send import Contact, ListSend, StoreError
from gwdesk.app.questions import plural
from gwdesk.ui.plain_text import PlainLabel, visible
from gwdesk.ui.tasks import TaskRunner, alive
from gwdesk.ui.theme import Theme

GROUPS_KEY: Final = "batch-groups"
MEMBERS_KEY: Final = "batch-members"
Members = dict[str, tuple[Contact, ...]]


class GroupPicker(QWidget):
    """The groups button, its menu, and the groups chosen."""

    changed = Signal()
    """The chosen groups' members changed (or are being read: `loading`)."""
    failed = Signal(str)

    def __init__(self, tasks: TaskRunner, theme: Theme, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tasks = tasks
        self.flow: ListSend | None = None
        self.groups: list[tuple[str, int]] = []
        """The address book's groups and their sizes."""
        self.members: Members = {}
        """The chosen groups' members, by group."""
        self.loading = False
        self.button = QToolButton()
        self.button.setText("Contact groups")
        self.button.setIcon(theme.icon("contacts"))
        self.button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.button.setAccessibleName("Contact groups")
        self.button.setToolTip(
            "Send to contact groups too (or only to them): each member at its first number; "
            "a template takes their contact fields"
        )
        self.menu = QMenu(self.button)
        self.button.setMenu(self.menu)
        self.label = PlainLabel("No group chosen.")
        self.label.setAccessibleName("Chosen groups")
        self.label.setProperty("role", "hint")
        self.label.setWordWrap(True)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.button)
        row.addWidget(self.label, 1)
        self._fill_menu()

    def set_flow(self, flow: ListSend | None) -> None:
        """The profile's flow (its address book's groups are offered); the choice is dropped."""
        self.flow = flow
        self.groups = []
        self.tasks.cancel(MEMBERS_KEY, owner=self)
        self.loading = False
        had = bool(self.members)
        self.members = {}
        self._fill_menu()
        self.button.setEnabled(flow is not None)
        self.reload()
        if had:
            self._show()
            self.changed.emit()

    def reload(self) -> None:
        """Read the groups again (the address book changed), and the chosen ones' members."""
        flow = self.flow
        if flow is None:
            return
        self.tasks.run(
            self._read_groups(flow), key=GROUPS_KEY, owner=self, context="reading groups"
        )
        if self.members:
            self.choose(list(self.members))

    async def _read_groups(self, flow: ListSend) -> None:
        try:
            groups = await flow.groups()
        except StoreError as exc:
            self.failed.emit(f"The contact groups could not be read: {exc}")
            return
        if alive(self) and flow is self.flow:
            self.groups = groups
            self._fill_menu()

    def _fill_menu(self) -> None:
        menu = self.menu
        menu.clear()
        if not self.groups:
            none = menu.addAction("No groups yet: add them in the Contacts tab")
            none.setEnabled(False)
        for name, count in self.groups:
            action = menu.addAction(f"{visible(name).replace('&', '&&')} ({count:,})")
            action.setCheckable(True)
            action.setChecked(name in self.members)
            action.toggled.connect(lambda on, n=name: self._toggled(n, on))

    def _toggled(self, name: str, on: bool) -> None:
        chosen = [g for g in self.members if g != name]
        if on:
            chosen.append(name)
        self.choose(chosen)

    def choose(self, names: list[str]) -> None:
        """Send to these groups too (their members are read off the GUI thread)."""
        flow = self.flow
        if flow is None:
            return
        if not names:
            self.tasks.cancel(MEMBERS_KEY, owner=self)
            self.loading = False
            self.members = {}
            self._show()
            self.changed.emit()
            return
        self.loading = True
        self.label.setText("Reading the groups' members…")
        self.changed.emit()
        self.tasks.run(
            self._read_members(flow, names), key=MEMBERS_KEY, owner=self, context="reading a group"
        )

    async def _read_members(self, flow: ListSend, names: list[str]) -> None:
        try:
            members: Members | None = await flow.members(names)
        except StoreError as exc:
            members = None
            self.failed.emit(f"The group could not be read: {exc}")
        finally:
            if alive(self):
                self.loading = False
        if not alive(self) or flow is not self.flow:
            return
        if members is not None:
            self.members = members
            self._fill_menu()
        self._show()
        self.changed.emit()

    def _show(self) -> None:
        if not self.members:
            self.label.setText("No group chosen.")
            return
        self.label.setText(
            "Also to "
            + ", ".join(f"{name} ({plural(len(m), 'contact')})" for name, m in self.members.items())
        )
