"""The message editor with hostile text: counts, UCS-2 highlighting and naming, limits."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextLayout
from pytestqt.qtbot import QtBot

from gwdesk.domain.segments import Encoding
from gwdesk.ui.widgets.message_editor import MessageEditor
from gwdesk.ui.widgets.validity import is_invalid


def editor_with(qtbot: QtBot, text: str) -> MessageEditor:
    editor = MessageEditor()
    qtbot.addWidget(editor)
    editor.set_text(text)
    return editor


def marked_ranges(editor: MessageEditor, block_number: int = 0) -> list[tuple[int, int]]:
    """(start, length) in UTF-16 units of what the highlighter marked in one block."""
    block = editor.edit.document().findBlockByNumber(block_number)
    layout: QTextLayout = block.layout()
    return [(r.start, r.length) for r in layout.formats()]


def test_plain_gsm_text_is_one_part_of_160(qtbot: QtBot) -> None:
    editor = editor_with(qtbot, "Hello there")
    info = editor.info()
    assert (info.encoding, info.parts, info.remaining) == (Encoding.GSM7, 1, 149)
    assert editor.counter.text() == "11 characters · 1 part · GSM-7 · 149 left in this part"
    assert marked_ranges(editor) == []


def test_characters_that_force_ucs2_are_named_with_the_room_per_part(qtbot: QtBot) -> None:
    editor = editor_with(qtbot, "Crème brûlée ‘tonight’")
    assert editor.encoding_label.text() == "û, ‘, ’ force UCS-2: 70 characters per part."
    assert "U+2018 left single quotation mark" in editor.encoding_label.toolTip()


def test_gsm_accents_do_not_force_ucs2(qtbot: QtBot) -> None:
    editor = editor_with(qtbot, "Café à Montréal, Ñandu, Øre, Ü")
    assert editor.info().encoding is Encoding.GSM7
    assert editor.encoding_label.text().startswith("GSM-7 text")


def test_the_highlighter_marks_only_the_ucs2_characters(qtbot: QtBot) -> None:
    editor = editor_with(qtbot, "ab‘cd’e")
    assert marked_ranges(editor) == [(2, 1), (5, 1)]


def test_an_emoji_is_marked_as_the_two_units_it_takes(qtbot: QtBot) -> None:
    editor = editor_with(qtbot, "a😀b€c✓")
    # € is GSM-7 (extension) but ✓ is not; the emoji is a surrogate pair.
    assert marked_ranges(editor) == [(1, 2), (6, 1)]
    info = editor.info()
    assert (info.characters, info.units) == (6, 7)


def test_a_surrogate_pair_is_never_split_across_parts(qtbot: QtBot) -> None:
    editor = editor_with(qtbot, "x" * 66 + "😀" + "y" * 10)
    info = editor.info()
    assert (info.encoding, info.parts) == (Encoding.UCS2, 2)
    # Splitting the pair would leave 67 - 11; kept whole, it moves to the second part.
    assert info.remaining == 67 - 12


def test_escape_characters_count_two(qtbot: QtBot) -> None:
    editor = editor_with(qtbot, "{" * 80)
    assert (editor.info().parts, editor.info().remaining) == (1, 0)
    editor.set_text("{" * 81)
    assert editor.info().parts == 2
    assert editor.info().encoding is Encoding.GSM7


def test_1530_gsm_characters_warn_at_the_limit(qtbot: QtBot) -> None:
    editor = editor_with(qtbot, "a" * 1530)
    assert editor.info().parts == 10
    assert not editor.limit_label.isHidden()
    assert "10-part limit" in editor.limit_label.text()
    assert not is_invalid(editor.edit)


def test_1531_gsm_characters_are_over_the_limit(qtbot: QtBot) -> None:
    editor = editor_with(qtbot, "a" * 1531)
    assert editor.info().parts == 11
    assert editor.limit_label.text().startswith("Too long: 11 parts")
    assert is_invalid(editor.edit)


def test_right_to_left_text_is_named_in_its_order(qtbot: QtBot) -> None:
    editor = editor_with(qtbot, "שלום")
    assert editor.encoding_label.text().startswith("ש\u200e, ל\u200e, ו\u200e, ם\u200e force")
    assert editor.info().characters == 4


def test_invisible_characters_are_named_by_code_point(qtbot: QtBot) -> None:
    editor = editor_with(qtbot, "a\x00b\u00a0c\u200bd")
    label = editor.encoding_label.text()
    assert label.startswith("U+0000, U+00A0, U+200B force UCS-2")


def test_a_no_break_space_is_kept_as_typed(qtbot: QtBot) -> None:
    editor = editor_with(qtbot, "10\u00a0km")
    assert editor.text() == "10\u00a0km"
    assert editor.info().encoding is Encoding.UCS2


def test_many_distinct_characters_are_summarised(qtbot: QtBot) -> None:
    editor = editor_with(qtbot, "".join(chr(0x4E00 + i) for i in range(20)))
    assert "and 12 more force UCS-2" in editor.encoding_label.text()


def test_lines_typed_with_shift_enter_count_as_new_lines(qtbot: QtBot) -> None:
    editor = editor_with(qtbot, "")
    qtbot.keyClicks(editor.edit, "one")
    qtbot.keyClick(editor.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(editor.edit, "two")
    assert editor.text() == "one\ntwo"
    assert editor.info().encoding is Encoding.GSM7
    assert marked_ranges(editor) == []


def test_a_100_kb_paste_is_counted_at_once(qtbot: QtBot) -> None:
    editor = editor_with(qtbot, "")
    text = ("Lorem ipsum dolor sit amet ‘quoted’ 😀 " * 2700)[:100_000]
    started = time.perf_counter()
    editor.edit.insertPlainText(text)
    info = editor.info()
    elapsed = time.perf_counter() - started
    assert editor.text() == text
    assert info.too_long
    assert editor.limit_label.text().startswith("Too long:")
    assert elapsed < 2.0


def test_typing_updates_the_counter(qtbot: QtBot) -> None:
    editor = editor_with(qtbot, "")
    with qtbot.waitSignal(editor.changed):
        qtbot.keyClicks(editor.edit, "Hi")
    qtbot.waitUntil(lambda: editor.counter.text().startswith("2 characters"))


def test_ctrl_enter_asks_to_submit_instead_of_adding_a_line(qtbot: QtBot) -> None:
    editor = editor_with(qtbot, "Done")
    with qtbot.waitSignal(editor.submit_requested):
        qtbot.keyClick(editor.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert editor.text() == "Done"


def test_an_empty_text_still_shows_a_calm_count(qtbot: QtBot) -> None:
    editor = editor_with(qtbot, "")
    assert editor.counter.text() == "0 characters · 1 part · GSM-7 · 160 left in this part"
    assert editor.limit_label.isHidden()
