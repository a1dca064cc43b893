"""Profile passwords through gwdesk's `PasswordVault` on a real Secret Service.

gnome-keyring-daemon runs on a private D-Bus session bus (see `secret_service`); the
vault talks to it through keyring's SecretService backend, the one a Linux desktop
uses. The autouse in-memory keyring is replaced for these tests and put back after.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backends import SecretService

from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.profiles import KEYRING_SERVICE, PasswordVault, ProfileStore
from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.resilience.secret_service import missing_programs, private_secret_service

PASSWORD = "Pw-5ecret-9f3a"
NEW_PASSWORD = "Pw-r3placed-77c1"
GWDESK = str(Path(sys.executable).with_name("gwdesk"))


@pytest.fixture(scope="module")
def secret_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    missing = missing_programs()
    if missing:
        pytest.skip(
            f"{' and '.join(missing)} not installed (Debian: apt-get install dbus gnome-keyring)"
        )
    with private_secret_service(tmp_path_factory.mktemp("secret-service")) as env:
        before = os.environ.get("DBUS_SESSION_BUS_ADDRESS")
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = env["DBUS_SESSION_BUS_ADDRESS"]
        try:
            yield env
        finally:
            if before is None:
                os.environ.pop("DBUS_SESSION_BUS_ADDRESS", None)
            else:
                os.environ["DBUS_SESSION_BUS_ADDRESS"] = before


@pytest.fixture
def backend(secret_service: dict[str, str]) -> Iterator[SecretService.Keyring]:
    """The Secret Service backend as the process keyring, instead of the in-memory one."""
    previous = keyring.get_keyring()
    real = SecretService.Keyring()
    keyring.set_keyring(real)
    yield real
    keyring.set_keyring(previous)


@pytest.fixture
def profile(request: pytest.FixtureRequest) -> Profile:
    # A name per test: the keyring lives for the whole module.
    return Profile(name=request.node.name[:80], rest_url="http://127.0.0.1:9/", username="ops")


def service_items(profile: Profile) -> list[str]:
    """The matching items as the Secret Service itself holds them (not via gwdesk)."""
    import secretstorage

    with secretstorage.dbus_init() as connection:
        collection = secretstorage.get_default_collection(connection)
        found = collection.search_items(
            {"service": KEYRING_SERVICE, "username": profile.keyring_key}
        )
        return [item.get_secret().decode() for item in found]


def files_under(*roots: Path) -> list[Path]:
    return [p for root in roots for p in root.rglob("*") if p.is_file()]


def test_a_stored_password_is_held_by_the_secret_service(
    backend: SecretService.Keyring, profile: Profile
) -> None:
    PasswordVault().set(profile, Secret(PASSWORD))
    assert service_items(profile) == [PASSWORD]
    assert PasswordVault().get(profile) == Secret(PASSWORD)


def test_a_replaced_password_leaves_only_the_new_one(
    backend: SecretService.Keyring, profile: Profile
) -> None:
    vault = PasswordVault()
    vault.set(profile, Secret(PASSWORD))
    vault.set(profile, Secret(NEW_PASSWORD))
    assert vault.get(profile) == Secret(NEW_PASSWORD)
    assert service_items(profile) == [NEW_PASSWORD]


def test_a_deleted_password_is_gone_and_deleting_again_is_no_error(
    backend: SecretService.Keyring, profile: Profile
) -> None:
    vault = PasswordVault()
    vault.set(profile, Secret(PASSWORD))
    vault.delete(profile)
    assert vault.get(profile) is None
    assert service_items(profile) == []
    vault.delete(profile)


def test_a_profile_saved_with_its_password_writes_the_password_to_no_file(
    backend: SecretService.Keyring, profile: Profile
) -> None:
    store = ProfileStore()
    store.save(profile)
    store.set_default(profile.name)
    PasswordVault().set(profile, Secret(PASSWORD))
    config, data = Path(os.environ["GWDESK_CONFIG_DIR"]), Path(os.environ["GWDESK_DATA_DIR"])
    written = files_under(config, data)
    assert store.path in written
    leaks = [p for p in written if PASSWORD.encode() in p.read_bytes()]
    assert leaks == []


def test_the_cli_signs_in_with_the_password_the_secret_service_holds(
    secret_service: dict[str, str],
    backend: SecretService.Keyring,
    sandbox_factory: SandboxFactory,
    tmp_path: Path,
) -> None:
    gateway: SandboxThread = sandbox_factory(extra_accounts=[("ops", PASSWORD)])
    saved = Profile(name="keyring-cli", rest_url=gateway.rest_url, username="ops")
    ProfileStore().save(saved)
    PasswordVault().set(saved, Secret(PASSWORD))
    # A fresh process with no GWDESK_PASSWORD: the only way in is the system keyring.
    env = {
        **secret_service,
        "GWDESK_CONFIG_DIR": os.environ["GWDESK_CONFIG_DIR"],
        "GWDESK_DATA_DIR": os.environ["GWDESK_DATA_DIR"],
    }
    done = subprocess.run(
        [GWDESK, "status", "--profile", "keyring-cli", "--external-id", "nothing-yet"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "no messages (yet)" in done.stdout
    assert PASSWORD not in done.stdout + done.stderr
