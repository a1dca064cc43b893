"""The profiles dialog's Team part: the store's address, its password and the operator's name."""

from __future__ import annotations

import os
from pathlib import Path

import keyring
import pytest
from keyring.backends import fail
from PySide6.QtWidgets import QDialog
from pytestqt.qtbot import QtBot

from gwdesk.domain.models import Secret
from gwdesk.domain.operator import default_operator
from gwdesk.domain.profile import Profile
from gwdesk.profiles import KEYRING_SERVICE, PasswordVault, ProfileStore
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.controller import AppController
from gwdesk.ui.dialogs.profiles import NO_KEYRING_STORE_TEXT, ProfilesDialog
from gwdesk.ui.main_window import MainWindow
from tests.keyrings import MemoryKeyring
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.test_profiles_dialog import files_holding, fill

STORE_PASSWORD = "Store-Sw0rdfish-keyring-only"
STORE_URL = "postgresql://gwdesk_console@db.office.lan/gwdesk?sslmode=verify-full"
STORE_KEY = (KEYRING_SERVICE, "Production:store:gwdesk_console")


def open_dialog(qtbot: QtBot, **kwargs: object) -> ProfilesDialog:
    dialog = ProfilesDialog(ProfileStore(), PasswordVault(), None, **kwargs)  # type: ignore[arg-type]
    qtbot.addWidget(dialog)
    return dialog


def fill_team(
    dialog: ProfilesDialog, url: str = STORE_URL, password: str = STORE_PASSWORD, operator: str = ""
) -> None:
    form = dialog.form
    for edit, text in (
        (form.store_edit, url),
        (form.store_password_edit, password),
        (form.operator_edit, operator),
    ):
        edit.clear()
        edit.insert(text)


async def test_the_team_part_is_saved_with_the_store_password_in_the_keyring_only(
    ui: UiBundle, qtbot: QtBot, hermetic_settings: MemoryKeyring
) -> None:
    dialog = open_dialog(qtbot)
    dialog.add_profile()
    fill(dialog)
    fill_team(dialog, operator="Alex Doe")

    assert dialog.save()

    saved = ProfileStore().get("Production")
    assert (saved.store_url, saved.operator) == (STORE_URL, "Alex Doe")
    assert hermetic_settings.items[STORE_KEY] == STORE_PASSWORD
    assert dialog.message.text().endswith("the store's in the keyring.")
    assert files_holding(STORE_PASSWORD, Path(os.environ["GWDESK_CONFIG_DIR"])) == []
    assert (
        dialog.form.store_hint.text() == "A store password is saved; type a new one to replace it."
    )


@pytest.mark.parametrize(
    ("address", "said"),
    [
        (
            "postgresql://gwdesk_console:Hunter2-secret@db.office.lan/gwdesk",
            "must not hold a password",
        ),
        ("postgresql://gwdesk_console@db.office.lan:Hunter2-secret/gwdesk", "port"),
        ("postgresql://gwdesk_console:Hunter2-secret@db/gwdesk?sslmode=none", "password"),
        ("postgresql://db.office.lan/gw desk\x1b[31mHunter2-secret", "control characters"),
        ("https://<b>Hunter2-secret</b>@db.office.lan/gwdesk", "must start postgresql://"),
        (
            "postgresql://alex@db.office.lan/gwdesk?sslmode=require&password=Hunter2-secret",
            "must not hold a password",
        ),
        (
            "postgresql://alex@db.office.lan/gwdesk?Password=Hunter2-secret",
            "must not hold a password",
        ),
        ("postgresql://alex@db.office.lan/gwdesk?sslmode=disable", "must be encrypted"),
    ],
)
async def test_a_bad_store_address_is_refused_at_its_field_without_echoing_a_password(
    ui: UiBundle, qtbot: QtBot, address: str, said: str
) -> None:
    dialog = open_dialog(qtbot)
    dialog.add_profile()
    fill(dialog)
    fill_team(dialog, url=address)

    assert not dialog.save()

    error = dialog.form.error_text("store_url")
    assert said in error
    assert "Hunter2" not in error
    assert "Hunter2" not in dialog.message.text()
    assert dialog.form.store_edit.property("invalid")
    assert files_holding("Hunter2", Path(os.environ["GWDESK_CONFIG_DIR"])) == []


