"""Characters that do not show as themselves: found, named, and made visible."""

from __future__ import annotations

import pytest

from gwdesk.domain.hidden_chars import describe_hidden, first_hidden, visible


@pytest.mark.parametrize(
    "text", ["invoice.pdf", "AUSGRID Property", "naïve", "写真", "صورة", "👍🏽", "a b"]
)
def test_ordinary_text_hides_nothing(text: str) -> None:
    assert first_hidden(text) is None
    assert visible(text) == text


def test_the_first_hidden_character_is_found() -> None:
    assert first_hidden("a\u200bb\u202ec") == "\u200b"


def test_an_override_is_described_as_changing_the_display() -> None:
    assert describe_hidden("\u202e") == (
        "U+202E RIGHT-TO-LEFT OVERRIDE, which makes it display differently from what it is"
    )


def test_a_nameless_control_character_is_named_by_its_code_point() -> None:
    assert describe_hidden("\x07") == "U+0007, a control character"


def test_visible_writes_each_hidden_character_as_its_code_point() -> None:
    assert visible("invoice\u202efdp.txt") == "invoice⟨U+202E⟩fdp.txt"
    assert visible("\ufeffa\x00") == "⟨U+FEFF⟩a⟨U+0000⟩"
