"""Profiles on disk and passwords in a keyring, never in the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail

from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.profiles import (
    KEYRING_SERVICE,
    KeyringUnavailable,
    PasswordVault,
    ProfileStore,
    SettingsError,
    config_dir,
)


class MemoryKeyring(KeyringBackend):
    """A real keyring backend that keeps passwords in this process only."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.items.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.items[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        from keyring.errors import PasswordDeleteError

        if self.items.pop((service, username), None) is None:
            raise PasswordDeleteError("not there")


def make(name: str = "prod", **fields: object) -> Profile:
    return Profile.model_validate(
        {"name": name, "rest_url": "https://gateway.example.com", "username": "ops", **fields}
    )


def test_profiles_round_trip_with_a_schema_version(tmp_path: Path) -> None:
    store = ProfileStore(tmp_path)
    store.save(make(region="nz", lodge_port="http_post", ca_bundle="/etc/ca.pem"))
    store.save(make("test", auth="basic"))
    assert [p.name for p in store.profiles()] == ["prod", "test"]
    prod = store.get("prod")
    assert prod.region == "NZ"
    assert prod.lodge_port == "http_post"
    assert str(prod.ca_bundle) == "/etc/ca.pem"
    assert json.loads((tmp_path / "profiles.json").read_text())["schema_version"] == 1


def test_saving_a_profile_of_the_same_name_replaces_it(tmp_path: Path) -> None:
    store = ProfileStore(tmp_path)
    store.save(make(username="old"))
    store.save(make(username="new"))
    assert [p.username for p in store.profiles()] == ["new"]


def test_delete_and_default(tmp_path: Path) -> None:
    store = ProfileStore(tmp_path)
    store.save(make())
    store.set_default("prod")
    assert store.default_name == "prod"
    assert store.delete("prod")
    assert not store.delete("prod")
    assert store.default_name is None


def test_an_unknown_profile_names_the_known_ones(tmp_path: Path) -> None:
    store = ProfileStore(tmp_path)
    store.save(make())
    with pytest.raises(SettingsError, match=r"no profile named 'x' \(known: prod\)"):
        store.get("x")


def test_a_broken_or_newer_file_is_refused_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "profiles.json"
    path.write_text("{not json")
    with pytest.raises(SettingsError, match="not valid JSON"):
        ProfileStore(tmp_path).save(make())
    assert path.read_text() == "{not json"
    path.write_text(json.dumps({"schema_version": 99, "profiles": []}))
    with pytest.raises(SettingsError, match="newer gwdesk"):
        ProfileStore(tmp_path).profiles()


def test_a_bad_profile_in_the_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "profiles.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "profiles": [{"name": "x", "rest_url": "ftp://x", "username": "u"}],
            }
        )
    )
    with pytest.raises(SettingsError, match=r"Profile #1 .*\(rest_url: the REST base URL must be"):
        ProfileStore(tmp_path).profiles()


def test_the_config_dir_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GWDESK_CONFIG_DIR", str(tmp_path))
    assert config_dir() == tmp_path
    assert ProfileStore().path == tmp_path / "profiles.json"


def test_passwords_live_in_the_keyring_never_the_file(tmp_path: Path) -> None:
    backend = MemoryKeyring()
    vault = PasswordVault(backend)
    store = ProfileStore(tmp_path)
    profile = make()
    store.save(profile)
    vault.set(profile, Secret("hunter2-long"))
    assert backend.items == {(KEYRING_SERVICE, "prod:ops"): "hunter2-long"}
    assert "hunter2" not in (tmp_path / "profiles.json").read_text()
    stored = vault.get(profile)
    assert stored is not None
    assert stored.reveal() == "hunter2-long"
    vault.delete(profile)
    vault.delete(profile)  # forgetting twice is fine
    assert vault.get(profile) is None


def test_no_keyring_is_reported_so_the_ui_can_say_session_only() -> None:
    vault = PasswordVault(fail.Keyring())
    with pytest.raises(KeyringUnavailable, match="this session only"):
        vault.set(make(), Secret("x"))
    with pytest.raises(KeyringUnavailable):
        vault.get(make())


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("rest_url", "http://gateway.example.com", "must use https"),
        ("rest_url", "https://user:pw@gateway.example.com", "user name or password"),
        ("timezone", "Mars/Olympus", "unknown time zone"),
        ("region", "ZZ", "unknown region"),
        ("auth", "digest", "oauth"),
        ("lodge_port", "soap13", "soap11"),
    ],
)
def test_profile_fields_are_checked(field: str, value: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make(**{field: value})
