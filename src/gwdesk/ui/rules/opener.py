"""Opening the Keyword rules window for the session's profile (File ▸ Keyword rules…).

The window works on one profile's rules: its `RulesFlow` is made here from the
session's store (the rules are a team setting, the runs and forwards the store's) and
this machine's keyring (the forwards' signing secrets). When the profile changes the
window closes, so it never edits one profile's rules in another's name; while it is
open it follows the team's server (another desk changing the rules, a run or a forward
recorded by the receiver).
"""

from __future__ import annotations

from typing import Final

from PySide6.QtCore import QObject, Qt, SignalInstance
from PySide6.QtWidgets import QMainWindow

from gwdesk.app.rule_editing import RulesFlow, rule_secrets
from gwdesk.profiles import PasswordVault
from gwdesk.ui.rules.dialog import RulesDialog
from gwdesk.ui.session import Session
from gwdesk.ui.tasks import TaskRunner, alive
from gwdesk.ui.team_hub import TableWatch

NO_PROFILE: Final = "Choose a profile first: keyword rules belong to a profile."
RULES_TABLES: Final = frozenset({"settings"})
DONE_TABLES: Final = frozenset({"rule_runs", "rule_forwards"})


class RulesOpener(QObject):
    """Opens (or raises) the rules window when `opened_by` fires."""

    def __init__(
        self,
        window: QMainWindow,
        session: Session,
        tasks: TaskRunner,
        vault: PasswordVault,
        *,
        opened_by: SignalInstance | None = None,
    ) -> None:
        super().__init__(window)
        self.window = window
        self.session = session
        self.tasks = tasks
        self.vault = vault
        self.dialog: RulesDialog | None = None
        session.changed.connect(self._session_changed)
        if opened_by is not None:
            opened_by.connect(self.open_dialog)

    def flow(self) -> RulesFlow | None:
        """The session's profile's rules (None: no profile is open)."""
        store, profile = self.session.store, self.session.profile
        if store is None or profile is None:
            return None
        return RulesFlow(store.settings, rule_secrets(self.vault, profile), store.rule_runs)

    def open_dialog(self) -> None:
        dialog = self.dialog
        if dialog is not None and alive(dialog):
            dialog.show()
            dialog.raise_()
            dialog.activateWindow()
            return
        flow = self.flow()
        if flow is None:
            self.window.statusBar().showMessage(NO_PROFILE, 10000)
            return
        dialog = RulesDialog(flow, self.tasks, self.window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        TableWatch(self.session.team, RULES_TABLES, dialog.rules_changed, dialog)
        TableWatch(self.session.team, DONE_TABLES, dialog.done_changed, dialog)
        self.dialog = dialog
        dialog.show()
        dialog.reload()

    def _session_changed(self) -> None:
        """Another profile (or none): its rules are not the window's."""
        dialog, self.dialog = self.dialog, None
        if dialog is not None and alive(dialog):
            dialog.close()
