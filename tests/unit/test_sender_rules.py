"""What the compose forms and `gwdesk send --from` say about a sender as it is typed."""

from __future__ import annotations

from gwdesk.app.sender_rules import NO_REPLIES, sender_notes


def test_no_sender_is_the_accounts_number_and_needs_no_note() -> None:
    assert sender_notes("", "AU", marketing=True, two_way=True).text == ""


def test_a_number_can_be_replied_to_so_marketing_and_two_way_are_fine() -> None:
    notes = sender_notes("0412 345 678", "AU", marketing=True, two_way=True)
    assert (notes.errors, notes.warnings) == ((), ())


def test_a_name_on_a_marketing_message_is_an_error() -> None:
    notes = sender_notes("ACME", "AU", marketing=True)
    assert notes.errors
    assert "reply STOP" in notes.errors[0]


def test_a_name_on_a_two_way_message_is_a_warning() -> None:
    notes = sender_notes("ACME", "AU", two_way=True)
    assert notes.warnings == (NO_REPLIES,)
    assert not notes.errors


def test_acmas_errors_come_before_its_warnings_in_the_text() -> None:
    notes = sender_notes("_" + "A" * 12, "AU")
    first, second = notes.text.split("\n")
    assert "underscore" in first
    assert "phones show at most 11" in second