async def test_an_unknown_tls_mode_is_refused_at_the_store_address_as_plain_text(
    ui: UiBundle, qtbot: QtBot
) -> None:
    dialog = open_dialog(qtbot)
    dialog.add_profile()
    fill(dialog)
    fill_team(dialog, url="postgresql://db.office.lan/gwdesk?sslmode=<b>on</b>")

    assert not dialog.save()

    assert dialog.form.error_text("store_url") == (
        "Unknown sslmode '<b>on</b>'; use verify-full to check the server."
    )
    assert dialog.form.errors["store_url"].textFormat().name == "PlainText"


async def test_a_hostile_operator_name_is_kept_as_one_printable_line(
    ui: UiBundle, qtbot: QtBot
) -> None:
    dialog = open_dialog(qtbot)
    dialog.add_profile()
    fill(dialog)
    fill_team(dialog, operator="  Sam\x1b[31m\u202e <b>Lee</b>\n ")

    assert dialog.save()

    assert ProfileStore().get("Production").operator == "Sam [31m <b>Lee</b>"


async def test_the_operator_name_stands_in_for_the_os_user_until_given(
    ui: UiBundle, qtbot: QtBot
) -> None:
    dialog = open_dialog(qtbot)
    dialog.add_profile()
    fill(dialog)
    fill_team(dialog)

    assert dialog.form.operator_edit.placeholderText() == default_operator()
    assert dialog.save()
    saved = ProfileStore().get("Production")
    assert saved.operator is None
    assert saved.operator_display == default_operator()


async def test_without_a_keyring_the_store_password_is_kept_for_the_session_and_said_so(
    ui: UiBundle, qtbot: QtBot
) -> None:
    keyring.set_keyring(fail.Keyring())  # the autouse fixture puts the test keyring back
    kept: dict[str, Secret] = {}
    dialog = open_dialog(qtbot, session_store_passwords=kept)
    dialog.add_profile()
    fill(dialog)
    fill_team(dialog)

    assert dialog.save()

    assert dialog.store_kept_for_session
    assert kept["Production:store:gwdesk_console"].reveal() == STORE_PASSWORD
    assert dialog.form.store_hint.text() == NO_KEYRING_STORE_TEXT
    assert dialog.form.store_hint.property("role") == "warning"
    assert dialog.message.text().endswith("the store's for this session only.")
    assert files_holding(STORE_PASSWORD, Path(os.environ["GWDESK_CONFIG_DIR"])) == []


async def test_removing_the_store_address_forgets_its_password(
    ui: UiBundle, qtbot: QtBot, hermetic_settings: MemoryKeyring
) -> None:
    dialog = open_dialog(qtbot)
    dialog.add_profile()
    fill(dialog)
    fill_team(dialog)
    assert dialog.save()
    assert STORE_KEY in hermetic_settings.items

    dialog.form.store_edit.clear()
    assert dialog.save()

    assert ProfileStore().get("Production").store_url is None
    assert STORE_KEY not in hermetic_settings.items


async def test_connecting_a_team_profile_opens_its_server_with_the_kept_password(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread, pg_url: str
) -> None:
    window = MainWindow.build(ui.session, ui.tasks, ui.theme, ui.settings, [])
    qtbot.addWidget(window)
    window.show()
    controller = AppController(
        window, ui.session, ui.tasks, ProfileStore(), PasswordVault(), ui.paths, ui.reporter
    )
    controller.open_profiles()
    dialog = window.findChild(ProfilesDialog)
    assert isinstance(dialog, ProfilesDialog)
    dialog.add_profile()
    fill(dialog, sandbox, password="demo")
    fill_team(dialog, url=pg_url, operator="Alex")

    dialog.connect_selected()

    assert dialog.result() == QDialog.DialogCode.Accepted
    assert dialog.store_password is not None
    assert dialog.store_password.reveal() == STORE_PASSWORD
    await wait_until(lambda: ui.session.store is not None and ui.session.store.team, 20)
    label = window.status.team_label
    await wait_until(lambda: label.text() == "Team store 127.0.0.1 · 1 console", 20)
    assert "Alex (" in label.toolTip()
    profile: Profile | None = ui.session.profile
    assert profile is not None
    assert PasswordVault().get_store(profile) == Secret(STORE_PASSWORD)
