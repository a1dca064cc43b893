"""Profiles dialog: saving, the keyring (and its absence), field errors, testing, choosing."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import keyring
import pytest
from keyring.backends import fail
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QLineEdit, QMessageBox

from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.profiles import KEYRING_SERVICE, PasswordVault, ProfileStore
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.dialogs.profiles import NO_KEYRING_TEXT, ProfilesDialog
from tests.conftest import SandboxFactory
from tests.keyrings import MemoryKeyring
from tests.ui.conftest import UiBundle, wait_until

PASSWORD = "Sw0rdfish-only-in-the-keyring"


def open_dialog(qtbot, current: str | None = None) -> ProfilesDialog:
    dialog = ProfilesDialog(ProfileStore(), PasswordVault(), current)
    qtbot.addWidget(dialog)
    return dialog


def fill(dialog: ProfilesDialog, sandbox: SandboxThread | None = None, **values: str) -> None:
    """Type into the form the way an operator does (clearing each field first)."""
    form = dialog.form
    typed = {
        "name": "Production",
        "rest_url": sandbox.rest_url if sandbox else "https://gateway.example.com/api",
        "username": "demo",
        "password": PASSWORD,
        **values,
    }
    edits: dict[str, QLineEdit] = {
        "name": form.name_edit,
        "rest_url": form.rest_edit,
        "lodge_url": form.lodge_edit,
        "username": form.username_edit,
        "password": form.password_edit,
        "ca_bundle": form.ca_edit,
    }
    for key, text in typed.items():
        edits[key].clear()
        edits[key].insert(text)


def save_profile(store: ProfileStore, vault: PasswordVault, name: str, url: str) -> Profile:
    profile = Profile(name=name, rest_url=url, username="demo", region="NZ")
    store.save(profile)
    vault.set(profile, Secret("demo"))
    return profile


def is_file(path: Path) -> bool:
    return path.is_file()


def files_holding(text: str, *roots: Path) -> list[Path]:
    needle = text.encode("utf-8")
    found = []
    for root in roots:
        for path in root.rglob("*") if root.is_dir() else [root]:
            if path.is_file() and needle in path.read_bytes():
                found.append(path)
    return found


async def test_adding_a_profile_keeps_the_password_in_the_keyring_and_nowhere_on_disk(
    ui: UiBundle,
    sandbox_factory: SandboxFactory,
    hermetic_settings: MemoryKeyring,
    caplog: pytest.LogCaptureFixture,
    qtbot,
) -> None:
    from gwdesk.ui.controller import AppController
    from gwdesk.ui.main_window import MainWindow

    caplog.set_level(logging.DEBUG)
    sandbox = sandbox_factory(password=PASSWORD)
    window = MainWindow.build(ui.session, ui.tasks, ui.theme, ui.settings, [])
    qtbot.addWidget(window)
    controller = AppController(
        window, ui.session, ui.tasks, ProfileStore(), PasswordVault(), ui.paths, ui.reporter
    )
    controller.open_profiles()
    dialog = window.findChild(ProfilesDialog)
    assert isinstance(dialog, ProfilesDialog)
    qtbot.mouseClick(dialog.add_button, Qt.MouseButton.LeftButton)
    fill(dialog, sandbox, lodge_url=sandbox.lodge_url)
    qtbot.mouseClick(dialog.connect_button, Qt.MouseButton.LeftButton)
    await wait_until(lambda: ui.session.profile is not None)

    saved = ProfileStore().get("Production")
    assert saved.rest_url == sandbox.rest_url
    assert hermetic_settings.items[(KEYRING_SERVICE, "Production:demo")] == PASSWORD
    assert not dialog.kept_for_session
    assert ui.session.profile == saved
    assert not ui.session.is_sandbox
    await wait_until(lambda: "Credits" in window.status.balance_label.text())  # signed in
    window.close()  # writes the window state to QSettings
    settings_file = Path(ui.settings.fileName())
    assert is_file(settings_file)
    roots = [Path(os.environ["GWDESK_CONFIG_DIR"]), Path(os.environ["GWDESK_DATA_DIR"])]
    assert files_holding(PASSWORD, *roots, settings_file) == []
    assert files_holding("Production", roots[0]) == [roots[0] / "profiles.json"]
    assert PASSWORD not in caplog.text


async def test_a_plain_http_address_is_refused_at_the_url_field(ui: UiBundle, qtbot) -> None:
    dialog = open_dialog(qtbot)
    dialog.add_profile()
    fill(dialog, rest_url="http://gateway.example.com/api")
    dialog.save()
    assert "must use https" in dialog.form.error_text("rest_url")
    assert dialog.form.rest_edit.property("invalid") is True
    assert dialog.form.error_text("name") == ""
    assert ProfileStore().profiles() == []


async def test_an_empty_name_and_user_are_asked_for_at_their_fields(ui: UiBundle, qtbot) -> None:
    dialog = open_dialog(qtbot)
    dialog.add_profile()
    fill(dialog, name="", username="   ")
    dialog.connect_selected()
    assert dialog.form.error_text("name") == "This is required."
    assert dialog.form.error_text("username") == "This is required."
    assert dialog.result() != QDialog.DialogCode.Accepted
    assert dialog.form.name_edit.hasFocus() or not dialog.isVisible()


async def test_an_unknown_time_zone_is_refused_at_its_field(ui: UiBundle, qtbot) -> None:
    dialog = open_dialog(qtbot)
    dialog.add_profile()
    fill(dialog)
    dialog.form.zone_combo.setCurrentText("Mars/Olympus_Mons")
    dialog.save()
    assert "unknown time zone" in dialog.form.error_text("timezone").lower()
    assert ProfileStore().profiles() == []


async def test_a_missing_ca_bundle_file_is_refused_at_its_field(
    ui: UiBundle, tmp_path: Path, qtbot
) -> None:
    dialog = open_dialog(qtbot)
    dialog.add_profile()
    fill(dialog, ca_bundle=str(tmp_path / "nowhere.pem"))
    dialog.save()
    assert dialog.form.error_text("ca_bundle") == "There is no such file."


async def test_editing_a_field_clears_its_error(ui: UiBundle, qtbot) -> None:
    dialog = open_dialog(qtbot)
    dialog.add_profile()
    fill(dialog, rest_url="ftp://gateway")
    dialog.save()
    assert dialog.form.error_text("rest_url")
    qtbot.keyClicks(dialog.form.rest_edit, "x")
    assert dialog.form.error_text("rest_url") == ""
    assert dialog.form.rest_edit.property("invalid") is False


async def test_a_new_profile_needs_a_password(ui: UiBundle, qtbot) -> None:
    dialog = open_dialog(qtbot)
    dialog.add_profile()
    fill(dialog, password="")
    dialog.save()
    assert dialog.form.error_text("password") == "Type the password of this account."
    assert ProfileStore().profiles() == []


async def test_a_second_profile_of_the_same_name_is_refused(ui: UiBundle, qtbot) -> None:
    save_profile(ProfileStore(), PasswordVault(), "Production", "https://a.example.com")
    dialog = open_dialog(qtbot)
    dialog.add_profile()
    fill(dialog)
    dialog.save()
    assert "exists already" in dialog.form.error_text("name")
    assert ProfileStore().get("Production").rest_url == "https://a.example.com"


async def test_without_a_keyring_the_dialog_warns_and_keeps_the_password_for_the_session(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    keyring.set_keyring(fail.Keyring())  # the autouse fixture puts the test keyring back
    kept: dict[str, Secret] = {}
    dialog = ProfilesDialog(ProfileStore(), PasswordVault(), None, session_passwords=kept)
    qtbot.addWidget(dialog)
    assert not dialog.keyring_warning.isHidden()
    assert dialog.keyring_warning.text() == NO_KEYRING_TEXT
    dialog.add_profile()
    fill(dialog, sandbox)
    dialog.connect_selected()
    assert dialog.result() == QDialog.DialogCode.Accepted
    assert dialog.kept_for_session
    assert dialog.chosen is not None
    assert dialog.chosen.name == "Production"
    assert dialog.password is not None
    assert dialog.password.reveal() == PASSWORD
    assert kept["Production:demo"] == dialog.password
    assert ProfileStore().get("Production").rest_url == sandbox.rest_url
    assert files_holding(PASSWORD, Path(os.environ["GWDESK_CONFIG_DIR"])) == []


async def test_test_connection_against_the_sandbox_succeeds(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    dialog = open_dialog(qtbot)
    dialog.add_profile()
    fill(dialog, sandbox, password="demo", lodge_url=sandbox.lodge_url)
    qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
    await wait_until(lambda: dialog.message.property("role") != "hint")
    assert dialog.message.property("role") == "ok"
    assert dialog.message.text().startswith("Connected: the gateway accepted 'demo'")
    assert "Credits 10,000 (Account/Info, prepaid)" in dialog.message.text()
    assert "Lodge service answered" in dialog.message.text()
    assert dialog.test_button.isEnabled()
    assert ProfileStore().profiles() == []  # testing saves nothing


async def test_test_connection_with_a_wrong_password_fails_plainly(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    dialog = open_dialog(qtbot)
    dialog.add_profile()
    fill(dialog, sandbox, password="not-the-password")
    dialog.test_connection()
    await wait_until(lambda: dialog.message.property("role") != "hint")
    assert dialog.message.property("role") == "error"
    assert dialog.message.text() == (
        "Connection failed: The gateway refused the user name or password."
    )
    assert "not-the-password" not in dialog.message.text()


async def test_test_connection_with_basic_auth_and_a_wrong_password_fails_plainly(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    dialog = open_dialog(qtbot)
    dialog.add_profile()
    fill(dialog, sandbox, password="nope")
    dialog.form.auth_combo.setCurrentIndex(dialog.form.auth_combo.findData("basic"))
    dialog.test_connection()
    await wait_until(lambda: dialog.message.property("role") != "hint")
    assert dialog.message.property("role") == "error"
    assert dialog.message.text().startswith("Connection failed: The gateway did not accept")


async def test_test_connection_to_a_closed_port_says_it_failed(ui: UiBundle, qtbot) -> None:
    dialog = open_dialog(qtbot)
    dialog.add_profile()
    fill(dialog, rest_url="http://127.0.0.1:9")
    dialog.test_connection()
    await wait_until(lambda: dialog.message.property("role") != "hint")
    assert dialog.message.property("role") == "error"
    assert dialog.message.text().startswith("Connection failed: ")


async def test_choosing_the_sandbox_entry_sets_use_sandbox(ui: UiBundle, qtbot) -> None:
    save_profile(ProfileStore(), PasswordVault(), "Production", "https://a.example.com")
    dialog = open_dialog(qtbot, current="Production")
    assert dialog.list.currentItem().text() == "Production"
    dialog.list.setCurrentRow(0)
    assert dialog.pages.currentIndex() == 1
    assert not dialog.save_button.isEnabled()
    qtbot.mouseClick(dialog.connect_button, Qt.MouseButton.LeftButton)
    assert dialog.use_sandbox
    assert dialog.chosen is None
    assert dialog.result() == QDialog.DialogCode.Accepted


async def test_connecting_a_saved_profile_uses_its_keyring_password(
    ui: UiBundle, sandbox: SandboxThread, qtbot
) -> None:
    save_profile(ProfileStore(), PasswordVault(), "Office", sandbox.rest_url)
    dialog = open_dialog(qtbot, current="Office")
    assert dialog.form.name_edit.text() == "Office"
    assert dialog.form.region_combo.currentData() == "NZ"
    assert dialog.form.password_edit.text() == ""
    assert "password is saved" in dialog.form.password_hint.text()
    dialog.connect_selected()
    assert dialog.chosen is not None
    assert dialog.chosen.name == "Office"
    assert dialog.password is not None
    assert dialog.password.reveal() == "demo"
    assert not dialog.kept_for_session


async def test_renaming_a_profile_moves_its_password_and_default(
    ui: UiBundle, hermetic_settings: MemoryKeyring, qtbot
) -> None:
    store = ProfileStore()
    save_profile(store, PasswordVault(), "Office", "https://a.example.com")
    store.set_default("Office")
    dialog = open_dialog(qtbot)
    fill(dialog, name="Head office", rest_url="https://a.example.com", password="")
    assert dialog.save()
    assert [p.name for p in store.profiles()] == ["Head office"]
    assert store.default_name == "Head office"
    assert hermetic_settings.items == {(KEYRING_SERVICE, "Head office:demo"): "demo"}
    assert dialog.list.currentItem().text() == "Head office  (default)"


async def test_deleting_a_profile_forgets_it_and_its_password(
    ui: UiBundle, hermetic_settings: MemoryKeyring, qtbot
) -> None:
    save_profile(ProfileStore(), PasswordVault(), "Office", "https://a.example.com")
    dialog = open_dialog(qtbot, current="Office")
    qtbot.mouseClick(dialog.delete_button, Qt.MouseButton.LeftButton)
    box = dialog.confirmation
    assert isinstance(box, QMessageBox)
    box.button(QMessageBox.StandardButton.Yes).click()
    assert ProfileStore().profiles() == []
    assert hermetic_settings.items == {}
    assert dialog.list.count() == 1  # the sandbox entry only


async def test_cancelling_the_delete_keeps_the_profile(ui: UiBundle, qtbot) -> None:
    save_profile(ProfileStore(), PasswordVault(), "Office", "https://a.example.com")
    dialog = open_dialog(qtbot, current="Office")
    dialog.delete_profile()
    assert dialog.confirmation is not None
    dialog.confirmation.button(QMessageBox.StandardButton.Cancel).click()
    assert [p.name for p in ProfileStore().profiles()] == ["Office"]


async def test_set_as_default_marks_the_profile_that_opens_at_start(ui: UiBundle, qtbot) -> None:
    store = ProfileStore()
    save_profile(store, PasswordVault(), "Office", "https://a.example.com")
    save_profile(store, PasswordVault(), "Home", "https://b.example.com")
    dialog = open_dialog(qtbot, current="Home")
    assert dialog.default_button.isEnabled()
    dialog.set_default()
    assert store.default_name == "Home"
    assert dialog.list.currentItem().text() == "Home  (default)"
    assert not dialog.default_button.isEnabled()


async def test_duplicating_copies_the_fields_and_the_password(
    ui: UiBundle, hermetic_settings: MemoryKeyring, qtbot
) -> None:
    save_profile(ProfileStore(), PasswordVault(), "Office", "https://a.example.com")
    dialog = open_dialog(qtbot, current="Office")
    dialog.duplicate_profile()
    assert dialog.form.name_edit.text() == "Office (copy)"
    assert dialog.save()
    copy = ProfileStore().get("Office (copy)")
    assert copy.rest_url == "https://a.example.com"
    assert copy.region == "NZ"
    assert hermetic_settings.items[(KEYRING_SERVICE, "Office (copy):demo")] == "demo"


async def test_an_unreadable_profiles_file_is_reported_not_fatal(ui: UiBundle, qtbot) -> None:
    store = ProfileStore()
    store.directory.mkdir(parents=True, exist_ok=True)
    store.path.write_text("{ not json", encoding="utf-8")
    dialog = open_dialog(qtbot)
    assert not dialog.message.isHidden()
    assert "not valid JSON" in dialog.message.text()
    assert dialog.list.count() == 1


async def test_every_input_has_an_accessible_name_and_a_label(ui: UiBundle, qtbot) -> None:
    dialog = open_dialog(qtbot)
    assert len(dialog.form.inputs) >= 5
    for key, widget in dialog.form.inputs.items():
        assert widget.accessibleName(), key
    from PySide6.QtWidgets import QLabel

    buddies = {label.buddy() for label in dialog.form.findChildren(QLabel) if label.buddy()}
    assert set(dialog.form.inputs.values()) <= buddies
    assert dialog.list.accessibleName() == "Profiles"


async def test_the_region_list_names_countries(ui: UiBundle, qtbot) -> None:
    dialog = open_dialog(qtbot)
    combo = dialog.form.region_combo
    assert combo.itemText(combo.findData("AU")) == "Australia (AU, +61)"
    assert combo.currentData() == "AU"


async def test_double_clicking_the_sandbox_entry_chooses_it(ui: UiBundle, qtbot) -> None:
    dialog = open_dialog(qtbot)
    item = dialog.list.item(0)
    dialog.list.itemActivated.emit(item)
    assert dialog.use_sandbox
    assert dialog.result() == QDialog.DialogCode.Accepted


# ---- unsaved changes --------------------------------------------------------------------------


def unsaved_question(dialog: ProfilesDialog) -> QMessageBox:
    box = dialog.unsaved.question
    assert box is not None
    assert box.isVisible()
    return box


async def test_closing_with_typing_not_saved_asks_and_cancel_keeps_the_typing(
    ui: UiBundle, qtbot
) -> None:
    dialog = open_dialog(qtbot)
    dialog.show()
    dialog.add_profile()
    fill(dialog, name="<b>Night shift</b>")
    dialog.close_button.click()
    box = unsaved_question(dialog)
    assert box.text() == "The new profile has changes that are not saved. Save them first?"
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert dialog.isVisible()
    assert dialog.form.name_edit.text() == "<b>Night shift</b>"


async def test_discarding_typing_not_saved_closes_and_saves_nothing(ui: UiBundle, qtbot) -> None:
    dialog = open_dialog(qtbot)
    dialog.show()
    dialog.add_profile()
    fill(dialog)
    dialog.close_button.click()
    unsaved_question(dialog).button(QMessageBox.StandardButton.Discard).click()
    assert dialog.result() == QDialog.DialogCode.Rejected
    assert not dialog.isVisible()
    assert ProfileStore().profiles() == []


async def test_saving_from_the_question_saves_the_profile_then_closes(
    ui: UiBundle, hermetic_settings: MemoryKeyring, qtbot
) -> None:
    dialog = open_dialog(qtbot)
    dialog.show()
    dialog.add_profile()
    fill(dialog)
    dialog.close_button.click()
    unsaved_question(dialog).button(QMessageBox.StandardButton.Save).click()
    assert [p.name for p in ProfileStore().profiles()] == ["Production"]
    assert not dialog.isVisible()


async def test_a_save_the_form_refuses_keeps_the_dialog_open_with_the_refusal(
    ui: UiBundle, qtbot
) -> None:
    dialog = open_dialog(qtbot)
    dialog.show()
    dialog.add_profile()
    fill(dialog, rest_url="http://gateway.example.com/api")
    dialog.close_button.click()
    unsaved_question(dialog).button(QMessageBox.StandardButton.Save).click()
    assert dialog.isVisible()
    assert dialog.form.error_text("rest_url")


async def test_choosing_another_profile_with_typing_not_saved_asks_first(
    ui: UiBundle, qtbot
) -> None:
    store = ProfileStore()
    save_profile(store, PasswordVault(), "Office", "https://a.example.com")
    save_profile(store, PasswordVault(), "Warehouse", "https://b.example.com")
    dialog = open_dialog(qtbot, current="Office")
    dialog.show()
    fill(dialog, name="Office", rest_url="https://changed.example.com", password="")
    warehouse = dialog.list.findItems("Warehouse", Qt.MatchFlag.MatchStartsWith)[0]
    dialog.list.setCurrentItem(warehouse)
    box = unsaved_question(dialog)
    assert dialog.form.rest_edit.text() == "https://changed.example.com"  # still shown
    box.button(QMessageBox.StandardButton.Discard).click()
    assert dialog.list.currentItem() is warehouse
    assert dialog.form.rest_edit.text() == "https://b.example.com"
    assert {p.name: p.rest_url for p in store.profiles()}["Office"] == "https://a.example.com"


async def test_a_profile_filled_from_the_file_has_nothing_to_ask_about(ui: UiBundle, qtbot) -> None:
    save_profile(ProfileStore(), PasswordVault(), "Office", "https://a.example.com")
    dialog = open_dialog(qtbot, current="Office")
    dialog.show()
    dialog.close_button.click()
    assert dialog.unsaved.question is None
    assert not dialog.isVisible()


# ---- advanced fields --------------------------------------------------------------------------


async def test_the_fields_most_gateways_leave_alone_are_folded_under_advanced(
    ui: UiBundle, qtbot
) -> None:
    dialog = open_dialog(qtbot)
    dialog.show()
    dialog.add_profile()
    form = dialog.form
    assert not form.namespace_edit.isVisible()
    assert not form.port_combo.isVisible()
    form.advanced_button.click()
    assert form.namespace_edit.isVisible()
    assert form.ca_edit.isVisible()


async def test_a_profile_that_sets_an_advanced_field_shows_them(
    ui: UiBundle, tmp_path: Path, qtbot
) -> None:
    bundle = tmp_path / "office-ca.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\n")
    profile = Profile(
        name="Office", rest_url="https://a.example.com", username="demo", ca_bundle=bundle
    )
    ProfileStore().save(profile)
    dialog = open_dialog(qtbot, current="Office")
    dialog.show()
    assert dialog.form.ca_edit.isVisible()
    assert dialog.form.ca_edit.text() == str(bundle)


async def test_a_refusal_at_an_advanced_field_unfolds_them(
    ui: UiBundle, tmp_path: Path, qtbot
) -> None:
    dialog = open_dialog(qtbot)
    dialog.show()
    dialog.add_profile()
    fill(dialog, ca_bundle=str(tmp_path / "nowhere.pem"))
    dialog.form.show_advanced(False)
    dialog.save()
    assert dialog.form.ca_edit.isVisible()
    assert dialog.form.error_text("ca_bundle") == "There is no such file."
