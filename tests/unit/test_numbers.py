"""Recipient numbers: normalised for the gateway, refused with a reason, shown readably."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gwdesk.domain.numbers import (
    MAX_DIGITS,
    MIN_DIGITS,
    NumberError,
    check_recipients,
    display,
    normalise,
)

digits = st.text(alphabet="0123456789", min_size=5, max_size=12)
#: International and national forms that are often valid, so the properties bite.
plausible = st.builds(
    lambda prefix, rest: f"{prefix}{rest}",
    st.sampled_from(["+1", "+44", "+61", "+64", "+49", "+91", "+65", "+376", "0", "04", "", "61"]),
    digits,
)
phone_like = st.text(alphabet="0123456789 +-()./", max_size=24) | plausible
regions = st.sampled_from(["AU", "NZ", "GB", "US", "DE", "IN", "SG"])


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("0412 345 678", "61412345678"),
        ("+61 412 345 678", "61412345678"),
        ("61412345678", "61412345678"),
        ("(04) 1234-5678", "61412345678"),
        ("0011 44 7911 123456", "447911123456"),
        ("+44 7911 123456", "447911123456"),
    ],
)
def test_what_operators_type_becomes_international_digits(typed: str, expected: str) -> None:
    assert normalise(typed, "AU") == expected


def test_national_numbers_belong_to_the_profiles_region() -> None:
    assert normalise("021 234 5678", "NZ") == "64212345678"


@pytest.mark.parametrize(
    ("typed", "reason"),
    [
        ("", "it is empty"),
        ("0412 345", "not a valid number for AU"),
        ("+61 412", "too short"),
        ("12345678901234567", "too long"),
        ("1300 FLOWERS", "it contains 'F'"),
        ("04+12345678", "a + may only start the number"),
        ("+999 1234567", "the country code is not valid"),
        ("- - -", "it has no digits"),
    ],
)
def test_unusable_numbers_are_refused_with_the_reason(typed: str, reason: str) -> None:
    with pytest.raises(NumberError) as caught:
        normalise(typed, "AU")
    assert reason in caught.value.reason


def test_an_unknown_region_is_refused() -> None:
    with pytest.raises(NumberError, match="region"):
        normalise("0412345678", "XX")


def test_display_groups_the_digits() -> None:
    assert display("61412345678") == "+61 412 345 678"
    assert display("not a number") == "not a number"


def test_a_list_is_checked_with_positions_and_repeats_dropped() -> None:
    checked = check_recipients(["0412345678", "nope", "+61412345678", "0412345679"], "AU")
    assert checked.numbers == ("61412345678", "61412345679")
    assert [(r.index, r.text) for r in checked.rejected] == [(1, "nope")]
    assert checked.duplicates == 1


@given(st.text(max_size=40) | phone_like, regions)
def test_normalise_raises_nothing_but_its_own_error(text: str, region: str) -> None:
    with contextlib.suppress(NumberError):
        normalise(text, region)


@given(phone_like, regions)
def test_normalising_a_normalised_number_changes_nothing(text: str, region: str) -> None:
    try:
        once = normalise(text, region)
    except NumberError:
        return
    assert normalise(once, region) == once


@given(phone_like, regions)
def test_valid_outputs_are_8_to_15_digits(text: str, region: str) -> None:
    try:
        result = normalise(text, region)
    except NumberError:
        return
    assert result.isdigit()
    assert MIN_DIGITS <= len(result) <= MAX_DIGITS


@given(st.integers(min_value=400_000_000, max_value=499_999_999))
def test_every_national_mobile_form_agrees_with_the_international_one(national: int) -> None:
    try:
        expected = normalise(f"+61{national}", "AU")
    except NumberError:
        return
    assert normalise(f"0{national}", "AU") == expected
