"""The profile's opt-out rules as the Opt-outs tab's Rules form has them checked."""

from __future__ import annotations

import pytest

from gwdesk.app.optouts import Rules, RulesError, check_rules


def refused(opt_out: str = "STOP", opt_in: str = "START", instruction: str = "Reply STOP") -> str:
    with pytest.raises(RulesError) as caught:
        check_rules(opt_out, opt_in, False, instruction)
    return caught.value.field


def test_keywords_are_tidied_and_separated_by_commas_or_lines() -> None:
    rules = check_rules(" stop ,opt-out\nHalt!", "start", True, "  Reply   STOP to end ")
    assert rules == Rules(("STOP", "OPT OUT", "HALT"), ("START",), True, "Reply STOP to end")


def test_at_least_one_opt_out_keyword_is_kept() -> None:
    assert refused(opt_out=" , ") == "opt_out"


def test_a_keyword_in_both_lists_is_refused_on_the_opt_in_list() -> None:
    assert refused(opt_out="STOP, END", opt_in="start, end.") == "opt_in"


def test_a_keyword_with_no_letter_is_refused() -> None:
    assert refused(opt_in="START, ???") == "opt_in"


def test_an_empty_or_control_character_instruction_is_refused() -> None:
    assert refused(instruction="   ") == "instruction"
    assert refused(instruction="Reply STOP\x1b[2J") == "instruction"


def test_an_instruction_naming_no_opt_out_keyword_is_kept_with_a_warning() -> None:
    assert check_rules("STOP", "START", False, "Reply STOP").warnings == ()
    assert check_rules("STOP", "START", False, "Call us to leave").warnings


def test_the_own_number_is_kept_as_international_digits() -> None:
    rules = check_rules("STOP", "START", False, "Reply STOP", " 0412 345 678 ", "AU")
    assert rules.own_number == "61412345678"
    assert check_rules("STOP", "START", False, "Reply STOP").own_number == ""


def test_an_unusable_own_number_is_refused_at_its_field() -> None:
    with pytest.raises(RulesError) as caught:
        check_rules("STOP", "START", False, "Reply STOP", "0412 3", "AU")
    assert caught.value.field == "own_number"
    assert caught.value.message.startswith("Your number: ")


def test_the_repeat_window_is_kept_as_typed() -> None:
    rules = check_rules("STOP", "START", False, "Reply STOP to opt out", repeat_hours=6)
    assert rules.repeat_hours == 6


@pytest.mark.parametrize("hours", [0, -1, 24 * 30 + 1])
def test_a_repeat_window_outside_a_month_is_refused_at_its_field(hours: int) -> None:
    with pytest.raises(RulesError) as caught:
        check_rules("STOP", "START", False, "Reply STOP to opt out", repeat_hours=hours)
    assert caught.value.field == "repeat_hours"
