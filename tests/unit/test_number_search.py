"""One number search everywhere: what a typed number finds, however it is written."""

from __future__ import annotations

import pytest

from gwdesk.domain.number_search import NumberQuery, international, number_query

SAME_START = ["0412 555", "61412555", "+61 412 555", "+61 (412) 555", "0061 412-555", "61 412 555"]


@pytest.mark.parametrize("typed", SAME_START)
def test_national_and_international_forms_find_the_same_start(typed: str) -> None:
    assert number_query(typed, "AU") == NumberQuery("61412555", anchored=True)


@pytest.mark.parametrize(
    ("typed", "digits"),
    [("412 555", "412555"), ("345-678", "345678"), ("0000002", "0000002"), ("00 002", "00002")],
)
def test_a_piece_without_a_prefix_is_found_anywhere(typed: str, digits: str) -> None:
    assert number_query(typed, "AU") == NumberQuery(digits, anchored=False)


@pytest.mark.parametrize("typed", ["Alex", "0412 555 or so", "04", "", "  ", "٠٤١٢٣٤٥"])
def test_text_and_too_short_pieces_are_no_number(typed: str) -> None:
    assert number_query(typed, "AU") is None


def test_the_regions_own_national_form_is_read() -> None:
    assert number_query("020 7946 0958", "GB") == NumberQuery("442079460958", anchored=True)
    assert number_query("020 7946 0958", "AU") == NumberQuery("612079460958", anchored=True)


@pytest.mark.parametrize(
    ("stored", "found"),
    [("61412555000", True), ("+61412555000", True), ("0412555000", True), ("61412655000", False)],
)
def test_a_stored_number_in_any_form_is_compared_by_its_international_digits(
    stored: str, found: bool
) -> None:
    assert number_query("0412 555", "AU").matches(stored, "AU") is found  # type: ignore[union-attr]
    assert international(stored, "AU").startswith("614")
