"""Reading a reply for consent: keywords lead it, any case, punctuation and spaces aside."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gwdesk.domain.optout_words import DEFAULT_OPT_OUT, Intent, Keywords, check_keywords

KEYWORDS = Keywords()


@pytest.mark.parametrize(
    "text",
    ["STOP", "stop", "Stop!", "  stop.  ", "STOP ALL", "stop all please", "Unsubscribe",
     "opt out", "OPT-OUT.", "optout", "Cancel", "END", "quit!!", "Stop, thanks", "ＳＴＯＰ"],
)  # fmt: skip
def test_a_reply_led_by_an_opt_out_keyword_opts_out(text: str) -> None:
    reading = KEYWORDS.read(text)
    assert reading is not None
    assert reading.intent is Intent.OPT_OUT


def test_the_longest_keyword_is_named() -> None:
    reading = KEYWORDS.read("stop all")
    assert reading is not None
    assert reading.keyword == "STOP ALL"


@pytest.mark.parametrize("text", ["START", "start please", "Unstop", "UNSTOP!"])
def test_start_and_unstop_opt_back_in(text: str) -> None:
    reading = KEYWORDS.read(text)
    assert reading is not None
    assert reading.intent is Intent.OPT_IN


@pytest.mark.parametrize(
    "text", ["Please don't stop my order", "I want to cancel nothing", "see you at the end"]
)
def test_a_keyword_later_in_the_reply_is_only_a_mention(text: str) -> None:
    reading = KEYWORDS.read(text)
    assert reading is not None
    assert reading.intent is Intent.MENTION


@pytest.mark.parametrize("text", ["", "   ", "Yes 10:00 suits", "stopping by at 3", "!!!"])
def test_other_replies_say_nothing(text: str) -> None:
    assert KEYWORDS.read(text) is None


def test_a_profile_can_choose_its_own_keywords() -> None:
    mine = Keywords(opt_out=["halt", "no more"], opt_in=["resume"])
    assert (mine.read("No more!") or None) is not None
    assert mine.read("stop") is None
    reading = mine.read("resume")
    assert reading is not None
    assert reading.intent is Intent.OPT_IN


def test_keyword_lists_are_tidied() -> None:
    assert check_keywords(["stop", " STOP ", "opt-out", "Opt Out"]) == ("STOP", "OPT OUT")


@pytest.mark.parametrize("bad", ["", "  ", "---", "x" * 41])
def test_a_keyword_without_a_word_or_too_long_is_refused(bad: str) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - the message is for the operator
        check_keywords([bad])


@given(st.sampled_from(DEFAULT_OPT_OUT), st.text(max_size=30))
def test_a_default_keyword_leading_any_text_after_a_space_opts_out(keyword: str, tail: str) -> None:
    reading = KEYWORDS.read(f"{keyword.lower()} {tail}")
    assert reading is not None
    assert reading.intent is Intent.OPT_OUT


@given(st.text(max_size=200))
def test_reading_never_fails(text: str) -> None:
    KEYWORDS.read(text)
