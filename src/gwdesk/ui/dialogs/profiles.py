"""The profiles dialog: choose, add, edit, duplicate and delete gateway profiles.

What the controller reads when the dialog finishes: `chosen` and `password` (the
profile to connect, with its password), `store_password` (its team server's, if
one is known), `kept_for_session` and `store_kept_for_session` (no keyring could
store them) and `use_sandbox` (the built-in sandbox was chosen).
Passwords go to the system keyring through `PasswordVault` only; where there is
none the dialog says so and keeps them in the `session_passwords` (and
`session_store_passwords`) it was given, which live in memory for this run of the
console.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from typing import Final

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDialog,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from gwdesk.app.connection_check import CheckResult, check_connection
from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.profiles import KeyringUnavailable, PasswordVault, ProfileStore, SettingsError
from gwdesk.ui.dialogs.profile_form import PASSWORD, ProfileForm
from gwdesk.ui.dialogs.unsaved import UnsavedChanges
from gwdesk.ui.errors import ErrorReporter
from gwdesk.ui.passwords import SessionPasswords
from gwdesk.ui.plain_text import PlainLabel, plain_box, tooltip
from gwdesk.ui.tasks import TaskRunner
from gwdesk.ui.widgets.fitting import fit_on_screen, scrolling
from gwdesk.ui.widgets.validity import set_role

NO_KEYRING_TEXT: Final = "No system keyring: the password is kept for this session only."
NO_KEYRING_STORE_TEXT: Final = (
    "No system keyring: the store password is kept for this session only."
)
SANDBOX_LABEL: Final = "Sandbox (local, built in)"
SANDBOX_TEXT: Final = (
    "The sandbox is a simulated gateway that runs on this computer. It has a demo "
    "account with pretend credit, answers two-way messages with simulated customers "
    "and marks messages delivered after a moment. Nothing reaches real phones.\n\n"
    "Choose Connect to use it, or add a profile for your real gateway."
)
KIND_ROLE: Final = Qt.ItemDataRole.UserRole + 1
NAME_ROLE: Final = Qt.ItemDataRole.UserRole + 2
SANDBOX, SAVED, NEW = "sandbox", "saved", "new"
TEST_KEY: Final = "profiles-test-connection"
#: A key no real profile uses, read once to learn whether a keyring works at all.
PROBE: Final = Profile(name="gwdesk keyring probe", rest_url="http://127.0.0.1", username="-")


class ProfilesDialog(QDialog):
    """Edit the saved profiles and pick the one (or the sandbox) to connect."""

    def __init__(
        self,
        store: ProfileStore,
        vault: PasswordVault,
        current: str | None,
        parent: QWidget | None = None,
        *,
        tasks: TaskRunner | None = None,
        session_passwords: MutableMapping[str, Secret] | None = None,
        session_store_passwords: MutableMapping[str, Secret] | None = None,
    ) -> None:
        super().__init__(parent)
        self.store = store
        self.vault = vault
        self.tasks = tasks or TaskRunner(ErrorReporter(), self)
        self.passwords = SessionPasswords(vault, session_passwords, session_store_passwords)
        self.session_passwords = self.passwords.gateway
        self.session_store_passwords = self.passwords.store
        self.chosen: Profile | None = None
        self.password: Secret | None = None
        self.store_password: Secret | None = None
        self.kept_for_session = False
        self.store_kept_for_session = False
        self.use_sandbox = False
        self._saved: dict[str, Profile] = {}
        self._default: str | None = None
        self._editing: Profile | None = None
        """The saved profile the form shows (None: a new one), to spot renames."""
        self._stored_password: Secret | None = None
        """The edited (or duplicated) profile's password from the keyring or this session."""
        self._stored_store_password: Secret | None = None
        """Likewise its team server's password."""
        self.confirmation: QMessageBox | None = None
        self.unsaved = UnsavedChanges(self, self.save)

        self.setWindowTitle("Gateway profiles")
        self.setModal(True)
        fit_on_screen(self, QSize(940, 760))
        self._build()
        self.keyring_warning.setVisible(not self._keyring_works())
        self.reload(select=current or self._default)
        self.finished.connect(lambda _code: self.tasks.cancel(TEST_KEY, owner=self))

    # ---- building --------------------------------------------------------------------------

    def _build(self) -> None:
        self.list = QListWidget()
        self.list.setAccessibleName("Profiles")
        self.list.setToolTip(
            "Saved gateway profiles; the one marked default opens at start. "
            "Double-click (or Enter) connects."
        )
        self.list.currentItemChanged.connect(self._selected)
        self.list.itemActivated.connect(lambda _item: self.connect_selected())
        self.add_button = QPushButton("&Add")
        self.add_button.setToolTip("Start a new profile (Ctrl+N)")
        self.add_button.clicked.connect(self.add_profile)
        QShortcut(QKeySequence.StandardKey.New, self, self.add_profile)
        self.duplicate_button = QPushButton("D&uplicate")
        self.duplicate_button.setToolTip("Copy the selected profile (and its password)")
        self.duplicate_button.clicked.connect(self.duplicate_profile)
        self.delete_button = QPushButton("&Delete")
        self.delete_button.setToolTip("Delete the selected profile and forget its password")
        self.delete_button.clicked.connect(self.delete_profile)
        self.default_button = QPushButton("Set as de&fault")
        self.default_button.setToolTip("Open this profile when the console starts")
        self.default_button.clicked.connect(self.set_default)

        left = QVBoxLayout()
        left.addWidget(self.list, 1)
        row = QHBoxLayout()
        for button in (self.add_button, self.duplicate_button, self.delete_button):
            row.addWidget(button)
        left.addLayout(row)
        left.addWidget(self.default_button)

        self.form = ProfileForm()
        self.form.edited.connect(self._form_edited)
        self.form_box = QGroupBox("Profile")
        QVBoxLayout(self.form_box).addWidget(scrolling(self.form))
        sandbox_page = QGroupBox(SANDBOX_LABEL)
        sandbox_text = QLabel(SANDBOX_TEXT)
        sandbox_text.setWordWrap(True)
        sandbox_text.setAlignment(Qt.AlignmentFlag.AlignTop)
        sandbox_layout = QVBoxLayout(sandbox_page)
        sandbox_layout.addWidget(sandbox_text)
        sandbox_layout.addStretch(1)
        self.pages = QStackedWidget()
        self.pages.addWidget(self.form_box)
        self.pages.addWidget(sandbox_page)

        self.keyring_warning = QLabel(NO_KEYRING_TEXT)
        self.keyring_warning.setProperty("role", "warning")
        self.keyring_warning.setWordWrap(True)
        self.keyring_warning.setAccessibleName("Keyring warning")
        self.message = PlainLabel()  # quotes the gateway's answer and the profile's values
        self.message.setWordWrap(True)
        self.message.setAccessibleName("Result")
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.hide()

        self.test_button = QPushButton("&Test connection")
        self.test_button.setToolTip("Sign in and read the balance with the values typed here")
        self.test_button.clicked.connect(self.test_connection)
        self.save_button = QPushButton("&Save")
        self.save_button.setToolTip("Save the profile (the password goes to the keyring)")
        self.save_button.clicked.connect(self.save)
        self.connect_button = QPushButton("&Connect")
        self.connect_button.setProperty("primary", True)
        self.connect_button.setDefault(True)
        self.connect_button.setToolTip("Save the profile and connect the console to it")
        self.connect_button.clicked.connect(self.connect_selected)
        self.close_button = QPushButton("Close")
        self.close_button.setToolTip("Close without connecting (Esc)")
        self.close_button.clicked.connect(self.reject)

        columns = QHBoxLayout()
        left_box = QWidget()
        left_box.setLayout(left)
        left_box.setFixedWidth(260)
        columns.addWidget(left_box)
        columns.addWidget(self.pages, 1)
        both = QWidget()  # scrolled sideways on a small screen; the buttons stay in view
        both.setLayout(columns)
        columns.setContentsMargins(0, 0, 0, 0)
        buttons = QHBoxLayout()
        buttons.addWidget(self.test_button)
        buttons.addStretch(1)
        for button in (self.save_button, self.connect_button, self.close_button):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addWidget(scrolling(both), 1)
        layout.addWidget(self.keyring_warning)
        layout.addWidget(self.message)
        layout.addLayout(buttons)
        for before, after in (
            (self.list, self.add_button),
            (self.add_button, self.duplicate_button),
            (self.duplicate_button, self.delete_button),
            (self.delete_button, self.default_button),
            (self.default_button, self.form.name_edit),
        ):
            QWidget.setTabOrder(before, after)
        QWidget.setTabOrder(self.form.ca_button, self.test_button)

    def _keyring_works(self) -> bool:
        try:
            self.vault.get(PROBE)
        except KeyringUnavailable:
            return False
        return True

    # ---- the list --------------------------------------------------------------------------

    def reload(self, select: str | None = None) -> None:
        """Read the profiles file again and select `select` (else the first saved profile)."""
        problem = None
        try:
            profiles = self.store.profiles()
            self._default = self.store.default_name
        except SettingsError as exc:
            profiles, self._default, problem = [], None, str(exc)
        self._saved = {p.name: p for p in profiles}
        self.list.blockSignals(True)
        self.list.clear()
        sandbox = QListWidgetItem(SANDBOX_LABEL)
        sandbox.setData(KIND_ROLE, SANDBOX)
        sandbox.setToolTip("The simulated gateway on this computer")
        self.list.addItem(sandbox)
        for profile in profiles:
            label = profile.name + ("  (default)" if profile.name == self._default else "")
            item = QListWidgetItem(label)
            item.setData(KIND_ROLE, SAVED)
            item.setData(NAME_ROLE, profile.name)
            item.setToolTip(tooltip(f"{profile.username} @ {profile.rest_url}"))
            self.list.addItem(item)
        row = 0
        if select in self._saved:
            row = list(self._saved).index(select) + 1
        elif profiles:
            row = 1
        self.list.setCurrentRow(row)
        self.list.blockSignals(False)
        self._selected(self.list.currentItem())
        if problem is not None:
            self.show_message(problem, ok=False)

    def _kind(self, item: QListWidgetItem | None = None) -> str:
        item = item or self.list.currentItem()
        return str(item.data(KIND_ROLE)) if item is not None else SANDBOX

    def _selected(
        self, item: QListWidgetItem | None, previous: QListWidgetItem | None = None
    ) -> None:
        if self.unsaved.edited and previous is not None and item is not previous:
            target = self._key(item)
            self._select_quietly(previous)  # stays shown until the changes are settled
            self.unsaved.before(self._what(), lambda: self._select_key(target))
            return
        kind = self._kind(item)
        self.tasks.cancel(TEST_KEY, owner=self)
        self.message.hide()
        self.pages.setCurrentIndex(1 if kind == SANDBOX else 0)
        if kind == SAVED and item is not None:
            profile = self._saved[str(item.data(NAME_ROLE))]
            self.form.load(profile)
            self._editing = profile
            self._stored_password = self._stored_for(profile, self.passwords.gateway_password)
            self._stored_store_password = self._stored_for(profile, self.passwords.store_password)
            self.form_box.setTitle(f"Profile {profile.name}")
        if kind == NEW:
            self.form_box.setTitle("New profile")
        self._update_password_hint()
        self._update_buttons()
        self.unsaved.filled()

    def _key(self, item: QListWidgetItem | None) -> tuple[str, object]:
        return (self._kind(item), item.data(NAME_ROLE) if item is not None else None)

    def _select_quietly(self, item: QListWidgetItem) -> None:
        self.list.blockSignals(True)
        self.list.setCurrentItem(item)
        self.list.blockSignals(False)

    def _select_key(self, key: tuple[str, object]) -> None:
        for row in range(self.list.count()):
            if self._key(self.list.item(row)) == key:
                self.list.setCurrentRow(row)
                return

    def _what(self) -> str:
        editing = self._editing
        return f"The profile {editing.name!r}" if editing is not None else "The new profile"

    def reject(self) -> None:
        """Close; typing not saved yet is asked about first."""
        self.unsaved.before(self._what(), super().reject)

    def _stored_for(
        self, profile: Profile, look_up: Callable[[Profile], Secret | None]
    ) -> Secret | None:
        """A password as kept (`look_up`), the keyring's absence said."""
        try:
            return look_up(profile)
        except KeyringUnavailable:
            self.keyring_warning.show()
            return None

    def _update_password_hint(self) -> None:
        if self._stored_password is not None and self.form.password_edit.text() == "":
            self.form.set_password_hint("A password is saved; type a new one to replace it.")
        elif self._editing is not None and self._kind() == SAVED:
            self.form.set_password_hint("No password is saved for this profile: type it.")
        else:
            self.form.set_password_hint("")
        editing = self._editing
        if self._stored_store_password is None or self.form.store_password_edit.text():
            self.form.set_store_hint("")
        elif editing is not None and editing.store_keyring_key in self.session_store_passwords:
            self.form.set_store_hint(NO_KEYRING_STORE_TEXT, "warning")
        else:
            self.form.set_store_hint("A store password is saved; type a new one to replace it.")

    def _update_buttons(self) -> None:
        kind = self._kind()
        saved = kind == SAVED
        self.duplicate_button.setEnabled(saved)
        self.delete_button.setEnabled(saved)
        current = self.list.currentItem()
        is_default = saved and current is not None and current.data(NAME_ROLE) == self._default
        self.default_button.setEnabled(saved and not is_default)
        self.test_button.setEnabled(
            kind != SANDBOX and not self.tasks.running(TEST_KEY, owner=self)
        )
        self.save_button.setEnabled(kind != SANDBOX)

    def _form_edited(self) -> None:
        self.unsaved.typed()
        self.message.hide()
        self._update_password_hint()

    def _start_new(self, title: str) -> None:
        """Add (or reuse) the one unsaved "new profile" entry and select it."""
        for row in range(self.list.count()):
            item = self.list.item(row)
            if self._kind(item) == NEW:
                self.list.takeItem(row)
                break
        item = QListWidgetItem(title)
        item.setData(KIND_ROLE, NEW)
        item.setToolTip("Not saved yet: Save or Connect saves it")
        self.list.blockSignals(True)
        self.list.addItem(item)
        self.list.setCurrentItem(item)
        self.list.blockSignals(False)
        self._selected(item)

    def add_profile(self) -> None:
        self.unsaved.before(self._what(), self._add_profile)

    def _add_profile(self) -> None:
        self._editing = None
        self._stored_password = None
        self._stored_store_password = None
        self.form.clear()
        self._start_new("New profile (unsaved)")
        self.form.name_edit.setFocus()

    def duplicate_profile(self) -> None:
        self.unsaved.before(self._what(), self._duplicate_profile)

    def _duplicate_profile(self) -> None:
        source = self._editing
        if source is None or self._kind() != SAVED:
            return
        stored, stored_store = self._stored_password, self._stored_store_password
        name = self._free_name(f"{source.name} (copy)")
        self.form.load(source)
        self.form.name_edit.setText(name)
        self._editing = None
        self._stored_password = stored
        self._stored_store_password = stored_store
        self._start_new(f"{name} (unsaved)")
        self.unsaved.typed()  # a copy exists only once it is saved
        self.form.name_edit.setFocus()
        self.form.name_edit.selectAll()

    def _free_name(self, wanted: str) -> str:
        name, number = wanted, 2
        while name in self._saved:
            name, number = f"{wanted} {number}", number + 1
        return name

    def delete_profile(self) -> None:
        profile = self._editing
        if profile is None or self._kind() != SAVED:
            return
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Delete profile",
            f"Delete the profile {profile.name!r} and forget its password?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.finished.connect(
            lambda code: (
                self._delete_confirmed(profile) if code == QMessageBox.StandardButton.Yes else None
            )
        )
        self.confirmation = box
        plain_box(box).open()

    def _delete_confirmed(self, profile: Profile) -> None:
        try:
            self.store.delete(profile.name)
        except SettingsError as exc:
            self.show_message(str(exc), ok=False)
            return
        self.session_passwords.pop(profile.keyring_key, None)
        self.session_store_passwords.pop(profile.store_keyring_key, None)
        try:
            self.vault.delete(profile)
            self._forget_store_password(profile)
        except KeyringUnavailable:
            self.keyring_warning.show()
        self.reload()
        self.show_message(f"Deleted the profile {profile.name!r}.", ok=True)

    def set_default(self) -> None:
        profile = self._editing
        if profile is None or self._kind() != SAVED:
            return
        try:
            self.store.set_default(profile.name)
        except SettingsError as exc:
            self.show_message(str(exc), ok=False)
            return
        self.reload(select=profile.name)
        self.show_message(f"{profile.name!r} now opens when the console starts.", ok=True)

    # ---- saving, testing, connecting ---------------------------------------------------------

    def _checked(self) -> tuple[Profile, Secret] | None:
        """The form's profile and password, or None after showing what is wrong where."""
        profile = self.form.profile()
        if profile is None:
            self.show_message("Correct the fields marked in red.", ok=False)
            return None
        renamed_from = self._editing.name if self._editing is not None else None
        if profile.name in self._saved and profile.name != renamed_from:
            self.form.show_error("name", f"A profile named {profile.name!r} exists already.")
            self.form.focus_first_error()
            self.show_message("Correct the fields marked in red.", ok=False)
            return None
        password = self.form.typed_password() or self._stored_password
        if password is None:
            self.form.show_error(PASSWORD, "Type the password of this account.")
            self.form.focus_first_error()
            self.show_message("Correct the fields marked in red.", ok=False)
            return None
        return profile, password

    def _store(self, profile: Profile, password: Secret) -> bool:
        """Write the profile and its password; False (with the reason shown) if the file failed."""
        old = self._editing
        try:
            self.store.save(profile)
            if old is not None and old.name != profile.name:
                was_default = self._default == old.name
                self.store.delete(old.name)
                if was_default:
                    self.store.set_default(profile.name)
        except SettingsError as exc:
            self.show_message(str(exc), ok=False)
            return False
        key_changed = old is None or old.keyring_key != profile.keyring_key
        self.kept_for_session = False
        if self.form.typed_password() is not None or key_changed:
            try:
                self.vault.set(profile, password)
                self.session_passwords.pop(profile.keyring_key, None)
            except KeyringUnavailable:
                self.kept_for_session = True
                self.session_passwords[profile.keyring_key] = password
                self.keyring_warning.show()
            if old is not None and key_changed:
                self.session_passwords.pop(old.keyring_key, None)
                try:
                    self.vault.delete(old)
                except KeyringUnavailable:
                    self.keyring_warning.show()
        elif profile.keyring_key in self.session_passwords:
            self.kept_for_session = True
        self._store_store_password(old, profile)
        return True

    def _store_store_password(self, old: Profile | None, profile: Profile) -> None:
        """The team server's password: typed (or moved with a renamed profile) to the
        keyring, else kept for this session; a profile without a server forgets it."""
        self.store_kept_for_session = False
        typed = self.form.typed_store_password()
        password = typed or self._stored_store_password
        key_changed = old is None or old.store_keyring_key != profile.store_keyring_key
        if profile.store_url is None:
            password = None
        elif password is not None and (typed is not None or key_changed):
            try:
                self.vault.set_store(profile, password)
                self.session_store_passwords.pop(profile.store_keyring_key, None)
            except KeyringUnavailable:
                self.store_kept_for_session = True
                self.session_store_passwords[profile.store_keyring_key] = password
                self.keyring_warning.show()
        elif profile.store_keyring_key in self.session_store_passwords:
            self.store_kept_for_session = True
        if (
            old is not None
            and old.store_url is not None
            and (key_changed or profile.store_url is None)
        ):
            self.session_store_passwords.pop(old.store_keyring_key, None)
            try:
                self._forget_store_password(old)
            except KeyringUnavailable:
                self.keyring_warning.show()
        self.store_password = password

    def _forget_store_password(self, profile: Profile) -> None:
        if profile.store_url is not None:
            self.vault.delete_store(profile)

    def save(self) -> bool:
        checked = self._checked()
        if checked is None:
            return False
        profile, password = checked
        if not self._store(profile, password):
            return False
        self.reload(select=profile.name)
        where = "for this session only" if self.kept_for_session else "in the system keyring"
        text = f"Saved {profile.name!r}; its password is kept {where}"
        if self.store_password is not None:
            store_where = (
                "for this session only" if self.store_kept_for_session else "in the keyring"
            )
            text += f", the store's {store_where}"
        self.show_message(f"{text}.", ok=True)
        return True

    def connect_selected(self) -> None:
        if self._kind() == SANDBOX:
            self.use_sandbox = True
            self.accept()
            return
        checked = self._checked()
        if checked is None:
            return
        profile, password = checked
        if not self._store(profile, password):
            return
        self.chosen, self.password = profile, password
        self.accept()

    def test_connection(self) -> None:
        if self._kind() == SANDBOX:
            return
        checked = self._checked()
        if checked is None:
            return
        profile, password = checked
        self.show_message(f"Testing the connection to {profile.rest_url}…", ok=None)
        self.test_button.setEnabled(False)
        self.tasks.run(
            self._run_check(profile, password), key=TEST_KEY, owner=self, context="testing"
        )

    async def _run_check(self, profile: Profile, password: Secret) -> None:
        try:
            result: CheckResult = await check_connection(profile, password)
        finally:
            self.test_button.setEnabled(self._kind() != SANDBOX)
        self.show_message(result.message, ok=result.ok)

    def show_message(self, text: str, *, ok: bool | None) -> None:
        """A plain line above the buttons: green for done, red for refused, grey for busy."""
        self.message.setText(text)
        set_role(self.message, "hint" if ok is None else ("ok" if ok else "error"))
        self.message.show()
