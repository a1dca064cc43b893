"""ACMA's Sender ID rules, as the compose forms show them: errors refuse, warnings tell."""

from __future__ import annotations

import pytest

from gwdesk.domain.sender_id import SenderKind, check_sender_id


def test_a_name_of_two_to_eleven_ascii_characters_passes() -> None:
    found = check_sender_id("ACME Shop", "AU")
    assert (found.kind, found.value, found.errors, found.warnings) == (
        SenderKind.NAME, "ACME Shop", (), ()
    )  # fmt: skip
    assert not found.can_receive_replies


def test_a_number_is_normalised_and_can_be_replied_to() -> None:
    found = check_sender_id("0412 345 678", "AU")
    assert (found.kind, found.value, found.ok) == (SenderKind.NUMBER, "61412345678", True)
    assert found.can_receive_replies


def test_a_number_that_is_not_one_is_an_error() -> None:
    found = check_sender_id("0412 345", "AU")
    assert found.kind is SenderKind.NUMBER
    assert not found.ok


def test_longer_than_eleven_is_sent_with_a_warning() -> None:
    found = check_sender_id("AUSGRID Property", "AU")
    assert found.ok
    assert any("at most 11" in w for w in found.warnings)


def test_one_character_is_sent_with_a_warning() -> None:
    found = check_sender_id("A", "AU")
    assert found.ok
    assert any("2 to 11" in w for w in found.warnings)


@pytest.mark.parametrize("name", ["Café", "Shop\u202e", "Tab\there", "ＡＣＭＥ"])
def test_characters_outside_ascii_32_to_126_are_an_error(name: str) -> None:
    assert not check_sender_id(name, "AU").ok


@pytest.mark.parametrize("name", [" ACME", "ACME ", "_ACME", "ACME_"])
def test_a_space_or_underscore_at_either_end_is_an_error(name: str) -> None:
    assert not check_sender_id(name, "AU").ok


@pytest.mark.parametrize("name", ["Unverified", "UNVERIFIED", "unverified"])
def test_unverified_is_never_a_sender(name: str) -> None:
    assert not check_sender_id(name, "AU").ok


def test_all_digits_too_short_for_a_number_is_an_error() -> None:
    assert not check_sender_id("12", "AU").ok


def test_longer_than_the_gateway_takes_is_an_error() -> None:
    assert not check_sender_id("A" * 51, "AU").ok
