"""The Replies tab's small parts: the search predicate, times, notices and the tray badge."""

from __future__ import annotations

from datetime import UTC, date, datetime

from PySide6.QtWidgets import QApplication

from gwdesk.store.replies import StoredReply
from gwdesk.store.reply_queries import ReplySearch
from gwdesk.ui.replies.notifier import badge_icon, notice_for, tray_tooltip
from gwdesk.ui.replies.table import received_text
from gwdesk.ui.theme import app_icon

NOW = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)


def reply(text: str = "Yes", sender: str = "61412345678") -> StoredReply:
    return StoredReply(1, sender, "61400000000", text, NOW, None, None, None, None, "webhook", NOW)


def test_a_search_matches_text_without_regard_to_case_including_non_ascii() -> None:
    search = ReplySearch("  MERCI  À ")
    assert search.needle == "MERCI À"
    assert search.matches("1", "2", "merci à demain")
    assert not search.matches("1", "2", "merci a demain")


def test_a_search_for_a_national_number_finds_its_international_form() -> None:
    search = ReplySearch("0412 345-678")
    assert search.matches("61412345678", "61400000000", "")
    assert search.matches("+61412345678", "61400000000", "")
    assert not search.matches("61412345679", "61400000000", "")


def test_a_short_or_wordy_search_is_not_read_as_a_number() -> None:
    assert not ReplySearch("04").matches("61412345678", "1", "")  # not "4" without the 0
    assert not ReplySearch("room 412").matches("61412345678", "1", "")


def test_an_empty_search_matches_everything_and_needs_no_sql() -> None:
    search = ReplySearch("   ")
    assert not search.active
    assert search.matches("", "", "")


def test_received_times_are_short_today_and_dated_otherwise() -> None:
    local = NOW.astimezone()
    assert received_text(NOW, local.date()) == local.strftime("%H:%M:%S")
    assert received_text(NOW, date(2026, 12, 31)) == local.strftime("%d %b %H:%M")
    assert received_text(NOW, date(2027, 1, 1)) == local.strftime("%Y-%m-%d %H:%M")


def test_a_notice_names_one_reply_and_counts_many() -> None:
    one = notice_for(1, reply("  See you\nthen  "))
    assert (one.title, one.body) == ("Reply from +61 412 345 678", "See you then")
    many = notice_for(27, reply("x" * 500))
    assert many.title == "27 new replies"
    assert many.body.startswith("Latest from +61 412 345 678: xxx")
    assert len(many.body) < 200


def test_the_tray_tooltip_counts_unread_replies() -> None:
    assert tray_tooltip(0) == "gwdesk: no unread replies"
    assert tray_tooltip(1) == "gwdesk: 1 unread reply"
    assert tray_tooltip(12) == "gwdesk: 12 unread replies"


def test_the_tray_badge_marks_the_icon_only_when_something_is_unread(qapp: QApplication) -> None:
    plain = badge_icon(app_icon(), 0).pixmap(64, 64).toImage()
    marked = badge_icon(app_icon(), 5).pixmap(64, 64).toImage()
    corner = (58, 6)
    assert plain.pixelColor(*corner) != marked.pixelColor(*corner)
    assert marked.pixelColor(*corner).red() > 180
