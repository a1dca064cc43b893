"""A profile's shared store address: a PostgreSQL server and database, never a password."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gwdesk.domain.profile import Profile, check_store_url, store_role

BASE = {"name": "Office", "rest_url": "https://gw.example/", "username": "ops"}


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://gwdesk@db.office.example/gwdesk",
        "postgresql://gwdesk@10.0.0.5:5433/sms?sslmode=verify-full&sslrootcert=/etc/ca.pem",
        "postgres://db.example/gwdesk",
    ],
)
def test_a_server_and_database_are_taken(url: str) -> None:
    assert Profile(**BASE, store_url=url).store_url == url


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("mysql://db.example/x", "postgresql://"),
        ("postgresql://gwdesk:hunter2@db.example/x", "must not hold a password"),
        ("postgresql:///x", "names no server"),
        ("postgresql://db.example", "names no database"),
        ("postgresql://db.example/x?sslmode=verify-fully", "unknown sslmode"),
        ("postgresql://db.example/x y", "spaces"),
        ("postgresql://db.example:99999/x", "port"),
        ("postgresql://db\x1b]0;x\x07/x", "control characters"),
    ],
)
def test_an_address_the_store_cannot_use_says_why(url: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        check_store_url(url)
    with pytest.raises(ValidationError):
        Profile(**BASE, store_url=url)


def test_no_store_address_means_the_profile_s_own_file() -> None:
    assert Profile(**BASE, store_url="  ").store_url is None
    assert Profile(**BASE).store_url is None


def test_the_store_password_has_its_own_keyring_entry() -> None:
    profile = Profile(**BASE, store_url="postgresql://clerk@db.example/gwdesk")
    assert profile.store_keyring_key == "Office:store:clerk"
    assert profile.store_keyring_key != profile.keyring_key
    assert store_role("postgresql://db.example/x") == "gwdesk"
