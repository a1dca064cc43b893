"""Text from outside is shown as its characters: never markup, never control codes."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from PySide6.QtCharts import QAbstractBarSeries
from PySide6.QtGui import Qt
from PySide6.QtWidgets import QLabel, QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from gwdesk.logs.query import DayCounts
from gwdesk.ui.logs.chart import LogChart
from gwdesk.ui.plain_text import (
    PlainLabel,
    html_text,
    notification_text,
    plain_box,
    tooltip,
    visible,
    window_title,
)
from tests.ui.plain_text_support import label_shows, shown, tooltip_shows

MARKUP = [
    '<img src="/dev/zero">',
    "<b>bold</b>",
    '<a href="https://evil.example">x</a>',
    "<!DOCTYPE html><p>doc",
    "<?xml version='1.0'?><b>x</b>",
    "<style>p { color: red }</style>gone",
    "<table><tr><td>cell</td></tr></table>",
]
ENTITIES = ["a &lt; b", "&amp;lt;b&amp;gt;", "&#60;b&#62;", "&nbsp;&copy;", "AT&T & co"]


@pytest.mark.parametrize("text", MARKUP + ENTITIES)
def test_a_tooltip_shows_exactly_the_characters_it_was_given(text: str) -> None:
    seen = shown(tooltip(text))
    assert seen.text == text
    assert (seen.images, seen.links, seen.bold) == ([], [], [])


def test_a_bare_string_would_be_read_as_markup_which_is_why_tooltips_are_escaped() -> None:
    assert tooltip_shows("a &lt; b") == "a < b"
    assert shown("<b>bold</b>").bold == ["bold"]
    assert shown('<img src="/x.png">').images == ["/x.png"]


def test_a_tooltip_keeps_line_breaks_spaces_and_tabs() -> None:
    text = "first  line\n\n\tindented\nlast "
    assert tooltip_shows(tooltip(text)) == text


def test_an_empty_tooltip_is_no_tooltip() -> None:
    assert tooltip("") == ""
    assert tooltip(None) == ""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a\x00b", "a␀b"),
        ("\x1b]0;pwned\x07", "␛]0;pwned␇"),
        ("\x1b[2J", "␛[2J"),
        ("back\x08space", "back␈space"),
        ("del\x7f", "del␡"),
        ("c1\x9b31m", "c1\ufffd31m"),
        ("form\x0cfeed", "form␌feed"),
    ],
)
def test_control_codes_become_their_visible_symbols(text: str, expected: str) -> None:
    assert visible(text) == expected
    assert tooltip_shows(tooltip(text)) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("invoice\u202efdp.exe", "invoice\ufffdfdp.exe"),
        ("\u202dforced\u202c", "\ufffdforced\ufffd"),
        ("\u2067isolated\u2069", "\ufffdisolated\ufffd"),
    ],
)
def test_bidi_controls_cannot_reorder_the_text_around_them(text: str, expected: str) -> None:
    assert visible(text) == expected


def test_right_to_left_text_and_its_marks_are_left_alone() -> None:
    for text in ("مرحبا بك", "שלום\u200f!", "abc\u200eמילה", "👩‍👩‍👧 café"):
        assert visible(text) == text


def test_line_endings_become_line_feeds_and_tabs_stay() -> None:
    assert visible("a\r\nb\rc\td") == "a\nb\nc\td"


def test_unpaired_surrogates_become_replacement_characters() -> None:
    assert visible("x\ud800y\udfffz") == "x\ufffdy\ufffdz"


def test_ordinary_text_comes_back_unchanged() -> None:
    text = "Yes please, 10:30 on Friday (née O'Brien) — 5 > 4 & 3 < 4 😀"
    assert visible(text) == text


def test_html_text_escapes_for_attributes_and_breaks_lines() -> None:
    assert html_text('"it\'s" <b>\nnext') == "&quot;it&#x27;s&quot; &lt;b&gt;<br>next"


def test_a_plain_label_shows_markup_and_control_codes_as_characters(qtbot: QtBot) -> None:
    label = PlainLabel('<img src="/dev/zero"> <b>bold</b>\x1b[2J')
    qtbot.addWidget(label)
    assert label.textFormat() == Qt.TextFormat.PlainText
    assert label_shows(label).text == '<img src="/dev/zero"> <b>bold</b>␛[2J'
    label.setText("&amp;lt;\x00")
    assert label_shows(label).text == "&amp;lt;␀"


def test_a_message_box_shows_its_text_and_informative_text_plain(qtbot: QtBot) -> None:
    box = QMessageBox()
    qtbot.addWidget(box)
    box.setText("<b>bold</b> failed")
    box.setInformativeText('<img src="/local/file.png"> \x1b[2J')
    box.setDetailedText("Traceback: \x1b]0;pwned\x07")
    plain_box(box)
    labels = [label for label in box.findChildren(QLabel) if label.text()]
    assert sorted(label_shows(label).text for label in labels) == [
        "<b>bold</b> failed",
        '<img src="/local/file.png"> ␛[2J',
    ]
    assert all(label.textFormat() == Qt.TextFormat.PlainText for label in labels)
    assert box.detailedText() == "Traceback: ␛]0;pwned␇"


def test_a_window_title_keeps_a_literal_placeholder_and_stays_on_one_line(qtbot: QtBot) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    window.setWindowTitle("Shop [*] & co")
    window.winId()  # the native window: its title is the one the desktop shows
    assert window.windowHandle().title() == "Shop  & co"  # what Qt does to a bare one
    window.setWindowTitle(window_title("Shop [*] & co\n\x1b[2J"))
    assert window.windowHandle().title() == "Shop [*] & co ␛[2J"


def test_a_notification_line_has_nothing_a_notification_server_reads_as_markup() -> None:
    line = notification_text('<b>bold</b> & <img src="x.png">\nnext\x1b')
    assert line == '‹b›bold‹/b› ＆ ‹img src="x.png"› next␛'
    assert not set("<>&") & set(line)


@pytest.mark.parametrize("days", [3, 120])  # bars, and areas over a long span
def test_a_status_or_filter_written_in_markup_is_charted_as_its_characters(
    qtbot: QtBot, days: int
) -> None:
    """Chart titles and legends are rich text: a gateway's status names one of each."""
    chart = LogChart()
    qtbot.addWidget(chart)
    status = '<img src="/local/file.png"><b>bold</b> &amp;lt;'
    when = [date(2025, 5, 1) + timedelta(days=n) for n in range(days)]
    chart.set_counts(DayCounts(when, {status: [1] * days}), note="<i>x</i> & co")
    names = [s.name() for s in chart.chart().series()] + [
        bar.label()
        for s in chart.chart().series()
        if isinstance(s, QAbstractBarSeries)
        for bar in s.barSets()
    ]
    assert status in {shown(name, rich=True).text for name in names}
    seen = shown(chart.chart().title(), rich=True)
    assert seen.text.endswith("— <i>x</i> & co")
    assert (seen.images, seen.bold) == ([], [])
