"""A profile's shared store address: a PostgreSQL server and database, never a password."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gwdesk.domain.profile import Profile, check_store_url, libpq_url, store_role

BASE = {"name": "Office", "rest_url": "https://gw.example/", "username": "ops"}


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://gwdesk@db.office.example/gwdesk?sslmode=verify-full",
        "postgresql://gwdesk@10.0.0.5:5433/sms?sslmode=verify-full&sslrootcert=/etc/ca.pem",
        "postgres://db.example/gwdesk?sslmode=require",
        "postgresql://gwdesk@127.0.0.1:5432/gwdesk",
        "postgresql://gwdesk@[::1]/gwdesk?sslmode=disable",
        "postgresql://gwdesk@localhost/gwdesk",
        "postgresql:///gwdesk?host=/var/run/postgresql",
        "postgresql://gwdesk@db.office.lan/gwdesk?sslmode=disable&gwdesk_plaintext=trusted-lan",
    ],
)
def test_a_server_and_database_are_taken(url: str) -> None:
    assert Profile(**BASE, store_url=url).store_url == url


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("mysql://db.example/x", "postgresql://"),
        ("postgresql://gwdesk:hunter2@db.example/x", "must not hold a password"),
        ("postgresql://gwdesk@db.example/x?password=hunter2", "must not hold a password"),
        ("postgresql://gwdesk@db.example/x?sslmode=require&PASSWORD=x", "must not hold a password"),
        ("postgresql://gwdesk@db.example/x?sslpassword=keypass", "must not hold a password"),
        ("postgresql://gwdesk@db.example/x", "must be encrypted"),
        ("postgresql://gwdesk@db.example/x?sslmode=prefer", "must be encrypted"),
        ("postgresql://gwdesk@db.example/x?sslmode=disable", "gwdesk_plaintext=trusted-lan"),
        ("postgresql://gwdesk@127.0.0.1/x?host=db.example", "db.example is not on this machine"),
        ("postgresql://gwdesk@db.example/x?gwdesk_plaintext=yes", "must be encrypted"),
        ("postgresql:///x", "names no server"),
        ("postgresql://db.example?sslmode=require", "names no database"),
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
    profile = Profile(**BASE, store_url="postgresql://clerk@db.example/gwdesk?sslmode=require")
    assert profile.store_keyring_key == "Office:store:clerk"
    assert profile.store_keyring_key != profile.keyring_key
    assert store_role("postgresql://db.example/x") == "gwdesk"


def test_gwdesks_own_parameter_never_reaches_the_client_library() -> None:
    url = "postgresql://gwdesk@db.lan/g?sslmode=disable&gwdesk_plaintext=trusted-lan&connect_timeout=3"
    assert (
        libpq_url(check_store_url(url))
        == "postgresql://gwdesk@db.lan/g?sslmode=disable&connect_timeout=3"
    )
    assert libpq_url("postgresql://gwdesk@127.0.0.1/g") == "postgresql://gwdesk@127.0.0.1/g"
