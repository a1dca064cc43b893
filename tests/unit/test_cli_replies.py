"""`gwdesk replies`: the stored replies for people and, one JSON object a line, for scripts."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from gwdesk.app.profile_data import INLINE_NAME, store_path
from gwdesk.cli import main
from gwdesk.store.replies import IncomingReply, ReplyStore


def _store(*texts: str, at: datetime = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)) -> None:
    """Replies in the command line's own file (where `gwdesk listen` without a gateway stores)."""
    store = ReplyStore(store_path(INLINE_NAME))
    try:
        store.add(
            [
                IncomingReply("+61412345678", "+61400000000", text, at.replace(minute=i))
                for i, text in enumerate(texts)
            ]
        )
    finally:
        store.close()


def _json_lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines()]


def test_json_lists_one_object_per_reply_in_storing_order(
    capfd: pytest.CaptureFixture[str],
) -> None:
    _store("first", "second", "third")
    assert main(["replies", "--json"]) == 0
    rows = _json_lines(capfd.readouterr().out)
    assert [r["text"] for r in rows] == ["first", "second", "third"]
    assert rows[0]["from"] == "+61412345678"


def test_after_id_lists_only_what_was_stored_since(capfd: pytest.CaptureFixture[str]) -> None:
    _store("first", "second", "third")
    main(["replies", "--json"])
    first = _json_lines(capfd.readouterr().out)[0]
    assert main(["replies", "--json", "--after-id", str(first["id"])]) == 0
    assert [r["text"] for r in _json_lines(capfd.readouterr().out)] == ["second", "third"]


def test_since_lists_what_was_received_from_that_time(capfd: pytest.CaptureFixture[str]) -> None:
    _store("early", "late", at=datetime(2026, 11, 20, 9, 0, tzinfo=UTC))
    assert main(["replies", "--json", "--since", "2026-11-20T09:01:00Z"]) == 0
    assert [r["text"] for r in _json_lines(capfd.readouterr().out)] == ["late"]


def test_limit_stops_after_that_many(capfd: pytest.CaptureFixture[str]) -> None:
    _store(*(f"reply {i}" for i in range(5)))
    assert main(["replies", "--json", "--limit", "2"]) == 0
    assert len(_json_lines(capfd.readouterr().out)) == 2


def test_a_reply_is_shown_to_people_as_text_never_as_terminal_codes(
    capfd: pytest.CaptureFixture[str],
) -> None:
    _store("\x1b]0;owned\x07 hi\nthere")
    assert main(["replies", "--timezone", "UTC"]) == 0
    captured = capfd.readouterr()
    assert "\x1b" not in captured.out
    assert "\x07" not in captured.out
    assert "hi\\nthere" in captured.out
    assert "1 reply" in captured.err


def test_an_empty_store_lists_nothing_and_says_so(capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["replies"]) == 0
    captured = capfd.readouterr()
    assert captured.out == ""
    assert "0 replies" in captured.err


@pytest.mark.parametrize("bad", ["-1", "ten", "1e3"])
def test_a_bad_count_is_a_usage_error(bad: str, capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["replies", "--after-id", bad])
    assert exited.value.code == 2
    assert "--after-id" in capfd.readouterr().err


def test_a_store_address_with_a_password_is_refused_and_never_echoed(
    capfd: pytest.CaptureFixture[str],
) -> None:
    assert main(["replies", "--store", "postgresql://clerk:hunter2@db.example/office"]) == 2
    captured = capfd.readouterr()
    assert "hunter2" not in captured.out + captured.err
    assert "password" in captured.err
