"""Console start-up and shutdown: the embedded sandbox child, or the saved profile."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.profiles import PasswordVault, ProfileStore
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.controller import AppController
from gwdesk.ui.dialogs.profiles import ProfilesDialog
from gwdesk.ui.main_window import MainWindow
from gwdesk.ui.status.tab import StatusTab
from tests.ui.conftest import UiBundle, wait_until


def command_line(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return []
    return raw.decode("utf-8", "replace").split("\0")


@pytest.fixture
async def console(ui: UiBundle, qtbot) -> AsyncIterator[tuple[MainWindow, AppController]]:
    """The window and controller as `gwdesk.ui.app.main` builds them (one tab is enough)."""
    window = MainWindow.build(ui.session, ui.tasks, ui.theme, ui.settings, [StatusTab])
    qtbot.addWidget(window)
    controller = AppController(
        window, ui.session, ui.tasks, ProfileStore(), PasswordVault(), ui.paths, ui.reporter
    )
    window.show()
    yield window, controller
    await controller.shutdown()  # on the loop, before qtbot closes the window


async def test_with_no_profile_the_console_runs_the_sandbox_child_and_stops_it_at_exit(
    ui: UiBundle, console: tuple[MainWindow, AppController]
) -> None:
    window, controller = console
    await controller.connect_initial(None, sandbox=False)

    assert controller.sandbox is not None
    pid = controller.sandbox.pid
    assert pid is not None
    child = command_line(pid)
    assert child[1:4] == ["-m", "gwdesk.sandbox", "serve"]
    assert "--exit-with-parent" in child
    assert ui.session.active
    assert ui.session.is_sandbox
    assert window.banner.isVisible()
    assert window.status.sandbox_badge.isVisible()
    assert window.windowTitle() == "gwdesk — Sandbox [SANDBOX]"

    await controller.shutdown()
    assert controller.sandbox is None
    assert command_line(pid) == []  # stopped and reaped
    assert not ui.session.active


async def test_a_saved_profile_with_a_keyring_password_is_connected_instead(
    ui: UiBundle, sandbox: SandboxThread, console: tuple[MainWindow, AppController]
) -> None:
    window, controller = console
    profile = Profile(name="Office", rest_url=sandbox.rest_url, username="demo")
    ProfileStore().save(profile)
    PasswordVault().set(profile, Secret("demo"))

    await controller.connect_initial(None, sandbox=False)

    assert controller.sandbox is None
    assert ui.session.profile == profile
    assert not ui.session.is_sandbox
    assert window.banner.isHidden()
    assert window.status.sandbox_badge.isHidden()
    await wait_until(lambda: "Credits" in window.status.balance_label.text())  # the password works
    await wait_until(lambda: not ui.tasks.running("reply-listener-start"))  # and its backfill


async def test_the_default_profile_is_chosen_among_several(
    ui: UiBundle, sandbox: SandboxThread, console: tuple[MainWindow, AppController]
) -> None:
    window, controller = console
    store, vault = ProfileStore(), PasswordVault()
    for name in ("First", "Second"):
        profile = Profile(name=name, rest_url=sandbox.rest_url, username="demo")
        store.save(profile)
        vault.set(profile, Secret("demo"))
    store.set_default("Second")

    await controller.connect_initial(None, sandbox=False)

    assert ui.session.profile is not None
    assert ui.session.profile.name == "Second"
    assert window.status.profile_label.text().startswith("Second (demo @ ")
    await wait_until(lambda: "Credits" in window.status.balance_label.text())
    await wait_until(lambda: not ui.tasks.running("reply-listener-start"))


async def test_a_saved_profile_without_a_password_opens_the_profiles_dialog(
    ui: UiBundle, sandbox: SandboxThread, console: tuple[MainWindow, AppController]
) -> None:
    window, controller = console
    ProfileStore().save(Profile(name="Office", rest_url=sandbox.rest_url, username="demo"))

    await controller.connect_initial(None, sandbox=False)

    assert not ui.session.active
    assert controller.sandbox is None
    dialog = window.findChild(ProfilesDialog)
    assert isinstance(dialog, ProfilesDialog)
    assert dialog.isVisible()
    assert dialog.form.name_edit.text() == "Office"
    assert "No password is saved" in dialog.form.password_hint.text()
    dialog.reject()


async def test_a_broken_profiles_file_falls_back_to_the_sandbox_and_says_why(
    ui: UiBundle, console: tuple[MainWindow, AppController]
) -> None:
    window, controller = console
    store = ProfileStore()
    store.directory.mkdir(parents=True, exist_ok=True)
    store.path.write_text('{"schema_version": 99, "profiles": []}', encoding="utf-8")
    shown: list[str] = []
    window.status.messageChanged.connect(shown.append)

    await controller.connect_initial(None, sandbox=False)

    assert ui.session.is_sandbox
    assert any("newer gwdesk" in text for text in shown)
    await controller.shutdown()
