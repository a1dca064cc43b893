"""Text from outside on a terminal: shown, never obeyed (`gwdesk.domain.terminal`)."""

from __future__ import annotations

import json
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gwdesk.domain.hidden_chars import HIDDEN_CATEGORIES
from gwdesk.domain.terminal import terminal_json, terminal_safe

#: What a hostile reply holds: a window title, a screen clear, a clipboard write
#: (OSC 52), a hidden link (OSC 8), the 8-bit CSI, a right-to-left override, NUL.
HOSTILE = (
    "\x1b]0;owned\x07"
    "\x1b[2J"
    "\x1b]52;c;cm0gLXJmIH4=\x07"
    "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\"
    "\x9b31m"
    "\u202efdp.exe"
    "\x00"
)

#: Every character a terminal acts on or hides, drawn from the categories escaped.
hidden_chars = st.characters(categories=tuple(HIDDEN_CATEGORIES))
#: Text a terminal shows as it is (no backslash: see test_distinct_texts_print_distinctly).
shown_chars = st.characters(exclude_categories=tuple(HIDDEN_CATEGORIES), exclude_characters="\\")
hostile_text = st.text(st.one_of(hidden_chars, shown_chars, st.sampled_from("\x1b\x9b\n\t")))


def hidden_in(text: str) -> list[str]:
    return [c for c in text if unicodedata.category(c) in HIDDEN_CATEGORIES]


def test_escape_sequences_are_shown_as_text() -> None:
    assert terminal_safe(HOSTILE) == (
        "\\x1b]0;owned\\x07"
        "\\x1b[2J"
        "\\x1b]52;c;cm0gLXJmIH4=\\x07"
        "\\x1b]8;;https://evil.example/\\x1b\\click\\x1b]8;;\\x1b\\"
        "\\x9b31m"
        "\\u202efdp.exe"
        "\\x00"
    )


def test_line_breaks_and_tabs_inside_a_field_do_not_break_the_line() -> None:
    assert terminal_safe("Yes\r\nFAKE LINE\tx\x0bz") == "Yes\\r\\nFAKE LINE\\tx\\x0bz"


@pytest.mark.parametrize(
    ("char", "shown"),
    [
        ("\x7f", "\\x7f"),
        ("\x85", "\\x85"),  # NEL, a C1 line break
        ("\x9b", "\\x9b"),  # the 8-bit CSI
        ("\u061c", "\\u061c"),
        ("\u200b", "\\u200b"),
        ("\u200c", "\\u200c"),
        ("\u200d", "\\u200d"),
        ("\u200e", "\\u200e"),
        ("\u200f", "\\u200f"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
        ("\u202a", "\\u202a"),
        ("\u202e", "\\u202e"),
        ("\u2060", "\\u2060"),
        ("\u2066", "\\u2066"),
        ("\u2069", "\\u2069"),
        ("\ufeff", "\\ufeff"),
        ("\U000e0041", "\\U000e0041"),  # a tag character: invisible text
        ("\udc9b", "\\udc9b"),  # an undecodable byte of a file name
    ],
)
def test_bidi_controls_and_invisible_characters_are_shown_escaped(char: str, shown: str) -> None:
    assert terminal_safe(f"a{char}b") == f"a{shown}b"


@pytest.mark.parametrize(
    "text",
    [
        "Café crème, naïve Zoë",
        "Yes 👍 see you 🙂",
        "明天十点可以",
        "مرحبا שלום",  # right-to-left letters are text, not controls
        "e\u0301 n\u0303",  # combining accents
        r"C:\Users\ada\list.csv",
        "'\\x1b' as Python shows it",
    ],
)
def test_ordinary_text_is_left_as_it_is(text: str) -> None:
    assert terminal_safe(text) == text


@given(hostile_text)
def test_nothing_a_terminal_acts_on_is_left(text: str) -> None:
    assert hidden_in(terminal_safe(text)) == []


@given(st.text(shown_chars | st.just("\\")))
def test_printable_text_is_unchanged(text: str) -> None:
    assert terminal_safe(text) == text


@given(hostile_text, hostile_text)
def test_distinct_texts_print_distinctly(first: str, second: str) -> None:
    # Backslashes are left alone (see the module), so text spelling an escape
    # literally is the one exception; these texts hold none.
    if first != second:
        assert terminal_safe(first) != terminal_safe(second)


@given(st.text())
def test_escaping_twice_changes_nothing_more(text: str) -> None:
    once = terminal_safe(text)
    assert terminal_safe(once) == once


@given(st.text())
def test_json_decodes_to_exactly_the_text_and_holds_nothing_hidden(text: str) -> None:
    line = terminal_json({"text": text, "list": [text]})
    assert json.loads(line) == {"text": text, "list": [text]}
    assert hidden_in(line) == []


def test_json_of_a_hostile_reply_round_trips_and_keeps_readable_text_readable() -> None:
    data = {"text": HOSTILE + " café 👍 \U000e0041"}
    line = terminal_json(data)
    assert json.loads(line) == data
    assert "\\u009b31m" in line
    assert "\\u202e" in line
    assert "\\udb40\\udc41" in line  # U+E0041 as a surrogate pair
    assert "café 👍" in line
    assert "\n" not in line
