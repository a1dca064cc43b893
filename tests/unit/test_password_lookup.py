"""A profile's password, looked up one way by the console's controller and its profiles
dialog: the one kept for this session, else the keyring's (`gwdesk.profiles.password_of`)."""

from __future__ import annotations

import pytest
from keyring.backends import fail

from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.profiles import KeyringUnavailable, PasswordVault, password_of
from tests.keyrings import MemoryKeyring

PROFILE = Profile(
    name="office",
    rest_url="https://gateway.example",
    username="desk",
    store_url="postgresql://desk@db.example/gwdesk?sslmode=require",
)


def vault_holding(password: str | None = None, store: str | None = None) -> PasswordVault:
    vault = PasswordVault(MemoryKeyring())
    if password is not None:
        vault.set(PROFILE, Secret(password))
    if store is not None:
        vault.set_store(PROFILE, Secret(store))
    return vault


def revealed(found: Secret | None) -> str | None:
    return None if found is None else found.reveal()


def test_the_password_kept_for_this_session_comes_before_the_keyrings() -> None:
    kept = {PROFILE.keyring_key: Secret("typed")}
    found = password_of(PROFILE, vault_holding("saved"), kept)
    assert revealed(found) == "typed"


def test_the_keyrings_password_when_none_is_kept() -> None:
    found = password_of(PROFILE, vault_holding("saved"), {})
    assert revealed(found) == "saved"


def test_no_password_when_neither_holds_one() -> None:
    assert password_of(PROFILE, vault_holding(), {}) is None


def test_the_team_servers_password_is_looked_up_by_its_own_key() -> None:
    vault = vault_holding("saved", store="store-saved")
    found = password_of(PROFILE, vault, {}, store=True)
    assert revealed(found) == "store-saved"
    kept = {PROFILE.store_keyring_key: Secret("store-typed")}
    found = password_of(PROFILE, vault, kept, store=True)
    assert revealed(found) == "store-typed"


def test_a_keyring_that_cannot_be_read_is_said_when_nothing_is_kept() -> None:
    vault = PasswordVault(fail.Keyring())
    with pytest.raises(KeyringUnavailable):
        password_of(PROFILE, vault, {})
    kept = {PROFILE.keyring_key: Secret("typed")}
    found = password_of(PROFILE, vault, kept)
    assert revealed(found) == "typed"
